/* compare_csv.c - a comparison and a hosts diff as CSV (compare.h). */
#include "compare.h"

#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "outbuf.h"
#include "run_load.h"

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
	int nload = 0;
	char lcols[2 * 32][48]; /* load.F and baseline_load.F of each of run_load.h's figures */
	const char *all[sizeof(cols) / sizeof(cols[0]) + 2 * 32];
	int na = 0;

	int load = 0;

	/* load.* and baseline_load.* only when a cell has a load: a comparison
	 * of matrices that measured none keeps the columns it had */
	json_array_foreach(json_object_get(cmp, "cells"), i, r)
		load |= json_is_object(json_object_get(r, "load")) ||
			json_is_object(json_object_get(r, "baseline_load"));
	for (int k = 0; cols[k] != NULL; k++)
		all[na++] = cols[k];
	for (int k = 0; load && tb_run_load_figures[k] != NULL && nload < 32; k++, nload++) {
		snprintf(lcols[2 * nload], sizeof(lcols[0]), "load.%s", tb_run_load_figures[k]);
		snprintf(lcols[2 * nload + 1], sizeof(lcols[0]), "baseline_load.%s", tb_run_load_figures[k]);
	}
	for (int k = 0; k < 2 * nload; k++)
		all[na++] = lcols[k];
	all[na] = NULL;
	tb_csv_header(&c, all);
	json_array_foreach(json_object_get(cmp, "cells"), i, r)
	{
		for (int k = 0; all[k] != NULL; k++) {
			const char *dot = strchr(all[k], '.');
			const json_t *v = json_object_get(r, all[k]);

			if (dot != NULL) { /* load.F, baseline_load.F */
				char key[24];

				snprintf(key, sizeof(key), "%.*s", (int)(dot - all[k]), all[k]);
				v = json_object_get(json_object_get(r, key), dot + 1);
			}
			tb_csv_field(&c, v, all[k + 1] == NULL);
		}
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
