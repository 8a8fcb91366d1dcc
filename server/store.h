/*
 * store.h - the only place that speaks SQL: testbedd's state in one SQLite
 * database (WAL mode, numbered migrations, busy timeout, every write in a
 * transaction, an integrity check when opened).
 *
 * Thread-safe: one connection behind a mutex; every call blocks on disk I/O.
 * Rows passed to callbacks are valid only during the callback.  Strings in
 * row structs passed in are copied; nothing returned needs freeing unless
 * said so.  Times are Unix seconds (UTC).
 */
#ifndef TB_STORE_H
#define TB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "error.h"

struct tb_store;

/* Open (create) the database at path, run pending migrations and an
 * integrity check.  A damaged database is refused with a message.  The
 * database file and its -wal/-shm/-journal are mode 0600 (created so, or
 * tightened), whatever the umask. */
int tb_store_open(const char *path, struct tb_store **out, struct tb_error *err);
void tb_store_close(struct tb_store *st);

/* The schema version after migrations (the number of the last one). */
int tb_store_schema_version(struct tb_store *st);

/* ---- tokens (stored as SHA-256 of the secret) ---- */
struct tb_token_row {
	int64_t id;
	const char *name;
	const char *role;
	int64_t created_at;
	int64_t last_used_at; /* 0: never */
	int revoked;
	uint8_t hash[TB_SHA256_LEN];
};

typedef void (*tb_token_fn)(void *cls, const struct tb_token_row *row);

int tb_store_token_count(struct tb_store *st, int64_t *count, struct tb_error *err);
int tb_store_token_insert(struct tb_store *st, const char *name, const char *role, const uint8_t hash[TB_SHA256_LEN],
			  int64_t now, int64_t *id, struct tb_error *err);
/* Calls fn once with the token, or returns TB_ERR_NOT_FOUND. */
int tb_store_token_get(struct tb_store *st, int64_t id, tb_token_fn fn, void *cls, struct tb_error *err);
int tb_store_token_list(struct tb_store *st, tb_token_fn fn, void *cls, struct tb_error *err);
/* Replace a token's hash (creation: the id is part of the secret). */
int tb_store_token_set_hash(struct tb_store *st, int64_t id, const uint8_t hash[TB_SHA256_LEN], struct tb_error *err);
int tb_store_token_revoke(struct tb_store *st, int64_t id, struct tb_error *err);
int tb_store_token_touch(struct tb_store *st, int64_t id, int64_t now);

/* ---- browser sessions (cookie and CSRF secrets stored as SHA-256) ---- */
struct tb_session_row {
	int64_t token_id;
	uint8_t csrf_hash[TB_SHA256_LEN];
	int64_t expires_at;
	int64_t created_at;   /* 0: unknown (made before migration 8) */
	int remember;         /* "Remember this device" */
	int64_t last_used_at; /* insert: created_at is used; get: 0 when never written */
};

int tb_store_session_insert(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], const struct tb_session_row *row,
			    struct tb_error *err);
int tb_store_session_get(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], struct tb_session_row *row,
			 struct tb_error *err);
int tb_store_session_delete(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN]);
/* Each session hash of a token, to fn (fn must not call the store: copy the
 * hash and act after this returns). */
typedef void (*tb_session_hash_fn)(void *cls, const uint8_t hash[TB_SHA256_LEN]);
int tb_store_session_hashes(struct tb_store *st, int64_t token_id, tb_session_hash_fn fn, void *cls,
			    struct tb_error *err);
/* A session as "Your devices" lists it: id is the row's id (not derived from
 * the hash); hash, device, token_name and last_address (NULL when unknown)
 * live for the callback only. */
struct tb_session_info {
	int64_t id;
	int64_t token_id;
	const char *token_name;
	int64_t created_at; /* 0: unknown */
	int64_t expires_at;
	int64_t last_used_at; /* 0: unknown (made before migration 9) */
	int remember;
	const char *device;
	const char *last_address;
	const uint8_t *hash;
};
typedef void (*tb_session_info_fn)(void *cls, const struct tb_session_info *s);
/* Each session of token_id (0: of every unrevoked token) not expired at now,
 * oldest first, to fn (fn must not call the store). */
int tb_store_session_list(struct tb_store *st, int64_t token_id, int64_t now, tb_session_info_fn fn, void *cls,
			  struct tb_error *err);
