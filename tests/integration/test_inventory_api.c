/*
 * test_inventory_api.c - the inventory over the API against the real
 * testbedd on port 0 (loopback inventory; no machine needs to answer).
 *
 * Covered: GET /inventory shows the file, its load time and the machines
 * without the key file's path; POST /inventory/check gives the same
 * FILE:LINE:COL as --check-config (line 18, column 11 for a bad role) and
 * ok for good text, 400 for a body without text; POST /inventory/reload of
 * a broken file is a 400 naming line and column, keeps the old inventory and
 * says so in last_reload; a fixed file reloads (a machine added shows); the
 * reload is audited with its outcome; SIGHUP is remembered as by "SIGHUP";
 * viewers and operators get 403; the file is never rewritten; tbctl
 * inventory show|check FILE|reload (the user's own file name in FILE:LINE:COL,
 * exit 2 on a mistake).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "datafile.h"

static struct tb_test_daemon D;
static char viewer[128], operator_[128];

/* printf into a new buffer (asprintf is not C11). */
static char *fmt(const char *f, const char *a)
{
	size_t n = strlen(f) + strlen(a) + 1;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, f, a);
	return s;
}

/* The default inventory with a mistake on line 18, column 11. */
static char *broken_text(void)
{
	char *t = fmt(tb_test_default_inventory, D.key_file), *p;

	p = strstr(t, "  right:\n    role: host");
	assert_non_null(p);
	memcpy(p + strlen("  right:\n    role: "), "hots", 4);
	return t;
}

/* {"text": t} as a JSON string (malloc'd). */
static char *text_body(const char *t)
{
	json_t *j = json_pack("{s:s}", "text", t);
	char *s = json_dumps(j, 0);

	json_decref(j);
	return s;
}

static int setup(void **state)
{
	(void)state;
	if (tb_test_daemon_start(&D, NULL, NULL) != 0)
		return -1;
	if (tb_test_create_token(&D, "v", "viewer", viewer, sizeof(viewer)) != 201 ||
	    tb_test_create_token(&D, "o", "operator", operator_, sizeof(operator_)) != 201)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

static void test_show(void **state)
{
	struct tb_test_resp r;
	json_t *inv;

	(void)state;
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/inventory", NULL, 200, &r);
	inv = json_object_get(r.json, "inventory");
	assert_string_equal(json_string_value(json_object_get(inv, "file")), D.inventory);
	assert_non_null(json_string_value(json_object_get(inv, "loaded_at")));
	assert_int_equal(json_array_size(json_object_get(inv, "machines")), 2);
	assert_null(strstr(r.body, D.key_file)); /* a secret's path is never shown */
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, viewer, "GET", "/api/v1/inventory", NULL, 403, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, operator_, "POST", "/api/v1/inventory/reload", NULL, 403, &r);
	tb_test_resp_free(&r);
}

