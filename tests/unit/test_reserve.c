/*
 * test_reserve.c - reservations without a daemon (no bus): granted at once
 * when free, queued first come first served per host with a position and an
 * estimated start, granted in order when the first is released or expires
 * (the clock is passed in), a later request on other hosts not held up, the
 * owner alone may use a reserved host (the 409 names owner and end), an
 * admin breaks another's, bad input named by its field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "reserve.h"

#define T0 1800000000

static struct tb_reserve *R;

static int setup(void **state)
{
	(void)state;
	return tb_reserve_new(NULL, NULL, &R, NULL);
}

static int teardown(void **state)
{
	(void)state;
	tb_reserve_free(R);
	return 0;
}

/* Ask; the reservation's state ("granted"/"queued") into st; its id. */
static long long ask(const char *h1, const char *h2, int64_t len, const char *owner, int64_t now, const char **st,
		     long *position, const char **est)
{
	const char *hosts[2] = {h1, h2};
	struct tb_error e = {0};
	json_t *out = NULL;
	long long id;
	static char state[16], start[32];

	assert_int_equal(tb_reserve_request(R, hosts, h2 != NULL ? 2 : 1, now + len, "", owner, now, &out, &e), 0);
	id = json_integer_value(json_object_get(out, "id"));
	snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(out, "state")));
	*st = state;
	if (position != NULL)
		*position = (long)json_integer_value(json_object_get(out, "position"));
	if (est != NULL) {
		const char *s = json_string_value(json_object_get(out, "estimated_start"));

		snprintf(start, sizeof(start), "%s", s != NULL ? s : "");
		*est = start;
	}
	json_decref(out);
	return id;
}

static void test_fifo_release_and_expiry(void **state)
{
	struct tb_error e = {0};
	const char *st, *est;
	long pos;
	long long a, b, c, d;
	int broke;

	(void)state;
	a = ask("left", "right", 3600, "alice", T0, &st, NULL, NULL);
	assert_string_equal(st, "granted");
	/* bob waits for left: first in the queue, from alice's end */
	b = ask("left", NULL, 600, "bob", T0 + 10, &st, &pos, &est);
	assert_string_equal(st, "queued");
	assert_int_equal(pos, 1);
	assert_string_equal(est, "2027-01-15T09:00:00Z"); /* T0 + 3600 */
	/* carol waits for right and left: after alice, then after bob's 600 s */
	c = ask("right", "left", 60, "carol", T0 + 20, &st, &pos, &est);
	assert_string_equal(st, "queued");
	assert_int_equal(pos, 2);
	assert_string_equal(est, "2027-01-15T09:10:00Z");
	/* dave on a free host is granted at once */
	d = ask("router", NULL, 60, "dave", T0 + 30, &st, NULL, NULL);
	assert_string_equal(st, "granted");

	/* while reserved: the owner may, anybody else gets the owner and end */
	assert_int_equal(tb_reserve_check(R, "left", "alice", &e), 0);
	assert_int_equal(tb_reserve_check(R, "left", "bob", &e), TB_ERR_CONFLICT);
	assert_non_null(strstr(e.message, "reserved by alice until 2027-01-15T09:00:00Z"));
	assert_int_equal(tb_reserve_check(R, "left", NULL, &e), TB_ERR_CONFLICT);
	assert_int_equal(tb_reserve_check(R, "other", "bob", &e), 0);

	/* bob may not end alice's; alice releases: bob (first) is granted, carol still waits */
	assert_int_equal(tb_reserve_release(R, a, "bob", 0, T0 + 100, &broke, &e), TB_ERR_FORBIDDEN);
	assert_int_equal(tb_reserve_release(R, a, "alice", 0, T0 + 100, &broke, &e), 0);
	assert_false(broke);
	assert_int_equal(tb_reserve_check(R, "left", "bob", &e), 0);
	assert_int_equal(tb_reserve_check(R, "left", "carol", &e), TB_ERR_CONFLICT);
	/* carol asked for right too: it is free now, but she waits for both (no half grant) */
	assert_int_equal(tb_reserve_check(R, "right", "alice", &e), 0);

	/* bob's 600 s end: expiry grants carol */
	tb_reserve_expire(R, T0 + 699);
	assert_int_equal(tb_reserve_check(R, "left", "carol", &e), TB_ERR_CONFLICT);
	tb_reserve_expire(R, T0 + 700);
	assert_int_equal(tb_reserve_check(R, "left", "carol", &e), 0);
	assert_int_equal(tb_reserve_check(R, "right", "bob", &e), TB_ERR_CONFLICT);

	/* an admin breaks carol's */
	assert_int_equal(tb_reserve_release(R, c, "root", 1, T0 + 701, &broke, &e), 0);
	assert_true(broke);
	assert_int_equal(tb_reserve_check(R, "left", "bob", &e), 0);
	assert_int_equal(tb_reserve_release(R, b, "bob", 0, T0 + 702, &broke, &e), TB_ERR_NOT_FOUND);
	assert_int_equal(tb_reserve_release(R, d, "dave", 0, T0 + 702, &broke, &e),
			 TB_ERR_NOT_FOUND); /* expired at T0 + 90 */
}

static void test_queue_is_fifo_per_host(void **state)
{
	struct tb_error e = {0};
	const char *st;
	long long a, b;
	int broke;

	(void)state;
	a = ask("left", NULL, 100, "alice", T0, &st, NULL, NULL);
	/* bob waits for left and right; carol's later ask for right must not jump ahead of him */
	b = ask("left", "right", 100, "bob", T0 + 1, &st, NULL, NULL);
	assert_string_equal(st, "queued");
	ask("right", NULL, 100, "carol", T0 + 2, &st, NULL, NULL);
	assert_string_equal(st, "queued");
	tb_reserve_expire(R, T0 + 100);
	assert_int_equal(tb_reserve_check(R, "right", "bob", &e), 0);
	assert_int_equal(tb_reserve_check(R, "right", "carol", &e), TB_ERR_CONFLICT);
	(void)a;
	assert_int_equal(tb_reserve_release(R, b, "bob", 0, T0 + 101, &broke, &e), 0);
	assert_int_equal(tb_reserve_check(R, "right", "bob", &e), TB_ERR_CONFLICT); /* carol's now */
	tb_reserve_expire(R, T0 + 100000);
	assert_int_equal(tb_reserve_check(R, "right", "bob", &e), 0);
}

static void test_bad_input(void **state)
{
	const char *hosts[1] = {"left"};
	struct tb_error e = {0};
	json_t *out = NULL;
	const char *st;

	(void)state;
	assert_int_equal(tb_reserve_request(R, hosts, 1, T0, "", "a", T0, &out, &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "until");
	assert_int_equal(tb_reserve_request(R, hosts, 1, T0 + 8 * 86400, "", "a", T0, &out, &e), TB_ERR_INVALID);
	assert_int_equal(tb_reserve_request(R, hosts, 0, T0 + 10, "", "a", T0, &out, &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "hosts");
	/* the same owner twice on one host */
	ask("left", NULL, 100, "a", T0, &st, NULL, NULL);
	assert_int_equal(tb_reserve_request(R, hosts, 1, T0 + 10, "", "a", T0, &out, &e), TB_ERR_CONFLICT);
	assert_null(out);
	tb_reserve_expire(R, T0 + 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_release_and_expiry),
		cmocka_unit_test(test_queue_is_fifo_per_host),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
