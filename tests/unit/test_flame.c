/*
 * test_flame.c - flame graphs (server/flame_fold.c, server/flame_svg.c):
 * `perf script` output captured on this machine during an iperf3 run and
 * dtrace's aggregation layout (tests/data/flame/, see its README) folded
 * into "a;b;c N" lines (the expected counts were taken from the capture by
 * a separate Python reading of the same rules), pieces split anywhere, and
 * the SVG: well-formed XML (parsed by libxml2's xmllint where it is
 * installed, else checked for balanced tags), rectangle widths in
 * proportion to the counts, names escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "datafile.h"
#include "flame.h"

static char *data(const char *name, size_t *len)
{
	char dir[1024];
	char *s;

	tb_test_data_dir("flame", dir, sizeof(dir));
	s = tb_test_read_file(dir, name, len);
	assert_non_null(s);
	return s;
}

/* The count of line stack in folded, 0 when absent. */
static long count_of(const char *folded, const char *stack)
{
	size_t n = strlen(stack);

	for (const char *p = folded; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');

		if (strncmp(p, stack, n) == 0 && p[n] == ' ')
			return strtol(p + n + 1, NULL, 10);
		p = nl != NULL ? nl + 1 : NULL;
	}
	return 0;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static void perf_capture(void **state)
{
	size_t len;
	char *text = data("perf_script_iperf3_6.1.txt", &len);
	long samples = 0;
	char *f = tb_flame_fold(TB_FLAME_PERF, text, len, &samples);

	(void)state;
	assert_non_null(f);
	assert_int_equal(samples, 120);
	assert_int_equal(lines(f), 63); /* distinct stacks */
	/* iperf3's send path, root (its command) first, offsets gone; the
	 * user frame perf did not name is "[unknown]" */
	assert_int_equal(count_of(f, "iperf3;[unknown];__GI___libc_write;entry_SYSCALL_64_after_hwframe;"
				     "do_syscall_64;ksys_write;vfs_write;sock_write_iter;tcp_sendmsg;"
				     "tcp_sendmsg_locked;_copy_from_iter"),
			 20);
	assert_int_equal(count_of(f, "swapper;common_startup_64;start_secondary;cpu_startup_entry;do_idle;"
				     "default_idle_call;default_idle;pv_native_safe_halt"),
			 15);
	assert_null(strstr(f, "+0x"));
	assert_null(strstr(f, "kallsyms"));
	/* sorted */
	for (const char *p = f, *q; (q = strchr(p, '\n')) != NULL && q[1] != '\0'; p = q + 1)
		assert_true(strncmp(p, q + 1, (size_t)(q - p)) <= 0 || strcmp(p, q + 1) < 0);
	free(f);
	free(text);
}

/* The same capture fed in odd pieces (lines split anywhere) folds the same. */
static void perf_pieces(void **state)
{
	size_t len;
	char *text = data("perf_script_iperf3_6.1.txt", &len);
	char *whole = tb_flame_fold(TB_FLAME_PERF, text, len, NULL), *f;
	struct tb_flame_folder *fo = tb_flame_folder_new(TB_FLAME_PERF);
	long samples = 0;

	(void)state;
	assert_non_null(fo);
	for (size_t at = 0, step = 1; at < len; at += step, step = step * 7 % 97 + 1)
		assert_int_equal(tb_flame_feed(fo, text + at, at + step > len ? len - at : step), 0);
	f = tb_flame_finish(fo, &samples);
	assert_non_null(f);
	assert_int_equal(samples, 120);
	assert_string_equal(f, whole);
	tb_flame_folder_free(fo);
	free(f);
	free(whole);
	free(text);
}

/* Hand-made samples: a comm with spaces, a pid/tid, ';' in a name, an
 * unnamed frame of a known dso, no blank line at the end, CRLF. */
static void perf_edges(void **state)
{
	const char *t = "# a comment line\n"
			"kworker/u4:2 ev  1234/1234 [001] 1.0: 1 cpu-clock:\n"
			"\tffff0001 a;b+0x10 ([kernel.kallsyms])\n"
			"\tffff0002 root+0x1 ([kernel.kallsyms])\n"
			"\n"
			"iperf3 77 [000] 2.0: 1 cpu-clock:\r\n"
			"\t7f00 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\r\n"
			"\t7f01 main+0x2 (/usr/bin/iperf3)\r\n";
	long samples = 0;
	char *f = tb_flame_fold(TB_FLAME_PERF, t, strlen(t), &samples);

	(void)state;
	assert_non_null(f);
	assert_int_equal(samples, 2);
	assert_string_equal(f, "iperf3;main;[libc.so.6] 1\n"
			       "kworker/u4:2 ev;root;a:b 1\n");
	free(f);
}

static void dtrace_layout(void **state)
{
	size_t len;
	char *text = data("dtrace_profile_freebsd.txt", &len);
	long samples = 0;
	char *f = tb_flame_fold(TB_FLAME_DTRACE, text, len, &samples);

	(void)state;
	assert_non_null(f);
	assert_int_equal(samples, 1502 + 37 + 12 + 3);
	assert_int_equal(lines(f), 4);
	assert_int_equal(count_of(f, "kernel`0xffffffff8104d58b;kernel`amd64_syscall;kernel`sys_write;"
				     "kernel`dofilewrite;kernel`soo_write;kernel`sosend;kernel`sosend_generic;"
				     "kernel`tcp_usr_send;kernel`tcp_output"),
			 37);
	assert_int_equal(count_of(f, "kernel`0xffffffff8104cc6e;kernel`fork_exit;kernel`sched_idletd"), 1502);
	assert_int_equal(count_of(f, "kernel`0xffffffff8104d58b;kernel`amd64_syscall;kernel`sys_write;"
				     "kernel`dofilewrite;kernel`soo_write;kernel`sosend;kernel`sosend_generic;"
				     "kernel`tcp_usr_send;0xffffffff80e2c7d0"),
			 3);
	free(f);
	free(text);
}

/* dtrace's header lines (a tick probe's "CPU ID FUNCTION:NAME") and a
 * stack printed twice (two aggregations) are read as such. */
static void dtrace_headers(void **state)
{
	const char *t = "CPU     ID                    FUNCTION:NAME\n"
			"  0  64091                        :tick-60s \n\n\n"
			"              kernel`b+0x1\n"
			"              kernel`a+0x2\n"
			"                5\n\n"
			"              kernel`b+0x9\n"
			"              kernel`a+0x2\n"
			"                2\n";
	long samples = 0;
	char *f = tb_flame_fold(TB_FLAME_DTRACE, t, strlen(t), &samples);

	(void)state;
	assert_non_null(f);
	assert_int_equal(samples, 7);
	assert_string_equal(f, "kernel`a;kernel`b 7\n");
	free(f);
}

/* ---- the SVG ---- */

/* The width attribute of the <rect> whose <title> begins with name. */
static double width_of(const char *svg, const char *name)
{
	char key[256];
	const char *p, *w;

	snprintf(key, sizeof(key), "<title>%s (", name);
	p = strstr(svg, key);
	assert_non_null(p);
	w = strstr(p, "width=\"");
	assert_non_null(w);
	return strtod(w + 7, NULL);
}

static void svg_widths(void **state)
{
	const char *folded = "main;a;x 30\nmain;b 10\nother 60\n";
	char *svg;
	size_t len;
	double full = TB_FLAME_WIDTH - 2 * TB_FLAME_PAD;

	(void)state;
	assert_int_equal(tb_flame_svg(folded, "run 7: left (sender)", &svg, &len), 0);
	assert_int_equal(strlen(svg), len);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "run 7: left (sender)"));
	assert_null(strstr(svg, "<script"));
	assert_true(width_of(svg, "all") > full - 0.01 && width_of(svg, "all") < full + 0.01);
	assert_true(width_of(svg, "main") > 0.4 * full - 0.01 && width_of(svg, "main") < 0.4 * full + 0.01);
	assert_true(width_of(svg, "other") > 0.6 * full - 0.01 && width_of(svg, "other") < 0.6 * full + 0.01);
	assert_true(width_of(svg, "x") > 0.3 * full - 0.01 && width_of(svg, "x") < 0.3 * full + 0.01);
	assert_true(width_of(svg, "b") > 0.1 * full - 0.01 && width_of(svg, "b") < 0.1 * full + 0.01);
	assert_non_null(strstr(svg, "<title>x (30 samples, 30.00%)</title>"));
	free(svg);
}

