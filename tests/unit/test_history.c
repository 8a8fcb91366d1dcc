/*
 * test_history.c - the matrices over time from a real SQLite store in a
 * temporary directory: GET /matrices' filters and paging
 * (tb_history_matrices_json) and one cell across matrices
 * (tb_history_cell_json), matched by compare's key whatever its cell number.
 * No runner, no daemon.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "history.h"
#include "results.h"
#include "store.h"
#include "tmpstore.h"

struct fixture {
	struct tb_test_store ts;
	struct tb_store *st;
	int64_t id[6];
};

struct cell_spec {
	const char *client, *server, *params, *os;
	double bps[3]; /* three repeats */
};

static void take_ids(void *cls, const struct tb_run_row *r)
{
	int64_t *ids = cls;

	ids[r->seq] = r->id;
}

/* A matrix named name, created at `at`, in state, of the cells given (cell
 * k at place k), three ok repeats each. */
static int64_t matrix(struct tb_store *st, const char *name, int64_t at, const char *state,
		      const struct cell_spec *cells, int ncells)
{
	struct tb_matrix_row m = {.name = name, .spec = "{}", .state = "queued", .actor = "admin", .created_at = at};
	struct tb_run_row runs[12];
	struct tb_error err = {0};
	int64_t id, ids[12] = {0};
	int n = 0;

	for (int c = 0; c < ncells; c++)
		for (int k = 0; k < 3; k++, n++)
			runs[n] = (struct tb_run_row){.seq = n,
						      .cell = c,
						      .repeat = k,
						      .client = cells[c].client,
						      .server = cells[c].server,
						      .link = "lan",
						      .server_address = "198.18.1.2",
						      .protocol = "tcp",
						      .direction = "forward",
						      .params = cells[c].params};
	if (tb_store_matrix_insert(st, &m, runs, n, &id, &err) != 0)
		fail_msg("insert: %s", err.message);
	assert_int_equal(tb_store_run_each(st, id, NULL, take_ids, ids, &err), 0);
	for (int i = 0; i < n; i++) {
		struct tb_run_row r = runs[i];

		r.id = ids[i];
		r.matrix_id = id;
		r.state = "ok";
		r.client_os = r.server_os = cells[r.cell].os;
		r.client_exit = r.server_exit = 0;
		r.sender_bps = r.receiver_bps = cells[r.cell].bps[r.repeat];
		r.lost_percent = -1;
		r.retransmits = 0;
		if (tb_store_run_finish(st, &r, NULL, 0, NULL, 0, &err) != 0)
			fail_msg("finish: %s", err.message);
	}
	assert_int_equal(tb_store_matrix_update(st, id, state, at, at + 10, NULL, NULL, &err), 0);
	return id;
}

#define P10 "{\"duration_s\":10}"
#define P1 "{\"duration_s\":1}"

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const struct cell_spec lr1 = {"left", "right", P10, "ubuntu", {1e9, 3e9, 2e9}};
	const struct cell_spec lr2 = {"left", "right", P10, "ubuntu", {4e9, 5e9, 6e9}};
	const struct cell_spec lr3 = {"left", "right", P10, "ubuntu", {7e9, 9e9, 8e9}};
	const struct cell_spec other = {"right", "left", P10, "ubuntu", {1, 1, 1}};
	const struct cell_spec short_run = {"left", "right", P1, "ubuntu", {5, 5, 5}};
	const struct cell_spec bsd = {"left", "right", P10, "freebsd", {6, 6, 6}};

	tb_test_store_open(&f->ts, "hist");
	f->st = f->ts.st;
	f->id[0] = matrix(f->st, "nightly", 1000, "succeeded", (struct cell_spec[]){lr1, other}, 2);
	/* the same cell at place 1 */
	f->id[1] = matrix(f->st, "nightly", 2000, "failed", (struct cell_spec[]){other, lr2}, 2);
	/* no cell with the key: other params, another OS */
	f->id[2] = matrix(f->st, "nightly-short", 3000, "succeeded", (struct cell_spec[]){short_run, bsd}, 2);
	f->id[3] = matrix(f->st, "weekly nightly", 4000, "succeeded", (struct cell_spec[]){lr3}, 1);
	f->id[4] = matrix(f->st, "adhoc", 5000, "canceled", (struct cell_spec[]){other}, 1);
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

