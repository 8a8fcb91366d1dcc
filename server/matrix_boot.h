/*
 * matrix_boot.h - a matrix boots one of its hosts into the OS its next runs
 * want (OS combinations): through a boot action of Power and boot I, so the
 * steps, the exact commands and the proof are the same as a person's boot.
 */
#ifndef TB_MATRIX_BOOT_H
#define TB_MATRIX_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct tb_services;

/*
 * Boot host into os for matrix matrix_id, which holds it as holder: the hold
 * is handed to a boot action started as actor "matrix ID" (a host that is
 * off is powered on first), the action is followed to its end (canceled
 * when *stop becomes non-zero), and the hold taken back.  Recorded in the
 * matrix's boots (before_seq: the run that needs it, -1 booting back) and
 * published as "matrix.boot" events.  Blocking: up to the host's boot
 * timeouts.  0 when the action succeeded; else TB_ERR_REMOTE (or the
 * action's start error) with the reason.
 */
int tb_matrix_boot(struct tb_services *sv, int64_t matrix_id, const char *holder, const char *host, const char *from_os,
		   const char *os, int before_seq, const volatile int *stop, struct tb_error *err);

/*
 * Put host h of a matrix (the runner's view of it) in OS want before run
 * seq (thread-safe for distinct hosts: the runner does a run's two at once): nothing when it answers in it, else tb_matrix_boot, then h is asked
 * again (tb_run_host_prepare) and must answer in want.  The first time it
 * learns what h answers as, that is kept as the OS to go back to.  An OS h
 * could not be booted into is not tried again in this matrix (unless the
 * failure was a stop).  0, or -1 with the reason in msg.
 */
struct tb_run_host;
int tb_matrix_host_os(struct tb_services *sv, int64_t matrix_id, const char *holder, struct tb_run_host *h,
		      const char *want, int seq, const volatile int *stop, char *msg, size_t len);

/* After the last run: each of the nh hosts back into the OS it was in when
 * the matrix met it (when it answered then), all at once.  Failures are
 * logged. */
void tb_matrix_restore_hosts(struct tb_services *sv, int64_t matrix_id, const char *holder, struct tb_run_host *hs,
			     int nh, const volatile int *stop);

/*
 * What the planner needs to order OS combinations: every machine's answering
 * OS now (the prober's view) and its measured boot time.  *hosts is
 * malloc'd (free()), *now points into it.  0 or TB_ERR_NOMEM.
 */
struct tb_matrix_now;
struct tb_matrix_host_now;
int tb_matrix_now_collect(struct tb_services *sv, struct tb_matrix_host_now **hosts, struct tb_matrix_now *now,
			  struct tb_error *err);

/*
 * Name the path (boot_paths.h) each boot of plan takes, by what inv offers
 * for its machine, GRUB's default as a boot plans from it (grubenv as last
 * read, else boot.default) and whether its console is connected: the same
 * choice a boot action makes (boot.c), so the plan says how each host will
 * be switched.  Never blocks: no host is asked.
 */
struct tb_inventory;
struct tb_matrix_plan;
void tb_matrix_plan_paths(struct tb_services *sv, const struct tb_inventory *inv, struct tb_matrix_plan *plan);

#endif /* TB_MATRIX_BOOT_H */
