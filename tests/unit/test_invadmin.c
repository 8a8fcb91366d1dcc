/*
 * test_invadmin.c - the inventory's admin side: FILE:LINE:COL split from
 * the loader's own messages (a table of broken texts -> line, column), and
 * the last reload's record (a reload callback that fails then succeeds:
 * the old load time is kept on the mistake).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "invadmin.h"
#include "inventory.h"

static const struct {
	const char *text;
	long line, col;
} broken[] = {
	{"version: 1\nmachines:\n  left:\n    role: hots\n    os: {ubuntu: {address: 127.0.0.1}}\n", 4, 11},
	{"version: 1\nmachines:\n  left:\n    role: host\n    colour: red\n", 5, 5},
	{"version: 1\nmachines: [\n", 3, 0}, /* libyaml: at the end of the text */
};

static void test_where_from_loader(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		struct tb_inventory *inv = NULL;
		struct tb_error e = {0};
		long line, col;

		assert_int_not_equal(
			tb_inventory_load_buffer("/etc/t.yaml", broken[i].text, strlen(broken[i].text), 0, &inv, &e),
			0);
		assert_null(inv);
		tb_invadmin_where("/etc/t.yaml", e.message, &line, &col);
		assert_int_equal(line, broken[i].line);
		if (broken[i].col != 0)
			assert_int_equal(col, broken[i].col);
		else
			assert_true(col > 0);
	}
}

static void test_where_table(void **state)
{
	static const struct {
		const char *msg;
		long line, col;
	} cases[] = {
		{"f.yaml:3:7: machines: bad", 3, 7}, {"f.yaml:3: no column", 0, 0}, {"g.yaml:3:7: another file", 0, 0},
		{"f.yaml:x:7: not a number", 0, 0},  {"out of memory", 0, 0},
	};
	long line, col;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tb_invadmin_where("f.yaml", cases[i].msg, &line, &col);
		assert_int_equal(line, cases[i].line);
		assert_int_equal(col, cases[i].col);
	}
}

static int calls;

static int reload_fails_first(void *cls, struct tb_error *err)
{
	(void)cls;
	if (calls++ == 0)
		return tb_fail(err, TB_ERR_CONFIG, "", "f.yaml:2:3: machines: bad");
	return 0;
}

static void test_last_reload(void **state)
{
	struct tb_invadmin *ia = tb_invadmin_new("f.yaml");
	struct tb_error e = {0};
	json_t *j, *last;

	(void)state;
	assert_non_null(ia);
	j = tb_invadmin_json(ia);
	assert_true(json_is_null(json_object_get(j, "last_reload")));
	json_decref(j);
	assert_int_equal(tb_invadmin_reload(ia, "x", &e), TB_ERR_INTERNAL); /* nothing wired */
	tb_invadmin_set_reload(ia, reload_fails_first, NULL);
	assert_int_equal(tb_invadmin_reload(ia, "SIGHUP", &e), TB_ERR_CONFIG);
	assert_string_equal(e.message, "f.yaml:2:3: machines: bad");
	j = tb_invadmin_json(ia);
	last = json_object_get(j, "last_reload");
	assert_false(json_boolean_value(json_object_get(last, "ok")));
	assert_string_equal(json_string_value(json_object_get(last, "by")), "SIGHUP");
	assert_string_equal(json_string_value(json_object_get(last, "error")), "f.yaml:2:3: machines: bad");
	json_decref(j);
	assert_int_equal(tb_invadmin_reload(ia, "admin", &e), 0);
	j = tb_invadmin_json(ia);
	last = json_object_get(j, "last_reload");
	assert_true(json_boolean_value(json_object_get(last, "ok")));
	assert_true(json_is_null(json_object_get(last, "error")));
	assert_string_equal(json_string_value(json_object_get(j, "file")), "f.yaml");
	json_decref(j);
	tb_invadmin_free(ia);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where_from_loader),
		cmocka_unit_test(test_where_table),
		cmocka_unit_test(test_last_reload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