/* The hash of session id when it belongs to token_id (0: to any token), and
 * its token's id and name (owner: 64 bytes); TB_ERR_NOT_FOUND else. */
int tb_store_session_find(struct tb_store *st, int64_t id, int64_t token_id, uint8_t hash[TB_SHA256_LEN],
			  int64_t *owner_id, char owner[64], struct tb_error *err);
/* Label the session of hash with its browser (a short summary, not secret;
 * NULL: none) and the client address it logged in from. */
int tb_store_session_set_client(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], const char *device,
				const char *address);
/* Note a use of the session of hash at now from address: last_used_at and
 * last_address, and expires_at when expires_at > 0, are written only when
 * last_used_at is a minute or more before now and the session has not
 * expired at now (at most one write a minute per session, whatever the
 * number of requests or threads).  *written: whether this call wrote. */
int tb_store_session_touch(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], int64_t now, const char *address,
			   int64_t expires_at, int *written);
/* Delete sessions that expired before now and those of revoked tokens. */
int tb_store_session_purge(struct tb_store *st, int64_t now);

/* ---- audit log ---- */
struct tb_audit_row {
	int64_t id;
	int64_t at;
	const char *actor;  /* token name, or "-" when unauthenticated */
	const char *remote; /* client address */
	const char *method;
	const char *path;
	const char *action; /* "token.create", "host.trust", ... */
	const char *target; /* host, token id, ... or "" */
	int status;         /* HTTP status of the reply */
	const char *result; /* "ok" or the error code */
};

struct tb_audit_filter {
	const char *target; /* NULL: any */
	const char *actor;  /* NULL: any */
	int64_t since;      /* 0: any */
	int limit;          /* 1..1000 */
	int64_t before;     /* 0: any; else only ids below it (the next page) */
	const char *action; /* NULL: any */
};

typedef void (*tb_audit_fn)(void *cls, const struct tb_audit_row *row);

int tb_store_audit_append(struct tb_store *st, const struct tb_audit_row *row, struct tb_error *err);
/* Retention: delete all but the newest keep rows, and of the oldest 1,000
 * those older than before (unix seconds); *deleted (may be NULL) gets how
 * many went.  One DELETE on the primary key (called every 100 records: the
 * rest of an aged backlog goes in the next calls). */
int tb_store_audit_prune(struct tb_store *st, int64_t keep, int64_t before, int64_t *deleted, struct tb_error *err);
/* Newest first. */
int tb_store_audit_list(struct tb_store *st, const struct tb_audit_filter *f, tb_audit_fn fn, void *cls,
			struct tb_error *err);

/* ---- ssh host keys accepted by an admin (override the inventory's pin) ---- */
int tb_store_hostkey_set(struct tb_store *st, const char *machine, const char *os, const char *fp, const char *by,
			 int64_t now, struct tb_error *err);
/* Copies the fingerprint into fp, or returns TB_ERR_NOT_FOUND. */
int tb_store_hostkey_get(struct tb_store *st, const char *machine, const char *os, char *fp, size_t fplen);

typedef void (*tb_hostkey_fn)(void *cls, const char *machine, const char *os, const char *fp);
int tb_store_hostkey_each(struct tb_store *st, tb_hostkey_fn fn, void *cls);

/* ---- host state as the prober last saw it ---- */
struct tb_host_state_row {
	const char *machine;
	const char *reachability; /* "up" | "down" | "unknown" */
	const char *os;           /* answering persona or NULL */
	int64_t since;            /* when reachability/os last changed; 0 unknown */
	int64_t checked_at;
	const char *error_code; /* NULL: none */
	const char *error_message;
	const char *presented_os; /* a persona whose key was refused, or NULL */
	const char *presented_fp;
};

typedef void (*tb_host_state_fn)(void *cls, const struct tb_host_state_row *row);

int tb_store_host_state_put(struct tb_store *st, const struct tb_host_state_row *row, struct tb_error *err);
int tb_store_host_state_each(struct tb_store *st, tb_host_state_fn fn, void *cls);

/* GRUB's saved default per machine as last read (entry "" when grubenv has
 * none; read_at unix s): replaced by each put, listed at start-up. */
