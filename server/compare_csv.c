/* compare_csv.c - a comparison and a hosts diff as CSV (compare.h). */
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

/* One field (RFC 4180: quoted when it holds a comma, quote or line break):
 * a string as it is, a number, true/false, null as empty, anything else
 * (params, a metadata value) as compact JSON with sorted keys. */
static void field(struct tb_outbuf *c, const json_t *v, int last)
{
	char num[64], *dumped = NULL;
	const char *s = "";

	if (json_is_string(v))
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
		dumped = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		s = dumped != NULL ? dumped : "";
		c->nomem |= dumped == NULL;
	}
	if (strpbrk(s, ",\"\r\n") != NULL) {
		tb_outbuf_add(c, "\"", 1);
		for (const char *p = s; *p; p++) {
			tb_outbuf_add(c, p, 1);
			if (*p == '"')
				tb_outbuf_add(c, "\"", 1);
		}
		tb_outbuf_add(c, "\"", 1);
	} else {
		tb_outbuf_add(c, s, strlen(s));
	}
	tb_outbuf_add(c, last ? "\r\n" : ",", last ? 2 : 1);
	free(dumped);
}

static void header(struct tb_outbuf *c, const char *const cols[])
{
	for (int k = 0; cols[k] != NULL; k++) {
		tb_outbuf_puts(c, cols[k]);
		tb_outbuf_puts(c, cols[k + 1] != NULL ? "," : "\r\n");
	}
}

static int finish(struct tb_outbuf *c, char **out, size_t *len)
{
	*len = c->len;
	if (c->nomem || (*out = tb_outbuf_take(c)) == NULL) {
		tb_outbuf_free(c);
		*out = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}

int tb_compare_csv(const json_t *cmp, char **out, size_t *len)
{
	static const char *const cols[] = {"cell",
					   "baseline_cell",
					   "client",
					   "client_os",
					   "server",
					   "server_os",
					   "link",
					   "protocol",
					   "direction",
					   "params",
					   "n",
					   "baseline_n",
					   "median",
					   "baseline_median",
					   "change_pct",
					   "q1",
					   "q3",
					   "cv",
					   "noisy",
					   "baseline_q1",
					   "baseline_q3",
					   "baseline_cv",
					   "baseline_noisy",
					   "overlap",
					   "beyond_spread",
					   "verdict",
					   NULL};
	struct tb_outbuf c = {0};
	const json_t *r;
	size_t i;

	header(&c, cols);
	json_array_foreach(json_object_get(cmp, "cells"), i, r)
	{
		for (int k = 0; cols[k] != NULL; k++)
			field(&c, json_object_get(r, cols[k]), cols[k + 1] == NULL);
	}
	return finish(&c, out, len);
}

int tb_compare_hosts_diff_csv(const json_t *diff, char **out, size_t *len)
{
	static const char *const cols[] = {"host", "os", "in", "path", "matrix", "other", NULL};
	struct tb_outbuf c = {0};
	const json_t *h, *d;
	size_t i, j;

	header(&c, cols);
	json_array_foreach(json_object_get(diff, "hosts"), i, h)
	{
		const json_t *ds = json_object_get(h, "differences");
		const char *in = json_string_value(json_object_get(h, "in"));

		if (json_array_size(ds) == 0 && (in == NULL || strcmp(in, "both") != 0)) {
			field(&c, json_object_get(h, "host"), 0);
			field(&c, json_object_get(h, "os"), 0);
			field(&c, json_object_get(h, "in"), 0);
			tb_outbuf_puts(&c, ",,\r\n");
			continue;
		}
		json_array_foreach(ds, j, d)
		{
			field(&c, json_object_get(h, "host"), 0);
			field(&c, json_object_get(h, "os"), 0);
			field(&c, json_object_get(h, "in"), 0);
			field(&c, json_object_get(d, "path"), 0);
			field(&c, json_object_get(d, "matrix"), 0);
			field(&c, json_object_get(d, "other"), 1);
		}
	}
	return finish(&c, out, len);
}
