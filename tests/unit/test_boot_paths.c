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
	/* target is GRUB's default, efi too: tie at 1, efi first in the table */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, TB_BOOT_NEED_TARGET_DEFAULT | TB_BOOT_NEED_EFI), "efi-bootnext");
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
		cmocka_unit_test(test_from_linux),
		cmocka_unit_test(test_from_freebsd),
		cmocka_unit_test(test_from_other),
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
