/* actions.c - long operations on one host, one holder per host: see actions.h. */
#include "actions.h"
#include "validate.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "log.h"
#include "store.h"
#include "timeutil.h"

#define MAX_HOLDS 256

struct hold {
	char host[TB_NAME_MAX];
	char holder[TB_HOLDER_MAX];
	char kind[8];
	int64_t id;
	char by[64];
	int64_t since_ms;
};

struct tb_action {
	struct tb_actions *acts;
	struct tb_action *next;
	int64_t id;
	char host[TB_NAME_MAX];
	char kind[16];
	char actor[64];
	tb_action_fn fn;
	void *cls;
	void (*cls_free)(void *);
	volatile int cancel;
	int done;
	pthread_t thread;
};

struct tb_actions {
	struct tb_store *st;
	struct tb_events *ev;
	struct tb_services *ctx; /* for the work functions; never looked into */
	struct tb_actions_hooks hooks;
	pthread_mutex_t lock;
	struct hold holds[MAX_HOLDS];
	struct tb_action *running; /* started, not yet joined */
};

int tb_actions_new(struct tb_store *st, struct tb_events *ev, struct tb_services *ctx,
		   const struct tb_actions_hooks *hooks, struct tb_actions **out, struct tb_error *err)
{
	struct tb_actions *acts = calloc(1, sizeof(*acts));
	int rc;

	*out = NULL;
	if (acts == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	acts->st = st;
	acts->ev = ev;
	acts->ctx = ctx;
	if (hooks != NULL)
		acts->hooks = *hooks;
	pthread_mutex_init(&acts->lock, NULL);
	rc = tb_store_action_interrupt(st, "testbedd stopped while this action ran; run it again", tb_now_ms(), err);
	if (rc != 0) {
		pthread_mutex_destroy(&acts->lock);
		free(acts);
		return rc;
	}
	*out = acts;
	return 0;
}

/* Join the threads of finished actions (lock held). */
static void reap(struct tb_actions *acts)
{
	struct tb_action **pp = &acts->running;

	while (*pp != NULL) {
		struct tb_action *a = *pp;

		if (a->done) {
			*pp = a->next;
			pthread_join(a->thread, NULL);
			free(a);
		} else {
			pp = &a->next;
		}
	}
}

void tb_actions_stop(struct tb_actions *acts)
{
	if (acts == NULL)
		return;
	pthread_mutex_lock(&acts->lock);
	for (struct tb_action *a = acts->running; a != NULL; a = a->next)
		a->cancel = 1;
	while (acts->running != NULL) {
		struct tb_action *a = acts->running;

		acts->running = a->next;
		pthread_mutex_unlock(&acts->lock);
		pthread_join(a->thread, NULL);
		free(a);
		pthread_mutex_lock(&acts->lock);
	}
	pthread_mutex_unlock(&acts->lock);
	pthread_mutex_destroy(&acts->lock);
	free(acts);
}

static struct hold *find_hold(struct tb_actions *acts, const char *host)
{
	for (size_t i = 0; i < MAX_HOLDS; i++)
		if (acts->holds[i].host[0] != '\0' && strcmp(acts->holds[i].host, host) == 0)
			return &acts->holds[i];
	return NULL;
}

static void used(struct tb_actions *acts, const char *host)
{
	if (acts->hooks.on_use != NULL)
		acts->hooks.on_use(acts->hooks.cls, host);
}

static void hold_info(const struct hold *h, struct tb_hold_info *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->kind, sizeof(out->kind), "%s", h->kind);
	out->id = h->id;
	snprintf(out->by, sizeof(out->by), "%s", h->by);
	snprintf(out->text, sizeof(out->text), "%s", h->holder);
	out->since_ms = h->since_ms;
}

/* Tell on_hold who holds host now (lock held, so that two changes are told
 * in the order they happened). */
static void announce(struct tb_actions *acts, const char *host)
{
	struct hold *h = find_hold(acts, host);
	struct tb_hold_info info;

	if (acts->hooks.on_hold == NULL)
		return;
	if (h != NULL)
		hold_info(h, &info);
	acts->hooks.on_hold(acts->hooks.hold_cls, host, h != NULL ? &info : NULL);
}

