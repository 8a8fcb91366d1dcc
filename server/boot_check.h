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

/* The firmware Boot#### ("0002") the inventory's boot.efi gives for os on
 * m, or NULL. */
const char *tb_boot_efi_of(const struct tb_machine *m, const char *os);

/* Where os on m mounts the GRUB environment block on the EFI system
 * partition (boot.esp_grubenv), or NULL. */
const char *tb_boot_esp_of(const struct tb_machine *m, const char *os);

/* The BMC boot device that brings os up on m (boot.bmc: "disk", "pxe",
 * ...), or NULL. */
const char *tb_boot_bmc_of(const struct tb_machine *m, const char *os);

/* The power method of m that can set a one-shot boot device (its first
 * ipmi or redfish), or NULL. */
const struct tb_power_method *tb_boot_bmc_method(const struct tb_machine *m);

/* The boot path (boot_paths.h) that takes m from the OS from ("" or NULL:
 * off, so from GRUB's default def) into to, by what the inventory offers
 * (boot.efi, boot.entries, boot.esp_grubenv, boot.bmc), def (GRUB's default as planned from) and console
 * (a console GRUB's menu can be driven over): the fewest reboots; NULL when
 * none can. */
struct tb_boot_path;
const struct tb_boot_path *tb_boot_path_for(const struct tb_machine *m, const char *from, const char *to,
					    const char *def, int console);

/* What `uname -s` says in an OS persona of this name: "FreeBSD" for a name
 * with "bsd" in it, else "Linux". */
const char *tb_boot_kernel_of(const char *os);

#endif /* TB_BOOT_CHECK_H */
