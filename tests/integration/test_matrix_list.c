/*
 * test_matrix_list.c - GET /api/v1/matrices' filters and paging and GET
 * /api/v1/matrices/{id}/cells/{n}/history against the real testbedd on
 * port 0: each bad input is a 400 naming its field (a table: request ->
 * status, error code, field), good ones a 200 of the documented shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon.h"

static struct tb_test_daemon D;

static const struct {
	const char *path;
	long status;
	const char *field; /* error.field of a 400, or NULL */
} cases[] = {
	{"/api/v1/matrices", 200, NULL},
	{"/api/v1/matrices?name=nightly&state=succeeded&since=2026-01-01T00:00:00Z&offset=0&limit=10", 200, NULL},
	{"/api/v1/matrices?name=%25", 200, NULL},
	{"/api/v1/matrices?limit=0", 400, "limit"},
	{"/api/v1/matrices?limit=1001", 400, "limit"},
	{"/api/v1/matrices?limit=ten", 400, "limit"},
	{"/api/v1/matrices?offset=-1", 400, "offset"},
	{"/api/v1/matrices?offset=1e3", 400, "offset"},
	{"/api/v1/matrices?offset=99999999999", 400, "offset"},
	{"/api/v1/matrices?state=done", 400, "state"},
	{"/api/v1/matrices?state=", 400, "state"},
	{"/api/v1/matrices?name=", 400, "name"},
	{"/api/v1/matrices?since=yesterday", 400, "since"},
	{"/api/v1/matrices?since=1700000000", 400, "since"},
	{"/api/v1/matrices/1/cells/0/history", 404, NULL},
	{"/api/v1/matrices/x/cells/0/history", 400, "id"},
	{"/api/v1/matrices/1/cells/-1/history", 400, "cell"},
	{"/api/v1/matrices/1/cells/0/history?metric=median", 400, "metric"},
	{"/api/v1/matrices/1/cells/0/history?limit=501", 400, "limit"},
	{"/api/v1/matrices/1/cells/0/history?state=ok", 400, "state"},
	{"/api/v1/matrices/1/cells/0/history?since=now", 400, "since"},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_test_resp r;

		tb_test_api_expect(&D, NULL, "GET", cases[i].path, NULL, cases[i].status, &r);
		if (cases[i].field != NULL)
			tb_test_expect_field(&r, cases[i].path, cases[i].field);
		if (r.status == 200) {
			assert_true(json_is_array(json_object_get(r.json, "matrices")));
			assert_true(json_is_integer(json_object_get(r.json, "total")));
			assert_true(json_is_integer(json_object_get(r.json, "offset")));
			assert_true(json_is_integer(json_object_get(r.json, "limit")));
		}
		tb_test_resp_free(&r);
	}
}

static int setup(void **state)
{
	(void)state;
	return tb_test_daemon_start(&D, NULL, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};

	return cmocka_run_group_tests(tests, setup, teardown);
}
