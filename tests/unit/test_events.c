/*
 * test_events.c - the event bus with a real store: ids, replay from the
 * ring and from the store, no loss and no duplicate on resume, the reset
 * record when events were pruned, filters, waking, events larger than one
 * read, and dropping a subscriber that lags too far.  The bus stores
 * events on a writer thread and shows them only once stored: the older
 * tests publish through pub() (publish, then wait for the writer) so that
 * their sequencing stays what it was; test_batched_* hold the store's
 * write lock from a second SQLite connection (a real stall, no mock) to show
 * that publishing does not wait on the store, that nothing is seen before
 * it is stored, and that a stall's events go in one transaction in order.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "events.h"
#include "store.h"

char *mkdtemp(char *template);

struct fx {
	char dir[64], path[128];
	struct tb_store *st;
	struct tb_events *ev;
};

static int wakes;

static void on_wake(void *cls)
{
	(void)cls;
	wakes++;
}

/* Publish and wait until it is stored and visible (the old, synchronous order). */
static int64_t pub(struct tb_events *ev, const char *type, const char *host, int64_t matrix, json_t *data)
{
	int64_t id = tb_events_publish(ev, type, host, matrix, data);

	tb_events_flush(ev);
	return id;
}

static void open_fx(struct fx *f)
{
	struct tb_error err = {0};

	snprintf(f->dir, sizeof(f->dir), "/tmp/tbev-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	assert_int_equal(tb_store_open(f->path, &f->st, &err), 0);
	assert_int_equal(tb_events_new(f->st, &f->ev, &err), 0);
}

static void close_fx(struct fx *f, int remove)
{
	char p[160];

	tb_events_close(f->ev);
	tb_events_free(f->ev);
	tb_store_close(f->st);
	if (!remove)
		return;
	unlink(f->path);
	snprintf(p, sizeof(p), "%s-wal", f->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->path);
	unlink(p);
	rmdir(f->dir);
}

/* Read everything available; collect the ids (and reset records as -oldest). */
static size_t drain(struct tb_sub *s, long long *ids, size_t max, char *types_seen, size_t tlen)
{
	static char buf[16384];
	size_t nids = 0, n;
	char *acc = NULL;
	size_t acc_len = 0;

	for (;;) {
		enum tb_sub_status st = tb_sub_next(s, buf, sizeof(buf), &n);
		char *nacc;

		if (st != TB_SUB_DATA)
			break;
		nacc = realloc(acc, acc_len + n + 1);
		assert_non_null(nacc);
		acc = nacc;
		memcpy(acc + acc_len, buf, n);
		acc_len += n;
		acc[acc_len] = '\0';
	}
	if (acc == NULL)
		return 0;
	for (char *rec = acc; rec != NULL && *rec;) {
		char *end = strstr(rec, "\n\n");
		long long id;
		char type[40];

		assert_non_null(end); /* records are whole */
		*end = '\0';
		if (sscanf(rec, "id: %lld\nevent: %39s", &id, type) == 2) {
			assert_true(nids < max);
			ids[nids++] = id;
		} else if (sscanf(rec, "event: %39s", type) == 1 && strcmp(type, "reset") == 0) {
			const char *o = strstr(rec, "\"oldest\":");

			assert_non_null(o);
			ids[nids++] = -atoll(o + 9);
		} else {
			fail_msg("bad record: %.80s", rec);
		}
		if (types_seen != NULL) {
			strncat(types_seen, type, tlen - strlen(types_seen) - 1);
			strncat(types_seen, " ", tlen - strlen(types_seen) - 1);
		}
		assert_non_null(strstr(rec, "data: {\"id\":") != NULL || strcmp(type, "reset") == 0 ? rec : NULL);
		rec = end + 2;
	}
	free(acc);
	return nids;
}

static void test_replay_ring_and_store(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	static long long ids[6000];
	size_t n;
	const int total = TB_EVENTS_RING + 904;

	(void)state;
	open_fx(&f);
	for (int i = 1; i <= total; i++)
		assert_int_equal(pub(f.ev, i % 2 ? "host.state" : "audit", "left", 0, json_pack("{s:i}", "n", i)), i);
	/* from the beginning: the first events come from the store, the rest from the ring */
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &s, &err), 0);
	n = drain(s, ids, 6000, NULL, 0);
	assert_int_equal(n, (size_t)total);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], (long long)i + 1);
	tb_events_unsubscribe(s);
	/* resume in the middle: exactly what came after */
	assert_int_equal(tb_events_subscribe(f.ev, 4000, &all, on_wake, NULL, &s, &err), 0);
	n = drain(s, ids, 6000, NULL, 0);
	assert_int_equal(n, (size_t)(total - 4000));
	assert_int_equal(ids[0], 4001);
	assert_int_equal(ids[n - 1], total);
	tb_events_unsubscribe(s);
	close_fx(&f, 0);

	/* a restart keeps the ids going and can replay what came before it */
	{
		struct tb_error e2 = {0};

		assert_int_equal(tb_store_open(f.path, &f.st, &e2), 0);
		assert_int_equal(tb_events_new(f.st, &f.ev, &e2), 0);
		assert_int_equal(tb_events_last_id(f.ev), total);
		assert_int_equal(pub(f.ev, "audit", NULL, 0, json_object()), total + 1);
		assert_int_equal(tb_events_subscribe(f.ev, total - 2, &all, on_wake, NULL, &s, &err), 0);
		n = drain(s, ids, 6000, NULL, 0);
		assert_int_equal(n, 3);
		assert_int_equal(ids[2], total + 1);
		tb_events_unsubscribe(s);
	}
	close_fx(&f, 1);
}

