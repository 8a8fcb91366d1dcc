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

#define HEAD                                                                                \
	"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n  left:\n    role: host\n" \
	"    os:\n      ubuntu: {address: 198.18.0.11}\n      freebsd: {address: 198.18.0.12}\n"
#define BOOT "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\", freebsd: \"4\"}}\n"
#define BOOT_NO_BSD "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}}\n"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
