/* api_specs.c - the spec library: push a version, list, show, diff
 * (specs.h). */
#include "api.h"

#include <stdio.h>
#include <string.h>

#include "inventory.h"
#include "schedule.h"
#include "services.h"
#include "specs.h"
#include "validate.h"

/* POST /api/v1/specs: body a MatrixSpec; 201 with the new version. */
int api_spec_push(struct tb_request *rq, struct tb_reply *rp)
{
	const char *name = json_string_value(json_object_get(rq->body, "name"));
	struct tb_inventory *inv;
	int64_t version = 0;
	json_t *j;
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "spec %.64s", name != NULL ? name : "?");
	inv = tb_inv_current_get(rq->sv->invs);
	rc = tb_spec_push(rq->sv->store, inv, rq->body, rq->who->name, &version, &rp->err);
	tb_inv_current_put(rq->sv->invs, inv);
	if (rc != 0 || (rc = tb_spec_get_json(rq->sv->store, name, version, &j, &rp->err)) != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "spec %.64s v%lld", name, (long long)version);
	return tb_reply_json(rp, 201, json_pack("{s:o}", "spec", j));
}

/* GET /api/v1/specs: every name with its latest version. */
int api_specs_list(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *list;
	int rc;

	if ((rc = tb_spec_list_json(rq->sv->store, &list, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "specs", list));
}

/* GET /api/v1/specs/{name}: the latest version and the list of versions. */
int api_spec_get(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *spec, *versions;
	int rc;

	if ((rc = tb_spec_get_json(rq->sv->store, rq->args[0], 0, &spec, &rp->err)) != 0)
		return rc;
	if ((rc = tb_spec_versions_json(rq->sv->store, rq->args[0], &versions, &rp->err)) != 0) {
		json_decref(spec);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:o, s:o}", "spec", spec, "versions", versions));
}

/* A version number from s (field names the parameter). */
static int version_of(const char *s, const char *field, struct tb_reply *rp, int64_t *v)
{
	if (s == NULL)
		return tb_fail(&rp->err, TB_ERR_INVALID, field, "%s is required: a version number (1, 2, ...)", field);
	if (tb_parse_id(s, 1, v) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, field, "%s must be a version number (1, 2, ...)", field);
	return 0;
}

/* GET /api/v1/specs/{name}/versions/{v} */
int api_spec_version(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t v;
	json_t *spec;
	int rc;

	if ((rc = version_of(rq->args[1], "version", rp, &v)) != 0 ||
	    (rc = tb_spec_get_json(rq->sv->store, rq->args[0], v, &spec, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "spec", spec));
}

/* GET /api/v1/specs/{name}/diff?a=&b= */
int api_spec_diff(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *sa = NULL, *sb = NULL, *changes;
	int64_t a, b;
	int rc;

	if ((rc = version_of(tb_req_query(rq, "a"), "a", rp, &a)) != 0 ||
	    (rc = version_of(tb_req_query(rq, "b"), "b", rp, &b)) != 0)
		return rc;
	if ((rc = tb_spec_get_json(rq->sv->store, rq->args[0], a, &sa, &rp->err)) != 0 ||
	    (rc = tb_spec_get_json(rq->sv->store, rq->args[0], b, &sb, &rp->err)) != 0) {
		json_decref(sa);
		return rc;
	}
	changes = tb_spec_diff(json_object_get(sa, "spec"), json_object_get(sb, "spec"));
	json_decref(sa);
	json_decref(sb);
	if (changes == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	return tb_reply_json(rp, 200,
			     json_pack("{s:s, s:I, s:I, s:o}", "name", rq->args[0], "a", (json_int_t)a, "b",
				       (json_int_t)b, "changes", changes));
}

/* PUT /api/v1/specs/{name}/schedule (schedule.h) */
int api_spec_schedule_put(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *j;
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "spec %.64s", rq->args[0]);
	if ((rc = tb_schedule_put(rq->sv->store, rq->args[0], rq->body, rq->who->name, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "schedule", j));
}

/* DELETE /api/v1/specs/{name}/schedule */
int api_spec_schedule_delete(struct tb_request *rq, struct tb_reply *rp)
{
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "spec %.64s", rq->args[0]);
	if ((rc = tb_schedule_delete(rq->sv->store, rq->args[0], &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 204, NULL);
}

/* GET /api/v1/schedules: each with its next time and last verdicts. */
int api_schedules_list(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *list;
	int rc;

	if ((rc = tb_schedule_list_json(rq->sv->store, NULL, &list, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "schedules", list));
}

/* GET /api/v1/matrices/{id}/gate: the verdict of a scheduled matrix. */
int api_matrix_gate(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	json_t *j;
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a matrix id is a positive whole number");
	if ((rc = tb_schedule_gate_json(rq->sv->store, id, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "gate", j));
}
