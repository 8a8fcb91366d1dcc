/* compare.c - a matrix against a baseline, cell by cell (compare.h). */
#include "compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
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

/* The fields that say what a cell measured: two cells are the same cell
 * when each of these is equal (json_equal; absent counts as null). */
static const char *const key_fields[] = {"client", "client_os", "server", "server_os", "protocol", "direction",
					 "params", NULL};

/* FNV-1a over len bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* A hash of a JSON value that agrees with json_equal: object members are
 * combined by a sum, so their order does not count. */
static uint64_t json_hash(const json_t *v)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325), sum = 0;
	char t = (char)(v != NULL ? json_typeof(v) : JSON_NULL);
	const char *k;
	json_t *e;
	size_t i;

	h = fnv(h, &t, 1);
	switch (v != NULL ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING:
		return fnv(h, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		json_int_t n = json_integer_value(v);

		return fnv(h, &n, sizeof(n));
	}
	case JSON_REAL: {
		double d = json_real_value(v);

		if (d == 0)
			d = 0;   /* -0.0 == 0.0 to json_equal */
		return fnv(h, &d, sizeof(d));
	}
	case JSON_ARRAY:
		json_array_foreach(v, i, e) {
			uint64_t x = json_hash(e);

			h = fnv(h, &x, sizeof(x));
		}
		return h;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, e) {
			uint64_t x = fnv(json_hash(e), k, strlen(k) + 1);

			sum += x * UINT64_C(0x9E3779B97F4A7C15) ^ (x >> 29);
		}
		return fnv(h, &sum, sizeof(sum));
	default:
		return h;
	}
}

static uint64_t cell_hash(const json_t *cell)
{
	uint64_t h = 0;

	for (int f = 0; key_fields[f] != NULL; f++) {
		const json_t *v = json_object_get(cell, key_fields[f]);
		uint64_t x = json_hash(json_is_null(v) ? NULL : v);

		h = fnv(h ^ UINT64_C(0xcbf29ce484222325), &x, sizeof(x));
	}
	return h;
}

static int same_cell(const json_t *a, const json_t *b)
{
	for (int f = 0; key_fields[f] != NULL; f++) {
		const json_t *x = json_object_get(a, key_fields[f]), *y = json_object_get(b, key_fields[f]);
		int xn = x == NULL || json_is_null(x), yn = y == NULL || json_is_null(y);

		if (xn != yn || (!xn && !json_equal((json_t *)x, (json_t *)y)))
			return 0;
	}
	return 1;
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

/*
 * The baseline's cells by key: an open-addressed table of the distinct keys,
 * each the head of the chain of its cells in array order (next[]).  A match
 * takes the first unused cell of the chain, as the linear scan it replaced
 * did, so duplicate keys pair up in order.  O(n) expected.
 */
struct index {
	const json_t **cell;   /* the non-null cells, in order */
	uint64_t *hash;
	size_t n;
	size_t *next;          /* the next cell of the same key; n: none */
	size_t *slot;          /* head cell of a key (its first unused one); n: empty */
	size_t mask;
	bool *used;
};

static void index_free(struct index *x)
{
	free(x->cell);
	free(x->hash);
	free(x->next);
	free(x->slot);
	free(x->used);
}

/* The slot of cell i's key: its own or the empty one where it goes. */
static size_t index_find(const struct index *x, uint64_t h, const json_t *cell)
{
	size_t s = (size_t)h & x->mask;

	while (x->slot[s] != x->n &&
	       (x->hash[x->slot[s]] != h || !same_cell(x->cell[x->slot[s]], cell)))
		s = (s + 1) & x->mask;
	return s;
}

static int index_make(const json_t *cells, bool chain, struct index *x)
{
	size_t cap = 16, i, *tail = NULL;
	json_t *c;

	memset(x, 0, sizeof(*x));
	while (cap < 2 * json_array_size(cells) + 2)
		cap *= 2;
	x->cell = calloc(json_array_size(cells) + 1, sizeof(*x->cell));
	x->hash = calloc(json_array_size(cells) + 1, sizeof(*x->hash));
	x->used = calloc(json_array_size(cells) + 1, sizeof(*x->used));
	if (x->cell == NULL || x->hash == NULL || x->used == NULL)
		return -1;
	json_array_foreach(cells, i, c) {
		if (json_is_null(c))
			continue;
		x->cell[x->n] = c;
		x->hash[x->n++] = cell_hash(c);
	}
	if (!chain)
		return 0;
	x->mask = cap - 1;
	x->next = malloc((x->n + 1) * sizeof(*x->next));
	x->slot = malloc(cap * sizeof(*x->slot));
	tail = malloc(cap * sizeof(*tail));
	if (x->next == NULL || x->slot == NULL || tail == NULL) {
		free(tail);
		return -1;
	}
	for (size_t s = 0; s < cap; s++)
		x->slot[s] = x->n;
	for (i = 0; i < x->n; i++) {
		size_t s = index_find(x, x->hash[i], x->cell[i]);

		x->next[i] = x->n;
		if (x->slot[s] == x->n)
			x->slot[s] = i;
		else
			x->next[tail[s]] = i;
		tail[s] = i;
	}
	free(tail);
	return 0;
}

/* The first unused baseline cell with cur's key (marked used), or NULL. */
static const json_t *index_take(struct index *b, const json_t *cur, uint64_t h)
{
	size_t s = index_find(b, h, cur), i = b->slot[s];

	/* the chain's head is its first unused cell: an empty chain keeps its
	 * last cell as head, marked used, so the key stays findable */
	if (i == b->n || b->used[i])
		return NULL;
	b->used[i] = true;
	if (b->next[i] != b->n)
		b->slot[s] = b->next[i];
	return b->cell[i];
}

int tb_compare_cells(const json_t *cells, const json_t *base_cells, const char *metric, double max_drop,
		     json_t *out)
{
	struct index a, b;
	json_t *rows = json_array(), *dropped = json_array();
	int compared = 0, oom = rows == NULL || dropped == NULL;

	oom |= index_make(cells, false, &a) != 0;
	oom |= index_make(base_cells, true, &b) != 0;
	for (size_t i = 0; !oom && i < a.n; i++) {
		const json_t *match = index_take(&b, a.cell[i], a.hash[i]);
		const char *verdict;
		json_t *r;

		r = row(a.cell[i], match, metric, max_drop, &verdict);
		oom |= r == NULL || json_array_append_new(rows, r) != 0;
		if (strcmp(verdict, "ok") == 0 || strcmp(verdict, "dropped") == 0 || strcmp(verdict, "failed") == 0)
			compared++;
		if (strcmp(verdict, "dropped") == 0 || strcmp(verdict, "failed") == 0)
			oom |= json_array_append(dropped, json_object_get(a.cell[i], "cell")) != 0;
	}
	for (size_t j = 0; !oom && j < b.n; j++)
		if (!b.used[j]) {
			const char *verdict;
			json_t *r = row(NULL, b.cell[j], metric, max_drop, &verdict);

			oom |= r == NULL || json_array_append_new(rows, r) != 0;
		}
	index_free(&a);
	index_free(&b);
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
	if (o == NULL || tb_compare_cells(json_object_get(cur, "cells"), json_object_get(base, "cells"), metric, max_drop_pct,
						  o) != 0) {
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
