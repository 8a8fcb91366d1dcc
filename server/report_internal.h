/*
 * report_internal.h - what the report files share: escaping, the formatting
 * of a metric's value, a cell's names, and the SVG charts (report_svg.c).
 * Helpers in report.c.  All write into a tb_outbuf (outbuf.h), which keeps
 * an allocation failure for the caller to see.
 */
#ifndef TB_REPORT_INTERNAL_H
#define TB_REPORT_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "outbuf.h"

/* The metrics a report tabulates, with their headings. */
struct rp_metric {
	const char *key, *title;
};
extern const struct rp_metric rp_metrics[]; /* ends with {NULL, NULL} */

/* s with & < > " ' as entities (NULL as ""). */
void rp_esc(struct tb_outbuf *b, const char *s);
/* A value of metric as a person reads it ("12.90 Gbit/s", "2.40 %",
 * "13", "0.012 ms"); "—" when NaN. */
void rp_fmt(char *buf, size_t n, const char *metric, double v);
/* A member that is a number, else NaN. */
double rp_num(const json_t *o, const char *key);
/* A member that is a string, else "". */
const char *rp_str(const json_t *o, const char *key);
/* "a (linux) → b (freebsd)" */
void rp_pair(char *buf, size_t n, const json_t *cell);
/* "bitrate=10M parallel=4": the parameters set (not null or false, and not
 * protocol or direction, which have columns), sorted by name. */
void rp_params(char *buf, size_t n, const json_t *params);
/* One line of what a cell is: "#3 a → b udp reverse bitrate=10M". */
void rp_label(char *buf, size_t n, const json_t *cell);
/* The per-cell table's and the A/B table's columns, and a row of each as
 * the texts of its columns (what both renderers show; each adds its own
 * markup).  Numeric columns: rp_cell_num / rp_ab_num. */
#define RP_TEXT 240
#define RP_CELL_NCOLS 13
#define RP_AB_NCOLS 9
extern const char *const rp_cell_cols[]; /* RP_CELL_NCOLS names, then NULL */
extern const char *const rp_ab_cols[];   /* RP_AB_NCOLS names, then NULL */
int rp_cell_num(int col);
int rp_ab_num(int col);
/* Cell c's texts (medians, IQR and CV of the receiver bitrate, ...); the
 * CV gets noisy_mark appended when the receiver bitrate is noisy.  Returns
 * 1 when it is. */
int rp_cell_row(const json_t *c, const char *noisy_mark, char vals[RP_CELL_NCOLS][RP_TEXT]);
/* A compared row's texts (metric's medians, IQRs, change, overlap,
 * verdict).  Returns 1 when its verdict is dropped or failed. */
int rp_ab_row(const json_t *row, const char *metric, char vals[RP_AB_NCOLS][RP_TEXT]);
/* The page under base (the public URL) of a run (run > 0), else of cell
 * (>= 0) of matrix, else of matrix; a raw URL: each renderer escapes it. */
#define RP_HREF 640
void rp_href(char *buf, size_t n, const char *base, long long matrix, long long cell, long long run);
/* A host's metadata as the report's columns (rp_host_cols; each a string). */
extern const char *const rp_host_cols[];
void rp_host_values(const json_t *meta, char vals[][160]);

/* ---- report_svg.c ---- */

/* A box plot per cell of metric's Stats (median, quartiles, min..max
 * whiskers, every value a dot), noisy cells marked; nothing when no cell
 * has the metric.  Returns the number of cells drawn. */
int rp_svg_cells(struct tb_outbuf *b, const json_t *cells, const char *metric, const char *title);
/* The A/B chart: per compared cell, the baseline's and this matrix's
 * interquartile range and median; dropped cells in red. */
int rp_svg_ab(struct tb_outbuf *b, const json_t *compare);
/* report_flame.c: r->flames read from state_dir's profiles of r->commands'
 * runs (NULL state_dir: none), and drawn into the HTML or Markdown report. */
void rp_gather_flames(const char *state_dir, struct tb_report *r);
void rp_html_flames(struct tb_outbuf *b, const struct tb_report *r);
void rp_md_flames(struct tb_outbuf *b, const struct tb_report *r);

#endif /* TB_REPORT_INTERNAL_H */
