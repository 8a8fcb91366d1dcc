/*
 * boot_path_esp.c - the boot path grubenv-esp (boot_paths.h): from Linux or
 * FreeBSD, next_entry=ENTRY written into the GRUB environment block on the
 * EFI system partition (boot.esp_grubenv: where the OS answering mounts it;
 * FreeBSD mounts the ESP as msdosfs) with POSIX tools only
 * (tb_grubenv_esp_script), read back, reboot: GRUB's `load_env -f` of that
 * block chooses the entry once (the grub.cfg lines: README's boot section).
 * Blocks for two ssh commands and a boot.
 */
#include "boot_internal.h"
#include "boot_paths.h"

#include <string.h>

#include "actions.h"
#include "boot_check.h"

/* Read the block at path back from cur: 0 when it says next_entry=entry. */
static int esp_read_back(struct tb_boot_run *r, const char *path, const char *entry, struct tb_error *err)
{
	const char *cat[] = {"cat", path, NULL};
	struct tb_ssh_capture cap;
	int rc, has;

	if ((rc = tb_boot_run_ok(r->a, r->m, r->cur, cat, &cap, err)) != 0) {
		tb_ssh_capture_free(&cap);
		return rc;
	}
	has = tb_grubenv_block_has(cap.out, cap.out != NULL ? strlen(cap.out) : 0, "next_entry", entry);
	tb_ssh_capture_free(&cap);
	if (has == -1)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "%s (%s): %s is not a GRUB environment block after the write (not 1024 bytes "
			       "starting with \"# GRUB Environment Block\"): is the EFI system partition mounted there "
			       "and writable?",
			       r->m->name, r->cur, path);
	if (has != 0)
		return tb_fail(err, TB_ERR_REMOTE, "", "%s (%s): %s does not say next_entry=%s after the write",
			       r->m->name, r->cur, path, entry);
	return 0;
}

int tb_boot_path_grubenv_esp(struct tb_boot_run *r, struct tb_error *err)
{
	const char *entry = tb_boot_entry_of(r->m, r->os), *path = tb_boot_esp_of(r->m, r->cur);
	struct tb_ssh_capture cap;
	int rc;

	if (entry == NULL || path == NULL)
		return tb_fail(err, TB_ERR_INVALID, "os", "%s: no boot.entries.%s or no boot.esp_grubenv.%s",
			       r->m->name, r->os, r->cur);
	const char *argv[] = {"sh", "-c", tb_grubenv_esp_script, "tb-grubenv", path, entry, NULL};

	rc = tb_boot_run_ok(r->a, r->m, r->cur, argv, &cap, err);
	tb_ssh_capture_free(&cap);
	/* a write may exit 0 and not be there (a read-only or unmounted ESP): read it back */
	if (rc != 0 || (rc = esp_read_back(r, path, entry, err)) != 0)
		return rc;
	tb_action_note(r->a, "GRUB's environment block on the ESP (%s) now says next_entry=%s", path, entry);
	if ((rc = tb_boot_reboot_wait(r->a, r->inv, r->m, r->cur, r->os, r->cur, err)) != 0)
		return rc;
	return tb_boot_landed(r,
			      "GRUB did not take next_entry from the ESP's block (does grub.cfg load_env -f it and "
			      "use next_entry? README's boot section)",
			      err);
}
