/* runner_matrix.c - one matrix from start to end, in its worker's thread
 * (runner_internal.h): its runs round by round, boots, tunables, metadata. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "services.h"
#include "events.h"
#include "hostsnap.h"
#include "hosts.h"
#include "matrix_boot.h"
#include "inventory.h"
#include "linkprof.h"
#include "log.h"
#include "matrix.h"
#include "run_exec.h"
#include "run_early.h"
#include "runner_internal.h"
#include "store.h"
#include "timeutil.h"
#include "tunables.h"

static void collect(void *cls, const struct tb_run_row *row)
{
	struct jobs *js = cls;
	struct job *j;

	if (js->n == js->cap) {
		int cap = js->cap ? js->cap * 2 : 64;
		struct job *v = realloc(js->v, (size_t)cap * sizeof(*v));

		if (v == NULL) {
			js->failed = 1;
			return;
		}
		js->v = v;
		js->cap = cap;
	}
	j = &js->v[js->n];
	memset(j, 0, sizeof(*j));
	j->row = *row;
	snprintf(j->client, sizeof(j->client), "%s", row->client);
	snprintf(j->server, sizeof(j->server), "%s", row->server);
	snprintf(j->link, sizeof(j->link), "%s", row->link);
	snprintf(j->addr, sizeof(j->addr), "%s", row->server_address);
	snprintf(j->proto, sizeof(j->proto), "%s", row->protocol);
	snprintf(j->dir, sizeof(j->dir), "%s", row->direction);
	if ((j->params = strdup(row->params)) == NULL) {
		js->failed = 1;
		return;
	}
	j->row.client = j->client;
	j->row.server = j->server;
	j->row.link = j->link;
	j->row.server_address = j->addr;
	j->row.protocol = j->proto;
	j->row.direction = j->dir;
	j->row.params = j->params;
	snprintf(j->want_client, sizeof(j->want_client), "%s", row->want_client_os ? row->want_client_os : "");
	snprintf(j->want_server, sizeof(j->want_server), "%s", row->want_server_os ? row->want_server_os : "");
	j->row.want_client_os = j->want_client[0] ? j->want_client : NULL;
	j->row.want_server_os = j->want_server[0] ? j->want_server : NULL;
	j->row.state = "pending";
	/* results of an earlier attempt are not carried over */
	j->row.error_class = j->row.error_message = NULL;
	j->row.client_os = j->row.server_os = j->row.client_version = j->row.server_version = NULL;
	j->row.client_command = j->row.server_command = j->row.cookie = j->row.summary = NULL;
	js->n++;
}

static void jobs_free(struct jobs *js)
{
	for (int i = 0; i < js->n; i++)
		free(js->v[i].params);
	free(js->v);
}

/* What a 409 names as the matrix's hold. */
void tb_rn_holder(int64_t id, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "matrix %lld (%s)", (long long)id, name);
}

/* Hold every host of the matrix (started by actor), waiting while an action holds one. */
struct tb_run_host *tb_rn_host_for(struct tb_run_host *hs, int *nh, const struct tb_inventory *inv, const char *name)
{
	for (int i = 0; i < *nh; i++)
		if (strcmp(hs[i].m->name, name) == 0)
			return &hs[i];
	if (*nh >= TB_MATRIX_HOSTS_MAX || (hs[*nh].m = tb_inventory_find(inv, name)) == NULL)
		return NULL;
	return &hs[(*nh)++];
}

/* A run that could not start (a host is missing or does not answer). */
static void fail_run(struct tb_services *sv, struct job *j, const char *klass, const char *message)
{
	struct tb_run_row row = j->row;
	struct tb_error e = {0};

	row.state = "failed";
	row.error_class = klass;
	row.error_message = message;
	row.client_exit = row.server_exit = -1;
	row.sender_bps = row.receiver_bps = row.lost_percent = -1;
	row.retransmits = -1;
	row.started_ms = row.finished_ms = tb_now_ms();
	if (tb_store_run_finish(sv->store, &row, NULL, 0, NULL, 0, &e) != 0)
		tb_warn("runner", "matrix %lld run %d: %s", (long long)row.matrix_id, row.seq, e.message);
	tb_events_publish(sv->events, "run.state", row.client, row.matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:s, s:s}", "matrix", (json_int_t)row.matrix_id, "run",
				    (json_int_t)row.id, "seq", row.seq, "state", "failed", "error_class", klass,
				    "error_message", message));
}

