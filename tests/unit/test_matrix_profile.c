/*
 * test_matrix_profile.c - the spec's "profile" (server/matrix_profile.c):
 * good and bad specs (each error naming its field), the defaults, the
 * plan's commands, and the profiling scripts run for real by this
 * machine's /bin/sh: without the profiler on PATH they say exactly that
 * (perf; dtrace), and as a user that is not root while
 * kernel.perf_event_paranoid is above 0 (this Debian's default is 2) the
 * perf script says so with the value it read (setpriv to nobody: only when
 * the test runs as root; the value is read here to know what to expect).
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

#include "matrix_profile.h"
#include "shquote.h"

static int check(const char *text, struct tb_error *e)
{
	json_t *spec = json_loads(text, 0, NULL);
	int rc;

	assert_non_null(spec);
	memset(e, 0, sizeof(*e));
	rc = tb_mx_profile_check(spec, e);
	json_decref(spec);
	return rc;
}

static void specs(void **state)
{
	struct tb_error e;

	(void)state;
	assert_int_equal(check("{}", &e), 0);
	assert_int_equal(check("{\"profile\": {}}", &e), 0);
	assert_int_equal(check("{\"profile\": {\"side\": \"both\", \"frequency\": 997}}", &e), 0);
	assert_int_equal(check("{\"profile\": \"perf\"}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile");
	assert_int_equal(check("{\"profile\": {\"side\": \"left\"}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.side");
	assert_int_equal(check("{\"profile\": {\"side\": 1}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.side");
	assert_int_equal(check("{\"profile\": {\"frequency\": 0}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.frequency");
	assert_int_equal(check("{\"profile\": {\"frequency\": 10001}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.frequency");
	assert_int_equal(check("{\"profile\": {\"frequency\": 99.5}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.frequency");
	assert_int_equal(check("{\"profile\": {\"rate\": 5}}", &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "profile.rate");
}

static void defaults_and_plan(void **state)
{
	json_t *spec = json_loads("{\"profile\": {}}", 0, NULL), *plan;
	const char *side = NULL;
	long freq = 0;

	(void)state;
	assert_true(tb_mx_profile_of(spec, &side, &freq));
	assert_string_equal(side, "sender");
	assert_int_equal(freq, 99);
	plan = tb_mx_profile_plan_json(spec);
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(json_object_get(plan, "commands"), "linux"), 1)),
		"perf record -a -g -F 99 -o DIR/perf.data -- sleep WALL");
	assert_non_null(strstr(
		json_string_value(json_array_get(json_object_get(json_object_get(plan, "commands"), "freebsd"), 0)),
		"profile-99 { @[stack()] = count(); } tick-WALLs"));
	json_decref(plan);
	json_decref(spec);
	spec = json_loads("{}", 0, NULL);
	assert_false(tb_mx_profile_of(spec, &side, &freq));
	json_decref(spec);
}

/* Run script with sh as prefix says (a command put before "sh -c"); its
 * stdout, malloc'd. */
static char *run(const char *prefix, const char *script)
{
	const char *argv[] = {script, NULL};
	char *q = tb_sh_quote_argv(argv, NULL), *cmd, *out = calloc(1, 4096);
	FILE *f;
	size_t n;

	assert_non_null(q);
	assert_non_null(out);
	cmd = malloc(strlen(q) + strlen(prefix) + 32);
	assert_non_null(cmd);
	sprintf(cmd, "%ssh -c %s", prefix, q);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, 4095, f);
	out[n] = '\0';
	pclose(f);
	free(cmd);
	free(q);
	return out;
}

static void no_profiler(void **state)
{
	char *s = tb_mx_profile_script(false, 99, 5), *out;

	(void)state;
	/* an empty PATH: command -v finds no perf (sh is found by popen's shell first) */
	out = run("PATH=/nonexistent /bin/", s);
	assert_string_equal(out, "TBPROF unavailable perf was not found (not on PATH; Debian: apt-get install "
				 "linux-perf)\n");
	free(out);
	free(s);
	s = tb_mx_profile_script(true, 997, 5);
	out = run("PATH=/nonexistent /bin/", s);
	assert_string_equal(out, "TBPROF unavailable dtrace was not found (not on PATH; FreeBSD has it in the base "
				 "system: kldload dtraceall)\n");
	free(out);
	free(s);
}

static void paranoid_not_root(void **state)
{
	char *s = tb_mx_profile_script(false, 99, 5), *out, want[512];
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 99;

	(void)state;
	if (f != NULL) {
		if (fscanf(f, "%d", &level) != 1)
			level = 99;
		fclose(f);
	}
	if (geteuid() != 0 || system("command -v perf >/dev/null && command -v setpriv >/dev/null") != 0 ||
	    level <= 0) {
		printf("# skipped: needs root, perf and setpriv, and perf_event_paranoid above 0 (it is %d)\n", level);
		free(s);
		return;
	}
	out = run("setpriv --reuid=65534 --regid=65534 --clear-groups /bin/", s);
	snprintf(want, sizeof(want),
		 "TBPROF unavailable kernel.perf_event_paranoid is %d and the ssh user nobody is not root: perf record "
		 "-a needs 0 or lower (sysctl kernel.perf_event_paranoid=0) or root\n",
		 level);
	assert_string_equal(out, want);
	free(out);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(specs),
		cmocka_unit_test(defaults_and_plan),
		cmocka_unit_test(no_profiler),
		cmocka_unit_test(paranoid_not_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
