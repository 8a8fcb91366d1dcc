/* stats.c - summary statistics: see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STACK_MAX 1024

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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
	if (n > STACK_MAX && (sorted = malloc((size_t)n * sizeof(*sorted))) == NULL) {
		out->median = NAN;
		return;
	}
	memcpy(sorted, v, (size_t)n * sizeof(*sorted));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
	out->median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
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
