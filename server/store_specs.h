/*
 * store_specs.h - the spec library: named matrix specs, each a list of
 * versions (1, 2, ...; a version never changes once written).  SQL in
 * store_specs.c.
 *
 * Same rules as store.h: thread-safe, every call blocks on disk I/O, rows
 * handed to callbacks are valid during the callback only and the callback
 * runs under the store's lock (it must not call the store).
 */
#ifndef TB_STORE_SPECS_H
#define TB_STORE_SPECS_H

#include <stdint.h>

#include "store.h"

struct tb_spec_row {
	const char *name;
	int64_t version;
	const char *spec; /* the JSON text as pushed */
	const char *author;
	int64_t created_at;
	int64_t nversions; /* in lists of names: how many versions it has; else 0 */
};
typedef void (*tb_spec_row_fn)(void *cls, const struct tb_spec_row *r);

/* Append a version of name (the next number, 1 for a new name) holding
 * spec; its number into *version. */
int tb_store_spec_insert(struct tb_store *st, const char *name, const char *spec, const char *author, int64_t *version,
			 struct tb_error *err);
/* Every name with its latest version (nversions set), by name. */
int tb_store_spec_each_latest(struct tb_store *st, tb_spec_row_fn fn, void *cls, struct tb_error *err);
/* The versions of name, oldest first (fn not called when there are none). */
int tb_store_spec_each_version(struct tb_store *st, const char *name, tb_spec_row_fn fn, void *cls,
			       struct tb_error *err);
/* One version (0: the latest) of name: TB_ERR_NOT_FOUND when there is none. */
int tb_store_spec_get(struct tb_store *st, const char *name, int64_t version, tb_spec_row_fn fn, void *cls,
		      struct tb_error *err);

/* ---- schedules: one per spec name ---- */

struct tb_schedule_row {
	const char *name;     /* the spec it starts (its latest version) */
	const char *cron;     /* cron.h pattern */
	const char *baseline; /* "latest-passing" or a matrix id in decimal */
	const char *metric;   /* compare.h metric */
	double max_drop;      /* percent */
	const char *author;   /* who set it: the matrices' actor */
	int64_t next_at;      /* when it starts next (epoch seconds) */
	int64_t created_at;
	int64_t failed_at;   /* when its last time did not start a matrix; 0: it did (or none came) */
	const char *failure; /* why (NULL when failed_at is 0) */
};
typedef void (*tb_schedule_row_fn)(void *cls, const struct tb_schedule_row *r);

/* Set name's schedule (replacing one it had). */
int tb_store_schedule_put(struct tb_store *st, const struct tb_schedule_row *r, struct tb_error *err);
/* TB_ERR_NOT_FOUND when name has none. */
int tb_store_schedule_delete(struct tb_store *st, const char *name, struct tb_error *err);
/* Every schedule by name (name NULL) or name's; due_by not 0: only those
 * whose next time is at due_by or before. */
int tb_store_schedule_each(struct tb_store *st, const char *name, int64_t due_by, tb_schedule_row_fn fn, void *cls,
			   struct tb_error *err);
int tb_store_schedule_set_next(struct tb_store *st, const char *name, int64_t next_at, struct tb_error *err);
/* name's time at `at` did not start its matrix, for why (at 0, why NULL:
 * one did; the failure is cleared). */
int tb_store_schedule_set_failure(struct tb_store *st, const char *name, int64_t at, const char *why,
				  struct tb_error *err);

/* ---- the CI gate's verdict per scheduled matrix ---- */

struct tb_gate_row {
	int64_t matrix_id;
	const char *spec;
	int64_t version;
	int64_t baseline_id; /* 0: none (yet) */
	const char *verdict; /* NULL: not judged yet; "pass", "fail", "no_baseline", "error" */
	const char *detail;  /* JSON text or NULL */
	int64_t at;          /* when judged (0: not yet) */
	const char *state;   /* the matrix's state now */
};
typedef void (*tb_gate_row_fn)(void *cls, const struct tb_gate_row *r);

/* A matrix started for spec version version; baseline_id a pinned baseline or 0. */
int tb_store_gate_insert(struct tb_store *st, int64_t matrix_id, const char *spec, int64_t version, int64_t baseline_id,
			 struct tb_error *err);
/* The verdict of matrix_id. */
int tb_store_gate_set(struct tb_store *st, int64_t matrix_id, int64_t baseline_id, const char *verdict,
		      const char *detail, struct tb_error *err);
/* Gates not judged whose matrix has ended (not queued or running). */
int tb_store_gate_each_ended(struct tb_store *st, tb_gate_row_fn fn, void *cls, struct tb_error *err);
/* matrix_id's gate (fn not called when it has none: not started by a schedule). */
int tb_store_gate_get(struct tb_store *st, int64_t matrix_id, tb_gate_row_fn fn, void *cls, struct tb_error *err);
/* The last limit gates of spec, newest first. */
int tb_store_gate_each_recent(struct tb_store *st, const char *spec, int limit, tb_gate_row_fn fn, void *cls,
			      struct tb_error *err);
/* The newest matrix named spec, older than before, that succeeded and whose
 * gate (if it has one) did not fail: *id, 0 when none. */
int tb_store_gate_latest_passing(struct tb_store *st, const char *spec, int64_t before, int64_t *id,
				 struct tb_error *err);

#endif /* TB_STORE_SPECS_H */
