/* compare_csv.c - a comparison and a hosts diff as CSV (compare.h). */
#include "compare.h"

#include <string.h>

#include "csv.h"
#include "outbuf.h"

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

	tb_csv_header(&c, cols);
	json_array_foreach(json_object_get(cmp, "cells"), i, r)
	{
		for (int k = 0; cols[k] != NULL; k++)
			tb_csv_field(&c, json_object_get(r, cols[k]), cols[k + 1] == NULL);
	}
	return tb_csv_take(&c, out, len);
}

int tb_compare_hosts_diff_csv(const json_t *diff, char **out, size_t *len)
{
	static const char *const cols[] = {"host", "os", "in", "path", "matrix", "other", NULL};
	struct tb_outbuf c = {0};
	const json_t *h, *d;
	size_t i, j;

	tb_csv_header(&c, cols);
	json_array_foreach(json_object_get(diff, "hosts"), i, h)
	{
		const json_t *ds = json_object_get(h, "differences");
		const char *in = json_string_value(json_object_get(h, "in"));

		if (json_array_size(ds) == 0 && (in == NULL || strcmp(in, "both") != 0)) {
			tb_csv_field(&c, json_object_get(h, "host"), 0);
			tb_csv_field(&c, json_object_get(h, "os"), 0);
			tb_csv_field(&c, json_object_get(h, "in"), 0);
			tb_outbuf_puts(&c, ",,\r\n");
			continue;
		}
		json_array_foreach(ds, j, d)
		{
			tb_csv_field(&c, json_object_get(h, "host"), 0);
			tb_csv_field(&c, json_object_get(h, "os"), 0);
			tb_csv_field(&c, json_object_get(h, "in"), 0);
			tb_csv_field(&c, json_object_get(d, "path"), 0);
			tb_csv_field(&c, json_object_get(d, "matrix"), 0);
			tb_csv_field(&c, json_object_get(d, "other"), 1);
		}
	}
	return tb_csv_take(&c, out, len);
}
