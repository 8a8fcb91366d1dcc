/* api_tokens.c - admin: list, create (secret shown once) and revoke API tokens. */
#include "api.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "auth.h"
#include "store.h"
#include "validate.h"
#include "events.h"
#include "timeutil.h"
#include "wipe.h"

static json_t *token_json(const struct tb_token_row *r)
{
	return json_pack("{s:I, s:s, s:s, s:o, s:o, s:b}", "id", (json_int_t)r->id, "name", r->name, "role", r->role,
			 "created_at", tb_time_json(r->created_at), "last_used_at", tb_time_json(r->last_used_at),
			 "revoked", r->revoked);
}

static void add_token(void *cls, const struct tb_token_row *r)
{
	json_array_append_new(cls, token_json(r));
}

static void set_token(void *cls, const struct tb_token_row *r)
{
	*(json_t **)cls = token_json(r);
}

int api_tokens_list(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *list = json_array();
	int rc;

	if ((rc = tb_store_token_list(rq->sv->store, add_token, list, &rp->err)) != 0) {
		json_decref(list);
		return rc;
	}
	return tb_reply_json(rp, 200, json_pack("{s:o}", "tokens", list));
}

static int valid_token_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

int api_token_create(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"name", "role", NULL};
	char secret[TB_SECRET_MAX];
	const char *name, *role;
	json_t *tok = NULL;
	int64_t id;
	int rc;

	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "name", 1, &name, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "role", 1, &role, &rp->err)) != 0)
		return rc;
	if (!valid_token_name(name))
		return tb_fail(&rp->err, TB_ERR_INVALID, "name", "name must be 1..63 of A-Z a-z 0-9 - _ .");
	if (tb_level_parse(role) == TB_LEVEL_NONE)
		return tb_fail(&rp->err, TB_ERR_INVALID, "role",
			       "role must be viewer, operator or admin, got \"%.32s\"", role);
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", name);
	if ((rc = tb_auth_token_create(rq->sv->auth, name, tb_level_parse(role), secret, &id, &rp->err)) != 0)
		return rc;
	if ((rc = tb_store_token_get(rq->sv->store, id, set_token, &tok, &rp->err)) != 0) {
		tb_wipe(secret, sizeof(secret));
		return rc;
	}
	/* shown once: the reply holds jansson's copy, this one is wiped */
	rc = tb_reply_json(rp, 201, json_pack("{s:o, s:s}", "token", tok, "secret", secret));
	tb_wipe(secret, sizeof(secret));
	return rc;
}

int api_token_revoke(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a token id is a positive whole number, got \"%.32s\"",
			       rq->args[0]);
	if ((rc = tb_auth_token_revoke(rq->sv->auth, (int64_t)id, &rp->err)) != 0)
		return rc;
	/* its sessions ended with it (store); its open event streams end now */
	tb_events_drop_owner(rq->sv->events, (int64_t)id);
	return tb_reply_json(rp, 204, NULL);
}
