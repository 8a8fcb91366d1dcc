/* api_power.c - power and boot actions on a host, GRUB entries, and actions. */
#include "api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "services.h"
#include "inventory.h"
#include "validate.h"
#include "boot.h"
#include "power.h"
#include "console.h"

static int reply_action(struct tb_request *rq, struct tb_reply *rp, int64_t id)
{
	json_t *j;
	int rc;

	if ((rc = tb_actions_get_json(rq->sv->actions, id, &j, &rp->err)) != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", json_string_value(json_object_get(j, "host")));
	return tb_reply_json(rp, 202, json_pack("{s:o}", "action", j));
}

int api_host_power(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"action", NULL};
	const char *action;
	int64_t id;
	int rc, op;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "action", 1, &action, &rp->err)) != 0)
		return rc;
	if ((op = tb_power_op_parse(action)) < 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "action",
			       "action must be on, off, cycle, reset or soft, got \"%.32s\"", action);
	rc = tb_power_start(rq->sv, rq->args[0], (enum tb_power_op)op, json_pack("{s:s}", "action", action),
			    rq->who->name, NULL, &id, &rp->err);
	if (rc == 0 && op != TB_POWER_OFF && strcmp(action, "soft") != 0)
		tb_console_boot_mark(rq->sv->consoles, rq->args[0], "power");
	return rc != 0 ? rc : reply_action(rq, rp, id);
}

int api_host_boot(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"os", "make_default", NULL};
	json_t *md = json_object_get(rq->body, "make_default");
	const char *os;
	int64_t id;
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "os", 1, &os, &rp->err)) != 0)
		return rc;
	if (md != NULL && !json_is_boolean(md))
		return tb_fail(&rp->err, TB_ERR_INVALID, "make_default", "make_default must be true or false");
	if ((rc = tb_boot_start(rq->sv, rq->args[0], os, json_is_true(md), rq->who->name, &id, &rp->err)) != 0)
		return rc;
	tb_console_boot_mark(rq->sv->consoles, rq->args[0], "boot");
	return reply_action(rq, rp, id);
}

int api_host_boot_entries(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_inventory *inv = tb_inv_current_get(rq->sv->invs);
	const struct tb_machine *m = tb_inventory_find(inv, rq->args[0]);
	const char *refresh = tb_req_query(rq, "refresh");
	unsigned int status = 200;
	json_t *j = NULL;
	int rc;

	if (refresh != NULL && strcmp(refresh, "0") != 0 && strcmp(refresh, "1") != 0)
		rc = tb_fail(&rp->err, TB_ERR_INVALID, "refresh", "refresh must be 0 or 1");
	else if (m == NULL)
		rc = tb_fail(&rp->err, TB_ERR_NOT_FOUND, "name", "no machine named \"%.64s\" in the inventory",
			     rq->args[0]);
	else /* from the prober's cache: never waits on the host */
		rc = tb_boot_entries(rq->sv, m, refresh != NULL && strcmp(refresh, "1") == 0, &j, &status, &rp->err);
	tb_inv_current_put(rq->sv->invs, inv);
	return rc != 0 ? rc : tb_reply_json(rp, status, j);
}

int api_action_get(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *j;
	int64_t id;
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "an action id is a positive whole number");
	if ((rc = tb_actions_get_json(rq->sv->actions, id, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "action", j));
}

int api_actions_list(struct tb_request *rq, struct tb_reply *rp)
{
	const char *host = tb_req_query(rq, "host"), *limit = tb_req_query(rq, "limit");
	json_t *list;
	int64_t n = 50;
	int rc;

	if (limit != NULL && (tb_parse_id(limit, 1, &n) != 0 || n > 1000))
		return tb_fail(&rp->err, TB_ERR_INVALID, "limit", "limit must be 1..1000");
	if ((rc = tb_actions_list_json(rq->sv->actions, host, (int)n, &list, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "actions", list));
}

int api_action_cancel(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "an action id is a positive whole number");
	if ((rc = tb_actions_cancel(rq->sv->actions, id, &rp->err)) != 0)
		return rc;
	return reply_action(rq, rp, id);
}
