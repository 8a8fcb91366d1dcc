/*
 * test_auth.c - tokens and sessions (server/auth.c) against a real SQLite
 * store in a temp dir: a revocation is never undone by a lookup that read the
 * store before it (deterministically, and with lookups running in threads),
 * session ids and expiry in the principal, the test-only session TTL.
 *
 * This file compiles auth.c itself, with TB_AUTH_AFTER_STORE_READ defined to
 * run a test function between a lookup's store read and its cache update:
 * the one place where the race lives, which no timing of real threads hits
 * reliably.  Nothing is mocked: the store is the real one.  (The library's
 * auth.o is not linked: every symbol it has is defined here first.)
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

struct tb_auth;
static void after_store_read(struct tb_auth *a, int64_t id);
#define TB_AUTH_AFTER_STORE_READ(a, id) after_store_read((a), (id))
#include "auth.c"

char *mkdtemp(char *template);

/* What after_store_read does: revoke the token `revoke_id` once (the
 * deterministic test), or sleep a little (widens the window for the threads). */
static int64_t revoke_id;
static atomic_int pause_us;

static void after_store_read(struct tb_auth *a, int64_t id)
{
	if (revoke_id != 0 && id == revoke_id) {
		struct tb_error e = {0};

		revoke_id = 0;
		/* no lock of auth.c or the store is held here */
		assert_int_equal(tb_auth_token_revoke(a, id, &e), 0);
	}
	if (atomic_load(&pause_us) > 0) {
		struct timespec ts = {0, (long)atomic_load(&pause_us) * 1000L};

		nanosleep(&ts, NULL);
	}
}

struct fixture {
	char dir[64];
	char path[128];
	struct tb_store *st;
	struct tb_auth *a;
};

static void open_fixture(struct fixture *f)
{
	struct tb_error err = {0};

	snprintf(f->dir, sizeof(f->dir), "/tmp/tbauth-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	assert_int_equal(tb_store_open(f->path, &f->st, &err), 0);
	assert_int_equal(tb_auth_new(f->st, &f->a, &err), 0);
}

static void close_fixture(struct fixture *f)
{
	char wal[160];

	tb_auth_free(f->a);
	tb_store_close(f->st);
	unlink(f->path);
	snprintf(wal, sizeof(wal), "%s-wal", f->path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", f->path);
	unlink(wal);
	rmdir(f->dir);
}

/* A revocation landing between a lookup's store read ("not revoked") and its
 * cache update: before the fix the stale copy was cached, and the revoked
 * token kept working until it was evicted. */
static void test_revoke_between_read_and_cache(void **state)
{
	struct fixture f;
	struct tb_principal who;
	struct tb_error err = {0};
	char secret[TB_SECRET_MAX];
	int64_t id;

	(void)state;
	open_fixture(&f);
	assert_int_equal(tb_auth_token_create(f.a, "ci", TB_LEVEL_OPERATOR, secret, &id, &err), 0);
	revoke_id = id;
	/* the lookup read the store before the revocation; it must not use or
	 * keep that copy (it reads again and sees the revocation) */
	assert_int_equal(tb_auth_bearer(f.a, secret, &who, &err), TB_ERR_UNAUTHORIZED);
	assert_int_equal(revoke_id, 0); /* the revocation did happen in between */
	/* the check that matters: every later check refuses the token */
	for (int i = 0; i < 3; i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(tb_auth_bearer(f.a, secret, &who, &err), TB_ERR_UNAUTHORIZED);
		assert_non_null(strstr(err.message, "revoked"));
	}
	close_fixture(&f);
}

#define NTOKENS 300 /* more than the cache holds: lookups keep reading the store */
#define NTHREADS 4

struct race {
	struct tb_auth *a;
	char secret[NTOKENS][TB_SECRET_MAX];
	int64_t id[NTOKENS];
	atomic_int revoked[NTOKENS]; /* set once tb_auth_token_revoke returned */
	atomic_int stop;
	atomic_long checks, late_accepts;
};

static void *lookups(void *arg)
{
	struct race *r = arg;
	unsigned int seed = (unsigned int)(uintptr_t)pthread_self();

	while (!atomic_load(&r->stop)) {
		int i = rand_r(&seed) % NTOKENS;
		int was_revoked = atomic_load(&r->revoked[i]);
		struct tb_principal who;
		struct tb_error err = {0};

		/* a check that started after the revocation returned must refuse */
		if (tb_auth_bearer(r->a, r->secret[i], &who, &err) == 0 && was_revoked)
			atomic_fetch_add(&r->late_accepts, 1);
		atomic_fetch_add(&r->checks, 1);
	}
	return NULL;
}

/* Revoke tokens one by one while threads check them all the time. */
static void test_revoke_while_lookups_run(void **state)
{
	static struct race r;
	struct fixture f;
	struct tb_principal who;
	struct tb_error err = {0};
	pthread_t t[NTHREADS];
	long before;

	(void)state;
	memset(&r, 0, sizeof(r));
	open_fixture(&f);
	r.a = f.a;
	for (int i = 0; i < NTOKENS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "t%d", i);
		assert_int_equal(tb_auth_token_create(f.a, name, TB_LEVEL_VIEWER, r.secret[i], &r.id[i], &err), 0);
	}
	/* a few microseconds between read and cache update, as a preempted
	 * thread would have: revocations land in that window often */
	atomic_store(&pause_us, 20);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, lookups, &r), 0);
	for (int i = 0; i < NTOKENS; i += 2) {
		/* let the threads run between revocations */
		before = atomic_load(&r.checks);
		while (atomic_load(&r.checks) < before + NTHREADS)
			sched_yield();
		assert_int_equal(tb_auth_token_revoke(f.a, r.id[i], &err), 0);
		atomic_store(&r.revoked[i], 1);
	}
	before = atomic_load(&r.checks);
	while (atomic_load(&r.checks) < before + 4 * NTOKENS)
		sched_yield();
	atomic_store(&r.stop, 1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&pause_us, 0);
	assert_int_equal(atomic_load(&r.late_accepts), 0);
	/* and afterwards: revoked ones refused, the others still fine */
	for (int i = 0; i < NTOKENS; i++)
		assert_int_equal(tb_auth_bearer(f.a, r.secret[i], &who, &err), i % 2 == 0 ? TB_ERR_UNAUTHORIZED : 0);
	close_fixture(&f);
}

