/* matrix_boot.c - a matrix boots a host through a boot action: see matrix_boot.h. */
#include "matrix_boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "actions.h"
#include "app.h"
#include "boot.h"
#include "events.h"
#include "hosts.h"
#include "log.h"
#include "matrix.h"
#include "store.h"
#include "timeutil.h"

#define HOLD_BACK_MS 30000     /* how long to wait for the host's hold after the boot */

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void publish(struct tb_app *app, int64_t matrix_id, const char *host, const char *os, int64_t action,
		    const char *state, const char *error)
{
	tb_events_publish(app->events, "matrix.boot", host, matrix_id,
			  json_pack("{s:I, s:s, s:s, s:o, s:s, s:o}", "matrix", (json_int_t)matrix_id, "host", host, "os",
				    os, "action", action > 0 ? json_integer(action) : json_null(), "state", state,
				    "error", error != NULL ? json_string(error) : json_null()));
}

/* Follow action id to its end: its state into state (16 bytes), its error into err. */
static void follow(struct tb_app *app, int64_t id, const volatile int *stop, char *state, struct tb_error *err)
{
	int canceled = 0;

	for (;;) {
		json_t *a = NULL;
		struct tb_error e = {0};

		if (tb_actions_get_json(app->actions, id, &a, &e) == 0) {
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
			tb_actions_cancel(app->actions, id, &e);
			canceled = 1;
		}
		nap_ms(200);
	}
}

int tb_matrix_boot(struct tb_app *app, int64_t matrix_id, const char *holder, const char *host, const char *from_os,
		   const char *os, int before_seq, const volatile int *stop, struct tb_error *err)
{
	struct tb_matrix_boot_row row = {0};
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
	tb_store_matrix_boot_add(app->store, &row, &bid, NULL);
	tb_info("matrix", "matrix %lld boots %s into %s", (long long)matrix_id, host, os);
	/* the boot action holds the host itself: hand the matrix's hold over */
	tb_actions_release(app->actions, host);
	rc = tb_boot_start(app, host, os, 0, actor, &aid, err);
	if (rc == 0) {
		publish(app, matrix_id, host, os, aid, "running", NULL);
		follow(app, aid, stop, state, err);
		rc = strcmp(state, "succeeded") == 0 ? 0 : TB_ERR_REMOTE;
	}
	/* take the hold back (someone may have taken it meanwhile: wait a little) */
	for (int64_t t0 = tb_now_ms(); tb_actions_hold(app->actions, host, holder, &e) != 0;) {
		if (tb_now_ms() - t0 > HOLD_BACK_MS) {
			if (rc == 0)
				rc = tb_fail(err, TB_ERR_CONFLICT, "", "%s was booted into %s, but then %s", host, os,
					     e.message);
			break;
		}
		nap_ms(200);
	}
	if (bid > 0)
		tb_store_matrix_boot_finish(app->store, bid, aid, rc == 0 ? "succeeded" : state, rc == 0 ? NULL : err->message,
					    tb_now_ms(), NULL);
	publish(app, matrix_id, host, os, aid, rc == 0 ? "succeeded" : state, rc == 0 ? NULL : err->message);
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

int tb_matrix_now_collect(struct tb_app *app, struct tb_matrix_host_now **hosts, struct tb_matrix_now *now,
			  struct tb_error *err)
{
	struct tb_inventory *inv = tb_app_inventory_get(app);
	struct collect c = {0};

	c.cap = (int)inv->nmachines + 1;
	tb_app_inventory_put(app, inv);
	*hosts = NULL;
	now->n = 0;
	now->hosts = NULL;
	if ((c.v = calloc((size_t)c.cap, sizeof(*c.v))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	tb_hosts_each_state(app->hosts, one_state, &c);   /* an inventory grown meanwhile: the rest unknown */
	tb_store_boot_times(app->store, one_time, &c, NULL);
	*hosts = c.v;
	now->n = c.n;
	now->hosts = c.v;
	return 0;
}
