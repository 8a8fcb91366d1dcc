/*
 * test_reserve_api.c - reservations against the real testbedd on port 0
 * (loopback inventory: nothing answers, which a hold does not need).
 *
 * Covered: operator alice reserves left and right (201 granted); operator
 * bob's boot of left and his matrix on left and right get 409 naming alice
 * and the end, alice's own boot is accepted (202) and her matrix too (201); bob's reservation of left is queued (position 1) and
 * carol's after it (position 2); alice releases: bob's is granted; bob's
 * ends by itself (2 s): carol's is granted; GET /hosts/left shows the
 * reservation; bob cannot end carol's (403), an admin breaks it (204,
 * audited as broken); a viewer cannot reserve; bad input names its field;
 * tbctl reserve --for (granted, then queued at position 1), tbctl hosts
 * shows it, tbctl release (all of one's own) grants the next, tbctl
 * reservations lists it, tbctl reserve --wait returns once granted; a granted and a queued reservation come back as
 * they were after a restart (kept in the store).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static struct tb_test_daemon D;
static const char MATRIX[] = "{\"name\": \"r\", \"pairs\": [{\"client\": \"right\", \"server\": \"left\"}],"
			     " \"protocols\": [\"tcp\"], \"duration_s\": 1, \"repeats\": 1}";
static char alice[128], bob[128], carol[128], viewer[128];

/* POST /reservations for hosts (a JSON list) ending in s seconds. */
static void reserve(const char *token, const char *hosts, long s, struct tb_test_resp *r)
{
	char body[256], until[32];
	time_t t = time(NULL) + s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(until, sizeof(until), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(body, sizeof(body), "{\"hosts\": %s, \"until\": \"%s\", \"note\": \"test\"}", hosts, until);
	tb_test_api(&D, token, "POST", "/api/v1/reservations", body, r);
}

static long long id_of(const struct tb_test_resp *r)
{
	return json_integer_value(json_object_get(json_object_get(r->json, "reservation"), "id"));
}

static const char *state_of(const struct tb_test_resp *r)
{
	return json_string_value(json_object_get(json_object_get(r->json, "reservation"), "state"));
}

/* The state of reservation id in GET /reservations ("" when gone). */
static void state_in_list(long long id, char *st, size_t len)
{
	struct tb_test_resp r;
	json_t *v;
	size_t i;

	st[0] = '\0';
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/reservations", NULL, 200, &r);
	json_array_foreach(json_object_get(r.json, "reservations"), i, v)
	{
		if (json_integer_value(json_object_get(v, "id")) == id)
			snprintf(st, len, "%s", json_string_value(json_object_get(v, "state")));
	}
	tb_test_resp_free(&r);
}

/* Poll (at most 10 s) until reservation id is in state want. */
static void wait_state(long long id, const char *want)
{
	char st[32];

	for (int i = 0; i < 200; i++) {
		state_in_list(id, st, sizeof(st));
		if (strcmp(st, want) == 0)
			return;
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
	fail_msg("reservation %lld is \"%s\", not %s", id, st, want);
}

static int setup(void **state)
{
	(void)state;
	if (tb_test_daemon_start(&D, NULL, NULL) != 0)
		return -1;
	if (tb_test_create_token(&D, "alice", "operator", alice, sizeof(alice)) != 201 ||
	    tb_test_create_token(&D, "bob", "operator", bob, sizeof(bob)) != 201 ||
	    tb_test_create_token(&D, "carol", "operator", carol, sizeof(carol)) != 201 ||
	    tb_test_create_token(&D, "v", "viewer", viewer, sizeof(viewer)) != 201)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

static void test_reserve_blocks_others_and_queues(void **state)
{
	struct tb_test_resp r;
	long long a, b, c;
	const char *msg;
	char path[64], st[32];

	(void)state;
	reserve(alice, "[\"left\", \"right\"]", 3600, &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(state_of(&r), "granted");
	a = id_of(&r);
	tb_test_resp_free(&r);

	/* bob's action on left: 409 naming alice and the end */
	tb_test_api_expect(&D, bob, "POST", "/api/v1/hosts/left/boot", "{\"os\": \"freebsd\"}", 409, &r);
	msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
	assert_non_null(strstr(msg, "left is reserved by alice until 20"));
	tb_test_resp_free(&r);
	/* and bob's matrix on left and right: 409 at once, naming alice */
	tb_test_api_expect(&D, bob, "POST", "/api/v1/matrices", MATRIX, 409, &r);
	assert_non_null(strstr(r.body, "reserved by alice until"));
	tb_test_resp_free(&r);
	/* alice's own goes through (it fails later: nothing listens) */
	tb_test_api_expect(&D, alice, "POST", "/api/v1/hosts/left/boot", "{\"os\": \"freebsd\"}", 202, &r);
	tb_test_resp_free(&r);

	tb_test_api_expect(&D, alice, "POST", "/api/v1/matrices", MATRIX, 201, &r);
	tb_test_resp_free(&r);
	/* the hosts page sees it */
	tb_test_api(&D, viewer, "GET", "/api/v1/hosts/right", NULL, &r);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(r.json, "host"), "reservation"), "owner")),
			    "alice");
	tb_test_resp_free(&r);

	/* bob waits (2 s once granted), carol after him */
	reserve(bob, "[\"left\"]", 2, &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(state_of(&r), "queued");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r.json, "reservation"), "position")), 1);
	b = id_of(&r);
	tb_test_resp_free(&r);
	reserve(carol, "[\"left\"]", 600, &r);
	assert_string_equal(state_of(&r), "queued");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r.json, "reservation"), "position")), 2);
	c = id_of(&r);
	tb_test_resp_free(&r);

	/* bob cannot end alice's; alice releases: bob's is granted */
	snprintf(path, sizeof(path), "/api/v1/reservations/%lld", a);
	tb_test_api_expect(&D, bob, "DELETE", path, NULL, 403, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, alice, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
	wait_state(b, "granted");
	/* carol's is still there: queued, or granted already if bob's 1-2 s ran out */
	state_in_list(c, st, sizeof(st));
	if (strcmp(st, "queued") != 0 && strcmp(st, "granted") != 0)
		fail_msg("carol's reservation is \"%s\"", st);
	/* bob's 2 s end by themselves: carol's is granted */
	wait_state(c, "granted");
	tb_test_api_expect(&D, bob, "POST", "/api/v1/hosts/left/boot", "{\"os\": \"freebsd\"}", 409, &r);
	assert_non_null(strstr(r.body, "reserved by carol"));
	tb_test_resp_free(&r);

	/* an admin breaks carol's; the audit says so */
	snprintf(path, sizeof(path), "/api/v1/reservations/%lld", c);
	tb_test_api_expect(&D, bob, "DELETE", path, NULL, 403, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
	tb_test_api(&D, NULL, "GET", "/api/v1/audit?limit=50", NULL, &r);
	assert_non_null(strstr(r.body, "(broken)"));
	tb_test_resp_free(&r);
}

static void test_bad_input(void **state)
{
	static const struct {
		const char *token_name, *body;
		long status;
		const char *field;
	} cases[] = {
		{"viewer", "{\"hosts\": [\"left\"], \"until\": \"2099-01-01T00:00:00Z\"}", 403, NULL},
		{"bob", "{\"hosts\": [\"nope\"], \"until\": \"2099-01-01T00:00:00Z\"}", 400, "hosts"},
		{"bob", "{\"hosts\": [], \"until\": \"2099-01-01T00:00:00Z\"}", 400, "hosts"},
		{"bob", "{\"hosts\": [\"left\", \"left\"], \"until\": \"2099-01-01T00:00:00Z\"}", 400, "hosts"},
		{"bob", "{\"hosts\": [\"left\"], \"until\": \"tomorrow\"}", 400, "until"},
		{"bob", "{\"hosts\": [\"left\"], \"until\": \"2020-01-01T00:00:00Z\"}", 400, "until"},
		{"bob", "{\"hosts\": [\"left\"]}", 400, "until"},
		{"bob", "{\"hosts\": [\"left\"], \"until\": \"2099-01-01T00:00:00Z\", \"x\": 1}", 400, "x"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_test_resp r;

		tb_test_api(&D, strcmp(cases[i].token_name, "viewer") == 0 ? viewer : bob, "POST",
			    "/api/v1/reservations", cases[i].body, &r);
		if (r.status != cases[i].status)
			fail_msg("case %zu: %ld %s", i, r.status, r.body);
		if (cases[i].field != NULL)
			assert_string_equal(
				json_string_value(json_object_get(json_object_get(r.json, "error"), "field")),
				cases[i].field);
		tb_test_resp_free(&r);
	}
}

static void test_tbctl(void **state)
{
	char out[8192];

	(void)state;
	assert_int_equal(tb_test_tbctl(&D, alice,
				       (const char *const[]){"reserve", "right", "--for", "1h", "--note", "demo", NULL},
				       out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, " right granted to alice until "));
	assert_int_equal(tb_test_tbctl(&D, bob, (const char *const[]){"reserve", "right", "--for", "10m", NULL}, out,
				       sizeof(out)),
			 0);
	assert_non_null(strstr(out, " right queued for bob at position 1, estimated start "));
	assert_int_equal(tb_test_tbctl(&D, bob, (const char *const[]){"hosts", NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "by alice until"));
	assert_int_equal(tb_test_tbctl(&D, bob, (const char *const[]){"reserve", "right", NULL}, out, sizeof(out)), 1);
	/* a length past any calendar is a usage mistake, not a garbage time sent */
	assert_int_equal(tb_test_tbctl(&D, bob,
				       (const char *const[]){"reserve", "right", "--for", "9999999999999d", NULL}, out,
				       sizeof(out)),
			 1);
	assert_int_equal(tb_test_tbctl(&D, alice, (const char *const[]){"release", NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "released reservation"));
	assert_int_equal(tb_test_tbctl(&D, bob, (const char *const[]){"reservations", NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, " right granted to bob until "));
	assert_int_equal(tb_test_tbctl(&D, bob, (const char *const[]){"release", NULL}, out, sizeof(out)), 0);

	/* --wait: carol's tbctl waits behind alice's and ends when it is granted */
	{
		struct tb_test_tbctl t;
		char waited[1024];
		int queued = 0;

		assert_int_equal(tb_test_tbctl(&D, alice,
					       (const char *const[]){"reserve", "right", "--for", "1h", NULL}, out,
					       sizeof(out)),
				 0);
		tb_test_tbctl_spawn(&D, carol, (const char *const[]){"reserve", "right", "--for", "1m", "--wait", NULL},
				    &t);
		/* carol's is queued behind alice's before alice releases (else nothing waited) */
		for (int i = 0; i < 200 && !queued; i++) {
			struct tb_test_resp r;

			tb_test_api(&D, NULL, "GET", "/api/v1/reservations", NULL, &r);
			queued = strstr(r.body, "\"queued\"") != NULL;
			tb_test_resp_free(&r);
			if (!queued)
				nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
		}
		assert_true(queued);
		/* alice releases through the API */
		{
			struct tb_test_resp r;
			json_t *v;
			size_t i;

			tb_test_api(&D, NULL, "GET", "/api/v1/reservations", NULL, &r);
			json_array_foreach(json_object_get(r.json, "reservations"), i, v)
			{
				char path[64];
				struct tb_test_resp d;

				if (strcmp(json_string_value(json_object_get(v, "owner")), "alice") != 0)
					continue;
				snprintf(path, sizeof(path), "/api/v1/reservations/%lld",
					 (long long)json_integer_value(json_object_get(v, "id")));
				tb_test_api_expect(&D, alice, "DELETE", path, NULL, 204, &d);
				tb_test_resp_free(&d);
			}
			tb_test_resp_free(&r);
		}
		assert_int_equal(tb_test_tbctl_wait(&t, waited, sizeof(waited)), 0);
		assert_non_null(strstr(waited, " right granted to carol until "));
		assert_int_equal(tb_test_tbctl(&D, carol, (const char *const[]){"release", NULL}, out, sizeof(out)), 0);
	}
}

/* Kept across a restart: alice's granted one and bob's queued one come back
 * as they were, and bob is still refused. */
static void test_restart(void **state)
{
	struct tb_test_resp r;
	long long a, b;
	char st[32], path[64];

	(void)state;
	reserve(alice, "[\"left\"]", 3600, &r);
	assert_int_equal(r.status, 201);
	a = id_of(&r);
	tb_test_resp_free(&r);
	reserve(bob, "[\"left\"]", 600, &r);
	assert_string_equal(state_of(&r), "queued");
	b = id_of(&r);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_kill(&D), 0);
	assert_int_equal(tb_test_daemon_launch(&D, NULL, 0), 0);
	state_in_list(a, st, sizeof(st));
	assert_string_equal(st, "granted");
	state_in_list(b, st, sizeof(st));
	assert_string_equal(st, "queued");
	tb_test_api_expect(&D, bob, "POST", "/api/v1/hosts/left/boot", "{\"os\": \"freebsd\"}", 409, &r);
	assert_non_null(strstr(r.body, "reserved by alice"));
	tb_test_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/reservations/%lld", a);
	tb_test_api_expect(&D, alice, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
	wait_state(b, "granted");
	/* a new one after the restart does not reuse an id */
	reserve(carol, "[\"right\"]", 60, &r);
	assert_true(id_of(&r) > b);
	tb_test_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_blocks_others_and_queues),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_tbctl),
		cmocka_unit_test(test_restart),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