/* A session's principal names the session and its end; a bearer's does not. */
static void test_session_principal(void **state)
{
	struct fixture f;
	struct tb_principal who;
	struct tb_error err = {0};
	char secret[TB_SECRET_MAX], cookie[TB_SECRET_MAX], cookie2[TB_SECRET_MAX], csrf[TB_SECRET_MAX];
	int64_t id, expires;

	(void)state;
	unsetenv("TESTBEDD_TEST_SESSION_TTL_S");
	open_fixture(&f);
	assert_int_equal(tb_auth_token_create(f.a, "web", TB_LEVEL_VIEWER, secret, &id, &err), 0);
	assert_int_equal(tb_auth_bearer(f.a, secret, &who, &err), 0);
	assert_int_equal(who.session_id, 0);
	assert_int_equal(who.expires_at, 0);
	assert_int_equal(tb_auth_session_create(f.a, secret, 0, cookie, csrf, &expires, &who, &err), 0);
	assert_true(expires - (int64_t)time(NULL) > TB_SESSION_TTL_S - 5);
	assert_int_equal(who.session_id, tb_auth_session_id(cookie));
	assert_true(who.session_id > 0);
	memset(&who, 0, sizeof(who));
	assert_int_equal(tb_auth_cookie(f.a, cookie, NULL, 0, "127.0.0.1", &who, &err), 0);
	assert_int_equal(who.session_id, tb_auth_session_id(cookie));
	assert_int_equal(who.expires_at, expires);
	assert_int_equal(who.token_id, id);
	/* two sessions of one token: two ids */
	assert_int_equal(tb_auth_session_create(f.a, secret, 0, cookie2, csrf, &expires, &who, &err), 0);
	assert_int_not_equal(tb_auth_session_id(cookie2), tb_auth_session_id(cookie));
	/* "remember this device": a 30-day session, checked like any other */
	assert_int_equal(tb_auth_session_create(f.a, secret, 1, cookie2, csrf, &expires, &who, &err), 0);
	assert_true(expires - (int64_t)time(NULL) > TB_SESSION_REMEMBER_TTL_S - 5);
	assert_true(expires - (int64_t)time(NULL) <= TB_SESSION_REMEMBER_TTL_S);
	assert_int_equal(tb_auth_cookie(f.a, cookie2, NULL, 0, "127.0.0.1", &who, &err), 0);
	assert_int_equal(who.expires_at, expires);
	/* logged out: gone */
	tb_auth_session_delete(f.a, cookie);
	assert_int_equal(tb_auth_cookie(f.a, cookie, NULL, 0, "127.0.0.1", &who, &err), TB_ERR_UNAUTHORIZED);
	assert_int_equal(tb_auth_cookie(f.a, cookie2, NULL, 0, "127.0.0.1", &who, &err), 0);
	/* a failed login leaves no secret in the caller's buffers */
	memset(cookie, 'x', sizeof(cookie));
	memset(csrf, 'x', sizeof(csrf));
	assert_int_equal(tb_auth_session_create(f.a, "tbk_1_nope", 0, cookie, csrf, &expires, &who, &err),
			 TB_ERR_UNAUTHORIZED);
	assert_int_equal(cookie[0], '\0');
	assert_int_equal(csrf[0], '\0');
	close_fixture(&f);
}

