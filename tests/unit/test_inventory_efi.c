/* test_inventory_efi.c - the inventory's boot.efi (OS -> UEFI Boot####):
 * parsed, upper-cased, and a bad value refused at FILE:LINE:COL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "inventory.h"

#define HEAD "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
#define HOST                                                                       \
	"  left:\n    role: host\n    os:\n      ubuntu: {address: 198.18.0.11}\n" \
	"      freebsd: {address: 198.18.0.12}\n"

static void test_efi_parsed(void **state)
{
	const char *text = HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"},"
				     " efi: {ubuntu: \"0001\", freebsd: \"000a\"}}\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].boot.nefi, 2);
	assert_string_equal(inv->machines[0].boot.efi[0].os, "ubuntu");
	assert_string_equal(inv->machines[0].boot.efi[0].entry, "0001");
	assert_string_equal(inv->machines[0].boot.efi[1].entry, "000A");
	tb_inventory_free(inv);
}

static void test_efi_absent(void **state)
{
	const char *text = HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}}\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].boot.nefi, 0);
	tb_inventory_free(inv);
}

static void test_efi_bad(void **state)
{
	static const struct {
		const char *text, *expect;
	} bad[] = {
		{HEAD HOST
		 "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {ubuntu: \"12\"}}\n",
		 "t.yaml:9:81: machines.left.boot.efi.ubuntu: expected a UEFI Boot#### number"},
		{HEAD HOST
		 "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {ubuntu: \"00g1\"}}\n",
		 "machines.left.boot.efi.ubuntu: expected a UEFI Boot#### number"},
		{HEAD HOST
		 "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {windows: \"0003\"}}\n",
		 "machines.left.boot.efi.windows: not an OS of this machine's os: section"},
		{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: \"0001\"}\n",
		 "machines.left.boot.efi"},
	};
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_inventory *inv = NULL;
		struct tb_error err = {0};
		int rc = tb_inventory_load_buffer("t.yaml", bad[i].text, strlen(bad[i].text), 0, &inv, &err);

		if (rc != TB_ERR_CONFIG || inv != NULL || strstr(err.message, bad[i].expect) == NULL) {
			fprintf(stderr, "case %zu: rc %d, message \"%s\"\n  expected \"%s\"\n", i, rc, err.message,
				bad[i].expect);
			failures++;
		}
		tb_inventory_free(inv);
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_efi_parsed),
		cmocka_unit_test(test_efi_absent),
		cmocka_unit_test(test_efi_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