/* Every '<' opens a tag that closes, and element tags balance (a small
 * XML check for where xmllint is missing). */
static void balanced(const char *svg)
{
	const char *stack[64];
	int depth = 0;

	for (const char *p = strchr(svg, '<'); p != NULL; p = strchr(p + 1, '<')) {
		const char *end = strchr(p, '>');
		size_t n = strcspn(p + 1, " />");

		assert_non_null(end);
		if (p[1] == '?' || end[-1] == '/')
			continue;
		if (p[1] == '/') {
			assert_true(depth > 0);
			depth--;
			assert_memory_equal(stack[depth] + 1, p + 2, strcspn(p + 2, ">"));
		} else {
			assert_true(depth < 64);
			stack[depth++] = p;
		}
		(void)n;
	}
	assert_int_equal(depth, 0);
}

static void svg_escapes(void **state)
{
	const char *folded = "a<b>&\"c'\x01\xff;std::vector<int>::push_back 5\n";
	char *svg, path[] = "/tmp/test_flame_XXXXXX";
	size_t len;
	int fd, rc;

	(void)state;
	assert_int_equal(tb_flame_svg(folded, "<script>alert(1)</script> & more", &svg, &len), 0);
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "<b>"));
	assert_null(strstr(svg, "<int>"));
	assert_null(strchr(svg, '\x01'));
	assert_null(strchr(svg, '\xff'));
	assert_non_null(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"));
	assert_non_null(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&apos;?? (5 samples"));
	assert_non_null(strstr(svg, "std::vector&lt;int&gt;::push_back"));
	balanced(svg);
	/* libxml2's parser, when there */
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		char cmd[128];

		fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, svg, len), (ssize_t)len);
		close(fd);
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
		rc = system(cmd);
		unlink(path);
		assert_int_equal(rc, 0);
	}
	free(svg);
}

/* A whole capture draws, well formed, with the send path in it. */
static void svg_capture(void **state)
{
	size_t len;
	char *text = data("perf_script_iperf3_6.1.txt", &len), *f, *svg;

	(void)state;
	f = tb_flame_fold(TB_FLAME_PERF, text, len, NULL);
	assert_non_null(f);
	assert_int_equal(tb_flame_svg(f, "capture", &svg, &len), 0);
	balanced(svg);
	assert_non_null(strstr(svg, "<title>tcp_sendmsg ("));
	assert_non_null(strstr(svg, "120 samples"));
	free(svg);
	assert_int_equal(tb_flame_svg("", "empty", &svg, &len), 0);
	balanced(svg);
	assert_non_null(strstr(svg, "0 samples"));
	free(svg);
	free(f);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_capture),  cmocka_unit_test(perf_pieces),    cmocka_unit_test(perf_edges),
		cmocka_unit_test(dtrace_layout), cmocka_unit_test(dtrace_headers), cmocka_unit_test(svg_widths),
		cmocka_unit_test(svg_escapes),   cmocka_unit_test(svg_capture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
