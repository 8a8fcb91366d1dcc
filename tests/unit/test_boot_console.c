/*
 * test_boot_console.c - GRUB's menu read from a serial console's bytes and
 * the keys that choose an entry on it (boot_console.h): the menu as the sim
 * prints it ('*' marks the highlight), as a VT100 GRUB draws it (cursor
 * moves, reverse video), the last of several, one still arriving; which
 * entry a boot.entries name picks; the key bytes and names; and the last
 * console lines as plain text.  Pure functions: no console, no host.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "boot_console.h"

#define BANNER "\r\n                             GNU GRUB  version 2.12\r\n\r\n"
#define BORDER " +----------------------------------------------------------------------------+\r\n"
#define HELP                                                                      \
	"      Use the ^ and v keys to select which entry is highlighted.\r\n"    \
	"      Press enter to boot the selected OS, `e' to edit the commands\r\n" \
	"      before booting or `c' for a command-line.\r\n"

static const char SIM_MENU[] = BANNER BORDER
	" |*Ubuntu                                                                    |\r\n"
	" | Advanced options for Ubuntu >                                            |\r\n"
	" | FreeBSD 14.1                                                             |\r\n" BORDER "\r\n" HELP
	"   The highlighted entry will be executed automatically in 5s.\r\n";

static void test_parse_sim(void **state)
{
	struct tb_grub_menu m;

	(void)state;
	assert_int_equal(tb_grub_menu_parse(SIM_MENU, strlen(SIM_MENU), &m), 1);
	assert_int_equal(m.n, 3);
	assert_string_equal(m.title[0], "Ubuntu");
	assert_string_equal(m.title[1], "Advanced options for Ubuntu >");
	assert_string_equal(m.title[2], "FreeBSD 14.1");
	assert_int_equal(m.highlighted, 0);
	assert_int_equal(m.complete, 1);
	assert_int_equal(m.timeout_s, 5);
}

/* GRUB on a VT100: each row placed by a cursor move, the highlight in
 * reverse video, no '*'; the countdown rewritten in place. */
static void test_parse_vt100(void **state)
{
	static const char raw[] =
		"\033[2J\033[1;1H\033[0m\033[1;30H GNU GRUB  version 2.06\033[3;2H+---------------------+"
		"\033[4;2H|\033[4;3H\033[0mDebian GNU/Linux     \033[4;24H|"
		"\033[5;2H|\033[5;3H\033[7mFreeBSD              \033[0m\033[5;24H|"
		"\033[6;2H+---------------------+\033[8;5HUse the ^ and v keys to select which entry is highlighted."
		"\033[9;5Hbefore booting or `c' for a command-line.\033[11;4HThe highlighted entry will be executed "
		"automatically in 10s.\033[11;4HThe highlighted entry will be executed automatically in 9s. ";
	struct tb_grub_menu m;

	(void)state;
	assert_int_equal(tb_grub_menu_parse(raw, strlen(raw), &m), 1);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.title[0], "Debian GNU/Linux");
	assert_string_equal(m.title[1], "FreeBSD");
	assert_int_equal(m.highlighted, 1);
	assert_int_equal(m.complete, 1);
	assert_int_equal(m.timeout_s, 9);
}

/* The console's bytes are not GRUB's own: a parameter of 2^32 + 7 is not
 * reverse video (7), a countdown past INT_MAX is not a few seconds (the
 * digits overflowed an int before: undefined, in practice wrapped). */
static void test_parse_huge_numbers(void **state)
{
	static const char raw[] = "\033[1;30H GNU GRUB  version 2.06\033[3;2H+---------------------+"
				  "\033[4;2H|\033[4;3H\033[7mDebian GNU/Linux     \033[0m\033[4;24H|"
				  "\033[5;2H|\033[5;3H\033[4294967303mFreeBSD              \033[0m\033[5;24H|"
				  "\033[6;2H+---------------------+\033[11;4HThe highlighted entry will be executed "
				  "automatically in 4294967301s.";
	struct tb_grub_menu m;

	(void)state;
	assert_int_equal(tb_grub_menu_parse(raw, strlen(raw), &m), 1);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.title[1], "FreeBSD");
	assert_int_equal(m.highlighted, 0);
	assert_int_equal(m.complete, 1);
	assert_true(m.timeout_s > 5);
}

/* Kernel lines of an earlier boot, then a new menu: the last one counts;
 * one still arriving is not complete; no banner is no menu. */
