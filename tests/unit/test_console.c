/*
 * test_console.c - the pure parts of consoles: the scrollback ring (what is
 * kept, offsets, a reader that fell behind), base64 both ways, the per-boot
 * log files (a new file per boot, the size cap, pruning by age and count,
 * ids) and the GRUB banner that starts a boot, also split over two reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "console.h"

static void ring_keeps_the_last_bytes(void **state)
{
	struct tb_ring r;
	char out[32];
	uint64_t pos = 0;

	(void)state;
	assert_int_equal(tb_ring_init(&r, 8), 0);
	tb_ring_append(&r, "abc", 3);
	assert_int_equal(tb_ring_read(&r, &pos, out, sizeof(out)), 3);
	assert_memory_equal(out, "abc", 3);
	assert_int_equal(pos, 3);
	assert_int_equal(tb_ring_read(&r, &pos, out, sizeof(out)), 0);
	/* wraps: 3 + 7 = 10 bytes, the ring keeps the last 8 */
	tb_ring_append(&r, "defghij", 7);
	assert_int_equal(tb_ring_start(&r), 2);
	assert_int_equal(tb_ring_read(&r, &pos, out, sizeof(out)), 7);
	assert_memory_equal(out, "defghij", 7);
	/* a reader from 0 fell behind: it gets what is kept, from offset 2 */
	pos = 0;
	assert_int_equal(tb_ring_read(&r, &pos, out, 3), 3);
	assert_memory_equal(out, "cde", 3);
	assert_int_equal(pos, 5);
	assert_int_equal(tb_ring_read(&r, &pos, out, sizeof(out)), 5);
	assert_memory_equal(out, "fghij", 5);
	/* one append larger than the ring */
	tb_ring_append(&r, "0123456789ABCDEF", 16);
	assert_int_equal(r.end, 26);
	pos = 0;
	assert_int_equal(tb_ring_read(&r, &pos, out, sizeof(out)), 8);
	assert_memory_equal(out, "89ABCDEF", 8);
	tb_ring_free(&r);
}

static void base64_both_ways(void **state)
{
	static const char *const cases[][2] = {
		{"", ""},        {"f", "Zg=="},    {"fo", "Zm8="},
		{"foo", "Zm9v"}, {"\x03", "Aw=="}, {"login: \r\n", "bG9naW46IA0K"},
	};
	char enc[64];
	unsigned char dec[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i][0]);

		assert_int_equal(tb_b64_encode(cases[i][0], n, enc), strlen(cases[i][1]));
		assert_string_equal(enc, cases[i][1]);
		assert_int_equal(tb_b64_decode(cases[i][1], dec), (long)n);
		assert_memory_equal(dec, cases[i][0], n);
	}
	assert_int_equal(tb_b64_decode("Zm9", dec), 2); /* padding optional */
	assert_int_equal(tb_b64_decode("Z!==", dec), -1);
	assert_int_equal(tb_b64_decode("Z", dec), -1);
	/* nettle's decoder skips blanks and takes '=' anywhere: not here */
	assert_int_equal(tb_b64_decode("Zm9v YmFy", dec), -1);
	assert_int_equal(tb_b64_decode("Zm=9", dec), -1);
	assert_int_equal(tb_b64_decode("Zm9v\n", dec), -1);
	/* every byte value, both ways */
	{
		unsigned char all[256], back[256 + 3];
		char text[4 * 86 + 1];

		for (size_t i = 0; i < sizeof(all); i++)
			all[i] = (unsigned char)i;
		assert_int_equal(tb_b64_encode(all, sizeof(all), text), 4 * 86);
		assert_int_equal(tb_b64_decode(text, back), 256);
		assert_memory_equal(back, all, sizeof(all));
	}
}

static int count_logs(const char *dir, char names[][64], size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && (size_t)n < max)
			snprintf(names[n++], 64, "%s", e->d_name);
	if (d != NULL)
		closedir(d);
	return n;
}