/* Retention by age: events stored more than TB_EVENTS_KEEP_DAYS ago go
 * when the bus opens (and as it publishes), counted for /metrics; a reader
 * resuming after one of them is told with a reset record. */
static void test_aged_events_pruned(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	struct tb_events_stats es;
	int64_t now = (int64_t)time(NULL), old = now - (int64_t)(TB_EVENTS_KEEP_DAYS + 1) * 86400;
	static long long ids[64];
	size_t n;

	(void)state;
	open_fx(&f);
	tb_events_close(f.ev);
	tb_events_free(f.ev);
	for (int i = 1; i <= 30; i++) {
		char json[128];
		struct tb_event_row row = {.id = i, .at = i <= 20 ? old : now, .type = "audit", .json = json};

		snprintf(json, sizeof(json), "{\"id\":%d,\"type\":\"audit\",\"host\":null,\"matrix\":null,\"data\":{}}",
			 i);
		assert_int_equal(tb_store_event_insert(f.st, &row, &err), 0);
	}
	assert_int_equal(tb_events_new(f.st, &f.ev, &err), 0);
	tb_events_stats(f.ev, &es);
	assert_int_equal(es.pruned, 20);
	assert_int_equal(tb_events_subscribe(f.ev, 10, &all, on_wake, NULL, &s, &err), 0);
	n = drain(s, ids, 64, NULL, 0);
	assert_int_equal(ids[0], -21); /* reset: the oldest kept is 21 */
	assert_int_equal(ids[1], 21);
	assert_int_equal(n, 11);
	tb_events_unsubscribe(s);
	/* testbedd was down longer than the retention: nothing is kept, and a
	 * reader resuming is told so, then goes on live after the last id */
	close_fx(&f, 1);
	open_fx(&f);
	tb_events_close(f.ev);
	tb_events_free(f.ev);
	for (int i = 1; i <= 10; i++) {
		char json[128];
		struct tb_event_row row = {.id = i, .at = old, .type = "audit", .json = json};

		snprintf(json, sizeof(json), "{\"id\":%d,\"type\":\"audit\",\"host\":null,\"matrix\":null,\"data\":{}}",
			 i);
		assert_int_equal(tb_store_event_insert(f.st, &row, &err), 0);
	}
	assert_int_equal(tb_events_new(f.st, &f.ev, &err), 0);
	assert_int_equal(tb_events_subscribe(f.ev, 5, &all, on_wake, NULL, &s, &err), 0);
	n = drain(s, ids, 64, NULL, 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], -11); /* reset: nothing before 11 is kept */
	assert_int_equal(pub(f.ev, "audit", NULL, 0, json_object()), 11);
	n = drain(s, ids, 64, NULL, 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 11);
	tb_events_unsubscribe(s);
	close_fx(&f, 1);
}

