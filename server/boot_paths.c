/* boot_paths.c - the table of boot paths: one line per path (boot_paths.h). */
#include "boot_paths.h"

#include <ctype.h>
#include <string.h>

static const struct tb_boot_path paths[] = {
	/* into GRUB's default a plain reboot: nothing written anywhere */
	{"reboot-default", TB_BOOT_FROM_ANY, TB_BOOT_NEED_TARGET_DEFAULT, 1, "reboot (GRUB's default)",
	 tb_boot_path_reboot_default},
	{"efi-bootnext", TB_BOOT_FROM_LINUX | TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_EFI, 1,
	 "efibootmgr -n XXXX (FreeBSD: -n -b XXXX), read back", tb_boot_path_efi_bootnext},
	{"grub-reboot", TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY, 1, "grub-reboot ENTRY, read back from grubenv",
	 tb_boot_path_grub_reboot},
	{"grubenv-esp", TB_BOOT_FROM_LINUX | TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_ESP_GRUBENV,
	 1, "next_entry=ENTRY into GRUB's environment block on the EFI system partition (sh), read back",
	 tb_boot_path_grubenv_esp},
	{"bmc-bootdev", TB_BOOT_FROM_ANY, TB_BOOT_NEED_BMC, 1,
	 "the BMC's one-shot boot device (IPMI chassis bootdev DEV options=efiboot), then a reboot",
	 tb_boot_path_bmc_bootdev},
	{"grub-console", TB_BOOT_FROM_ANY, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE, 1,
	 "GRUB menu over the console", tb_boot_path_grub_console},
	{"default-then-grub-reboot", TB_BOOT_FROM_FREEBSD | TB_BOOT_FROM_OTHER,
	 TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_DEFAULT_LINUX, 2, "reboot to GRUB's default, then grub-reboot ENTRY",
	 tb_boot_path_default_then},
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

const char tb_grubenv_esp_script[] =
	"f=$1 e=$2 t=$1.tb$$; "
	"{ printf '# GRUB Environment Block\\n'; "
	"if [ -f \"$f\" ]; then grep -v -e '^#' -e '^next_entry=' \"$f\"; fi; "
	"printf 'next_entry=%s\\n' \"$e\"; } >\"$t\" || exit 1; "
	"n=$(wc -c <\"$t\" | tr -d ' '); "
	"if [ \"$n\" -gt 1024 ]; then rm -f \"$t\"; "
	"echo \"$f: the environment block would be $n bytes, more than GRUB's 1024\" >&2; exit 1; fi; "
	"dd if=/dev/zero bs=1 count=$((1024 - n)) 2>/dev/null | tr '\\000' '#' >>\"$t\" && mv -f \"$t\" \"$f\" "
	"|| { rm -f \"$t\"; exit 1; }";

#define GRUBENV_HEADER "# GRUB Environment Block\n"

/* One pass over the lines of the block. */
int tb_grubenv_block_has(const char *blk, size_t len, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	if (blk == NULL || len != 1024 || strncmp(blk, GRUBENV_HEADER, sizeof(GRUBENV_HEADER) - 1) != 0)
		return -1;
	for (size_t i = 0; i < len;) {
		const char *l = blk + i, *eol = memchr(l, '\n', len - i);
		size_t ll = eol != NULL ? (size_t)(eol - l) : len - i;

		if (ll == nl + 1 + vl && strncmp(l, name, nl) == 0 && l[nl] == '=' &&
		    memcmp(l + nl + 1, value, vl) == 0)
			return 0;
		i += ll + 1;
	}
	return -2;
}

static const struct {
	const char *dev, *redfish, *ipmi;
} bmc_devs[] = {
	{"disk", "Hdd", "Force Boot from default Hard-Drive"},
	{"pxe", "Pxe", "Force PXE"},
	{"cdrom", "Cd", "Force Boot from CD/DVD"},
	{"bios", "BiosSetup", "Force Boot into BIOS Setup"},
};

const char *tb_boot_redfish_target(const char *dev)
{
	for (size_t i = 0; dev != NULL && i < sizeof bmc_devs / sizeof bmc_devs[0]; i++)
		if (strcmp(dev, bmc_devs[i].dev) == 0)
			return bmc_devs[i].redfish;
	return NULL;
}

const char *tb_boot_ipmi_selector(const char *dev)
{
	for (size_t i = 0; dev != NULL && i < sizeof bmc_devs / sizeof bmc_devs[0]; i++)
		if (strcmp(dev, bmc_devs[i].dev) == 0)
			return bmc_devs[i].ipmi;
	return NULL;
}
