/* api_reserve.c - GET/POST /reservations, DELETE /reservations/{id}. */
#include "api.h"

#include <string.h>

#include "inventory.h"
#include "reserve.h"
#include "services.h"
#include "timeutil.h"
#include "validate.h"

int api_reservations_list(struct tb_request *rq, struct tb_reply *rp)
{
	return tb_reply_json(rp, 200, tb_reserve_list_json(rq->sv->reserve, tb_now()));
}

/* {"hosts": ["left","right"], "until": "2026-12-04T18:00:00Z", "note": "..."}
 * for the caller (its token's name owns it): 201 granted or queued. */
int api_reservation_create(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"hosts", "until", "note", NULL};
	const char *hosts[TB_RESERVE_HOSTS_MAX], *until_s, *note = NULL;
	json_t *list = json_object_get(rq->body, "hosts"), *v, *out = NULL;
	struct tb_inventory *inv;
	int64_t until;
	size_t i, n = 0;
	int rc;

	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "until", 1, &until_s, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "note", 0, &note, &rp->err)) != 0)
		return rc;
	if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > TB_RESERVE_HOSTS_MAX)
		return tb_fail(&rp->err, TB_ERR_INVALID, "hosts", "hosts must be a list of 1..%d machine names",
			       TB_RESERVE_HOSTS_MAX);
	if (tb_time_parse(until_s, &until) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "until", "until must be a time like 2026-12-04T18:00:00Z");
	if (note != NULL && strlen(note) > 200)
		return tb_fail(&rp->err, TB_ERR_INVALID, "note", "note must be at most 200 characters");
	inv = tb_inv_current_get(rq->sv->invs);
	json_array_foreach(list, i, v)
	{
		const char *h = json_string_value(v);

		if (h == NULL || tb_inventory_find(inv, h) == NULL) {
			rc = tb_fail(&rp->err, TB_ERR_INVALID, "hosts", "no machine named \"%.64s\" in the inventory",
				     h != NULL ? h : "(not a string)");
			break;
		}
		for (size_t k = 0; k < n && rc == 0; k++)
			if (strcmp(hosts[k], h) == 0)
				rc = tb_fail(&rp->err, TB_ERR_INVALID, "hosts", "%.64s is named twice", h);
		if (rc != 0)
			break;
		hosts[n++] = h;
	}
	tb_inv_current_put(rq->sv->invs, inv);
	if (rc != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s%s", hosts[0], n > 1 ? " and more" : "");
	if ((rc = tb_reserve_request(rq->sv->reserve, hosts, n, until, note, rq->who->name, tb_now(), &out,
				     &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 201, json_pack("{s:o}", "reservation", out));
}

/* Release one's own, or break another's as an admin (the audit names it). */
int api_reservation_delete(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc, broke = 0;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a reservation id is a number");
	snprintf(rp->audit_target, sizeof(rp->audit_target), "reservation %lld", (long long)id);
	if ((rc = tb_reserve_release(rq->sv->reserve, id, rq->who->name, rq->who->level >= TB_LEVEL_ADMIN, tb_now(),
				     &broke, &rp->err)) != 0)
		return rc;
	if (broke)
		snprintf(rp->audit_target, sizeof(rp->audit_target), "reservation %lld (broken)", (long long)id);
	rp->status = 204;
	return 0;
}
