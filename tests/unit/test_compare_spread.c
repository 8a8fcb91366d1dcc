/*
 * test_compare_spread.c - what compare.c says beyond the medians: the spread
 * of both sides and whether the interquartile ranges overlap, the metrics
 * where higher is worse (lost_percent, retransmits, jitter_ms), and the CSV
 * of a comparison and of a hosts diff (compare_csv.c).  Cells are written as
 * results' table would give them (Stats with q1/q3/cv); a table of cases,
 * one line each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"

/* A cell of protocol proto with the metric's Stats {median, q1, q3, cv}
 * (median < 0: no Stats, as a metric the protocol does not have). */
static json_t *cell(int n, const char *proto, const char *metric, double median, double q1, double q3)
{
	json_t *c = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:i}, s:i}", "cell", n, "client", "a",
			      "client_os", "linux", "server", "b", "server_os", "linux", "protocol", proto, "direction",
			      "forward", "params", "parallel", 1, "n", 3);

	if (median >= 0)
		json_object_set_new(c, metric,
				    json_pack("{s:i, s:f, s:f, s:f, s:f, s:b}", "n", 3, "median", median, "q1", q1,
					      "q3", q3, "cv", (q3 - q1) / (median > 0 ? median : 1), "noisy", 0));
	else
		json_object_set_new(c, metric, json_null());
	return c;
}

struct ab_case {
	const char *what, *metric, *proto;
	double bmed, bq1, bq3; /* the baseline's */
	double med, q1, q3;    /* the matrix's */
	const char *verdict;
	int overlap; /* 1, 0, -1: null */
	int beyond;  /* beyond the spread (IQRs apart and a change over max_drop 5 %): 1, 0, -1: null */
};

static const struct ab_case cases[] = {
	{"bps, same within spread", "receiver_bps", "tcp", 100, 95, 105, 98, 94, 103, "ok", 1, 0},
	{"bps, a 10% drop with IQRs apart", "receiver_bps", "udp", 100, 99, 101, 90, 89, 91, "dropped", 0, 1},
	{"bps, a 10% drop within the spread: the gate, not beyond", "receiver_bps", "udp", 100, 80, 120, 90, 70, 110,
	 "dropped", 1, 0},
	{"bps, a 3% drop with IQRs apart: less than max_drop, not beyond", "receiver_bps", "udp", 100, 99.5, 100.5, 97,
	 96.5, 97.5, "ok", 0, 0},
	/* the sim's paced TCP: repeats agree to 0.01 %, so a 0.02 % change has its IQRs apart */
	{"bps, a 0.02% change of a paced stream", "receiver_bps", "tcp", 10484654, 10484531, 10484685, 10482641,
	 9996860, 10483388, "ok", 0, 0},
	{"bps, a 30% rise", "sender_bps", "tcp", 100, 99, 101, 130, 129, 131, "ok", 0, 1},
	{"loss from 0 to 5%", "lost_percent", "udp", 0, 0, 0, 5, 4.8, 5.2, "dropped", 0, 1},
	{"loss from 0 to 0", "lost_percent", "udp", 0, 0, 0, 0, 0, 0, "ok", 1, 0},
	{"loss from 0 to a blip within the spread", "lost_percent", "udp", 0, 0, 0.2, 0.1, 0, 0.2, "ok", 1, 0},
	{"loss 2% to 2.05%", "lost_percent", "udp", 2, 1.9, 2.1, 2.05, 1.95, 2.1, "ok", 1, 0},
	{"loss 2% to 4%", "lost_percent", "udp", 2, 1.9, 2.1, 4, 3.9, 4.1, "dropped", 0, 1},
	{"loss 4% to 2%: better, beyond the spread", "lost_percent", "udp", 4, 3.9, 4.1, 2, 1.9, 2.1, "ok", 0, 1},
	{"tcp has no loss", "lost_percent", "tcp", -1, 0, 0, -1, 0, 0, "no_baseline", -1, -1},
	{"retransmits doubled", "retransmits", "tcp", 100, 90, 110, 200, 190, 210, "dropped", 0, 1},
	{"retransmits halved", "retransmits", "tcp", 100, 90, 110, 50, 45, 55, "ok", 0, 1},
	{"jitter up 20%, IQRs touching", "jitter_ms", "udp", 0.5, 0.45, 0.58, 0.6, 0.58, 0.62, "dropped", 1, 0},
	{"no result now", "jitter_ms", "udp", 0.5, 0.45, 0.55, -1, 0, 0, "failed", -1, -1},
};

