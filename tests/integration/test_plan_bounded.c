/*
 * test_plan_bounded.c - POST /api/v1/matrices/plan of the largest plan
 * (TB_MATRIX_MAX_RUNS runs) against the real testbedd: the reply is the
 * summary and one page (200 runs by default, ?limit= at most 1000, ?offset=
 * for the next), bounded in size; the daemon's peak resident memory
 * (VmHWM) stays under 64 MiB (it was ~600 MB when the reply held every run;
 * not checked under AddressSanitizer, whose shadow memory counts there);
 * bad offset/limit are 400 naming the field; and `tbctl matrix plan` follows
 * the pages (every run) or stops at --limit N, saying "the first N of M".
 * The default loopback inventory: right -> left is a pair (left has a link).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static struct tb_test_daemon dmn;

/* 2 protocols x 5 durations x 10 parallel x 1000 repeats = 100,000 runs */
static const char spec_cap[] =
	"{\"name\":\"cap\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"protocols\":[\"tcp\",\"udp\"],"
	"\"repeats\":1000,\"duration_s\":[1,2,3,4,5],\"iperf\":{\"parallel\":[1,2,3,4,5,6,7,8,9,10]}}";
/* 2,500 runs */
static const char spec_mid[] =
	"{\"name\":\"mid\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"repeats\":500,"
	"\"duration_s\":[1,2,3,4,5]}";

static int setup(void **state)
{
	(void)state;
	return tb_test_daemon_start(&dmn, NULL, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&dmn) == 0 ? 0 : -1;
}

static long post_plan(const char *query, const char *spec, struct tb_test_resp *r)
{
	char url[256], auth[200];
	const char *headers[] = {auth, "Content-Type: application/json", NULL};

	snprintf(url, sizeof(url), "%s/api/v1/matrices/plan%s", dmn.url, query);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", dmn.admin_token);
	assert_int_equal(tb_test_http("POST", url, headers, spec, strlen(spec), r), 0);
	return r->status;
}

static long vm_kib(const char *field)
{
	char path[64], line[256];
	long v = -1;
	size_t n = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)dmn.pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = atol(line + n + 1);
	fclose(f);
	return v;
}

static void test_capped_plan_is_bounded(void **state)
{
	struct tb_test_resp r = {0};
	json_t *plan, *page;
	long hwm;

	(void)state;
	assert_int_equal(post_plan("", spec_cap, &r), 200);
	plan = json_object_get(r.json, "plan");
	page = json_object_get(plan, "page");
	assert_int_equal(json_integer_value(json_object_get(plan, "runs")), 100000);
	assert_int_equal(json_array_size(json_object_get(plan, "plan")), 200);
	assert_int_equal(json_integer_value(json_object_get(page, "offset")), 0);
	assert_int_equal(json_integer_value(json_object_get(page, "limit")), 200);
	assert_int_equal(json_integer_value(json_object_get(page, "next_offset")), 200);
	assert_true(json_array_size(json_object_get(plan, "timeline")) <= 200);
	assert_true(r.len < 512 * 1024);
	printf("# capped plan: first page %zu bytes\n", r.len);
	tb_test_resp_free(&r);

	/* the largest page, at the end */
	assert_int_equal(post_plan("?offset=99500&limit=1000", spec_cap, &r), 200);
	plan = json_object_get(r.json, "plan");
	assert_int_equal(json_array_size(json_object_get(plan, "plan")), 500);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(plan, "plan"), 0), "seq")),
			 99500);
	assert_true(json_is_null(json_object_get(json_object_get(plan, "page"), "next_offset")));
	tb_test_resp_free(&r);

	hwm = vm_kib("VmHWM");
	printf("# testbedd VmHWM after the capped plans: %.1f MiB%s\n", (double)hwm / 1024,
	       UNDER_ASAN ? " (AddressSanitizer: not checked)" : "");
	assert_true(hwm > 0);
	if (!UNDER_ASAN)
		assert_true(hwm < 64 * 1024);
}

static void test_bad_paging(void **state)
{
	static const struct {
		const char *query, *field;
	} cases[] = {
		{"?limit=1001", "limit"}, {"?limit=-1", "limit"},       {"?limit=x", "limit"},
		{"?offset=-5", "offset"}, {"?offset=100001", "offset"}, {"?offset=1e3", "offset"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_test_resp r = {0};
		json_t *e;

		assert_int_equal(post_plan(cases[i].query, spec_mid, &r), 400);
		e = json_object_get(r.json, "error");
		if (strcmp(json_string_value(json_object_get(e, "field")), cases[i].field) != 0)
			fail_msg("%s: field %s", cases[i].query, json_string_value(json_object_get(e, "field")));
		tb_test_resp_free(&r);
	}
}

/* tbctl with args, its stdout into out (at most len); the exit status. */
static int tbctl(char *out, size_t len, const char *const args[])
{
	char exe[512], url[96], path[400];
	const char *argv[16];
	int st = 0, n = 0;
	size_t got;
	pid_t pid;
	FILE *f;

	snprintf(exe, sizeof(exe), "%s/tbctl", getenv("TB_BINARY_DIR") ? getenv("TB_BINARY_DIR") : ".");
	snprintf(path, sizeof(path), "%s/tbctl.out", dmn.dir);
	argv[n++] = exe;
	for (size_t i = 0; args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		snprintf(url, sizeof(url), "http://127.0.0.1:%u", dmn.port);
		setenv("TESTBEDD_URL", url, 1);
		setenv("TESTBEDD_TOKEN_FILE", dmn.admin_token_file, 1);
		if (o < 0 || dup2(o, 1) < 0)
			_exit(127);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	assert_true(pid > 0);
	waitpid(pid, &st, 0);
	f = fopen(path, "r");
	assert_non_null(f);
	got = fread(out, 1, len - 1, f);
	out[got] = '\0';
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static void test_tbctl_follows_pages(void **state)
{
	size_t len = 4 * 1024 * 1024;
	char *out = malloc(len), spec[400];
	FILE *f;
	json_t *j;

	(void)state;
	assert_non_null(out);
	snprintf(spec, sizeof(spec), "%s/mid.json", dmn.dir);
	f = fopen(spec, "w");
	assert_non_null(f);
	fputs(spec_mid, f);
	fclose(f);
	/* every run: three pages of at most 1000 */
	assert_int_equal(tbctl(out, len, (const char *const[]){"matrix", "plan", spec, NULL}), 0);
	assert_int_equal(count(out, "right -> left"), 2500);
	assert_non_null(strstr(out, "\n2499 "));
	assert_null(strstr(out, "the first"));
	/* --limit 5: five, and it says so */
	assert_int_equal(tbctl(out, len, (const char *const[]){"matrix", "plan", spec, "--limit", "5", NULL}), 0);
	assert_int_equal(count(out, "right -> left"), 5);
	assert_non_null(strstr(out, "the first 5 of 2500 runs"));
	/* --json: one plan with every run */
	assert_int_equal(tbctl(out, len, (const char *const[]){"--json", "matrix", "plan", spec, NULL}), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "plan"), "plan")), 2500);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(json_object_get(j, "plan"), "plan"), 2499), "seq")),
			 2499);
	json_decref(j);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capped_plan_is_bounded),
		cmocka_unit_test(test_bad_paging),
		cmocka_unit_test(test_tbctl_follows_pages),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