int tb_store_grub_saved_put(struct tb_store *st, const char *machine, const char *entry, int64_t read_at,
			    struct tb_error *err);
typedef void (*tb_grub_saved_fn)(void *cls, const char *machine, const char *entry, int64_t read_at);
int tb_store_grub_saved_each(struct tb_store *st, tb_grub_saved_fn fn, void *cls);

/* ---- events (for resuming a stream across restarts) ---- */
struct tb_event_row {
	int64_t id;
	int64_t at;
	const char *type;
	const char *host; /* NULL: none */
	int64_t matrix;   /* 0: none */
	const char *json; /* the whole event object */
};

typedef void (*tb_event_fn)(void *cls, const struct tb_event_row *row);

int tb_store_event_insert(struct tb_store *st, const struct tb_event_row *row, struct tb_error *err);
/* rows[0..n) in one transaction (the bus's writer): all of them or, on an
 * error, none. */
int tb_store_event_insert_many(struct tb_store *st, const struct tb_event_row *rows, size_t n, struct tb_error *err);
/* The highest id stored (0 when none). */
int tb_store_event_last(struct tb_store *st, int64_t *id, struct tb_error *err);
/* Up to limit events with id > after, oldest first. */
int tb_store_event_each(struct tb_store *st, int64_t after, int limit, tb_event_fn fn, void *cls, struct tb_error *err);
/* Delete events with id < below. */
/* Retention: delete the events with an id below below, and of the oldest
 * 1,000 those stored before before (unix seconds); *deleted (may be NULL)
 * gets how many went.  One DELETE on the primary key. */
int tb_store_event_prune(struct tb_store *st, int64_t below, int64_t before, int64_t *deleted);
/* The run.interval events of run_id (of matrix_id) published at or after
 * since (unix seconds), oldest first: a running run's intervals so far,
 * before its end stores them as intervals. */
int tb_store_run_interval_events(struct tb_store *st, int64_t matrix_id, int64_t run_id, int64_t since, tb_event_fn fn,
				 void *cls, struct tb_error *err);
/* The events of type of run_id, oldest first: "run.sample" (CPU/memory
 * samples of its hosts), "run.rtt" (its latency stream's bins); kept with the
 * events, whose retention applies. */
int tb_store_run_events(struct tb_store *st, int64_t run_id, const char *type, tb_event_fn fn, void *cls,
			struct tb_error *err);

/* ---- actions (power, boot) and their steps ---- */
struct tb_action_row {
	int64_t id;
	const char *host;
	const char *kind;   /* "power", "boot" */
	const char *params; /* JSON text */
	const char *state;  /* queued, running, succeeded, failed, canceled */
	const char *actor;
	int64_t created_ms, started_ms, finished_ms; /* ms since the epoch; 0: not yet */
	const char *error_code;                      /* NULL: none */
	const char *error_message;
};

struct tb_step_row {
	int64_t id;
	int64_t action_id;
	int64_t at_ms;
	const char *what;
	const char *command; /* NULL: none */
	int exit_status;     /* -1: none */
	const char *output;  /* NULL: none */
};

typedef void (*tb_action_row_fn)(void *cls, const struct tb_action_row *row);
typedef void (*tb_step_row_fn)(void *cls, const struct tb_step_row *row);

int tb_store_action_insert(struct tb_store *st, const struct tb_action_row *row, int64_t *id, struct tb_error *err);
/* Set state (and started/finished times, ms, when non-zero, error when non-NULL).
 * The columns keep seconds since the epoch (created_at, started_at,
 * finished_at), with the milliseconds as a fraction: no migration, and
 * an integer read of them is the seconds it always was. */
int tb_store_action_update(struct tb_store *st, int64_t id, const char *state, int64_t started_ms, int64_t finished_ms,
			   const char *error_code, const char *error_message, struct tb_error *err);
int tb_store_action_get(struct tb_store *st, int64_t id, tb_action_row_fn fn, void *cls, struct tb_error *err);
/* Newest first; host NULL: any. */
int tb_store_action_list(struct tb_store *st, const char *host, int limit, tb_action_row_fn fn, void *cls,
			 struct tb_error *err);
