/* test_boot_paths.c - the boot-path table's choice (boot_paths.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "boot_paths.h"

static const char *pick(unsigned int from, unsigned int have)
{
	struct tb_boot_have h = {from, have};
	const struct tb_boot_path *p = tb_boot_path_choose(&h);
	return p != NULL ? p->name : "none";
}

static void test_from_linux(void **state)
{
	(void)state;
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY), "grub-reboot");
	/* efi and grub both 1 reboot: the table's order */
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_EFI), "efi-bootnext");
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE), "grub-reboot");
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, 0), "none");
}

static void test_from_freebsd(void **state)
{
	(void)state;
	/* no efi, no console, target not default: two reboots via Linux */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_DEFAULT_LINUX),
			    "default-then-grub-reboot");
	/* efi beats the two-reboot path: fewest reboots */
	assert_string_equal(
		pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_DEFAULT_LINUX | TB_BOOT_NEED_EFI),
		"efi-bootnext");
	/* console beats it too */
	assert_string_equal(
		pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_DEFAULT_LINUX | TB_BOOT_NEED_CONSOLE),
		"grub-console");
	/* target is GRUB's default, efi too: tie at 1, the plain reboot first in the table */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_TARGET_DEFAULT | TB_BOOT_NEED_EFI),
			    "reboot-default");
	/* efi beats the console: it writes a variable, not keys on a menu */
	assert_string_equal(
		pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE | TB_BOOT_NEED_EFI),
		"efi-bootnext");
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_TARGET_DEFAULT), "reboot-default");
}

static void test_from_other(void **state)
{
	(void)state;
	/* efibootmgr -n only from Linux and FreeBSD */
	assert_string_equal(pick(TB_BOOT_FROM_OTHER, TB_BOOT_NEED_EFI), "none");
	assert_string_equal(pick(TB_BOOT_FROM_OTHER, TB_BOOT_NEED_EFI | TB_BOOT_NEED_GRUB_ENTRY | TB_BOOT_NEED_CONSOLE),
			    "grub-console");
	assert_null(tb_boot_path_choose(NULL));
}

/* efibootmgr's output as Linux's (rhboot) and FreeBSD's print it. */
static void test_parse(void **state)
{
	struct tb_efi_vars v;
	(void)state;
	assert_int_equal(tb_efi_vars_parse("BootNext: 0002\nBootCurrent: 0001\nTimeout: 1 seconds\n"
					   "BootOrder: 0001,0002\nBoot0001* ubuntu\nBoot0002* FreeBSD\n",
					   &v),
			 0);
	assert_string_equal(v.next, "0002");
	assert_string_equal(v.current, "0001");
	/* no BootNext line: not set */
	assert_int_equal(tb_efi_vars_parse("BootCurrent: 0001\r\nTimeout: 1 seconds\r\nBootOrder: 0001,0002\r\n", &v),
			 0);
	assert_string_equal(v.next, "");
	assert_string_equal(v.current, "0001");
	/* FreeBSD: a space before the colon, lower-case hex, + on the current entry */
	assert_int_equal(tb_efi_vars_parse("BootNext : 000a\nBootCurrent: 0001\nTimeout    : 1 seconds\n"
					   "BootOrder  : 0001, 000A\n+Boot0001* ubuntu\n Boot000A* FreeBSD\n",
					   &v),
			 0);
	assert_string_equal(v.next, "000A");
	assert_string_equal(v.current, "0001");
	/* not efibootmgr's: nothing; a bad value is no value */
	assert_int_equal(tb_efi_vars_parse("EFI variables are not supported on this system.\n", &v), -1);
	assert_string_equal(v.next, "");
	assert_int_equal(tb_efi_vars_parse("BootNext: 00021\nBootNextX: 0003\nBootCurrent: 12\n", &v), -1);
	assert_int_equal(tb_efi_vars_parse(NULL, &v), -1);
	assert_int_equal(tb_efi_vars_parse("", &v), -1);
}

static void test_table(void **state)
{
	size_t n = 0;
	const struct tb_boot_path *t = tb_boot_paths(&n);
	(void)state;
	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(t[i].name);
		assert_true(t[i].reboots >= 1);
		assert_true(t[i].from != 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_linux), cmocka_unit_test(test_from_freebsd),
		cmocka_unit_test(test_from_other), cmocka_unit_test(test_table),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
