/* boot_check.c - the inventory's side of booting into an OS: see boot_check.h. */
#include "boot_check.h"

#include <string.h>

#include "boot_paths.h"

const char *tb_boot_entry_of(const struct tb_machine *m, const char *os)
{
	for (size_t i = 0; i < m->boot.nentries; i++)
		if (strcmp(m->boot.entries[i].os, os) == 0)
			return m->boot.entries[i].entry;
	return NULL;
}

const char *tb_boot_efi_of(const struct tb_machine *m, const char *os)
{
	for (size_t i = 0; i < m->boot.nefi; i++)
		if (strcmp(m->boot.efi[i].os, os) == 0)
			return m->boot.efi[i].entry;
	return NULL;
}

static const char *map_of(const struct tb_boot_entry *e, size_t n, const char *os)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(e[i].os, os) == 0)
			return e[i].entry;
	return NULL;
}

const char *tb_boot_esp_of(const struct tb_machine *m, const char *os)
{
	return map_of(m->boot.esp, m->boot.nesp, os);
}

const char *tb_boot_bmc_of(const struct tb_machine *m, const char *os)
{
	return map_of(m->boot.bmc, m->boot.nbmc, os);
}

const struct tb_power_method *tb_boot_bmc_method(const struct tb_machine *m)
{
	for (size_t i = 0; i < m->npower; i++)
		if (m->power[i].driver == TB_POWER_IPMI || m->power[i].driver == TB_POWER_REDFISH)
			return &m->power[i];
	return NULL;
}

/* What m offers towards to, from from, as boot_paths.h's bits. */
const struct tb_boot_path *tb_boot_path_for(const struct tb_machine *m, const char *from, const char *to,
					    const char *def, int console)
{
	struct tb_boot_have h = {0, 0};

	if (from == NULL || *from == '\0')
		from = def; /* off: it comes up in GRUB's default first */
	if (m->boot.loader == NULL && m->boot.nefi == 0 && m->boot.nbmc == 0)
		return NULL;
	h.from = strcmp(tb_boot_kernel_of(from), "FreeBSD") == 0 ? TB_BOOT_FROM_FREEBSD : TB_BOOT_FROM_LINUX;
	if (tb_boot_efi_of(m, to) != NULL)
		h.have |= TB_BOOT_NEED_EFI;
	if (tb_boot_bmc_of(m, to) != NULL && tb_boot_bmc_method(m) != NULL)
		h.have |= TB_BOOT_NEED_BMC;
	if (m->boot.loader != NULL) {
		if (tb_boot_entry_of(m, to) != NULL)
			h.have |= TB_BOOT_NEED_GRUB_ENTRY;
		if (tb_boot_esp_of(m, from) != NULL)
			h.have |= TB_BOOT_NEED_ESP_GRUBENV;
		if (console)
			h.have |= TB_BOOT_NEED_CONSOLE;
		if (def != NULL && strcmp(to, def) == 0)
			h.have |= TB_BOOT_NEED_TARGET_DEFAULT;
		if (def != NULL && strcmp(tb_boot_kernel_of(def), "Linux") == 0)
			h.have |= TB_BOOT_NEED_DEFAULT_LINUX;
	}
	return tb_boot_path_choose(&h);
}

const char *tb_boot_kernel_of(const char *os)
{
	return strstr(os, "bsd") != NULL ? "FreeBSD" : "Linux";
}

int tb_boot_check(const struct tb_machine *m, const char *os, int make_default, struct tb_error *err)
{
	int has_bmc = 0;

	if (tb_machine_persona(m, os) == NULL)
		return tb_fail(err, TB_ERR_NOT_FOUND, "os", "%s has no OS \"%.40s\"; it has %s%s%s", m->name, os,
			       m->nos > 0 ? m->os[0].os : "", m->nos > 1 ? " and " : "", m->nos > 1 ? m->os[1].os : "");
	if (m->boot.loader == NULL)
		return tb_fail(err, TB_ERR_INVALID, "os",
			       "%s has no boot: section in the inventory: it cannot choose an OS", m->name);
	if (strcmp(os, m->boot.default_os) != 0 && tb_boot_entry_of(m, os) == NULL && tb_boot_efi_of(m, os) == NULL &&
	    (tb_boot_bmc_of(m, os) == NULL || tb_boot_bmc_method(m) == NULL))
		return tb_fail(err, TB_ERR_INVALID, "os",
			       "%s's boot.entries has no GRUB entry for %s (nor boot.efi a Boot####, nor boot.bmc a "
			       "device with an ipmi or redfish power method)",
			       m->name, os);
	for (size_t i = 0; i < m->npower; i++)
		has_bmc |= m->power[i].driver == TB_POWER_IPMI;
	/* the way back from a non-Linux default: a console testbedd reads, over
	 * which a boot chooses Linux on GRUB's menu (boot_console.h), or a BMC (a
	 * person's way in: its SOL, its power); ipmi-sol is not read yet but
	 * comes with a BMC */
	if (make_default && strcmp(tb_boot_kernel_of(os), "Linux") != 0 && m->console.type != TB_CONSOLE_TCP &&
	    m->console.type != TB_CONSOLE_DEVICE && !has_bmc)
		return tb_fail(err, TB_ERR_INVALID, "make_default",
			       "refused: %s has no grub-reboot, so %s could not get back from it; it would need a "
			       "console or a BMC (a tcp or device console, over which a boot chooses Linux on GRUB's "
			       "menu)",
			       os, m->name);
	return 0;
}
