/*
 * test_actions.c - actions built from the services they use and nothing
 * else: a real SQLite store in a temporary directory, the event bus on it,
 * and a use hook (idle power-off's, in the daemon).  Holds, the conflict
 * naming the holder, the hook on take and let go, an action's steps and end
 * state, cancellation, and the interrupted mark of a restart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "actions.h"
#include "events.h"
#include "store.h"
#include "timeutil.h"
#include "tmpstore.h"

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

struct fixture {
	struct tb_test_store ts;
	struct tb_events *ev;
	struct tb_actions *acts;
	char uses[16][32];
	int nuses;
	char holds[16][200]; /* "host kind id by" told by on_hold, "host -" when let go */
	int nholds;
};

static void on_use(void *cls, const char *host)
{
	struct fixture *f = cls;

	if (f->nuses < 16)
		snprintf(f->uses[f->nuses++], sizeof(f->uses[0]), "%s", host);
}

static void on_hold(void *cls, const char *host, const struct tb_hold_info *h)
{
	struct fixture *f = cls;

	if (f->nholds < 16 && h == NULL)
		snprintf(f->holds[f->nholds++], sizeof(f->holds[0]), "%s -", host);
	else if (f->nholds < 16)
		snprintf(f->holds[f->nholds++], sizeof(f->holds[0]), "%s %s %lld %s", host, h->kind, (long long)h->id,
			 h->by);
}

/* The bus and the actions on the store (open). */
static int open_all(struct fixture *f)
{
	struct tb_error err = {0};

	if (tb_events_new(f->ts.st, &f->ev, &err) != 0 ||
	    tb_actions_new(f->ts.st, f->ev, NULL,
			   &(struct tb_actions_hooks){.on_use = on_use, .cls = f, .on_hold = on_hold, .hold_cls = f},
			   &f->acts, &err) != 0) {
		fprintf(stderr, "set-up: %s\n", err.message);
		return -1;
	}
	return 0;
}

static void close_all(struct fixture *f)
{
	tb_actions_stop(f->acts);
	tb_events_close(f->ev);
	tb_events_free(f->ev);
	tb_test_store_close(&f->ts);
	f->acts = NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	tb_test_store_open(&f->ts, "acts");
	*state = f;
	return open_all(f);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->acts != NULL)
		close_all(f);
	tb_test_store_remove(&f->ts);
	free(f);
	return 0;
}

static void test_holds_and_the_use_hook(void **state)
{
	struct fixture *f = *state;
	struct tb_error err = {0};
	char holder[160];

	assert_int_equal(tb_actions_hold(f->acts, "left", "matrix 7", &err), 0);
	assert_int_equal(f->nuses, 1);
	assert_string_equal(f->uses[0], "left");
	assert_int_equal(tb_actions_hold(f->acts, "left", "matrix 8", &err), TB_ERR_CONFLICT);
	assert_non_null(strstr(err.message, "matrix 7 holds it"));
	tb_actions_holder(f->acts, "left", holder, sizeof(holder));
	assert_string_equal(holder, "matrix 7");
	assert_int_equal(tb_actions_hold(f->acts, "right", "matrix 8", &err), 0);
	tb_actions_release(f->acts, "left");
	assert_int_equal(f->nuses, 3);
	assert_string_equal(f->uses[2], "left");
	tb_actions_holder(f->acts, "left", holder, sizeof(holder));
	assert_string_equal(holder, "");
	tb_actions_release(f->acts, "left"); /* not held: no use ends */
	assert_int_equal(f->nuses, 3);
	tb_actions_release(f->acts, "right");
}

struct work {
	int steps;
	int wait_for_cancel;
	int rc;
};

static int work_fn(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct work *w = cls;

	for (int i = 0; i < w->steps; i++)
		tb_action_step(a, "a step", "echo 'hi'", 0, "hi\n");
	if (w->wait_for_cancel) {
		for (int i = 0; i < 500 && !tb_action_canceled(a); i++)
			nap_ms(10);
		return tb_fail(err, TB_ERR_CANCELED, "", "stopped on request");
	}
	return w->rc != 0 ? tb_fail(err, w->rc, "", "the work failed on purpose") : 0;
}

/* 1 when j's text holds words. */
static int has_text(const json_t *j, const char *words)
{
	char *text = json_dumps(j, 0);
	int found = text != NULL && strstr(text, words) != NULL;

	free(text);
	return found;
}

