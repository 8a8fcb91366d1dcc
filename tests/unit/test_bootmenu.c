/*
 * test_bootmenu.c - when the prober reads a machine's GRUB menu
 * (tb_bootmenus_due, server/bootmenu.h) and what a reader sees, as a table
 * of steps: each step does one thing (put, failed, want) at a time and says
 * whether a read is due then.  Adding a case is adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "bootmenu.h"
#include "grubcfg.h"
#include "inventory.h"

enum op { NONE, PUT, FAIL, WANT };

struct step {
	enum op op;
	const char *os;   /* answering (and read from, for PUT/FAIL) */
	int64_t at;       /* now */
	int64_t up_since; /* since when os answers */
	int due;          /* expected tb_bootmenus_due after the op */
	int pending, has_menu, failed;
};

struct bcase {
	const char *name;
	struct step steps[8];
};

#define END                                  \
	{                                    \
		NONE, NULL, 0, 0, 0, 0, 0, 0 \
	}

static const struct bcase cases[] = {
	{"nothing read: due", {{NONE, "ubuntu", 100, 50, 1, 0, 0, 0}, END}},
	{"read: not due until it ages",
	 {{PUT, "ubuntu", 100, 50, 0, 0, 1, 0},
	  {NONE, "ubuntu", 100 + TB_BOOTMENU_MAX_AGE_S - 1, 50, 0, 0, 1, 0},
	  {NONE, "ubuntu", 100 + TB_BOOTMENU_MAX_AGE_S, 50, 1, 0, 1, 0},
	  END}},
	{"came up again since the read: due",
	 {{PUT, "ubuntu", 100, 50, 0, 0, 1, 0}, {NONE, "ubuntu", 130, 120, 1, 0, 1, 0}, END}},
	{"another Linux answers: due",
	 {{PUT, "ubuntu", 100, 50, 0, 0, 1, 0}, {NONE, "debian", 110, 50, 1, 0, 1, 0}, END}},
	{"asked for: due, and pending until read",
	 {{PUT, "ubuntu", 100, 50, 0, 0, 1, 0},
	  {WANT, "ubuntu", 110, 50, 1, 1, 1, 0},
	  {PUT, "ubuntu", 111, 50, 0, 0, 1, 0},
	  END}},
	{"a failed read waits TB_BOOTMENU_RETRY_S",
	 {{FAIL, "ubuntu", 100, 50, 0, 0, 0, 1},
	  {NONE, "ubuntu", 100 + TB_BOOTMENU_RETRY_S - 1, 50, 0, 0, 0, 1},
	  {NONE, "ubuntu", 100 + TB_BOOTMENU_RETRY_S, 50, 1, 0, 0, 1},
	  END}},
	{"... unless asked for", {{FAIL, "ubuntu", 100, 50, 0, 0, 0, 1}, {WANT, "ubuntu", 101, 50, 1, 1, 0, 1}, END}},
	{"... or the host came up again",
	 {{FAIL, "ubuntu", 100, 50, 0, 0, 0, 1}, {NONE, "ubuntu", 105, 103, 1, 0, 0, 1}, END}},
	{"a failure after a menu keeps the menu",
	 {{PUT, "ubuntu", 100, 50, 0, 0, 1, 0},
	  {FAIL, "ubuntu", 200, 50, 0, 0, 1, 1},
	  {NONE, "ubuntu", 200 + TB_BOOTMENU_RETRY_S, 50, 1, 0, 1, 1},
	  {PUT, "ubuntu", 300, 50, 0, 0, 1, 0},
	  END}},
};