/* Mark every queued or running action failed with the reason (start-up). */
int tb_store_action_interrupt(struct tb_store *st, const char *reason, int64_t now_ms, struct tb_error *err);
int tb_store_step_insert(struct tb_store *st, const struct tb_step_row *row, int64_t *id, struct tb_error *err);
int tb_store_step_each(struct tb_store *st, int64_t action_id, tb_step_row_fn fn, void *cls, struct tb_error *err);
/* Per host, how long its succeeded boot actions took (mean of the last ten,
 * first step to last, ms). */
typedef void (*tb_boot_time_fn)(void *cls, const char *host, int64_t mean_ms, int n);
int tb_store_boot_times(struct tb_store *st, tb_boot_time_fn fn, void *cls, struct tb_error *err);

/* ---- matrices and their runs (Matrices I) ---- */
struct tb_matrix_row {
	int64_t id;
	const char *name;
	const char *spec;  /* JSON text: the spec as planned (defaults filled) */
	const char *state; /* queued, running, succeeded, failed, canceled, interrupted */
	const char *actor;
	int64_t created_at, started_at, finished_at; /* 0: not yet */
	const char *error_code;                      /* NULL: none */
	const char *error_message;
	int64_t seed;
	int64_t estimated_ms;
	int64_t rerun_of; /* 0: none */
	/* read only: runs by state */
	int nruns, npending, nrunning, nok, nfailed, ncanceled, ninterrupted;
	int64_t pending_ms; /* per round with pending or running runs, its longest duration + omit, summed */
	int pending_rounds; /* rounds with pending or running runs */
};

struct tb_run_row {
	int64_t id, matrix_id;
	int seq, cell, repeat;
	int round;                                   /* runs of a round go at once (their hosts are disjoint) */
	int combo;                                   /* the OS combination (index into the spec's "os") */
	const char *want_client_os, *want_server_os; /* what the combination wants, or NULL */
	const char *client, *server, *link, *server_address;
	const char *protocol;    /* tcp, udp */
	const char *direction;   /* forward, reverse, bidir */
	const char *params;      /* JSON text */
	const char *state;       /* pending, running, ok, failed, canceled, interrupted */
	const char *error_class; /* NULL, or busy, refused, timeout, interrupted, ssh_error,
				    * parse_error, canceled, iperf_error */
	const char *error_message;
	const char *client_os, *server_os, *client_version, *server_version;
	const char *client_command, *server_command;
	int port;                    /* 0: none yet */
	long client_pid, server_pid; /* remote pids; 0: none */
	const char *cookie;
	int client_exit, server_exit; /* -1: none */
	int64_t started_ms, finished_ms;
	int attempts;
	const char *summary;                           /* JSON text of the normalised end, or NULL */
	double sender_bps, receiver_bps, lost_percent; /* < 0: none */
	int64_t retransmits;                           /* < 0: none */
	int duration_ms;                               /* read only: (omit + duration) of params */
};

struct tb_interval_row {
	const char *side; /* "client" or "server" */
	int seq;
	const char *data; /* JSON text of a normalised interval */
};

struct tb_raw_row {
	const char *side;   /* "client" or "server" */
	const char *stream; /* "stdout" or "stderr" */
	const char *data;
	size_t len;
};

typedef void (*tb_matrix_row_fn)(void *cls, const struct tb_matrix_row *row);
typedef void (*tb_run_row_fn)(void *cls, const struct tb_run_row *row);
typedef void (*tb_interval_row_fn)(void *cls, const struct tb_interval_row *row);
typedef void (*tb_raw_row_fn)(void *cls, const struct tb_raw_row *row);

/* The matrix and all its planned runs (state pending), in one transaction. */
int tb_store_matrix_insert(struct tb_store *st, const struct tb_matrix_row *m, const struct tb_run_row *runs, int nruns,
			   int64_t *id, struct tb_error *err);
/* Set state (and times when non-zero, error when code is non-NULL). */
int tb_store_matrix_update(struct tb_store *st, int64_t id, const char *state, int64_t started_at, int64_t finished_at,
			   const char *error_code, const char *error_message, struct tb_error *err);
/* Back to queued for a resume: clears finished_at and the error; runs that
 * were running, interrupted or canceled before they ended become pending
 * (their partial data deleted); completed runs are kept as they are.
 * *reset gets how many runs will run again. */
