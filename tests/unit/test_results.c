/*
 * test_results.c - results and the CI gate built from what they read and
 * nothing else: a real SQLite store in a temporary directory with two
 * matrices of finished runs, and "what runs now" as the caller (the runner
 * or a handler) would pass it.  No runner, no daemon.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "compare.h"
#include "results.h"
#include "store.h"
#include "tmpstore.h"

struct fixture {
	struct tb_test_store ts;
	struct tb_store *st;
	int64_t fast, slow;
};

static void take_ids(void *cls, const struct tb_run_row *r)
{
	int64_t *ids = cls;

	ids[r->seq] = r->id;
}

/* A matrix of two repeats of one TCP cell, both ok at bps and bps * 1.1. */
static int64_t finished_matrix(struct tb_store *st, const char *name, double bps)
{
	struct tb_matrix_row m = {.name = name, .spec = "{}", .state = "queued", .actor = "admin", .created_at = 1};
	struct tb_run_row runs[2];
	struct tb_error err = {0};
	int64_t id, ids[2] = {0, 0};

	for (int i = 0; i < 2; i++)
		runs[i] = (struct tb_run_row){.seq = i,
					      .repeat = i,
					      .client = "left",
					      .server = "right",
					      .link = "lan",
					      .server_address = "198.18.1.2",
					      .protocol = "tcp",
					      .direction = "forward",
					      .params = "{\"duration_s\":10}"};
	if (tb_store_matrix_insert(st, &m, runs, 2, &id, &err) != 0)
		fail_msg("insert: %s", err.message);
	assert_int_equal(tb_store_run_each(st, id, NULL, take_ids, ids, &err), 0);
	for (int i = 0; i < 2; i++) {
		struct tb_run_row r = runs[i];

		r.id = ids[i];
		r.matrix_id = id;
		r.state = "ok";
		r.client_exit = r.server_exit = 0;
		r.sender_bps = r.receiver_bps = bps * (i == 0 ? 1.0 : 1.1);
		r.lost_percent = -1;
		r.retransmits = 0;
		if (tb_store_run_finish(st, &r, NULL, 0, NULL, 0, &err) != 0)
			fail_msg("finish: %s", err.message);
	}
	return id;
}

/* The pids the last runs of a matrix recorded on a host, newest first. */
static void test_recent_pids(void **state)
{
	struct fixture *f = *state;
	int64_t ids[2] = {0, 0};
	long pids[4];
	struct tb_error err = {0};
	int n = -1;

	assert_int_equal(tb_store_run_each(f->st, f->fast, NULL, take_ids, ids, &err), 0);
	for (int i = 0; i < 2; i++) {
		struct tb_run_row r = {.id = ids[i],
				       .state = "ok",
				       .started_ms = 1000 + i,
				       .client_pid = 100 + i,
				       .server_pid = 200 + i,
				       .client_exit = -1,
				       .server_exit = -1,
				       .retransmits = -1,
				       .sender_bps = -1,
				       .receiver_bps = -1,
				       .lost_percent = -1};

		assert_int_equal(tb_store_run_update(f->st, &r, &err), 0);
	}
	assert_int_equal(tb_store_run_recent_pids(f->st, f->fast, "right", pids, 4, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 201); /* the run started last first */
	assert_int_equal(pids[1], 200);
	assert_int_equal(tb_store_run_recent_pids(f->st, f->fast, "left", pids, 1, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 101);
	assert_int_equal(tb_store_run_recent_pids(f->st, f->slow, "right", pids, 4, &n, &err), 0);
	assert_int_equal(n, 0); /* its runs recorded none */
	assert_int_equal(tb_store_run_recent_pids(f->st, f->fast, "router", pids, 4, &n, &err), 0);
	assert_int_equal(n, 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	tb_test_store_open(&f->ts, "res");
	f->st = f->ts.st;
	f->fast = finished_matrix(f->st, "fast", 1e9);
	f->slow = finished_matrix(f->st, "slow", 0.5e9);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tb_test_store_remove(&f->ts);
	free(f);
	return 0;
}

static void test_what_runs_now_comes_from_the_caller(void **state)
{
	struct fixture *f = *state;
	struct tb_results_src src = {.store = f->st, .now = {{f->fast, 1}}, .nnow = 1};
	struct tb_error err = {0};
	json_t *j = NULL;

	assert_int_equal(tb_results_matrix_json(&src, f->fast, 0, &j, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "progress"), "current_seq")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "progress"), "ok")), 2);
	json_decref(j);
	/* another matrix runs: this one has no run in progress */
	assert_int_equal(tb_results_matrix_json(&src, f->slow, 0, &j, &err), 0);
	assert_true(json_is_null(json_object_get(json_object_get(j, "progress"), "current_seq")));
	json_decref(j);
	/* two matrices side by side: each shows its own run in progress */
	src.now[1] = (struct tb_mx_now){f->slow, 0};
	src.nnow = 2;
	assert_int_equal(tb_results_matrix_json(&src, f->slow, 0, &j, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "progress"), "current_seq")), 0);
	assert_true(json_is_integer(json_object_get(json_object_get(j, "progress"), "current_seq")));
	json_decref(j);
	assert_int_equal(tb_results_matrix_json(&src, f->fast, 0, &j, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "progress"), "current_seq")), 1);
	json_decref(j);
	src.nnow = 0;
	assert_int_equal(tb_results_matrix_find_json(&src, &(struct tb_matrix_filter){.limit = 10}, &j, NULL, &err), 0);
	assert_int_equal(json_array_size(j), 2);
	json_decref(j);
	assert_int_equal(tb_results_matrix_json(&src, 999, 0, &j, &err), TB_ERR_NOT_FOUND);
}

