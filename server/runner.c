/* runner.c - the matrix queue and its worker.  See runner.h. */
#include "runner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "reserve.h"
#include "services.h"
#include "events.h"
#include "hostsnap.h"
#include "matrix_boot.h"
#include "inventory.h"
#include "log.h"
#include "matrix.h"
#include "results.h"
#include "run_exec.h"
#include "runner_internal.h"
#include "store.h"
#include "timeutil.h"
#include "tunables.h"

static void publish_matrix(struct tb_runner *r, int64_t id)
{
	struct tb_results_src src = {r->sv->store, {0, -1}};
	json_t *j = NULL;

	tb_runner_now(r, &src.now);
	if (tb_results_matrix_json(&src, id, 0, &j, NULL) != 0)
		return;
	tb_events_publish(r->sv->events, "matrix.state", NULL, id,
			  json_pack("{s:I, s:O, s:O}", "matrix", (json_int_t)id, "state", json_object_get(j, "state"),
				    "progress", json_object_get(j, "progress")));
	json_decref(j);
}

/* ---- one matrix ---- */

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

struct names {
	char v[TB_MATRIX_HOSTS_MAX][40];
	int n;
};

static void names_add(struct names *ns, const char *name)
{
	for (int i = 0; i < ns->n; i++)
		if (strcmp(ns->v[i], name) == 0)
			return;
	if (ns->n < TB_MATRIX_HOSTS_MAX) /* the spec's limit (matrix_spec.c): never more */
		snprintf(ns->v[ns->n++], sizeof(ns->v[0]), "%s", name);
}

static void holder_of(int64_t id, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "matrix %lld (%s)", (long long)id, name);
}

/* Hold every host of the matrix (started by actor), waiting while an action holds one. */
static int hold_hosts(struct tb_runner *r, int64_t id, const char *name, const char *actor, const struct names *ns)
{
	char holder[TB_HOLDER_MAX];
	int noted = 0;

	holder_of(id, name, holder, sizeof(holder));
	for (;;) {
		struct tb_error e = {0};
		int i;

		for (i = 0; i < ns->n; i++)
			if (tb_actions_hold_as(r->sv->actions, ns->v[i], holder, "matrix", id, actor, &e) != 0)
				break;
		if (i == ns->n)
			return 0;
		while (i-- > 0)
			tb_actions_release(r->sv->actions, ns->v[i]);
		if (!noted) {
			tb_info("runner", "matrix %lld waits: %s", (long long)id, e.message);
			tb_events_publish(r->sv->events, "matrix.state", NULL, id,
					  json_pack("{s:I, s:s, s:s}", "matrix", (json_int_t)id, "state", "queued",
						    "waiting_for", e.message));
			noted = 1;
		}
		for (int t = 0; t < 10; t++) {
			if (r->ctl.stop)
				return -1;
			tb_sleep_ms(100, NULL);
		}
	}
}

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
static void fail_run(struct tb_runner *r, struct job *j, const char *klass, const char *message)
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
	if (tb_store_run_finish(r->sv->store, &row, NULL, 0, NULL, 0, &e) != 0)
		tb_warn("runner", "matrix %lld run %d: %s", (long long)row.matrix_id, row.seq, e.message);
	tb_events_publish(r->sv->events, "run.state", row.client, row.matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:s, s:s}", "matrix", (json_int_t)row.matrix_id, "run",
				    (json_int_t)row.id, "seq", row.seq, "state", "failed", "error_class", klass,
				    "error_message", message));
}

/* The metadata of h once per OS in this matrix (a failure is only logged:
 * the runs do not need it). */
void tb_rn_snapshot(struct tb_runner *r, const struct job *j, struct tb_run_host *h)
{
	struct tb_error e = {0};

	if (strcmp(h->snapped_os, h->os) == 0)
		return;
	snprintf(h->snapped_os, sizeof(h->snapped_os), "%s", h->os);
	if (tb_hostsnap_take(r->sv, j->row.matrix_id, h->m, h->p, h->os, h->bsd,
			     tb_hostsnap_iface(h->m, h->os, j->row.link), &e) != 0)
		tb_warn("runner", "matrix %lld: the metadata of %s (%s) was not taken: %s", (long long)j->row.matrix_id,
			h->m->name, h->os, e.message);
}

