/*
 * compare.h - a matrix against a baseline matrix, cell by cell: the CI gate.
 *
 * Cells are matched by what they measured: client and server machine, the
 * OS each ran in, protocol, direction and every iperf3 parameter (the cell
 * numbers of the two matrices need not agree).  For each matched cell the
 * medians of the metric (a bitrate: higher is better) over the runs that
 * ended ok are compared: "dropped" when the median fell by more than
 * max_drop_pct percent of the baseline's, "failed" when the baseline has a
 * result and the matrix has none, "no_baseline" when the baseline has none.
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

/* The metrics a gate can compare: a cell statistic's name. */
int tb_compare_metric_ok(const char *metric);

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

#endif /* TB_COMPARE_H */
