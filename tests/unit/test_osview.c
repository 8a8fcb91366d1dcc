/*
 * test_osview.c - the OS side-by-side view (osview.h) on a constructed
 * results table: cells as tb_results_table_json makes them (Stats with
 * their spread from stats.h), two OS pairs facing each other per slot, the
 * difference, IQR overlap, the U test only with n >= 3 a side, sender
 * against receiver flagged as loss, and the bad-input cases.  Pure: no
 * store, no daemon.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "osview.h"
#include "stats.h"

#define NEAR(a, b, eps) assert_true(fabs((a) - (b)) < (eps))

static json_t *stats_of(const double *v, int n)
{
	struct tb_stats s;
	json_t *j;

	tb_stats_compute(v, n, &s);
	j = tb_stats_json(&s);
	if (n > 0)
		assert_int_equal(tb_stats_json_spread(j, &s, v, n, TB_STATS_NOISY_CV), 0);
	return j;
}

/* A cell of the table: tx/rx the sender's and receiver's bits/s of n runs. */
static json_t *cell(int no, const char *cos, const char *sos, const char *proto, int duration, const double *tx,
		    const double *rx, int n)
{
	json_t *c = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:{s:i}, s:s, s:s, s:i, s:i, s:i, s:o, s:o}", "cell", no,
			      "client", "left", "server", "right", "link", "lan", "protocol", proto, "direction",
			      "forward", "params", "duration_s", duration, "client_os", cos, "server_os", sos, "runs",
			      n, "failed", 0, "n", n, "sender_bps", stats_of(tx, n), "receiver_bps", stats_of(rx, n));

	assert_non_null(c);
	return c;
}

static json_t *table(void)
{
	static const double tcp_u[] = {10e9, 10.1e9, 10.2e9}, tcp_f[] = {15e9, 15.1e9, 15.2e9},
			    udp_tx[] = {3.11e9, 3.11e9, 3.11e9}, udp_u[] = {1.74e9, 1.75e9, 1.73e9},
			    udp_f[] = {3.05e9, 3.04e9, 3.06e9}, two[] = {5e9, 5.01e9};
	json_t *cells = json_array(), *t;

	json_array_append_new(cells, cell(0, "ubuntu", "ubuntu", "tcp", 2, tcp_u, tcp_u, 3));
	json_array_append_new(cells, cell(1, "freebsd", "freebsd", "tcp", 2, tcp_f, tcp_f, 3));
	json_array_append_new(cells, cell(2, "ubuntu", "ubuntu", "udp", 2, udp_tx, udp_u, 3));
	json_array_append_new(cells, cell(3, "freebsd", "freebsd", "udp", 2, udp_tx, udp_f, 3));
	json_array_append_new(cells, cell(4, "ubuntu", "freebsd", "tcp", 2, tcp_u, tcp_u, 3));
	json_array_append_new(cells, cell(5, "ubuntu+freebsd", "ubuntu", "tcp", 2, tcp_u, tcp_u, 3)); /* mixed */
	json_array_append_new(cells, cell(6, "freebsd", "freebsd", "tcp", 9, two, two, 2)); /* no ubuntu twin */
	json_array_append_new(cells, cell(7, "ubuntu", "ubuntu", "tcp", 4, two, two, 2));
	json_array_append_new(cells, cell(8, "freebsd", "freebsd", "tcp", 4, two, two, 2));
	json_array_append_new(cells, json_null()); /* a cell that never ran */
	t = json_pack("{s:i, s:s, s:s, s:o}", "matrix", 7, "name", "os", "state", "succeeded", "cells", cells);
	assert_non_null(t);
	return t;
}

static const json_t *row_with(const json_t *rows, const char *proto, int duration)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		if (strcmp(json_string_value(json_object_get(r, "protocol")), proto) == 0 &&
		    json_integer_value(json_object_get(json_object_get(r, "params"), "duration_s")) == duration)
			return r;
	}
	fail_msg("no %s row of %d s", proto, duration);
	return NULL;
}

