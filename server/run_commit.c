/* run_commit.c - a run's outcome into the store: its row, intervals, a
 * summary and the raw outputs.  See run_internal.h. */
#include "run_internal.h"

#include <stdlib.h>

#include "services.h"
#include "store.h"

/* Intervals of a result as rows for the store (data strings malloc'd). */
static size_t interval_rows(const json_t *result, const char *side, struct tb_interval_row *rows, size_t at, size_t max)
{
	const json_t *iv = json_object_get(result, "intervals");
	size_t i;
	json_t *v;

	json_array_foreach(iv, i, v)
	{
		if (at >= max)
			break;
		rows[at].side = side;
		rows[at].seq = (int)i;
		rows[at].data = json_dumps(v, JSON_COMPACT);
		if (rows[at].data != NULL)
			at++;
	}
	return at;
}

int run_commit(struct tb_services *sv, struct tb_run_row *r, const struct outcome *o, struct tb_error *err)
{
	size_t nc = json_array_size(json_object_get(o->client_result, "intervals"));
	size_t ns = json_array_size(json_object_get(o->server_result, "intervals"));
	struct tb_interval_row *rows = calloc(nc + ns + 1, sizeof(*rows));
	struct tb_raw_row raw[4] = {
		{"client", "stdout", tb_outbuf_str(&o->cout), o->cout.len},
		{"client", "stderr", tb_outbuf_str(&o->cerr), o->cerr.len},
		{"server", "stdout", tb_outbuf_str(&o->sout), o->sout.len},
		{"server", "stderr", tb_outbuf_str(&o->serr), o->serr.len},
	};
	char *summary = NULL;
	size_t n = 0;
	int rc;

	if (rows == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	n = interval_rows(o->client_result, "client", rows, n, nc + ns);
	n = interval_rows(o->server_result, "server", rows, n, nc + ns);
	{
		json_t *sum = json_object();
		json_t *cend = json_object_get(o->client_result, "end");
		json_t *send = json_object_get(o->server_result, "end");

		if (sum != NULL) {
			json_object_set(sum, "client", cend != NULL ? cend : json_null());
			json_object_set(sum, "server", send != NULL ? send : json_null());
			if (o->client_result != NULL) {
				static const char *const keep[] = {"cookie",     "version", "system_info", "timesecs",
								   "test_start", "error",   NULL};

				for (int i = 0; keep[i] != NULL; i++) {
					json_t *v = json_object_get(o->client_result, keep[i]);

					if (v != NULL)
						json_object_set(sum, keep[i], v);
				}
			}
			{
				json_t *se = json_object_get(o->server_result, "error");

				json_object_set_new(sum, "server_error", se != NULL ? json_incref(se) : json_null());
			}
			if (o->tool != NULL)
				json_object_set_new(sum, "tool", json_string(o->tool));
			if (o->idle != NULL)
				json_object_set(sum, "idle", o->idle);
			if (o->latency != NULL)
				json_object_set(sum, "latency", o->latency);
			summary = json_dumps(sum, JSON_COMPACT);
			json_decref(sum);
		}
	}
	r->summary = summary;
	rc = tb_store_run_finish(sv->store, r, rows, n, raw, 4, err);
	for (size_t i = 0; i < n; i++)
		free((void *)rows[i].data);
	free(rows);
	free(summary);
	r->summary = NULL;
	return rc;
}
