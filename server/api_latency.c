/* api_latency.c - GET /api/v1/runs/{id}/latency: the RTT stream beside a run
 * (issue 20 item 7), from its run.rtt events: each second's bin (min,
 * median, max, received, lost) idle and under load, and the summary of both
 * phases (median and p95 of every packet's RTT) with the ratio of the
 * medians: the bufferbloat.  Reads the store only. */
#include "api.h"

#include <string.h>

#include "irtt_parse.h"
#include "services.h"
#include "store.h"
#include "validate.h"

struct acc {
	json_t *idle, *load; /* the bins as stored (with their "rtt" lists) */
	json_t *tool, *host, *server;
	json_int_t attempt; /* the run's last attempt (a retried run measured each) */
};

/* The run exists; its kept latency summary (its summary's "latency") into cls. */
struct found {
	int found;
	json_t *kept;
};

static void run_exists(void *cls, const struct tb_run_row *row)
{
	struct found *f = cls;
	json_t *s = row->summary != NULL ? json_loads(row->summary, 0, NULL) : NULL;

	f->found = 1;
	f->kept = json_incref(json_object_get(s, "latency"));
	json_decref(s);
}

static void on_rtt_event(void *cls, const struct tb_event_row *ev)
{
	struct acc *a = cls;
	json_t *e = json_loads(ev->json, 0, NULL), *d = json_object_get(e, "data"), *bin = json_object_get(d, "bin");
	const char *phase = json_string_value(json_object_get(d, "phase"));
	json_int_t attempt = json_integer_value(json_object_get(d, "attempt"));

	if (attempt > a->attempt) { /* a later attempt: only its stream counts */
		json_array_clear(a->idle);
		json_array_clear(a->load);
		a->attempt = attempt;
	}
	if (json_is_object(bin) && phase != NULL && attempt == a->attempt) {
		json_object_set(bin, "at_ms", json_object_get(d, "at_ms"));
		json_array_append(strcmp(phase, "idle") == 0 ? a->idle : a->load, bin);
		if (a->tool == NULL || strcmp(phase, "load") == 0) {
			json_decref(a->tool);
			a->tool = json_incref(json_object_get(d, "tool"));
		}
		if (a->host == NULL) {
			a->host = json_incref(json_object_get(d, "host"));
			a->server = json_incref(json_object_get(d, "server"));
		}
	}
	json_decref(e);
}

/* The bins without their packets' lists (the summary has read those). */
static json_t *brief(const json_t *bins)
{
	json_t *out = json_array(), *b;
	size_t i;

	json_array_foreach(bins, i, b)
	{
		json_t *c = json_copy(b);

		json_object_del(c, "rtt");
		json_array_append_new(out, c);
	}
	return out;
}

/* The reply from the run's run.rtt events; when the event store's retention
 * has taken them, the summary the run kept (stored, a run's "latency") with
 * no bins. */
static json_t *reply(int64_t id, struct acc *a, const json_t *kept)
{
	json_t *sum;

	if (json_array_size(a->idle) == 0 && json_array_size(a->load) == 0 && json_is_object(kept))
		return json_pack("{s:I, s:O?, s:O?, s:O?, s:{s:O?, s:O?, s:O?}, s:{s:[], s:[]}}", "run", (json_int_t)id,
				 "tool", json_object_get(kept, "tool"), "client", json_object_get(kept, "client"),
				 "server", json_object_get(kept, "server"), "summary", "idle",
				 json_object_get(kept, "idle"), "load", json_object_get(kept, "load"), "median_ratio",
				 json_object_get(kept, "median_ratio"), "bins", "idle", "load");
	if ((sum = tb_rtt_summary(a->idle, a->load)) == NULL)
		return NULL;
	return json_pack("{s:I, s:O?, s:O?, s:O?, s:o, s:{s:o, s:o}}", "run", (json_int_t)id, "tool", a->tool, "client",
			 a->host, "server", a->server, "summary", sum, "bins", "idle", brief(a->idle), "load",
			 brief(a->load));
}

int api_run_latency(struct tb_request *rq, struct tb_reply *rp)
{
	struct acc a = {json_array(), json_array(), NULL, NULL, NULL, 0};
	json_t *out;
	int64_t id;
	struct found found = {0, NULL};
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		rc = tb_fail(&rp->err, TB_ERR_INVALID, "id", "a run id is a positive whole number");
	else if ((rc = tb_store_run_get(rq->sv->store, id, run_exists, &found, &rp->err)) != 0)
		;
	else if (!found.found)
		rc = tb_fail(&rp->err, TB_ERR_NOT_FOUND, "id", "no run %lld", (long long)id);
	else if (a.idle == NULL || a.load == NULL)
		rc = tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	else if ((rc = tb_store_run_events(rq->sv->store, id, "run.rtt", on_rtt_event, &a, &rp->err)) == 0) {
		out = reply(id, &a, found.kept);
		rc = out != NULL ? tb_reply_json(rp, 200, out) : tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	}
	json_decref(a.idle);
	json_decref(a.load);
	json_decref(a.tool);
	json_decref(a.host);
	json_decref(a.server);
	json_decref(found.kept);
	return rc;
}