int tb_store_matrix_requeue(struct tb_store *st, int64_t id, int *reset, struct tb_error *err);
int tb_store_matrix_get(struct tb_store *st, int64_t id, tb_matrix_row_fn fn, void *cls, struct tb_error *err);
/* 0 when matrix id exists, else TB_ERR_NOT_FOUND (field "id").  One
 * primary-key lookup (no counts of its runs). */
int tb_store_matrix_exists(struct tb_store *st, int64_t id, struct tb_error *err);
/* Which matrices a list or a cell's history takes: a field NULL or 0 is no
 * filter. */
struct tb_matrix_filter {
	const char *name;  /* the name contains this (case-sensitive), or NULL */
	const char *state; /* exactly this state, or NULL */
	int64_t since;     /* created at or after (unix seconds), or 0 */
	int offset, limit; /* newest first: skip offset, then at most limit */
};
/* What a filtered list gives per matrix (strings valid during the call). */
struct tb_matrix_brief {
	int64_t id;
	const char *name, *state;
	int64_t created_at;
};
typedef void (*tb_matrix_brief_fn)(void *cls, const struct tb_matrix_brief *m);
/* Matrix id's brief to fn, else TB_ERR_NOT_FOUND (field "id").  One
 * primary-key lookup (no counts of its runs: tb_store_matrix_get has them). */
int tb_store_matrix_brief_get(struct tb_store *st, int64_t id, tb_matrix_brief_fn fn, void *cls, struct tb_error *err);
/* The matrices f selects, newest first, each to fn as tb_store_matrix_get
 * gives it (with its run counts); *total (may be NULL) gets how many match
 * before offset and limit.  Two queries (the count, a scan of matrices,
 * and the page with its runs), whatever the page's size. */
int tb_store_matrix_find(struct tb_store *st, const struct tb_matrix_filter *f, tb_matrix_row_fn fn, void *cls,
			 int *total, struct tb_error *err);
/* The matrices f selects (offset ignored) that have a run of client to
 * server with protocol and direction (the cheap part of a cell's key: the
 * caller matches the rest), newest first, at most f->limit.  One query, a
 * scan of runs. */
int tb_store_matrix_find_pair(struct tb_store *st, const struct tb_matrix_filter *f, const char *client,
			      const char *server, const char *protocol, const char *direction, tb_matrix_brief_fn fn,
			      void *cls, struct tb_error *err);
/* The runs of client to server with protocol and direction of the matrices
 * f selects (offset and limit ignored) with ids lo..hi, by matrix newest
 * first, then seq: what tb_store_matrix_find_pair's matrices measured of
 * that pair, in one query. */
int tb_store_run_each_pair(struct tb_store *st, const struct tb_matrix_filter *f, const char *client,
			   const char *server, const char *protocol, const char *direction, int64_t lo, int64_t hi,
			   tb_run_row_fn fn, void *cls, struct tb_error *err);
/* Start-up: every run still running is passed to fn (its pids are what to
 * stop), then marked interrupted with reason, and every queued or running
 * matrix is marked interrupted. */
int tb_store_matrix_interrupt(struct tb_store *st, const char *reason, int64_t now, tb_run_row_fn fn, void *cls,
			      struct tb_error *err);

/* Runs of a matrix in seq order; state NULL: any. */
int tb_store_run_each(struct tb_store *st, int64_t matrix_id, const char *state, tb_run_row_fn fn, void *cls,
		      struct tb_error *err);
int tb_store_run_get(struct tb_store *st, int64_t run_id, tb_run_row_fn fn, void *cls, struct tb_error *err);
/* The remote pids the last runs of a matrix to start recorded on host (as
 * client or server), newest first, at most max into pids; *n how many. */
int tb_store_run_recent_pids(struct tb_store *st, int64_t matrix_id, const char *host, long *pids, int max, int *n,
			     struct tb_error *err);
/* The first run (lowest seq) of each cell of a matrix with its commands
 * (NULL: not run yet), in cell order (strings valid during the call).  One
 * query reading only those columns. */
struct tb_run_commands {
	int cell;
	int64_t run_id;
	const char *client_command, *server_command;
};
typedef void (*tb_run_commands_fn)(void *cls, const struct tb_run_commands *c);
int tb_store_run_first_commands(struct tb_store *st, int64_t matrix_id, tb_run_commands_fn fn, void *cls,
				struct tb_error *err);