/* The metadata of h once per OS in this matrix (a failure is only logged:
 * the runs do not need it). */
void tb_rn_snapshot(struct tb_rn_worker *w, const struct job *j, struct tb_run_host *h)
{
	struct tb_error e = {0};

	if (strcmp(h->snapped_os, h->os) == 0)
		return;
	snprintf(h->snapped_os, sizeof(h->snapped_os), "%s", h->os);
	if (tb_hostsnap_take(w->r->sv, j->row.matrix_id, h->m, h->p, h->os, h->bsd,
			     tb_hostsnap_iface(h->m, h->os, j->row.link), &e) != 0)
		tb_warn("runner", "matrix %lld: the metadata of %s (%s) was not taken: %s", (long long)j->row.matrix_id,
			h->m->name, h->os, e.message);
}

/* Put h in OS want (NULL: as it is) before run j (matrix_boot.h). */
static int ensure_os(struct tb_rn_worker *w, struct job *j, struct tb_run_host *h, const char *want,
		     struct tb_run_ctl *ctl, char *msg, size_t len)
{
	char holder[TB_HOLDER_MAX];

	if (want == NULL)
		return 0;
	tb_rn_holder(j->row.matrix_id, w->name, holder, sizeof(holder));
	return tb_matrix_host_os(w->r->sv, j->row.matrix_id, holder, h, want, j->row.seq, &ctl->stop, msg, len);
}

/* One host's ensure_os, for a thread of its own. */
struct os_job {
	struct tb_rn_worker *w;
	struct job *j;
	struct tb_run_host *h;
	const char *want;
	struct tb_run_ctl *ctl;
	char msg[400];
	int rc;
	pthread_t th;
};

static void *os_main(void *arg)
{
	struct os_job *o = arg;

	o->rc = ensure_os(o->w, o->j, o->h, o->want, o->ctl, o->msg, sizeof(o->msg));
	return NULL;
}

/* Both hosts of j in the OS j wants, at once: two boots take the time of
 * one (matrix.c's estimate counts them so).  0, or -1 with the first
 * failure in msg. */
static int ensure_both(struct tb_rn_worker *w, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		       struct tb_run_ctl *ctl, char *msg, size_t len)
{
	struct os_job a = {w, j, c, j->row.want_client_os, ctl, "", 0, 0};
	struct os_job b = {w, j, s, j->row.want_server_os, ctl, "", 0, 0};
	int threaded = a.want != NULL && b.want != NULL && pthread_create(&a.th, NULL, os_main, &a) == 0;

	if (!threaded)
		os_main(&a);
	os_main(&b);
	if (threaded)
		pthread_join(a.th, NULL);
	if (a.rc != 0 || b.rc != 0)
		snprintf(msg, len, "%s", a.rc != 0 ? a.msg : b.msg);
	return a.rc != 0 || b.rc != 0 ? -1 : 0;
}

/* The tunables h has in force go back before a boot takes it into another OS
 * (tunables.h): after the boot nobody could reach them in the OS they were set in. */
static void tunables_before_boot(struct tb_services *sv, struct tb_run_host *h, const char *want)
{
	char msg[400];

	if (want != NULL && h->tun_set != 0 && h->ready && strcmp(want, h->os) != 0 &&
	    tb_tun_restore_host(sv, h, msg, sizeof(msg)) != 0)
		tb_warn("runner", "%s: before its boot into %s: %s", h->m->name, want, msg);
}

