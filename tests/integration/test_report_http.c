/*
 * test_report_http.c - the report, the A/B compare's CSV and the hosts diff's CSV
 * against the real testbedd on port 0 and the real tbctl: two matrices on
 * the loopback inventory (nothing listens at the personas' addresses, so
 * every run fails at once as ssh_error: the reports have cells without
 * results, which is what a report must also survive).
 *
 * Covered: GET .../report as HTML (its own CSP with sandbox and no script,
 * Content-Disposition attachment with the file name, no <script in the
 * body, every table) and Markdown, with &baseline= (the A/B part); bad
 * input as a table (format, baseline, id -> status and field); compare and
 * hosts/diff with format=csv (text/csv, the header line); metric=lost_percent;
 * tbctl matrix report > file, tbctl matrix compare --spread --junit FILE.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "datafile.h"

static struct tb_test_daemon D;
static long long mx_a, mx_b; /* the baseline and the matrix */

static const char spec[] = "{\"name\": \"report\", \"pairs\": [{\"client\": \"right\", \"server\": \"left\"}],"
			   " \"protocols\": [\"tcp\", \"udp\"], \"duration_s\": 1, \"repeats\": 2}";

/* Start the spec and wait (at most 60 s) until the matrix has ended. */
static long long run_matrix(void)
{
	struct tb_test_resp r;
	long long id;
	char path[96];

	tb_test_api(&D, NULL, "POST", "/api/v1/matrices", spec, &r);
	if (r.status != 201 && r.status != 200)
		fail_msg("POST matrix: %ld %s", r.status, r.body);
	id = json_integer_value(json_object_get(json_object_get(r.json, "matrix"), "id"));
	tb_test_resp_free(&r);
	assert_true(id > 0);
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld", id);
	for (int i = 0; i < 600; i++) {
		struct timespec ts = {0, 100000000L};
		const char *st;
		int ended;

		tb_test_api(&D, NULL, "GET", path, NULL, &r);
		st = json_string_value(json_object_get(json_object_get(r.json, "matrix"), "state"));
		ended = st != NULL && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
		tb_test_resp_free(&r);
		if (ended)
			return id;
		nanosleep(&ts, NULL);
	}
	fail_msg("matrix %lld did not end", id);
	return 0;
}

static void test_report_html(void **state)
{
	struct tb_test_resp r;
	char path[128], want[128], buf[512];

	(void)state;
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/report", mx_b);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_string_equal(buf, "text/html; charset=utf-8");
	assert_non_null(tb_test_header(&r, "Content-Security-Policy", buf, sizeof(buf)));
	assert_true(strncmp(buf, "sandbox; default-src 'none';", 28) == 0);
	assert_null(strstr(buf, "script"));
	assert_non_null(strstr(buf, "frame-ancestors 'none'"));
	/* exactly one CSP: the API's own was replaced, not added to */
	assert_null(strstr(strstr(r.headers, "Content-Security-Policy") + 1, "Content-Security-Policy"));
	assert_non_null(tb_test_header(&r, "Content-Disposition", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "attachment; filename=\"matrix-%lld-report.html\"", mx_b);
	assert_string_equal(buf, want);
	assert_non_null(tb_test_header(&r, "X-Content-Type-Options", buf, sizeof(buf)));
	assert_null(strstr(r.body, "<script"));
	assert_non_null(strstr(r.body, "id=\"summary\""));
	assert_non_null(strstr(r.body, "id=\"cells\""));
	assert_non_null(strstr(r.body, "id=\"hosts\""));
	assert_non_null(strstr(r.body, "id=\"commands\""));
	assert_non_null(strstr(r.body, "&quot;protocols&quot;"));
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/report?format=html&baseline=%lld", mx_b, mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_non_null(tb_test_header(&r, "Content-Disposition", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "attachment; filename=\"matrix-%lld-vs-%lld-report.html\"", mx_b, mx_a);
	assert_string_equal(buf, want);
	assert_non_null(strstr(r.body, "id=\"ab\""));
	assert_non_null(strstr(r.body, "id=\"hosts-diff\""));
	assert_null(strstr(r.body, "<script"));
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/report?baseline=%lld&metric=lost_percent", mx_b, mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_non_null(strstr(r.body, "this matrix&#39;s lost_percent (higher is worse)"));
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/report?format=md&baseline=%lld", mx_b, mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_string_equal(buf, "text/markdown; charset=utf-8");
	assert_non_null(tb_test_header(&r, "Content-Disposition", buf, sizeof(buf)));
	assert_non_null(strstr(buf, ".md\""));
	assert_true(strncmp(r.body, "# report", 8) == 0);
	assert_non_null(strstr(r.body, "\n| cell | client → server |"));
	assert_non_null(strstr(r.body, "## A/B: against baseline"));
	tb_test_resp_free(&r);
}

