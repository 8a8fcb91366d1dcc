/*
 * boot_check.h - what booting a machine into an OS needs, read from the
 * inventory alone: the checks the planner (matrix_os.c) and the boot action
 * (boot.c) both make.  Pure: no I/O, no locks, no allocation.
 */
#ifndef TB_BOOT_CHECK_H
#define TB_BOOT_CHECK_H

#include "error.h"
#include "inventory.h"

/* Can m be booted into os at all, and (make_default) made to stay there?
 * TB_ERR_INVALID / TB_ERR_NOT_FOUND with the reason, naming the field. */
int tb_boot_check(const struct tb_machine *m, const char *os, int make_default, struct tb_error *err);

/* The GRUB entry the inventory gives for os on m, or NULL. */
const char *tb_boot_entry_of(const struct tb_machine *m, const char *os);

/* What `uname -s` says in an OS persona of this name: "FreeBSD" for a name
 * with "bsd" in it, else "Linux". */
const char *tb_boot_kernel_of(const char *os);

#endif /* TB_BOOT_CHECK_H */
