/*
 * test_stats.c - stats.h on fixed data: quartiles by the stated method (R
 * type 7 / numpy's default), the coefficient of variation and the noisy
 * flag, the spread in JSON, and the two-sided Mann-Whitney U test against
 * values R's wilcox.test gives (its help page's example: W = 35, one-sided
 * p = 0.1272, so two-sided 0.2544) and against an independent count of
 * the U distribution (tests/unit/test_stats.c's numbers were checked with
 * a brute-force enumeration of rank subsets and the recurrence
 * c(m,n,u) = c(m-1,n,u-n) + c(m,n-1,u)).  Pure: no store, no daemon.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "stats.h"

#define NEAR(a, b, eps) assert_true(fabs((a) - (b)) < (eps))

static void test_quartiles(void **state)
{
	/* R: quantile(x, c(.25,.75)) (type 7) */
	static const struct {
		double v[8];
		int n;
		double q1, q3;
	} cases[] = {
		{{1, 2, 3, 4}, 4, 1.75, 3.25},
		{{4, 3, 2, 1}, 4, 1.75, 3.25}, /* order does not matter */
		{{2, 4, 4, 4, 5, 5, 7, 9}, 8, 4, 5.5},
		{{12.9, 15.7, 16.5}, 3, 14.3, 16.1},
		{{7.5}, 1, 7.5, 7.5},
		{{1, 10}, 2, 3.25, 7.75},
		{{6, 7, 15, 36, 39, 40, 41, 42}, 8, 13, 40.25},
	};
	struct tb_stats s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tb_stats_compute(cases[i].v, cases[i].n, &s);
		NEAR(s.q1, cases[i].q1, 1e-9);
		NEAR(s.q3, cases[i].q3, 1e-9);
	}
	{
		static const double sorted[] = {1, 2, 3, 4, 5};

		NEAR(tb_stats_quantile(sorted, 5, 0), 1, 1e-12);
		NEAR(tb_stats_quantile(sorted, 5, 1), 5, 1e-12);
		NEAR(tb_stats_quantile(sorted, 5, 0.5), 3, 1e-12);
		NEAR(tb_stats_quantile(sorted, 5, 0.1), 1.4, 1e-12);
		assert_true(isnan(tb_stats_quantile(sorted, 0, 0.5)));
	}
}

static void test_cv_noisy(void **state)
{
	static const double steady[] = {100, 101, 99}, demo[] = {12.9, 15.7, 16.5}, zeros[] = {0, 0, 0},
			    around0[] = {-1, 1}, one[] = {5};
	struct tb_stats s;

	(void)state;
	tb_stats_compute(steady, 3, &s);
	NEAR(s.cv, 0.01, 1e-12); /* stdev 1, mean 100 */
	assert_false(tb_stats_noisy(&s, TB_STATS_NOISY_CV));
	assert_true(tb_stats_noisy(&s, 0.005));
	/* the demo's TCP forward baseline: 12.9, 15.7, 16.5 Gbit/s */
	tb_stats_compute(demo, 3, &s);
	NEAR(s.cv, 1.8903262505010435 / 15.033333333333333, 1e-9);
	assert_true(tb_stats_noisy(&s, TB_STATS_NOISY_CV));
	assert_false(tb_stats_noisy(&s, 0.2));
	tb_stats_compute(zeros, 3, &s);
	assert_true(s.cv == 0);
	assert_false(tb_stats_noisy(&s, TB_STATS_NOISY_CV));
	tb_stats_compute(around0, 2, &s);
	assert_true(isnan(s.cv));
	assert_true(tb_stats_noisy(&s, TB_STATS_NOISY_CV));
	tb_stats_compute(one, 1, &s); /* one value: cannot say */
	assert_true(s.cv == 0);
	assert_false(tb_stats_noisy(&s, 0));
}

