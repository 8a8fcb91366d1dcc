/* boot_paths.c - the table of boot paths: one line per path (boot_paths.h). */
#include "boot_paths.h"

static const struct tb_boot_path paths[] = {
	{"efi-bootnext", TB_BOOT_FROM_LINUX | TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_EFI, 1, "efibootmgr -n XXXX"},
	{"grub-reboot", TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY, 1, "grub-reboot ENTRY"},
	{"grub-console", TB_BOOT_FROM_ANY, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE, 1,
	 "GRUB menu over the console"},
	{"reboot-default", TB_BOOT_FROM_ANY, TB_BOOT_NEED_TARGET_DEFAULT, 1, "reboot (GRUB's default)"},
	{"default-then-grub-reboot", TB_BOOT_FROM_FREEBSD | TB_BOOT_FROM_OTHER,
	 TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_DEFAULT_LINUX, 2, "reboot to GRUB's default, then grub-reboot ENTRY"},
};

const struct tb_boot_path *tb_boot_paths(size_t *n)
{
	if (n != NULL)
		*n = sizeof paths / sizeof paths[0];
	return paths;
}

/* Linear in the table; the first of the fewest reboots wins. */
const struct tb_boot_path *tb_boot_path_choose(const struct tb_boot_have *h)
{
	const struct tb_boot_path *best = NULL;

	if (h == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		const struct tb_boot_path *p = &paths[i];
		if ((p->from & h->from) == 0 || (p->needs & h->have) != p->needs)
			continue;
		if (best == NULL || p->reboots < best->reboots)
			best = p;
	}
	return best;
}
