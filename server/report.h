/*
 * report.h - a matrix as a document to publish: a self-contained HTML file
 * (tables, box-plot charts as static SVG, the exact commands, the hosts'
 * metadata, the spec; no script, no request for anything outside it) or
 * Markdown with the same tables (the charts left out with a note).  With a
 * baseline, an A/B part: the comparison (compare.h) with both spreads, its
 * chart and what changed on the hosts (the hosts diff).
 *
 * With testbedd's public URL known (--public-url) the cells and runs link
 * to their pages there (URL/#/matrices/ID?cell=N, URL/#/runs/ID); without
 * it there is no link at all (a report read offline points nowhere dead).
 *
 * tb_report_gather reads the store only (blocking on it: one read per piece,
 * and one per cell for its commands, at most TB_REPORT_MAX_COMMANDS); the
 * renderers are pure.  Every json_t of struct tb_report is owned by it
 * (tb_report_free); text handed out is malloc'd and the caller's.  Errors
 * follow error.h (TB_ERR_NOT_FOUND naming "id" or "baseline").
 */
#ifndef TB_REPORT_H
#define TB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_results_src;

/* The cells whose commands a report lists (the rest are counted). */
#define TB_REPORT_MAX_COMMANDS 200
/* The cells a chart draws (the rest are named in its caption). */
#define TB_REPORT_MAX_CHART_ROWS 120

struct tb_report {
	json_t *matrix;        /* tb_results_matrix_json: id, name, state, spec, times */
	json_t *table;         /* tb_results_table_json: runs, cells with Stats */
	json_t *hosts;         /* tb_hostsnap_json's "hosts" array (may be empty) */
	json_t *commands;      /* [{"cell", "run", "client_command", "server_command"}] */
	int commands_left;     /* cells past TB_REPORT_MAX_COMMANDS */
	json_t *compare;       /* tb_compare_json against the baseline, or NULL */
	json_t *diff;          /* tb_hostsnap_diff against the baseline, or NULL */
	char generated[32];    /* when, RFC 3339 */
	const char *version;   /* testbedd's (static) */
	const char *link_base; /* testbedd's --public-url (borrowed, no trailing slash), or NULL: no links */
	json_t *flames;        /* profiles (run_profile.h) of the commands' runs, each with its "cell"; or NULL */
};

/* Everything a report of matrix id shows (baseline 0: no A/B part; metric:
 * the A/B part's, tb_compare_metric_ok's, NULL for receiver_bps). */
int tb_report_gather(struct tb_services *sv, const struct tb_results_src *src, int64_t id, int64_t baseline,
		     const char *metric, struct tb_report *r, struct tb_error *err);
void tb_report_free(struct tb_report *r);

/* The report as HTML (report_html.c) or Markdown (report_md.c): *out
 * malloc'd, *len bytes.  0, or -1 when out of memory. */
int tb_report_html(const struct tb_report *r, char **out, size_t *len);
int tb_report_md(const struct tb_report *r, char **out, size_t *len);

/* The Content-Security-Policy the HTML report is served with (and that it
 * also carries in a meta element, for when it is opened from a file):
 * sandboxed, nothing loaded, inline style only. */
#define TB_REPORT_CSP                                                                              \
	"sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; " \
	"form-action 'none'; frame-ancestors 'none'"

#endif /* TB_REPORT_H */
