/* boot_paths.c - the table of boot paths: one line per path (boot_paths.h). */
#include "boot_paths.h"

#include <ctype.h>
#include <string.h>

static const struct tb_boot_path paths[] = {
	/* into GRUB's default a plain reboot: nothing written anywhere */
	{"reboot-default", TB_BOOT_FROM_ANY, TB_BOOT_NEED_TARGET_DEFAULT, 1, "reboot (GRUB's default)"},
	{"efi-bootnext", TB_BOOT_FROM_LINUX | TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_EFI, 1,
	 "efibootmgr -n XXXX (FreeBSD: -n -b XXXX), read back"},
	{"grub-reboot", TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY, 1, "grub-reboot ENTRY, read back from grubenv"},
	{"grub-console", TB_BOOT_FROM_ANY, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE, 1,
	 "GRUB menu over the console"},
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

/* "XXXX" of "NAME<spaces>:<spaces>XXXX..." in upper case into out[5]; 0 when
 * line is not that name or the value not four hex digits. */
static int var_of(const char *line, size_t len, const char *name, char out[5])
{
	size_t n = strlen(name), i;

	if (len < n || strncmp(line, name, n) != 0)
		return 0;
	for (i = n; i < len && line[i] == ' '; i++)
		;
	if (i >= len || line[i++] != ':')
		return 0;
	while (i < len && line[i] == ' ')
		i++;
	if (len - i < 4)
		return 0;
	for (int k = 0; k < 4; k++) {
		if (!isxdigit((unsigned char)line[i + (size_t)k]))
			return 0;
		out[k] = (char)toupper((unsigned char)line[i + (size_t)k]);
	}
	out[4] = '\0';
	return len - i == 4 || !isxdigit((unsigned char)line[i + 4]);
}

/* One pass over the lines; later lines of the same name win. */
int tb_efi_vars_parse(const char *out, struct tb_efi_vars *v)
{
	int seen = 0;

	memset(v, 0, sizeof(*v));
	for (const char *l = out; l != NULL && *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol != NULL ? (size_t)(eol - l) : strlen(l);

		if (len > 0 && l[len - 1] == '\r')
			len--;
		if (var_of(l, len, "BootNext", v->next))
			seen = 1;
		else if (var_of(l, len, "BootCurrent", v->current))
			seen = 1;
		l = eol != NULL ? eol + 1 : NULL;
	}
	return seen ? 0 : -1;
}
