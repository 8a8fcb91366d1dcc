/*
 * results.h - matrices and runs as the API shows them: a matrix with its
 * progress, a run with everything needed to reproduce it, and the results
 * table (one row per run and a summary per cell across repeats: n, mean,
 * median, stdev, min, max, quartiles, cv, every value and the noisy flag of
 * sender and receiver bitrate, retransmits, UDP loss and jitter; see
 * stats.h) as JSON or CSV.
 *
 * Reads the store only (blocking on it); every json_t and buffer returned is
 * a new reference / malloc'd string the caller owns.  Errors follow error.h
 * (TB_ERR_NOT_FOUND naming the id).
 */
#ifndef TB_RESULTS_H
#define TB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_store;

/* What results read: the store, and what runs now (every matrix running side
 * by side, with its run in progress), which the caller asks the runner for
 * (tb_runner_results_src): results never call the runner. */
#define TB_MX_NOW_MAX 8
struct tb_mx_now {
	int64_t matrix; /* a matrix running */
	int seq;        /* the seq of its run in progress, -1: none */
};
struct tb_results_src {
	struct tb_store *store;
	struct tb_mx_now now[TB_MX_NOW_MAX];
	int nnow; /* how many of now[] run */
};

/* A matrix (api/openapi.yaml Matrix); parts adds "runs": [RunBrief] and
 * "boots" (each a query more: a matrix.state event needs neither). */
#define TB_MX_JSON_RUNS 1u
#define TB_MX_JSON_BOOTS 2u
int tb_results_matrix_json(const struct tb_results_src *src, int64_t id, unsigned int parts, json_t **out,
			   struct tb_error *err);
/* The matrices f selects (store.h tb_store_matrix_find), newest first,
 * without runs, into *out (an array); *total (may be NULL) how many match
 * before paging.  Two store queries whatever the page's size. */
struct tb_matrix_filter;
int tb_results_matrix_find_json(const struct tb_results_src *src, const struct tb_matrix_filter *f, json_t **out,
				int *total, struct tb_error *err);
/* One run with its commands, personas, versions, summary and intervals. */
int tb_results_run_json(const struct tb_results_src *src, int64_t run_id, json_t **out, struct tb_error *err);
/* {"matrix":ID,"name":..,"state":..,"runs":[row],"cells":[cell]}; each
 * Stats is "noisy" when its cv is over noisy_cv (the _cv form; the plain one
 * uses TB_STATS_NOISY_CV, 5 %). */
int tb_results_table_json(const struct tb_results_src *src, int64_t id, json_t **out, struct tb_error *err);
int tb_results_table_json_cv(const struct tb_results_src *src, int64_t id, double noisy_cv, json_t **out,
			     struct tb_error *err);
/* The cells (as the table's "cells", summarised with TB_STATS_NOISY_CV)
 * of the runs of client to server with protocol and direction, of each
 * matrix f selects with an id lo..hi, as {"ID": [cell|null, ...]} into
 * *out: what a history matches its cell in (cells of other pairs are null,
 * as cells without runs are).  One store query (tb_store_run_each_pair). */
int tb_results_pair_cells(const struct tb_results_src *src, const struct tb_matrix_filter *f, const char *client,
			  const char *server, const char *protocol, const char *direction, int64_t lo, int64_t hi,
			  json_t **out, struct tb_error *err);
/* The same as CSV (RFC 4180, header line): cells 0 one row per run, 1 one
 * row per cell (a Stats' values as numbers separated by spaces). */
int tb_results_table_csv(const struct tb_results_src *src, int64_t id, int cells, char **out, size_t *len,
			 struct tb_error *err);
int tb_results_table_csv_cv(const struct tb_results_src *src, int64_t id, int cells, double noisy_cv, char **out,
			    size_t *len, struct tb_error *err);
/* A run's raw output (side "client"|"server", stream "stdout"|"stderr"). */
int tb_results_raw(const struct tb_results_src *src, int64_t run_id, const char *side, const char *stream, char **out,
		   size_t *len, struct tb_error *err);

#endif /* TB_RESULTS_H */
