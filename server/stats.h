/*
 * stats.h - summary statistics of a series of measurements (one cell's
 * repeats: bits/s, retransmits, jitter...).  Pure; no allocation for up
 * to 1024 values (a stack buffer holds the copy the median sorts), malloc
 * beyond.
 */
#ifndef TB_STATS_H
#define TB_STATS_H

#include <jansson.h>

struct tb_stats {
	int n;
	double mean, median, stdev, min, max;
};

/* The stats of v[0..n-1]: stdev is the sample standard deviation (n - 1 in
 * the denominator; 0 when n == 1); n <= 0 gives all zeros.  When n > 1024
 * and memory for the sort runs out, median is NaN (everything else is
 * still computed). */
void tb_stats_compute(const double *v, int n, struct tb_stats *out);

/* {"n","mean","median","stdev","min","max"} (a new reference; values that
 * are not finite as null), or JSON null when n == 0 (no data).  NULL only
 * on out of memory. */
json_t *tb_stats_json(const struct tb_stats *s);

#endif /* TB_STATS_H */
