/* notify_worker.c - the notifier's thread: read the bus from where it
 * stopped, queue a message per matching rule in the store's outbox, send
 * each rule's oldest pending message, retry with jittered backoff, mark a
 * rule that keeps failing.  See notify.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "events.h"
#include "log.h"
#include "notify.h"
#include "notify_internal.h"
#include "outbuf.h"
#include "services.h"
#include "store_notify.h"
#include "ticker.h"
#include "timeutil.h"
#include "crypto.h"
#include "validate.h"

#define TICK_MS 1000
#define MAX_HOSTS 512
#define SENDS_PER_TICK 64

struct seen_host {
	char name[TB_NAME_MAX];
	char reach[8];
};

struct rules {
	struct nf_rule *v;
	size_t n;
};

/* The sink kinds of GET /metrics: the webhook templates and email. */
static const char *const kinds[] = {"json", "ntfy", "slack", "matrix", "email"};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* What the worker counts for GET /metrics (guarded by stats_mu). */
struct stats {
	uint64_t sent[NKINDS], failed[NKINDS], given_up[NKINDS];
	int64_t oldest_pending; /* created_at (unix s) of the oldest pending message; 0: none */
};

struct tb_notify {
	struct tb_services *sv;
	struct tb_ticker ticker;
	struct tb_sub *sub;
	int64_t cursor; /* the last event read */
	char *acc;      /* a record of the bus not complete yet */
	size_t acc_len, acc_cap;
	struct seen_host hosts[MAX_HOSTS];
	size_t nhosts;
	struct rules rules;
	atomic_int rules_stale; /* a rule changed (tb_notify_kick): read them again */
	char before[8];         /* swap_reach's answer */
	char secrets_dir[1024];
	long backoff_ms;
	unsigned long ticks;
	pthread_mutex_t stats_mu;
	struct stats stats;
};

/* A sink's kind: its index in kinds (an unknown template counts as json). */
static size_t kind_of(const json_t *sink)
{
	const char *t = json_string_value(json_object_get(sink, "type"));

	if (t != NULL && strcmp(t, "email") == 0)
		return NKINDS - 1;
	t = json_string_value(json_object_get(sink, "template"));
	for (size_t i = 0; t != NULL && i < NKINDS - 1; i++)
		if (strcmp(kinds[i], t) == 0)
			return i;
	return 0;
}

/* ---- rules in memory ---- */

