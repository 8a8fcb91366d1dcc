/* api_hosts.c - GET /hosts, GET /hosts/{name}, POST /hosts/{name}/trust. */
#include "api.h"

#include "services.h"
#include "validate.h"
#include "inventory.h"
#include "bmcwatch.h"
#include "console.h"
#include "hosts.h"
#include "idle.h"
#include "reserve.h"
#include "wake.h"

/* A machine as GET /hosts shows it: the inventory, reachability, the
 * BMC's view and the idle power-off countdown. */
static json_t *host_json(struct tb_services *sv, const struct tb_machine *m)
{
	json_t *j = tb_hosts_machine_json(sv->hosts, m);

	if (j != NULL) {
		json_object_set_new(j, "bmc", tb_bmcwatch_json(sv->bmcwatch, m));
		json_object_set_new(j, "idle_poweroff", tb_idle_json(sv->idle, m));
		json_object_set_new(j, "wake", tb_wake_json(sv->wake, m));
		json_object_set_new(j, "console_state", tb_console_state_json(sv->consoles, m->name));
		json_object_set_new(j, "reservation", tb_reserve_host_json(sv->reserve, m->name));
	}
	return j;
}

int api_hosts_list(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_inventory *inv = tb_inv_current_get(rq->sv->invs);
	json_t *list = json_array();

	for (size_t i = 0; list != NULL && i < inv->nmachines; i++)
		json_array_append_new(list, host_json(rq->sv, &inv->machines[i]));
	tb_inv_current_put(rq->sv->invs, inv);
	return tb_reply_json(rp, 200, json_pack("{s:o}", "hosts", list));
}

int api_host_get(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_inventory *inv = tb_inv_current_get(rq->sv->invs);
	const struct tb_machine *m = tb_inventory_find(inv, rq->args[0]);
	int rc;

	if (m == NULL)
		rc = tb_fail(&rp->err, TB_ERR_NOT_FOUND, "name", "no machine named \"%.64s\" in the inventory",
			     rq->args[0]);
	else
		rc = tb_reply_json(rp, 200, json_pack("{s:o}", "host", host_json(rq->sv, m)));
	tb_inv_current_put(rq->sv->invs, inv);
	return rc;
}

int api_host_trust(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"os", "fingerprint", NULL};
	const char *os, *fp;
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "os", 1, &os, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "fingerprint", 1, &fp, &rp->err)) != 0 ||
	    (rc = tb_hosts_trust(rq->sv->hosts, rq->args[0], os, fp, rq->who->name, &rp->err)) != 0)
		return rc;
	return api_host_get(rq, rp);
}
