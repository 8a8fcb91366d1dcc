/* schedule.c - recurring matrices and their CI gate: see schedule.h. */
#include "schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "cron.h"
#include "actions.h"
#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "matrix.h"
#include "power.h"
#include "reserve.h"
#include "results.h"
#include "runner.h"
#include "services.h"
#include "specs.h"
#include "store_specs.h"
#include "ticker.h"
#include "timeutil.h"
#include "validate.h"
#include "wake.h"

#define TICK_MS 1000
#define MAX_DUE 64 /* schedules started in one tick; the rest the next */
#define LAST_SHOWN 20
#define LATEST "latest-passing"
#define MAX_WAITING 8    /* schedules waiting for their hosts to power on */
#define WAKE_MAX 16      /* hosts one schedule powers on */
#define WAKE_MARGIN_S 60 /* beyond the longest boot timeout: the BMC's retries */

/* A schedule copied out of the store's callback. */
struct due {
	char name[TB_MATRIX_NAME_MAX * 4 + 1];
	char cron[TB_CRON_TEXT_MAX + 1];
	char baseline[32];
	char metric[32];
	char author[128];
	double max_drop;
	int64_t next_at;
	int64_t failed_at; /* its last time did not start a matrix (0: it did) */
	char failure[512]; /* why */
};

/* A schedule whose time came while hosts of its spec were off: the power-on
 * actions it started, its matrix submitted when all have succeeded. */
struct waiting {
	struct due d;
	int64_t next;     /* its next time, for schedule.failed */
	int64_t deadline; /* tb_now(): the longest boot timeout and a margin */
	int n;
	char host[WAKE_MAX][TB_NAME_MAX];
	int64_t action[WAKE_MAX];
};

struct tb_schedule {
	struct tb_services *sv;
	struct tb_ticker ticker;
	struct waiting waiting[MAX_WAITING]; /* the ticker's thread only */
	int nwaiting;
};

/* Schedules copied out of the store's callback (it may not call the store
 * again), as many as there are; d is malloc'd (free it). */
struct due_list {
	struct due *d;
	int n, cap;
	int max; /* 0: no limit */
	int nomem;
};

static void copy_due(void *cls, const struct tb_schedule_row *r)
{
	struct due_list *l = cls;
	struct due *d;

	if (l->max != 0 && l->n >= l->max)
		return;
	if (l->n == l->cap) {
		int cap = l->cap != 0 ? l->cap * 2 : 8;
		struct due *grown = realloc(l->d, (size_t)cap * sizeof(*grown));

		if (grown == NULL) {
			l->nomem = 1;
			return;
		}
		l->d = grown;
		l->cap = cap;
	}
	d = &l->d[l->n++];
	snprintf(d->name, sizeof(d->name), "%s", r->name);
	snprintf(d->cron, sizeof(d->cron), "%s", r->cron);
	snprintf(d->baseline, sizeof(d->baseline), "%s", r->baseline);
	snprintf(d->metric, sizeof(d->metric), "%s", r->metric);
	snprintf(d->author, sizeof(d->author), "%s", r->author);
	d->max_drop = r->max_drop;
	d->next_at = r->next_at;
	d->failed_at = r->failed_at;
	snprintf(d->failure, sizeof(d->failure), "%s", r->failure != NULL ? r->failure : "");
}

/* The next time of pattern after t (INT64_MAX: never). */
static int64_t next_time(const char *pattern, int64_t t)
{
	struct tb_cron c;
	char why[200];
	time_t n;

	if (tb_cron_parse(pattern, &c, why, sizeof(why)) != 0 || (n = tb_cron_next(&c, (time_t)t)) < 0)
		return INT64_MAX;
	return (int64_t)n;
}

static uint64_t seed_now(void)
{
	return (uint64_t)tb_now_ms() & ((1ULL << 53) - 1);
}

/* d's spec (its latest version) planned on the inventory in force: *plan
 * (free it) and its *version. */
static int plan_of(struct tb_schedule *sc, const struct due *d, struct tb_matrix_plan **plan, int64_t *version,
		   struct tb_error *err)
{
	struct tb_services *sv = sc->sv;
	struct tb_inventory *inv;
	json_t *j;
	int rc;

