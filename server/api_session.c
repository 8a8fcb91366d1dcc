/* api_session.c - browser login (token -> HttpOnly cookie + CSRF token) and logout. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "services.h"
#include "validate.h"
#include "auth.h"
#include "events.h"
#include "timeutil.h"
#include "wipe.h"

/* The session cookie's Set-Cookie (Secure when the client came over TLS, ours
 * or a trusted proxy's); value "" with max_age 0 clears it. */
static void set_session_cookie(const struct tb_request *rq, struct tb_reply *rp, const char *value, long long max_age)
{
	snprintf(rp->set_cookie, sizeof(rp->set_cookie),
		 "tb_session=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%lld%s", value, max_age,
		 rq->https ? "; Secure" : "");
}

int api_session_create(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"token", "remember", NULL};
	char cookie[TB_SECRET_MAX], csrf[TB_SECRET_MAX];
	struct tb_principal who;
	const char *token;
	json_t *tv;
	json_t *rv;
	int64_t expires;
	int rc;

	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "token", 1, &token, &rp->err)) != 0)
		goto out;
	rv = json_object_get(rq->body, "remember");
	if (rv != NULL && !json_is_boolean(rv)) {
		rc = tb_fail(&rp->err, TB_ERR_INVALID, "remember", "remember must be true or false");
		goto out;
	}
	if ((rc = tb_auth_session_create(rq->sv->auth, token, json_is_true(rv), cookie, csrf, &expires, &who,
					 &rp->err)) != 0)
		goto out;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", who.name);
	set_session_cookie(rq, rp, cookie, (long long)(expires - (int64_t)time(NULL)));
	/* the reply holds copies now (the edge's set_cookie, jansson's string) */
	rc = tb_reply_json(rp, 200,
			   json_pack("{s:{s:s, s:s, s:o, s:s}}", "session", "role", tb_level_name(who.level), "name",
				     who.name, "expires_at", tb_time_json(expires), "csrf_token", csrf));
	tb_wipe(cookie, sizeof(cookie));
	tb_wipe(csrf, sizeof(csrf));
out:
	/* the token in the parsed body: jansson would free it unwiped (the
	 * string is jansson's malloc'd copy, never read after this handler) */
	tv = json_object_get(rq->body, "token");
	if (json_is_string(tv))
		tb_wipe((char *)json_string_value(tv), json_string_length(tv));
	return rc;
}

/* DELETE /api/v1/sessions: log out everywhere, i.e. every session of the
 * caller's token (a bearer caller's too), and end their event streams. */
int api_sessions_delete_all(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t *ids;
	size_t n;
	int rc;

	if ((rc = tb_auth_session_delete_all(rq->sv->auth, rq->who->token_id, &ids, &n, &rp->err)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		tb_events_drop_session(rq->sv->events, ids[i]);
	free(ids);
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->who->name);
	if (rq->who->via_cookie)
		set_session_cookie(rq, rp, "", 0);
	return tb_reply_json(rp, 204, NULL);
}

int api_session_delete(struct tb_request *rq, struct tb_reply *rp)
{
	const char *cookie = tb_req_cookie(rq, "tb_session");

	if (cookie != NULL) {
		tb_auth_session_delete(rq->sv->auth, cookie);
		/* and the event streams opened with it end now */
		tb_events_drop_session(rq->sv->events, tb_auth_session_id(cookie));
	}
	set_session_cookie(rq, rp, "", 0);
	return tb_reply_json(rp, 204, NULL);
}
