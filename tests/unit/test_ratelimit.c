/*
 * test_ratelimit.c - the failed-authentication limiter (ratelimit.c) and the
 * audit log's retention (store_auth.c), called directly: keys (IPv6 by /64),
 * failures only, the time left, a table an attacker cannot flush by cycling
 * addresses; pruning by count and by age.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ratelimit.h"
#include "store.h"

char *mkdtemp(char *template);

static void test_keys(void **state)
{
	static const char *const cases[][2] = {
		{"192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::ffff:192.0.2.7", "::ffff:192.0.2.7"},
		{"unknown", "unknown"},
	};
	char key[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tb_ratelimit_key(cases[i][0], key, sizeof(key));
		assert_string_equal(key, cases[i][1]);
	}
}

static void test_failures_and_time_left(void **state)
{
	struct tb_ratelimit *rl = tb_ratelimit_new(TB_RATE_MAX_FAILURES, TB_RATE_WINDOW_S);
	struct tb_error err = {0};
	int retry = 0;

	(void)state;
	assert_non_null(rl);
	for (int i = 1; i < TB_RATE_MAX_FAILURES; i++) {
		assert_int_equal(tb_ratelimit_failed(rl, "192.0.2.1", NULL), 0);
		assert_int_equal(tb_ratelimit_check(rl, "192.0.2.1", &retry, &err), 0);
	}
	/* the tenth makes it limited, once */
	assert_int_equal(tb_ratelimit_failed(rl, "192.0.2.1", &retry), 1);
	assert_true(retry >= 1 && retry <= TB_RATE_WINDOW_S);
	assert_int_equal(tb_ratelimit_failed(rl, "192.0.2.1", NULL), 0);
	assert_int_equal(tb_ratelimit_check(rl, "192.0.2.1", &retry, &err), TB_ERR_RATE_LIMITED);
	assert_int_equal(err.code, TB_ERR_RATE_LIMITED);
	assert_true(retry >= 1 && retry <= TB_RATE_WINDOW_S);
	/* another address is not */
	assert_int_equal(tb_ratelimit_check(rl, "192.0.2.2", &retry, &err), 0);
	tb_ratelimit_free(rl);
}

/* Cycling addresses inside one /64 is one key. */
static void test_ipv6_prefix(void **state)
{
	struct tb_ratelimit *rl = tb_ratelimit_new(TB_RATE_MAX_FAILURES, TB_RATE_WINDOW_S);
	char addr[64];
	int retry;

	(void)state;
	for (int i = 1; i <= TB_RATE_MAX_FAILURES; i++) {
		snprintf(addr, sizeof(addr), "2001:db8:5:6::%x", i);
		tb_ratelimit_failed(rl, addr, NULL);
	}
	assert_int_equal(tb_ratelimit_check(rl, "2001:db8:5:6:ffff::1", &retry, NULL), TB_ERR_RATE_LIMITED);
	assert_int_equal(tb_ratelimit_check(rl, "2001:db8:5:7::1", &retry, NULL), 0);
	tb_ratelimit_free(rl);
}

/* A limited address stays limited while strangers fail from more addresses
 * than the table holds: quiet slots go first (before the fix the oldest
 * window went first, and that was the limited one). */
static void test_table_not_flushed(void **state)
{
	struct tb_ratelimit *rl = tb_ratelimit_new(TB_RATE_MAX_FAILURES, TB_RATE_WINDOW_S);
	char addr[64];
	int retry;

	(void)state;
	for (int i = 0; i < TB_RATE_MAX_FAILURES; i++)
		tb_ratelimit_failed(rl, "198.51.100.9", NULL);
	assert_int_equal(tb_ratelimit_check(rl, "198.51.100.9", &retry, NULL), TB_ERR_RATE_LIMITED);
	for (int i = 0; i < 3 * TB_RATE_SLOTS; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
		tb_ratelimit_failed(rl, addr, NULL);
	}
	assert_int_equal(tb_ratelimit_check(rl, "198.51.100.9", &retry, NULL), TB_ERR_RATE_LIMITED);
	tb_ratelimit_free(rl);
}

static void count_rows(void *cls, const struct tb_audit_row *r)
{
	(void)r;
	(*(int *)cls)++;
}

static int rows(struct tb_store *st)
{
	struct tb_audit_filter f = {.limit = 1000};
	int n = 0;

	assert_int_equal(tb_store_audit_list(st, &f, count_rows, &n, NULL), 0);
	return n;
}

static void test_audit_retention(void **state)
{
	char dir[] = "/tmp/tbrl-XXXXXX", path[64];
	struct tb_store *st;
	struct tb_error err = {0};
	struct tb_audit_row a = {.actor = "admin",
				 .remote = "127.0.0.1",
				 .method = "POST",
				 .path = "/api/v1/tokens",
				 .action = "token.create",
				 .target = "x",
				 .status = 201,
				 .result = "ok"};
	int64_t deleted = -1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	assert_int_equal(tb_store_open(path, &st, &err), 0);
	for (int i = 0; i < 20; i++) {
		a.at = 1000 + i;
		assert_int_equal(tb_store_audit_append(st, &a, &err), 0);
	}
	/* by age: the 5 before 1005 */
	assert_int_equal(tb_store_audit_prune(st, 1000, 1005, &deleted, &err), 0);
	assert_int_equal(deleted, 5);
	assert_int_equal(rows(st), 15);
	/* by count: the newest 10 stay */
	assert_int_equal(tb_store_audit_prune(st, 10, 0, &deleted, &err), 0);
	assert_int_equal(deleted, 5);
	assert_int_equal(rows(st), 10);
	assert_int_equal(tb_store_audit_prune(st, 10, 0, &deleted, &err), 0);
	assert_int_equal(deleted, 0);
	tb_store_close(st);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_failures_and_time_left),
		cmocka_unit_test(test_ipv6_prefix),
		cmocka_unit_test(test_table_not_flushed),
		cmocka_unit_test(test_audit_retention),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
