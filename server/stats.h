/*
 * stats.h - summary statistics of a series of measurements (one cell's
 * repeats: bits/s, retransmits, jitter...), their spread, and the
 * Mann-Whitney U test between two series.  Pure; no allocation for up to
 * 1024 values (a stack buffer holds the copy the median sorts), malloc
 * beyond; the exact U distribution takes a table of at most 50 x 2402
 * doubles (about 1 MB, malloc'd and freed in the call).
 *
 * Quartiles: linear interpolation between the closest ranks, i.e. R's
 * quantile() type 7 and numpy.percentile's default: for sorted x[0..n-1]
 * and probability p, h = (n - 1) p, q = x[floor h] + (h - floor h) *
 * (x[floor h + 1] - x[floor h]).  For {1, 2, 3, 4}: q1 = 1.75, q3 = 3.25.
 */
#ifndef TB_STATS_H
#define TB_STATS_H

#include <jansson.h>

/* A cell is "too noisy to compare" when its CV is over this (5 %). */
#define TB_STATS_NOISY_CV 0.05

struct tb_stats {
	int n;
	double mean, median, stdev, min, max;
	double q1, q3; /* quartiles, R type 7 (see above) */
	double cv;     /* stdev / |mean|; 0 when stdev is 0; NaN when mean is 0 and stdev is not */
};

/* The stats of v[0..n-1]: stdev is the sample standard deviation (n - 1 in
 * the denominator; 0 when n == 1); n <= 0 gives all zeros.  When n > 1024
 * and memory for the sort runs out, median, q1 and q3 are NaN (everything
 * else is still computed). */
void tb_stats_compute(const double *v, int n, struct tb_stats *out);

/* The p-quantile (0 <= p <= 1) of sorted[0..n-1] (ascending), R type 7;
 * NaN when n <= 0. */
double tb_stats_quantile(const double *sorted, int n, double p);

/* {"n","mean","median","stdev","min","max"} (a new reference; values that
 * are not finite as null), or JSON null when n == 0 (no data).  NULL only
 * on out of memory. */
json_t *tb_stats_json(const struct tb_stats *s);

/* Whether s is "too noisy to compare": n >= 2 and cv > noisy_cv (a cv that
 * is not finite counts as noisy: the mean is 0 but the values differ). */
int tb_stats_noisy(const struct tb_stats *s, double noisy_cv);

/* Adds the spread to o (tb_stats_json's object for s, computed from
 * v[0..n-1]): "q1", "q3", "cv" (not finite as null), "values" (v in the
 * order given) and "noisy" (tb_stats_noisy with noisy_cv).  o stays
 * borrowed.  0, or -1 when o is not an object or memory ran out. */
int tb_stats_json_spread(json_t *o, const struct tb_stats *s, const double *v, int n, double noisy_cv);

/* The two-sided Mann-Whitney U (Wilcoxon rank-sum) test of a[0..na-1]
 * against b[0..nb-1], as R's wilcox.test(a, b) computes it:
 * u is the U of a (pairs a_i > b_j, ties counted 1/2), which R calls W;
 * p is the two-sided p-value: exact (the distribution of U by counting)
 * when na < 50, nb < 50 and no value ties; otherwise the normal
 * approximation with the tie correction of the variance and a continuity
 * correction of 0.5 (p = 1 when every value is the same).  exact says
 * which one.  0, or -1 when na < 1, nb < 1 or memory ran out. */
struct tb_mwu {
	double u, p;
	int exact;
};
int tb_stats_mann_whitney(const double *a, int na, const double *b, int nb, struct tb_mwu *out);

#endif /* TB_STATS_H */