static void test_table_and_gate(void **state)
{
	struct fixture *f = *state;
	struct tb_results_src src = {.store = f->st};
	struct tb_error err = {0};
	json_t *t = NULL, *cell, *g = NULL;
	char *csv = NULL;
	size_t len = 0;

	assert_int_equal(tb_results_table_json(&src, f->fast, &t, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(t, "matrix")), f->fast);
	assert_string_equal(json_string_value(json_object_get(t, "name")), "fast");
	assert_string_equal(json_string_value(json_object_get(t, "state")), "queued");
	assert_int_equal(json_array_size(json_object_get(t, "runs")), 2);
	cell = json_array_get(json_object_get(t, "cells"), 0);
	assert_int_equal(json_integer_value(json_object_get(cell, "runs")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(cell, "receiver_bps"), "n")), 2);
	json_decref(t);
	assert_int_equal(tb_results_table_csv(&src, f->fast, 1, &csv, &len, &err), 0);
	assert_non_null(strstr(csv, "left"));
	free(csv);
	assert_int_equal(tb_results_table_csv(&src, 999, 0, &csv, &len, &err), TB_ERR_NOT_FOUND);
	assert_int_equal(tb_results_table_json(&src, 999, &t, &err), TB_ERR_NOT_FOUND);
	assert_string_equal(err.field, "id");
	assert_null(t);
	assert_null(csv);
	assert_string_equal(err.field, "id");
	/* slow against fast: the cell dropped by half, the gate fails */
	assert_int_equal(tb_compare_json(&src, f->slow, f->fast, 10.0, "receiver_bps", &g, &err), 0);
	assert_false(json_is_true(json_object_get(g, "pass")));
	assert_int_equal(json_array_size(json_object_get(g, "dropped")), 1);
	json_decref(g);
	assert_int_equal(tb_compare_json(&src, f->fast, f->slow, 10.0, "receiver_bps", &g, &err), 0);
	assert_true(json_is_true(json_object_get(g, "pass")));
	json_decref(g);
	assert_int_equal(tb_compare_json(&src, f->fast, 999, 10.0, "receiver_bps", &g, &err), TB_ERR_NOT_FOUND);
	assert_string_equal(err.field, "baseline");
}

/* The Stats of a cell carry the spread: quartiles, cv, every value and the
 * noisy flag by the threshold asked for; the CSV of cells the same. The
 * fixture's runs gave 1e9 and 1.1e9: cv = 0.05e9 sqrt 2 / 1.05e9 = 0.0673. */
