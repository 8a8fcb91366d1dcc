/*
 * history.h - the matrices over time: the list of them by name, state and
 * age (GET /api/v1/matrices), and one cell across every matrix that has it
 * (GET /api/v1/matrices/{id}/cells/{n}/history).
 *
 * A cell is found in another matrix by compare.h's key (client, client_os,
 * server, server_os, protocol, direction and params, through
 * tb_compare_match): the first cell of that matrix with the same key.  The
 * history is a series, oldest first, of that cell's Stats object of one
 * metric per matrix (results.h: n, median, min, max... and whatever the
 * results add, quartiles included), with the matrix's id, name, state and
 * time.
 *
 * Reads the store only (blocking on it, a few queries per call); every
 * json_t returned is a new reference the caller owns.
 * Errors follow error.h.
 */
#ifndef TB_HISTORY_H
#define TB_HISTORY_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_results_src;
struct tb_matrix_filter;

/* At most this many matrices are looked at for one history (newest first),
 * at most TB_HISTORY_MAX points given. */
#define TB_HISTORY_SCAN 500
#define TB_HISTORY_MAX 500
#define TB_HISTORY_DEFAULT 50

/* Fill f's name, state and since from query strings (NULL: absent): name
 * 1..128 bytes, state one of queued, running, succeeded, failed, canceled,
 * interrupted, since an RFC 3339 time.  TB_ERR_INVALID names the field. */
int tb_history_filter_parse(const char *name, const char *state, const char *since, struct tb_matrix_filter *f,
			    struct tb_error *err);

/* The matrices f selects, newest first, as GET /matrices/{id} without runs
 * (results.h), into *out (an array); *total how many match before paging.
 * Two queries whatever the page's size (tb_results_matrix_find_json). */
int tb_history_matrices_json(const struct tb_results_src *src, const struct tb_matrix_filter *f, json_t **out,
			     int *total, struct tb_error *err);

/* Cell cell of matrix id across the matrices f selects (f->limit: at most
 * that many points; offset ignored):
 * {"matrix":ID, "cell":N, "metric":M, "key":{client, client_os, server,
 *  server_os, protocol, direction, params, link}, "scanned":K,
 *  "truncated":bool, "points":[{"matrix","name","state","created_at",
 *  "cell","runs","failed","n","stats":Stats|null}]} (points oldest first).
 * TB_ERR_NOT_FOUND names "id" (no such matrix) or "cell" (no such cell).
 * Costs the target's results table, a query for the candidates (at most
 * TB_HISTORY_SCAN matrices with a run of the cell's pair), and one for the
 * runs of that pair in each f->limit of them looked at. */
int tb_history_cell_json(const struct tb_results_src *src, int64_t id, int cell, const char *metric,
			 const struct tb_matrix_filter *f, json_t **out, struct tb_error *err);

#endif /* TB_HISTORY_H */
