/* http_api.c - an API request: route, authenticate, authorise, parse the
 * body, call the handler, audit, reply.  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_edge.h"
#include "api.h"
#include "feed.h"

#include "services.h"
#include "auth.h"
#include "audit.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"
#include "wipe.h"

/* How a pattern matches: 0 no, else 1 + the number of literal segments
 * (args filled), so that /matrices/plan beats /matrices/{id}. */
static int match(const char *pattern, char *seg[], size_t nseg, const char *args[])
{
	size_t i = 0, a = 0;
	int literal = 0;
	const char *p = pattern;

	while (*p == '/') {
		const char *start = ++p;
		size_t len;

		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - start);
		if (i >= nseg)
			return 0;
		if (len >= 2 && start[0] == '{') {
			if (a >= TB_ROUTE_MAX_ARGS)
				return 0;
			args[a++] = seg[i];
		} else if (strlen(seg[i]) != len || strncmp(seg[i], start, len) != 0) {
			return 0;
		} else {
			literal++;
		}
		i++;
	}
	return i == nseg ? 1 + literal : 0;
}

/* The route of method on seg (its arguments into args), or NULL; then allow
 * lists the methods the path takes ("" when the path is unknown). */
static const struct tb_route *find_route(char *seg[], size_t nseg, const char *method,
					 const char *args[TB_ROUTE_MAX_ARGS], char *allow, size_t allowlen)
{
	int best = 0;

	for (const struct tb_route *r = tb_routes; r->method != NULL; r++) {
		const char *a[TB_ROUTE_MAX_ARGS] = {0};
		int m = match(r->pattern, seg, nseg, a);

		if (m > best)
			best = m;
	}
	for (const struct tb_route *r = tb_routes; best > 0 && r->method != NULL; r++) {
		const char *a[TB_ROUTE_MAX_ARGS] = {0};

		if (match(r->pattern, seg, nseg, a) != best)
			continue;
		if (strcmp(r->method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0)) {
			memcpy(args, a, sizeof(a));
			return r;
		}
		if (strstr(allow, r->method) == NULL) {
			if (allow[0])
				strncat(allow, ", ", allowlen - strlen(allow) - 1);
			strncat(allow, r->method, allowlen - strlen(allow) - 1);
		}
	}
	return NULL;
}

