/*
 * test_boot_check.c - what booting into an OS needs, from the inventory
 * alone (boot_check.h): a table of machines and requests, each with the
 * result and the field and words of the refusal.  Adding a case is adding a
 * line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "boot_check.h"
#include "boot_paths.h"

#define HEAD                                                                                \
	"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n  left:\n    role: host\n" \
	"    os:\n      ubuntu: {address: 198.18.0.11}\n      freebsd: {address: 198.18.0.12}\n"
#define BOOT "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\", freebsd: \"4\"}}\n"
#define BOOT_NO_BSD "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}}\n"
#define BOOT_EFI                                                                                              \
	"    boot: {loader: grub, default: freebsd, entries: {ubuntu: \"0\", freebsd: \"4\"}, efi: {ubuntu: " \
	"\"0001\", freebsd: \"000a\"}}\n"
#define BOOT_EFI_ONLY "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {freebsd: \"0002\"}}\n"
#define IPMI "    power:\n      - {driver: ipmi, address: 198.18.0.91, user: admin, password_file: /p}\n"
#define CONSOLE "    console: {type: tcp, address: 127.0.0.1, port: 7001}\n"

static void test_checks(void **state)
{
	static const struct {
		const char *inventory, *os;
		int make_default, rc;
		const char *field, *words;
	} cases[] = {
		{HEAD BOOT, "freebsd", 0, 0, NULL, NULL},
		{HEAD BOOT, "ubuntu", 1, 0, NULL, NULL},
		{HEAD BOOT, "windows", 0, TB_ERR_NOT_FOUND, "os", "has no OS \"windows\"; it has ubuntu and freebsd"},
		{HEAD, "freebsd", 0, TB_ERR_INVALID, "os", "no boot: section"},
		{HEAD BOOT_NO_BSD, "freebsd", 0, TB_ERR_INVALID, "os", "no GRUB entry for freebsd"},
		/* FreeBSD has no grub-reboot: as the default it needs a way back */
		{HEAD BOOT, "freebsd", 1, TB_ERR_INVALID, "make_default", "would need a console or a BMC"},
		{HEAD BOOT IPMI, "freebsd", 1, 0, NULL, NULL},
		{HEAD BOOT CONSOLE, "freebsd", 1, 0, NULL, NULL},
		/* no GRUB entry, but a firmware Boot####: bootable (through BootNext) */
		{HEAD BOOT_EFI_ONLY, "freebsd", 0, 0, NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_inventory *inv = NULL;
		struct tb_error err = {0};
		int rc;

		if (tb_inventory_load_buffer("t.yaml", cases[i].inventory, strlen(cases[i].inventory), 0, &inv, &err) !=
		    0)
			fail_msg("case %zu: inventory: %s", i, err.message);
		memset(&err, 0, sizeof(err));
		rc = tb_boot_check(tb_inventory_find(inv, "left"), cases[i].os, cases[i].make_default, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.message);
		if (cases[i].field != NULL)
			assert_string_equal(err.field, cases[i].field);
		if (cases[i].words != NULL && strstr(err.message, cases[i].words) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.message, cases[i].words);
		tb_inventory_free(inv);
	}
}

static void test_names(void **state)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	const struct tb_machine *m;

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", HEAD BOOT, strlen(HEAD BOOT), 0, &inv, &err), 0);
	m = tb_inventory_find(inv, "left");
	assert_string_equal(tb_boot_entry_of(m, "freebsd"), "4");
	assert_null(tb_boot_entry_of(m, "windows"));
	assert_string_equal(tb_boot_kernel_of("freebsd"), "FreeBSD");
	assert_string_equal(tb_boot_kernel_of("ubuntu"), "Linux");
	tb_inventory_free(inv);
}

/* The path a boot takes: what the inventory offers, from the OS the host
 * is in, towards GRUB's default or not, with a console or not. */
static void test_path_for(void **state)
{
	static const struct {
		const char *inventory, *from, *to, *def;
		int console;
		const char *path; /* NULL: none */
	} cases[] = {
		/* today's: grub-reboot from Linux, a plain reboot into the default */
		{HEAD BOOT, "ubuntu", "freebsd", "ubuntu", 0, "grub-reboot"},
		{HEAD BOOT, "freebsd", "ubuntu", "ubuntu", 0, "reboot-default"},
		{HEAD BOOT, "", "freebsd", "ubuntu", 0, "grub-reboot"}, /* off: up in the default first */
		/* from FreeBSD, GRUB's default, into ubuntu: the console, else none */
		{HEAD BOOT, "freebsd", "ubuntu", "freebsd", 1, "grub-console"},
		{HEAD BOOT, "freebsd", "ubuntu", "freebsd", 0, NULL},
		/* with boot.efi: one reboot from FreeBSD by BootNext, before the console */
		{HEAD BOOT_EFI, "freebsd", "ubuntu", "freebsd", 0, "efi-bootnext"},
		{HEAD BOOT_EFI, "freebsd", "ubuntu", "freebsd", 1, "efi-bootnext"},
		{HEAD BOOT_EFI, "ubuntu", "freebsd", "freebsd", 0, "reboot-default"},
		{HEAD BOOT_EFI, "ubuntu", "freebsd", "ubuntu", 0, "efi-bootnext"},
		{HEAD BOOT_EFI_ONLY, "ubuntu", "freebsd", "ubuntu", 0, "efi-bootnext"},
		{HEAD, "ubuntu", "freebsd", "ubuntu", 0, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_inventory *inv = NULL;
		struct tb_error err = {0};
		const struct tb_boot_path *p;

		if (tb_inventory_load_buffer("t.yaml", cases[i].inventory, strlen(cases[i].inventory), 0, &inv, &err) !=
		    0)
			fail_msg("case %zu: inventory: %s", i, err.message);
		p = tb_boot_path_for(tb_inventory_find(inv, "left"), cases[i].from, cases[i].to, cases[i].def,
				     cases[i].console);
		if (cases[i].path == NULL && p != NULL)
			fail_msg("case %zu: path %s, want none", i, p->name);
		if (cases[i].path != NULL && (p == NULL || strcmp(p->name, cases[i].path) != 0))
			fail_msg("case %zu: path %s, want %s", i, p != NULL ? p->name : "none", cases[i].path);
		tb_inventory_free(inv);
	}
}

static void test_efi_of(void **state)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	const struct tb_machine *m;

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", HEAD BOOT_EFI, strlen(HEAD BOOT_EFI), 0, &inv, &err), 0);
	m = tb_inventory_find(inv, "left");
	assert_string_equal(tb_boot_efi_of(m, "ubuntu"), "0001");
	assert_string_equal(tb_boot_efi_of(m, "freebsd"), "000A"); /* upper case, as efibootmgr reads back */
	assert_null(tb_boot_efi_of(m, "windows"));
	tb_inventory_free(inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_path_for),
		cmocka_unit_test(test_efi_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