static void rules_free(struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		json_decref(rs->v[i].spec);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

static void add_rule(void *cls, const struct tb_notify_rule_row *r)
{
	struct rules *rs = cls;
	struct nf_rule *grown = realloc(rs->v, (rs->n + 1) * sizeof(*grown)), *x;
	json_t *spec = json_loads(r->spec, 0, NULL), *t;
	size_t i;

	if (grown == NULL || spec == NULL) {
		rs->v = grown != NULL ? grown : rs->v;
		json_decref(spec);
		return;
	}
	rs->v = grown;
	x = &rs->v[rs->n++];
	memset(x, 0, sizeof(*x));
	x->id = r->id;
	snprintf(x->name, sizeof(x->name), "%s", r->name);
	x->enabled = json_is_true(json_object_get(spec, "enabled"));
	json_array_foreach(json_object_get(spec, "triggers"), i, t) x->triggers |= nf_trigger_bit(json_string_value(t));
	x->spec = spec;
}

static int rules_load(struct tb_notify *n)
{
	struct tb_error e = {0};

	rules_free(&n->rules);
	if (tb_store_notify_rule_each(n->sv->store, 0, add_rule, &n->rules, &e) != 0) {
		tb_warn("notify", "cannot read the rules: %s", e.message);
		return -1;
	}
	return 0;
}

static const struct nf_rule *rule_by_id(struct tb_notify *n, int64_t id)
{
	for (size_t i = 0; i < n->rules.n; i++)
		if (n->rules.v[i].id == id)
			return &n->rules.v[i];
	return NULL;
}

/* ---- events ---- */

static const char *swap_reach(void *cls, const char *host, const char *now)
{
	static const char none[] = "";
	struct tb_notify *n = cls;
	size_t i;

	for (i = 0; i < n->nhosts; i++)
		if (strcmp(n->hosts[i].name, host) == 0)
			break;
	if (i == n->nhosts) {
		if (n->nhosts == MAX_HOSTS || strlen(host) >= TB_NAME_MAX)
			return none;
		snprintf(n->hosts[n->nhosts].name, TB_NAME_MAX, "%s", host);
		n->hosts[n->nhosts++].reach[0] = '\0';
	}
	snprintf(n->before, sizeof(n->before), "%s", n->hosts[i].reach);
	snprintf(n->hosts[i].reach, sizeof(n->hosts[i].reach), "%s", now);
	return n->before;
}

static int held(void *cls, const char *host)
{
	struct tb_notify *n = cls;
	char buf[TB_HOLDER_MAX];

	tb_actions_holder(n->sv->actions, host, buf, sizeof(buf));
	return buf[0] != '\0';
}

/* One event off the bus: a message for each rule that wants it. */
static void on_event(struct tb_notify *n, const char *json)
{
	struct nf_context ctx = {swap_reach, held, n};
	json_t *ev = json_loads(json, 0, NULL);
	unsigned bits;

	if (ev == NULL)
		return;
	bits = nf_classify(ev, &ctx);
	for (size_t i = 0; bits != 0 && i < n->rules.n; i++) {
		const struct nf_rule *r = &n->rules.v[i];
		struct tb_error e = {0};
		char *msg;

		if (!nf_rule_wants(r, ev, bits))
			continue;
		msg = nf_message(r, bits, ev, NULL, n->sv->cfg->public_url);
		if (msg == NULL ||
		    tb_store_notify_delivery_add(n->sv->store, r->id, json_integer_value(json_object_get(ev, "id")),
						 nf_first_trigger(bits & r->triggers), msg, NULL, &e) != 0)
			tb_warn("notify", "rule %lld: cannot queue a message: %s", (long long)r->id,
				msg == NULL ? "out of memory" : e.message);
		free(msg);
	}
	json_decref(ev);
}

/* Take the complete records ("id: N\nevent: T\ndata: J\n\n") out of acc. */
static void drain_records(struct tb_notify *n)
{
	size_t start = 0;
	char *end;

	while (start < n->acc_len && (end = strstr(n->acc + start, "\n\n")) != NULL) {
		char *rec = n->acc + start, *data;
		long long id = -1;

		*end = '\0';
		if (strncmp(rec, "id: ", 4) == 0)
			id = strtoll(rec + 4, NULL, 10);
		data = strstr(rec, "\ndata: ");
		/* "stream" and "reset" records carry no event */
		if (id > n->cursor && data != NULL && strstr(rec, "\nevent: stream\n") == NULL) {
			on_event(n, data + 7);
			n->cursor = id;
		}
		start = (size_t)(end - n->acc) + 2;
	}
	memmove(n->acc, n->acc + start, n->acc_len - start);
	n->acc_len -= start;
	n->acc[n->acc_len] = '\0';
}

static void wake(void *cls)
{
	tb_ticker_kick(cls);
}

static void read_bus(struct tb_notify *n)
{
	static const char types[] =
		"matrix.state,run.state,matrix.gate,schedule.failed,host.state,host.bmc,action.state";
	struct tb_events_filter f = {.types = types};
	int64_t before = n->cursor;
	struct tb_error e = {0};
	enum tb_sub_status s;
	size_t got;

	if (n->sub == NULL && tb_events_subscribe(n->sv->events, n->cursor, &f, wake, &n->ticker, &n->sub, &e) != 0) {
		n->sub = NULL;
		return;
	}
	for (int i = 0; i < 256 && !tb_ticker_stopping(&n->ticker); i++) {
		if (n->acc_cap - n->acc_len < 65536 + 1) {
			char *g = realloc(n->acc, n->acc_cap + 65536 + 1);

			if (g == NULL)
				break;
			n->acc = g;
			n->acc_cap += 65536 + 1;
		}
		s = tb_sub_next(n->sub, n->acc + n->acc_len, n->acc_cap - n->acc_len - 1, &got);
		if (s != TB_SUB_DATA) {
			if (s == TB_SUB_CLOSED) { /* dropped or its hour is up: resume from the cursor next time */
				tb_events_unsubscribe(n->sub);
				n->sub = NULL;
				n->acc_len = 0;
			}
			break;
		}
		n->acc_len += got;
		n->acc[n->acc_len] = '\0';
		drain_records(n);
	}
	if (n->cursor != before && tb_store_notify_cursor_set(n->sv->store, n->cursor, &e) != 0)
		tb_warn("notify", "cannot keep the bus position: %s", e.message);
}

/* ---- sending ---- */

struct head {
	int64_t id, rule_id;
	int attempts;
	int64_t next_at_ms, created_at;
	char *message;
};

struct heads {
	struct head v[64];
	size_t n;
};

static void add_head(void *cls, const struct tb_notify_delivery_row *r)
{
	struct heads *h = cls;

	if (h->n == sizeof(h->v) / sizeof(h->v[0]))
		return;
	h->v[h->n] = (struct head){r->id, r->rule_id, r->attempts, r->next_at_ms, r->created_at, strdup(r->message)};
	if (h->v[h->n].message != NULL)
		h->n++;
}

/* The wait before attempt number attempts+1: base * 2^(attempts-1),
 * capped, of which a random half (jitter: receivers that came back are not
 * hit by every sender at once). */
static int64_t backoff(const struct tb_notify *n, int attempts)
{
	int64_t d = n->backoff_ms;
	uint32_t r = 0;

	for (int i = 1; i < attempts && d < TB_NOTIFY_BACKOFF_MAX_MS; i++)
		d *= 2;
	if (d > TB_NOTIFY_BACKOFF_MAX_MS)
		d = TB_NOTIFY_BACKOFF_MAX_MS;
	tb_random_bytes(&r, sizeof(r));
	return d / 2 + (int64_t)(r % (uint32_t)(d / 2 + 1));
}

static int stopping(void *cls)
{
	return tb_ticker_stopping(cls);
}

static void send_one(struct tb_notify *n, const struct nf_rule *rule, const struct head *h)
{
	struct nf_request rq;
	struct tb_error e = {0};
	int status = 0, attempts = h->attempts + 1, rc;
	const json_t *sink = json_object_get(rule->spec, "sink");
	const char *state;

	if (json_string_value(json_object_get(sink, "type")) != NULL &&
	    strcmp(json_string_value(json_object_get(sink, "type")), "email") == 0) {
		rc = nf_email_send(sink, n->secrets_dir, h->id, h->message, stopping, &n->ticker, &status, &e);
	} else {
		rc = nf_request_build(sink, n->secrets_dir, h->id, h->message, &rq, &e);
		if (rc == 0)
			rc = nf_http_send(&rq, stopping, &n->ticker, &status, &e);
		nf_request_free(&rq);
	}
	if (rc == TB_ERR_CANCELED)
		return; /* stopping: the same attempt again after the restart */
	state = rc == 0 ? "delivered" : attempts >= TB_NOTIFY_MAX_ATTEMPTS ? "failed" : "pending";
	pthread_mutex_lock(&n->stats_mu);
	if (rc == 0)
		n->stats.sent[kind_of(sink)]++;
	else
		n->stats.failed[kind_of(sink)]++;
	if (strcmp(state, "failed") == 0)
		n->stats.given_up[kind_of(sink)]++;
	pthread_mutex_unlock(&n->stats_mu);
	if (tb_store_notify_delivery_attempt(n->sv->store, h->id, state, attempts,
					     rc == 0 ? 0 : tb_now_ms() + backoff(n, attempts), status,
					     rc == 0 ? NULL : e.message, &e) != 0) {
		tb_warn("notify", "cannot record a delivery: %s", e.message);
		return;
	}
	if (rc == 0) {
		tb_debug("notify", "rule %lld: message %lld delivered", (long long)rule->id, (long long)h->id);
		return;
	}
	/* the rule's failing mark follows from the outbox (store_notify.h) */
	tb_info("notify", "rule %lld: message %lld, attempt %d: %s%s", (long long)rule->id, (long long)h->id, attempts,
		e.message, strcmp(state, "failed") == 0 ? " (given up)" : "");
}

/* Send each rule's oldest pending message that is due, again and again
 * while they go through. */
static void send_due(struct tb_notify *n)
{
	int sent = 0, progress = 1;

	while (progress && sent < SENDS_PER_TICK && !tb_ticker_stopping(&n->ticker)) {
		struct heads hs = {.n = 0};
		struct tb_error e = {0};
		int64_t oldest = 0;

		progress = 0;
		if (tb_store_notify_delivery_heads(n->sv->store, add_head, &hs, &e) != 0)
			break;
		/* each rule's head is its oldest: the oldest of them is the outbox's */
		for (size_t i = 0; i < hs.n; i++)
			if (oldest == 0 || hs.v[i].created_at < oldest)
				oldest = hs.v[i].created_at;
		pthread_mutex_lock(&n->stats_mu);
		n->stats.oldest_pending = oldest;
		pthread_mutex_unlock(&n->stats_mu);
		for (size_t i = 0; i < hs.n; i++) {
			const struct nf_rule *r = rule_by_id(n, hs.v[i].rule_id);

			if (r != NULL && hs.v[i].next_at_ms <= tb_now_ms() && !tb_ticker_stopping(&n->ticker)) {
				send_one(n, r, &hs.v[i]);
				sent++;
				progress = 1;
			}
			free(hs.v[i].message);
		}
	}
}

static void tick(void *cls)
{
	struct tb_notify *n = cls;

	/* the rules change only through the API, which kicks: read once per change */
	if (atomic_exchange(&n->rules_stale, 0) && rules_load(n) != 0) {
		atomic_store(&n->rules_stale, 1);
		return;
	}
	read_bus(n);
	send_due(n);
	if (++n->ticks % 600 == 1)
		tb_store_notify_delivery_prune(n->sv->store, TB_NOTIFY_KEEP, NULL);
}

/* ---- life ---- */

int tb_notify_new(struct tb_services *sv, struct tb_notify **out, struct tb_error *err)
{
	struct tb_notify *n = calloc(1, sizeof(*n));
	const char *v = getenv("TESTBEDD_TEST_NOTIFY_BACKOFF_MS");
	int64_t ms;

	*out = NULL;
	if (n == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	n->sv = sv;
	pthread_mutex_init(&n->stats_mu, NULL);
	atomic_init(&n->rules_stale, 1);
	tb_notify_secrets_dir(sv->cfg->state_dir, n->secrets_dir, sizeof(n->secrets_dir));
	n->backoff_ms = TB_NOTIFY_BACKOFF_MS;
	if (v != NULL) {
		if (tb_parse_id(v, 1, &ms) != 0 || ms > 60000) {
			pthread_mutex_destroy(&n->stats_mu);
			free(n);
			return tb_fail(err, TB_ERR_INVALID, "TESTBEDD_TEST_NOTIFY_BACKOFF_MS",
				       "TESTBEDD_TEST_NOTIFY_BACKOFF_MS must be 1..60000, got \"%.32s\"", v);
		}
		n->backoff_ms = (long)ms;
		tb_warn("notify",
			"the first retry of a notification waits %ld ms "
			"(TESTBEDD_TEST_NOTIFY_BACKOFF_MS): for tests only",
			n->backoff_ms);
	}
	*out = n;
	return 0;
}

int tb_notify_start(struct tb_notify *n, struct tb_error *err)
{
	int found = 0;
	int rc;

	if ((rc = tb_store_notify_cursor_get(n->sv->store, &n->cursor, &found, err)) != 0)
		return rc;
	if (!found) {
		/* the first start: from now on, not the history */
		n->cursor = tb_events_last_id(n->sv->events);
		if ((rc = tb_store_notify_cursor_set(n->sv->store, n->cursor, err)) != 0)
			return rc;
	}
	/* what waited for a retry when testbedd stopped goes out now */
	if ((rc = tb_store_notify_delivery_due_now(n->sv->store, tb_now_ms(), err)) != 0)
		return rc;
	if (tb_ticker_start(&n->ticker, TICK_MS, tick, n) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the notification thread");
	return 0;
}

void tb_notify_stop(struct tb_notify *n)
{
	if (n == NULL)
		return;
	tb_ticker_stop(&n->ticker);
	if (n->sub != NULL)
		tb_events_unsubscribe(n->sub);
	n->sub = NULL;
}

void tb_notify_free(struct tb_notify *n)
{
	if (n == NULL)
		return;
	rules_free(&n->rules);
	free(n->acc);
	pthread_mutex_destroy(&n->stats_mu);
	free(n);
}

/* ---- GET /metrics ---- */

static void count_pending(void *cls, const struct tb_notify_rule_row *r)
{
	int64_t *pending = cls;
	json_t *spec;

	if (r->pending == 0)
		return;
	spec = json_loads(r->spec, 0, NULL);
	pending[kind_of(json_object_get(spec, "sink"))] += r->pending;
	json_decref(spec);
}

void tb_notify_metrics(struct tb_notify *n, struct tb_outbuf *out)
{
	int64_t pending[NKINDS] = {0}, now = tb_now();
	struct tb_error e = {0};
	struct stats st;
	int have_pending;

	if (n == NULL)
		return;
	pthread_mutex_lock(&n->stats_mu);
	st = n->stats;
	pthread_mutex_unlock(&n->stats_mu);
	/* one query: the rules with their pending counts (store_notify.h) */
	have_pending = tb_store_notify_rule_each(n->sv->store, 0, count_pending, pending, &e) == 0;
	tb_outbuf_printf(out, "# HELP testbedd_notify_sent_total Notifications delivered since start, by sink.\n"
			      "# TYPE testbedd_notify_sent_total counter\n");
	for (size_t i = 0; i < NKINDS; i++)
		tb_outbuf_printf(out, "testbedd_notify_sent_total{sink=\"%s\"} %llu\n", kinds[i],
				 (unsigned long long)st.sent[i]);
	tb_outbuf_printf(out, "# HELP testbedd_notify_failed_attempts_total Failed delivery attempts since start "
			      "(each retry counts), by sink.\n# TYPE testbedd_notify_failed_attempts_total counter\n");
	for (size_t i = 0; i < NKINDS; i++)
		tb_outbuf_printf(out, "testbedd_notify_failed_attempts_total{sink=\"%s\"} %llu\n", kinds[i],
				 (unsigned long long)st.failed[i]);
	tb_outbuf_printf(out, "# HELP testbedd_notify_given_up_total Notifications given up on after their last "
			      "attempt since start, by sink.\n# TYPE testbedd_notify_given_up_total counter\n");
	for (size_t i = 0; i < NKINDS; i++)
		tb_outbuf_printf(out, "testbedd_notify_given_up_total{sink=\"%s\"} %llu\n", kinds[i],
				 (unsigned long long)st.given_up[i]);
	if (have_pending) {
		tb_outbuf_printf(out, "# HELP testbedd_notify_pending Notifications in the outbox not sent yet, by "
				      "sink.\n# TYPE testbedd_notify_pending gauge\n");
		for (size_t i = 0; i < NKINDS; i++)
			tb_outbuf_printf(out, "testbedd_notify_pending{sink=\"%s\"} %lld\n", kinds[i],
					 (long long)pending[i]);
	}
	tb_outbuf_printf(out,
			 "# HELP testbedd_notify_oldest_pending_age_seconds Age of the oldest notification not sent "
			 "yet (0: none), as of the notifier's last round (every second).\n"
			 "# TYPE testbedd_notify_oldest_pending_age_seconds gauge\n"
			 "testbedd_notify_oldest_pending_age_seconds %lld\n",
			 (long long)(st.oldest_pending > 0 && now > st.oldest_pending ? now - st.oldest_pending : 0));
}

void tb_notify_kick(struct tb_notify *n)
{
	if (n == NULL)
		return;
	atomic_store(&n->rules_stale, 1);
	tb_ticker_kick(&n->ticker);
}

int tb_notify_test(struct tb_notify *n, int64_t id, const char *actor, int64_t *delivery, struct tb_error *err)
{
	struct rules rules = {0};
	char *msg;
	int rc;

	/* a private copy of the rule: the worker's list is its own */
	if ((rc = tb_store_notify_rule_each(n->sv->store, id, add_rule, &rules, err)) != 0)
		return rc;
	if (rules.n == 0)
		return tb_fail(err, TB_ERR_NOT_FOUND, "id", "no notification rule %lld", (long long)id);
	msg = nf_message(&rules.v[0], 0, NULL, actor, n->sv->cfg->public_url);
	rc = msg != NULL ? tb_store_notify_delivery_add(n->sv->store, id, 0, "test", msg, delivery, err)
			 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	free(msg);
	rules_free(&rules);
	if (rc == 0)
		tb_notify_kick(n);
	return rc;
}
