/*
 * matrix_boot.h - a matrix boots one of its hosts into the OS its next runs
 * want (OS combinations): through a boot action of Power and boot I, so the
 * steps, the exact commands and the proof are the same as a person's boot.
 */
#ifndef TB_MATRIX_BOOT_H
#define TB_MATRIX_BOOT_H

#include <stdint.h>

#include "error.h"

struct tb_app;

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
int tb_matrix_boot(struct tb_app *app, int64_t matrix_id, const char *holder, const char *host, const char *from_os,
		   const char *os, int before_seq, const volatile int *stop, struct tb_error *err);

/*
 * What the planner needs to order OS combinations: every machine's answering
 * OS now (the prober's view) and its measured boot time.  *hosts is
 * malloc'd (free()), *now points into it.  0 or TB_ERR_NOMEM.
 */
struct tb_matrix_now;
struct tb_matrix_host_now;
int tb_matrix_now_collect(struct tb_app *app, struct tb_matrix_host_now **hosts, struct tb_matrix_now *now,
			  struct tb_error *err);

#endif /* TB_MATRIX_BOOT_H */