static void test_check(void **state)
{
	struct tb_test_resp r;
	char *bad = broken_text(), *good = NULL, *body, want[512];
	json_t *e;

	(void)state;
	body = text_body(bad);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/check", body, 200, &r);
	assert_false(json_boolean_value(json_object_get(r.json, "ok")));
	e = json_array_get(json_object_get(r.json, "errors"), 0);
	assert_int_equal(json_integer_value(json_object_get(e, "line")), 18);
	assert_int_equal(json_integer_value(json_object_get(e, "col")), 11);
	snprintf(want, sizeof(want), "%s:18:11: machines.right.role:", D.inventory);
	assert_non_null(strstr(json_string_value(json_object_get(e, "message")), want));
	tb_test_resp_free(&r);
	free(body);

	good = fmt(tb_test_default_inventory, D.key_file);
	body = text_body(good);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/check", body, 200, &r);
	assert_true(json_boolean_value(json_object_get(r.json, "ok")));
	assert_int_equal(json_integer_value(json_object_get(r.json, "machines")), 2);
	tb_test_resp_free(&r);
	free(body);

	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/check", "{\"txt\": \"x\"}", 400, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/check", "{\"text\": 3}", 400, &r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")), "text");
	tb_test_resp_free(&r);
	free(bad);
	free(good);
}

static void test_reload(void **state)
{
	struct tb_test_resp r;
	char *bad = broken_text(), *good = NULL, *ondisk, want[512];
	json_t *inv, *last;

	(void)state;
	assert_int_equal(tb_test_daemon_write_inventory(&D, bad), 0);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/reload", NULL, 400, &r);
	snprintf(want, sizeof(want), "%s:18:11:", D.inventory);
	if (strstr(json_string_value(json_object_get(json_object_get(r.json, "error"), "message")), want) == NULL)
		fail_msg("reload: %ld %s (want %s)", r.status, r.body, want);
	tb_test_resp_free(&r);
	/* the old inventory is kept, and the mistake is the last reload's */
	tb_test_api(&D, NULL, "GET", "/api/v1/inventory", NULL, &r);
	inv = json_object_get(r.json, "inventory");
	assert_int_equal(json_array_size(json_object_get(inv, "machines")), 2);
	last = json_object_get(inv, "last_reload");
	assert_false(json_boolean_value(json_object_get(last, "ok")));
	assert_string_equal(json_string_value(json_object_get(last, "by")), "admin");
	assert_non_null(strstr(json_string_value(json_object_get(last, "error")), want));
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/hosts/right", NULL, 200, &r);
	tb_test_resp_free(&r);
	/* testbedd never rewrites the file */
	ondisk = tb_test_read_file(D.dir, "inventory.yaml", NULL);
	assert_non_null(ondisk);
	assert_non_null(strstr(ondisk, "role: hots"));
	free(ondisk);

	/* fixed, with a third machine */
	good = fmt("%s  third:\n    role: host\n    os:\n      ubuntu: {address: 127.0.0.4, port: 9}\n",
		   tb_test_default_inventory);
	assert_int_equal(tb_test_daemon_write_inventory(&D, good), 0);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/inventory/reload", NULL, 200, &r);
	inv = json_object_get(r.json, "inventory");
	assert_int_equal(json_array_size(json_object_get(inv, "machines")), 3);
	assert_true(json_boolean_value(json_object_get(json_object_get(inv, "last_reload"), "ok")));
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/hosts/third", NULL, 200, &r);
	tb_test_resp_free(&r);

	/* both reloads are in the audit log, with their outcome */
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/audit?limit=20", NULL, 200, &r);
	assert_non_null(strstr(r.body, "inventory.reload"));
	tb_test_resp_free(&r);

	/* SIGHUP goes the same way and is remembered as such */
	assert_int_equal(kill(D.pid, SIGHUP), 0);
	for (int i = 0; i < 100; i++) {
		const char *by;

		tb_test_api(&D, NULL, "GET", "/api/v1/inventory", NULL, &r);
		by = json_string_value(
			json_object_get(json_object_get(json_object_get(r.json, "inventory"), "last_reload"), "by"));
		if (by != NULL && strcmp(by, "SIGHUP") == 0) {
			tb_test_resp_free(&r);
			break;
		}
		tb_test_resp_free(&r);
		assert_true(i < 99);
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
	free(bad);
	free(good);
}

enum { TEXT_MAX = 65536 };

static void test_tbctl(void **state)
{
	char proposed[400], *bad = broken_text(), text[TEXT_MAX];

	(void)state;
	snprintf(proposed, sizeof(proposed), "%s/proposed.yaml", D.dir);
	assert_int_equal(tb_test_write_file(proposed, bad, 0600), 0);
	assert_int_equal(
		tb_test_tbctl(&D, NULL, (const char *const[]){"inventory", "check", proposed, NULL}, text, TEXT_MAX),
		2);
	assert_non_null(strstr(text, proposed));
	assert_non_null(strstr(text, ":18:11: machines.right.role:"));
	assert_null(strstr(text, D.inventory)); /* the user's file name, not the server's */
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"inventory", "show", NULL}, text, TEXT_MAX), 0);
	assert_non_null(strstr(text, D.inventory));
	assert_non_null(strstr(text, "right"));
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"inventory", "reload", NULL}, text, TEXT_MAX),
			 0);
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"inventory", "frob", NULL}, text, TEXT_MAX), 1);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_tbctl),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
