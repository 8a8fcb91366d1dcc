/*
 * boot.h - bring a dual-boot machine up in a chosen OS and prove it.
 *
 * Each switch takes the boot path of fewest reboots (boot_paths.h, chosen
 * by tb_boot_path_for and named in a step) and runs that row's function
 * (server/boot_path_*.c, over boot_internal.h's shared steps; GRUB's
 * environment on the ESP and the BMC's one-shot boot device among them):
 * from Linux `grub-reboot ENTRY`
 * (read back from grubenv: grub-reboot exits 0 even when it could not write)
 * then `reboot`; from Linux or FreeBSD, where boot.efi names the target's
 * Boot####, UEFI BootNext (`efibootmgr -n XXXX`, FreeBSD `-n -b XXXX`, read
 * back with `efibootmgr`) then a reboot; from FreeBSD, which has no
 * grub-reboot, a plain reboot returns to GRUB's default, and another entry
 * is chosen on GRUB's menu over the console (boot_console.h).  A machine
 * that is off is powered on first.  The result is proven by the persona
 * that answers and its `uname -s`.
 */
#ifndef TB_BOOT_H
#define TB_BOOT_H

#include <stdint.h>

#include <jansson.h>

#include "boot_check.h"
#include "error.h"
#include "inventory.h"

struct tb_action;
struct tb_services;

/* Run inside an action.  Blocks up to a few boot timeouts. */
int tb_boot_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
		int make_default, struct tb_error *err);

/* Start a boot action on host (holding it; TB_ERR_CONFLICT naming the holder
 * when it is held), as actor; *id gets the action's id.  The checks of
 * tb_boot_check first.  Returns at once: the action runs in its thread. */
int tb_boot_start(struct tb_services *sv, const char *host, const char *os, int make_default, const char *actor,
		  int64_t *id, struct tb_error *err);

/* The GRUB menu of m as the background prober last read it (bootmenu.h),
 * beside the inventory's OS -> entry map: {"host", "read_from", "default",
 * "entries": [...], "map": {os: {entry, index}}, "read_at", "age_s",
 * "refreshing", "last_error"}, *status 200.  When none was read yet and a
 * Linux persona answers: a read is asked of the prober and *status is 202
 * with {"host", "state": "reading", "reading_from", "retry_after_s",
 * "message"}.  refresh: ask for a new read even when there is a menu (the
 * reply is the one there is, "refreshing": true).  None read and no Linux
 * answering: TB_ERR_CONFLICT; the last read failed (none since): its error.
 * Never blocks: no ssh, no process (a hung host never holds the caller). */
int tb_boot_entries(struct tb_services *sv, const struct tb_machine *m, int refresh, json_t **out, unsigned int *status,
		    struct tb_error *err);

/* Read m's GRUB menu from its persona os (`cat /boot/grub/grub.cfg` over
 * ssh): *entries a new reference (tb_grubcfg_entries).  Blocks for one ssh
 * command (up to 15 s): the prober's, never a handler's. */
struct tb_hosts;
int tb_boot_menu_read(struct tb_hosts *h, const struct tb_machine *m, const char *os, json_t **entries,
		      struct tb_error *err);

/* The prober, after probing m: read its menu when bootmenu.h says it is due
 * (m answers in Linux and has a boot: section).  Blocks for one ssh command
 * when it reads. */
void tb_boot_menu_refresh(struct tb_hosts *h, const struct tb_machine *m);

#endif /* TB_BOOT_H */