static void test_spread_json(void **state)
{
	static const double v[] = {16.5, 12.9, 15.7};
	struct tb_stats s;
	json_t *j, *vals;

	(void)state;
	tb_stats_compute(v, 3, &s);
	j = tb_stats_json(&s);
	assert_int_equal(tb_stats_json_spread(j, &s, v, 3, TB_STATS_NOISY_CV), 0);
	assert_int_equal(json_object_size(j), 11);
	NEAR(json_real_value(json_object_get(j, "q1")), 14.3, 1e-9);
	NEAR(json_real_value(json_object_get(j, "q3")), 16.1, 1e-9);
	NEAR(json_real_value(json_object_get(j, "cv")), s.cv, 1e-12);
	assert_true(json_is_true(json_object_get(j, "noisy")));
	vals = json_object_get(j, "values");
	assert_int_equal(json_array_size(vals), 3);
	NEAR(json_real_value(json_array_get(vals, 0)), 16.5, 1e-12); /* the order of the runs */
	NEAR(json_real_value(json_array_get(vals, 2)), 15.7, 1e-12);
	assert_int_equal(tb_stats_json_spread(j, &s, v, 3, 0.5), 0);
	assert_true(json_is_false(json_object_get(j, "noisy")));
	json_decref(j);
	j = json_null();
	assert_int_equal(tb_stats_json_spread(j, &s, v, 3, 0.5), -1);
	json_decref(j);
}

static void test_mann_whitney(void **state)
{
	static const double x[] = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			    y[] = {1.15, 0.88, 0.90, 0.74, 1.21}, lo[] = {1, 2, 3}, hi[] = {4, 5, 6},
			    ta[] = {1, 2, 2, 3, 4}, tb[] = {2, 3, 5, 5, 6}, same[] = {3, 3, 3};
	double a20[20], b20[20], a60[60], b55[55];
	struct tb_mwu r;

	(void)state;
	/* R: wilcox.test(c(1,2,3), c(4,5,6)): W = 0, p-value = 0.1 (2 / C(6,3)) */
	assert_int_equal(tb_stats_mann_whitney(lo, 3, hi, 3, &r), 0);
	assert_true(r.exact && r.u == 0);
	NEAR(r.p, 0.1, 1e-12);
	assert_int_equal(tb_stats_mann_whitney(hi, 3, lo, 3, &r), 0); /* symmetric: U = 9, same p */
	assert_true(r.exact && r.u == 9);
	NEAR(r.p, 0.1, 1e-12);
	/* R's ?wilcox.test example: W = 35; two-sided 0.2544122544 (= 2 * 0.1272) */
	assert_int_equal(tb_stats_mann_whitney(x, 10, y, 5, &r), 0);
	assert_true(r.exact && r.u == 35);
	NEAR(r.p, 0.2544122544122544, 1e-9);
	/* 20 x 20, shifted: exact, U = 136, p = 0.08591401998569383 (recurrence) */
	for (int i = 0; i < 20; i++) {
		a20[i] = i * 3 + 1;
		b20[i] = i * 3 + 12;
	}
	assert_int_equal(tb_stats_mann_whitney(a20, 20, b20, 20, &r), 0);
	assert_true(r.exact && r.u == 136);
	NEAR(r.p, 0.08591401998569383, 1e-9);
	/* ties: normal approximation, tie-corrected variance, continuity 0.5:
	 * U = 4.5, p = 0.11049202405566808 */
	assert_int_equal(tb_stats_mann_whitney(ta, 5, tb, 5, &r), 0);
	assert_false(r.exact);
	NEAR(r.u, 4.5, 1e-12);
	NEAR(r.p, 0.11049202405566808, 1e-9);
	/* 60 x 55, no ties: beyond the exact range, normal: U = 1275, p = 0.03601150911819865 */
	for (int i = 0; i < 60; i++)
		a60[i] = i;
	for (int i = 0; i < 55; i++)
		b55[i] = i + 9.5;
	assert_int_equal(tb_stats_mann_whitney(a60, 60, b55, 55, &r), 0);
	assert_false(r.exact);
	NEAR(r.u, 1275, 1e-12);
	NEAR(r.p, 0.03601150911819865, 1e-9);
	/* every value the same: no evidence of a difference */
	assert_int_equal(tb_stats_mann_whitney(same, 3, same, 3, &r), 0);
	NEAR(r.p, 1, 1e-12);
	assert_int_equal(tb_stats_mann_whitney(same, 0, same, 3, &r), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quartiles),
		cmocka_unit_test(test_cv_noisy),
		cmocka_unit_test(test_spread_json),
		cmocka_unit_test(test_mann_whitney),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