	if ((rc = tb_spec_get_json(sv->store, d->name, 0, &j, err)) != 0)
		return rc;
	*version = (int64_t)json_integer_value(json_object_get(j, "version"));
	inv = tb_inv_current_get(sv->invs);
	rc = tb_matrix_plan_make(json_object_get(j, "spec"), inv, seed_now(), plan, err);
	tb_inv_current_put(sv->invs, inv);
	json_decref(j);
	return rc;
}

/* Start d's spec (its latest version) as a matrix and record its gate; an
 * error: the matrix did not start (a gate not recorded is only logged). */
static int start_one(struct tb_schedule *sc, const struct due *d, int64_t *id, struct tb_error *err)
{
	struct tb_services *sv = sc->sv;
	struct tb_matrix_plan *plan = NULL;
	int64_t version, pinned = 0;
	int rc;

	if ((rc = plan_of(sc, d, &plan, &version, err)) != 0)
		return rc;
	rc = tb_runner_submit(sv->runner, plan, d->author, 0, id, err);
	tb_matrix_plan_free(plan);
	if (rc != 0)
		return rc;
	if (strcmp(d->baseline, LATEST) != 0)
		pinned = strtoll(d->baseline, NULL, 10);
	if (tb_store_gate_insert(sv->store, *id, d->name, version, pinned, err) != 0)
		tb_warn("schedule", "%s: matrix %lld started, its gate not recorded: %s", d->name, (long long)*id,
			err->message);
	if (d->failed_at != 0 && tb_store_schedule_set_failure(sv->store, d->name, 0, NULL, err) != 0)
		tb_warn("schedule", "%s: its last failure not cleared: %s", d->name, err->message);
	return 0;
}

/* d could not start its matrix (err): a schedule.failed event, which a
 * notification rule can deliver, beside the log line. */
static void publish_failed(struct tb_schedule *sc, const struct due *d, int64_t next, const struct tb_error *err)
{
	struct tb_error e2 = {0};

	tb_warn("schedule", "%s: not started: %s", d->name, err->message);
	/* kept with the schedule until a time starts one (GET /schedules' last_failure) */
	if (tb_store_schedule_set_failure(sc->sv->store, d->name, tb_now(), err->message, &e2) != 0)
		tb_warn("schedule", "%s: its failure not recorded: %s", d->name, e2.message);
	tb_events_publish(sc->sv->events, "schedule.failed", NULL, 0,
			  json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "spec", d->name, "cron", d->cron, "error",
				    "code", tb_err_name(err->code), "field", err->field, "message", err->message,
				    "next_at", next < INT64_MAX ? tb_time_json(next) : json_null()));
}

/* ---- powering the hosts on first ---- */

#define HOSTS_MAX 64 /* distinct hosts of one spec looked at */

/* Hosts of a plan seen so far and those of them to power on. */
struct offs {
	char seen[HOSTS_MAX][TB_NAME_MAX];
	int nseen;
	const struct tb_machine *off[WAKE_MAX];
	int noff;
};

static int can_power_on(const struct tb_machine *m)
{
	for (size_t i = 0; i < m->npower; i++)
		if (tb_power_method_ops(&m->power[i]) & TB_POWER_BIT(TB_POWER_ON))
			return 1;
	return 0;
}

/* host of d's plan: into o->off when the prober sees it down and it has a
 * power method that switches it on; refused when it is reserved by someone
 * else than d's author (it is not woken). */
static int look_at(struct tb_schedule *sc, const struct tb_inventory *inv, const struct due *d, const char *host,
		   struct offs *o, struct tb_error *err)
{
	const struct tb_machine *m;
	struct tb_error why = {0};
	int64_t since, checked;

