/* test_boot_paths.c - the boot-path table's choice (boot_paths.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The ESP's grubenv and the BMC's boot device: where each wins. */
static void test_esp_bmc(void **state)
{
	const unsigned int g = TB_BOOT_NEED_GRUB_ENTRY, esp = TB_BOOT_NEED_ESP_GRUBENV, bmc = TB_BOOT_NEED_BMC;
	(void)state;
	/* from FreeBSD, GRUB's default a Linux: one reboot through the ESP, not two */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, g | esp | TB_BOOT_NEED_DEFAULT_LINUX), "grubenv-esp");
	/* the console too: the ESP first (a file written, not keys on a menu) */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, g | esp | TB_BOOT_NEED_CONSOLE), "grubenv-esp");
	/* no GRUB entry for the target: the ESP's block cannot name it */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, esp), "none");
	/* from Linux grub-reboot stays first; efi before the ESP on a tie */
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, g | esp), "grub-reboot");
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, g | esp | TB_BOOT_NEED_EFI), "efi-bootnext");
	/* not from an OS testbedd has no sh-writing for */
	assert_string_equal(pick(TB_BOOT_FROM_OTHER, g | esp), "none");
	/* the BMC: from any OS, before the console and the two-reboot path */
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, bmc | g | TB_BOOT_NEED_DEFAULT_LINUX), "bmc-bootdev");
	assert_string_equal(pick(TB_BOOT_FROM_OTHER, bmc | g | TB_BOOT_NEED_CONSOLE), "bmc-bootdev");
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, bmc), "bmc-bootdev");
	assert_string_equal(pick(TB_BOOT_FROM_LINUX, bmc | g), "grub-reboot");
	assert_string_equal(pick(TB_BOOT_FROM_FREEBSD, bmc | g | esp), "grubenv-esp");
	assert_string_equal(tb_boot_redfish_target("pxe"), "Pxe");
	assert_string_equal(tb_boot_redfish_target("disk"), "Hdd");
	assert_string_equal(tb_boot_ipmi_selector("pxe"), "Force PXE");
	assert_null(tb_boot_redfish_target("floppy"));
	assert_null(tb_boot_ipmi_selector(NULL));
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[4096];
	FILE *f = fopen(path, "rb");

	*len = 0;
	if (f == NULL)
		return NULL;
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* sh -c tb_grubenv_esp_script tb-grubenv path entry: its exit status. */
static int run_script(const char *path, const char *entry)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", tb_grubenv_esp_script, "tb-grubenv", path, entry, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The script under the machine's sh: a valid block, other variables kept, a
 * previous next_entry replaced, an entry of any characters as it is, a
 * block that would not fit refused with the file unchanged. */
static void test_esp_script(void **state)
{
	char dir[] = "/tmp/tbespXXXXXX", path[64], want[1100];
	const char *odd = "Advanced options for Ubuntu>it's $HOME `x` \\ \"q\"";
	size_t len;
	char *blk;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/grubenv", dir);
	/* none there yet: created */
	assert_int_equal(run_script(path, "freebsd"), 0);
	blk = slurp(path, &len);
	assert_int_equal(len, 1024);
	assert_int_equal(tb_grubenv_block_has(blk, len, "next_entry", "freebsd"), 0);
	assert_int_equal(blk[1023], '#');
	/* another variable kept, the old next_entry replaced */
	f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, 25 + strlen("next_entry=freebsd\n"), SEEK_SET);
	fputs("saved_entry=0\n", f);
	fclose(f);
	assert_int_equal(run_script(path, odd), 0);
	blk = slurp(path, &len);
	assert_int_equal(len, 1024);
	assert_int_equal(tb_grubenv_block_has(blk, len, "saved_entry", "0"), 0);
	assert_int_equal(tb_grubenv_block_has(blk, len, "next_entry", odd), 0);
	assert_int_equal(tb_grubenv_block_has(blk, len, "next_entry", "freebsd"), -2);
	assert_null(strstr(blk, "next_entry=freebsd"));
	/* full: refused, the block as it was */
	memset(want, 'x', sizeof(want));
	want[990] = '\0';
	assert_int_not_equal(run_script(path, want), 0);
	blk = slurp(path, &len);
	assert_int_equal(len, 1024);
	assert_int_equal(tb_grubenv_block_has(blk, len, "next_entry", odd), 0);
	unlink(path);
	rmdir(dir);
}

static void test_block_has(void **state)
{
	char blk[1024];
	(void)state;
	memset(blk, '#', sizeof(blk));
	memcpy(blk, "# GRUB Environment Block\nnext_entry=1\nsaved_entry=0\n", 52);
	assert_int_equal(tb_grubenv_block_has(blk, sizeof(blk), "next_entry", "1"), 0);
	assert_int_equal(tb_grubenv_block_has(blk, sizeof(blk), "saved_entry", "0"), 0);
	assert_int_equal(tb_grubenv_block_has(blk, sizeof(blk), "next_entry", "10"), -2);
	assert_int_equal(tb_grubenv_block_has(blk, sizeof(blk), "next_entr", "y=1"), -2);
	assert_int_equal(tb_grubenv_block_has(blk, 1000, "next_entry", "1"), -1);
	blk[0] = 'X';
	assert_int_equal(tb_grubenv_block_has(blk, sizeof(blk), "next_entry", "1"), -1);
	assert_int_equal(tb_grubenv_block_has(NULL, 0, "next_entry", "1"), -1);
}

static void test_table(void **state)
{
	size_t n = 0;
	const struct tb_boot_path *t = tb_boot_paths(&n);
	(void)state;
	assert_true(n >= 7);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(t[i].name);
		assert_true(t[i].reboots >= 1);
		assert_true(t[i].from != 0);
		assert_non_null(t[i].run);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_linux), cmocka_unit_test(test_from_freebsd),
		cmocka_unit_test(test_from_other), cmocka_unit_test(test_table),
		cmocka_unit_test(test_parse),      cmocka_unit_test(test_esp_bmc),
		cmocka_unit_test(test_esp_script), cmocka_unit_test(test_block_has),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
