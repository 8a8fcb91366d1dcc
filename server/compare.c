/* compare.c - a matrix against a baseline, cell by cell (compare.h). */
#include "compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

/* The metrics, and whether a higher value is worse (a loss, not a gain). */
static const struct {
	const char *name;
	int higher_is_worse;
} metrics[] = {
	{"receiver_bps", 0}, {"sender_bps", 0}, {"lost_percent", 1}, {"retransmits", 1}, {"jitter_ms", 1}, {NULL, 0},
};

int tb_compare_metric_ok(const char *metric)
{
	for (int i = 0; metric != NULL && metrics[i].name != NULL; i++)
		if (strcmp(metric, metrics[i].name) == 0)
			return 1;
	return 0;
}

int tb_compare_higher_is_worse(const char *metric)
{
	for (int i = 0; metrics[i].name != NULL; i++)
		if (strcmp(metric, metrics[i].name) == 0)
			return metrics[i].higher_is_worse;
	return 0;
}

/* The fields that say what a cell measured: two cells are the same cell
 * when each of client, client_os, server, server_os, protocol, direction
 * and params is equal (json_equal; absent counts as null). */

/* A 64-bit mix of len bytes into h, 8 bytes at a time (the hash of a
 * table, not of anything an attacker would need to collide: a collision
 * costs only an equality check). */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;

	for (; len >= 8; len -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, b, len);
	h = (h ^ w ^ (uint64_t)len << 56) * UINT64_C(0x100000001b3);
	return h ^ (h >> 29);
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
	case JSON_STRING: return fnv(h, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		json_int_t n = json_integer_value(v);

		return fnv(h, &n, sizeof(n));
	}
	case JSON_REAL: {
		double d = json_real_value(v);

		if (d == 0)
			d = 0; /* -0.0 == 0.0 to json_equal */
		return fnv(h, &d, sizeof(d));
	}
	case JSON_ARRAY:
		json_array_foreach(v, i, e)
		{
			uint64_t x = json_hash(e);

			h = fnv(h, &x, sizeof(x));
		}
		return h;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, e)
		{
			uint64_t kw = 0, x;

			/* a key by its first 8 bytes: equal keys hash alike, and
			 * walking the whole name cost more than the rest */
			for (unsigned int j = 0; j < 8 && k[j] != '\0'; j++)
				kw |= (uint64_t)(unsigned char)k[j] << (8 * j);
			x = json_hash(e) ^ (kw * UINT64_C(0xC2B2AE3D27D4EB4F));
			sum += x * UINT64_C(0x9E3779B97F4A7C15) ^ (x >> 29);
		}
		return fnv(h, &sum, sizeof(sum));
	default: return h;
	}
}

/* The values of a cell's key fields, in key_fields' order (NULL: absent or
 * null), found in one walk over its members: a lookup by name per field
 * hashes the name, and at 100,000 cells that was most of the time. */
#define NKEY 7
typedef const json_t *keyvals[NKEY];

static void key_values(const json_t *cell, keyvals kv)
{
	const char *k;
	json_t *v;

	int found = 0;

	memset(kv, 0, sizeof(keyvals));
	json_object_foreach((json_t *)cell, k, v)
	{
		int f;

		if (found == NKEY)
			break;

		switch (k[0]) { /* the first letter narrows it to at most two names */
		case 'c': f = strcmp(k, "client") == 0 ? 0 : strcmp(k, "client_os") == 0 ? 1 : -1; break;
		case 's': f = strcmp(k, "server") == 0 ? 2 : strcmp(k, "server_os") == 0 ? 3 : -1; break;
		case 'p': f = strcmp(k, "protocol") == 0 ? 4 : strcmp(k, "params") == 0 ? 6 : -1; break;
		case 'd': f = strcmp(k, "direction") == 0 ? 5 : -1; break;
		default: f = -1;
		}
		if (f >= 0) {
			found++;
			kv[f] = json_is_null(v) ? NULL : v;
		}
	}
}

static uint64_t cell_hash(const keyvals kv)
{
	uint64_t h = 0;

	for (int f = 0; f < NKEY; f++) {
		uint64_t x = json_hash(kv[f]);

		h = fnv(h ^ UINT64_C(0xcbf29ce484222325), &x, sizeof(x));
	}
	return h;
}

