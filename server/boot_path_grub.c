/*
 * boot_path_grub.c - the boot paths through GRUB's own environment and menu
 * (boot_paths.h's rows reboot-default, grub-reboot, grub-console and
 * default-then-grub-reboot): each a row's run, over boot.c's steps
 * (boot_internal.h).  Each blocks up to a boot timeout or two.
 */
#include "boot_internal.h"
#include "boot_paths.h"

#include <string.h>

#include "boot_check.h"

static int is_linux(const char *os)
{
	return strcmp(tb_boot_kernel_of(os), "Linux") == 0;
}

/* Into GRUB's default: a plain reboot (from Linux nothing written, from
 * another OS the step says it has no grub-reboot). */
int tb_boot_path_reboot_default(struct tb_boot_run *r, struct tb_error *err)
{
	return is_linux(r->cur) ? tb_boot_from_linux(r, err) : tb_boot_from_other(r, r->os, err);
}

/* From Linux: grub-reboot ENTRY, read back from grubenv, reboot. */
int tb_boot_path_grub_reboot(struct tb_boot_run *r, struct tb_error *err)
{
	return tb_boot_from_linux(r, err);
}

/* Any OS: reboot and choose the entry on GRUB's menu over the console. */
int tb_boot_path_grub_console(struct tb_boot_run *r, struct tb_error *err)
{
	return tb_boot_from_other(r, r->os, err);
}

/* From an OS without grub-reboot: a plain reboot into GRUB's default (a
 * Linux), from which the next switch is a grub-reboot. */
int tb_boot_path_default_then(struct tb_boot_run *r, struct tb_error *err)
{
	return tb_boot_from_other(r, r->os, err);
}