	for (int i = 0; i < o->nseen; i++)
		if (strcmp(o->seen[i], host) == 0)
			return 0;
	if (o->nseen == HOSTS_MAX)
		return 0;
	snprintf(o->seen[o->nseen++], TB_NAME_MAX, "%s", host);
	if ((m = tb_inventory_find(inv, host)) == NULL || !can_power_on(m) ||
	    tb_hosts_reach(sc->sv->hosts, host, &since, &checked) != 0)
		return 0;
	if (tb_reserve_check(sc->sv->reserve, host, d->author, &why) != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "", "%s is off and is not powered on: %s", host, why.message);
	if (o->noff == WAKE_MAX)
		return tb_fail(err, TB_ERR_INVALID, "", "more than %d hosts of the spec are off", WAKE_MAX);
	o->off[o->noff++] = m;
	return 0;
}

/* Power on those of o->off that are off (tb_wake_power_on, the wake
 * schedule's way) for d: their actions into w. */
static int power_on(struct tb_schedule *sc, const struct due *d, const struct offs *o, struct waiting *w,
		    struct tb_error *err)
{
	struct tb_error e = {0};
	char note[400];
	int64_t id;
	int rc, boot_s = 0;

	for (int i = 0; i < o->noff; i++) {
		const struct tb_machine *m = o->off[i];

		snprintf(note, sizeof(note), "the schedule \"%s\" of spec %s is due and %s is off: powering it on",
			 d->cron, d->name, m->name);
		rc = tb_wake_power_on(sc->sv, m, d->author, /* on its behalf: its reservation lets it */
				      json_pack("{s:s, s:s, s:s, s:s}", "action", "on", "reason", "schedule", "spec",
						d->name, "cron", d->cron),
				      note, &id, &e);
		if (rc != 0)
			return tb_fail(err, rc, "", "%s is off and cannot be powered on: %s", m->name, e.message);
		if (id == 0)
			continue; /* its BMC says on: it is booting */
		snprintf(w->host[w->n], TB_NAME_MAX, "%s", m->name);
		w->action[w->n++] = id;
		if (m->boot_timeout_s > boot_s)
			boot_s = m->boot_timeout_s;
	}
	w->deadline = tb_now() + boot_s + WAKE_MARGIN_S;
	return 0;
}

/* Power on the hosts of d's spec that are off (those with a power method):
 * 0 with w->n 0: none is; 0 with w->n > 0: w waits for their actions; an
 * error: the schedule fails (a host reserved by someone else, a power-on
 * refused; actions started before it go on). */
static int wake_hosts(struct tb_schedule *sc, const struct due *d, struct waiting *w, struct tb_error *err)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_planned_run r;
	struct tb_inventory *inv;
	struct offs *o;
	int64_t version;
	int rc;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = plan_of(sc, d, &plan, &version, err)) != 0) {
		free(o);
		return rc;
	}
	inv = tb_inv_current_get(sc->sv->invs);
	for (int i = 0; i < plan->nruns && rc == 0 && o->nseen < HOSTS_MAX; i++) {
		tb_matrix_plan_run(plan, i, &r);
		if ((rc = look_at(sc, inv, d, r.client, o, err)) == 0)
			rc = look_at(sc, inv, d, r.server, o, err);
	}
	tb_matrix_plan_free(plan);
	w->n = 0;
	if (rc == 0)
		rc = power_on(sc, d, o, w, err);
	tb_inv_current_put(sc->sv->invs, inv);
	free(o);
	return rc;
}

/* w's actions: 1 some still run; 0 all succeeded; an error naming the host
 * that did not come up (its action failed, or the deadline passed: the
 * actions still running are canceled). */