/* json_equal, with the common cases first: strings and integers compared
 * directly, objects member by member when their keys come in the same order
 * (a lookup by name hashes it). */
static int same_value(const json_t *x, const json_t *y)
{
	void *i, *j;

	if (x == y)
		return 1;
	if (x == NULL || y == NULL || json_typeof(x) != json_typeof(y))
		return 0;
	switch (json_typeof(x)) {
	case JSON_STRING:
		return json_string_length(x) == json_string_length(y) &&
		       memcmp(json_string_value(x), json_string_value(y), json_string_length(x)) == 0;
	case JSON_INTEGER: return json_integer_value(x) == json_integer_value(y);
	case JSON_OBJECT:
		if (json_object_size(x) != json_object_size(y))
			return 0;
		for (i = json_object_iter((json_t *)x), j = json_object_iter((json_t *)y); i != NULL && j != NULL;
		     i = json_object_iter_next((json_t *)x, i), j = json_object_iter_next((json_t *)y, j)) {
			if (strcmp(json_object_iter_key(i), json_object_iter_key(j)) != 0)
				return json_equal((json_t *)x, (json_t *)y); /* another order */
			if (!same_value(json_object_iter_value(i), json_object_iter_value(j)))
				return 0;
		}
		return 1;
	default: return json_equal((json_t *)x, (json_t *)y);
	}
}

static int same_cell(const keyvals a, const keyvals b)
{
	for (int f = 0; f < NKEY; f++)
		if (!same_value(a[f], b[f]))
			return 0;
	return 1;
}

/* A member of the cell's Stats of the metric (median, q1, q3, cv); NAN when
 * none (no ok run, or a results table without the spread). */