static void test_reset_when_pruned(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	static long long ids[6000];
	size_t n;

	(void)state;
	open_fx(&f);
	for (int i = 1; i <= TB_EVENTS_RING + 100; i++)
		pub(f.ev, "audit", NULL, 0, json_object());
	assert_int_equal(tb_store_event_prune(f.st, 51, 0, NULL), 0);
	assert_int_equal(tb_events_subscribe(f.ev, 10, &all, on_wake, NULL, &s, &err), 0);
	n = drain(s, ids, 6000, NULL, 0);
	assert_int_equal(ids[0], -51); /* reset: the oldest kept is 51 */
	assert_int_equal(ids[1], 51);
	assert_int_equal(ids[n - 1], TB_EVENTS_RING + 100);
	assert_int_equal(n, (size_t)(TB_EVENTS_RING + 100 - 50 + 1));
	tb_events_unsubscribe(s);
	close_fx(&f, 1);
}

static void test_filters_and_wake(void **state)
{
	struct fx f;
	struct tb_sub *hosts, *left, *live;
	struct tb_error err = {0};
	struct tb_events_filter fh = {.types = "host."}, fl = {.host = "left", .types = "audit,host.state"};
	struct tb_events_filter none = {0};
	long long ids[16];
	char seen[256] = "";
	char buf[256];
	size_t n;

	(void)state;
	open_fx(&f);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &fh, on_wake, NULL, &hosts, &err), 0);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &fl, on_wake, NULL, &left, &err), 0);
	assert_int_equal(tb_events_subscribe(f.ev, -1, &none, on_wake, NULL, &live, &err), 0);
	/* nothing yet: each says wait */
	assert_int_equal(tb_sub_next(hosts, buf, sizeof(buf), &n), TB_SUB_WAIT);
	assert_int_equal(tb_sub_next(left, buf, sizeof(buf), &n), TB_SUB_WAIT);
	/* a live-only stream first says where it starts (here: before any event) */
	assert_int_equal(tb_sub_next(live, buf, sizeof(buf), &n), TB_SUB_DATA);
	assert_int_equal(n, strlen("id: 0\nevent: stream\ndata: {\"last_id\":0}\n\n"));
	assert_memory_equal(buf, "id: 0\nevent: stream\ndata: {\"last_id\":0}\n\n", n);
	assert_int_equal(tb_sub_next(live, buf, sizeof(buf), &n), TB_SUB_WAIT);
	wakes = 0;
	pub(f.ev, "host.state", "left", 0, json_object()); /* 1: all three */
	assert_int_equal(wakes, 3);
	pub(f.ev, "host.state", "right", 0, json_object()); /* 2: hosts, live */
	pub(f.ev, "audit", "left", 0, json_object());       /* 3: left, live */
	pub(f.ev, "matrix.run", NULL, 7, json_object());    /* 4: live */
	assert_int_equal(drain(hosts, ids, 16, seen, sizeof(seen)), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_string_equal(seen, "host.state host.state ");
	assert_int_equal(drain(left, ids, 16, NULL, 0), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 3);
	assert_int_equal(drain(live, ids, 16, NULL, 0), 4);
	{
		/* a later live-only stream starts after the newest event */
		struct tb_sub *late;

		assert_int_equal(tb_events_subscribe(f.ev, -1, &fh, on_wake, NULL, &late, &err), 0);
		assert_int_equal(tb_sub_next(late, buf, sizeof(buf), &n), TB_SUB_DATA);
		assert_memory_equal(buf, "id: 4\nevent: stream\ndata: {\"last_id\":4}\n\n", n);
		assert_int_equal(tb_sub_next(late, buf, sizeof(buf), &n), TB_SUB_WAIT);
		tb_events_unsubscribe(late);
	}
	/* a subscriber that is not waiting is not woken */
	wakes = 0;
	pub(f.ev, "audit", NULL, 0, json_object());
	assert_int_equal(wakes, 1); /* only "live": the other two were told to wait, "left" filters it */
	tb_events_unsubscribe(hosts);
	tb_events_unsubscribe(left);
	/* close wakes a waiting subscriber, which then reads "closed" */
	drain(live, ids, 16, NULL, 0);
	assert_int_equal(tb_sub_next(live, buf, sizeof(buf), &n), TB_SUB_WAIT);
	wakes = 0;
	tb_events_close(f.ev);
	assert_int_equal(wakes, 1);
	assert_int_equal(tb_sub_next(live, buf, sizeof(buf), &n), TB_SUB_CLOSED);
	tb_events_unsubscribe(live);
	tb_events_free(f.ev);
	f.ev = NULL;
	tb_store_close(f.st);
	f.st = NULL;
	unlink(f.path);
	rmdir(f.dir);
}