/* Put h in OS want (NULL: as it is) before run j (matrix_boot.h). */
static int ensure_os(struct tb_runner *r, struct job *j, struct tb_run_host *h, const char *want,
		     struct tb_run_ctl *ctl, char *msg, size_t len)
{
	char holder[TB_HOLDER_MAX];

	if (want == NULL)
		return 0;
	holder_of(j->row.matrix_id, r->current_name, holder, sizeof(holder));
	return tb_matrix_host_os(r->sv, j->row.matrix_id, holder, h, want, j->row.seq, &ctl->stop, msg, len);
}

/* One host's ensure_os, for a thread of its own. */
struct os_job {
	struct tb_runner *r;
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

	o->rc = ensure_os(o->r, o->j, o->h, o->want, o->ctl, o->msg, sizeof(o->msg));
	return NULL;
}

/* Both hosts of j in the OS j wants, at once: two boots take the time of
 * one (matrix.c's estimate counts them so).  0, or -1 with the first
 * failure in msg. */
static int ensure_both(struct tb_runner *r, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		       struct tb_run_ctl *ctl, char *msg, size_t len)
{
	struct os_job a = {r, j, c, j->row.want_client_os, ctl, "", 0, 0};
	struct os_job b = {r, j, s, j->row.want_server_os, ctl, "", 0, 0};
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
static void tunables_before_boot(struct tb_runner *r, struct tb_run_host *h, const char *want)
{
	char msg[400];

	if (want != NULL && h->tun_set != 0 && h->ready && strcmp(want, h->os) != 0 &&
	    tb_tun_restore_host(r->sv, h, msg, sizeof(msg)) != 0)
		tb_warn("runner", "%s: before its boot into %s: %s", h->m->name, want, msg);
}

/* One run on hosts c and s (resolved by the caller), stopped through ctl. */
void tb_rn_run_job(struct tb_runner *r, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		   struct tb_run_ctl *ctl)
{
	const char *state = NULL, *klass = NULL;
	struct tb_error e = {0};
	json_t *params = json_loads(j->params, 0, NULL);
	const json_t *set = json_object_get(params, "tunables");
	char msg[400];

	tunables_before_boot(r, c, j->row.want_client_os);
	tunables_before_boot(r, s, j->row.want_server_os);
	if (ensure_both(r, j, c, s, ctl, msg, sizeof(msg)) != 0) {
		fail_run(r, j, "boot_error", msg);
		goto out;
	}
	if ((!c->ready && tb_run_host_prepare(r->sv, c, &e) != 0) ||
	    (!s->ready && tb_run_host_prepare(r->sv, s, &e) != 0)) {
		fail_run(r, j, "ssh_error", e.message);
		goto out;
	}
	tb_rn_snapshot(r, j, c);
	tb_rn_snapshot(r, j, s);
	/* the run's tunable set in force on both ends, verified (tunables.h) */
	if (tb_tun_ensure(r->sv, j->row.matrix_id, j->row.seq, c, set, j->link, msg, sizeof(msg)) != 0 ||
	    tb_tun_ensure(r->sv, j->row.matrix_id, j->row.seq, s, set, j->link, msg, sizeof(msg)) != 0) {
		fail_run(r, j, "tunable_error", msg);
		goto out;
	}
	if (tb_run_execute(r->sv, ctl, &j->row, c, s, &state, &klass, &e) != 0)
		tb_warn("runner", "matrix %lld run %d: %s", (long long)j->row.matrix_id, j->row.seq, e.message);
	/* a host that failed over ssh is asked again before its next run */
	if (klass != NULL && strcmp(klass, "ssh_error") == 0)
		c->ready = s->ready = false;
out:
	json_decref(params);
}

/* The hosts of j, with the machines of inventory inv; 0, or -1 when one is gone. */
int tb_rn_resolve(struct tb_runner *r, struct job *j, struct tb_run_host *hs, int *nh, const struct tb_inventory *inv,
		  struct tb_run_host **c, struct tb_run_host **s)
{
	char msg[600];

	*c = tb_rn_host_for(hs, nh, inv, j->client);
	*s = tb_rn_host_for(hs, nh, inv, j->server);
	if (*c == NULL || *s == NULL) {
		snprintf(msg, sizeof(msg), "%s is no longer in the inventory", *c == NULL ? j->client : j->server);
		fail_run(r, j, "ssh_error", msg);
		return -1;
	}
	/* a machine that was (re)loaded with the inventory: its pointer changed */
	(*c)->m = tb_inventory_find(inv, j->client);
	(*s)->m = tb_inventory_find(inv, j->server);
	return 0;
}

static void run_one(struct tb_runner *r, struct job *j, struct tb_run_host *hs, int *nh)
{
	struct tb_inventory *inv = tb_inv_current_get(r->sv->invs);
	struct tb_run_host *c, *s;

	if (tb_rn_resolve(r, j, hs, nh, inv, &c, &s) == 0)
		tb_rn_run_job(r, j, c, s, &r->ctl);
	tb_inv_current_put(r->sv->invs, inv);
}

/* Stop the run or round in progress (why: TB_RUN_CANCEL or TB_RUN_SHUTDOWN). */
static void stop_runs(struct tb_runner *r, int why)
{
	tb_run_ctl_stop(r->sv, &r->ctl, why);
	for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
		tb_run_ctl_stop(r->sv, &r->par[k], why);
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
static void restore_tunables(struct tb_runner *r, int64_t id, struct tb_run_host *hs, int nh)
{
	for (int i = 0; i < nh; i++) {
		char msg[400];

		if (hs[i].tun_set != 0 && tb_tun_restore_host(r->sv, &hs[i], msg, sizeof(msg)) != 0)
			tb_warn("runner", "matrix %lld: %s (the journal keeps it: restored at the next start)",
				(long long)id, msg);
	}
}

static void run_matrix(struct tb_runner *r, int64_t id)
{
	struct tb_store *st = r->sv->store;
	struct mview mv = {0};
	struct jobs js = {0};
	struct names ns = {0};
	struct tb_run_host *hs = calloc(TB_MATRIX_HOSTS_MAX, sizeof(*hs));
	struct tb_error e = {0};
	const char *final;
	int nh = 0, i;

	if (hs == NULL || tb_store_matrix_get(st, id, read_matrix, &mv, &e) != 0 ||
	    tb_store_run_each(st, id, "pending", collect, &js, &e) != 0 || js.failed) {
		tb_warn("runner", "matrix %lld: %s", (long long)id, js.failed ? "out of memory" : e.message);
		tb_store_matrix_update(st, id, "failed", 0, tb_now(), "internal",
				       js.failed ? "out of memory" : e.message, NULL);
		goto out;
	}
	if (strcmp(mv.state, "queued") != 0) /* canceled while queued */
		goto out;
	pthread_mutex_lock(&r->lock);
	snprintf(r->current_name, sizeof(r->current_name), "%s", mv.name);
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < js.n; i++) {
		names_add(&ns, js.v[i].client);
		names_add(&ns, js.v[i].server);
	}
	if (hold_hosts(r, id, mv.name, mv.actor, &ns) != 0) {
		tb_store_matrix_update(st, id, r->ctl.stop == TB_RUN_SHUTDOWN ? "interrupted" : "canceled", 0, tb_now(),
				       r->ctl.stop == TB_RUN_SHUTDOWN ? "interrupted" : "canceled",
				       "stopped while waiting for its hosts", NULL);
		publish_matrix(r, id);
		goto out;
	}
	tb_store_matrix_update(st, id, "running", tb_now(), 0, NULL, NULL, NULL);
	publish_matrix(r, id);
	if (js.n > 0)
		tb_rn_warm_up(r, &js, hs, &nh);
	for (i = 0; i < js.n && !r->ctl.stop;) {
		int n = 1;

		while (i + n < js.n && n < TB_RUNNER_PARALLEL && js.v[i + n].row.round == js.v[i].row.round)
			n++;
		pthread_mutex_lock(&r->lock);
		r->current_seq = js.v[i].row.seq;
		pthread_mutex_unlock(&r->lock);
		if (n == 1)
			run_one(r, &js.v[i], hs, &nh);
		else
			tb_rn_run_round(r, &js.v[i], n, hs, &nh);
		publish_matrix(r, id);
		i += n;
		if (mv.pause_ms > 0 && i < js.n)
			for (int t = 0; t < mv.pause_ms && !r->ctl.stop; t += 50)
				tb_sleep_ms(50, NULL);
	}
	restore_tunables(r, id, hs, nh); /* whatever ended the matrix, before any boot back */
	if (mv.restore && !r->ctl.stop) {
		char holder[TB_HOLDER_MAX];

		holder_of(id, mv.name, holder, sizeof(holder));
		tb_matrix_restore_hosts(r->sv, id, holder, hs, nh, &r->ctl.stop);
	}
	for (i = 0; i < ns.n; i++)
		tb_actions_release(r->sv->actions, ns.v[i]);
	tb_store_matrix_get(st, id, read_matrix, &mv, NULL);
	if (r->ctl.stop == TB_RUN_SHUTDOWN) {
		final = "interrupted";
		tb_store_matrix_update(st, id, final, 0, 0, "interrupted", "testbedd stopped: resume it to go on",
				       NULL);
	} else if (r->ctl.stop == TB_RUN_CANCEL) {
		final = "canceled";
		tb_store_matrix_update(st, id, final, 0, tb_now(), "canceled", "canceled: resume runs what is left",
				       NULL);
	} else if (mv.nfailed > 0) {
		char msg[96];

		final = "failed";
		snprintf(msg, sizeof(msg), "%d run%s failed", mv.nfailed, mv.nfailed == 1 ? "" : "s");
		tb_store_matrix_update(st, id, final, 0, tb_now(), "runs_failed", msg, NULL);
	} else {
		final = "succeeded";
		tb_store_matrix_update(st, id, final, 0, tb_now(), NULL, NULL, NULL);
	}
	tb_info("runner", "matrix %lld (%s) %s", (long long)id, mv.name, final);
	publish_matrix(r, id);
out:
	jobs_free(&js);
	free(hs);
}

/* ---- the worker ---- */

static void stop_leftovers(struct tb_runner *r)
{
	struct tb_inventory *inv = tb_inv_current_get(r->sv->invs);

	for (int i = 0; i < r->nleft; i++) {
		const struct tb_machine *m = tb_inventory_find(inv, r->left[i].machine);
		struct tb_error e = {0};

		if (m != NULL &&
		    tb_run_kill_leftovers(r->sv, m, r->left[i].os, r->left[i].pids, r->left[i].npids, &e) != 0)
			tb_warn("runner", "%s: could not stop the iperf3 of an interrupted run (pids %ld %ld): %s",
				r->left[i].machine, r->left[i].pids[0], r->left[i].pids[1], e.message);
	}
	tb_inv_current_put(r->sv->invs, inv);
	free(r->left);
	r->left = NULL;
	r->nleft = 0;
}

static void *worker(void *arg)
{
	struct tb_runner *r = arg;

	stop_leftovers(r);
	tb_tun_restore_pending(r->sv); /* what a crash left changed on the hosts (tunables.h) */
	for (;;) {
		int64_t id;

		pthread_mutex_lock(&r->lock);
		while (!r->stopping && r->nqueue == 0)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stopping) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		id = r->queue[0];
		memmove(r->queue, r->queue + 1, (size_t)(r->nqueue - 1) * sizeof(r->queue[0]));
		r->nqueue--;
		r->current = id;
		r->current_seq = -1;
		pthread_mutex_lock(&r->ctl.lock);
		r->ctl.stop = TB_RUN_GO;
		pthread_mutex_unlock(&r->ctl.lock);
		pthread_mutex_unlock(&r->lock);

		tb_tun_restore_pending(r->sv); /* a host that did not answer at start may now */
		run_matrix(r, id);

		pthread_mutex_lock(&r->lock);
		r->current = 0;
		r->current_seq = -1;
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

static void note_leftover(void *cls, const struct tb_run_row *row)
{
	struct tb_runner *r = cls;
	struct leftover *l;

	if (row->client_pid <= 1 && row->server_pid <= 1)
		return;
	if ((l = realloc(r->left, (size_t)(r->nleft + 2) * sizeof(*l))) == NULL)
		return;
	r->left = l;
	if (row->client_pid > 1 && row->client_os != NULL) {
		l = &r->left[r->nleft++];
		snprintf(l->machine, sizeof(l->machine), "%s", row->client);
		snprintf(l->os, sizeof(l->os), "%s", row->client_os);
		l->pids[0] = row->client_pid;
		l->npids = 1;
	}
	if (row->server_pid > 1 && row->server_os != NULL) {
		l = &r->left[r->nleft++];
		snprintf(l->machine, sizeof(l->machine), "%s", row->server);
		snprintf(l->os, sizeof(l->os), "%s", row->server_os);
		l->pids[0] = row->server_pid;
		l->npids = 1;
	}
}

int tb_runner_new(struct tb_services *sv, struct tb_runner **out, struct tb_error *err)
{
	struct tb_runner *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	r->sv = sv;
	r->current_seq = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	pthread_mutex_init(&r->ctl.lock, NULL);
	for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
		pthread_mutex_init(&r->par[k].lock, NULL);
	if ((rc = tb_store_matrix_interrupt(sv->store,
					    "testbedd stopped while this ran: resume the matrix to run it again",
					    tb_now(), note_leftover, r, err)) != 0 ||
	    pthread_create(&r->th, NULL, worker, r) != 0) {
		if (rc == 0)
			rc = tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the runner's thread");
		free(r->left);
		pthread_mutex_destroy(&r->ctl.lock);
		for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
			pthread_mutex_destroy(&r->par[k].lock);
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->cond);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void tb_runner_stop(struct tb_runner *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	stop_runs(r, TB_RUN_SHUTDOWN);
	pthread_join(r->th, NULL);
	pthread_mutex_destroy(&r->ctl.lock);
	for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
		pthread_mutex_destroy(&r->par[k].lock);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->left);
	free(r);
}

static int enqueue(struct tb_runner *r, int64_t id, struct tb_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (r->nqueue >= QUEUE_MAX)
		rc = tb_fail(err, TB_ERR_CONFLICT, "", "%d matrices are queued already: wait for some to finish",
			     QUEUE_MAX);
	else
		r->queue[r->nqueue++] = id;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int tb_runner_submit(struct tb_runner *r, const struct tb_matrix_plan *plan, const char *actor, int64_t rerun_of,
		     int64_t *id, struct tb_error *err)
{
	struct tb_run_row *rows = calloc((size_t)plan->nruns + 1, sizeof(*rows));
	char **params = calloc((size_t)plan->nruns + 1, sizeof(*params));
	char *spec = json_dumps(plan->spec, JSON_COMPACT | JSON_SORT_KEYS);
	struct tb_matrix_row m = {
		.name = plan->name,
		.spec = spec,
		.state = "queued",
		.actor = actor,
		.created_at = tb_now(),
		.seed = (int64_t)plan->seed,
		.estimated_ms = plan->estimated_ms,
		.rerun_of = rerun_of,
	};
	int rc = 0;

	if (rows == NULL || params == NULL || spec == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *p = &plan->runs[i];
		json_t *pj = tb_matrix_params_json(&p->p);

		/* the run's tunable set: stored with it, so that it can be reproduced (tunables.h) */
		if (pj != NULL && p->tset >= 0 &&
		    json_object_set_new(pj, "tunables", tb_matrix_tunables_set_json(plan, p->tset)) != 0) {
			json_decref(pj);
			pj = NULL;
		}

		params[i] = pj != NULL ? json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(pj);
		if (params[i] == NULL) {
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
			goto out;
		}
		rows[i] = (struct tb_run_row){
			.seq = p->seq,
			.cell = p->cell,
			.repeat = p->repeat,
			.round = p->round,
			.combo = p->combo,
			.want_client_os = p->client_os[0] ? p->client_os : NULL,
			.want_server_os = p->server_os[0] ? p->server_os : NULL,
			.client = p->client,
			.server = p->server,
			.link = p->link,
			.server_address = p->server_address,
			.protocol = tb_iperf_proto_name(p->p.proto),
			.direction = tb_iperf_dir_name(p->p.dir),
			.params = params[i],
		};
	}
	/* a host reserved by someone else: 409 now, not a matrix that waits (reserve.h) */
	for (int i = 0; i < plan->nruns && rc == 0; i++)
		if ((rc = tb_reserve_check(r->sv->reserve, plan->runs[i].client, actor, err)) == 0)
			rc = tb_reserve_check(r->sv->reserve, plan->runs[i].server, actor, err);
	if (rc != 0 || (rc = tb_store_matrix_insert(r->sv->store, &m, rows, plan->nruns, id, err)) != 0)
		goto out;
	if ((rc = enqueue(r, *id, err)) != 0)
		tb_store_matrix_update(r->sv->store, *id, "failed", 0, tb_now(), "conflict", err->message, NULL);
	else
		publish_matrix(r, *id);
out:
	if (params != NULL)
		for (int i = 0; i < plan->nruns; i++)
			free(params[i]);
	free(params);
	free(rows);
	free(spec);
	return rc;
}

static void read_state(void *cls, const struct tb_matrix_row *m)
{
	snprintf(cls, 16, "%s", m->state);
}

int tb_runner_cancel(struct tb_runner *r, int64_t id, struct tb_error *err)
{
	char state[16];
	int rc, queued = 0;

	if ((rc = tb_store_matrix_get(r->sv->store, id, read_state, state, err)) != 0)
		return rc;
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->nqueue; i++) {
		if (r->queue[i] == id) {
			memmove(r->queue + i, r->queue + i + 1, (size_t)(r->nqueue - i - 1) * sizeof(r->queue[0]));
			r->nqueue--;
			queued = 1;
			break;
		}
	}
	if (r->current == id) {
		pthread_mutex_unlock(&r->lock);
		stop_runs(r, TB_RUN_CANCEL);
		return 0;
	}
	pthread_mutex_unlock(&r->lock);
	if (!queued && strcmp(state, "queued") != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "id", "matrix %lld has ended (%s): nothing to cancel",
			       (long long)id, state);
	rc = tb_store_matrix_update(r->sv->store, id, "canceled", 0, tb_now(), "canceled",
				    "canceled before it started: resume runs it", err);
	publish_matrix(r, id);
	return rc;
}

int tb_runner_resume(struct tb_runner *r, int64_t id, struct tb_error *err)
{
	char state[16];
	int rc, reset = 0;

	if ((rc = tb_store_matrix_get(r->sv->store, id, read_state, state, err)) != 0)
		return rc;
	pthread_mutex_lock(&r->lock);
	if (r->current == id) {
		pthread_mutex_unlock(&r->lock);
		return tb_fail(err, TB_ERR_CONFLICT, "id", "matrix %lld is running", (long long)id);
	}
	pthread_mutex_unlock(&r->lock);
	if (strcmp(state, "interrupted") != 0 && strcmp(state, "canceled") != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "id",
			       "matrix %lld is %s: only an interrupted or canceled matrix can be resumed"
			       " (rerun makes a new matrix from the same spec)",
			       (long long)id, state);
	if ((rc = tb_store_matrix_requeue(r->sv->store, id, &reset, err)) != 0)
		return rc;
	tb_info("runner", "matrix %lld resumed: %d run%s to go again", (long long)id, reset, reset == 1 ? "" : "s");
	if ((rc = enqueue(r, id, err)) != 0)
		return rc;
	publish_matrix(r, id);
	return 0;
}

void tb_runner_now(struct tb_runner *r, struct tb_mx_now *now)
{
	now->matrix = 0;
	now->seq = -1;
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	now->matrix = r->current;
	now->seq = r->current != 0 ? r->current_seq : -1;
	pthread_mutex_unlock(&r->lock);
}