static double stat_of(const json_t *cell, const char *metric, const char *key)
{
	const json_t *v = cell != NULL ? json_object_get(json_object_get(cell, metric), key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* from's key (a borrowed reference), or null when from or its key is absent. */
static json_t *key_of(const json_t *from, const char *key)
{
	json_t *v = from != NULL ? json_object_get(from, key) : NULL;

	return v != NULL ? v : json_null();
}

/* What the two medians of a row say: the change in percent of the baseline
 * (NAN when there is none), whether the interquartile ranges overlap (-1:
 * unknown), whether the change is beyond the spread (-1: unknown) and the
 * verdict. */
struct judged {
	double m, bm, change;
	int overlap, beyond;
	const char *verdict;
};

static void judge(const json_t *cur, const json_t *base, const char *metric, double max_drop, struct judged *j)
{
	int worse_up = tb_compare_higher_is_worse(metric);
	double q1 = stat_of(cur, metric, "q1"), q3 = stat_of(cur, metric, "q3");
	double bq1 = stat_of(base, metric, "q1"), bq3 = stat_of(base, metric, "q3");

	j->m = stat_of(cur, metric, "median");
	j->bm = stat_of(base, metric, "median");
	j->change = NAN;
	j->overlap = isnan(q1) || isnan(q3) || isnan(bq1) || isnan(bq3) ? -1 : fmax(q1, bq1) <= fmin(q3, bq3);
	if (cur == NULL)
		j->verdict = "missing";
	else if (base == NULL)
		j->verdict = "new";
	else if (isnan(j->bm) || (!worse_up && j->bm <= 0) || j->bm < 0)
		j->verdict = "no_baseline";
	else if (isnan(j->m))
		j->verdict = "failed";
	else if (j->bm == 0) /* higher is worse, from nothing: any rise beyond the spread */
		j->verdict = j->m > 0 && j->overlap != 1 ? "dropped" : "ok";
	else {
		j->change = (j->m - j->bm) / j->bm * 100.0;
		j->verdict = (worse_up ? j->change > max_drop : j->change < -max_drop) ? "dropped" : "ok";
	}
	/* Beyond the spread: the IQRs are apart and the change, either way, is
	 * larger than max_drop (from a median of 0: any change).  IQRs alone are
	 * apart for a 0.02 % change when the repeats agree to 0.01 % (a paced
	 * stream): real, but nothing a person should be shown as a difference. */
	j->beyond = j->overlap < 0 || isnan(j->m) || isnan(j->bm)
			    ? -1
			    : !j->overlap && (isnan(j->change) ? j->m != j->bm : fabs(j->change) > max_drop);
}

/* Sets key to the member of the metric's Stats of from (null when none). */
static int set_stat(json_t *r, const char *key, const json_t *from, const char *metric, const char *member)
{
	json_t *v = from != NULL ? json_object_get(json_object_get(from, metric), member) : NULL;

	return json_object_set_nocheck(r, key, v != NULL ? v : json_null());
}

/* The spread of both sides into row r: q1, q3, cv, noisy and the same with
 * baseline_, overlap and beyond_spread (bool or null, see judge). */
static int set_spread(json_t *r, const json_t *cur, const json_t *base, const char *metric, const struct judged *j)
{
	static const char *const members[] = {"q1", "q3", "cv", "noisy", NULL};
	char key[32];
	int bad = 0;

	for (int i = 0; !bad && members[i] != NULL; i++) {
		snprintf(key, sizeof(key), "baseline_%s", members[i]);
		bad |= set_stat(r, members[i], cur, metric, members[i]) != 0 ||
		       set_stat(r, key, base, metric, members[i]) != 0;
	}
	return bad ||
	       json_object_set_new_nocheck(r, "overlap", j->overlap < 0 ? json_null() : json_boolean(j->overlap)) !=
		       0 ||
	       json_object_set_new_nocheck(r, "beyond_spread", j->beyond < 0 ? json_null() : json_boolean(j->beyond)) !=
		       0;
}

/* A row of the comparison from a cell (of either matrix) and its counterpart.
 * Built member by member (json_pack parses its format each time: at 100,000
 * rows that was most of the time). */
static json_t *row(const json_t *cur, const json_t *base, const char *metric, double max_drop, struct judged *j)
{
	static const char *const same[] = {"client",   "client_os", "server", "server_os", "link",
					   "protocol", "direction", "params", NULL};
	const json_t *any = cur != NULL ? cur : base;
	json_t *r = json_object();
	int bad = r == NULL;

	judge(cur, base, metric, max_drop, j);
	for (int i = 0; !bad && same[i] != NULL; i++)
		bad |= json_object_set_nocheck(r, same[i], key_of(any, same[i])) != 0;
	bad = bad || json_object_set_nocheck(r, "cell", key_of(cur, "cell")) != 0 ||
	      json_object_set_nocheck(r, "baseline_cell", key_of(base, "cell")) != 0 ||
	      json_object_set_nocheck(r, "n", key_of(cur, "n")) != 0 ||
	      json_object_set_nocheck(r, "baseline_n", key_of(base, "n")) != 0 ||
	      json_object_set_new_nocheck(r, "median", num_or_null(j->m)) != 0 ||
	      json_object_set_new_nocheck(r, "baseline_median", num_or_null(j->bm)) != 0 ||
	      json_object_set_new_nocheck(r, "change_pct",
					  isnan(j->change) ? json_null()
							   : json_real(round(j->change * 100.0) / 100.0)) != 0 ||
	      set_spread(r, cur, base, metric, j) != 0 ||
	      json_object_set_new_nocheck(r, "verdict", json_string(j->verdict)) != 0 ||
	      /* what each side cost its hosts and did to latency (run_load.h), beside */
	      json_object_set_nocheck(r, "load", key_of(cur, "load")) != 0 ||
	      json_object_set_nocheck(r, "baseline_load", key_of(base, "load")) != 0;
	if (bad) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/*
 * The baseline's cells by key: an open-addressed table of the distinct keys,
 * each the head of the chain of its cells in array order (next[]).  A match
 * takes the first unused cell of the chain, as the linear scan it replaced
 * did, so duplicate keys pair up in order.  O(n) expected.
 */
struct index {
	const json_t **cell; /* the non-null cells, in order */
	keyvals *kv;         /* each one's key values */
	size_t *pos;         /* each one's place in the array */
	size_t taken;        /* the cell index_take gave last */
	uint64_t *hash;
	size_t n;
	size_t *next; /* the next cell of the same key; n: none */
	size_t *slot; /* head cell of a key (its first unused one); n: empty */
	size_t mask;
	bool *used;
};

static void index_free(struct index *x)
{
	free(x->cell);
	free(x->kv);
	free(x->pos);
	free(x->hash);
	free(x->next);
	free(x->slot);
	free(x->used);
}

/* The slot of cell i's key: its own or the empty one where it goes. */
static size_t index_find(const struct index *x, uint64_t h, const keyvals kv)
{
	size_t s = (size_t)h & x->mask;

	while (x->slot[s] != x->n && (x->hash[x->slot[s]] != h || !same_cell(x->kv[x->slot[s]], kv)))
		s = (s + 1) & x->mask;
	return s;
}

/* The index of cells[from..]. */
static int index_make(const json_t *cells, size_t from, struct index *x)
{
	size_t cap = 16, i, *tail = NULL;
	json_t *c;

	memset(x, 0, sizeof(*x));
	while (cap < 2 * json_array_size(cells) + 2)
		cap *= 2;
	x->cell = calloc(json_array_size(cells) + 1, sizeof(*x->cell));
	x->pos = calloc(json_array_size(cells) + 1, sizeof(*x->pos));
	x->kv = calloc(json_array_size(cells) + 1, sizeof(*x->kv));
	x->hash = calloc(json_array_size(cells) + 1, sizeof(*x->hash));
	x->used = calloc(json_array_size(cells) + 1, sizeof(*x->used));
	if (x->cell == NULL || x->kv == NULL || x->pos == NULL || x->hash == NULL || x->used == NULL)
		return -1;
	for (i = from; i < json_array_size(cells); i++) {
		if (json_is_null(c = json_array_get(cells, i)))
			continue;
		x->pos[x->n] = i;
		x->cell[x->n] = c;
		key_values(c, x->kv[x->n]);
		x->hash[x->n] = cell_hash(x->kv[x->n]);
		x->n++;
	}
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
		size_t s = index_find(x, x->hash[i], x->kv[i]);

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
static const json_t *index_take(struct index *b, const keyvals kv, uint64_t h)
{
	size_t s = index_find(b, h, kv), i = b->slot[s];

	/* the chain's head is its first unused cell: an empty chain keeps its
	 * last cell as head, marked used, so the key stays findable */
	if (i == b->n || b->used[i])
		return NULL;
	b->used[i] = true;
	b->taken = i;
	if (b->next[i] != b->n)
		b->slot[s] = b->next[i];
	return b->cell[i];
}

int tb_compare_match(const json_t *cells, const json_t *base_cells, long *match)
{
	size_t n = json_array_size(cells), k;
	struct index b = {0};

	/* The usual case, a matrix against one of the same spec: the same cells
	 * at the same places.  While that holds from the start, cell k's match is
	 * baseline cell k (every earlier baseline cell is taken, so it is the
	 * first unused one with its key), found without hashing or an index. */
	for (k = 0; k < n && k < json_array_size(base_cells); k++) {
		const json_t *c = json_array_get(cells, k), *d = json_array_get(base_cells, k);
		keyvals kc, kd;

		if (json_is_null(c) != json_is_null(d))
			break;
		if (json_is_null(c)) {
			match[k] = -2;
			continue;
		}
		key_values(c, kc);
		key_values(d, kd);
		if (!same_cell(kc, kd))
			break;
		match[k] = (long)k;
	}
	if (k == n)
		return 0;
	/* the rest by the hash of the key, among the baseline cells not taken */
	if (index_make(base_cells, k, &b) != 0) {
		index_free(&b);
		return -1;
	}
	for (size_t i = k; i < n; i++) {
		const json_t *c = json_array_get(cells, i);
		keyvals kv;

		if (json_is_null(c)) {
			match[i] = -2;
			continue;
		}
		key_values(c, kv);
		/* the baseline cell's place in base_cells, or -1 */
		match[i] = index_take(&b, kv, cell_hash(kv)) != NULL ? (long)b.pos[b.taken] : -1;
	}
	index_free(&b);
	return 0;
}

int tb_compare_cells(const json_t *cells, const json_t *base_cells, const char *metric, double max_drop, json_t *out)
{
	size_t na = json_array_size(cells), nb = json_array_size(base_cells);
	long *match = malloc((na + 1) * sizeof(*match));
	bool *used = calloc(nb + 1, sizeof(*used));
	json_t *rows = json_array(), *dropped = json_array(), *apart = json_array();
	int compared = 0, oom = rows == NULL || dropped == NULL || apart == NULL || match == NULL || used == NULL;

	oom |= !oom && tb_compare_match(cells, base_cells, match) != 0;
	for (size_t i = 0; !oom && i < na; i++) {
		const json_t *c = json_array_get(cells, i), *m = NULL;
		struct judged j;
		json_t *r;

		if (match[i] == -2)
			continue;
		if (match[i] >= 0) {
			m = json_array_get(base_cells, (size_t)match[i]);
			used[match[i]] = true;
		}
		r = row(c, m, metric, max_drop, &j);
		oom |= r == NULL || json_array_append_new(rows, r) != 0;
		if (strcmp(j.verdict, "ok") == 0 || strcmp(j.verdict, "dropped") == 0 ||
		    strcmp(j.verdict, "failed") == 0)
			compared++;
		if (strcmp(j.verdict, "dropped") == 0 || strcmp(j.verdict, "failed") == 0)
			oom |= json_array_append(dropped, json_object_get(c, "cell")) != 0;
		if (j.beyond == 1)
			oom |= json_array_append(apart, json_object_get(c, "cell")) != 0;
	}
	for (size_t k = 0; !oom && k < nb; k++) {
		const json_t *c = json_array_get(base_cells, k);

		if (!used[k] && !json_is_null(c)) {
			struct judged j;
			json_t *r = row(NULL, c, metric, max_drop, &j);

			oom |= r == NULL || json_array_append_new(rows, r) != 0;
		}
	}
	free(match);
	free(used);
	if (!oom) {
		json_object_set_new(out, "higher_is_worse", json_boolean(tb_compare_higher_is_worse(metric)));
		json_object_set_new(out, "compared", json_integer(compared));
		json_object_set_new(out, "pass", json_boolean(compared > 0 && json_array_size(dropped) == 0));
		json_object_set_new(out, "dropped", dropped);
		json_object_set_new(out, "beyond_spread", apart);
		json_object_set_new(out, "cells", rows);
		return 0;
	}
	json_decref(rows);
	json_decref(dropped);
	json_decref(apart);
	return -1;
}

int tb_compare_json(const struct tb_results_src *src, int64_t id, int64_t baseline, double max_drop_pct,
		    const char *metric, json_t **out, struct tb_error *err)
{
	json_t *cur = NULL, *base = NULL;
	int rc;

	*out = NULL;
	if ((rc = tb_results_table_json(src, id, &cur, err)) != 0)
		return rc;
	if ((rc = tb_results_table_json(src, baseline, &base, err)) != 0) {
		json_decref(cur);
		if (rc == TB_ERR_NOT_FOUND)
			return tb_fail(err, TB_ERR_NOT_FOUND, "baseline", "no matrix with id %lld to compare against",
				       (long long)baseline);
		return rc;
	}
	rc = tb_compare_tables(cur, base, max_drop_pct, metric, out, err);
	json_decref(cur);
	json_decref(base);
	return rc;
}

int tb_compare_tables(const json_t *cur, const json_t *base, double max_drop_pct, const char *metric, json_t **out,
		      struct tb_error *err)
{
	json_t *o = json_pack("{s:O, s:O, s:O, s:O, s:s, s:f}", "matrix", json_object_get(cur, "matrix"), "baseline",
			      json_object_get(base, "matrix"), "state", json_object_get(cur, "state"), "baseline_state",
			      json_object_get(base, "state"), "metric", metric, "max_drop_pct", max_drop_pct);

	*out = NULL;
	if (o == NULL || tb_compare_cells(json_object_get(cur, "cells"), json_object_get(base, "cells"), metric,
					  max_drop_pct, o) != 0) {
		json_decref(o);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	*out = o;
	return 0;
}
