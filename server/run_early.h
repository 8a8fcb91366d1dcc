/*
 * run_early.h - the next run's server started in the current run's last
 * second, so that when the current run ends the next one's server has
 * looked at its host and listens, and only its client is left to start.
 *
 * The runner plans it (run_early_plan, its thread, before the current run
 * executes) for a next run that follows at once on hosts ready in the OS it
 * wants (the first run's while the routers' metadata is still being taken:
 * planned and kicked with no current run once its own hosts are ready), with iperf3, no tunables or link profile (theirs are set between
 * runs) and an idle check on strays only (a look during a test would see
 * its load); it lands in ctl->early_next.  The current run's server kicks
 * it when its next-to-last interval arrives (run_early_kick, with the
 * current run's port: its processes are no strays for the early look).
 * Before the next run executes the runner moves it to ctl->early_now
 * (run_early_next_up), where that run's first attempt takes it
 * (run_early_take) and uses its server as its own: the commands stored and
 * shown are the ones it would have run, started about a second sooner.  What
 * nobody took is stopped by pid and freed (run_early_drop).
 *
 * The cost: a look and an iperf3 -s start on the next run's server host in
 * the current test's last second (a few ms of CPU there), as the standby
 * shells (run_ahead.h).  A matrix with pause_s > 0 has none.
 *
 * Threads: plan, next_up, take and drop on the runner's (run's) thread;
 * kick on the current run's server output thread (ctl->lock).
 */
#ifndef TB_RUN_EARLY_H
#define TB_RUN_EARLY_H

#include <stdint.h>

struct tb_services;
struct tb_run_ctl;
struct tb_run_row;
struct tb_run_host;
struct run_early;
struct run_server;
struct run_idle_look;

/* The server of the run after now (row next, ends ch and sh, ready in the
 * OS it wants; now NULL: next is the first run), planned into
 * ctl->early_next (one planned before is dropped first); nothing when
 * either run sets tunables or a link profile, next's tool is not iperf3,
 * the idle check reads load, or memory ran out. */
void run_early_plan(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *now,
		    const struct tb_run_row *next, const struct tb_run_host *ch, const struct tb_run_host *sh);
/* The current run (on port running_port; 0: none runs) is in its test's
 * last second. */
void run_early_kick(struct tb_run_ctl *ctl, int running_port);
/* The run with row id run_id is next: ctl->early_next becomes
 * ctl->early_now when it is that run's, else it is dropped. */
void run_early_next_up(struct tb_run_ctl *ctl, int64_t run_id);
/* Run r's first attempt (r->port set) on server host sh: the server started
 * for it, owned by the caller from now on (its run_server freed as the
 * attempt's; then run_early_free), or NULL (none, or one that ended, will
 * not listen or waited so long that its --idle-timeout is near: dropped). */
struct run_early *run_early_take(struct tb_run_ctl *ctl, const struct tb_run_row *r, const struct tb_run_host *sh);
struct run_server *run_early_server(struct run_early *e);
/* Its idle look (NULL: the matrix's idle check is off), now the caller's. */
struct run_idle_look *run_early_look(struct run_early *e);
void run_early_free(struct run_early *e);
/* Stop (by pid, when started) and free *slot's, if any; *slot = NULL. */
void run_early_drop(struct tb_run_ctl *ctl, struct run_early **slot);

#endif /* TB_RUN_EARLY_H */