static void test_due(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct tb_bootmenus *b = tb_bootmenus_new();

		assert_non_null(b);
		for (int k = 0; cases[c].steps[k].os != NULL; k++) {
			const struct step *s = &cases[c].steps[k];
			struct tb_error e = {TB_ERR_REMOTE, "", "left (ubuntu): cannot read /boot/grub/grub.cfg"};
			struct tb_bootmenu_view v;

			if (s->op == PUT)
				tb_bootmenus_put(b, "left", s->os, json_pack("[{s:s}]", "title", "Debian"), s->at);
			else if (s->op == FAIL)
				tb_bootmenus_failed(b, "left", s->os, &e, s->at);
			else if (s->op == WANT)
				tb_bootmenus_want(b, "left");
			tb_bootmenus_get(b, "left", &v);
			if (tb_bootmenus_due(b, "left", s->os, s->up_since, s->at) != s->due ||
			    v.pending != s->pending || (v.entries != NULL) != s->has_menu || v.failed != s->failed)
				fail_msg("%s, step %d: due %d pending %d menu %d failed %d", cases[c].name, k,
					 tb_bootmenus_due(b, "left", s->os, s->up_since, s->at), v.pending,
					 v.entries != NULL, v.failed);
			if (v.failed)
				assert_string_equal(v.last.message, e.message);
			json_decref(v.entries);
		}
		/* another machine is its own */
		assert_int_equal(tb_bootmenus_due(b, "right", "ubuntu", 0, 1), 1);
		tb_bootmenus_free(b);
	}
}

/* GRUB's saved default (grubenv saved_entry) -> the OS boots are planned
 * from: by the same string, by the same index path in the menu, else the
 * inventory's boot.default.  One line a case. */
static void test_saved_default(void **state)
{
	static const char cfg[] = "menuentry 'Ubuntu' --class ubuntu --id ubuntu {\n}\n"
				  "submenu 'Advanced options for Ubuntu' --id gnulinux-advanced {\n"
				  "  menuentry 'Ubuntu, with Linux 6.8' --id gnulinux-6.8 {\n  }\n}\n"
				  "menuentry 'FreeBSD' --id freebsd {\n}\n";
	static const struct {
		int put;           /* grubenv read at all */
		const char *saved; /* saved_entry ("" none) */
		const char *os;    /* planned from */
		int decided, mismatch;
	} cases[] = {
		{0, "", "ubuntu", 0, 0},         /* nothing read: the inventory's */
		{1, "", "ubuntu", 0, 0},         /* no saved_entry: the inventory's */
		{1, "freebsd", "freebsd", 1, 1}, /* the inventory's entry string */
		{1, "2", "freebsd", 1, 1},       /* the same index as "freebsd" */
		{1, "FreeBSD", "freebsd", 1, 1}, /* its title */
		{1, "0", "ubuntu", 1, 0},        /* ubuntu's entry: no mismatch */
		{1, "ubuntu", "ubuntu", 1, 0},   /* its id */
		{1, "1>0", "ubuntu", 0, 0},      /* no OS names it: the inventory's */
		{1, "memtest", "ubuntu", 0, 0},  /* not in the menu */
	};
	struct tb_boot_entry entries[] = {{"ubuntu", "0"}, {"freebsd", "freebsd"}};
	struct tb_machine m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.name = "left";
	m.boot.loader = "grub";
	m.boot.default_os = "ubuntu";
	m.boot.entries = entries;
	m.boot.nentries = 2;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_bootmenus *b = tb_bootmenus_new();
		struct tb_boot_default bd;

		tb_bootmenus_put(b, "left", "ubuntu", tb_grubcfg_entries(cfg), 100);
		if (cases[i].put)
			tb_bootmenus_put_saved(b, "left", cases[i].saved, 100);
		assert_int_equal(tb_bootmenus_default(b, &m, &bd), cases[i].decided);
		if (strcmp(bd.os, cases[i].os) != 0 || bd.mismatch != cases[i].mismatch || bd.read != cases[i].put)
			fail_msg("case %zu (saved \"%s\"): os %s mismatch %d read %d", i, cases[i].saved, bd.os,
				 bd.mismatch, bd.read);
		tb_bootmenus_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_saved_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
