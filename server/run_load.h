/*
 * run_load.h - what a run cost its hosts and did to latency, summed up for
 * results, the CSV export and the A/B view (issue 20 items 1 and 7): per
 * end and router the CPU summary of its samples (run_sample.h's
 * tb_sample_summary: mean and max per core, the busiest core, the
 * interrupt share), and latency's idle and loaded median and p95
 * (irtt_parse.h's tb_rtt_phase_summary).  The figures are computed there,
 * once; this file only gathers them per run and per cell.
 *
 * A run's load: {"hosts": {host: {"side", "summary"}}, and flat figures
 * (absent when not measured): client_busiest (core), client_busiest_mean,
 * client_busiest_max, client_busy_mean, client_interrupt_share,
 * client_mem_used_max_pct; the same for server_ and router_ (the busiest
 * router of the path, named by "router"); latency_idle_median_ms,
 * latency_idle_p95_ms, latency_load_median_ms, latency_load_p95_ms}.
 * A cell's load: the median over its runs of each flat figure but the
 * core numbers and the router's name.
 */
#ifndef TB_RUN_LOAD_H
#define TB_RUN_LOAD_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* The flat figures a cell's load carries (NULL-terminated), in CSV order. */
extern const char *const tb_run_load_figures[];

/* A run's load from its hosts ({host: {"side", "samples": [...]}}, as GET
 * /runs/{id}/samples builds them; NULL: none) and its latency phases' bins
 * (arrays of irtt_parse.h bins with their "rtt" lists; NULL: none).  NULL
 * when neither was measured.  Pure. */
json_t *tb_run_load_make(const json_t *hosts, const json_t *idle_bins, const json_t *load_bins);

/* A cell's load from its runs' loads (an array; nulls skipped): the median
 * of each of tb_run_load_figures.  NULL when no run has one.  Pure. */
json_t *tb_run_load_cell(const json_t *loads);

/* The loads of every run of matrix_id into *out: {"RUN_ID": load} (runs
 * that measured nothing absent), from the samples table and the run.rtt
 * events, two queries.  0 or a store error; the caller owns *out. */
int tb_run_load_of_matrix(struct tb_store *st, int64_t matrix_id, json_t **out, struct tb_error *err);

#endif /* TB_RUN_LOAD_H */
