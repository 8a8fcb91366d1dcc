/* api_flame.c - a run's profiles (issue 20 item 2):
 *   GET /api/v1/runs/{id}/profile[?folded=true]: each profiled end's state
 *     ("ok", "unavailable", "failed"), the reason when not ok, samples,
 *     stacks, the command; with folded=true its folded stacks too;
 *   GET /api/v1/runs/{id}/flamegraph.svg[?host=NAME]: the flame graph of
 *     that end (default: the first end that has stacks), drawn now.
 * Read from STATE/profiles/run-ID.json (run_profile.h); one file read, no
 * ssh, no program. */
#include "api.h"

#include <stdio.h>
#include <string.h>

#include "flame.h"
#include "run_profile.h"
#include "services.h"
#include "validate.h"

/* The run's profiles document, or a 400/404 in rp. */
static json_t *load(struct tb_request *rq, struct tb_reply *rp, int64_t *id)
{
	if (tb_parse_id(rq->args[0], 1, id) != 0) {
		tb_fail(&rp->err, TB_ERR_INVALID, "id", "a run id is a positive whole number");
		return NULL;
	}
	return run_profile_load(rq->sv->cfg->state_dir, *id, &rp->err);
}

int api_run_profile(struct tb_request *rq, struct tb_reply *rp)
{
	const char *f = tb_req_query(rq, "folded");
	json_t *doc, *p;
	int64_t id;
	size_t i;
	bool folded = f != NULL && strcmp(f, "true") == 0;

	if (f != NULL && strcmp(f, "true") != 0 && strcmp(f, "false") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "folded", "folded must be true or false");
	if ((doc = load(rq, rp, &id)) == NULL)
		return rp->err.code;
	json_array_foreach(json_object_get(doc, "profiles"), i, p)
	{
		if (!folded)
			json_object_del(p, "folded");
	}
	json_object_set_new(doc, "run", json_integer((json_int_t)id));
	return tb_reply_json(rp, 200, doc);
}

int api_run_flamegraph(struct tb_request *rq, struct tb_reply *rp)
{
	const char *host = tb_req_query(rq, "host");
	json_t *doc, *p, *pick = NULL;
	char title[400];
	int64_t id;
	size_t i;
	int rc;

	if ((doc = load(rq, rp, &id)) == NULL)
		return rp->err.code;
	json_array_foreach(json_object_get(doc, "profiles"), i, p)
	{
		const char *h = json_string_value(json_object_get(p, "host"));

		if (host != NULL ? h != NULL && strcmp(h, host) == 0
				 : pick == NULL && json_integer_value(json_object_get(p, "samples")) > 0)
			pick = p;
	}
	if (pick == NULL && host == NULL) /* none has stacks: the first says why */
		pick = json_array_get(json_object_get(doc, "profiles"), 0);
	if (pick == NULL) {
		json_decref(doc);
		return tb_fail(&rp->err, TB_ERR_NOT_FOUND, "host", "run %lld did not profile %.64s", (long long)id,
			       host != NULL ? host : "any host");
	}
	if (json_integer_value(json_object_get(pick, "samples")) <= 0) {
		const char *why = json_string_value(json_object_get(pick, "reason"));

		rc = tb_fail(&rp->err, TB_ERR_NOT_FOUND, "host", "no flame graph of run %lld: %s", (long long)id,
			     why != NULL ? why : "no stacks were recorded");
		json_decref(doc);
		return rc;
	}
	snprintf(title, sizeof(title), "%s, the %s (%s -F %lld), run id %lld",
		 json_string_value(json_object_get(pick, "host")), json_string_value(json_object_get(pick, "side")),
		 json_string_value(json_object_get(pick, "tool")),
		 (long long)json_integer_value(json_object_get(pick, "frequency")), (long long)id);
	rc = tb_flame_svg(json_string_value(json_object_get(pick, "folded")), title, &rp->text, &rp->text_len);
	json_decref(doc);
	if (rc != 0)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	rp->status = 200;
	rp->content_type = "image/svg+xml; charset=utf-8";
	return 0;
}