/* One run on hosts c and s (resolved by the caller), stopped through ctl. */
void tb_rn_run_job(struct tb_rn_worker *w, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		   struct tb_run_ctl *ctl)
{
	const char *state = NULL, *klass = NULL;
	struct tb_error e = {0};
	json_t *params = json_loads(j->params, 0, NULL);
	const json_t *set = json_object_get(params, "tunables");
	char msg[400];

	tunables_before_boot(w->r->sv, c, j->row.want_client_os);
	tunables_before_boot(w->r->sv, s, j->row.want_server_os);
	if (ensure_both(w, j, c, s, ctl, msg, sizeof(msg)) != 0) {
		fail_run(w->r->sv, j, "boot_error", msg);
		goto out;
	}
	if ((!c->ready && tb_run_host_prepare(w->r->sv, c, NULL, &e) != 0) ||
	    (!s->ready && tb_run_host_prepare(w->r->sv, s, NULL, &e) != 0)) {
		fail_run(w->r->sv, j, "ssh_error", e.message);
		goto out;
	}
	tb_rn_snapshot(w, j, c);
	tb_rn_snapshot(w, j, s);
	/* the run's tunable set in force on both ends, verified (tunables.h) */
	if (tb_tun_ensure(w->r->sv, j->row.matrix_id, j->row.seq, c, set, j->link, msg, sizeof(msg)) != 0 ||
	    tb_tun_ensure(w->r->sv, j->row.matrix_id, j->row.seq, s, set, j->link, msg, sizeof(msg)) != 0) {
		fail_run(w->r->sv, j, "tunable_error", msg);
		goto out;
	}
	/* the run's link profile in force on the routers, read back (linkprof.h) */
	if (tb_lp_ensure(w->r->sv, j->row.matrix_id, json_object_get(params, "link_profile"), msg, sizeof(msg)) != 0) {
		fail_run(w->r->sv, j, "link_profile_error", msg);
		goto out;
	}
	if (tb_run_execute(w->r->sv, ctl, &j->row, c, s, &state, &klass, &e) != 0)
		tb_warn("runner", "matrix %lld run %d: %s", (long long)j->row.matrix_id, j->row.seq, e.message);
	/* a host that failed over ssh is asked again before its next run */
	if (klass != NULL && strcmp(klass, "ssh_error") == 0)
		c->ready = s->ready = false;
out:
	json_decref(params);
}

/* The hosts of j, with the machines of inventory inv; 0, or -1 when one is gone. */
int tb_rn_resolve(struct tb_rn_worker *w, struct job *j, struct tb_run_host *hs, int *nh,
		  const struct tb_inventory *inv, struct tb_run_host **c, struct tb_run_host **s)
{
	char msg[600];

	*c = tb_rn_host_for(hs, nh, inv, j->client);
	*s = tb_rn_host_for(hs, nh, inv, j->server);
	if (*c == NULL || *s == NULL) {
		snprintf(msg, sizeof(msg), "%s is no longer in the inventory", *c == NULL ? j->client : j->server);
		fail_run(w->r->sv, j, "ssh_error", msg);
		return -1;
	}
	/* a machine that was (re)loaded with the inventory: its pointer changed */
	(*c)->m = tb_inventory_find(inv, j->client);
	(*s)->m = tb_inventory_find(inv, j->server);
	return 0;
}

/* Host name of hs[0..nh) when it is ready in OS want (NULL: any), else NULL:
 * a host not met yet, or to be booted first. */
static const struct tb_run_host *ready_in(const struct tb_run_host *hs, int nh, const char *name, const char *want)
{
	for (int i = 0; i < nh; i++)
		if (hs[i].m != NULL && strcmp(hs[i].m->name, name) == 0)
			return hs[i].ready && hs[i].p != NULL && (want == NULL || strcmp(want, hs[i].os) == 0) ? &hs[i]
													       : NULL;
	return NULL;
}

/* Before j runs: the run after it (next, NULL: none), when it follows at once
 * (early: alone in its round, no pause) on ends ready in the OS it wants, as
 * j's are, gets its server started in j's last second (run_early.h); its
 * ends ready, standby shells then (run_ahead.h), the server's only without. */
static void set_ahead(struct tb_rn_worker *w, const struct job *j, const struct job *next, bool early,
		      struct tb_run_host *hs, int nh)
{
	struct tb_run_ctl *ctl = &w->ctl;
	const struct tb_run_host *end[2] = {NULL, NULL};

	if (next != NULL) {
		end[0] = ready_in(hs, nh, next->client, next->row.want_client_os);
		end[1] = ready_in(hs, nh, next->server, next->row.want_server_os);
	}
	run_early_next_up(ctl, j->row.id); /* j's own, started in the last run's last second */
	if (early && end[0] != NULL && end[1] != NULL && ready_in(hs, nh, j->client, j->row.want_client_os) != NULL &&
	    ready_in(hs, nh, j->server, j->row.want_server_os) != NULL)
		run_early_plan(w->r->sv, ctl, &j->row, &next->row, end[0], end[1]);
	pthread_mutex_lock(&ctl->lock);
	ctl->nahead = 0;
	for (int k = 0; k < 2; k++) {
		if (end[k] == NULL || (k == 1 && ctl->early_next != NULL))
			continue;
		tb_hosts_target(w->r->sv->hosts, end[k]->m, end[k]->p, &ctl->ahead[ctl->nahead],
				ctl->ahead_pin[ctl->nahead], sizeof(ctl->ahead_pin[0]));
		ctl->nahead++;
	}
	pthread_mutex_unlock(&ctl->lock);
}

