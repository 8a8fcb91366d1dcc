/*
 * test_run_load.c - a run's and a cell's load figures (run_load.h): the
 * arithmetic of the CPU summary (run_sample.h's tb_sample_summary: the
 * busiest core's mean and max, all cores' mean, the interrupt share), the
 * busiest router chosen among two, latency's idle and loaded median and
 * p95 from the bins' RTTs, a cell's medians (odd and even counts, runs
 * without a figure skipped), and a matrix's loads read back from a real
 * store: samples written in batches to run_samples (one transaction each)
 * and run.rtt events, each run its own, a later attempt's stream only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_load.h"
#include "run_sample.h"
#include "store.h"
#include "store_samples.h"
#include "tmpstore.h"

/* A sample of two cores: core 0 busy with user u0 and irq i0, core 1 idle
 * but for user u1; memory used m %. */
static json_t *sample(double u0, double i0, double u1, double m)
{
	return json_pack("{s:[{s:f, s:f, s:f, s:f, s:f}, {s:f, s:f, s:f, s:f, s:f}], s:i, s:{s:f}}", "cpu", "user", u0,
			 "system", 0.0, "interrupt", i0, "softirq", 0.0, "idle", 100.0 - u0 - i0, "user", u1, "system",
			 0.0, "interrupt", 0.0, "softirq", 0.0, "idle", 100.0 - u1, "busiest", 0, "mem", "used_pct", m);
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_summary_figures(void **state)
{
	json_t *s = json_array(), *sum;

	(void)state;
	/* core 0: 30+10, 50+10 busy -> mean 50, max 60; core 1: 10, 30 -> 20 */
	json_array_append_new(s, sample(30, 10, 10, 20));
	json_array_append_new(s, sample(50, 10, 30, 25));
	sum = tb_sample_summary(s);
	assert_non_null(sum);
	assert_int_equal(json_integer_value(json_object_get(sum, "busiest")), 0);
	assert_true(num(sum, "busiest_mean") == 50.0);
	assert_true(num(sum, "busiest_max") == 60.0);
	assert_true(num(sum, "busy_mean") == 35.0);        /* (40 + 60 + 10 + 30) / 4 */
	assert_true(num(sum, "interrupt_share") == 14.28); /* 20 of 140, cut to two decimals */
	assert_true(num(sum, "mem_used_max_pct") == 25.0);
	json_decref(sum);
	json_decref(s);
}

/* hosts as GET /runs/{id}/samples builds them */
static json_t *hosts3(void)
{
	json_t *h = json_object();

	json_object_set_new(
		h, "left",
		json_pack("{s:s, s:[o, o]}", "side", "client", "samples", sample(10, 0, 0, 10), sample(30, 0, 0, 10)));
	json_object_set_new(h, "right", json_pack("{s:s, s:[o]}", "side", "server", "samples", sample(70, 20, 5, 30)));
	json_object_set_new(h, "r1", json_pack("{s:s, s:[o]}", "side", "router", "samples", sample(5, 5, 0, 5)));
	json_object_set_new(h, "r2", json_pack("{s:s, s:[o]}", "side", "router", "samples", sample(10, 40, 0, 5)));
	return h;
}

/* bins with their packets' RTTs (ms) */
static json_t *bins(const double *rtt, size_t n)
{
	json_t *b = json_pack("{s:i, s:i, s:i, s:[]}", "t", 0, "n", (int)n, "lost", 0, "rtt");

	for (size_t i = 0; i < n; i++)
		json_array_append_new(json_object_get(b, "rtt"), json_real(rtt[i]));
	return json_pack("[o]", b);
}

static void test_run_load(void **state)
{
	static const double idle[] = {1, 2, 3}, load[] = {10, 20, 30, 40, 50};
	json_t *h = hosts3(), *bi = bins(idle, 3), *bl = bins(load, 5), *l;

	(void)state;
	l = tb_run_load_make(h, bi, bl);
	assert_non_null(l);
	assert_true(num(l, "client_busiest_mean") == 20.0);
	assert_true(num(l, "client_busiest_max") == 30.0);
	assert_true(num(l, "server_busiest_mean") == 90.0);
	assert_true(num(l, "server_interrupt_share") == 21.05);                     /* 20 of 95 */
	assert_string_equal(json_string_value(json_object_get(l, "router")), "r2"); /* 50 busy against r1's 10 */
	assert_true(num(l, "router_busiest_mean") == 50.0);
	assert_true(num(l, "router_interrupt_share") == 80.0);
	assert_true(num(l, "latency_idle_median_ms") == 2.0);
	assert_true(num(l, "latency_load_median_ms") == 30.0);
	assert_true(num(l, "latency_load_p95_ms") > 40.0 && num(l, "latency_load_p95_ms") <= 50.0);
	assert_int_equal(json_object_size(json_object_get(l, "hosts")), 4);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_object_get(l, "hosts"), "r1"), "side")),
		"router");
	json_decref(l);
	/* nothing measured: no load; latency alone is one */
	assert_null(tb_run_load_make(NULL, NULL, NULL));
	l = tb_run_load_make(NULL, NULL, bl);
	assert_non_null(l);
	assert_null(json_object_get(l, "client_busiest_mean"));
	assert_true(num(l, "latency_load_median_ms") == 30.0);
	json_decref(l);
	json_decref(h);
	json_decref(bi);
	json_decref(bl);
}

