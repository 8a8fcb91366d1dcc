/* osview.c - an OS-combination matrix side by side: see osview.h. */
#include "osview.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "validate.h"

/* The slot a cell measures: what must be equal for two cells to face each
 * other (everything compare matches on but the OS). */
static const char *const SLOT_KEYS[] = {"client", "server", "link", "protocol", "direction", "params", NULL};

int tb_osview_pair_ok(const char *s)
{
	const char *slash = s != NULL ? strchr(s, '/') : NULL;
	char left[64];

	if (slash == NULL || (size_t)(slash - s) >= sizeof(left))
		return 0;
	snprintf(left, sizeof(left), "%.*s", (int)(slash - s), s);
	return tb_valid_name(left) && tb_valid_name(slash + 1);
}

/* "client_os/server_os" of a cell into buf; 0 when the cell ran under one
 * OS pair, -1 when it did not run or its runs differed ("a+b"). */
static int pair_of(const json_t *cell, char *buf, size_t size)
{
	const char *c = json_string_value(json_object_get(cell, "client_os"));
	const char *s = json_string_value(json_object_get(cell, "server_os"));

	if (c == NULL || s == NULL || strchr(c, '+') != NULL || strchr(s, '+') != NULL)
		return -1;
	return snprintf(buf, size, "%s/%s", c, s) < (int)size ? 0 : -1;
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static double get(const json_t *stats, const char *key)
{
	const json_t *v = json_object_get(stats, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One side: the cell, its metric's Stats and sender against receiver. */
static json_t *side_json(const json_t *cell, const char *metric)
{
	const json_t *tx = json_object_get(cell, "sender_bps"), *rx = json_object_get(cell, "receiver_bps");
	double s = get(tx, "median"), r = get(rx, "median");
	double gap = isfinite(s) && isfinite(r) && s > 0 ? (s - r) / s * 100 : NAN;

	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:b}", "cell",
			 json_object_get(cell, "cell"), "client_os", json_object_get(cell, "client_os"), "server_os",
			 json_object_get(cell, "server_os"), "runs", json_object_get(cell, "runs"), "failed",
			 json_object_get(cell, "failed"), "n", json_object_get(cell, "n"), "stats",
			 json_object_get(cell, metric), "sender_bps", tx, "receiver_bps", rx, "gap_percent", num(gap),
			 "loss", isfinite(gap) && gap > TB_OSVIEW_LOSS_GAP_PCT);
}

/* The values of a Stats into a new array (*n of them); NULL when none. */
static double *values_of(const json_t *stats, int *n)
{
	const json_t *a = json_object_get(stats, "values"), *x;
	double *v = malloc((json_array_size(a) + 1) * sizeof(*v));
	size_t i;

	*n = 0;
	if (v == NULL)
		return NULL;
	json_array_foreach(a, i, x) if (json_is_number(x)) v[(*n)++] = json_number_value(x);
	return v;
}

/* The two sides of a row compared: difference, overlap, U test, verdict. */
static int compare_row(json_t *row)
{
	const json_t *sa = json_object_get(json_object_get(row, "a"), "stats");
	const json_t *sb = json_object_get(json_object_get(row, "b"), "stats");
	double ma = get(sa, "median"), mb = get(sb, "median");
	double diff = isfinite(ma) && isfinite(mb) && ma != 0 ? (mb - ma) / fabs(ma) * 100 : NAN;
	int have = json_is_object(sa) && json_is_object(sb), overlap = 0, noisy = 0, na = 0, nb = 0, bad = 0;
	json_t *mw = json_null();
	double *va, *vb;

	if (have) {
		overlap = get(sa, "q1") <= get(sb, "q3") && get(sb, "q1") <= get(sa, "q3");
		noisy = json_is_true(json_object_get(sa, "noisy")) || json_is_true(json_object_get(sb, "noisy"));
		va = values_of(sa, &na);
		vb = values_of(sb, &nb);
		if (va != NULL && vb != NULL && na >= TB_OSVIEW_U_MIN_N && nb >= TB_OSVIEW_U_MIN_N) {
			struct tb_mwu u;

			if (tb_stats_mann_whitney(va, na, vb, nb, &u) == 0) {
				json_decref(mw);
				mw = json_pack("{s:f, s:f, s:s, s:i, s:i}", "u", u.u, "p", u.p, "method",
					       u.exact ? "exact" : "normal", "n_a", na, "n_b", nb);
			}
		}
		free(va);
		free(vb);
	}
	bad |= json_object_set_new(row, "diff_percent", num(diff));
	bad |= json_object_set_new(row, "iqr_overlap", have ? json_boolean(overlap) : json_null());
	bad |= json_object_set_new(row, "mann_whitney", mw != NULL ? mw : json_null());
	bad |= json_object_set_new(row, "verdict",
				   json_string(!have     ? "missing"
					       : noisy   ? "noisy"
					       : overlap ? "within_spread"
							 : "beyond_spread"));
	return bad ? -1 : 0;
}

/* The row of cell's slot in rows (made, in order of first appearance, when
 * new; index keeps slot key -> position).  NULL on out of memory. */
static json_t *row_of(const json_t *cell, json_t *rows, json_t *index)
{
	json_t *slot = json_object(), *row;
	char *key;

	if (slot == NULL)
		return NULL;
	for (int k = 0; SLOT_KEYS[k] != NULL; k++)
		json_object_set(slot, SLOT_KEYS[k], json_object_get(cell, SLOT_KEYS[k]));
	key = json_dumps(slot, JSON_SORT_KEYS | JSON_COMPACT);
	if (key == NULL) {
		json_decref(slot);
		return NULL;
	}
	if ((row = json_object_get(index, key)) != NULL) {
		row = json_array_get(rows, (size_t)json_integer_value(row));
		json_decref(slot);
	} else if ((row = slot) != NULL) {
		json_object_set_new(row, "a", json_null());
		json_object_set_new(row, "b", json_null());
		json_object_set_new(index, key, json_integer((json_int_t)json_array_size(rows)));
		json_array_append_new(rows, row);
	}
	free(key);
	return row;
}

/* {"pair": cells} of every OS pair the table's cells ran under. */
static json_t *pairs_of(const json_t *cells)
{
	json_t *pairs = json_object(), *cell;
	char p[160];
	size_t i;

	json_array_foreach(cells, i, cell)
	{
		if (pairs == NULL || pair_of(cell, p, sizeof(p)) != 0)
			continue;
		json_object_set_new(pairs, p, json_integer(json_integer_value(json_object_get(pairs, p)) + 1));
	}
	return pairs;
}

/* The n-th pair name by sort order (NULL beyond). */
static const char *nth_pair(const json_t *pairs, int n)
{
	const char *best = NULL, *k;
	json_t *v;

	for (int round = 0; round <= n; round++) {
		const char *prev = best;

		best = NULL;
		json_object_foreach((json_t *)pairs, k, v)
		{
			if ((prev == NULL || strcmp(k, prev) > 0) && (best == NULL || strcmp(k, best) < 0))
				best = k;
		}
		if (best == NULL)
			return NULL;
	}
	return best;
}

/* The first pair by name that is not but (NULL: none). */
static const char *first_but(const json_t *pairs, const char *but)
{
	const char *p = nth_pair(pairs, 0);

	return p != NULL && but != NULL && strcmp(p, but) == 0 ? nth_pair(pairs, 1) : p;
}

static json_t *pairs_array(const json_t *pairs)
{
	json_t *a = json_array();
	const char *p;

	for (int i = 0; a != NULL && (p = nth_pair(pairs, i)) != NULL; i++) {
		const char *slash = strchr(p, '/');

		json_array_append_new(a, json_pack("{s:s, s:s#, s:s, s:O}", "os", p, "client_os", p, (int)(slash - p),
						   "server_os", slash + 1, "cells", json_object_get(pairs, p)));
	}
	return a;
}

static json_t *rows_of(const json_t *cells, const char *a, const char *b, const char *metric)
{
	json_t *rows = json_array(), *index = json_object(), *cell, *row;
	char p[160];
	size_t i;
	int bad = rows == NULL || index == NULL;

	json_array_foreach(cells, i, cell)
	{
		const char *side;

		if (bad || pair_of(cell, p, sizeof(p)) != 0)
			continue;
		side = strcmp(p, a) == 0 ? "a" : b != NULL && strcmp(p, b) == 0 ? "b" : NULL;
		if (side == NULL)
			continue;
		if ((row = row_of(cell, rows, index)) == NULL) {
			bad = 1;
			continue;
		}
		if (json_is_null(json_object_get(row, side))) /* a second cell of the slot: the first stands */
			bad |= json_object_set_new(row, side, side_json(cell, metric));
	}
	json_array_foreach(rows, i, row) bad |= compare_row(row);
	json_decref(index);
	if (bad) {
		json_decref(rows);
		return NULL;
	}
	return rows;
}

int tb_osview_json(const json_t *table, const char *a, const char *b, const char *metric, double noisy_cv, json_t **out,
		   struct tb_error *err)
{
	const json_t *cells = json_object_get(table, "cells");
	json_t *pairs = pairs_of(cells), *rows;

	*out = NULL;
	if (pairs == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (a != NULL && json_object_get(pairs, a) == NULL) {
		json_decref(pairs);
		return tb_fail(err, TB_ERR_INVALID, "a", "no cell of this matrix ran under %.64s", a);
	}
	if (b != NULL && json_object_get(pairs, b) == NULL) {
		json_decref(pairs);
		return tb_fail(err, TB_ERR_INVALID, "b", "no cell of this matrix ran under %.64s", b);
	}
	if (a == NULL)
		a = first_but(pairs, b);
	if (b == NULL)
		b = first_but(pairs, a);
	if (a != NULL && b != NULL && strcmp(a, b) == 0) {
		json_decref(pairs);
		return tb_fail(err, TB_ERR_INVALID, "b", "a and b are the same OS pair (%.64s)", a);
	}
	rows = a != NULL ? rows_of(cells, a, b, metric) : json_array();
	*out = json_pack("{s:O, s:O, s:O, s:s, s:f, s:s?, s:s?, s:o, s:{s:s, s:s, s:s, s:s}, s:o}", "matrix",
			 json_object_get(table, "matrix"), "name", json_object_get(table, "name"), "state",
			 json_object_get(table, "state"), "metric", metric, "noisy_cv", noisy_cv, "a", a, "b", b,
			 "pairs", pairs_array(pairs), "method", "quartiles",
			 "linear interpolation between the closest ranks (R quantile type 7, numpy default)", "noisy",
			 "cv (stdev / mean) over noisy_cv, n >= 2", "p_value",
			 "two-sided Mann-Whitney U (Wilcoxon rank-sum), only when n >= 3 on each side: exact "
			 "distribution below 50 values a side without ties, else normal approximation with tie "
			 "and continuity corrections (as R's wilcox.test)",
			 "loss", "sender median over the receiver median by more than 5 %", "rows", rows);
	json_decref(pairs);
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}
