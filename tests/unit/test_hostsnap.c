/*
 * test_hostsnap.c - the host metadata views built from the one service they
 * read, the store (a real SQLite store in a temporary directory): a
 * matrix's snapshots, the differences between two matrices host by host and
 * OS by OS, and one snapshot's raw output.  No ssh, no daemon: the snapshots
 * are stored as tb_hostsnap_take would store them.
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

#include "hostsnap.h"
#include "jsonpath.h"
#include "services.h"
#include "store.h"
#include "tmpstore.h"

static int64_t matrix(struct tb_store *st, const char *name)
{
	struct tb_matrix_row m = {.name = name, .spec = "{}", .state = "succeeded", .actor = "admin", .created_at = 1};
	struct tb_run_row run = {.client = "left",
				 .server = "right",
				 .link = "lan",
				 .server_address = "198.18.1.2",
				 .protocol = "tcp",
				 .direction = "forward",
				 .params = "{}"};
	struct tb_error err = {0};
	int64_t id;

	if (tb_store_matrix_insert(st, &m, &run, 1, &id, &err) != 0)
		fail_msg("matrix: %s", err.message);
	return id;
}

static void snapshot(struct tb_store *st, int64_t mx, const char *host, const char *os, const char *data)
{
	struct tb_snapshot_row r = {.matrix_id = mx,
				    .host = host,
				    .os = os,
				    .taken_at = 100,
				    .interface = "eth1",
				    .command = "sh -c 'uname -a; sysctl -a'",
				    .data = data,
				    .raw = "Linux left 6.1\n",
				    .raw_len = 15};
	struct tb_error err = {0};

	if (tb_store_snapshot_put(st, &r, &err) != 0)
		fail_msg("snapshot: %s", err.message);
}

static void test_views_from_the_store(void **state)
{
	struct tb_test_store ts;
	struct tb_services sv = {0};
	struct tb_error err = {0};
	int64_t a, b;
	json_t *j = NULL, *h;
	char *raw = NULL;
	size_t len = 0;

	(void)state;
	tb_test_store_open(&ts, "snap");
	sv.store = ts.st;
	a = matrix(sv.store, "before");
	b = matrix(sv.store, "after");
	snapshot(sv.store, a, "left", "ubuntu", "{\"tcp\":{\"congestion_control\":\"cubic\"},\"mtu\":1500}");
	snapshot(sv.store, a, "right", "ubuntu", "{\"tcp\":{\"congestion_control\":\"cubic\"}}");
	snapshot(sv.store, b, "left", "ubuntu", "{\"tcp\":{\"congestion_control\":\"bbr\"},\"mtu\":1500}");

	assert_int_equal(tb_hostsnap_json(&sv, a, &j, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "hosts")), 2);
	assert_string_equal(json_string_value(tb_test_walk(j, "hosts[0].command", '.')), "sh -c 'uname -a; sysctl -a'");
	json_decref(j);

	/* left changed its congestion control; right is only in the first */
	assert_int_equal(tb_hostsnap_diff(&sv, b, a, &j, &err), 0);
	for (size_t i = 0; i < json_array_size(json_object_get(j, "hosts")); i++) {
		h = json_array_get(json_object_get(j, "hosts"), i);
		if (strcmp(json_string_value(json_object_get(h, "host")), "left") == 0) {
			assert_string_equal(json_string_value(json_object_get(h, "in")), "both");
			assert_string_equal(json_string_value(tb_test_walk(h, "differences[0].path", '.')),
					    "tcp.congestion_control");
			assert_string_equal(json_string_value(tb_test_walk(h, "differences[0].matrix", '.')), "bbr");
			assert_string_equal(json_string_value(tb_test_walk(h, "differences[0].other", '.')), "cubic");
			assert_int_equal(json_array_size(json_object_get(h, "differences")), 1);
		} else {
			assert_string_equal(json_string_value(json_object_get(h, "host")), "right");
			assert_string_equal(json_string_value(json_object_get(h, "in")), "other");
		}
	}
	json_decref(j);

	assert_int_equal(tb_hostsnap_raw(&sv, a, "left", "ubuntu", &raw, &len, &err), 0);
	assert_int_equal(len, 15);
	assert_memory_equal(raw, "Linux left 6.1\n", 15);
	free(raw);
	assert_int_equal(tb_hostsnap_raw(&sv, a, "left", "freebsd", &raw, &len, &err), TB_ERR_NOT_FOUND);
	assert_int_equal(tb_hostsnap_json(&sv, 999, &j, &err), TB_ERR_NOT_FOUND);

	tb_test_store_remove(&ts);
}

/* A router's link profile (hostmeta's "shaping") between two matrices: a
 * pipe that appeared is one row naming it, a changed plr one row of its own. */
static void test_shaping_diff(void **state)
{
	struct tb_test_store ts;
	struct tb_services sv = {0};
	struct tb_error err = {0};
	int64_t a, b, c;
	json_t *j = NULL;
	const json_t *x;

	(void)state;
	tb_test_store_open(&ts, "snapshape");
	sv.store = ts.st;
	a = matrix(sv.store, "no profile");
	b = matrix(sv.store, "loss 2");
	c = matrix(sv.store, "loss 5");
	snapshot(sv.store, a, "router", "freebsd", "{\"kind\":\"freebsd\",\"shaping\":{\"pipes\":{}}}");
	snapshot(sv.store, b, "router", "freebsd",
		 "{\"kind\":\"freebsd\",\"shaping\":{\"pipes\":{\"1\":{\"bw_bps\":0,\"delay_ms\":0,\"plr\":0.02,"
		 "\"queue\":\"50 sl.\"}}}}");
	snapshot(sv.store, c, "router", "freebsd",
		 "{\"kind\":\"freebsd\",\"shaping\":{\"pipes\":{\"1\":{\"bw_bps\":0,\"delay_ms\":0,\"plr\":0.05,"
		 "\"queue\":\"50 sl.\"}}}}");

	assert_int_equal(tb_hostsnap_diff(&sv, b, a, &j, &err), 0);
	x = tb_test_walk(j, "hosts[0].differences", '.');
	assert_int_equal(json_array_size(x), 1);
	assert_string_equal(json_string_value(tb_test_walk(x, "[0].path", '.')), "shaping.pipes.1");
	assert_true(json_is_null(tb_test_walk(x, "[0].other", '.')));
	assert_float_equal(json_real_value(tb_test_walk(x, "[0].matrix.plr", '.')), 0.02, 1e-9);
	json_decref(j);

	assert_int_equal(tb_hostsnap_diff(&sv, c, b, &j, &err), 0);
	x = tb_test_walk(j, "hosts[0].differences", '.');
	assert_int_equal(json_array_size(x), 1);
	assert_string_equal(json_string_value(tb_test_walk(x, "[0].path", '.')), "shaping.pipes.1.plr");
	assert_float_equal(json_real_value(tb_test_walk(x, "[0].matrix", '.')), 0.05, 1e-9);
	assert_float_equal(json_real_value(tb_test_walk(x, "[0].other", '.')), 0.02, 1e-9);
	json_decref(j);
	tb_test_store_remove(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views_from_the_store),
		cmocka_unit_test(test_shaping_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
