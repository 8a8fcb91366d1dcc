/*
 * boot_internal.h - what a boot path's function (boot_paths.h: a row's run,
 * each in its own server/boot_path_*.c) gets from boot.c: the switch in
 * progress and the steps every path shares (run a command as root on the
 * answering persona, reboot and wait).  Not for anyone but boot*.c.
 */
#ifndef TB_BOOT_INTERNAL_H
#define TB_BOOT_INTERNAL_H

#include <stddef.h>

#include "error.h"
#include "inventory.h"
#include "ssh.h"

struct tb_action;

/* One switch of m from cur into os, borrowed for the call of a row's run.
 * cur and def are TB_NAME_MAX buffers the run updates: cur the OS that
 * answers after it, def GRUB's default when it learns it was another. */
struct tb_boot_run {
	struct tb_action *a;
	const struct tb_inventory *inv;
	const struct tb_machine *m;
	const char *os;    /* the OS wanted */
	char *cur;         /* in: the OS answering now; out: after the run */
	char *def;         /* GRUB's default as planned from */
	int *done_default; /* grub-set-default done (or not wanted) */
};

/* Run argv as root on the persona answering as os; 0 only when it exited 0
 * (TB_ERR_REMOTE naming argv[0] and its stderr else).  *cap is filled either
 * way: the caller frees it.  Blocks for one ssh command (up to 30 s). */
int tb_boot_run_ok(struct tb_action *a, const struct tb_machine *m, const char *os, const char *const argv[],
		   struct tb_ssh_capture *cap, struct tb_error *err);

/* Reboot m from os and wait until it answers (as expect, probed first);
 * now_os gets the OS that answers.  Blocks up to a boot timeout. */
int tb_boot_reboot_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
			const char *expect, char *now_os, struct tb_error *err);

/* From Linux (r->cur): GRUB's next entry (or its default, once) and a
 * reboot; the plain reboot into GRUB's default when os is it. */
int tb_boot_from_linux(struct tb_boot_run *r, struct tb_error *err);

/* From an OS without grub-reboot towards want: GRUB's default by a plain
 * reboot, another entry on GRUB's menu over the console when there is one
 * (else a plain reboot to the default, from which Linux chooses). */
int tb_boot_from_other(struct tb_boot_run *r, const char *want, struct tb_error *err);

/* r->cur's come-up after a one-shot write for r->os: TB_ERR_REMOTE saying
 * what did not take (what) when another OS answers. */
int tb_boot_landed(const struct tb_boot_run *r, const char *what, struct tb_error *err);

/* The BMC of call->pm (ipmi or redfish) boots the machine once from dev
 * (boot.bmc's "disk", "pxe", "cdrom", "bios"): IPMI chassis bootdev DEV
 * options=efiboot read back, or Redfish's one-shot override.  Blocks for
 * two BMC calls (up to 20 s each).  TB_ERR_CONFIG for another device or
 * driver, else the driver's errors. */
struct tb_power_call;
int tb_boot_bmc_set(const struct tb_power_call *call, const char *dev, struct tb_error *err);

#endif /* TB_BOOT_INTERNAL_H */
