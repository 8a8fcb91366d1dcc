/* matrix_boot.c - a matrix boots a host through a boot action: see matrix_boot.h. */
#include "matrix_boot.h"
#include "validate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "actions.h"
#include "services.h"
#include "inventory.h"
#include "boot.h"
#include "boot_paths.h"
#include "bootmenu.h"
#include "console.h"
#include "events.h"
#include "hosts.h"
#include "log.h"
#include "matrix.h"
#include "run_exec.h"
#include "store.h"
#include "timeutil.h"

#define HOLD_BACK_MS 30000 /* how long to wait for the host's hold after the boot */

static void publish(struct tb_services *sv, int64_t matrix_id, const char *host, const char *os, int64_t action,
		    const char *state, const char *error)
{
	tb_events_publish(sv->events, "matrix.boot", host, matrix_id,
			  json_pack("{s:I, s:s, s:s, s:o, s:s, s:o}", "matrix", (json_int_t)matrix_id, "host", host,
				    "os", os, "action", action > 0 ? json_integer(action) : json_null(), "state", state,
				    "error", error != NULL ? json_string(error) : json_null()));
}

/* Follow action id to its end: its state into state (16 bytes), its error into err. */
static void follow(struct tb_services *sv, int64_t id, const volatile int *stop, char *state, struct tb_error *err)
{
	int canceled = 0;

	for (;;) {
		json_t *a = NULL;
		struct tb_error e = {0};

		if (tb_actions_get_json(sv->actions, id, &a, &e) == 0) {
			const char *s = json_string_value(json_object_get(a, "state"));

			if (s != NULL && strcmp(s, "queued") != 0 && strcmp(s, "running") != 0) {
				const json_t *er = json_object_get(a, "error");

				snprintf(state, 16, "%s", s);
				if (strcmp(s, "succeeded") != 0)
					tb_fail(err, TB_ERR_REMOTE, "", "action %lld %s: %s", (long long)id, s,
						json_is_object(er) ? json_string_value(json_object_get(er, "message"))
								   : "no reason recorded");
				json_decref(a);
				return;
			}
		}
		json_decref(a);
		if (*stop && !canceled) {
			tb_actions_cancel(sv->actions, id, &e);
			canceled = 1;
		}
		tb_sleep_ms(200, NULL);
	}
}

static const char *path_of(struct tb_services *sv, const struct tb_inventory *inv, const char *machine,
			   const char *from, const char *to);

int tb_matrix_boot(struct tb_services *sv, int64_t matrix_id, const char *holder, const char *host, const char *from_os,
		   const char *os, int before_seq, const volatile int *stop, struct tb_error *err)
{
	struct tb_matrix_boot_row row = {0};
	struct tb_hold_info was;
	char actor[48], state[16] = "failed";
	int64_t bid = 0, aid = 0;
	struct tb_error e = {0};
	int rc;

	snprintf(actor, sizeof(actor), "matrix %lld", (long long)matrix_id);
	row.matrix_id = matrix_id;
	row.host = host;
	row.from_os = from_os != NULL && *from_os ? from_os : NULL;
	row.to_os = os;
	row.started_ms = tb_now_ms();
	row.before_seq = before_seq;
	{ /* the path the boot will take, as planned (the action's step says the one it took) */
		struct tb_inventory *inv = tb_inv_current_get(sv->invs);

		row.path = path_of(sv, inv, host, row.from_os, os);
		tb_inv_current_put(sv->invs, inv);
	}
	tb_store_matrix_boot_add(sv->store, &row, &bid, NULL);
	tb_info("matrix", "matrix %lld boots %s into %s", (long long)matrix_id, host, os);
	/* the boot action holds the host itself: hand the matrix's hold over
	 * (and take it back as it was: held_by keeps who started the matrix) */
	if (!tb_actions_held_by(sv->actions, host, &was))
		memset(&was, 0, sizeof(was));
	tb_actions_release(sv->actions, host);
	rc = tb_boot_start(sv, host, os, 0, actor, &aid, err);
	if (rc == 0) {
		publish(sv, matrix_id, host, os, aid, "running", NULL);
		follow(sv, aid, stop, state, err);
		rc = strcmp(state, "succeeded") == 0 ? 0 : TB_ERR_REMOTE;
	}
	/* take the hold back (someone may have taken it meanwhile: wait a little) */
	for (int64_t t0 = tb_now_ms();
	     tb_actions_hold_as(sv->actions, host, holder, was.kind[0] ? was.kind : NULL, was.id, was.by, &e) != 0;) {
		if (tb_now_ms() - t0 > HOLD_BACK_MS) {
			if (rc == 0)
				rc = tb_fail(err, TB_ERR_CONFLICT, "", "%s was booted into %s, but then %s", host, os,
					     e.message);
			break;
		}
		tb_sleep_ms(200, NULL);
	}
	if (bid > 0)
		tb_store_matrix_boot_finish(sv->store, bid, aid, rc == 0 ? "succeeded" : state,
					    rc == 0 ? NULL : err->message, tb_now_ms(), NULL);
	publish(sv, matrix_id, host, os, aid, rc == 0 ? "succeeded" : state, rc == 0 ? NULL : err->message);
	return rc;
}