static int waiting_state(struct tb_schedule *sc, const struct waiting *w, struct tb_error *err)
{
	struct tb_error e = {0};
	int running = 0, rc = 0;
	json_t *j;

	for (int i = 0; i < w->n && rc == 0; i++) {
		const char *state;

		if ((rc = tb_actions_get_json(sc->sv->actions, w->action[i], &j, &e)) != 0)
			return tb_fail(err, rc, "", "%s: power-on action %lld: %s", w->host[i], (long long)w->action[i],
				       e.message);
		state = json_string_value(json_object_get(j, "state"));
		if (state == NULL || strcmp(state, "queued") == 0 || strcmp(state, "running") == 0)
			running = 1;
		else if (strcmp(state, "succeeded") != 0)
			rc = tb_fail(
				err, TB_ERR_UNREACHABLE, "", "%s did not come up: power-on action %lld %s: %s",
				w->host[i], (long long)w->action[i], state,
				json_string_value(json_object_get(json_object_get(j, "error"), "message")) != NULL
					? json_string_value(json_object_get(json_object_get(j, "error"), "message"))
					: "no reason given");
		json_decref(j);
	}
	if (rc != 0 || !running)
		return rc;
	if (tb_now() <= w->deadline)
		return 1;
	for (int i = 0; i < w->n; i++)
		(void)tb_actions_cancel(sc->sv->actions, w->action[i], &e);
	return tb_fail(err, TB_ERR_TIMEOUT, "",
		       "%s%s did not come up within its boot timeout and %d s (power-on canceled)", w->host[0],
		       w->n > 1 ? " or another host" : "", WAKE_MARGIN_S);
}

/* Each schedule waiting for its hosts: its matrix once they are up, a
 * schedule.failed when one did not come up. */
static void check_waiting(struct tb_schedule *sc)
{
	struct tb_error err = {0};
	int64_t id = 0;
	int i = 0, rc;

	while (i < sc->nwaiting && !tb_ticker_stopping(&sc->ticker)) {
		struct waiting *w = &sc->waiting[i];

		if ((rc = waiting_state(sc, w, &err)) == 1) {
			i++;
			continue;
		}
		if (rc == 0)
			rc = start_one(sc, &w->d, &id, &err);
		if (rc != 0)
			publish_failed(sc, &w->d, w->next, &err);
		else
			tb_info("schedule", "%s: \"%s\" started matrix %lld, its hosts powered on", w->d.name,
				w->d.cron, (long long)id);
		sc->waiting[i] = sc->waiting[--sc->nwaiting];
	}
}

static int is_waiting(const struct tb_schedule *sc, const char *name)
{
	for (int i = 0; i < sc->nwaiting; i++)
		if (strcmp(sc->waiting[i].d.name, name) == 0)
			return 1;
	return 0;
}

/* d's time has come: power its hosts on first when some are off (it then
 * waits in sc->waiting), else start its matrix now. */
static int fire_one(struct tb_schedule *sc, const struct due *d, int64_t next, struct tb_error *err)
{
	struct waiting *w;
	int64_t id = 0;
	int rc;

	if (is_waiting(sc, d->name))
		return tb_fail(err, TB_ERR_CONFLICT, "", "its previous time still waits for its hosts to power on");
	if (sc->nwaiting == MAX_WAITING)
		return tb_fail(err, TB_ERR_CONFLICT, "", "%d schedules already wait for their hosts to power on",
			       MAX_WAITING);
	w = &sc->waiting[sc->nwaiting];
	if ((rc = wake_hosts(sc, d, w, err)) != 0)
		return rc;
	if (w->n > 0) {
		w->d = *d;
		w->next = next;
		sc->nwaiting++;
		tb_info("schedule", "%s: \"%s\" is due: powering on %d host%s first (%s%s)", d->name, d->cron, w->n,
			w->n > 1 ? "s" : "", w->host[0], w->n > 1 ? ", ..." : "");
		return 0;
	}
	if ((rc = start_one(sc, d, &id, err)) != 0)
		return rc;
	tb_info("schedule", "%s: \"%s\" started matrix %lld", d->name, d->cron, (long long)id);
	return 0;
}

static void fire_due(struct tb_schedule *sc)
{
	struct tb_error err = {0};
	int64_t now = tb_now(), next;
	struct due_list l = {.max = MAX_DUE};

	if (tb_store_schedule_each(sc->sv->store, NULL, now, copy_due, &l, &err) != 0) {
		tb_warn("schedule", "reading schedules: %s", err.message);
		free(l.d);
		return;
	}
	for (int i = 0; i < l.n && !tb_ticker_stopping(&sc->ticker); i++) {
		const struct due *d = &l.d[i];

		/* the next time first: a spec that cannot start waits for it */
		next = next_time(d->cron, now);
		if (tb_store_schedule_set_next(sc->sv->store, d->name, next, &err) != 0) {
			tb_warn("schedule", "%s: %s", d->name, err.message);
			continue;
		}
		if (fire_one(sc, d, next, &err) != 0)
			publish_failed(sc, d, next, &err);
	}
	free(l.d);
}