void tb_rn_first_ahead(struct tb_rn_worker *w, const struct jobs *js, const struct tb_run_host *hs, int nh)
{
	const struct job *j = &js->v[0];
	const struct tb_run_host *c = ready_in(hs, nh, j->client, j->row.want_client_os),
				 *s = ready_in(hs, nh, j->server, j->row.want_server_os);
	int stop;

	pthread_mutex_lock(&w->ctl.lock);
	stop = w->ctl.stop;
	pthread_mutex_unlock(&w->ctl.lock);
	if (stop || c == NULL || s == NULL || (js->n > 1 && js->v[1].row.round == j->row.round))
		return;
	run_early_plan(w->r->sv, &w->ctl, NULL, &j->row, c, s);
	run_early_kick(&w->ctl, 0); /* nothing runs yet */
}

static void run_one(struct tb_rn_worker *w, struct job *j, const struct job *next, bool early, struct tb_run_host *hs,
		    int *nh)
{
	struct tb_inventory *inv = tb_inv_current_get(w->r->sv->invs);
	struct tb_run_host *c, *s;

	if (tb_rn_resolve(w, j, hs, nh, inv, &c, &s) == 0) {
		set_ahead(w, j, next, early, hs, *nh); /* (its hosts are this inventory's too) */
		tb_rn_run_job(w, j, c, s, &w->ctl);
	}
	pthread_mutex_lock(&w->ctl.lock);
	w->ctl.nahead = 0;
	pthread_mutex_unlock(&w->ctl.lock);
	tb_inv_current_put(w->r->sv->invs, inv);
}

struct mview {
	char name[TB_MATRIX_NAME_MAX + 1];
	char state[16];
	int pause_ms;
	int nfailed;
	bool restore; /* OS combinations and os_after "restore" */
	char actor[64];
};

static void read_matrix(void *cls, const struct tb_matrix_row *m)
{
	struct mview *mv = cls;
	json_t *spec = json_loads(m->spec, 0, NULL);
	json_t *pause = json_object_get(spec, "pause_s");

	snprintf(mv->name, sizeof(mv->name), "%s", m->name);
	snprintf(mv->state, sizeof(mv->state), "%s", m->state);
	snprintf(mv->actor, sizeof(mv->actor), "%s", m->actor != NULL ? m->actor : "");
	mv->pause_ms = json_is_number(pause) ? (int)(json_number_value(pause) * 1000.0 + 0.5) : 0;
	mv->nfailed = m->nfailed;
	mv->restore = json_is_array(json_object_get(spec, "os")) &&
		      !(json_is_string(json_object_get(spec, "os_after")) &&
			strcmp(json_string_value(json_object_get(spec, "os_after")), "leave") == 0);
	json_decref(spec);
}

/* The originals of every tunable the matrix changed back on its hosts (tunables.h). */
static void restore_tunables(struct tb_services *sv, int64_t id, struct tb_run_host *hs, int nh)
{
	for (int i = 0; i < nh; i++) {
		char msg[400];

		if (hs[i].tun_set != 0 && tb_tun_restore_host(sv, &hs[i], msg, sizeof(msg)) != 0)
			tb_warn("runner", "matrix %lld: %s (the journal keeps it: restored at the next start)",
				(long long)id, msg);
	}
}

