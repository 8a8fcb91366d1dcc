/* api_inventory.c - GET /inventory, POST /inventory/check, POST
 * /inventory/reload (admin).  The file stays the source of truth: nothing
 * here writes it. */
#include "api.h"

#include "inventory.h"
#include "invadmin.h"
#include "services.h"
#include "validate.h"

/* What is loaded: the file, its load time, the last reload and the
 * machines (tb_machine_to_json: no secrets, no paths of secret files). */
static json_t *inventory_json(struct tb_services *sv)
{
	struct tb_inventory *inv = tb_inv_current_get(sv->invs);
	json_t *j = tb_invadmin_json(sv->invadmin), *list = json_array();

	for (size_t i = 0; list != NULL && i < inv->nmachines; i++)
		json_array_append_new(list, tb_machine_to_json(&inv->machines[i]));
	tb_inv_current_put(sv->invs, inv);
	if (j == NULL || list == NULL) {
		json_decref(j);
		json_decref(list);
		return NULL;
	}
	json_object_set_new(j, "machines", list);
	return j;
}

int api_inventory_get(struct tb_request *rq, struct tb_reply *rp)
{
	return tb_reply_json(rp, 200, json_pack("{s:o}", "inventory", inventory_json(rq->sv)));
}

/* The proposed text is read as --check-config reads the file (key and
 * password files must exist with their modes), named as the loaded file so
 * that the messages read the same.  A mistake is a 200 with ok false: the
 * check worked, the text did not. */
int api_inventory_check(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"text", NULL};
	const char *name = tb_invadmin_path(rq->sv->invadmin);
	struct tb_inventory *inv = NULL;
	struct tb_error e = {0};
	json_t *t = json_object_get(rq->body, "text"), *errors;
	long line, col;
	int rc;

	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0)
		return rc;
	if (!json_is_string(t))
		return tb_fail(&rp->err, TB_ERR_INVALID, "text",
			       "text must be the proposed inventory file as a string");
	if ((errors = json_array()) == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	rc = tb_inventory_load_buffer(name, json_string_value(t), json_string_length(t), TB_INV_CHECK_FILES, &inv, &e);
	if (rc == 0) {
		json_int_t n = (json_int_t)inv->nmachines;

		tb_inventory_free(inv);
		return tb_reply_json(rp, 200, json_pack("{s:b, s:I, s:o}", "ok", 1, "machines", n, "errors", errors));
	}
	tb_invadmin_where(name, e.message, &line, &col);
	json_array_append_new(errors, json_pack("{s:s, s:I, s:I, s:s}", "message", e.message, "line", (json_int_t)line,
						"col", (json_int_t)col, "code", tb_err_name(e.code)));
	return tb_reply_json(rp, 200, json_pack("{s:b, s:n, s:o}", "ok", 0, "machines", "errors", errors));
}

/* As SIGHUP: the file is read again; on a mistake the old inventory stays
 * and the reply is the mistake (the edge audits both).  The reload reads a
 * local file and stats its key files: no ssh, no program, no BMC. */
int api_inventory_reload(struct tb_request *rq, struct tb_reply *rp)
{
	char msg[TB_ERROR_MSG_MAX];
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", tb_invadmin_path(rq->sv->invadmin));
	if ((rc = tb_invadmin_reload(rq->sv->invadmin, rq->who->name, &rp->err)) == TB_ERR_CONFIG) {
		/* the file's mistake, not the server's: a 400 naming FILE:LINE:COL */
		snprintf(msg, sizeof(msg), "%s", rp->err.message);
		return tb_fail(&rp->err, TB_ERR_INVALID, "inventory", "%.400s (the old inventory is kept)", msg);
	}
	if (rc != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "inventory", inventory_json(rq->sv)));
}
