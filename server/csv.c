/* csv.c - CSV fields from JSON values (csv.h). */
#include "csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when every member of array a is a number (an empty one too). */
static int all_numbers(const json_t *a)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x)
	{
		if (!json_is_number(x))
			return 0;
	}
	return 1;
}

/* An array of numbers as the numbers separated by spaces (no quoting needed). */
static void numbers(struct tb_outbuf *b, const json_t *a)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x)
	{
		tb_outbuf_printf(b, "%s%.17g", i > 0 ? " " : "", json_number_value(x));
	}
}

void tb_csv_field(struct tb_outbuf *b, const json_t *v, int last)
{
	char num[64], *dumped = NULL;
	const char *s = "";

	if (json_is_array(v) && all_numbers(v))
		numbers(b, v);
	else if (json_is_string(v))
		s = json_string_value(v);
	else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		s = num;
	} else if (json_is_real(v)) {
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		s = num;
	} else if (json_is_boolean(v))
		s = json_is_true(v) ? "true" : "false";
	else if (v != NULL && !json_is_null(v)) {
		dumped = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		s = dumped != NULL ? dumped : "";
		b->nomem |= dumped == NULL;
	}
	if (strpbrk(s, ",\"\r\n") != NULL) {
		tb_outbuf_add(b, "\"", 1);
		for (const char *p = s; *p; p++) {
			tb_outbuf_add(b, p, 1);
			if (*p == '"')
				tb_outbuf_add(b, "\"", 1);
		}
		tb_outbuf_add(b, "\"", 1);
	} else {
		tb_outbuf_add(b, s, strlen(s));
	}
	tb_outbuf_add(b, last ? "\r\n" : ",", last ? 2 : 1);
	free(dumped);
}

void tb_csv_header(struct tb_outbuf *b, const char *const cols[])
{
	for (int k = 0; cols[k] != NULL; k++) {
		tb_outbuf_puts(b, cols[k]);
		tb_outbuf_puts(b, cols[k + 1] != NULL ? "," : "\r\n");
	}
}

int tb_csv_take(struct tb_outbuf *b, char **out, size_t *len)
{
	*len = b->len;
	if (b->nomem || (*out = tb_outbuf_take(b)) == NULL) {
		tb_outbuf_free(b);
		*out = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}
