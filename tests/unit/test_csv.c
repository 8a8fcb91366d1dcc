/*
 * test_csv.c - the one CSV writer every CSV reply uses (csv.h): each JSON
 * kind a column can hold written as RFC 4180 wants it, one table of cases
 * (the value as JSON text, the field it must give).  The results table's
 * Stats values (numbers separated by spaces) and a hosts diff's metadata
 * values (a list of names as JSON) both go through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "csv.h"

static const struct {
	const char *json; /* NULL: the column is absent */
	const char *want; /* the field with its "," */
} cases[] = {
	{NULL, ","},
	{"null", ","},
	{"\"plain\"", "plain,"},
	{"\"\"", ","},
	{"\"a,b\"", "\"a,b\","},
	{"\"say \\\"hi\\\"\"", "\"say \"\"hi\"\"\","},
	{"\"two\\nlines\"", "\"two\nlines\","},
	{"\"cr\\r\"", "\"cr\r\","},
	{"42", "42,"},
	{"-7", "-7,"},
	{"0.1", "0.10000000000000001,"},
	{"1e300", "1.0000000000000001e+300,"},
	{"true", "true,"},
	{"false", "false,"},
	{"[]", ","},
	{"[1, 2.5, 3]", "1 2.5 3,"},
	{"[\"cubic\", \"bbr\"]", "\"[\"\"cubic\"\",\"\"bbr\"\"]\","},
	{"[1, \"x\"]", "\"[1,\"\"x\"\"]\","},
	{"{\"b\": 1, \"a\": \"x\"}", "\"{\"\"a\"\":\"\"x\"\",\"\"b\"\":1}\","},
	{"{}", "{},"},
};

static void test_fields(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_outbuf b = {0};
		json_t *v = cases[i].json != NULL ? json_loads(cases[i].json, JSON_DECODE_ANY, NULL) : NULL;

		if (cases[i].json != NULL)
			assert_non_null(v);
		tb_csv_field(&b, v, 0);
		assert_false(b.nomem);
		if (strcmp(tb_outbuf_str(&b), cases[i].want) != 0)
			fail_msg("case %zu (%s): got [%s], want [%s]", i, cases[i].json ? cases[i].json : "absent",
				 tb_outbuf_str(&b), cases[i].want);
		json_decref(v);
		tb_outbuf_free(&b);
	}
}

/* A header, a last field ending the line, and the text handed over. */
static void test_line(void **state)
{
	static const char *const cols[] = {"a", "b", NULL};
	struct tb_outbuf b = {0};
	json_t *s = json_string("x,y");
	char *out = NULL;
	size_t len = 0;

	(void)state;
	tb_csv_header(&b, cols);
	tb_csv_field(&b, s, 0);
	tb_csv_field(&b, NULL, 1);
	assert_int_equal(tb_csv_take(&b, &out, &len), 0);
	assert_string_equal(out, "a,b\r\n\"x,y\",\r\n");
	assert_int_equal(len, strlen(out));
	free(out);
	json_decref(s);
}

/* An allocation that failed is not handed over as if the text were whole. */
static void test_nomem(void **state)
{
	struct tb_outbuf b = {0};
	char *out = (char *)"x";
	size_t len = 9;

	(void)state;
	tb_outbuf_puts(&b, "a,b\r\n");
	b.nomem = true;
	assert_int_equal(tb_csv_take(&b, &out, &len), -1);
	assert_null(out);
	assert_int_equal(len, 0);
	assert_null(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