static void test_side_by_side(void **state)
{
	struct tb_error err = {0};
	json_t *t = table(), *v = NULL, *pairs, *rows;
	const json_t *r, *mw, *a, *b;

	(void)state;
	assert_int_equal(tb_osview_json(t, "ubuntu/ubuntu", "freebsd/freebsd", "receiver_bps", 0.05, &v, &err), 0);
	assert_string_equal(json_string_value(json_object_get(v, "a")), "ubuntu/ubuntu");
	pairs = json_object_get(v, "pairs");
	assert_int_equal(json_array_size(pairs), 3); /* the mixed cell is no pair */
	assert_string_equal(json_string_value(json_object_get(json_array_get(pairs, 0), "os")), "freebsd/freebsd");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pairs, 0), "cells")), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(pairs, 1), "client_os")), "ubuntu");
	assert_string_equal(json_string_value(json_object_get(json_array_get(pairs, 1), "server_os")), "freebsd");
	rows = json_object_get(v, "rows");
	assert_int_equal(json_array_size(rows), 4); /* tcp 2 s, udp 2 s, tcp 9 s (b only), tcp 4 s */

	/* TCP: FreeBSD 49 % faster, beyond the spread, U exact p = 0.1 (the least 3 against 3 can give) */
	r = row_with(rows, "tcp", 2);
	NEAR(json_real_value(json_object_get(r, "diff_percent")), (15.1 - 10.1) / 10.1 * 100, 1e-9);
	assert_true(json_is_false(json_object_get(r, "iqr_overlap")));
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "beyond_spread");
	mw = json_object_get(r, "mann_whitney");
	assert_string_equal(json_string_value(json_object_get(mw, "method")), "exact");
	NEAR(json_real_value(json_object_get(mw, "p")), 0.1, 1e-12);
	NEAR(json_real_value(json_object_get(mw, "u")), 0, 1e-12);
	a = json_object_get(r, "a");
	assert_int_equal(json_integer_value(json_object_get(a, "cell")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "b"), "cell")), 1);
	NEAR(json_real_value(json_object_get(json_object_get(a, "stats"), "q1")), 10.05e9, 1);
	assert_int_equal(json_array_size(json_object_get(json_object_get(a, "stats"), "values")), 3);

	/* UDP: Ubuntu sent 3.11 and received 1.74 Gbit/s: loss on side a only */
	r = row_with(rows, "udp", 2);
	a = json_object_get(r, "a");
	b = json_object_get(r, "b");
	assert_true(json_is_true(json_object_get(a, "loss")));
	NEAR(json_real_value(json_object_get(a, "gap_percent")), (3.11 - 1.74) / 3.11 * 100, 1e-9);
	assert_true(json_is_false(json_object_get(b, "loss")));
	NEAR(json_real_value(json_object_get(b, "gap_percent")), (3.11 - 3.05) / 3.11 * 100, 1e-9);

	/* one side missing; n = 2 a side: no U test, overlap still said */
	r = row_with(rows, "tcp", 9);
	assert_true(json_is_null(json_object_get(r, "a")));
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "missing");
	assert_true(json_is_null(json_object_get(r, "iqr_overlap")));
	r = row_with(rows, "tcp", 4);
	assert_true(json_is_null(json_object_get(r, "mann_whitney")));
	assert_true(json_is_true(json_object_get(r, "iqr_overlap")));
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "within_spread");
	NEAR(json_real_value(json_object_get(r, "diff_percent")), 0, 1e-9);
	json_decref(v);

	/* another metric: the sender's side by side; UDP sent the same on both */
	assert_int_equal(tb_osview_json(t, "ubuntu/ubuntu", "freebsd/freebsd", "sender_bps", 0.05, &v, &err), 0);
	r = row_with(json_object_get(v, "rows"), "udp", 2);
	NEAR(json_real_value(json_object_get(r, "diff_percent")), 0, 1e-9);
	mw = json_object_get(r, "mann_whitney"); /* every value ties: normal approximation, p = 1 */
	assert_string_equal(json_string_value(json_object_get(mw, "method")), "normal");
	NEAR(json_real_value(json_object_get(mw, "p")), 1, 1e-12);
	json_decref(v);

	/* nothing named: the first two pairs by name */
	assert_int_equal(tb_osview_json(t, NULL, NULL, "receiver_bps", 0.05, &v, &err), 0);
	assert_string_equal(json_string_value(json_object_get(v, "a")), "freebsd/freebsd");
	assert_string_equal(json_string_value(json_object_get(v, "b")), "ubuntu/freebsd");
	json_decref(v);
	assert_int_equal(tb_osview_json(t, NULL, "freebsd/freebsd", "receiver_bps", 0.05, &v, &err), 0);
	assert_string_equal(json_string_value(json_object_get(v, "a")), "ubuntu/freebsd");
	json_decref(v);
	json_decref(t);
}

static void test_bad_input(void **state)
{
	static const char *const good[] = {"ubuntu/ubuntu", "freebsd/ubuntu", "a/b", NULL};
	static const char *const bad[] = {"ubuntu", "a/b/c", "/ubuntu", "ubuntu/", "Ubuntu/x", "a b/c", "", NULL};
	struct tb_error err = {0};
	json_t *t = table(), *v = NULL, *empty;

	(void)state;
	for (int i = 0; good[i] != NULL; i++)
		assert_true(tb_osview_pair_ok(good[i]));
	for (int i = 0; bad[i] != NULL; i++)
		assert_false(tb_osview_pair_ok(bad[i]));
	assert_true(tb_compare_metric_ok("lost_percent"));
	assert_false(tb_compare_metric_ok("cpu"));
	assert_false(tb_compare_metric_ok(NULL));
	assert_int_equal(tb_osview_json(t, "windows/windows", NULL, "receiver_bps", 0.05, &v, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "a");
	assert_null(v);
	assert_int_equal(tb_osview_json(t, "ubuntu/ubuntu", "ubuntu/ubuntu", "receiver_bps", 0.05, &v, &err),
			 TB_ERR_INVALID);
	assert_string_equal(err.field, "b");
	assert_int_equal(tb_osview_json(t, "ubuntu/ubuntu", "x/y", "receiver_bps", 0.05, &v, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "b");
	json_decref(t);
	/* a matrix with no OS pair (nothing ran yet): no rows, a and b null */
	empty = json_pack("{s:i, s:s, s:s, s:[n]}", "matrix", 1, "name", "x", "state", "queued", "cells");
	assert_int_equal(tb_osview_json(empty, NULL, NULL, "receiver_bps", 0.05, &v, &err), 0);
	assert_int_equal(json_array_size(json_object_get(v, "rows")), 0);
	assert_true(json_is_null(json_object_get(v, "a")));
	json_decref(v);
	json_decref(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_side_by_side),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
