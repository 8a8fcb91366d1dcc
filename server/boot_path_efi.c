/*
 * boot_path_efi.c - the boot path efi-bootnext (boot_paths.h): UEFI
 * BootNext set from Linux or FreeBSD 13+ with efibootmgr, read back,
 * reboot; the firmware starts that OS's own Boot#### once.  Blocks for two
 * ssh commands and a boot.
 */
#include "boot_internal.h"
#include "boot_paths.h"

#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "boot_check.h"

/* Read BootNext back from cur (efibootmgr, no argument) into v. */
static int efi_read(struct tb_action *a, const struct tb_machine *m, const char *cur, struct tb_efi_vars *v,
		    struct tb_error *err)
{
	static const char *const show[] = {"efibootmgr", NULL};
	struct tb_ssh_capture cap;
	int rc;

	if ((rc = tb_boot_run_ok(a, m, cur, show, &cap, err)) == 0 && tb_efi_vars_parse(cap.out, v) != 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "", "%s (%s): efibootmgr printed no BootCurrent or BootNext: %.200s",
			     m->name, cur, cap.out != NULL ? cap.out : "");
	tb_ssh_capture_free(&cap);
	return rc;
}

/* efi-bootnext: from cur (Linux or FreeBSD 13+) set UEFI BootNext to os's
 * Boot#### (boot.efi), read it back, reboot: the firmware starts that entry
 * once, GRUB's menu not asked.  r->cur gets the OS that answers then. */
int tb_boot_path_efi_bootnext(struct tb_boot_run *r, struct tb_error *err)
{
	struct tb_action *a = r->a;
	const struct tb_machine *m = r->m;
	const char *os = r->os;
	char *cur = r->cur;
	const char *num = tb_boot_efi_of(m, os);
	const char *lin[] = {"efibootmgr", "-n", num, NULL};
	const char *bsd[] = {"efibootmgr", "-n", "-b", num, NULL}; /* FreeBSD's -n is a flag */
	int freebsd = strcmp(tb_boot_kernel_of(cur), "FreeBSD") == 0;
	struct tb_ssh_capture cap;
	struct tb_efi_vars v;
	int rc;

	if ((rc = tb_boot_run_ok(a, m, cur, freebsd ? bsd : lin, &cap, err)) != 0) {
		tb_ssh_capture_free(&cap);
		return rc;
	}
	tb_ssh_capture_free(&cap);
	/* a write the firmware refused may still exit 0: read it back */
	if ((rc = efi_read(a, m, cur, &v, err)) != 0)
		return rc;
	if (strcmp(v.next, num) != 0)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "%s: efibootmgr set BootNext %s but reads back %s: the firmware did not keep it",
			       m->name, num, v.next[0] ? v.next : "none");
	tb_action_note(a, "UEFI BootNext now says %s (boot.efi.%s; BootCurrent %s)", num, os,
		       v.current[0] ? v.current : "?");
	if ((rc = tb_boot_reboot_wait(a, r->inv, m, cur, os, cur, err)) != 0)
		return rc;
	if (strcmp(cur, os) != 0)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "%s came up as %s, not %s: the firmware did not start Boot%s (does boot.efi.%s name "
			       "%s's own entry, one that does not go through GRUB's menu?)",
			       m->name, cur, os, num, os, os);
	return 0;
}