int edge_is_mutation(const char *method)
{
	return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

static void audit(struct tb_http *h, const struct tb_route *route, const struct tb_request *rq, const char *actor,
		  unsigned int status, const struct tb_reply *rp, const char *result)
{
	struct tb_audit_row row = {
		.at = (int64_t)time(NULL),
		.actor = actor,
		.remote = rq->remote,
		.method = rq->method,
		.path = rq->path,
		.action = route->action != NULL ? route->action : route->pattern,
		.target = rp->audit_target[0] ? rp->audit_target : (rq->args[0] != NULL ? rq->args[0] : ""),
		.status = (int)status,
		.result = result,
	};

	tb_audit_record(h->sv, &row, strncmp(rq->path, "/api/v1/hosts/", 14) == 0 ? rq->args[0] : NULL);
}

/* The one audit row of an address that just became limited: the failures
 * themselves are not audited (only counted), so a stranger cannot fill the
 * log; this row tells an admin someone is guessing, at most once per address
 * and limiter window. */
static void audit_limited(struct tb_http *h, const struct tb_route *route, const struct tb_request *rq)
{
	struct tb_audit_row row = {
		.at = (int64_t)time(NULL),
		.actor = "-",
		.remote = rq->remote,
		.method = rq->method,
		.path = route->pattern,
		.action = "auth.limited",
		.target = "",
		.status = 429,
		.result = tb_err_name(TB_ERR_RATE_LIMITED),
	};

	tb_audit_record(h->sv, &row, NULL);
}

/* A failed authentication from this address (e holds why): counted by the
 * limiter; when the address was already limited the reply becomes 429 with
 * the seconds actually left in retry_s.  Returns the code to reply with. */
static int note_failure(struct tb_http *h, struct conn_state *cs, const struct tb_route *route,
			const struct tb_request *rq, struct tb_error *e, char retry_s[16])
{
	int retry = 0, rc = e->code;

	if (tb_ratelimit_check(h->limiter, cs->remote, &retry, e) != 0) {
		snprintf(retry_s, 16, "%d", retry);
		return TB_ERR_RATE_LIMITED;
	}
	if (tb_ratelimit_failed(h->limiter, cs->remote, NULL))
		audit_limited(h, route, rq);
	return rc;
}

/* Authenticate and authorise; 0 or an error in e.  *counts: a failure the
 * limiter counts (a bearer token that does not check out, or any failed
 * authentication of a mutation); a GET without credentials is not one, so
 * a page whose session ended does not lock its address out. */
static int authenticate(struct tb_http *h, struct conn_state *cs, const struct tb_route *route, const char *method,
			struct tb_principal *who, struct tb_error *e, int *counts)
{
	struct MHD_Connection *c = cs->conn;
	const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "tb_session");
	int rc;

	*counts = authz != NULL || edge_is_mutation(method);
	if (authz != NULL) {
		/* the token is checked first: one that checks out is never refused */
		if (strncmp(authz, "Bearer ", 7) != 0)
			return tb_fail(e, TB_ERR_UNAUTHORIZED, "Authorization", "use Authorization: Bearer TOKEN");
		if ((rc = tb_auth_bearer(h->sv->auth, authz + 7, who, e)) != 0)
			return rc;
	} else if (cookie != NULL) {
		const char *csrf = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-CSRF-Token");

		if ((rc = tb_auth_cookie(h->sv->auth, cookie, csrf, edge_is_mutation(method), cs->remote, who, e)) != 0)
			return rc;
	} else {
		return tb_fail(e, TB_ERR_UNAUTHORIZED, "",
			       "authentication required: send Authorization: Bearer TOKEN or log in");
	}
	*counts = 0;
	if (who->level < route->level)
		return tb_fail(e, TB_ERR_FORBIDDEN, "", "this needs the %s role; token \"%s\" is %s",
			       tb_level_name(route->level), who->name, tb_level_name(who->level));
	return 0;
}

static int parse_body(struct conn_state *cs, json_t **out, struct tb_error *e)
{
	const char *ct = MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	json_error_t je;
	json_t *j;

	*out = NULL;
	/* RFC 9110 8.3.1: the type and subtype are case-insensitive; parameters
	 * (charset) may follow after optional whitespace */
	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ' && ct[16] != '\t'))
		return tb_fail(e, TB_ERR_MEDIA_TYPE, "Content-Type", "send the body as Content-Type: application/json");
	if (cs->len == 0)
		return tb_fail(e, TB_ERR_BAD_JSON, "", "the body is empty; expected a JSON object");
	j = json_loadb(cs->buf, cs->len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL)
		return tb_fail(e, TB_ERR_BAD_JSON, "", "malformed JSON at line %d, column %d: %s", je.line, je.column,
			       je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return tb_fail(e, TB_ERR_BAD_JSON, "", "expected a JSON object");
	}
	*out = j;
	return 0;
}

