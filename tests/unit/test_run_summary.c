/*
 * test_run_summary.c - what a run keeps of its tool's results
 * (run_summary.c): the figures, iperf2's ends merged from the server's, the
 * interval rows and the summary JSON a run's row stores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "run_summary.h"

static json_t *load(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	return j;
}

static void test_figures(void **state)
{
	json_t *res = load("{\"end\": {\"sender\": {\"bits_per_second\": 9e9, \"retransmits\": 12},"
			   " \"receiver\": {\"bits_per_second\": 8.9e9, \"bytes\": 100}}}");
	json_t *stopped = load("{\"end\": {\"sender\": {\"bits_per_second\": 1e9}, \"receiver\": {\"bytes\": 0,"
			       " \"bits_per_second\": 0, \"lost_percent\": 0}}}");
	struct tb_run_row r = {0};

	(void)state;
	tb_run_figures(&r, res, false);
	assert_true(r.sender_bps == 9e9 && r.receiver_bps == 8.9e9 && r.retransmits == 12 && r.lost_percent == -1);
	tb_run_figures(&r, stopped, true); /* a stopped client's 0 received is no measurement */
	assert_true(r.sender_bps == 1e9 && r.receiver_bps == -1 && r.lost_percent == -1);
	tb_run_figures(&r, NULL, false);
	assert_true(r.sender_bps == -1 && r.receiver_bps == -1 && r.retransmits == -1);
	json_decref(res);
	json_decref(stopped);
}

static void test_merge_ends(void **state)
{
	json_t *c = load("{\"end\": {\"sender\": {\"bytes\": 5}}}"),
	       *s = load("{\"end\": {\"receiver\": {\"bytes\": 4},"
			 " \"sender\": {\"bytes\": 99}}}");
	json_t *bare = load("{}");

	(void)state;
	tb_run_merge_ends(c, s); /* the client's own side stays, the other comes from the server */
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(json_object_get(c, "end"), "sender"), "bytes")), 5);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(json_object_get(c, "end"), "receiver"), "bytes")),
		4);
	tb_run_merge_ends(bare, s);
	assert_non_null(json_object_get(json_object_get(bare, "end"), "receiver"));
	json_decref(c);
	json_decref(s);
	json_decref(bare);
}

static void test_rows_and_summary(void **state)
{
	json_t *c = load("{\"intervals\": [{\"a\": 1}, {\"a\": 2}], \"end\": {\"rr\": {\"transactions_per_s\": 10}},"
			 " \"cookie\": \"ck\", \"version\": \"3.12\", \"other\": 1}");
	json_t *s = load("{\"intervals\": [{\"b\": 1}], \"end\": null, \"error\": \"gone\"}");
	json_t *idle = load("{\"waited_s\": 1.5, \"busy\": \"right: x\"}"), *sum;
	struct tb_interval_row rows[4];
	size_t n = tb_run_interval_rows(c, "client", rows, 0, 4);
	char *text;

	(void)state;
	n = tb_run_interval_rows(s, "server", rows, n, 4);
	assert_int_equal(n, 3);
	assert_string_equal(rows[1].data, "{\"a\":2}");
	assert_int_equal(rows[1].seq, 1);
	assert_string_equal(rows[2].side, "server");
	assert_int_equal(tb_run_interval_rows(c, "client", rows, 3, 4), 4); /* never past max */
	for (size_t i = 0; i < 4; i++)
		free((void *)rows[i].data);
	text = tb_run_summary(c, s, "netperf-rr", idle, NULL);
	sum = load(text);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(sum, "client"), "rr"),
							    "transactions_per_s")),
			 10);
	assert_string_equal(json_string_value(json_object_get(sum, "cookie")), "ck");
	assert_null(json_object_get(sum, "other"));
	assert_string_equal(json_string_value(json_object_get(sum, "server_error")), "gone");
	assert_string_equal(json_string_value(json_object_get(sum, "tool")), "netperf-rr");
	assert_true(json_real_value(json_object_get(json_object_get(sum, "idle"), "waited_s")) == 1.5);
	assert_null(json_object_get(sum, "latency"));
	free(text);
	json_decref(sum);
	json_decref(c);
	json_decref(s);
	json_decref(idle);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_merge_ends),
		cmocka_unit_test(test_rows_and_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