/* A reservation (reserve.h, through the may_hold hook) lets by hold host. */
static int may_hold(struct tb_actions *acts, const char *host, const char *by, struct tb_error *err)
{
	return acts->hooks.may_hold != NULL ? acts->hooks.may_hold(acts->hooks.may_cls, host, by, err) : 0;
}

/* Take a hold (lock held); what holds it is said by the caller afterwards. */
static int take_hold(struct tb_actions *acts, const char *host, const char *holder, struct tb_error *err)
{
	struct hold *h = find_hold(acts, host);

	if (h != NULL)
		return tb_fail(err, TB_ERR_CONFLICT, "name", "%s is busy: %s holds it; wait for it or cancel it", host,
			       h->holder);
	for (size_t i = 0; i < MAX_HOLDS; i++) {
		if (acts->holds[i].host[0] == '\0') {
			snprintf(acts->holds[i].host, sizeof(acts->holds[i].host), "%s", host);
			snprintf(acts->holds[i].holder, sizeof(acts->holds[i].holder), "%s", holder);
			acts->holds[i].since_ms = tb_now_ms();
			used(acts, host);
			return 0;
		}
	}
	return tb_fail(err, TB_ERR_CONFLICT, "name", "too many hosts are busy");
}

int tb_actions_hold_as(struct tb_actions *acts, const char *host, const char *holder, const char *kind, int64_t id,
		       const char *by, struct tb_error *err)
{
	int rc;

	pthread_mutex_lock(&acts->lock);
	if ((rc = may_hold(acts, host, by, err)) == 0)
		rc = take_hold(acts, host, holder, err);
	if (rc == 0) {
		struct hold *h = find_hold(acts, host); /* just taken: never NULL */

		if (h == NULL)
			abort();
		snprintf(h->kind, sizeof(h->kind), "%s", kind != NULL ? kind : "");
		h->id = kind != NULL ? id : 0;
		snprintf(h->by, sizeof(h->by), "%s", kind != NULL && by != NULL ? by : "");
		announce(acts, host);
	}
	pthread_mutex_unlock(&acts->lock);
	return rc;
}

int tb_actions_hold(struct tb_actions *acts, const char *host, const char *holder, struct tb_error *err)
{
	return tb_actions_hold_as(acts, host, holder, NULL, 0, NULL, err);
}

int tb_actions_held_by(struct tb_actions *acts, const char *host, struct tb_hold_info *out)
{
	struct hold *h;

	pthread_mutex_lock(&acts->lock);
	h = find_hold(acts, host);
	if (h != NULL)
		hold_info(h, out);
	pthread_mutex_unlock(&acts->lock);
	return h != NULL;
}

json_t *tb_hold_info_json(const struct tb_hold_info *h)
{
	char since[TB_TIME_MAX];

	if (h == NULL)
		return json_null();
	tb_time_format(h->since_ms / 1000, since);
	return json_pack("{s:o, s:o, s:o, s:s, s:s, s:I}", "kind", h->kind[0] ? json_string(h->kind) : json_null(),
			 "id", h->id > 0 ? json_integer(h->id) : json_null(), "by",
			 h->by[0] ? json_string(h->by) : json_null(), "holder", h->text, "since", since, "since_ms",
			 (json_int_t)h->since_ms);
}

void tb_actions_release(struct tb_actions *acts, const char *host)
{
	struct hold *h;

	pthread_mutex_lock(&acts->lock);
	h = find_hold(acts, host);
	if (h != NULL) {
		memset(h, 0, sizeof(*h));
		used(acts, host); /* the end of a use */
		announce(acts, host);
	}
	pthread_mutex_unlock(&acts->lock);
}

void tb_actions_holder(struct tb_actions *acts, const char *host, char *buf, size_t len)
{
	struct hold *h;

	pthread_mutex_lock(&acts->lock);
	h = find_hold(acts, host);
	snprintf(buf, len, "%s", h != NULL ? h->holder : "");
	pthread_mutex_unlock(&acts->lock);
}

