/*
 * compare.h - a matrix against a baseline matrix, cell by cell: the CI gate.
 *
 * Cells are matched by what they measured: client and server machine, the
 * OS each ran in, protocol, direction and every iperf3 parameter (the cell
 * numbers of the two matrices need not agree).  For each matched cell the
 * medians of the metric over the runs that ended ok are compared.  For a
 * bitrate (receiver_bps, sender_bps: higher is better) a cell "dropped" when
 * its median fell by more than max_drop_pct percent of the baseline's; for
 * lost_percent, retransmits and jitter_ms (higher is worse) when it rose by
 * more than that, or, from a baseline median of 0, rose at all with the
 * interquartile ranges apart (change_pct is then null).  "failed" when the
 * baseline has a result and the matrix has none, "no_baseline" when the
 * baseline has none (a TCP cell has no loss or jitter, a UDP cell no
 * retransmits).  Beside the verdict, the spread of both sides (the q1, q3,
 * cv and noisy of results' Stats, null when absent), whether the IQRs
 * [q1, q3] overlap, and "beyond_spread": the IQRs are apart and the medians
 * differ by more than max_drop_pct either way (from a median of 0: at all),
 * a change that neither the noise of the repeats nor the allowed change
 * explains; the top-level "beyond_spread" lists those cells.
 * Cells found in only one of the two are listed ("new", "missing").  The
 * gate passes when no cell dropped or failed and at least one cell was
 * compared.
 *
 * {"matrix":ID, "baseline":ID, "state":..., "baseline_state":..., "metric":
 *  "receiver_bps", "max_drop_pct":5, "compared":N, "dropped":[cell ...],
 *  "pass":true|false, "cells":[{"cell":C|null, "baseline_cell":C|null,
 *  "client","client_os","server","server_os","protocol","direction",
 *  "params", "n", "baseline_n", "median", "baseline_median", "change_pct",
 *  "verdict": "ok"|"dropped"|"failed"|"no_baseline"|"new"|"missing"}]}
 *
 * Reads the store only; errors follow error.h (TB_ERR_NOT_FOUND names the
 * field "id" or "baseline").
 */
#ifndef TB_COMPARE_H
#define TB_COMPARE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_results_src;

/* The metrics a gate, an OS view or a history can follow: a cell
 * statistic's name (receiver_bps, sender_bps, lost_percent, retransmits,
 * jitter_ms; NULL is none).  The one list of them. */
int tb_compare_metric_ok(const char *metric);
/* 1 when a higher value of metric is worse (lost_percent, retransmits,
 * jitter_ms), 0 for a bitrate or an unknown name. */
int tb_compare_higher_is_worse(const char *metric);

/* The comparison of two "cells" arrays (tb_results_table_json's; null
 * entries skipped) into out: sets "compared", "pass", "dropped", "cells".
 * Each cell of cells takes the first baseline cell with the same key that
 * no earlier cell took (duplicates pair up in order); the key's fields are
 * compared with json_equal, an absent field counting as null.  Expected
 * O(n) time (a hash of the key), O(n) memory.  Returns 0, or -1 when out of
 * memory (out then unchanged).  Borrows everything. */
/* The matching alone: match[i] (the caller's array of json_array_size(cells))
 * gets the index in base_cells of the cell that cells[i] matches, -1 for
 * none, -2 when cells[i] is null; the rules of tb_compare_cells.  O(n)
 * expected.  0, or -1 when out of memory. */
int tb_compare_match(const json_t *cells, const json_t *base_cells, long *match);

int tb_compare_cells(const json_t *cells, const json_t *base_cells, const char *metric, double max_drop, json_t *out);

/* Matrix id against baseline, both read through src (results.h). */
int tb_compare_json(const struct tb_results_src *src, int64_t id, int64_t baseline, double max_drop_pct,
		    const char *metric, json_t **out, struct tb_error *err);
/* The same of two results tables already read (tb_results_table_json's;
 * borrowed): for a caller that has cur's table anyway.  Reads nothing. */
int tb_compare_tables(const json_t *cur, const json_t *base, double max_drop_pct, const char *metric, json_t **out,
		      struct tb_error *err);

/* ---- compare_csv.c ---- */

/* A comparison (tb_compare_json's object) as CSV (RFC 4180, a header line,
 * one row per cell; params as compact JSON).  *out malloc'd (the caller
 * frees it), *len its bytes.  0, or -1 when out of memory. */
int tb_compare_csv(const json_t *cmp, char **out, size_t *len);

/* A hosts diff (tb_hostsnap_diff's object) as CSV: host, os, in, path,
 * matrix, other; one row per difference, a host in one matrix only as one
 * row with an empty path.  As tb_compare_csv. */
int tb_compare_hosts_diff_csv(const json_t *diff, char **out, size_t *len);

#endif /* TB_COMPARE_H */
