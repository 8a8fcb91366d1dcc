/*
 * runner.h - runs matrices: a persisted queue, a scheduler thread and a
 * worker thread per running matrix (at most TB_RUNNER_WORKERS at once).  A
 * matrix starts when a worker is free and every host of its runs can be held
 * (actions.h's "one holder per host": not held by a running matrix or an
 * action, not reserved by someone else, not wanted by a matrix queued before
 * it); until then it waits in the queue, saying why ("waiting for left:
 * matrix 12 (nightly)"), and the scheduler looks again when something ends
 * and every 0.5 s.  Among matrices that can start the order is FIFO.  A
 * worker runs its matrix round by round (runner_par.c: the runs of a round,
 * on disjoint pairs, each in a thread of its own; one run a round with
 * concurrency "none"), with ssh sessions of its own, holding the matrix's
 * hosts until the matrix ends.
 *
 * Everything is in the store first: a matrix and all its runs are recorded
 * (state pending) before it is queued, a run is marked running with its
 * exact command lines and remote pids as they become known, and its result
 * (intervals of both sides, end summary, raw output, error class) is
 * committed in one transaction when it ends.  On start, runs that were in
 * flight are marked interrupted and their remote iperf3 processes are
 * stopped by the recorded pids; resume runs them again, keeping every
 * completed run (run ids are stable: nothing is duplicated).
 *
 * Events: "matrix.state" {matrix, state, progress}; "run.state" {matrix,
 * run, seq, state, ...}; "run.interval" {matrix, run, seq, side, interval}
 * as each interval arrives (side "client" or "server").
 *
 * Thread-safe.  tb_runner_submit/cancel/resume return at once; the work is
 * done in the runner's threads, where every remote operation is bounded.
 */
#ifndef TB_RUNNER_H
#define TB_RUNNER_H

#include <jansson.h>
#include <stdint.h>

#include "error.h"
#include "results.h"

struct tb_services;
struct tb_runner;
struct tb_matrix_plan;

#define TB_RUNNER_WORKERS 4   /* matrices running at once */
#define TB_RUNNER_WHY_MAX 240 /* a queued matrix's reason */

/* Marks what was in flight as interrupted and starts the worker (which
 * first stops the interrupted runs' remote processes). */
int tb_runner_new(struct tb_services *sv, struct tb_runner **out, struct tb_error *err);
/* Stop: the running runs are stopped (SIGINT to their clients, kept as
 * interrupted), every worker and the scheduler joined.  Queued matrices stay queued in the
 * store and are marked interrupted on the next start.  NULL is allowed. */
void tb_runner_stop(struct tb_runner *r);

/* Record plan as a new matrix (state queued) and queue it; *id gets its id.
 * rerun_of: the matrix it repeats, or 0. */
int tb_runner_submit(struct tb_runner *r, const struct tb_matrix_plan *plan, const char *actor, int64_t rerun_of,
		     int64_t *id, struct tb_error *err);

/* Cancel a queued or running matrix: a running client gets SIGINT and its
 * partial result is kept, marked canceled; the runs not started stay
 * pending (resume can run them).  TB_ERR_NOT_FOUND, or TB_ERR_CONFLICT when
 * it has ended. */
int tb_runner_cancel(struct tb_runner *r, int64_t id, struct tb_error *err);

/* Queue an interrupted or canceled matrix again: runs that did not
 * complete run again, completed ones (ok or failed) are kept.
 * TB_ERR_CONFLICT when it is queued, running, failed or succeeded. */
int tb_runner_resume(struct tb_runner *r, int64_t id, struct tb_error *err);

/* What results (results.h) read: st, and every matrix running now with the
 * seq of its run in progress (r NULL: none).  One lock, no I/O. */
struct tb_results_src tb_runner_results_src(struct tb_runner *r, struct tb_store *st);

/* Every running matrix and its run in progress, in v[0..max); returns how
 * many (at most TB_RUNNER_WORKERS). */
int tb_runner_running(struct tb_runner *r, struct tb_mx_now *v, int max);

/* Add to matrix JSON m (results.h's Matrix) what only the runner knows: a
 * running matrix's progress.current_seq, a queued one's "queue":
 * {position (1: next), waiting_for (its reason, null before the scheduler
 * looked)}.  A matrix the runner does not know is left as it is.  Cheap:
 * the runner's lock only. */
void tb_runner_annotate(struct tb_runner *r, json_t *m);

#endif /* TB_RUNNER_H */