static void test_cell_medians(void **state)
{
	json_t *loads = json_loads(
		"[{\"client_busiest_mean\": 10, \"latency_load_p95_ms\": 7},"
		" {\"client_busiest_mean\": 40}, null,"
		" {\"client_busiest_mean\": 20.0, \"latency_load_p95_ms\": 9}, {\"client_busiest_mean\": 30}]",
		0, NULL);
	json_t *c = tb_run_load_cell(loads);

	(void)state;
	assert_non_null(c);
	assert_true(num(c, "client_busiest_mean") == 25.0); /* 10 20 30 40 */
	assert_true(num(c, "latency_load_p95_ms") == 8.0);  /* 7 9 */
	assert_null(json_object_get(c, "server_busiest_mean"));
	json_decref(c);
	json_decref(loads);
	loads = json_loads("[null, {}]", 0, NULL);
	assert_null(tb_run_load_cell(loads));
	json_decref(loads);
}

static void take_run_id(void *cls, const struct tb_run_row *r)
{
	((int64_t *)cls)[r->seq] = r->id;
}

static void test_matrix_loads_from_the_store(void **state)
{
	struct tb_test_store ts;
	struct tb_matrix_row m = {.name = "m", .spec = "{}", .state = "queued", .actor = "admin", .created_at = 1};
	struct tb_run_row runs[2];
	struct tb_sample_row rows[3];
	struct tb_error err = {0};
	int64_t mx, rid[2];
	char *js[3], key[24], text[200];
	json_t *loads, *l;

	(void)state;
	tb_test_store_open(&ts, "runload");
	for (int i = 0; i < 2; i++)
		runs[i] = (struct tb_run_row){.seq = i,
					      .client = "left",
					      .server = "right",
					      .link = "lan",
					      .server_address = "198.18.1.2",
					      .protocol = "tcp",
					      .direction = "forward",
					      .params = "{}"};
	assert_int_equal(tb_store_matrix_insert(ts.st, &m, runs, 2, &mx, &err), 0);
	assert_int_equal(tb_store_run_each(ts.st, mx, NULL, take_run_id, rid, &err), 0);
	/* run 0: two samples of left in one batch, one of the router in another */
	for (int i = 0; i < 3; i++) {
		json_t *s = sample(i == 2 ? 60 : 10.0 * (i + 1), 0, 0, 10);

		js[i] = json_dumps(s, JSON_COMPACT);
		json_decref(s);
	}
	rows[0] = (struct tb_sample_row){rid[0], "left", "client", 0, 1000, js[0]};
	rows[1] = (struct tb_sample_row){rid[0], "left", "client", 1, 2000, js[1]};
	rows[2] = (struct tb_sample_row){rid[0], "router", "router", 0, 1000, js[2]};
	if (tb_store_samples_add(ts.st, rows, 2, &err) != 0)
		fail_msg("%s", err.message);
	if (tb_store_samples_add(ts.st, rows + 2, 1, &err) != 0)
		fail_msg("%s", err.message);
	/* run 1: latency only, attempt 1's load stream replaced by attempt 2's */
	for (int i = 0; i < 3; i++) {
		struct tb_event_row ev = {.id = i + 1, .at = 1, .type = "run.rtt", .matrix = mx, .json = text};

		snprintf(text, sizeof(text),
			 "{\"data\":{\"run\":%lld,\"attempt\":%d,\"phase\":\"%s\",\"bin\":{\"t\":0,\"n\":1,\"lost\":0,"
			 "\"rtt\":[%d]}}}",
			 (long long)rid[1], i == 0 ? 1 : 2, i == 1 ? "idle" : "load", i == 0 ? 99 : 5 * i);
		assert_int_equal(tb_store_event_insert(ts.st, &ev, &err), 0);
	}
	if (tb_run_load_of_matrix(ts.st, mx, &loads, &err) != 0)
		fail_msg("%s", err.message);
	assert_int_equal(json_object_size(loads), 2);
	snprintf(key, sizeof(key), "%lld", (long long)rid[0]);
	l = json_object_get(loads, key);
	assert_true(num(l, "client_busiest_mean") == 15.0);
	assert_true(num(l, "router_busiest_max") == 60.0);
	assert_string_equal(json_string_value(json_object_get(l, "router")), "router");
	assert_null(json_object_get(l, "latency_load_median_ms"));
	snprintf(key, sizeof(key), "%lld", (long long)rid[1]);
	l = json_object_get(loads, key);
	assert_true(num(l, "latency_idle_median_ms") == 5.0);
	assert_true(num(l, "latency_load_median_ms") == 10.0); /* not attempt 1's 99 */
	assert_null(json_object_get(l, "client_busiest_mean"));
	json_decref(loads);
	for (int i = 0; i < 3; i++)
		free(js[i]);
	tb_test_store_remove(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_figures),
		cmocka_unit_test(test_run_load),
		cmocka_unit_test(test_cell_medians),
		cmocka_unit_test(test_matrix_loads_from_the_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