static void publish_state(struct tb_action *a)
{
	json_t *j = NULL;

	if (tb_actions_get_json(a->acts, a->id, &j, NULL) == 0) {
		json_object_del(j, "steps");
		tb_events_publish(a->acts->ev, "action.state", a->host, 0, j);
	}
}

static void *run(void *arg)
{
	struct tb_action *a = arg;
	struct tb_actions *acts = a->acts;
	struct tb_error err = {0};
	const char *state;
	int rc;

	void *begun = NULL;
	int64_t t0;

	tb_store_action_update(acts->st, a->id, "running", tb_now_ms(), 0, NULL, NULL, NULL);
	publish_state(a);
	if (acts->hooks.on_begin != NULL)
		begun = acts->hooks.on_begin(acts->hooks.run_cls, a);
	t0 = tb_monotonic_ms();
	rc = a->fn(a, a->cls, &err);
	if (acts->hooks.on_end != NULL)
		acts->hooks.on_end(acts->hooks.run_cls, a, begun, rc, tb_monotonic_ms() - t0);
	if (rc == 0)
		state = "succeeded";
	else if (rc == TB_ERR_CANCELED || a->cancel)
		state = "canceled";
	else
		state = "failed";
	if (rc != 0 && err.message[0] == '\0')
		tb_fail(&err, rc, "", "%s", tb_err_name(rc));
	if (a->cancel && rc != 0 && rc != TB_ERR_CANCELED)
		tb_fail(&err, TB_ERR_CANCELED, "", "canceled: %s", err.message);
	/* free the host before the record says the action ended: a client that
	 * reads "succeeded" and starts the next action must not get 409 */
	tb_actions_release(acts, a->host);
	tb_store_action_update(acts->st, a->id, state, 0, tb_now_ms(), rc != 0 ? tb_err_name(err.code) : NULL,
			       rc != 0 ? err.message : NULL, NULL);
	tb_info("actions", "action %lld (%s of host %s, by %s): %s%s%s", (long long)a->id, a->kind, a->host, a->actor,
		state, rc != 0 ? ": " : "", rc != 0 ? err.message : "");
	publish_state(a);
	if (a->cls_free != NULL)
		a->cls_free(a->cls);
	pthread_mutex_lock(&acts->lock);
	a->done = 1;
	pthread_mutex_unlock(&acts->lock);
	return NULL;
}

