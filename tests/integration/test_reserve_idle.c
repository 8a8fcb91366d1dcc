/*
 * test_reserve_idle.c - idle power-off and reservations, on the real
 * testbedd (port 0): left is on (its command BMC says so: status echoes
 * "on") and idle after 3 one-second minutes (TESTBEDD_TEST_IDLE_MINUTE_S,
 * for tests).  While alice reserves it, GET /hosts/left shows its idle
 * power-off "held" (the reservation holds it as an action would), not a
 * countdown that the hold hook refuses at its end, every second; once she
 * releases it, the countdown is back.  right is off with a wake schedule
 * every minute: while alice reserves it, its wake is refused and GET
 * /hosts/right's wake.last says why (naming her).  Waits are bounds (up to
 * the next whole minute for the wake), not measurements.
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
static char alice[128];

static void req_as(const char *token, const char *method, const char *path, const char *body, struct tb_test_resp *r)
{
	char url[1024], auth[256];
	const char *h[3] = {auth, "Content-Type: application/json", NULL};

	snprintf(url, sizeof(url), "%s%s", D.url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	assert_int_equal(tb_test_http(method, url, h, body, body != NULL ? strlen(body) : 0, r), 0);
}

/* left's idle_poweroff.state once it is not "off" (the BMC's first read
 * says on), polled for at most 20 s; a state in want ends the wait early. */
static void idle_state(const char *want, char *st, size_t len)
{
	for (int i = 0; i < 200; i++) {
		struct tb_test_resp r;

		req_as(D.admin_token, "GET", "/api/v1/hosts/left", NULL, &r);
		assert_int_equal(r.status, 200);
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
	return tb_test_create_token(&D, "alice", "operator", alice, sizeof(alice)) == 201 ? 0 : -1;
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
	req_as(alice, "POST", "/api/v1/reservations", body, &r);
	assert_int_equal(r.status, 201);
	id = (long long)json_integer_value(json_object_get(json_object_get(r.json, "reservation"), "id"));
	tb_test_resp_free(&r);
	/* left is on and idle for far longer than 3 "minutes": held, not counting */
	idle_state("held", st, sizeof(st));
	nanosleep(&(struct timespec){4, 0}, NULL); /* past its 3 s: still held */
	idle_state("held", st, sizeof(st));
	assert_string_equal(st, "held");
	/* right's wake at the next whole minute is refused, and says why */
	for (int i = 0; i < 900 && wake[0] == '\0'; i++) {
		req_as(D.admin_token, "GET", "/api/v1/hosts/right", NULL, &r);
		assert_int_equal(r.status, 200);
		last = json_object_get(json_object_get(json_object_get(r.json, "host"), "wake"), "last");
		if (json_is_string(last))
			snprintf(wake, sizeof(wake), "%s", json_string_value(last));
		tb_test_resp_free(&r);
		if (wake[0] == '\0')
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	if (strstr(wake, "not powered on: right is reserved by alice until") == NULL)
		fail_msg("right's wake.last: \"%s\"", wake);

	snprintf(path, sizeof(path), "/api/v1/reservations/%lld", id);
	req_as(alice, "DELETE", path, NULL, &r);
	assert_int_equal(r.status, 204);
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