/* TESTBEDD_TEST_SESSION_TTL_S: a short session for the tests; a session is
 * refused from its expiry second on. */
static void test_session_ttl_for_tests(void **state)
{
	struct fixture f;
	struct tb_principal who;
	struct tb_error err = {0};
	struct tb_store *st;
	struct tb_auth *a;
	char secret[TB_SECRET_MAX], cookie[TB_SECRET_MAX], csrf[TB_SECRET_MAX];
	static const char *const bad[] = {"0", "-1", "x", "5s", "43201", ""};
	int64_t id, expires;

	(void)state;
	setenv("TESTBEDD_TEST_SESSION_TTL_S", "1", 1);
	open_fixture(&f);
	assert_int_equal(tb_auth_token_create(f.a, "web", TB_LEVEL_VIEWER, secret, &id, &err), 0);
	assert_int_equal(tb_auth_session_create(f.a, secret, 0, cookie, csrf, &expires, &who, &err), 0);
	assert_true(expires - (int64_t)time(NULL) <= 1);
	assert_int_equal(who.expires_at, expires);
	while ((int64_t)time(NULL) < expires) {
		struct timespec ts = {0, 50000000L};

		nanosleep(&ts, NULL);
	}
	assert_int_equal(tb_auth_cookie(f.a, cookie, NULL, 0, "127.0.0.1", &who, &err), TB_ERR_UNAUTHORIZED);
	assert_non_null(strstr(err.message, "expired"));
	st = f.st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("TESTBEDD_TEST_SESSION_TTL_S", bad[i], 1);
		a = (struct tb_auth *)&err;
		assert_int_equal(tb_auth_new(st, &a, &err), TB_ERR_INVALID);
		assert_null(a);
		assert_string_equal(err.field, "TESTBEDD_TEST_SESSION_TTL_S");
	}
	unsetenv("TESTBEDD_TEST_SESSION_TTL_S");
	close_fixture(&f);
}

/* The one session of token_id as "Your devices" lists it (asserted one). */
static struct tb_session_view only_session(struct fixture *f, int64_t token_id)
{
	struct tb_session_view *v, one;
	struct tb_error err = {0};
	size_t n;

