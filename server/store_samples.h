/*
 * store_samples.h - a run's CPU and memory samples kept in their own table
 * (run_samples, issue 20 item 1), apart from the events: the event
 * retention deletes run.sample events, never these.  One row per sample of
 * one host in one run; the sample is run_sample.h's JSON object as text.
 * Blocking (SQLite), thread-safe as the store.  Strings of a row given to a
 * callback are valid during the call only.
 */
#ifndef TB_STORE_SAMPLES_H
#define TB_STORE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "store.h"

struct tb_sample_row {
	int64_t run_id;
	const char *host; /* machine name */
	const char *side; /* "client", "server" or "router" */
	int n;            /* the sample's number among the host's in the run, from 0 */
	int64_t at_ms;    /* unix ms when it was read */
	const char *json; /* the sample (run_sample.h's tb_sample_delta object) */
};

/* Store rows[0..n) in one transaction (the sampler writes a batch every
 * few seconds, not a row a second).  A row already there (same run, host
 * and n) is replaced.  0 or TB_ERR_IO; nothing stored on an error. */
int tb_store_samples_add(struct tb_store *st, const struct tb_sample_row *rows, size_t n, struct tb_error *err);

/* Each sample of run_id, by host then n, to fn.  0 or TB_ERR_IO. */
typedef void (*tb_sample_row_fn)(void *cls, const struct tb_sample_row *row);
int tb_store_samples_of_run(struct tb_store *st, int64_t run_id, tb_sample_row_fn fn, void *cls, struct tb_error *err);

/* Each sample of every run of matrix_id, by run, host, n, to fn (a
 * matrix's results in one query).  0 or TB_ERR_IO. */
int tb_store_samples_of_matrix(struct tb_store *st, int64_t matrix_id, tb_sample_row_fn fn, void *cls,
			       struct tb_error *err);

/* The run.rtt events of matrix_id (latency beside its runs; kept with the
 * events), oldest first, to fn: a matrix's latency summaries in one query.
 * 0 or TB_ERR_IO. */
int tb_store_samples_rtt_events(struct tb_store *st, int64_t matrix_id, tb_event_fn fn, void *cls,
				struct tb_error *err);

#endif /* TB_STORE_SAMPLES_H */