static void test_parse_last_and_partial(void **state)
{
	char buf[4096];
	struct tb_grub_menu m;
	size_t cut;

	(void)state;
	snprintf(buf, sizeof(buf),
		 "%s[    1.2] mlx4_en: Port 1\r\nlogin: " BANNER BORDER
		 " | Ubuntu                  |\r\n |*FreeBSD 14.1            |\r\n" BORDER HELP
		 "   The highlighted entry will be executed automatically in 0s.\r\n",
		 SIM_MENU);
	assert_int_equal(tb_grub_menu_parse(buf, strlen(buf), &m), 1);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.highlighted, 1);
	assert_int_equal(m.timeout_s, 0);
	cut = (size_t)(strstr(SIM_MENU, "FreeBSD") - SIM_MENU) + 20;
	assert_int_equal(tb_grub_menu_parse(SIM_MENU, cut, &m), 1);
	assert_int_equal(m.complete, 0);
	assert_int_equal(m.timeout_s, -1);
	assert_int_equal(tb_grub_menu_parse("login: ", 7, &m), 0);
	assert_int_equal(m.n, 0);
}

static void test_pick(void **state)
{
	struct tb_grub_menu m;

	(void)state;
	tb_grub_menu_parse(SIM_MENU, strlen(SIM_MENU), &m);
	/* the title from the menu read from Linux first */
	assert_int_equal(tb_grub_menu_pick(&m, "freebsd", "FreeBSD 14.1"), 2);
	/* an entry that is a title; a submenu's title without its " >" */
	assert_int_equal(tb_grub_menu_pick(&m, "FreeBSD 14.1", NULL), 2);
	assert_int_equal(tb_grub_menu_pick(&m, "Advanced options for Ubuntu", NULL), 1);
	/* an index */
	assert_int_equal(tb_grub_menu_pick(&m, "2", NULL), 2);
	assert_int_equal(tb_grub_menu_pick(&m, "0", ""), 0);
	/* none: an id the console does not show, out of range, a submenu path */
	assert_int_equal(tb_grub_menu_pick(&m, "freebsd", NULL), -1);
	assert_int_equal(tb_grub_menu_pick(&m, "3", NULL), -1);
	assert_int_equal(tb_grub_menu_pick(&m, "1>2", NULL), -1);
	/* a stale title falls back to the entry */
	assert_int_equal(tb_grub_menu_pick(&m, "0", "Windows"), 0);
}

static void test_keys(void **state)
{
	char keys[64], names[128];

	(void)state;
	assert_int_equal(tb_grub_keys(0, 2, keys, sizeof(keys), names, sizeof(names)), 7);
	assert_memory_equal(keys, "\033[B\033[B\r", 7);
	assert_string_equal(names, "Down Down Enter");
	assert_int_equal(tb_grub_keys(2, 1, keys, sizeof(keys), names, sizeof(names)), 4);
	assert_memory_equal(keys, "\033[A\r", 4);
	assert_string_equal(names, "Up Enter");
	assert_int_equal(tb_grub_keys(1, 1, keys, sizeof(keys), names, sizeof(names)), 1);
	assert_string_equal(names, "Enter");
	assert_int_equal(tb_grub_keys(0, 30, keys, sizeof(keys), names, sizeof(names)), -1);
	assert_int_equal(tb_grub_keys(-1, 1, keys, sizeof(keys), names, sizeof(names)), -1);
}

static void test_text_tail(void **state)
{
	static const char raw[] = "one\r\n\033[1;31mtwo\033[0m\r\n\r\n\033]0;title\007three\ttab\r\n"
				  "\033[2J\033[5;1Hfour\x07\x08\r\nfive\r\n\r\n";
	char out[256];

	(void)state;
	assert_int_equal(tb_console_text_tail(raw, strlen(raw), 3, out, sizeof(out)), strlen("three\ttab\nfour\nfive"));
	assert_string_equal(out, "three\ttab\nfour\nfive");
	tb_console_text_tail(raw, strlen(raw), 20, out, sizeof(out));
	assert_string_equal(out, "one\ntwo\nthree\ttab\nfour\nfive");
	assert_int_equal(tb_console_text_tail("", 0, 20, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* a small buffer: cut, terminated */
	tb_console_text_tail(raw, strlen(raw), 20, out, 6);
	assert_string_equal(out, "one\nt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_sim),
		cmocka_unit_test(test_parse_vt100),
		cmocka_unit_test(test_parse_huge_numbers),
		cmocka_unit_test(test_parse_last_and_partial),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_text_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
