/* compare.c - a matrix against a baseline, cell by cell (compare.h). */
#include "compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

static const char *const metrics[] = {"receiver_bps", "sender_bps", NULL};

int tb_compare_metric_ok(const char *metric)
{
	for (int i = 0; metrics[i] != NULL; i++)
		if (strcmp(metric, metrics[i]) == 0)
			return 1;
	return 0;
}

/* What a cell measured, as one string: machines, OSes, protocol, direction, params. */
static char *cell_key(const json_t *cell)
{
	json_t *k = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "client", json_object_get(cell, "client"),
			      "client_os", json_object_get(cell, "client_os"), "server", json_object_get(cell, "server"),
			      "server_os", json_object_get(cell, "server_os"), "protocol",
			      json_object_get(cell, "protocol"), "direction", json_object_get(cell, "direction"), "params",
			      json_object_get(cell, "params"));
	char *s = k != NULL ? json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(k);
	return s;
}

/* The median of the metric over the cell's ok runs; NAN when none. */
static double median_of(const json_t *cell, const char *metric)
{
	const json_t *v = json_object_get(json_object_get(cell, metric), "median");

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* A row of the comparison from a cell (of either matrix) and its counterpart. */
static json_t *row(const json_t *cur, const json_t *base, const char *metric, double max_drop, const char **verdict)
{
	const json_t *any = cur != NULL ? cur : base;
	double m = cur != NULL ? median_of(cur, metric) : NAN, bm = base != NULL ? median_of(base, metric) : NAN;
	double change = NAN;
	json_t *r;

	if (cur == NULL)
		*verdict = "missing";
	else if (base == NULL)
		*verdict = "new";
	else if (isnan(bm) || bm <= 0)
		*verdict = "no_baseline";
	else if (isnan(m))
		*verdict = "failed";
	else {
		change = (m - bm) / bm * 100.0;
		*verdict = change < -max_drop ? "dropped" : "ok";
	}
	r = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "client", json_object_get(any, "client"),
		      "client_os", json_object_get(any, "client_os"), "server", json_object_get(any, "server"), "server_os",
		      json_object_get(any, "server_os"), "link", json_object_get(any, "link"), "protocol",
		      json_object_get(any, "protocol"), "direction", json_object_get(any, "direction"), "params",
		      json_object_get(any, "params"), "cell", cur != NULL ? json_object_get(cur, "cell") : NULL);
	if (r == NULL)
		return NULL;
	json_object_set_new(r, "baseline_cell", base != NULL ? json_deep_copy(json_object_get(base, "cell")) : json_null());
	json_object_set_new(r, "n", cur != NULL ? json_deep_copy(json_object_get(cur, "n")) : json_null());
	json_object_set_new(r, "baseline_n", base != NULL ? json_deep_copy(json_object_get(base, "n")) : json_null());
	json_object_set_new(r, "median", num_or_null(m));
	json_object_set_new(r, "baseline_median", num_or_null(bm));
	json_object_set_new(r, "change_pct", isnan(change) ? json_null() : json_real(round(change * 100.0) / 100.0));
	json_object_set_new(r, "verdict", json_string(*verdict));
	return r;
}

struct keyed {
	const json_t *cell;
	char *key;
	bool used;
};

static struct keyed *keyed_cells(const json_t *cells, size_t *n)
{
	struct keyed *k = calloc(json_array_size(cells) + 1, sizeof(*k));
	size_t i, at = 0;
	json_t *c;

	if (k == NULL)
		return NULL;
	json_array_foreach(cells, i, c) {
		if (json_is_null(c))
			continue;
		k[at].cell = c;
		if ((k[at].key = cell_key(c)) == NULL)
			break;
		at++;
	}
	*n = at;
	return k;
}

static void keyed_free(struct keyed *k, size_t n)
{
	for (size_t i = 0; k != NULL && i < n; i++)
		free(k[i].key);
	free(k);
}

static int compare_tables(const json_t *cur, const json_t *base, const char *metric, double max_drop, json_t *out)
{
	struct keyed *a, *b;
	size_t na = 0, nb = 0;
	json_t *rows = json_array(), *dropped = json_array();
	int compared = 0, oom = rows == NULL || dropped == NULL;

	a = keyed_cells(json_object_get(cur, "cells"), &na);
	b = keyed_cells(json_object_get(base, "cells"), &nb);
	oom |= a == NULL || b == NULL;
	for (size_t i = 0; !oom && i < na; i++) {
		const json_t *match = NULL;
		const char *verdict;
		json_t *r;

		for (size_t j = 0; j < nb && match == NULL; j++)
			if (!b[j].used && strcmp(a[i].key, b[j].key) == 0) {
				b[j].used = true;
				match = b[j].cell;
			}
		r = row(a[i].cell, match, metric, max_drop, &verdict);
		oom |= r == NULL || json_array_append_new(rows, r) != 0;
		if (strcmp(verdict, "ok") == 0 || strcmp(verdict, "dropped") == 0 || strcmp(verdict, "failed") == 0)
			compared++;
		if (strcmp(verdict, "dropped") == 0 || strcmp(verdict, "failed") == 0)
			oom |= json_array_append(dropped, json_object_get(a[i].cell, "cell")) != 0;
	}
	for (size_t j = 0; !oom && j < nb; j++)
		if (!b[j].used) {
			const char *verdict;
			json_t *r = row(NULL, b[j].cell, metric, max_drop, &verdict);

			oom |= r == NULL || json_array_append_new(rows, r) != 0;
		}
	keyed_free(a, na);
	keyed_free(b, nb);
	if (!oom) {
		json_object_set_new(out, "compared", json_integer(compared));
		json_object_set_new(out, "pass", json_boolean(compared > 0 && json_array_size(dropped) == 0));
		json_object_set_new(out, "dropped", dropped);
		json_object_set_new(out, "cells", rows);
		return 0;
	}
	json_decref(rows);
	json_decref(dropped);
	return -1;
}

int tb_compare_json(struct tb_app *app, int64_t id, int64_t baseline, double max_drop_pct, const char *metric,
		    json_t **out, struct tb_error *err)
{
	json_t *cur = NULL, *base = NULL, *o;
	int rc;

	*out = NULL;
	if ((rc = tb_results_table_json(app, id, &cur, err)) != 0)
		return rc;
	if ((rc = tb_results_table_json(app, baseline, &base, err)) != 0) {
		json_decref(cur);
		if (rc == TB_ERR_NOT_FOUND)
			return tb_fail(err, TB_ERR_NOT_FOUND, "baseline", "no matrix with id %lld to compare against",
				       (long long)baseline);
		return rc;
	}
	o = json_pack("{s:I, s:I, s:O, s:O, s:s, s:f}", "matrix", (json_int_t)id, "baseline", (json_int_t)baseline,
		      "state", json_object_get(cur, "state"), "baseline_state", json_object_get(base, "state"), "metric",
		      metric, "max_drop_pct", max_drop_pct);
	if (o == NULL || compare_tables(cur, base, metric, max_drop_pct, o) != 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(cur);
	json_decref(base);
	if (o == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	*out = o;
	return 0;
}
