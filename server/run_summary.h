/*
 * run_summary.h - what a run keeps of its tool's results (run_exec.c):
 * its figures (sender and receiver bitrate, retransmits, loss), the
 * intervals as the store's rows, and the summary JSON of the run's row
 * (api/openapi.yaml Run.summary): both ends' "end", the client's cookie,
 * version, system_info, test_start and error, the server's error, the tool,
 * the idle wait and the latency summary.
 *
 * Pure: JSON in, figures, rows and text out; no I/O, no locks.
 */
#ifndef TB_RUN_SUMMARY_H
#define TB_RUN_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store.h"

/* r's figures from the client's normalised result (traffic.h): -1 for
 * what it lacks; a stopped client's receiver side (0 bytes: it never heard
 * the server's figures) is no measurement. */
void tb_run_figures(struct tb_run_row *r, const json_t *result, bool stopped);

/* A tool whose client reports only its own side (iperf2): the other side's
 * end (the receiver's, or with -R the sender's) from the server's result,
 * into the client's end, where tb_run_figures reads both. */
void tb_run_merge_ends(json_t *client_result, const json_t *server_result);

/* The intervals of result into rows[at..max) for the store (each data a
 * malloc'd JSON text the caller frees); the next free index. */
size_t tb_run_interval_rows(const json_t *result, const char *side, struct tb_interval_row *rows, size_t at,
			    size_t max);

/* The run's summary as compact JSON text (malloc'd; NULL: out of memory).
 * tool, idle and latency may be NULL. */
char *tb_run_summary(const json_t *client_result, const json_t *server_result, const char *tool, const json_t *idle,
		     const json_t *latency);

#endif /* TB_RUN_SUMMARY_H */