int tb_actions_start(struct tb_actions *acts, const char *host, const char *kind, json_t *params, const char *actor,
		     tb_action_fn fn, void *cls, void (*cls_free)(void *), int64_t *id, struct tb_error *err)
{
	struct tb_action *a = calloc(1, sizeof(*a));
	struct tb_action_row row = {0};
	char *text = json_dumps(params, JSON_COMPACT), holder[TB_HOLDER_MAX];
	int rc;

	json_decref(params);
	if (a == NULL || text == NULL) {
		free(a);
		free(text);
		if (cls_free != NULL)
			cls_free(cls);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	a->acts = acts;
	snprintf(a->host, sizeof(a->host), "%s", host);
	snprintf(a->kind, sizeof(a->kind), "%s", kind);
	snprintf(a->actor, sizeof(a->actor), "%s", actor);
	a->fn = fn;
	a->cls = cls;
	a->cls_free = cls_free;
	row.host = host;
	row.kind = kind;
	row.params = text;
	row.state = "queued";
	row.actor = actor;
	row.created_ms = tb_now_ms();
	pthread_mutex_lock(&acts->lock);
	reap(acts);
	/* the holder's name needs the id: hold first under a placeholder */
	if ((rc = may_hold(acts, host, actor, err)) == 0)
		rc = take_hold(acts, host, "an action that is starting", err);
	if (rc == 0 && (rc = tb_store_action_insert(acts->st, &row, &a->id, err)) != 0) {
		struct hold *h = find_hold(acts, host);

		if (h != NULL)
			memset(h, 0, sizeof(*h));
	}
	if (rc == 0) {
		struct hold *h = find_hold(acts, host); /* just taken: never NULL */

		if (h == NULL)
			abort();
		snprintf(holder, sizeof(holder), "action %lld (%s %s) by %s", (long long)a->id, kind, text, actor);
		snprintf(h->holder, sizeof(h->holder), "%s", holder);
		snprintf(h->kind, sizeof(h->kind), "action");
		h->id = a->id;
		snprintf(h->by, sizeof(h->by), "%s", actor);
		announce(acts, host);
		if (pthread_create(&a->thread, NULL, run, a) != 0) {
			memset(h, 0, sizeof(struct hold));
			announce(acts, host);
			tb_store_action_update(acts->st, a->id, "failed", 0, tb_now_ms(), "internal_error",
					       "cannot start a thread", NULL);
			rc = tb_fail(err, TB_ERR_INTERNAL, "", "cannot start a thread for the action");
		} else {
			a->next = acts->running;
			acts->running = a;
			*id = a->id;
		}
	}
	pthread_mutex_unlock(&acts->lock);
	free(text);
	if (rc != 0) {
		if (cls_free != NULL)
			cls_free(cls);
		free(a);
	}
	return rc;
}

void tb_action_step(void *cls, const char *what, const char *command, int exit_status, const char *output)
{
	struct tb_action *a = cls;
	struct tb_step_row row = {
		.action_id = a->id,
		.at_ms = tb_now_ms(),
		.what = what,
		.command = command,
		.exit_status = exit_status,
		.output = output,
	};
	char at[TB_TIME_MAX];
	int64_t sid = 0;

	tb_store_step_insert(a->acts->st, &row, &sid, NULL);
	tb_time_format(row.at_ms / 1000, at);
	tb_events_publish(a->acts->ev, "action.step", a->host, 0,
			  json_pack("{s:I, s:I, s:s, s:I, s:s, s:o, s:o, s:o}", "action", (json_int_t)a->id, "step",
				    (json_int_t)sid, "at", at, "at_ms", (json_int_t)row.at_ms, "what", what, "command",
				    command != NULL ? json_string(command) : json_null(), "exit_status",
				    exit_status >= 0 ? json_integer(exit_status) : json_null(), "output",
				    output != NULL ? json_string(output) : json_null()));
}

void tb_action_note(struct tb_action *a, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tb_action_step(a, what, NULL, -1, NULL);
}

int tb_action_canceled(const struct tb_action *a)
{
	return a->cancel != 0;
}

const volatile int *tb_action_cancel_flag(const struct tb_action *a)
{
	return &a->cancel;
}

int64_t tb_action_id(const struct tb_action *a)
{
	return a->id;
}

const char *tb_action_host(const struct tb_action *a)
{
	return a->host;
}

const char *tb_action_kind(const struct tb_action *a)
{
	return a->kind;
}

struct tb_services *tb_action_services(const struct tb_action *a)
{
	return a->acts->ctx;
}

int tb_actions_cancel(struct tb_actions *acts, int64_t id, struct tb_error *err)
{
	int found = 0;
	json_t *j = NULL;

	pthread_mutex_lock(&acts->lock);
	for (struct tb_action *a = acts->running; a != NULL; a = a->next) {
		if (a->id == id && !a->done) {
			a->cancel = 1;
			found = 1;
		}
	}
	pthread_mutex_unlock(&acts->lock);
	if (found)
		return 0;
	if (tb_actions_get_json(acts, id, &j, err) != 0)
		return err != NULL ? err->code : TB_ERR_NOT_FOUND;
	tb_fail(err, TB_ERR_CONFLICT, "id", "action %lld has already ended (%s)", (long long)id,
		json_string_value(json_object_get(j, "state")));
	json_decref(j);
	return TB_ERR_CONFLICT;
}

static json_t *ms_or_null(int64_t ms)
{
	return ms > 0 ? json_integer((json_int_t)ms) : json_null();
}

/* created_at, started_at, finished_at stay whole seconds (ISO 8601); the
 * *_ms members say the same to the millisecond, duration_ms from start to end. */
static json_t *action_json(const struct tb_action_row *r)
{
	json_t *params = json_loads(r->params, 0, NULL), *j;

	j = json_pack("{s:I, s:s, s:s, s:o, s:s, s:s, s:o, s:o, s:o, s:o, s:[]}", "id", (json_int_t)r->id, "host",
		      r->host, "kind", r->kind, "params", params != NULL ? params : json_object(), "state", r->state,
		      "actor", r->actor, "created_at", tb_time_json(r->created_ms / 1000), "started_at",
		      tb_time_json(r->started_ms / 1000), "finished_at", tb_time_json(r->finished_ms / 1000), "error",
		      r->error_code != NULL ? json_pack("{s:s, s:s}", "code", r->error_code, "message",
							r->error_message != NULL ? r->error_message : "")
					    : json_null(),
		      "steps");
	if (j != NULL) {
		json_object_set_new(j, "created_ms", ms_or_null(r->created_ms));
		json_object_set_new(j, "started_ms", ms_or_null(r->started_ms));
		json_object_set_new(j, "finished_ms", ms_or_null(r->finished_ms));
		json_object_set_new(j, "duration_ms",
				    r->started_ms > 0 && r->finished_ms >= r->started_ms
					    ? json_integer((json_int_t)(r->finished_ms - r->started_ms))
					    : json_null());
	}
	return j;
}

/* Each step's duration_ms: until the next step, the last one until the
 * action's end (null while it runs). */
static void step_durations(json_t *action)
{
	json_t *steps = json_object_get(action, "steps"), *fin = json_object_get(action, "finished_ms");
	size_t n = json_array_size(steps);

	for (size_t i = 0; i < n; i++) {
		json_t *st = json_array_get(steps, i);
		json_int_t at = json_integer_value(json_object_get(st, "at_ms"));
		json_t *next = i + 1 < n ? json_object_get(json_array_get(steps, i + 1), "at_ms") : fin;

		json_object_set_new(st, "duration_ms",
				    json_is_integer(next) && json_integer_value(next) >= at
					    ? json_integer(json_integer_value(next) - at)
					    : json_null());
	}
}

static void take_action(void *cls, const struct tb_action_row *r)
{
	*(json_t **)cls = action_json(r);
}

static void add_step(void *cls, const struct tb_step_row *r)
{
	char at[TB_TIME_MAX];

	tb_time_format(r->at_ms / 1000, at);
	json_array_append_new(cls, json_pack("{s:I, s:s, s:I, s:s, s:o, s:o, s:o}", "id", (json_int_t)r->id, "at", at,
					     "at_ms", (json_int_t)r->at_ms, "what", r->what, "command",
					     r->command != NULL ? json_string(r->command) : json_null(), "exit_status",
					     r->exit_status >= 0 ? json_integer(r->exit_status) : json_null(), "output",
					     r->output != NULL ? json_string(r->output) : json_null()));
}

int tb_actions_get_json(struct tb_actions *acts, int64_t id, json_t **out, struct tb_error *err)
{
	json_t *j = NULL;
	int rc;

	*out = NULL;
	if ((rc = tb_store_action_get(acts->st, id, take_action, &j, err)) != 0)
		return rc;
	if (j == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	tb_store_step_each(acts->st, id, add_step, json_object_get(j, "steps"), NULL);
	step_durations(j);
	*out = j;
	return 0;
}

static void add_action(void *cls, const struct tb_action_row *r)
{
	json_t *j = action_json(r);

	json_object_del(j, "steps");
	json_array_append_new(cls, j);
}

int tb_actions_list_json(struct tb_actions *acts, const char *host, int limit, json_t **out, struct tb_error *err)
{
	json_t *list = json_array();
	int rc;

	*out = NULL;
	if ((rc = tb_store_action_list(acts->st, host, limit, add_action, list, err)) != 0) {
		json_decref(list);
		return rc;
	}
	*out = list;
	return 0;
}