/* A JSON true/false/null against 1/0/-1. */
static int tri(const json_t *v, int want)
{
	return want < 0 ? json_is_null(v) : json_is_boolean(v) && json_is_true(v) == (want == 1);
}

static const char *tri_text(const json_t *v)
{
	return json_is_null(v) ? "null" : json_is_true(v) ? "true" : json_is_false(v) ? "false" : "?";
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ab_case *k = &cases[i];
		json_t *cur = json_pack("[o]", cell(0, k->proto, k->metric, k->med, k->q1, k->q3));
		json_t *base = json_pack("[o]", cell(0, k->proto, k->metric, k->bmed, k->bq1, k->bq3));
		json_t *out = json_object(), *r, *ov, *by;

		assert_int_equal(tb_compare_cells(cur, base, k->metric, 5.0, out), 0);
		r = json_array_get(json_object_get(out, "cells"), 0);
		ov = json_object_get(r, "overlap");
		by = json_object_get(r, "beyond_spread");
		if (strcmp(json_string_value(json_object_get(r, "verdict")), k->verdict) != 0 || !tri(ov, k->overlap) ||
		    !tri(by, k->beyond))
			fail_msg("case \"%s\": verdict %s, overlap %s, beyond_spread %s", k->what,
				 json_string_value(json_object_get(r, "verdict")), tri_text(ov), tri_text(by));
		/* the list: exactly the cells beyond the spread */
		assert_int_equal(json_array_size(json_object_get(out, "beyond_spread")), k->beyond == 1 ? 1 : 0);
		assert_int_equal(json_is_true(json_object_get(out, "higher_is_worse")),
				 tb_compare_higher_is_worse(k->metric));
		/* both sides' spread is in the row */
		if (k->med >= 0 && k->bmed >= 0) {
			assert_true(fabs(json_number_value(json_object_get(r, "q1")) - k->q1) < 1e-9);
			assert_true(fabs(json_number_value(json_object_get(r, "baseline_q3")) - k->bq3) < 1e-9);
			assert_true(json_is_number(json_object_get(r, "cv")));
			assert_true(json_is_false(json_object_get(r, "baseline_noisy")));
		}
		json_decref(cur);
		json_decref(base);
		json_decref(out);
	}
}

/* A table without the spread (an older results table) still compares; the
 * spread members are null and nothing is said to be beyond it. */
static void test_without_spread(void **state)
{
	json_t *c = cell(0, "tcp", "receiver_bps", -1, 0, 0), *b = cell(0, "tcp", "receiver_bps", -1, 0, 0);
	json_t *cur, *base, *out = json_object(), *r;

	(void)state;
	json_object_set_new(c, "receiver_bps", json_pack("{s:i, s:f}", "n", 3, "median", 90.0));
	json_object_set_new(b, "receiver_bps", json_pack("{s:i, s:f}", "n", 3, "median", 100.0));
	cur = json_pack("[o]", c);
	base = json_pack("[o]", b);
	assert_int_equal(tb_compare_cells(cur, base, "receiver_bps", 5.0, out), 0);
	r = json_array_get(json_object_get(out, "cells"), 0);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "dropped");
	assert_true(json_is_null(json_object_get(r, "q1")));
	assert_true(json_is_null(json_object_get(r, "overlap")));
	assert_true(json_is_null(json_object_get(r, "beyond_spread")));
	assert_int_equal(json_array_size(json_object_get(out, "beyond_spread")), 0);
	json_decref(cur);
	json_decref(base);
	json_decref(out);
}

