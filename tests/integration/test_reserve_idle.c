/*
 * test_reserve_idle.c - idle power-off and reservations, on the real
 * testbedd (port 0): left is on (its command BMC says so: status echoes
 * "on") and idle after 3 one-second minutes (TESTBEDD_TEST_IDLE_MINUTE_S,
 * for tests).  While alice reserves it, GET /hosts/left shows its idle
 * power-off "held" (the reservation holds it as an action would), not a
 * countdown that the hold hook refuses at its end, every second; once she
 * releases it, the countdown is back.  right is off with a wake schedule
 * every minute: while alice reserves it, its wake is refused and GET
 * /hosts/right's wake.last says why (naming her); in the same minute bob's
 * schedule of a matrix on left and right does not start, naming her too
 * (a schedule's matrices are its author's).  Waits are bounds (up to the
 * next whole minute for the wake and the schedule), not measurements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon.h"

static const char inventory[] = "version: 1\n"
				"ssh:\n"
				"  user: root\n"
				"  key_file: %s\n"
				"  connect_timeout_s: 2\n"
				"machines:\n"
				"  left:\n"
				"    role: host\n"
				"    idle_poweroff_min: 3\n"
				"    power:\n"
				"      - driver: command\n"
				"        on: [\"true\"]\n"
				"        off: [\"true\"]\n"
				"        status: [echo, \"on\"]\n"
				"        off_pattern: \"^off$\"\n"
				"    os:\n"
				"      ubuntu: {address: 127.0.0.1, port: 9}\n"
				"    links:\n"
				"      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: data0}}\n"
				"  right:\n"
				"    role: host\n"
				"    wake_schedule: \"* * * * *\"\n"
				"    power:\n"
				"      - driver: command\n"
				"        on: [\"true\"]\n"
				"        status: [echo, \"off\"]\n"
				"        off_pattern: \"^off$\"\n"
				"    os:\n"
				"      ubuntu: {address: 127.0.0.3, port: 9}\n";

static struct tb_test_daemon D;
static char alice[128], bob[128];

/* left's idle_poweroff.state once it is not "off" (the BMC's first read
 * says on), polled for at most 20 s; a state in want ends the wait early. */
static void idle_state(const char *want, char *st, size_t len)
{
	for (int i = 0; i < 200; i++) {
		struct tb_test_resp r;

		tb_test_api_expect(&D, NULL, "GET", "/api/v1/hosts/left", NULL, 200, &r);
		snprintf(st, len, "%s",
			 json_string_value(json_object_get(
				 json_object_get(json_object_get(r.json, "host"), "idle_poweroff"), "state")));
		tb_test_resp_free(&r);
		if (strcmp(st, want) == 0)
			return;
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
}

static int setup(void **state)
{
	(void)state;
	setenv("TESTBEDD_TEST_IDLE_MINUTE_S", "1", 1);
	if (tb_test_daemon_start(&D, inventory, NULL) != 0)
		return -1;
	return tb_test_create_token(&D, "alice", "operator", alice, sizeof(alice)) == 201 &&
			       tb_test_create_token(&D, "bob", "operator", bob, sizeof(bob)) == 201
		       ? 0
		       : -1;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

static void test_reserved_host_is_held(void **state)
{
	char body[256], until[32], path[64], st[32], wake[512] = "";
	const json_t *last;
	time_t t = time(NULL) + 3600;
	struct tb_test_resp r;
	struct tm tm;
	long long id;

	(void)state;
	gmtime_r(&t, &tm);
	strftime(until, sizeof(until), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(body, sizeof(body), "{\"hosts\": [\"left\", \"right\"], \"until\": \"%s\", \"note\": \"bisect\"}",
		 until);
	tb_test_api_expect(&D, alice, "POST", "/api/v1/reservations", body, 201, &r);
	id = (long long)json_integer_value(json_object_get(json_object_get(r.json, "reservation"), "id"));
	tb_test_resp_free(&r);
	/* bob's schedule, every minute, of a matrix on alice's hosts */
	tb_test_api_expect(
		&D, bob, "POST", "/api/v1/specs",
		"{\"name\":\"nightly\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"duration_s\":1}", 201,
		&r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, bob, "PUT", "/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\"}", 200, &r);
	tb_test_resp_free(&r);
	/* left is on and idle for far longer than 3 "minutes": held, not counting */
	idle_state("held", st, sizeof(st));
	nanosleep(&(struct timespec){4, 0}, NULL); /* past its 3 s: still held */
	idle_state("held", st, sizeof(st));
	assert_string_equal(st, "held");
	/* right's wake at the next whole minute is refused, and says why */
	for (int i = 0; i < 900 && wake[0] == '\0'; i++) {
		tb_test_api_expect(&D, NULL, "GET", "/api/v1/hosts/right", NULL, 200, &r);
		last = json_object_get(json_object_get(json_object_get(r.json, "host"), "wake"), "last");
		if (json_is_string(last))
			snprintf(wake, sizeof(wake), "%s", json_string_value(last));
		tb_test_resp_free(&r);
		if (wake[0] == '\0')
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	if (strstr(wake, "not powered on: right is reserved by alice until") == NULL)
		fail_msg("right's wake.last: \"%s\"", wake);
	for (int i = 0; i < 900 && !tb_test_daemon_log_contains(&D, "nightly: not started: "); i++)
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	/* right is off: the schedule would power it on first, but alice holds it */
	assert_true(tb_test_daemon_log_contains(
		&D, "nightly: not started: right is off and is not powered on: right is reserved by alice until"));
	tb_test_api_expect(&D, bob, "DELETE", "/api/v1/specs/nightly/schedule", NULL, 204, &r);
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/reservations/%lld", id);
	tb_test_api_expect(&D, alice, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
	idle_state("counting", st, sizeof(st));
	assert_string_equal(st, "counting");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserved_host_is_held),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
