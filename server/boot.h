/*
 * boot.h - bring a dual-boot machine up in a chosen OS and prove it.
 *
 * From Linux, `grub-reboot ENTRY` (read back from grubenv: grub-reboot
 * exits 0 even when it could not write) then `reboot`; from FreeBSD, which
 * has no grub-reboot, a plain reboot returns to GRUB's default.  A machine
 * that is off is powered on first.  The result is proven by the persona
 * that answers and its `uname -s`.
 */
#ifndef TB_BOOT_H
#define TB_BOOT_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "inventory.h"

struct tb_action;
struct tb_app;

/* Can m be booted into os at all, and (make_default) made to stay there?
 * TB_ERR_INVALID / TB_ERR_NOT_FOUND with the reason, naming the field. */
int tb_boot_check(const struct tb_machine *m, const char *os, int make_default, struct tb_error *err);

/* Run inside an action.  Blocks up to a few boot timeouts. */
int tb_boot_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
		int make_default, struct tb_error *err);

/* Start a boot action on host (holding it; TB_ERR_CONFLICT naming the holder
 * when it is held), as actor; *id gets the action's id.  The checks of
 * tb_boot_check first.  Returns at once: the action runs in its thread. */
int tb_boot_start(struct tb_app *app, const char *host, const char *os, int make_default, const char *actor,
		  int64_t *id, struct tb_error *err);

/* The GRUB menu read from the Linux persona that answers now, beside the
 * inventory's OS -> entry map: {"answering_os", "entries": [...], "map": {os: {entry, index}}}.
 * TB_ERR_CONFLICT when no Linux persona answers.  Blocks for one ssh command. */
int tb_boot_entries(struct tb_app *app, const struct tb_machine *m, json_t **out, struct tb_error *err);

#endif /* TB_BOOT_H */