static void test_metrics(void **state)
{
	static const char *const ok[] = {"receiver_bps", "sender_bps", "lost_percent", "retransmits", "jitter_ms"};
	static const char *const bad[] = {"", "mean", "receiver_bps.median", "cpu", "lost"};

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		assert_true(tb_compare_metric_ok(ok[i]));
		assert_int_equal(tb_compare_higher_is_worse(ok[i]), i >= 2);
		assert_false(tb_compare_metric_ok(bad[i]));
	}
}

static void test_csv(void **state)
{
	json_t *cur = json_pack("[o, o]", cell(0, "tcp", "receiver_bps", 98, 94, 103),
				cell(1, "udp", "receiver_bps", 90, 89, 91));
	json_t *base = json_pack("[o, o]", cell(0, "tcp", "receiver_bps", 100, 95, 105),
				 cell(1, "udp", "receiver_bps", 100, 99, 101));
	json_t *out = json_object();
	char *csv = NULL;
	size_t len = 0;
	const char *line2;

	(void)state;
	json_object_set_new(json_object_get(json_array_get(cur, 1), "params"), "bitrate", json_string("10M"));
	json_object_set_new(json_object_get(json_array_get(base, 1), "params"), "bitrate", json_string("10M"));
	assert_int_equal(tb_compare_cells(cur, base, "receiver_bps", 5.0, out), 0);
	assert_int_equal(tb_compare_csv(out, &csv, &len), 0);
	assert_int_equal(strlen(csv), len);
	assert_non_null(strstr(csv, "cell,baseline_cell,client,client_os,"));
	assert_non_null(strstr(csv, ",overlap,beyond_spread,verdict\r\n"));
	line2 = strstr(csv, "\r\n") + 2;
	assert_true(strncmp(line2, "0,0,a,linux,b,linux,", 20) == 0);
	/* params as JSON, quoted (it holds commas and quotes) */
	assert_non_null(strstr(csv, ",\"{\"\"bitrate\"\":\"\"10M\"\",\"\"parallel\"\":1}\","));
	assert_non_null(strstr(csv, ",true,false,ok\r\n"));
	assert_non_null(strstr(csv, ",false,true,dropped\r\n"));
	/* three lines: the header and the two cells */
	assert_null(strstr(strstr(strstr(line2, "\r\n") + 2, "\r\n") + 2, "\r\n"));
	free(csv);
	json_decref(cur);
	json_decref(base);
	json_decref(out);
}

static void test_hosts_diff_csv(void **state)
{
	json_t *diff = json_pack(
		"{s:i, s:i, s:[{s:s, s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:[s], s:n}]}, {s:s, s:s, s:s, s:[]}, "
		"{s:s, s:s, s:s, s:[]}]}",
		"matrix", 2, "other", 1, "hosts", "host", "left", "os", "linux", "in", "both", "differences", "path",
		"kernel.release", "matrix", "6.8.0", "other", "6.5.0", "path", "nic.offloads", "matrix", "tso,gso",
		"other", "host", "right", "os", "linux", "in", "both", "differences", "host", "router", "os", "freebsd",
		"in", "other", "differences");
	char *csv = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(diff);
	assert_int_equal(tb_compare_hosts_diff_csv(diff, &csv, &len), 0);
	assert_string_equal(csv, "host,os,in,path,matrix,other\r\n"
				 "left,linux,both,kernel.release,6.8.0,6.5.0\r\n"
				 "left,linux,both,nic.offloads,\"[\"\"tso,gso\"\"]\",\r\n"
				 "router,freebsd,other,,,\r\n");
	free(csv);
	json_decref(diff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases), cmocka_unit_test(test_without_spread), cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_csv),   cmocka_unit_test(test_hosts_diff_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
