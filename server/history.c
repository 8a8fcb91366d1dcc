/* history.c - the matrices over time: the filtered list, and one cell
 * across matrices (history.h). */
#include "history.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"
#include "store.h"
#include "timeutil.h"

static const char *const states[] = {"queued", "running", "succeeded", "failed", "canceled", "interrupted", NULL};

int tb_history_filter_parse(const char *name, const char *state, const char *since, struct tb_matrix_filter *f,
			    struct tb_error *err)
{
	int known = 0;

	if (name != NULL && (name[0] == '\0' || strlen(name) > 128))
		return tb_fail(err, TB_ERR_INVALID, "name", "name must be 1..128 bytes (a part of the matrix name)");
	for (int i = 0; state != NULL && states[i] != NULL; i++)
		known |= strcmp(state, states[i]) == 0;
	if (state != NULL && !known)
		return tb_fail(
			err, TB_ERR_INVALID, "state",
			"state must be queued, running, succeeded, failed, canceled or interrupted, got \"%.20s\"",
			state);
	if (since != NULL && (tb_time_parse(since, &f->since) != 0 || f->since < 0))
		return tb_fail(err, TB_ERR_INVALID, "since",
			       "since must be a time like 2026-12-01T00:00:00Z (RFC 3339), got \"%.40s\"", since);
	f->name = name;
	f->state = state;
	return 0;
}

/* Each brief as {"id","name","state","created_at"} appended to the array cls
 * (a failed append leaves it out: the caller checks the count). */
static void on_brief(void *cls, const struct tb_matrix_brief *m)
{
	json_array_append_new(cls, json_pack("{s:I, s:s, s:s, s:o}", "id", (json_int_t)m->id, "name", m->name, "state",
					     m->state, "created_at", tb_time_json(m->created_at)));
}

int tb_history_matrices_json(const struct tb_results_src *src, const struct tb_matrix_filter *f, json_t **out,
			     int *total, struct tb_error *err)
{
	return tb_results_matrix_find_json(src, f, out, total, err);
}

/* from's member key, or null (a borrowed reference). */
static json_t *member(const json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);

	return v != NULL ? v : json_null();
}

/* What the cell measured: compare.h's key (and the link, for a person). */
static json_t *key_of(const json_t *cell)
{
	static const char *const fields[] = {"client",    "client_os", "server", "server_os", "protocol",
					     "direction", "params",    "link",   NULL};
	json_t *k = json_object();

	for (int i = 0; k != NULL && fields[i] != NULL; i++)
		if (json_object_set_nocheck(k, fields[i], member(cell, fields[i])) != 0) {
			json_decref(k);
			return NULL;
		}
	return k;
}

/* A point of the series: matrix brief b's cell c. */
static json_t *point(const json_t *b, const json_t *c, const char *metric)
{
	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "matrix", member(b, "id"), "name",
			 member(b, "name"), "state", member(b, "state"), "created_at", member(b, "created_at"), "cell",
			 member(c, "cell"), "runs", member(c, "runs"), "failed", member(c, "failed"), "n",
			 member(c, "n"), "stats", member(c, metric));
}

/* Matrix brief b's cell with target's key (among its cells of the pair,
 * tb_results_pair_cells' by_id) as a point appended to points, or nothing
 * when it has none.  one: [target]. */
static int add_point(const json_t *by_id, const json_t *b, const json_t *one, const char *metric, json_t *points,
		     struct tb_error *err)
{
	char key[24];
	const json_t *cells;
	long match = -1;

	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(b, "id")));
	if ((cells = json_object_get(by_id, key)) == NULL) /* deleted meanwhile */
		return 0;
	if (tb_compare_match(one, cells, &match) != 0)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (match >= 0 && json_array_append_new(points, point(b, json_array_get(cells, (size_t)match), metric)) != 0)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

/* The cells of the pair of target in candidates from..to-1 of cands
 * (newest first) into *by_id: one store read for them all. */
static int pair_cells_of(const struct tb_results_src *src, const struct tb_matrix_filter *scan, const json_t *target,
			 const json_t *cands, size_t from, size_t to, json_t **by_id, struct tb_error *err)
{
	return tb_results_pair_cells(src, scan, json_string_value(json_object_get(target, "client")),
				     json_string_value(json_object_get(target, "server")),
				     json_string_value(json_object_get(target, "protocol")),
				     json_string_value(json_object_get(target, "direction")),
				     json_integer_value(json_object_get(json_array_get(cands, to - 1), "id")),
				     json_integer_value(json_object_get(json_array_get(cands, from), "id")), by_id,
				     err);
}

