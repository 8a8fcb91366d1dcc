/* api_audit.c - GET /audit: who did what to which host, when. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "store.h"
#include "timeutil.h"
#include "validate.h"

static void add_row(void *cls, const struct tb_audit_row *r)
{
	json_array_append_new(cls, json_pack("{s:I, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "id",
					     (json_int_t)r->id, "at", tb_time_json(r->at), "actor", r->actor, "remote",
					     r->remote, "method", r->method, "path", r->path, "action", r->action,
					     "target", r->target, "status", r->status, "result", r->result));
}

int api_audit_list(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_audit_filter f = {.limit = 100};
	const char *since = tb_req_query(rq, "since"), *limit = tb_req_query(rq, "limit"), *before;
	json_t *list;
	int rc;

	f.target = tb_req_query(rq, "host");
	f.actor = tb_req_query(rq, "actor");
	f.action = tb_req_query(rq, "action");
	before = tb_req_query(rq, "before");
	if (before != NULL && tb_parse_id(before, 1, &f.before) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "before",
			       "before must be an audit entry id (a positive whole number)");
	if (since != NULL && tb_time_parse(since, &f.since) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "since", "since must be a time like 2026-12-02T16:00:00Z");
	if (limit != NULL) {
		size_t n = strspn(limit, "0123456789");
		long v;

		/* digits only: strtol alone would take " 5" and "+5" */
		v = n >= 1 && n <= 4 && limit[n] == '\0' ? strtol(limit, NULL, 10) : 0;
		if (v < 1 || v > 1000)
			return tb_fail(&rp->err, TB_ERR_INVALID, "limit", "limit must be 1..1000 (digits only)");
		f.limit = (int)v;
	}
	list = json_array();
	if ((rc = tb_store_audit_list(rq->sv->store, &f, add_row, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:o}", "audit", list));
}