/* ---- what the planner knows ---- */

struct collect {
	struct tb_matrix_host_now *v;
	int n, cap, oom;
};

static void one_state(void *cls, const char *machine, const char *reachability, const char *os)
{
	struct collect *c = cls;

	if (c->n >= c->cap) {
		c->oom = 1;
		return;
	}
	snprintf(c->v[c->n].machine, sizeof(c->v[0].machine), "%s", machine);
	snprintf(c->v[c->n].os, sizeof(c->v[0].os), "%s", strcmp(reachability, "up") == 0 && os != NULL ? os : "");
	c->v[c->n].boot_ms = 0;
	c->n++;
}

static void one_time(void *cls, const char *host, int64_t mean_ms, int n)
{
	struct collect *c = cls;

	(void)n;
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->v[i].machine, host) == 0)
			c->v[i].boot_ms = mean_ms;
}

int tb_matrix_now_collect(struct tb_services *sv, struct tb_matrix_host_now **hosts, struct tb_matrix_now *now,
			  struct tb_error *err)
{
	struct tb_inventory *inv = tb_inv_current_get(sv->invs);
	struct collect c = {0};

	c.cap = (int)inv->nmachines + 1;
	tb_inv_current_put(sv->invs, inv);
	*hosts = NULL;
	now->n = 0;
	now->hosts = NULL;
	if ((c.v = calloc((size_t)c.cap, sizeof(*c.v))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	tb_hosts_each_state(sv->hosts, one_state, &c); /* an inventory grown meanwhile: the rest unknown */
	tb_store_boot_times(sv->store, one_time, &c, NULL);
	*hosts = c.v;
	now->n = c.n;
	now->hosts = c.v;
	return 0;
}

/* The boot path (its table's name, static) that takes machine from into
 * to now, NULL none; GRUB's default and the console from memory. */
static const char *path_of(struct tb_services *sv, const struct tb_inventory *inv, const char *machine,
			   const char *from, const char *to)
{
	const struct tb_machine *m = tb_inventory_find(inv, machine);
	const struct tb_boot_path *p;
	struct tb_boot_default bd;
	json_t *st;
	int console;

	if (m == NULL || m->boot.loader == NULL)
		return NULL;
	tb_bootmenus_default(tb_hosts_menus(sv->hosts), m, &bd);
	st = tb_console_state_json(sv->consoles, m->name);
	console = json_is_true(json_object_get(st, "connected"));
	json_decref(st);
	p = tb_boot_path_for(m, from, to, bd.os, console);
	return p != NULL ? p->name : NULL;
}

/* Linear in the boots. */
void tb_matrix_plan_paths(struct tb_services *sv, const struct tb_inventory *inv, struct tb_matrix_plan *plan)
{
	for (int i = 0; i < plan->nboots; i++)
		plan->boots[i].path = path_of(sv, inv, plan->boots[i].machine, plan->boots[i].from, plan->boots[i].to);
}

/* ---- a matrix's hosts in the OS its runs want ---- */

/* What h answers as now ("" when it does not): learned once, kept as the OS to go back to. */
static const char *current_os(struct tb_services *sv, struct tb_run_host *h)
{
	struct tb_error e = {0};

	if (!h->ready && tb_run_host_prepare(sv, h, NULL, &e) != 0)
		h->os[0] = '\0';
	if (!h->initial_known) {
		h->initial_known = true;
		snprintf(h->initial_os, sizeof(h->initial_os), "%s", h->ready ? h->os : "");
	}
	return h->ready ? h->os : "";
}

int tb_matrix_host_os(struct tb_services *sv, int64_t matrix_id, const char *holder, struct tb_run_host *h,
		      const char *want, int seq, const volatile int *stop, char *msg, size_t len)
{
	char from[TB_NAME_MAX];
	struct tb_error e = {0};

	if (strcmp(h->boot_failed, want) == 0) {
		snprintf(msg, len, "%s", h->boot_error);
		return -1;
	}
	snprintf(from, sizeof(from), "%s", current_os(sv, h));
	if (strcmp(from, want) == 0)
		return 0;
	h->ready = false;
	if (tb_matrix_boot(sv, matrix_id, holder, h->m->name, from, want, seq, stop, &e) == 0 &&
	    tb_run_host_prepare(sv, h, NULL, &e) == 0 && strcmp(h->os, want) == 0)
		return 0;
	if (e.message[0] == '\0')
		snprintf(e.message, sizeof(e.message), "it answers as %s", h->os);
	snprintf(msg, len, "%s could not be booted into %s: %s", h->m->name, want, e.message);
	if (!*stop) { /* a stop is not the host's fault: the next resume tries again */
		snprintf(h->boot_failed, sizeof(h->boot_failed), "%s", want);
		snprintf(h->boot_error, sizeof(h->boot_error), "%s", msg);
	}
	return -1;
}

/* One host back into the OS it was in, for a thread of its own. */
struct restore {
	struct tb_services *sv;
	int64_t matrix_id;
	const char *holder;
	struct tb_run_host *h;
	const volatile int *stop;
	pthread_t th;
};

static void *restore_main(void *arg)
{
	struct restore *x = arg;
	struct tb_run_host *h = x->h;
	struct tb_error e = {0};

	if (tb_matrix_boot(x->sv, x->matrix_id, x->holder, h->m->name, h->ready ? h->os : "", h->initial_os, -1,
			   x->stop, &e) != 0)
		tb_warn("matrix", "matrix %lld: %s was not booted back into %s: %s", (long long)x->matrix_id,
			h->m->name, h->initial_os, e.message);
	h->ready = false;
	return NULL;
}

void tb_matrix_restore_hosts(struct tb_services *sv, int64_t matrix_id, const char *holder, struct tb_run_host *hs,
			     int nh, const volatile int *stop)
{
	struct restore *xs = calloc((size_t)nh + 1, sizeof(*xs));
	int n = 0;

	for (int i = 0; i < nh && !*stop; i++) {
		struct tb_run_host *h = &hs[i];

		if (!h->initial_known || h->initial_os[0] == '\0' || (h->ready && strcmp(h->os, h->initial_os) == 0))
			continue;
		if (xs == NULL) { /* out of memory: one after another */
			struct restore one = {sv, matrix_id, holder, h, stop, 0};

			restore_main(&one);
			continue;
		}
		xs[n] = (struct restore){sv, matrix_id, holder, h, stop, 0};
		if (pthread_create(&xs[n].th, NULL, restore_main, &xs[n]) != 0)
			restore_main(&xs[n]); /* no thread: now, and nothing to join */
		else
			n++;
	}
	for (int i = 0; i < n; i++) /* all at once: the time of the longest */
		pthread_join(xs[i].th, NULL);
	free(xs);
}