/* The points of target (one: [target]) in the candidates, newest first,
 * until limit points: the candidates' cells read limit matrices at a time
 * (one store read each), *scanned how many were looked at. */
static int scan_points(const struct tb_results_src *src, const struct tb_matrix_filter *scan, int64_t id,
		       const json_t *target, const json_t *one, const json_t *cands, const char *metric, int limit,
		       json_t *points, size_t *scanned, struct tb_error *err)
{
	size_t n = json_array_size(cands), i = 0, batch = limit > 0 ? (size_t)limit : 1;
	int rc = 0;

	while (rc == 0 && i < n && (int)json_array_size(points) < limit) {
		size_t to = i + batch < n ? i + batch : n;
		json_t *by_id = NULL;

		if ((rc = pair_cells_of(src, scan, target, cands, i, to, &by_id, err)) != 0)
			break;
		for (; rc == 0 && i < to && (int)json_array_size(points) < limit; i++) {
			const json_t *b = json_array_get(cands, i);

			(*scanned)++;
			if (json_integer_value(json_object_get(b, "id")) != id)
				rc = add_point(by_id, b, one, metric, points, err);
			else if (json_array_append_new(points, point(b, target, metric)) != 0)
				/* the matrix asked about: its own cell, whatever its twins */
				rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		}
		json_decref(by_id);
	}
	return rc;
}

/* The target cell of matrix id (a new reference to its results table in
 * *table; *cell borrowed from it). */
static int target_of(const struct tb_results_src *src, int64_t id, int n, json_t **table, json_t **cell,
		     struct tb_error *err)
{
	int rc;

	if ((rc = tb_results_table_json(src, id, table, err)) != 0)
		return rc;
	*cell = json_array_get(json_object_get(*table, "cells"), (size_t)n);
	if (*cell == NULL || json_is_null(*cell)) {
		json_decref(*table);
		*table = NULL;
		return tb_fail(err, TB_ERR_NOT_FOUND, "cell", "matrix %lld has no cell %d", (long long)id, n);
	}
	return 0;
}

int tb_history_cell_json(const struct tb_results_src *src, int64_t id, int cell, const char *metric,
			 const struct tb_matrix_filter *f, json_t **out, struct tb_error *err)
{
	struct tb_matrix_filter scan = *f;
	json_t *table = NULL, *target = NULL, *cands = json_array(), *points = json_array(), *one = NULL, *o;
	size_t i, scanned = 0;
	int rc;

	*out = NULL;
	scan.offset = 0;
	scan.limit = TB_HISTORY_SCAN;
	if (cands == NULL || points == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	else if ((rc = target_of(src, id, cell, &table, &target, err)) == 0 &&
		 (rc = tb_store_matrix_find_pair(
			  src->store, &scan, json_string_value(json_object_get(target, "client")),
			  json_string_value(json_object_get(target, "server")),
			  json_string_value(json_object_get(target, "protocol")),
			  json_string_value(json_object_get(target, "direction")), on_brief, cands, err)) == 0) {
		if ((one = json_pack("[O]", target)) == NULL)
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		else
			rc = scan_points(src, &scan, id, target, one, cands, metric, f->limit, points, &scanned, err);
	}
	o = rc != 0 ? NULL
		    : json_pack("{s:I, s:i, s:s, s:o, s:i, s:b, s:[]}", "matrix", (json_int_t)id, "cell", cell,
				"metric", metric, "key", key_of(target), "scanned", (int)scanned, "truncated",
				scanned < json_array_size(cands) || json_array_size(cands) == TB_HISTORY_SCAN,
				"points");
	if (rc == 0 && o == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (rc == 0) {
		json_t *series = json_object_get(o, "points");

		for (i = json_array_size(points); i > 0; i--) /* oldest first */
			json_array_append(series, json_array_get(points, i - 1));
		*out = o;
	}
	json_decref(one);
	json_decref(table);
	json_decref(cands);
	json_decref(points);
	return rc;
}