/* Poll the stored state until it is not queued/running (bounded). */
static json_t *wait_end(struct tb_actions *acts, int64_t id)
{
	for (int i = 0; i < 500; i++) {
		json_t *j = NULL;
		const char *s;

		assert_int_equal(tb_actions_get_json(acts, id, &j, NULL), 0);
		s = json_string_value(json_object_get(j, "state"));
		if (s != NULL && strcmp(s, "queued") != 0 && strcmp(s, "running") != 0)
			return j;
		json_decref(j);
		nap_ms(10);
	}
	fail_msg("action %lld did not end in 5 s", (long long)id);
	return NULL;
}

/* The times in ms: created <= started <= each step <= finished, the
 * seconds fields the same instants, each step's duration up to the next
 * step (the last to the end), the action's its start to end. */
static void check_ms(const json_t *j)
{
	json_int_t created = json_integer_value(json_object_get(j, "created_ms"));
	json_int_t started = json_integer_value(json_object_get(j, "started_ms"));
	json_int_t finished = json_integer_value(json_object_get(j, "finished_ms"));
	const json_t *steps = json_object_get(j, "steps");
	json_int_t sum = 0;
	char at[32];

	assert_true(created > 1700000000000LL && created <= started && started <= finished);
	assert_int_equal(json_integer_value(json_object_get(j, "duration_ms")), finished - started);
	tb_time_format(finished / 1000, at);
	assert_string_equal(json_string_value(json_object_get(j, "finished_at")), at);
	for (size_t i = 0; i < json_array_size(steps); i++) {
		const json_t *st = json_array_get(steps, i);
		json_int_t t = json_integer_value(json_object_get(st, "at_ms"));
		json_int_t next = i + 1 < json_array_size(steps)
					  ? json_integer_value(json_object_get(json_array_get(steps, i + 1), "at_ms"))
					  : finished;

		assert_true(json_is_integer(json_object_get(st, "duration_ms")));
		assert_int_equal(json_integer_value(json_object_get(st, "duration_ms")), next - t);
		sum += next - t;
	}
	if (json_array_size(steps) > 0)
		assert_true(sum <= finished - started);
}

static void test_an_action_runs_and_ends(void **state)
{
	struct fixture *f = *state;
	struct work ok = {.steps = 2}, bad = {.rc = TB_ERR_REMOTE};
	struct tb_error err = {0};
	int64_t id = 0, id2 = 0;
	json_t *j;

	assert_int_equal(tb_actions_start(f->acts, "left", "power", json_pack("{s:s}", "action", "on"), "alice",
					  work_fn, &ok, NULL, &id, &err),
			 0);
	j = wait_end(f->acts, id);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "succeeded");
	assert_int_equal(json_array_size(json_object_get(j, "steps")), 2);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(j, "steps"), 0), "command")),
		"echo 'hi'");
	check_ms(j);
	json_decref(j);
	/* the host was taken and let go */
	assert_int_equal(f->nuses, 2);
	assert_int_equal(
		tb_actions_start(f->acts, "left", "power", json_object(), "bob", work_fn, &bad, NULL, &id2, &err), 0);
	j = wait_end(f->acts, id2);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "failed");
	assert_true(has_text(j, "the work failed on purpose"));
	json_decref(j);
	assert_int_equal(tb_actions_list_json(f->acts, "left", 10, &j, &err), 0);
	assert_int_equal(json_array_size(j), 2);
	json_decref(j);
}

