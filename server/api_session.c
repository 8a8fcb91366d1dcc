/* api_session.c - browser login (token -> HttpOnly cookie + CSRF token) and logout. */
#include "api.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void api_session_cookie_renew(struct tb_request *rq, struct tb_reply *rp)
{
	const char *cookie = tb_req_cookie(rq, "tb_session");
	int64_t left;

	if (rq->who == NULL || !rq->who->renewed || rp->set_cookie[0] != '\0' || cookie == NULL)
		return;
	left = rq->who->expires_at - (int64_t)time(NULL);
	if (left > 0)
		set_session_cookie(rq, rp, cookie, (long long)left);
}

/* Does s contain w (ASCII, case as given)? */
static int has(const char *s, const char *w)
{
	return strstr(s, w) != NULL;
}

/* A short, harmless label for "Your devices" from a User-Agent: "Firefox on
 * Android", "curl", else the product's first word (letters, digits, ._- only). */
static void device_summary(const char *ua, char *out, size_t size)
{
	const char *browser = NULL, *os = NULL;
	size_t i = 0;

	out[0] = '\0';
	if (ua == NULL || *ua == '\0')
		return;
	if (has(ua, "Edg/"))
		browser = "Edge";
	else if (has(ua, "Firefox/"))
		browser = "Firefox";
	else if (has(ua, "Chrome/") || has(ua, "Chromium/") || has(ua, "CriOS/"))
		browser = "Chrome";
	else if (has(ua, "Safari/"))
		browser = "Safari";
	if (has(ua, "Android"))
		os = "Android";
	else if (has(ua, "iPhone") || has(ua, "iPad"))
		os = "iOS";
	else if (has(ua, "Windows"))
		os = "Windows";
	else if (has(ua, "Mac OS X"))
		os = "macOS";
	else if (has(ua, "Linux") || has(ua, "X11"))
		os = "Linux";
	if (browser != NULL) {
		snprintf(out, size, "%s%s%s", browser, os != NULL ? " on " : "", os != NULL ? os : "");
		return;
	}
	for (; ua[i] != '\0' && i + 1 < size && i < 32; i++) {
		if (!isalnum((unsigned char)ua[i]) && ua[i] != '.' && ua[i] != '_' && ua[i] != '-')
			break;
		out[i] = ua[i];
	}
	out[i] = '\0';
}

int api_session_create(struct tb_request *rq, struct tb_reply *rp)
{
	char device[48];
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
	device_summary(tb_req_header(rq, "User-Agent"), device, sizeof(device));
	tb_auth_session_set_client(rq->sv->auth, cookie, device, rq->remote);
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

/* One session as GET /sessions shows it (NULL when out of memory). */
static json_t *session_json(const struct tb_request *rq, const struct tb_session_view *v)
{
	json_t *o = json_pack("{s:I, s:{s:I, s:s}, s:o, s:b, s:b}", "id", (json_int_t)v->id, "token", "id",
			      (json_int_t)v->token_id, "name", v->token_name, "expires_at", tb_time_json(v->expires_at),
			      "remember", v->remember, "current",
			      rq->who->via_cookie && v->session_id == rq->who->session_id);

	if (o != NULL && v->created_at > 0)
		json_object_set_new(o, "created_at", tb_time_json(v->created_at));
	if (o != NULL && v->last_used_at > 0)
		json_object_set_new(o, "last_used_at", tb_time_json(v->last_used_at));
	if (o != NULL && v->last_address[0] != '\0')
		json_object_set_new(o, "last_address", json_string(v->last_address));
	if (o != NULL && v->device[0] != '\0')
		json_object_set_new(o, "device", json_string(v->device));
	return o;
}

/* GET /api/v1/sessions: "Your devices", the sessions of the caller's token
 * (ids, times, last use and its address, remembered or not, the browser;
 * never a secret or a hash), the caller's own marked current.  ?all=1 (an
 * admin's): every token's, each with its token's name. */
int api_sessions_list(struct tb_request *rq, struct tb_reply *rp)
{
	const char *all = tb_req_query(rq, "all");
	struct tb_session_view *v;
	json_t *arr;
	size_t n;
	int rc;

	if (all != NULL && strcmp(all, "0") != 0 && strcmp(all, "1") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "all", "all must be 0 or 1");
	if (all != NULL && all[0] == '1' && rq->who->level < TB_LEVEL_ADMIN)
		return tb_fail(&rp->err, TB_ERR_FORBIDDEN, "all",
			       "every user's sessions (all=1) need the admin role; token \"%s\" is %s", rq->who->name,
			       tb_level_name(rq->who->level));
	if ((rc = tb_auth_session_list(rq->sv->auth, all != NULL && all[0] == '1' ? 0 : rq->who->token_id, &v, &n,
				       &rp->err)) != 0)
		return rc;
	if ((arr = json_array()) == NULL) {
		free(v);
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, session_json(rq, &v[i]));
	free(v);
	return tb_reply_json(rp, 200, json_pack("{s:o}", "sessions", arr));
}

/* DELETE /api/v1/sessions/{id}: end one session of the caller's token (404
 * for another token's), or an admin's call any token's, and its event
 * streams.  Audited with the session's owner named. */
int api_session_end(struct tb_request *rq, struct tb_reply *rp)
{
	int admin = rq->who->level >= TB_LEVEL_ADMIN;
	char owner[64];
	int64_t id, sid;
	int rc;

	if (tb_parse_id(rq->args[0], 1, &id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a session id is a positive whole number, got \"%.32s\"",
			       rq->args[0]);
	snprintf(rp->audit_target, sizeof(rp->audit_target), "session %lld", (long long)id);
	if ((rc = tb_auth_session_end(rq->sv->auth, admin ? 0 : rq->who->token_id, id, &sid, owner, &rp->err)) != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s session %lld", owner, (long long)id);
	tb_events_drop_session(rq->sv->events, sid);
	if (rq->who->via_cookie && sid == rq->who->session_id)
		set_session_cookie(rq, rp, "", 0);
	return tb_reply_json(rp, 204, NULL);
}