/* Write every mutable field of r (state, errors, personas, versions,
 * commands, port, pids, cookie, exits, times, attempts, summary, figures). */
int tb_store_run_update(struct tb_store *st, const struct tb_run_row *r, struct tb_error *err);

/* ---- host snapshots: what a host was during a matrix (one per host and OS) ---- */
struct tb_snapshot_row {
	int64_t matrix_id;
	const char *host, *os;
	int64_t taken_at;
	const char *interface; /* the data-plane interface described, or NULL */
	const char *command;   /* the command exactly as it ran */
	const char *data;      /* the parsed JSON (hostmeta.h) */
	const char *raw;       /* the command's output */
	size_t raw_len;
};

typedef void (*tb_snapshot_fn)(void *cls, const struct tb_snapshot_row *row);

/* ---- boots a matrix did (OS combinations) ---- */
struct tb_matrix_boot_row {
	int64_t id, matrix_id;
	const char *host, *from_os, *to_os; /* from_os NULL: off or unknown */
	int64_t action_id;                  /* 0: none started */
	int64_t started_ms, finished_ms;    /* finished 0: in progress */
	const char *state;                  /* running, succeeded, failed, canceled */
	const char *error;                  /* or NULL */
	int before_seq;                     /* the run that needed it; -1: booting back */
	const char *path;                   /* the boot path planned (boot_paths.h), or NULL */
};

typedef void (*tb_matrix_boot_fn)(void *cls, const struct tb_matrix_boot_row *row);

int tb_store_matrix_boot_add(struct tb_store *st, const struct tb_matrix_boot_row *r, int64_t *id,
			     struct tb_error *err);
int tb_store_matrix_boot_finish(struct tb_store *st, int64_t id, int64_t action_id, const char *state,
				const char *error, int64_t finished_ms, struct tb_error *err);
int tb_store_matrix_boot_each(struct tb_store *st, int64_t matrix_id, tb_matrix_boot_fn fn, void *cls,
			      struct tb_error *err);

/* Insert or replace the snapshot of (matrix, host, os). */
int tb_store_snapshot_put(struct tb_store *st, const struct tb_snapshot_row *r, struct tb_error *err);
/* *has: whether (matrix, host, os) has one. */
int tb_store_snapshot_has(struct tb_store *st, int64_t matrix_id, const char *host, const char *os, int *has,
			  struct tb_error *err);
/* Each snapshot of a matrix, by host then OS (raw only when with_raw). */
int tb_store_snapshot_each(struct tb_store *st, int64_t matrix_id, int with_raw, tb_snapshot_fn fn, void *cls,
			   struct tb_error *err);
/* The run's end, in one transaction: tb_store_run_update, its intervals and
 * raw outputs (replacing any earlier ones). */
int tb_store_run_finish(struct tb_store *st, const struct tb_run_row *r, const struct tb_interval_row *iv, size_t niv,
			const struct tb_raw_row *raw, size_t nraw, struct tb_error *err);
/* Intervals of a run, client side first, in order. */
int tb_store_interval_each(struct tb_store *st, int64_t run_id, tb_interval_row_fn fn, void *cls, struct tb_error *err);
/* One raw output; TB_ERR_NOT_FOUND when none was stored. */
int tb_store_raw_get(struct tb_store *st, int64_t run_id, const char *side, const char *stream, tb_raw_row_fn fn,
		     void *cls, struct tb_error *err);

/* The link profiles journal (store_linkprof.c; linkprof.c owns its meaning):
 * one row per router pipe a matrix configures, written BEFORE the pipe is,
 * state "open" until the pipe is removed ("removed", removed_at set). */
int tb_store_linkprof_open(struct tb_store *st, int64_t matrix_id, const char *router, int pipe, int64_t at,
			   int64_t *id, struct tb_error *err);
/* Row id removed at `at` (error NULL), or its last failure to remove (error set, still open). */
int tb_store_linkprof_done(struct tb_store *st, int64_t id, const char *error, int64_t at, struct tb_error *err);
/* fn(cls, id, matrix_id, router, pipe) for every open row, oldest first (strings valid during the call). */
int tb_store_linkprof_each_open(struct tb_store *st,
				void (*fn)(void *cls, int64_t id, int64_t matrix_id, const char *router, int pipe),
				void *cls, struct tb_error *err);

#endif /* TB_STORE_H */
