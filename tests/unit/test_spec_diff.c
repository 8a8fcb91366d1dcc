/*
 * test_spec_diff.c - the spec library's diff (specs.h tb_spec_diff) as a table:
 * two specs -> the expected changes, as JSON text.  Pure: no store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "specs.h"

static const struct {
	const char *a, *b, *want;
} cases[] = {
	{"{\"x\":1}", "{\"x\":1}", "[]"},
	{"{\"x\":1}", "{\"x\":2}", "[{\"path\":\"/x\",\"op\":\"changed\",\"a\":1,\"b\":2}]"},
	{"{\"x\":1}", "{}", "[{\"path\":\"/x\",\"op\":\"removed\",\"a\":1}]"},
	{"{}", "{\"y\":[1]}", "[{\"path\":\"/y\",\"op\":\"added\",\"b\":[1]}]"},
	/* arrays of the same length index by index, else as a whole */
	{"{\"p\":[{\"c\":\"l\"}]}", "{\"p\":[{\"c\":\"r\"}]}",
	 "[{\"path\":\"/p/0/c\",\"op\":\"changed\",\"a\":\"l\",\"b\":\"r\"}]"},
	{"{\"p\":[1]}", "{\"p\":[1,2]}", "[{\"path\":\"/p\",\"op\":\"changed\",\"a\":[1],\"b\":[1,2]}]"},
	/* JSON pointer escapes */
	{"{\"a/b~\":1}", "{\"a/b~\":2}", "[{\"path\":\"/a~1b~0\",\"op\":\"changed\",\"a\":1,\"b\":2}]"},
	{"{\"i\":{\"o\":0}}", "{\"i\":{\"o\":0,\"n\":null}}", "[{\"path\":\"/i/n\",\"op\":\"added\",\"b\":null}]"},
};

static void test_diff_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *a = json_loads(cases[i].a, 0, NULL), *b = json_loads(cases[i].b, 0, NULL);
		json_t *want = json_loads(cases[i].want, 0, NULL), *got = tb_spec_diff(a, b);

		assert_non_null(got);
		if (!json_equal(got, want)) {
			char *s = json_dumps(got, 0);

			print_error("case %zu: got %s want %s\n", i, s, cases[i].want);
			free(s);
			fail();
		}
		json_decref(a);
		json_decref(b);
		json_decref(want);
		json_decref(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_diff_table)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