static void test_event_larger_than_a_read(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	char *big = malloc(100001), buf[4096], *acc = calloc(1, 200000);
	size_t n, len = 0;
	json_t *j;

	(void)state;
	memset(big, 'x', 100000);
	big[100000] = '\0';
	open_fx(&f);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &s, &err), 0);
	pub(f.ev, "console", "left", 0, json_pack("{s:s}", "text", big));
	pub(f.ev, "audit", NULL, 0, json_object());
	while (tb_sub_next(s, buf, sizeof(buf), &n) == TB_SUB_DATA) {
		assert_true(len + n < 200000);
		memcpy(acc + len, buf, n);
		len += n;
	}
	assert_true(strncmp(acc, "id: 1\nevent: console\ndata: ", 27) == 0);
	j = json_loads(acc + 27, JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(j);
	assert_int_equal(strlen(json_string_value(json_object_get(json_object_get(j, "data"), "text"))), 100000);
	json_decref(j);
	assert_non_null(strstr(acc, "\n\nid: 2\nevent: audit\n"));
	tb_events_unsubscribe(s);
	close_fx(&f, 1);
	free(big);
	free(acc);
}

static void test_lagging_subscriber_dropped(void **state)
{
	struct fx f;
	struct tb_sub *s, *keep;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	char buf[256];
	size_t n;

	(void)state;
	open_fx(&f);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &s, &err), 0);
	for (int i = 0; i < TB_EVENTS_MAX_LAG + 5; i++)
		assert_true(tb_events_publish(f.ev, "audit", NULL, 0, json_object()) > 0);
	tb_events_flush(f.ev);
	assert_int_equal(tb_sub_next(s, buf, sizeof(buf), &n), TB_SUB_CLOSED);
	/* it may come back and resume from where it was */
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &keep, &err), 0);
	assert_int_equal(tb_sub_next(keep, buf, sizeof(buf), &n), TB_SUB_DATA);
	assert_true(strncmp(buf, "id: 1\n", 6) == 0);
	tb_events_unsubscribe(s);
	tb_events_unsubscribe(keep);
	close_fx(&f, 1);
}

/* Another connection holding the store's write lock: the bus's writer
 * waits on it (SQLite's busy timeout, 5 s) until release_store. */
static sqlite3 *hold_store(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	return db;
}

static void release_store(sqlite3 *db)
{
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

struct stored {
	long long ids[TB_EVENTS_RING + 128];
	size_t n;
	int in_order; /* each row's JSON says its own id */
};

static void on_stored(void *cls, const struct tb_event_row *r)
{
	struct stored *st = cls;
	char want[32];

	snprintf(want, sizeof(want), "{\"id\":%lld,", (long long)r->id);
	if (strncmp(r->json, want, strlen(want)) != 0)
		st->in_order = 0;
	if (st->n < sizeof(st->ids) / sizeof(st->ids[0]))
		st->ids[st->n++] = r->id;
}

static void assert_stored_1_to(struct tb_store *st, size_t total)
{
	static struct stored got;
	struct tb_error err = {0};

	got.n = 0;
	got.in_order = 1;
	assert_int_equal(tb_store_event_each(st, 0, (int)total + 10, on_stored, &got, &err), 0);
	assert_int_equal(got.n, total);
	assert_true(got.in_order);
	for (size_t i = 0; i < total; i++)
		assert_int_equal(got.ids[i], (long long)i + 1);
}

/* While the store is stalled: publishing still returns at once with the
 * next ids, and no subscriber sees an event that is not stored; after,
 * the stalled events go in one transaction, in id order, and are seen. */
static void test_batched_while_store_stalls(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	struct tb_events_stats es;
	static long long ids[128];
	char buf[256];
	size_t n;
	sqlite3 *other;

	(void)state;
	open_fx(&f);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &s, &err), 0);
	assert_int_equal(tb_sub_next(s, buf, sizeof(buf), &n), TB_SUB_WAIT);
	other = hold_store(f.path);
	wakes = 0;
	for (int i = 1; i <= 100; i++)
		assert_int_equal(tb_events_publish(f.ev, "audit", NULL, 0, json_pack("{s:i}", "n", i)), i);
	assert_int_equal(tb_events_last_id(f.ev), 100);
	/* published, not stored: not visible, nobody woken */
	assert_int_equal(tb_sub_next(s, buf, sizeof(buf), &n), TB_SUB_WAIT);
	assert_int_equal(wakes, 0);
	release_store(other);
	tb_events_flush(f.ev);
	assert_int_equal(wakes, 1);
	n = drain(s, ids, 128, NULL, 0);
	assert_int_equal(n, 100);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], (long long)i + 1);
	tb_events_stats(f.ev, &es);
	assert_int_equal(es.published, 100);
	assert_true(es.batches <= 2); /* what the writer had taken before the stall, then the rest */
	assert_stored_1_to(f.st, 100);
	tb_events_unsubscribe(s);
	close_fx(&f, 1);
}