/* The matrix's final state in the store, published. */
static void finish_matrix(struct tb_rn_worker *w, const struct mview *mv)
{
	struct tb_store *st = w->r->sv->store;
	int64_t id = w->id;
	const char *final;

	if (w->ctl.stop == TB_RUN_SHUTDOWN) {
		final = "interrupted";
		tb_store_matrix_update(st, id, final, 0, 0, "interrupted", "testbedd stopped: resume it to go on",
				       NULL);
	} else if (w->ctl.stop == TB_RUN_CANCEL) {
		final = "canceled";
		tb_store_matrix_update(st, id, final, 0, tb_now(), "canceled", "canceled: resume runs what is left",
				       NULL);
	} else if (mv->nfailed > 0) {
		char msg[96];

		final = "failed";
		snprintf(msg, sizeof(msg), "%d run%s failed", mv->nfailed, mv->nfailed == 1 ? "" : "s");
		tb_store_matrix_update(st, id, final, 0, tb_now(), "runs_failed", msg, NULL);
	} else {
		final = "succeeded";
		tb_store_matrix_update(st, id, final, 0, tb_now(), NULL, NULL, NULL);
	}
	tb_info("runner", "matrix %lld (%s) %s", (long long)id, mv->name, final);
	tb_rn_publish(w->r, id);
}

static void release_hosts(struct tb_rn_worker *w)
{
	for (int i = 0; i < w->ns.n; i++)
		tb_actions_release(w->r->sv->actions, w->ns.v[i]);
}

void tb_rn_run_matrix(struct tb_rn_worker *w)
{
	struct tb_runner *r = w->r;
	struct tb_store *st = r->sv->store;
	int64_t id = w->id;
	struct mview mv = {0};
	struct jobs js = {0};
	struct tb_run_host *hs = calloc(TB_MATRIX_HOSTS_MAX, sizeof(*hs));
	struct tb_error e = {0};
	int nh = 0, i;

	if (hs == NULL || tb_store_matrix_get(st, id, read_matrix, &mv, &e) != 0 ||
	    tb_store_run_each(st, id, "pending", collect, &js, &e) != 0 || js.failed) {
		tb_warn("runner", "matrix %lld: %s", (long long)id, js.failed ? "out of memory" : e.message);
		tb_store_matrix_update(st, id, "failed", 0, tb_now(), "internal",
				       js.failed ? "out of memory" : e.message, NULL);
		release_hosts(w);
		goto out;
	}
	if (strcmp(mv.state, "queued") != 0) { /* canceled while queued */
		release_hosts(w);
		goto out;
	}
	tb_store_matrix_update(st, id, "running", tb_now(), 0, NULL, NULL, NULL);
	tb_rn_publish(r, id);
	if (js.n > 0)
		tb_rn_warm_up(w, &js, hs, &nh);
	for (i = 0; i < js.n && !w->ctl.stop;) {
		int n = 1;

		while (i + n < js.n && n < TB_RUNNER_PARALLEL && js.v[i + n].row.round == js.v[i].row.round)
			n++;
		pthread_mutex_lock(&r->lock);
		w->seq = js.v[i].row.seq;
		pthread_mutex_unlock(&r->lock);
		if (n == 1) {
			const struct job *next = i + 1 < js.n ? &js.v[i + 1] : NULL;
			/* next alone in its round, at once: its server may start in this run's last second */
			bool early = next != NULL && mv.pause_ms == 0 &&
				     (i + 2 >= js.n || js.v[i + 2].row.round != next->row.round);

			run_one(w, &js.v[i], next, early, hs, &nh);
		} else {
			run_early_drop(&w->ctl, &w->ctl.early_next); /* none for a round */
			run_early_drop(&w->ctl, &w->ctl.early_now);
			tb_rn_run_round(w, &js.v[i], n, hs, &nh);
		}
		tb_rn_publish(r, id);
		i += n;
		if (mv.pause_ms > 0 && i < js.n)
			for (int t = 0; t < mv.pause_ms && !w->ctl.stop; t += 50)
				tb_sleep_ms(50, NULL);
	}
	run_early_drop(&w->ctl, &w->ctl.early_next); /* a server started ahead for a run that did not come */
	run_early_drop(&w->ctl, &w->ctl.early_now);
	restore_tunables(r->sv, id, hs, nh); /* whatever ended the matrix, before any boot back */
	tb_lp_end(r->sv, id);                /* the routers' pipe gone, whatever ended the matrix (linkprof.h) */
	if (mv.restore && !w->ctl.stop) {
		char holder[TB_HOLDER_MAX];

		tb_rn_holder(id, mv.name, holder, sizeof(holder));
		tb_matrix_restore_hosts(r->sv, id, holder, hs, nh, &w->ctl.stop);
	}
	release_hosts(w);
	tb_store_matrix_get(st, id, read_matrix, &mv, NULL);
	finish_matrix(w, &mv);
out:
	jobs_free(&js);
	free(hs);
}
