/*
 * test_views_api.c - the noisy_cv parameter of GET /api/v1/matrices/{id}/results,
 * the query of GET /api/v1/matrices/{id}/os, and the matrix id and metric of
 * compare, a cell's history and the report against the real testbedd on
 * port 0: each bad input is a 400 naming its field (a table: request ->
 * status, field), checked before the matrix is looked up; a matrix that does
 * not exist is a 404.  (The 200s with numbers: tests/browser/test_views_os.mjs
 * on the sim; the computation: unit test_osview, test_results.)
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
	{"/api/v1/matrices/1/results", 404, NULL},
	{"/api/v1/matrices/1/results?noisy_cv=0.05", 404, NULL},
	{"/api/v1/matrices/1/results?noisy_cv=0", 404, NULL},
	{"/api/v1/matrices/1/results?noisy_cv=10&format=csv&view=cells", 404, NULL},
	{"/api/v1/matrices/1/results?noisy_cv=", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=five", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=5%25", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=-0.01", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=10.5", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=nan", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=inf", 400, "noisy_cv"},
	{"/api/v1/matrices/1/results?noisy_cv=0.05x", 400, "noisy_cv"},
	{"/api/v1/matrices/1/os", 404, NULL},
	{"/api/v1/matrices/1/os?a=ubuntu/ubuntu&b=freebsd/freebsd&metric=lost_percent&noisy_cv=0.1", 404, NULL},
	{"/api/v1/matrices/x/os", 400, "id"},
	{"/api/v1/matrices/1/os?a=ubuntu", 400, "a"},
	{"/api/v1/matrices/1/os?a=ubuntu/ubuntu/x", 400, "a"},
	{"/api/v1/matrices/1/os?a=Ubuntu/ubuntu", 400, "a"},
	{"/api/v1/matrices/1/os?a=%3Bls/x", 400, "a"},
	{"/api/v1/matrices/1/os?b=/freebsd", 400, "b"},
	{"/api/v1/matrices/1/os?b=", 400, "b"},
	{"/api/v1/matrices/1/os?metric=cpu", 400, "metric"},
	{"/api/v1/matrices/1/os?noisy_cv=high", 400, "noisy_cv"},
	/* the matrix id and metric every view over results parses alike
	 * (api_matrix_id, api_metric): the same cell statistics everywhere */
	{"/api/v1/matrices/1/compare?baseline=2&metric=lost_percent", 404, NULL},
	{"/api/v1/matrices/1/compare?baseline=2&metric=cpu", 400, "metric"},
	{"/api/v1/matrices/x/compare?baseline=2", 400, "id"},
	{"/api/v1/matrices/1/cells/0/history?metric=jitter_ms", 404, NULL},
	{"/api/v1/matrices/1/cells/0/history?metric=median", 400, "metric"},
	{"/api/v1/matrices/0/cells/0/history", 400, "id"},
	{"/api/v1/matrices/1/report?metric=retransmits", 404, NULL},
	{"/api/v1/matrices/1/report?metric=cpu", 400, "metric"},
	{"/api/v1/matrices/x/report", 400, "id"},
	{"/api/v1/matrices/1/os?metric=sender_bps", 404, NULL},
	/* format, one parser for results, compare and hosts diff */
	{"/api/v1/matrices/1/results?format=xml", 400, "format"},
	{"/api/v1/matrices/1/results?format=json&view=cells", 404, NULL},
	{"/api/v1/matrices/1/compare?baseline=2&format=xml", 400, "format"},
	{"/api/v1/matrices/1/hosts/diff?other=2&format=CSV", 400, "format"},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_test_resp r;

		tb_test_api_expect(&D, NULL, "GET", cases[i].path, NULL, cases[i].status, &r);
		if (cases[i].field != NULL)
			tb_test_expect_field(&r, cases[i].path, cases[i].field);
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