/* The ids of a list, newest first, as "5,4," */
static void ids_of(const json_t *list, char *buf, size_t len)
{
	json_t *m;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(list, i, m) snprintf(buf + strlen(buf), len - strlen(buf), "%lld,",
						(long long)json_integer_value(json_object_get(m, "id")));
}

static void list_is(struct fixture *f, const char *name, const char *st, const char *since, int offset, int limit,
		    const char *want, int want_total)
{
	struct tb_results_src src = {.store = f->st};
	struct tb_matrix_filter flt = {.offset = offset, .limit = limit};
	struct tb_error err = {0};
	char got[128], exp[128] = "";
	json_t *j = NULL;
	int total = -1;

	/* want: indices into f->id, as "4,3," */
	for (const char *p = want; *p != '\0'; p += 2)
		snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), "%lld,", (long long)f->id[*p - '0']);
	assert_int_equal(tb_history_filter_parse(name, st, since, &flt, &err), 0);
	assert_int_equal(tb_history_matrices_json(&src, &flt, &j, &total, &err), 0);
	ids_of(j, got, sizeof(got));
	assert_string_equal(got, exp);
	assert_int_equal(total, want_total);
	for (size_t i = 0; i < json_array_size(j); i++) { /* the page's rows are GET /matrices/{id}'s */
		json_t *one = NULL, *m = json_array_get(j, i);

		assert_int_equal(
			tb_results_matrix_json(&src, json_integer_value(json_object_get(m, "id")), 0, &one, &err), 0);
		assert_true(json_equal(m, one));
		json_decref(one);
	}
	json_decref(j);
}

static void test_list_filters_and_paging(void **state)
{
	struct fixture *f = *state;

	list_is(f, NULL, NULL, NULL, 0, 50, "4,3,2,1,0,", 5);
	list_is(f, "nightly", NULL, NULL, 0, 50, "3,2,1,0,", 4); /* a part of the name */
	list_is(f, "Nightly", NULL, NULL, 0, 50, "", 0);         /* case counts */
	list_is(f, NULL, "succeeded", NULL, 0, 50, "3,2,0,", 3);
	list_is(f, "nightly", "succeeded", NULL, 0, 50, "3,2,0,", 3);
	list_is(f, NULL, NULL, "1970-01-01T00:50:00Z", 0, 50, "4,3,2,", 3); /* created at 3000 s or later */
	list_is(f, NULL, NULL, NULL, 1, 2, "3,2,", 5);                      /* a page */
	list_is(f, NULL, NULL, NULL, 5, 2, "", 5);                          /* past the end */
	list_is(f, "%", NULL, NULL, 0, 50, "", 0);                          /* no LIKE wildcards */
}

static void test_filter_bad_input(void **state)
{
	static const struct {
		const char *name, *state, *since, *field;
	} bad[] = {
		{"", NULL, NULL, "name"},
		{NULL, "done", NULL, "state"},
		{NULL, "", NULL, "state"},
		{NULL, NULL, "yesterday", "since"},
		{NULL, NULL, "2026-13-01T00:00:00Z", "since"},
	};
	struct tb_matrix_filter flt = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_error err = {0};

		assert_int_equal(tb_history_filter_parse(bad[i].name, bad[i].state, bad[i].since, &flt, &err),
				 TB_ERR_INVALID);
		assert_string_equal(err.field, bad[i].field);
	}
}

static double point_median(const json_t *p)
{
	return json_real_value(json_object_get(json_object_get(p, "stats"), "median"));
}

