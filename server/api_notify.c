/* api_notify.c - admin: notification rules (list, create, show, change,
 * delete), a test message, a rule's delivery log and every rule's newest
 * deliveries (the status page's recent notifications).  Sending is the
 * notifier's thread's (notify.h): no handler waits on a receiver. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"
#include "services.h"
#include "store_notify.h"
#include "timeutil.h"
#include "validate.h"

static void add_rule(void *cls, const struct tb_notify_rule_row *r)
{
	json_t *j = tb_notify_rule_json(r);

	if (j != NULL)
		json_array_append_new(cls, j);
}

static int rule_id(struct tb_request *rq, struct tb_reply *rp, int64_t *id)
{
	if (tb_parse_id(rq->args[0], 1, id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id",
			       "a notification rule id is a positive whole number, got \"%.32s\"", rq->args[0]);
	snprintf(rp->audit_target, sizeof(rp->audit_target), "notification %lld", (long long)*id);
	return 0;
}

/* Reply with rule id (status), or 404. */
static int reply_rule(struct tb_request *rq, struct tb_reply *rp, int64_t id, unsigned status)
{
	json_t *list = json_array(), *one;
	int rc;

	if (list == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_notify_rule_each(rq->sv->store, id, add_rule, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	one = json_incref(json_array_get(list, 0));
	json_decref(list);
	if (one == NULL)
		return tb_fail(&rp->err, TB_ERR_NOT_FOUND, "id", "no notification rule %lld", (long long)id);
	return tb_reply_json(rp, status, one);
}

int api_notify_list(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *list = json_array();
	int rc;

	if (list == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_notify_rule_each(rq->sv->store, 0, add_rule, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:o}", "rules", list));
}

/* Validate the body and store it (id 0: a new rule). */
static int save(struct tb_request *rq, struct tb_reply *rp, int64_t id)
{
	char dir[1024];
	const char *name;
	json_t *spec;
	char *text;
	int rc;

	tb_notify_secrets_dir(rq->sv->cfg->state_dir, dir, sizeof(dir));
	if ((rc = tb_notify_rule_parse(rq->body, dir, &spec, &name, &rp->err)) != 0)
		return rc;
	text = json_dumps(spec, JSON_COMPACT);
	json_decref(spec);
	if (text == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if (id == 0)
		rc = tb_store_notify_rule_insert(rq->sv->store, name, text, &id, &rp->err);
	else
		rc = tb_store_notify_rule_update(rq->sv->store, id, name, text, &rp->err);
	free(text);
	if (rc != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "notification %lld", (long long)id);
	tb_notify_kick(rq->sv->notify);
	return reply_rule(rq, rp, id, 201);
}

int api_notify_create(struct tb_request *rq, struct tb_reply *rp)
{
	return save(rq, rp, 0);
}

int api_notify_get(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if ((rc = rule_id(rq, rp, &id)) != 0)
		return rc;
	return reply_rule(rq, rp, id, 200);
}

int api_notify_update(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if ((rc = rule_id(rq, rp, &id)) != 0 || (rc = save(rq, rp, id)) != 0)
		return rc;
	rp->status = 200;
	return 0;
}

int api_notify_delete(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if ((rc = rule_id(rq, rp, &id)) != 0 || (rc = tb_store_notify_rule_delete(rq->sv->store, id, &rp->err)) != 0)
		return rc;
	tb_notify_kick(rq->sv->notify);
	return tb_reply_json(rp, 204, NULL);
}

int api_notify_test(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id, delivery;
	int rc;

	if ((rc = rule_id(rq, rp, &id)) != 0 ||
	    (rc = tb_notify_test(rq->sv->notify, id, rq->who != NULL ? rq->who->name : NULL, &delivery, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 202, json_pack("{s:I, s:s}", "delivery", (json_int_t)delivery, "state", "pending"));
}

static void add_delivery(void *cls, const struct tb_notify_delivery_row *r)
{
	json_t *j = json_pack(
		"{s:I, s:o, s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:s?}", "id", (json_int_t)r->id, "event",
		r->event_id != 0 ? json_integer(r->event_id) : json_null(), "trigger", r->trigger, "state", r->state,
		"attempts", r->attempts, "created_at", tb_time_json(r->created_at), "finished_at",
		r->finished_at != 0 ? tb_time_json(r->finished_at) : json_null(), "next_attempt_at",
		strcmp(r->state, "pending") == 0 ? tb_time_json(r->next_at_ms / 1000) : json_null(), "last_status",
		r->last_status != 0 ? json_integer(r->last_status) : json_null(), "last_error", r->last_error);
	json_t *msg = json_loads(r->message, 0, NULL);

	if (j == NULL) {
		json_decref(msg);
		return;
	}
	json_object_set_new(j, "title",
			    json_is_string(json_object_get(msg, "title")) ? json_incref(json_object_get(msg, "title"))
									  : json_null());
	json_decref(msg);
	json_array_append_new(cls, j);
}

static void count_rule(void *cls, const struct tb_notify_rule_row *r)
{
	(void)r;
	++*(int *)cls;
}

int api_notify_deliveries(struct tb_request *rq, struct tb_reply *rp)
{
	const char *lim = tb_req_query(rq, "limit");
	int64_t id, limit = 50;
	json_t *list;
	int rc, found = 0;

	if ((rc = rule_id(rq, rp, &id)) != 0)
		return rc;
	if (lim != NULL && (tb_parse_id(lim, 1, &limit) != 0 || limit > TB_NOTIFY_KEEP))
		return tb_fail(&rp->err, TB_ERR_INVALID, "limit", "limit must be 1..%d", TB_NOTIFY_KEEP);
	/* a rule that does not exist has no log: 404, not an empty one */
	if ((rc = tb_store_notify_rule_each(rq->sv->store, id, count_rule, &found, &rp->err)) != 0)
		return rc;
	if (found == 0)
		return tb_fail(&rp->err, TB_ERR_NOT_FOUND, "id", "no notification rule %lld", (long long)id);
	if ((list = json_array()) == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_notify_delivery_each(rq->sv->store, id, (int)limit, add_delivery, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:I, s:o}", "rule", (json_int_t)id, "deliveries", list));
}

/* add_delivery, with the rule's id (the log of every rule). */
static void add_recent(void *cls, const struct tb_notify_delivery_row *r)
{
	size_t n = json_array_size(cls);

	add_delivery(cls, r);
	if (json_array_size(cls) > n)
		json_object_set_new(json_array_get(cls, n), "rule", json_integer(r->rule_id));
}

/* GET /api/v1/notifications/deliveries?limit=N (default 20, at most
 * TB_NOTIFY_KEEP): every rule's deliveries, newest first, each naming its
 * rule.  One store query. */
int api_notify_recent(struct tb_request *rq, struct tb_reply *rp)
{
	const char *lim = tb_req_query(rq, "limit");
	int64_t limit = 20;
	json_t *list;
	int rc;

	if (lim != NULL && (tb_parse_id(lim, 1, &limit) != 0 || limit > TB_NOTIFY_KEEP))
		return tb_fail(&rp->err, TB_ERR_INVALID, "limit", "limit must be 1..%d", TB_NOTIFY_KEEP);
	if ((list = json_array()) == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_notify_delivery_recent(rq->sv->store, (int)limit, add_recent, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:o}", "deliveries", list));
}