	assert_int_equal(tb_auth_session_list(f->a, token_id, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	one = v[0];
	free(v);
	return one;
}

/* Sliding expiry, with the clock given (check_cookie's now): a remembered
 * session lasts 30 days from its last use, not from its login; a use is
 * written at most once a minute (last used and the client's address); a use
 * refused for its CSRF header does not slide it; an ordinary session keeps
 * its login's 12 h whatever its use, and notes its last use too. */
static void test_session_sliding_expiry(void **state)
{
	const int64_t day = 24 * 3600, ttl = TB_SESSION_REMEMBER_TTL_S;
	struct fixture f;
	struct tb_principal who;
	struct tb_error err = {0};
	struct tb_session_view v;
	char secret[TB_SECRET_MAX], secret2[TB_SECRET_MAX], cookie[TB_SECRET_MAX], csrf[TB_SECRET_MAX];
	int64_t id, id2, expires, t0;

	(void)state;
	unsetenv("TESTBEDD_TEST_SESSION_TTL_S");
	open_fixture(&f);
	assert_int_equal(tb_auth_token_create(f.a, "phone", TB_LEVEL_VIEWER, secret, &id, &err), 0);
	assert_int_equal(tb_auth_session_create(f.a, secret, 1, cookie, csrf, &expires, &who, &err), 0);
	tb_auth_session_set_client(f.a, cookie, "Firefox on Android", "192.0.2.1");
	t0 = expires - ttl; /* the login's second */
	v = only_session(&f, id);
	assert_int_equal(v.last_used_at, t0);
	assert_string_equal(v.last_address, "192.0.2.1");
	/* within the minute: nothing written, nothing moved */
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "198.51.100.7", t0 + 59, &who, &err), 0);
	assert_int_equal(who.renewed, 0);
	assert_int_equal(who.expires_at, expires);
	v = only_session(&f, id);
	assert_int_equal(v.last_used_at, t0);
	assert_string_equal(v.last_address, "192.0.2.1");
	/* ten days on: used, from elsewhere; 30 days from now */
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "198.51.100.7", t0 + 10 * day, &who, &err), 0);
	assert_int_equal(who.renewed, 1);
	assert_int_equal(who.expires_at, t0 + 10 * day + ttl);
	v = only_session(&f, id);
	assert_int_equal(v.last_used_at, t0 + 10 * day);
	assert_int_equal(v.expires_at, t0 + 10 * day + ttl);
	assert_string_equal(v.last_address, "198.51.100.7");
	assert_string_equal(v.device, "Firefox on Android");
	/* again within its minute: one write a minute, whatever the address */
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "203.0.113.9", t0 + 10 * day + 59, &who, &err), 0);
	assert_int_equal(who.renewed, 0);
	assert_string_equal(only_session(&f, id).last_address, "198.51.100.7");
	/* a mutation refused for its CSRF header is no use */
	assert_int_equal(check_cookie(f.a, cookie, NULL, 1, "203.0.113.9", t0 + 20 * day, &who, &err), TB_ERR_CSRF);
	assert_int_equal(only_session(&f, id).last_used_at, t0 + 10 * day);
	/* past the login's 30 days it lives on: its use moved it */
	assert_int_equal(check_cookie(f.a, cookie, csrf, 1, "203.0.113.9", t0 + 39 * day, &who, &err), 0);
	assert_int_equal(who.renewed, 1);
	assert_int_equal(who.expires_at, t0 + 69 * day);
	/* 30 days unused: over, and a late use does not revive it */
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "203.0.113.9", t0 + 69 * day, &who, &err),
			 TB_ERR_UNAUTHORIZED);
	assert_non_null(strstr(err.message, "expired"));
	assert_int_equal(only_session(&f, id).expires_at, t0 + 69 * day);

	/* an ordinary session: its last use noted, its 12 h kept */
	assert_int_equal(tb_auth_token_create(f.a, "laptop", TB_LEVEL_VIEWER, secret2, &id2, &err), 0);
	assert_int_equal(tb_auth_session_create(f.a, secret2, 0, cookie, csrf, &expires, &who, &err), 0);
	t0 = expires - TB_SESSION_TTL_S;
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "198.51.100.8", t0 + 6 * 3600, &who, &err), 0);
	assert_int_equal(who.renewed, 0);
	assert_int_equal(who.expires_at, expires);
	v = only_session(&f, id2);
	assert_int_equal(v.last_used_at, t0 + 6 * 3600);
	assert_int_equal(v.expires_at, expires);
	assert_string_equal(v.last_address, "198.51.100.8");
	assert_int_equal(check_cookie(f.a, cookie, NULL, 0, "198.51.100.8", expires, &who, &err), TB_ERR_UNAUTHORIZED);
	close_fixture(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revoke_between_read_and_cache),
		cmocka_unit_test(test_revoke_while_lookups_run),
		cmocka_unit_test(test_session_principal),
		cmocka_unit_test(test_session_ttl_for_tests),
		cmocka_unit_test(test_session_sliding_expiry),
	};

	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