static void test_cell_history(void **state)
{
	struct fixture *f = *state;
	struct tb_results_src src = {.store = f->st};
	struct tb_matrix_filter flt = {.limit = 50};
	struct tb_error err = {0};
	json_t *j = NULL, *pts, *p;

	/* cell 1 of matrix 1: found as cell 0 of matrices 0 and 3, not in 2 or 4 */
	assert_int_equal(tb_history_cell_json(&src, f->id[1], 1, "receiver_bps", &flt, &j, &err), 0);
	pts = json_object_get(j, "points");
	assert_int_equal(json_array_size(pts), 3);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "key"), "client_os")), "ubuntu");
	p = json_array_get(pts, 0); /* oldest first */
	assert_int_equal(json_integer_value(json_object_get(p, "matrix")), f->id[0]);
	assert_int_equal(json_integer_value(json_object_get(p, "cell")), 0);
	assert_int_equal(json_integer_value(json_object_get(p, "n")), 3);
	assert_true(point_median(p) == 2e9);
	assert_true(json_real_value(json_object_get(json_object_get(p, "stats"), "min")) == 1e9);
	assert_true(json_real_value(json_object_get(json_object_get(p, "stats"), "max")) == 3e9);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "nightly");
	assert_string_equal(json_string_value(json_object_get(p, "created_at")), "1970-01-01T00:16:40Z");
	p = json_array_get(pts, 1);
	assert_int_equal(json_integer_value(json_object_get(p, "matrix")), f->id[1]);
	assert_int_equal(json_integer_value(json_object_get(p, "cell")), 1);
	assert_string_equal(json_string_value(json_object_get(p, "state")), "failed");
	assert_true(point_median(p) == 5e9);
	p = json_array_get(pts, 2);
	assert_int_equal(json_integer_value(json_object_get(p, "matrix")), f->id[3]);
	assert_true(point_median(p) == 8e9);
	assert_false(json_is_true(json_object_get(j, "truncated")));
	for (size_t i = 0; i < json_array_size(pts); i++) { /* each point is its matrix's results table's cell */
		json_t *t = NULL, *c;

		p = json_array_get(pts, i);
		assert_int_equal(
			tb_results_table_json(&src, json_integer_value(json_object_get(p, "matrix")), &t, &err), 0);
		c = json_array_get(json_object_get(t, "cells"), (size_t)json_integer_value(json_object_get(p, "cell")));
		assert_true(json_equal(json_object_get(p, "stats"), json_object_get(c, "receiver_bps")));
		assert_true(json_equal(json_object_get(p, "runs"), json_object_get(c, "runs")));
		json_decref(t);
	}
	json_decref(j);

	/* a history per spec: by name and state; a limit keeps the newest */
	assert_int_equal(tb_history_filter_parse("nightly", "succeeded", NULL, &flt, &err), 0);
	assert_int_equal(tb_history_cell_json(&src, f->id[0], 0, "sender_bps", &flt, &j, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "points")), 2);
	json_decref(j);
	flt = (struct tb_matrix_filter){.limit = 2};
	assert_int_equal(tb_history_cell_json(&src, f->id[0], 0, "receiver_bps", &flt, &j, &err), 0);
	pts = json_object_get(j, "points");
	assert_int_equal(json_array_size(pts), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pts, 0), "matrix")), f->id[1]);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pts, 1), "matrix")), f->id[3]);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);

	/* the FreeBSD cell has a history of its own */
	flt = (struct tb_matrix_filter){.limit = 50};
	assert_int_equal(tb_history_cell_json(&src, f->id[2], 1, "receiver_bps", &flt, &j, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "points")), 1);
	json_decref(j);

	assert_int_equal(tb_history_cell_json(&src, f->id[0], 7, "receiver_bps", &flt, &j, &err), TB_ERR_NOT_FOUND);
	assert_string_equal(err.field, "cell");
	assert_null(j);
	assert_int_equal(tb_history_cell_json(&src, 999, 0, "receiver_bps", &flt, &j, &err), TB_ERR_NOT_FOUND);
	assert_string_equal(err.field, "id");
	assert_true(tb_compare_metric_ok("lost_percent"));
	assert_false(tb_compare_metric_ok("median"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_filters_and_paging, setup, teardown),
		cmocka_unit_test(test_filter_bad_input),
		cmocka_unit_test_setup_teardown(test_cell_history, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
