/*
 * test_notify_metrics.c - GET /metrics' notification families against the
 * real testbedd (port 0) and a real HTTP receiver on loopback
 * (tests/support/hookrx.h, allowed by the rule's allow_private_host): a
 * delivery moves testbedd_notify_sent_total of its sink kind, a 500 moves
 * testbedd_notify_failed_attempts_total, the retried message is counted in
 * testbedd_notify_pending and ages testbedd_notify_oldest_pending_age_seconds
 * until it goes through.  Retries are shortened with
 * TESTBEDD_TEST_NOTIFY_BACKOFF_MS; waits are bounds, not measurements.
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
#include "hookrx.h"

static struct tb_test_daemon d;
static struct tb_hookrx *rx;
static unsigned int rx_port;

/* The value of the sample named name (with its labels, as printed) in
 * GET /metrics; -1 when it is not there. */
static long long metric(const char *name)
{
	struct tb_test_resp r;
	long long v = -1;
	size_t n = strlen(name);

	tb_test_api_expect(&d, NULL, "GET", "/metrics", NULL, 200, &r);
	for (const char *p = r.body; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			v = atoll(p + n + 1);
	tb_test_resp_free(&r);
	return v;
}

/* Wait until the sample reaches at least want (30 s at most): its value. */
static long long wait_metric(const char *name, long long want)
{
	long long v = metric(name);

	for (int i = 0; i < 300 && v < want; i++) {
		struct timespec ts = {0, 100 * 1000 * 1000};

		nanosleep(&ts, NULL);
		v = metric(name);
	}
	if (v < want)
		fail_msg("%s is %lld, never %lld", name, v, want);
	return v;
}

static long long test_message(long long rule)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/notifications/%lld/test", rule);
	return tb_test_api_int(&d, NULL, "POST", path, NULL, 202, "delivery");
}

static void test_counters_move(void **state)
{
	char body[512];
	struct tb_test_resp r;
	long long rule;

	(void)state;
	/* nothing sent yet: every family is there, at zero */
	assert_int_equal(metric("testbedd_notify_sent_total{sink=\"json\"}"), 0);
	assert_int_equal(metric("testbedd_notify_failed_attempts_total{sink=\"json\"}"), 0);
	assert_int_equal(metric("testbedd_notify_given_up_total{sink=\"email\"}"), 0);
	assert_int_equal(metric("testbedd_notify_pending{sink=\"json\"}"), 0);
	assert_int_equal(metric("testbedd_notify_oldest_pending_age_seconds"), 0);

	snprintf(body, sizeof(body),
		 "{\"name\":\"m\",\"triggers\":[\"matrix.ended\"],\"sink\":{\"url\":\"http://127.0.0.1:%u/m\","
		 "\"allow_private_host\":\"127.0.0.1\"}}",
		 rx_port);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/notifications", body, 201, &r);
	rule = (long long)json_integer_value(json_object_get(r.json, "id"));
	tb_test_resp_free(&r);

	/* a delivery */
	test_message(rule);
	assert_int_equal(wait_metric("testbedd_notify_sent_total{sink=\"json\"}", 1), 1);
	assert_int_equal(metric("testbedd_notify_failed_attempts_total{sink=\"json\"}"), 0);
	assert_int_equal(metric("testbedd_notify_sent_total{sink=\"ntfy\"}"), 0);

	/* a receiver that answers 500 for a while: failed attempts, a pending
	 * message that ages */
	tb_hookrx_fail_next(rx, 1000, 500);
	test_message(rule);
	wait_metric("testbedd_notify_failed_attempts_total{sink=\"json\"}", 2);
	assert_int_equal(metric("testbedd_notify_pending{sink=\"json\"}"), 1);
	assert_int_equal(metric("testbedd_notify_pending{sink=\"email\"}"), 0);
	wait_metric("testbedd_notify_oldest_pending_age_seconds", 1);
	assert_int_equal(metric("testbedd_notify_sent_total{sink=\"json\"}"), 1);

	/* it comes back: the message goes through, nothing is left pending */
	tb_hookrx_fail_next(rx, 0, 500);
	assert_int_equal(wait_metric("testbedd_notify_sent_total{sink=\"json\"}", 2), 2);
	assert_int_equal(metric("testbedd_notify_pending{sink=\"json\"}"), 0);
	for (int i = 0; i < 50 && metric("testbedd_notify_oldest_pending_age_seconds") != 0; i++) {
		struct timespec ts = {0, 100 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	assert_int_equal(metric("testbedd_notify_oldest_pending_age_seconds"), 0);
}

static int setup(void **state)
{
	(void)state;
	/* the first retry after 100 ms, doubling: 8 attempts take about 13 s */
	setenv("TESTBEDD_TEST_NOTIFY_BACKOFF_MS", "100", 1);
	return tb_hookrx_start(&rx, &rx_port) != 0 || tb_test_daemon_start(&d, NULL, NULL) != 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	tb_hookrx_stop(rx);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_move),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
