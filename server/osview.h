/*
 * osview.h - an OS-combination matrix side by side: for each measurement
 * slot (client, server, link, protocol, direction, params) the cell run
 * under one OS pair ("client_os/server_os", e.g. "ubuntu/ubuntu") against
 * the cell run under another, with both spreads (stats.h: quartiles R type
 * 7, cv, every value), the difference of the medians in percent, whether
 * the interquartile ranges overlap, a two-sided Mann-Whitney U p-value
 * when each side has n >= 3 (stats.h: exact below 50 a side without ties,
 * else the normal approximation with tie and continuity corrections), and
 * per side the sender against the receiver, so that "sent 3.11, received
 * 1.74 Gbit/s" is flagged as loss.
 *
 * Pure: reads a results table (tb_results_table_json's object, whose Stats
 * carry "values") and builds JSON; no store, no I/O.  Every json_t
 * returned is a new reference the caller owns; the table stays borrowed.
 * Errors follow error.h.
 */
#ifndef TB_OSVIEW_H
#define TB_OSVIEW_H

#include <jansson.h>

#include "error.h"

/* The receiver got less than this percentage below what the sender sent
 * (medians): the side is flagged "loss". */
#define TB_OSVIEW_LOSS_GAP_PCT 5.0
/* U test only with at least this many values on each side. */
#define TB_OSVIEW_U_MIN_N 3

/* Whether s is an OS pair "client_os/server_os" of two names (validate.h
 * tb_valid_name). */
int tb_osview_pair_ok(const char *s);

/* The view of table (api/openapi.yaml OsView) comparing OS pair a with b
 * (NULL: the first, resp. second, pair the matrix has, by name) on metric.
 * noisy_cv is echoed (the table's Stats were computed with it).
 * TB_ERR_INVALID (field "a"/"b") when a pair is named that no cell of the
 * matrix ran under, or a and b are the same. */
int tb_osview_json(const json_t *table, const char *a, const char *b, const char *metric, double noisy_cv, json_t **out,
		   struct tb_error *err);

#endif /* TB_OSVIEW_H */