/* ---- the gate ---- */

struct ended {
	int64_t matrix_id, version, baseline_id;
	char spec[TB_MATRIX_NAME_MAX * 4 + 1];
	char state[16];
};

struct ended_list {
	struct ended e[MAX_DUE];
	int n;
};

static void copy_ended(void *cls, const struct tb_gate_row *r)
{
	struct ended_list *l = cls;
	struct ended *e;

	if (l->n >= MAX_DUE)
		return;
	e = &l->e[l->n++];
	e->matrix_id = r->matrix_id;
	e->version = r->version;
	e->baseline_id = r->baseline_id;
	snprintf(e->spec, sizeof(e->spec), "%s", r->spec);
	snprintf(e->state, sizeof(e->state), "%s", r->state);
}

/* Compare e with baseline into detail; the verdict. */
static const char *verdict_of(struct tb_schedule *sc, const struct ended *e, int64_t baseline, const struct due *p,
			      json_t *detail)
{
	struct tb_results_src src = {0};
	struct tb_error err = {0};
	json_t *cmp = NULL;
	const char *v;

	if (strcmp(e->state, "canceled") == 0 || strcmp(e->state, "interrupted") == 0) {
		json_object_set_new(detail, "message", json_sprintf("the matrix was %s", e->state));
		return "error";
	}
	if (baseline == 0)
		return "no_baseline";
	src = tb_runner_results_src(sc->sv->runner, sc->sv->store);
	if (tb_compare_json(&src, e->matrix_id, baseline, p->max_drop, p->metric, &cmp, &err) != 0) {
		json_object_set_new(detail, "message", json_string(err.message));
		return "error";
	}
	v = json_is_true(json_object_get(cmp, "pass")) ? "pass" : "fail";
	json_object_set(detail, "compared", json_object_get(cmp, "compared"));
	json_object_set(detail, "dropped", json_object_get(cmp, "dropped"));
	json_decref(cmp);
	return v;
}

static void judge_one(struct tb_schedule *sc, const struct ended *e)
{
	struct due_list pl = {.max = 1};
	struct due p = {.metric = "receiver_bps", .max_drop = 5};
	struct tb_error err = {0};
	int64_t baseline = e->baseline_id;
	const char *verdict;
	json_t *detail;
	char *text;

	/* the schedule's gate settings now (defaults when it was deleted) */
	if (tb_store_schedule_each(sc->sv->store, e->spec, 0, copy_due, &pl, &err) == 0 && pl.n == 1)
		p = pl.d[0];
	free(pl.d);
	if (baseline == 0 && tb_store_gate_latest_passing(sc->sv->store, e->spec, e->matrix_id, &baseline, &err) != 0)
		baseline = 0;
	detail = json_pack("{s:I, s:s, s:I, s:s, s:f, s:i, s:[]}", "matrix", (json_int_t)e->matrix_id, "spec", e->spec,
			   "version", (json_int_t)e->version, "metric", p.metric, "max_drop", p.max_drop, "compared", 0,
			   "dropped");
	if (detail == NULL)
		return;
	verdict = verdict_of(sc, e, baseline, &p, detail);
	json_object_set_new(detail, "verdict", json_string(verdict));
	json_object_set_new(detail, "baseline", baseline > 0 ? json_integer((json_int_t)baseline) : json_null());
	text = json_dumps(detail, JSON_COMPACT);
	if (tb_store_gate_set(sc->sv->store, e->matrix_id, baseline, verdict, text, &err) != 0)
		tb_warn("schedule", "matrix %lld: storing its gate: %s", (long long)e->matrix_id, err.message);
	free(text);
	tb_info("schedule", "%s: matrix %lld gate: %s", e->spec, (long long)e->matrix_id, verdict);
	tb_events_publish(sc->sv->events, "matrix.gate", NULL, e->matrix_id, detail);
}

