/* api_samples.c - GET /api/v1/runs/{id}/samples: the CPU and memory samples
 * of a run's hosts (issue 20 item 1), from the run_samples table (a run
 * sampled before the table was, from its run.sample events while the
 * retention keeps them), and a summary per host.  Reads the store only. */
#include "api.h"

#include <string.h>

#include "run_sample.h"
#include "services.h"
#include "store.h"
#include "store_samples.h"
#include "timeutil.h"
#include "validate.h"

static void run_exists(void *cls, const struct tb_run_row *row)
{
	(void)row;
	*(int *)cls = 1;
}

/* One run.sample event into hosts: {host: {"side", "samples": [...]}}. */
static void on_sample_event(void *cls, const struct tb_event_row *ev)
{
	json_t *hosts = cls, *e = json_loads(ev->json, 0, NULL);
	json_t *d = json_object_get(e, "data"), *sample = json_object_get(d, "sample"), *h;
	const char *host = json_string_value(json_object_get(d, "host"));

	if (host != NULL && json_is_object(sample)) {
		if ((h = json_object_get(hosts, host)) == NULL) {
			h = json_pack("{s:O, s:[]}", "side", json_object_get(d, "side"), "samples");
			json_object_set_new(hosts, host, h);
		}
		json_object_set(sample, "at", json_object_get(e, "at"));
		json_array_append(json_object_get(h, "samples"), sample);
	}
	json_decref(e);
}

/* One stored sample into hosts, as on_sample_event. */
static void on_sample_row(void *cls, const struct tb_sample_row *row)
{
	json_t *hosts = cls, *sample = json_loads(row->json, 0, NULL), *h;
	char at[TB_TIME_MAX];

	if (!json_is_object(sample)) {
		json_decref(sample);
		return;
	}
	if ((h = json_object_get(hosts, row->host)) == NULL) {
		h = json_pack("{s:s, s:[]}", "side", row->side, "samples");
		json_object_set_new(hosts, row->host, h);
	}
	tb_time_format_ms(row->at_ms, at);
	json_object_set_new(sample, "at", json_string(at));
	json_object_set_new(sample, "n", json_integer(row->n));
	json_array_append_new(json_object_get(h, "samples"), sample);
}

int api_run_samples(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *hosts, *h;
	const char *name;
	int64_t id;
	int found = 0, rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a run id is a positive whole number");
	if ((rc = tb_store_run_get(rq->sv->store, id, run_exists, &found, &rp->err)) != 0)
		return rc;
	if (!found)
		return tb_fail(&rp->err, TB_ERR_NOT_FOUND, "id", "no run %lld", (long long)id);
	if ((hosts = json_object()) == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_samples_of_run(rq->sv->store, id, on_sample_row, hosts, &rp->err)) != 0 ||
	    (json_object_size(hosts) == 0 &&
	     (rc = tb_store_run_events(rq->sv->store, id, "run.sample", on_sample_event, hosts, &rp->err)) != 0)) {
		json_decref(hosts);
		return rc;
	}
	json_object_foreach(hosts, name, h)
	{
		json_t *sum = tb_sample_summary(json_object_get(h, "samples"));

		json_object_set_new(h, "summary", sum != NULL ? sum : json_null());
	}
	return tb_reply_json(rp, 200, json_pack("{s:I, s:o}", "run", (json_int_t)id, "hosts", hosts));
}
