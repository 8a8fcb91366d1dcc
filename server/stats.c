/* stats.c - summary statistics, spread and the U test: see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STACK_MAX 1024
#define EXACT_MAX 50 /* exact U distribution below this many values a side, as R */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double tb_stats_quantile(const double *sorted, int n, double p)
{
	double h, lo;
	int i;

	if (sorted == NULL || n <= 0)
		return NAN;
	h = (n - 1) * p;
	lo = floor(h);
	i = (int)lo;
	if (i < 0)
		return sorted[0];
	if (i >= n - 1)
		return sorted[n - 1];
	return sorted[i] + (h - lo) * (sorted[i + 1] - sorted[i]);
}

void tb_stats_compute(const double *v, int n, struct tb_stats *out)
{
	double stackbuf[STACK_MAX], *sorted = stackbuf, sum = 0, ss = 0;

	memset(out, 0, sizeof(*out));
	if (v == NULL || n <= 0)
		return;
	out->n = n;
	out->min = out->max = v[0];
	for (int i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	out->mean = sum / n;
	/* two passes: the sum of squared deviations keeps its precision when the
	 * values are large and close together (bits/s of equal runs) */
	for (int i = 0; i < n; i++)
		ss += (v[i] - out->mean) * (v[i] - out->mean);
	out->stdev = n > 1 ? sqrt(ss / (n - 1)) : 0;
	out->cv = out->stdev == 0 ? 0 : out->mean != 0 ? out->stdev / fabs(out->mean) : NAN;
	if (n > STACK_MAX && (sorted = malloc((size_t)n * sizeof(*sorted))) == NULL) {
		out->median = out->q1 = out->q3 = NAN;
		return;
	}
	memcpy(sorted, v, (size_t)n * sizeof(*sorted));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
	out->median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	out->q1 = tb_stats_quantile(sorted, n, 0.25);
	out->q3 = tb_stats_quantile(sorted, n, 0.75);
	if (sorted != stackbuf)
		free(sorted);
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *tb_stats_json(const struct tb_stats *s)
{
	if (s == NULL || s->n <= 0)
		return json_null();
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "n", s->n, "mean", num(s->mean), "median", num(s->median),
			 "stdev", num(s->stdev), "min", num(s->min), "max", num(s->max));
}

int tb_stats_noisy(const struct tb_stats *s, double noisy_cv)
{
	return s != NULL && s->n >= 2 && (!isfinite(s->cv) || s->cv > noisy_cv);
}

int tb_stats_json_spread(json_t *o, const struct tb_stats *s, const double *v, int n, double noisy_cv)
{
	json_t *vals = json_array();
	int bad = 0;

	if (!json_is_object(o) || vals == NULL) {
		json_decref(vals);
		return -1;
	}
	for (int i = 0; i < n; i++)
		bad |= json_array_append_new(vals, num(v[i]));
	bad |= json_object_set_new(o, "q1", num(s->q1));
	bad |= json_object_set_new(o, "q3", num(s->q3));
	bad |= json_object_set_new(o, "cv", num(s->cv));
	bad |= json_object_set_new(o, "values", vals);
	bad |= json_object_set_new(o, "noisy", json_boolean(tb_stats_noisy(s, noisy_cv)));
	return bad ? -1 : 0;
}

/* ---- Mann-Whitney U ---- */

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/* P(U <= u) (upper: P(U >= u)) for sizes m, n with no ties: the counts of U are the
 * coefficients of the Gaussian binomial [m+n choose m]_q, built by the
 * q-Pascal rule [k choose j] = [k-1 choose j-1] + q^j [k-1 choose j]
 * (additions only, so no cancellation).  -1 on out of memory. */
static double exact_tail(int m, int n, double u, int upper)
{
	int w = m * n + 1;
	double *c = calloc((size_t)(m + 1) * (size_t)w, sizeof(*c)), below = 0, total = 0;

	if (c == NULL)
		return -1;
	c[0] = 1; /* [0 choose 0] = 1 */
	for (int k = 1; k <= m + n; k++) {
		int jmax = k < m ? k : m;

		for (int j = jmax; j >= 1; j--) {
			double *cj = c + (size_t)j * (size_t)w, *cp = c + (size_t)(j - 1) * (size_t)w;

			for (int x = w - 1; x >= 0; x--)
				cj[x] = cp[x] + (x >= j ? cj[x - j] : 0);
		}
	}
	for (int x = 0; x < w; x++) {
		total += c[(size_t)m * (size_t)w + (size_t)x];
		if (upper ? x >= u - 1e-9 : x <= u + 1e-9)
			below += c[(size_t)m * (size_t)w + (size_t)x];
	}
	free(c);
	return below / total;
}

/* Ranks with ties at their mean; returns the rank sum of a, and the sum of
 * t^3 - t over tied groups in *ties. */
static double rank_sum(struct ranked *r, int total, double *ties)
{
	double sum = 0;

	qsort(r, (size_t)total, sizeof(*r), cmp_ranked);
	*ties = 0;
	for (int i = 0; i < total;) {
		int j = i;

		while (j + 1 < total && r[j + 1].v == r[i].v)
			j++;
		for (int k = i; k <= j; k++)
			if (r[k].from_a)
				sum += (i + j) / 2.0 + 1;
		if (j > i)
			*ties += pow(j - i + 1, 3) - (j - i + 1);
		i = j + 1;
	}
	return sum;
}

int tb_stats_mann_whitney(const double *a, int na, const double *b, int nb, struct tb_mwu *out)
{
	struct ranked *r;
	double ties, mn = (double)na * nb, sigma, z;
	int total = na + nb;

	memset(out, 0, sizeof(*out));
	if (a == NULL || b == NULL || na < 1 || nb < 1 || (r = malloc((size_t)total * sizeof(*r))) == NULL)
		return -1;
	for (int i = 0; i < na; i++)
		r[i] = (struct ranked){a[i], 1};
	for (int i = 0; i < nb; i++)
		r[na + i] = (struct ranked){b[i], 0};
	out->u = rank_sum(r, total, &ties) - na * (na + 1) / 2.0;
	free(r);
	if (na < EXACT_MAX && nb < EXACT_MAX && ties == 0) {
		/* R: p = P(U >= u) above the centre, P(U <= u) below, doubled */
		double p = exact_tail(na, nb, out->u, out->u > mn / 2);

		if (p < 0)
			return -1;
		out->exact = 1;
		out->p = fmin(2 * p, 1);
		return 0;
	}
	sigma = sqrt(mn / 12 * ((total + 1) - ties / ((double)total * (total - 1))));
	z = out->u - mn / 2;
	if (sigma == 0) {
		out->p = 1;
		return 0;
	}
	z = (z - (z > 0 ? 0.5 : z < 0 ? -0.5 : 0)) / sigma;
	/* 2 min(Phi(z), 1 - Phi(z)) = erfc(|z| / sqrt 2) */
	out->p = fmin(erfc(fabs(z) / sqrt(2.0)), 1);
	return 0;
}