enum MHD_Result edge_serve_api(struct tb_http *h, struct conn_state *cs, const char *method, const char *raw_path,
			       char *seg[], size_t nseg)
{
	struct tb_request rq = {.sv = h->sv, .method = method, .remote = cs->remote, .https = cs->https, .edge = cs};
	struct tb_reply rp = {.status = 200};
	const struct tb_route *route = NULL;
	struct tb_principal who = {0};
	char allow[128] = "", path[1024] = "", retry_s[16] = "";
	const char *const extra_allow[][2] = {{MHD_HTTP_HEADER_ALLOW, allow}};
	json_t *body = NULL;
	unsigned int status;
	enum MHD_Result ret;
	int rc;

	for (size_t i = 0; i < nseg; i++) {
		strncat(path, "/", sizeof(path) - strlen(path) - 1);
		strncat(path, seg[i], sizeof(path) - strlen(path) - 1);
	}
	rq.path = path;
	(void)raw_path;
	route = find_route(seg, nseg, method, rq.args, allow, sizeof(allow));
	if (route == NULL && allow[0])
		return edge_send_json(cs->conn, 405,
				      json_pack("{s:{s:s, s:s, s:s}}", "error", "code", "method_not_allowed", "message",
						"this path does not take that method; see the Allow header", "field",
						""),
				      extra_allow, 1);
	if (route == NULL)
		return edge_fail(cs->conn, TB_ERR_NOT_FOUND, "", "no such API path: %s", path);
	if (cs->bad_query)
		return edge_fail(cs->conn, TB_ERR_INVALID, "query", "bad or NUL percent-escape in the query string");
	if (cs->too_large) {
		rc = tb_fail(&rp.err, TB_ERR_TOO_LARGE, "", "the body is larger than %zu bytes", h->cfg.body_limit);
	} else if (route->flags & TB_ROUTE_PUBLIC) {
		rc = 0;
	} else {
		int counts = 0;

		rc = authenticate(h, cs, route, method, &who, &rp.err, &counts);
		if (rc != 0 && counts)
			rc = note_failure(h, cs, route, &rq, &rp.err, retry_s);
		if (rc == 0 || rc == TB_ERR_FORBIDDEN)
			rq.who = &who;
	}
	if (rc == 0 && (route->flags & TB_ROUTE_BODY))
		rc = parse_body(cs, &body, &rp.err);
	else if (rc == 0 && cs->len > 0)
		rc = tb_fail(&rp.err, TB_ERR_INVALID, "", "%s %s takes no body", method, route->pattern);
	if (rc == 0) {
		rq.body = body;
		rc = route->handler(&rq, &rp);
		if (rc == 0)
			api_session_cookie_renew(&rq, &rp); /* a remembered session's expiry slid */
		if (rc != 0 && rp.err.code == 0)
			tb_fail(&rp.err, rc, "", "%s", tb_err_name(rc));
		if (rc == TB_ERR_UNAUTHORIZED && (route->flags & TB_ROUTE_LOGIN))
			rc = note_failure(h, cs, route, &rq, &rp.err, retry_s);
	}
	json_decref(body);
	status = rc == 0 ? rp.status : tb_http_status_of(rp.err.code);
	/* Audited: what a caller who authenticated asked for, and what a public
	 * route did.  A request that was refused before anyone was known (no or
	 * bad credentials, a failed login, a body refused on a public route) is
	 * only counted, so that strangers cannot fill the store. */
	if (edge_is_mutation(method) && (rq.who != NULL || rc == 0))
		audit(h, route, &rq, who.name[0] != '\0' ? who.name : "-", status, &rp,
		      rc == 0 ? "ok" : tb_err_name(rp.err.code));
	else if (rc != 0 && rq.who == NULL && (!(route->flags & TB_ROUTE_PUBLIC) || (route->flags & TB_ROUTE_LOGIN)))
		tb_metrics_auth_failure(h->sv->metrics, route->pattern, status);
	{
		const char *const extra[][2] = {{MHD_HTTP_HEADER_SET_COOKIE, rp.set_cookie},
						{MHD_HTTP_HEADER_RETRY_AFTER, retry_s}};

		if (rc != 0) {
			json_decref(rp.body);
			free(rp.text);
			if (rp.feed != NULL)
				rp.feed->close(rp.feed);
			ret = edge_send_error(cs->conn, &rp.err, extra, 2);
		} else if (rp.feed != NULL) {
			ret = edge_start_feed(h, cs, rp.feed, rq.who);
		} else if (rp.stream) {
			ret = edge_start_stream(h, cs, &rp);
		} else if (rp.text != NULL) {
			ret = edge_send_text(cs->conn, status, rp.text, rp.text_len, rp.content_type, rp.csp,
					     rp.disposition);
		} else {
			ret = edge_send_json(cs->conn, status, rp.body, extra, 2);
		}
		tb_wipe(rp.set_cookie, sizeof(rp.set_cookie)); /* a session secret; MHD copied it */
	}
	tb_metrics_request(h->sv->metrics, route->pattern, route->method, status,
			   (double)(tb_monotonic_ms() - cs->start_ms) / 1000.0);
	return ret;
}