static void log_a_file_per_boot_capped_and_pruned(void **state)
{
	char tmpl[] = "/tmp/tb-conlog-XXXXXX", dir[128], names[16][64], path[256];
	struct tb_conlog l;
	struct tb_error e = {0};
	struct stat st;
	int64_t day = 86400000LL, t0 = 1764840000000LL;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s/console/left", tmpl);
	assert_int_equal(tb_conlog_init(&l, dir, &e), 0);
	/* nothing written: no file */
	assert_int_equal(count_logs(dir, names, 16), 0);
	assert_int_equal(tb_conlog_write(&l, "boot one\r\n", 10, t0), 0);
	assert_int_equal(tb_conlog_write(&l, "more\r\n", 6, t0 + 5), 0);
	assert_int_equal(count_logs(dir, names, 16), 1);
	assert_string_equal(names[0], "1764840000000-start.log");
	/* a boot: the next bytes go to a new file named for why */
	tb_conlog_rotate(&l, "grub");
	assert_int_equal(count_logs(dir, names, 16), 1);
	l.max_bytes = 8;
	assert_int_equal(tb_conlog_write(&l, "GNU GRUB  version", 17, t0 + 1000), 0);
	assert_int_equal(tb_conlog_write(&l, "dropped", 7, t0 + 1001), 0);
	assert_int_equal(count_logs(dir, names, 16), 2);
	snprintf(path, sizeof(path), "%s/1764840001000-grub.log", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 8); /* capped */
	snprintf(path, sizeof(path), "%s/1764840000000-start.log", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 16);
	/* pruning: keep 3 files, 14 days; a new file prunes before it opens */
	l.keep_files = 3;
	tb_conlog_rotate(&l, "power");
	assert_int_equal(tb_conlog_write(&l, "x", 1, t0 + 2000), 0);
	tb_conlog_rotate(&l, "boot");
	assert_int_equal(tb_conlog_write(&l, "y", 1, t0 + 3000), 0);
	assert_int_equal(count_logs(dir, names, 16), 3); /* the oldest went */
	snprintf(path, sizeof(path), "%s/1764840000000-start.log", dir);
	assert_int_not_equal(stat(path, &st), 0);
	/* by age: 15 days later everything older than 14 days goes */
	assert_int_equal(tb_conlog_prune(dir, 14, 50, t0 + 15 * day), 3);
	assert_int_equal(count_logs(dir, names, 16), 0);
	tb_conlog_close(&l);
	/* ids */
	assert_true(tb_conlog_valid_id("1764840000000-grub"));
	assert_false(tb_conlog_valid_id("1764840000000-"));
	assert_false(tb_conlog_valid_id("-grub"));
	assert_false(tb_conlog_valid_id("1764840000000-../x"));
	assert_false(tb_conlog_valid_id("1764840000000-grub.log"));
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/console", tmpl);
	rmdir(path);
	rmdir(tmpl);
}

static void grub_banner_found_also_split(void **state)
{
	char tail[16];
	size_t tlen = 0;
	const char *a = "\r\n                 GNU GRUB  version 2.12\r\n";

	(void)state;
	assert_int_equal(tb_console_grub_banner(tail, &tlen, (const unsigned char *)"login: ", 7), -1);
	assert_int_equal(tb_console_grub_banner(tail, &tlen, (const unsigned char *)a, strlen(a)), 19);
	/* split: "GNU G" ends one read, "RUB" begins the next: found at 0 */
	assert_int_equal(tb_console_grub_banner(tail, &tlen, (const unsigned char *)"xx GNU G", 8), -1);
	assert_int_equal(tb_console_grub_banner(tail, &tlen, (const unsigned char *)"RUB  version", 12), 0);
	/* one byte at a time */
	tlen = 0;
	long at = -1;
	for (const char *p = "..GNU GRUB.."; *p && at < 0; p++)
		at = tb_console_grub_banner(tail, &tlen, (const unsigned char *)p, 1);
	assert_int_equal(at, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_keeps_the_last_bytes),
		cmocka_unit_test(base64_both_ways),
		cmocka_unit_test(log_a_file_per_boot_capped_and_pruned),
		cmocka_unit_test(grub_banner_found_also_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
