/*
 * test_grubcfg.c - the GRUB menu parser against the grub.cfg that Debian's
 * update-grub writes (as the simulated testbed has it) and small cases: index
 * paths with submenus, ids from --id and $menuentry_id_option, titles with
 * quotes, and resolving what grub-reboot accepts (index, id, title).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "grubcfg.h"

static const char cfg[] =
	"if [ -s $prefix/grubenv ]; then\n"
	"  load_env\n"
	"fi\n"
	"function savedefault {\n"
	"  if [ -z \"${boot_once}\" ]; then\n"
	"    saved_entry=\"${chosen}\"\n"
	"  fi\n"
	"}\n"
	"menuentry 'Ubuntu' --class ubuntu --class os $menuentry_id_option 'gnulinux-simple-1234' {\n"
	"\tlinux /vmlinuz root=UUID=1234 ro\n"
	"}\n"
	"submenu 'Advanced options for Ubuntu' $menuentry_id_option 'gnulinux-advanced-1234' {\n"
	"\tmenuentry 'Ubuntu, with Linux 6.8.0-134-generic' --class ubuntu $menuentry_id_option 'gnulinux-6.8.0-advanced' {\n"
	"\t\tlinux /vmlinuz-6.8.0 root=UUID=1234 ro\n"
	"\t}\n"
	"\tmenuentry 'Ubuntu, with Linux 6.8.0-134-generic (recovery mode)' $menuentry_id_option 'gnulinux-6.8.0-recovery' {\n"
	"\t}\n"
	"}\n"
	"menuentry \"Memory test (memtest86+x64.efi)\" --class memtest $menuentry_id_option 'memtest86+' {\n"
	"}\n"
	"menuentry 'UEFI Firmware Settings' $menuentry_id_option 'uefi-firmware' {\n"
	"\tfwsetup\n"
	"}\n"
	"menuentry 'FreeBSD 14.1' --class freebsd --id freebsd {\n"
	"\tset root=(hd1)\n"
	"\tchainloader +1\n"
	"}\n"
	"menuentry 'It'\\''s quoted' {\n"
	"}\n";

static void test_menu(void **state)
{
	json_t *e = tb_grubcfg_entries(cfg);
	static const struct {
		const char *index, *id, *title;
		int submenu;
	} want[] = {
		{"0", "gnulinux-simple-1234", "Ubuntu", 0},
		{"1", "gnulinux-advanced-1234", "Advanced options for Ubuntu", 1},
		{"1>0", "gnulinux-6.8.0-advanced", "Ubuntu, with Linux 6.8.0-134-generic", 0},
		{"1>1", "gnulinux-6.8.0-recovery", "Ubuntu, with Linux 6.8.0-134-generic (recovery mode)", 0},
		{"2", "memtest86+", "Memory test (memtest86+x64.efi)", 0},
		{"3", "uefi-firmware", "UEFI Firmware Settings", 0},
		{"4", "freebsd", "FreeBSD 14.1", 0},
		{"5", NULL, "It's quoted", 0},
	};

	(void)state;
	assert_non_null(e);
	assert_int_equal(json_array_size(e), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_t *x = json_array_get(e, i);

		assert_string_equal(json_string_value(json_object_get(x, "index")), want[i].index);
		if (want[i].id != NULL)
			assert_string_equal(json_string_value(json_object_get(x, "id")), want[i].id);
		else
			assert_true(json_is_null(json_object_get(x, "id")));
		assert_string_equal(json_string_value(json_object_get(x, "title")), want[i].title);
		assert_int_equal(json_is_true(json_object_get(x, "submenu")), want[i].submenu);
	}
	json_decref(e);
}

static void test_resolve(void **state)
{
	json_t *e = tb_grubcfg_entries(cfg);
	char out[32];

	(void)state;
	assert_int_equal(tb_grubcfg_resolve(e, "4", out, sizeof(out)), 0);
	assert_string_equal(out, "4");
	assert_int_equal(tb_grubcfg_resolve(e, "freebsd", out, sizeof(out)), 0);
	assert_string_equal(out, "4");
	assert_int_equal(tb_grubcfg_resolve(e, "FreeBSD 14.1", out, sizeof(out)), 0);
	assert_string_equal(out, "4");
	assert_int_equal(tb_grubcfg_resolve(e, "1>1", out, sizeof(out)), 0);
	assert_string_equal(out, "1>1");
	assert_int_equal(tb_grubcfg_resolve(e, "gnulinux-6.8.0-advanced", out, sizeof(out)), 0);
	assert_string_equal(out, "1>0");
	assert_int_equal(tb_grubcfg_resolve(e, "windows", out, sizeof(out)), -1);
	assert_int_equal(tb_grubcfg_resolve(e, "9", out, sizeof(out)), -1);
	json_decref(e);
	/* entries of a menu read from elsewhere (a console) may lack a field:
	 * skipped, not a strcmp on NULL */
	e = json_pack("[{s:s}, {s:s}, {s:s, s:s}]", "title", "no index", "index", "7", "index", "2", "title",
		      "FreeBSD");
	assert_int_equal(tb_grubcfg_resolve(e, "FreeBSD", out, sizeof(out)), 0);
	assert_string_equal(out, "2");
	assert_int_equal(tb_grubcfg_resolve(e, "no index", out, sizeof(out)), -1);
	assert_int_equal(tb_grubcfg_resolve(e, "7", out, sizeof(out)), 0);
	json_decref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_menu),
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests_name("grubcfg", tests, NULL, NULL);
}