static void test_bad_input(void **state)
{
	static const struct {
		const char *fmt; /* %lld: the matrix */
		long status;
		const char *field;
	} cases[] = {
		{"/api/v1/matrices/%lld/report?format=pdf", 400, "format"},
		{"/api/v1/matrices/%lld/report?format=", 400, "format"},
		{"/api/v1/matrices/%lld/report?baseline=0", 400, "baseline"},
		{"/api/v1/matrices/%lld/report?baseline=1&metric=cpu", 400, "metric"},
		{"/api/v1/matrices/%lld/report?baseline=x", 400, "baseline"},
		{"/api/v1/matrices/%lld/report?baseline=999999", 404, "baseline"},
		{"/api/v1/matrices/999999/report?%lld", 404, "id"},
		{"/api/v1/matrices/x/report?%lld", 400, "id"},
		{"/api/v1/matrices/%lld/compare?baseline=1&format=xml", 400, "format"},
		{"/api/v1/matrices/%lld/compare?baseline=1&metric=cpu", 400, "metric"},
		{"/api/v1/matrices/%lld/hosts/diff?other=1&format=tsv", 400, "format"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_test_resp r;
		char path[160];
		const char *field;

		snprintf(path, sizeof(path), cases[i].fmt, mx_b);
		tb_test_api(&D, NULL, "GET", path, NULL, &r);
		field = json_string_value(json_object_get(json_object_get(r.json, "error"), "field"));
		if (r.status != cases[i].status || field == NULL || strcmp(field, cases[i].field) != 0)
			fail_msg("%s: %ld field %s, want %ld %s", path, r.status, field ? field : "-", cases[i].status,
				 cases[i].field);
		tb_test_resp_free(&r);
	}
}

static void test_csv(void **state)
{
	struct tb_test_resp r;
	char path[160], buf[256];

	(void)state;
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/compare?baseline=%lld&format=csv&metric=lost_percent", mx_b,
		 mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_true(strncmp(buf, "text/csv", 8) == 0);
	assert_true(strncmp(r.body, "cell,baseline_cell,client,client_os,server,server_os,link,protocol,", 67) == 0);
	/* two cells, no result in the baseline: no_baseline each */
	assert_non_null(strstr(r.body, ",no_baseline\r\n"));
	assert_non_null(strstr(strstr(r.body, ",no_baseline\r\n") + 1, ",no_baseline\r\n"));
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/compare?baseline=%lld&metric=jitter_ms", mx_b, mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_true(json_is_true(json_object_get(json_object_get(r.json, "compare"), "higher_is_worse")));
	assert_true(json_is_array(json_object_get(json_object_get(r.json, "compare"), "beyond_spread")));
	tb_test_resp_free(&r);

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/hosts/diff?other=%lld&format=csv", mx_b, mx_a);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_true(strncmp(r.body, "host,os,in,path,matrix,other\r\n", 30) == 0);
	tb_test_resp_free(&r);
}

enum { TEXT_MAX = 1 << 20 };

static void test_tbctl(void **state)
{
	static char text[TEXT_MAX];
	char junit[400], id[32], base[32], *xml;

	(void)state;
	snprintf(junit, sizeof(junit), "%s/junit.xml", D.dir);
	snprintf(id, sizeof(id), "%lld", mx_b);
	snprintf(base, sizeof(base), "%lld", mx_a);
	assert_int_equal(
		tb_test_tbctl(&D, NULL,
			      (const char *const[]){"matrix", "report", id, "--baseline", base, "--format", "md", NULL},
			      text, TEXT_MAX),
		0);
	assert_true(strncmp(text, "# report", 8) == 0);
	assert_non_null(strstr(text, "## A/B: against baseline"));
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"matrix", "report", id, NULL}, text, TEXT_MAX),
			 0);
	assert_true(strncmp(text, "<!DOCTYPE html>", 15) == 0);
	assert_null(strstr(text, "<script"));
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"matrix", "report", id, "--format", "pdf", NULL},
				       text, TEXT_MAX),
			 1);
	/* --metric is checked before it goes into the URL (no second parameter through it) */
	assert_int_equal(tb_test_tbctl(&D, NULL,
				       (const char *const[]){"matrix", "report", id, "--baseline", base, "--metric",
							     "jitter_ms&format=md", NULL},
				       text, TEXT_MAX),
			 1);

	/* nothing could be compared (no result on either side): the gate fails,
	 * exit 7, and the JUnit file says so cell by cell (skipped) */
	assert_int_equal(tb_test_tbctl(&D, NULL,
				       (const char *const[]){"matrix", "compare", id, "--baseline", base, "--spread",
							     "--metric", "lost_percent", "--junit", junit, NULL},
				       text, TEXT_MAX),
			 7);
	assert_non_null(strstr(text, "BASE IQR"));
	assert_non_null(strstr(text, "OVERLAP"));
	assert_non_null(strstr(text, "(lost_percent, a rise of more than 5% fails)"));
	xml = tb_test_read_file(D.dir, "junit.xml", NULL);
	assert_non_null(xml);
	assert_true(strncmp(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 50) == 0);
	assert_non_null(strstr(xml, "tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\""));
	assert_non_null(strstr(xml, "<testcase classname=\"testbedd.matrix"));
	assert_non_null(strstr(xml, "<skipped message=\"no_baseline: lost_percent"));
	assert_non_null(strstr(xml, "name=\"cell 0: right -&gt; left tcp forward"));
	free(xml);
	assert_int_equal(tb_test_tbctl(&D, NULL,
				       (const char *const[]){"matrix", "compare", id, "--baseline", base, "--metric",
							     "cpu", NULL},
				       text, TEXT_MAX),
			 1);
}

static int setup(void **state)
{
	(void)state;
	if (tb_test_daemon_start(&D, NULL, NULL) != 0)
		return -1;
	mx_a = run_matrix();
	mx_b = run_matrix();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_html),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_tbctl),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