static void test_spread(void **state)
{
	struct fixture *f = *state;
	struct tb_results_src src = {.store = f->st};
	struct tb_error err = {0};
	json_t *t = NULL, *rx, *vals;
	char *csv = NULL, *line2;
	size_t len = 0;

	assert_int_equal(tb_results_table_json(&src, f->fast, &t, &err), 0);
	rx = json_object_get(json_array_get(json_object_get(t, "cells"), 0), "receiver_bps");
	assert_true(fabs(json_real_value(json_object_get(rx, "q1")) - 1.025e9) < 1);
	assert_true(fabs(json_real_value(json_object_get(rx, "q3")) - 1.075e9) < 1);
	assert_true(fabs(json_real_value(json_object_get(rx, "cv")) - 0.05e9 * sqrt(2.0) / 1.05e9) < 1e-9);
	assert_true(json_is_true(json_object_get(rx, "noisy"))); /* over the default 5 % */
	vals = json_object_get(rx, "values");
	assert_int_equal(json_array_size(vals), 2);
	assert_true(fabs(json_real_value(json_array_get(vals, 0)) - 1e9) < 1);
	assert_true(fabs(json_real_value(json_array_get(vals, 1)) - 1.1e9) < 1);
	/* lost_percent had no value (TCP): null, not a spread */
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(t, "cells"), 0), "lost_percent")));
	json_decref(t);
	assert_int_equal(tb_results_table_json_cv(&src, f->fast, 0.10, &t, &err), 0);
	rx = json_object_get(json_array_get(json_object_get(t, "cells"), 0), "receiver_bps");
	assert_true(json_is_false(json_object_get(rx, "noisy")));
	json_decref(t);
	assert_int_equal(tb_results_table_csv_cv(&src, f->fast, 1, 0.10, &csv, &len, &err), 0);
	assert_non_null(strstr(csv, ",receiver_bps.q1,receiver_bps.q3,receiver_bps.cv,receiver_bps.noisy,"
				    "receiver_bps.values\r\n"));
	line2 = strstr(csv, "\r\n") + 2;
	assert_non_null(strstr(line2, ",false,1000000000 1100000000\r\n"));
	free(csv);
	assert_int_equal(tb_results_table_csv_cv(&src, f->fast, 1, 0.05, &csv, &len, &err), 0);
	assert_non_null(strstr(csv, ",true,1000000000 1100000000\r\n"));
	free(csv);
}

static void on_commands(void *cls, const struct tb_run_commands *c)
{
	char *buf = cls;

	snprintf(buf + strlen(buf), 512 - strlen(buf), "%d:%lld:%s:%s;", c->cell, (long long)c->run_id,
		 c->client_command ? c->client_command : "-", c->server_command ? c->server_command : "-");
}

/* What a report lists as each cell's commands (one store query): the run of
 * lowest seq of each cell, in cell order, whatever order the cells ran in;
 * a first run without commands gives none; another matrix's runs not. */
static void test_first_commands(void **state)
{
	struct fixture *f = *state;
	struct tb_matrix_row m = {.name = "cmds", .spec = "{}", .state = "queued", .actor = "admin", .created_at = 1};
	static const int cell_of[5] = {2, 0, 2, 1, 0}; /* by seq */
	struct tb_run_row runs[5];
	struct tb_error err = {0};
	int64_t id, ids[5] = {0};
	char got[512] = "", want[512];

	for (int i = 0; i < 5; i++)
		runs[i] = (struct tb_run_row){.seq = i,
					      .cell = cell_of[i],
					      .client = "left",
					      .server = "right",
					      .link = "lan",
					      .server_address = "198.18.1.2",
					      .protocol = "tcp",
					      .direction = "forward",
					      .params = "{}"};
	assert_int_equal(tb_store_matrix_insert(f->st, &m, runs, 5, &id, &err), 0);
	assert_int_equal(tb_store_run_each(f->st, id, NULL, take_ids, ids, &err), 0);
	for (int i = 0; i < 5; i++) {
		char c[32], s[32];
		struct tb_run_row r = runs[i];

		if (i == 3) /* cell 1's only run has not run */
			continue;
		snprintf(c, sizeof(c), "iperf3 -c seq%d", i);
		snprintf(s, sizeof(s), "iperf3 -s seq%d", i);
		r.id = ids[i];
		r.matrix_id = id;
		r.state = "ok";
		r.client_command = c;
		r.server_command = s;
		r.client_exit = r.server_exit = 0;
		r.sender_bps = r.receiver_bps = 1e9;
		r.lost_percent = -1;
		r.retransmits = 0;
		assert_int_equal(tb_store_run_finish(f->st, &r, NULL, 0, NULL, 0, &err), 0);
	}
	assert_int_equal(tb_store_run_first_commands(f->st, id, on_commands, got, &err), 0);
	snprintf(want, sizeof(want),
		 "0:%lld:iperf3 -c seq1:iperf3 -s seq1;1:%lld:-:-;2:%lld:iperf3 -c seq0:iperf3 -s seq0;",
		 (long long)ids[1], (long long)ids[3], (long long)ids[0]);
	assert_string_equal(got, want);
	got[0] = '\0';
	assert_int_equal(tb_store_run_first_commands(f->st, id + 100, on_commands, got, &err), 0);
	assert_string_equal(got, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_what_runs_now_comes_from_the_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recent_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_and_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_commands, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