/* held_by: what holds a host, told to on_hold in order and read back. */
static void test_held_by(void **state)
{
	struct fixture *f = *state;
	struct work slow = {.wait_for_cancel = 1};
	struct tb_hold_info h;
	struct tb_error err = {0};
	int64_t id = 0;
	json_t *j;

	assert_int_equal(tb_actions_held_by(f->acts, "left", &h), 0);
	assert_true(json_is_null(tb_hold_info_json(NULL)));
	assert_int_equal(tb_actions_hold_as(f->acts, "left", "matrix 7 (nightly)", "matrix", 7, "alice", &err), 0);
	assert_int_equal(tb_actions_held_by(f->acts, "left", &h), 1);
	assert_string_equal(h.kind, "matrix");
	assert_int_equal(h.id, 7);
	assert_string_equal(h.by, "alice");
	assert_string_equal(h.text, "matrix 7 (nightly)");
	assert_true(h.since_ms > 0);
	j = tb_hold_info_json(&h);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "matrix");
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 7);
	assert_string_equal(json_string_value(json_object_get(j, "by")), "alice");
	assert_non_null(json_string_value(json_object_get(j, "since")));
	json_decref(j);
	tb_actions_release(f->acts, "left");
	assert_int_equal(tb_actions_held_by(f->acts, "left", &h), 0);
	assert_int_equal(
		tb_actions_start(f->acts, "left", "boot", json_object(), "carol", work_fn, &slow, NULL, &id, &err), 0);
	assert_int_equal(tb_actions_held_by(f->acts, "left", &h), 1);
	assert_string_equal(h.kind, "action");
	assert_int_equal(h.id, id);
	assert_string_equal(h.by, "carol");
	assert_int_equal(tb_actions_cancel(f->acts, id, &err), 0);
	json_decref(wait_end(f->acts, id));
	assert_int_equal(tb_actions_held_by(f->acts, "left", &h), 0);
	/* a holder that says nothing of itself: kind and id empty */
	assert_int_equal(tb_actions_hold(f->acts, "right", "someone", &err), 0);
	tb_actions_release(f->acts, "right");
	assert_int_equal(f->nholds, 6);
	assert_string_equal(f->holds[0], "left matrix 7 alice");
	assert_string_equal(f->holds[1], "left -");
	{
		char want[64];

		snprintf(want, sizeof(want), "left action %lld carol", (long long)id);
		assert_string_equal(f->holds[2], want);
	}
	assert_string_equal(f->holds[3], "left -");
	assert_string_equal(f->holds[4], "right  0 ");
	assert_string_equal(f->holds[5], "right -");
}

static void test_cancel_and_conflict(void **state)
{
	struct fixture *f = *state;
	struct work slow = {.wait_for_cancel = 1};
	struct tb_error err = {0};
	int64_t id = 0, other = 0;
	json_t *j;

	assert_int_equal(
		tb_actions_start(f->acts, "right", "boot", json_object(), "carol", work_fn, &slow, NULL, &id, &err), 0);
	assert_int_equal(
		tb_actions_start(f->acts, "right", "power", json_object(), "dave", work_fn, &slow, NULL, &other, &err),
		TB_ERR_CONFLICT);
	assert_non_null(strstr(err.message, "by carol"));
	assert_int_equal(tb_actions_cancel(f->acts, id, &err), 0);
	j = wait_end(f->acts, id);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "canceled");
	json_decref(j);
	assert_int_equal(tb_actions_cancel(f->acts, 999999, &err), TB_ERR_NOT_FOUND);
}

static void test_restart_marks_interrupted(void **state)
{
	struct fixture *f = *state;
	struct work slow = {.wait_for_cancel = 1};
	struct tb_error err = {0};
	int64_t id = 0;
	json_t *j;
	const char *s;

	assert_int_equal(
		tb_actions_start(f->acts, "left", "boot", json_object(), "erin", work_fn, &slow, NULL, &id, &err), 0);
	/* "testbedd stops" with the action running: the record is left running
	 * only if the stop does not end it, so flip the stored state back the way
	 * a crash would leave it, then open everything again */
	close_all(f);
	tb_test_store_reopen(&f->ts);
	assert_int_equal(tb_store_action_update(f->ts.st, id, "running", 0, 0, NULL, NULL, NULL), 0);
	assert_int_equal(open_all(f), 0);
	assert_int_equal(tb_actions_get_json(f->acts, id, &j, &err), 0);
	s = json_string_value(json_object_get(j, "state"));
	assert_string_equal(s, "failed");
	assert_true(has_text(j, "testbedd stopped while this action ran"));
	assert_true(json_integer_value(json_object_get(j, "finished_ms")) > 1700000000000LL);
	json_decref(j);
	/* a row recorded before the times kept their ms (whole seconds): the
	 * same instants, in ms */
	close_all(f);
	{
		sqlite3 *db = NULL;
		char sql[160];

		assert_int_equal(sqlite3_open(f->ts.path, &db), SQLITE_OK);
		snprintf(sql, sizeof(sql),
			 "UPDATE actions SET created_at = 1764800000, started_at = 1764800001 WHERE id = %lld",
			 (long long)id);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	tb_test_store_reopen(&f->ts);
	assert_int_equal(open_all(f), 0);
	assert_int_equal(tb_actions_get_json(f->acts, id, &j, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "created_ms")), 1764800000000LL);
	assert_int_equal(json_integer_value(json_object_get(j, "started_ms")), 1764800001000LL);
	assert_string_equal(json_string_value(json_object_get(j, "created_at")), "2025-12-03T22:13:20Z");
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_holds_and_the_use_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_action_runs_and_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_and_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_by, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_marks_interrupted, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