struct more {
	struct tb_events *ev;
	int count;
	int ok;
};

static void *publish_more(void *cls)
{
	struct more *m = cls;

	m->ok = 1;
	for (int i = 0; i < m->count; i++)
		if (tb_events_publish(m->ev, "host.state", "left", 0, json_object()) <= 0)
			m->ok = 0;
	return NULL;
}

/* A stall longer than the ring: the publisher past it waits for room
 * instead of overwriting events not stored yet; every event is stored and
 * delivered once, in order.  Closing stores what is left: a restart goes on
 * after the last id. */
static void test_batched_ring_full_and_close(void **state)
{
	struct fx f;
	struct tb_sub *s;
	struct tb_error err = {0};
	struct tb_events_filter all = {0};
	static long long ids[TB_EVENTS_RING + 64];
	const int total = TB_EVENTS_RING + 20;
	struct more m;
	pthread_t t;
	sqlite3 *other;
	size_t n;

	(void)state;
	open_fx(&f);
	assert_int_equal(tb_events_subscribe(f.ev, 0, &all, on_wake, NULL, &s, &err), 0);
	other = hold_store(f.path);
	for (int i = 1; i <= TB_EVENTS_RING - 1; i++)
		assert_int_equal(tb_events_publish(f.ev, "audit", NULL, 0, json_object()), i);
	m = (struct more){.ev = f.ev, .count = total - (TB_EVENTS_RING - 1)};
	assert_int_equal(pthread_create(&t, NULL, publish_more, &m), 0);
	/* give it time to reach the full ring (not asserted: the result is the same either way) */
	nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
	release_store(other);
	pthread_join(t, NULL);
	assert_true(m.ok);
	tb_events_flush(f.ev);
	n = drain(s, ids, sizeof(ids) / sizeof(ids[0]), NULL, 0);
	assert_int_equal(n, (size_t)total);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], (long long)i + 1);
	assert_stored_1_to(f.st, (size_t)total);
	tb_events_unsubscribe(s);
	/* published and closed at once: close stores them first */
	for (int i = 1; i <= 50; i++)
		assert_int_equal(tb_events_publish(f.ev, "audit", NULL, 0, json_object()), total + i);
	close_fx(&f, 0);
	assert_int_equal(tb_store_open(f.path, &f.st, &err), 0);
	assert_int_equal(tb_events_new(f.st, &f.ev, &err), 0);
	assert_int_equal(tb_events_last_id(f.ev), total + 50);
	assert_stored_1_to(f.st, (size_t)total + 50);
	close_fx(&f, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_ring_and_store),      cmocka_unit_test(test_reset_when_pruned),
		cmocka_unit_test(test_filters_and_wake),           cmocka_unit_test(test_event_larger_than_a_read),
		cmocka_unit_test(test_lagging_subscriber_dropped), cmocka_unit_test(test_aged_events_pruned),
		cmocka_unit_test(test_batched_while_store_stalls), cmocka_unit_test(test_batched_ring_full_and_close),
	};

	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