static void judge_ended(struct tb_schedule *sc)
{
	static struct ended_list l; /* the ticker's thread only */
	struct tb_error err = {0};

	l.n = 0;
	if (tb_store_gate_each_ended(sc->sv->store, copy_ended, &l, &err) != 0) {
		tb_warn("schedule", "reading gates: %s", err.message);
		return;
	}
	for (int i = 0; i < l.n && !tb_ticker_stopping(&sc->ticker); i++)
		judge_one(sc, &l.e[i]);
}

static void tick(void *cls)
{
	struct tb_schedule *sc = cls;

	check_waiting(sc);
	fire_due(sc);
	judge_ended(sc);
}

int tb_schedule_new(struct tb_services *sv, struct tb_schedule **out, struct tb_error *err)
{
	struct tb_schedule *sc = calloc(1, sizeof(*sc));

	*out = NULL;
	if (sc == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	sc->sv = sv;
	*out = sc;
	return 0;
}

int tb_schedule_start(struct tb_schedule *sc, struct tb_error *err)
{
	if (tb_ticker_start(&sc->ticker, TICK_MS, tick, sc) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the schedule thread");
	return 0;
}

void tb_schedule_stop(struct tb_schedule *sc)
{
	if (sc != NULL)
		tb_ticker_stop(&sc->ticker);
}

void tb_schedule_free(struct tb_schedule *sc)
{
	if (sc == NULL)
		return;
	tb_schedule_stop(sc);
	free(sc);
}

/* ---- what the API reads and writes ---- */

static int check_body(const json_t *body, struct due *d, struct tb_error *err)
{
	static const char *const fields[] = {"cron", "baseline", "metric", "max_drop", NULL};
	const json_t *v;
	char why[200];
	struct tb_cron c;
	int rc;

	if (!json_is_object(body))
		return tb_fail(err, TB_ERR_INVALID, "",
			       "a schedule is a JSON object {cron, baseline, metric, max_drop}");
	if ((rc = tb_json_only(body, fields, err)) != 0)
		return rc;
	v = json_object_get(body, "cron");
	if (!json_is_string(v) || json_string_length(v) > TB_CRON_TEXT_MAX)
		return tb_fail(err, TB_ERR_INVALID, "cron",
			       "cron is required: a five-field pattern such as \"0 3 * * *\"");
	if (tb_cron_parse(json_string_value(v), &c, why, sizeof(why)) != 0)
		return tb_fail(err, TB_ERR_INVALID, "cron", "cron: %s", why);
	snprintf(d->cron, sizeof(d->cron), "%s", json_string_value(v));
	v = json_object_get(body, "baseline");
	if (v == NULL || (json_is_string(v) && strcmp(json_string_value(v), LATEST) == 0))
		snprintf(d->baseline, sizeof(d->baseline), "%s", LATEST);
	else if (json_is_integer(v) && json_integer_value(v) > 0)
		snprintf(d->baseline, sizeof(d->baseline), "%lld", (long long)json_integer_value(v));
	else
		return tb_fail(err, TB_ERR_INVALID, "baseline", "baseline must be \"latest-passing\" or a matrix id");
	v = json_object_get(body, "metric");
	snprintf(d->metric, sizeof(d->metric), "%s",
		 v == NULL              ? "receiver_bps"
		 : json_string_value(v) ? json_string_value(v)
					: "");
	if (!tb_compare_metric_ok(d->metric))
		return tb_fail(err, TB_ERR_INVALID, "metric",
			       "metric must be receiver_bps, sender_bps, lost_percent, retransmits or jitter_ms");
	v = json_object_get(body, "max_drop");
	d->max_drop = v == NULL ? 5.0 : json_number_value(v);
	if (v != NULL && (!json_is_number(v) || d->max_drop < 0 || d->max_drop > 100))
		return tb_fail(err, TB_ERR_INVALID, "max_drop", "max_drop must be a percentage 0..100");
	return 0;
}

int tb_schedule_put(struct tb_store *st, const char *name, const json_t *body, const char *author, json_t **out,
		    struct tb_error *err)
{
	struct due d = {0};
	json_t *spec;
	int rc;

	if ((rc = check_body(body, &d, err)) != 0)
		return rc;
	if ((rc = tb_spec_get_json(st, name, 0, &spec, err)) != 0)
		return rc;
	json_decref(spec);
	rc = tb_store_schedule_put(st,
				   &(struct tb_schedule_row){name, d.cron, d.baseline, d.metric, d.max_drop, author,
							     next_time(d.cron, tb_now()), 0, 0, NULL},
				   err);
	return rc != 0 ? rc : tb_schedule_list_json(st, name, out, err);
}

int tb_schedule_delete(struct tb_store *st, const char *name, struct tb_error *err)
{
	return tb_store_schedule_delete(st, name, err);
}

static void gate_into(void *cls, const struct tb_gate_row *r)
{
	json_t *arr = cls, *detail = r->detail != NULL ? json_loads(r->detail, 0, NULL) : NULL;

	json_array_append_new(arr,
			      json_pack("{s:I, s:s, s:I, s:o, s:o, s:o, s:o, s:s}", "matrix", (json_int_t)r->matrix_id,
					"spec", r->spec, "version", (json_int_t)r->version, "baseline",
					r->baseline_id > 0 ? json_integer((json_int_t)r->baseline_id) : json_null(),
					"verdict", r->verdict != NULL ? json_string(r->verdict) : json_null(), "detail",
					detail != NULL ? detail : json_null(), "at",
					r->at > 0 ? tb_time_json(r->at) : json_null(), "state", r->state));
}

int tb_schedule_list_json(struct tb_store *st, const char *name, json_t **out, struct tb_error *err)
{
	struct due_list all = {0}, *l = &all;
	json_t *arr = json_array();
	int rc;

	if (arr == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_schedule_each(st, name, 0, copy_due, l, err)) != 0)
		goto out;
	if (l->nomem) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	if (name != NULL && l->n == 0) {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "name", "spec %.64s has no schedule", name);
		goto out;
	}
	for (int i = 0; i < l->n; i++) {
		const struct due *d = &l->d[i];
		json_t *last = json_array(), *o;

		if (last == NULL ||
		    (rc = tb_store_gate_each_recent(st, d->name, LAST_SHOWN, gate_into, last, err)) != 0) {
			json_decref(last);
			rc = rc != 0 ? rc : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
			goto out;
		}
		/* oldest first: a row of squares, newest right */
		for (size_t a = 0, b = json_array_size(last); b > 1 && a < b - 1; a++, b--) {
			json_t *x = json_incref(json_array_get(last, a));

			json_array_set(last, a, json_array_get(last, b - 1));
			json_array_set_new(last, b - 1, x);
		}
		o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:s, s:o, s:o, s:o}", "name", d->name, "cron", d->cron,
			      "baseline", d->baseline, "metric", d->metric, "max_drop", d->max_drop, "author",
			      d->author, "next_at", d->next_at < INT64_MAX ? tb_time_json(d->next_at) : json_null(),
			      "last", last, "last_failure",
			      d->failed_at != 0
				      ? json_pack("{s:o, s:s}", "at", tb_time_json(d->failed_at), "message", d->failure)
				      : json_null());
		if (o == NULL || json_array_append_new(arr, o) != 0) {
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
			goto out;
		}
	}
	if (name != NULL) {
		*out = json_incref(json_array_get(arr, 0));
		json_decref(arr);
	} else {
		*out = arr;
	}
	free(l->d);
	return 0;
out:
	free(l->d);
	json_decref(arr);
	return rc;
}

int tb_schedule_gate_json(struct tb_store *st, int64_t matrix_id, json_t **out, struct tb_error *err)
{
	json_t *arr = json_array();
	int rc;

	if (arr == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_gate_get(st, matrix_id, gate_into, arr, err)) != 0) {
		json_decref(arr);
		return rc;
	}
	if (json_array_size(arr) == 0) {
		json_decref(arr);
		return tb_fail(err, TB_ERR_NOT_FOUND, "id", "matrix %lld was not started by a schedule",
			       (long long)matrix_id);
	}
	*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return 0;
}
