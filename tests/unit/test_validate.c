/*
 * test_validate.c - tb_text_refused, the one check every free-text field
 * (a matrix name, a GRUB title in the inventory) goes through: a table of
 * UTF-8 strings -> the code point of the first character refused, or -1.
 * Adding a case is adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "validate.h"

struct text_case {
	const char *s;
	size_t len; /* 0: strlen(s) */
	long refused;
};

static const struct text_case cases[] = {
	/* accepted: plain, accented, CJK, emoji, the neighbours of the refused ranges */
	{"baseline 10G", 0, -1},
	{"d\xc3\xa9j\xc3\xa0 vu", 0, -1},    /* déjà vu */
	{"\xe6\xb8\xac\xe5\xae\x9a", 0, -1}, /* 測定 */
	{"rate \xf0\x9f\x9a\x80", 0, -1},    /* U+1F680 */
	{"a\xc2\xa0"
	 "b",
	 0, -1}, /* U+00A0 no-break space */
	{"a\xe2\x80\x8a"
	 "b",
	 0, -1}, /* U+200A hair space */
	{"a\xe2\x80\x90"
	 "b",
	 0, -1}, /* U+2010 hyphen */
	{"a\xe2\x80\xa9"
	 "b",
	 0, -1}, /* U+2029 (not in the list) */
	{"a\xe2\x80\xaf"
	 "b",
	 0, -1}, /* U+202F */
	{"a\xe2\x81\xa5"
	 "b",
	 0, -1}, /* U+2065 */
	{"a\xe2\x81\xaa"
	 "b",
	 0, -1}, /* U+206A */
	{"a\xef\xbb\xbe"
	 "b",
	 0, -1},                  /* U+FEFE */
	{"a\xef\xbc\xa1", 0, -1}, /* U+FF21 */
	{"", 0, -1},
	/* C0, DEL, NUL inside, C1 */
	{"a\x01"
	 "b",
	 0, 0x01},
	{"a\nb", 0, 0x0a},
	{"a\x7f"
	 "b",
	 0, 0x7f},
	{"a\0b", 3, 0x00},
	{"a\xc2\x80"
	 "b",
	 0, 0x80},
	{"a\xc2\x85"
	 "b",
	 0, 0x85},
	{"a\xc2\x9f"
	 "b",
	 0, 0x9f},
	/* the format characters: U+200B..U+200F */
	{"a\xe2\x80\x8b"
	 "b",
	 0, 0x200b},
	{"a\xe2\x80\x8c"
	 "b",
	 0, 0x200c},
	{"a\xe2\x80\x8d"
	 "b",
	 0, 0x200d},
	{"a\xe2\x80\x8e"
	 "b",
	 0, 0x200e},
	{"a\xe2\x80\x8f"
	 "b",
	 0, 0x200f},
	/* U+202A..U+202E */
	{"a\xe2\x80\xaa"
	 "b",
	 0, 0x202a},
	{"a\xe2\x80\xab"
	 "b",
	 0, 0x202b},
	{"a\xe2\x80\xac"
	 "b",
	 0, 0x202c},
	{"a\xe2\x80\xad"
	 "b",
	 0, 0x202d},
	{"evil\xe2\x80\xae"
	 "gnp.exe",
	 0, 0x202e},
	/* U+2066..U+2069 */
	{"a\xe2\x81\xa6"
	 "b",
	 0, 0x2066},
	{"a\xe2\x81\xa7"
	 "b",
	 0, 0x2067},
	{"a\xe2\x81\xa8"
	 "b",
	 0, 0x2068},
	{"a\xe2\x81\xa9"
	 "b",
	 0, 0x2069},
	/* U+FEFF, first or inside; the first refused one is named */
	{"\xef\xbb\xbf"
	 "name",
	 0, 0xfeff},
	{"na\xef\xbb\xbfme", 0, 0xfeff},
	{"\xe2\x80\x8b\x01", 0, 0x200b},
	{"\x01\xe2\x80\x8b", 0, 0x01},
	/* a sequence cut by len is not read past len */
	{"a\xe2\x80\x8b", 2, -1},
};

static void test_text_refused(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len != 0 ? cases[i].len : strlen(cases[i].s);
		long got = tb_text_refused(cases[i].s, len);

		if (got != cases[i].refused) {
			printf("case %zu: got %ld, want %ld\n", i, got, cases[i].refused);
			bad++;
		}
	}
	printf("%zu texts\n", sizeof(cases) / sizeof(cases[0]));
	assert_int_equal(bad, 0);
}

/* The inventory's GRUB titles go through the same check. */
static void test_entry(void **state)
{
	(void)state;
	assert_true(tb_valid_entry("Debian GNU/Linux, with Linux 6.1"));
	assert_true(tb_valid_entry("d\xc3\xa9j\xc3\xa0"));
	assert_false(tb_valid_entry(""));
	assert_false(tb_valid_entry("a\tb"));
	assert_false(tb_valid_entry("FreeBSD\xe2\x80\xae"));
	assert_false(tb_valid_entry("\xef\xbb\xbf"
				    "FreeBSD"));
	assert_false(tb_valid_entry("a\xe2\x81\xa6"
				    "b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_refused),
		cmocka_unit_test(test_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
