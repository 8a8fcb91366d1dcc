/* http.c - the HTTP edge on libmicrohttpd: see http.h. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "app.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"

struct tb_http {
	struct MHD_Daemon *d;
	struct tb_app *app;
	struct tb_http_config cfg;
	char static_root[PATH_MAX];
	int have_static;
	char *tls_cert, *tls_key;     /* PEM text, kept while the daemon runs */
	pthread_t heartbeat;
	pthread_mutex_t hb_lock;
	pthread_cond_t hb_cond;
	int hb_running, hb_stop;
};

/* Seconds between heartbeat comments on an idle event stream. */
#define SSE_HEARTBEAT_MS 15000
#define SSE_BLOCK 16384

/* One event-stream client: its subscription and its connection's state.
 * mu orders suspend (in the reader) before resume (in the waker). */
struct sse_client {
	struct tb_http *h;
	struct tb_sub *sub;
	struct MHD_Connection *conn;
	pthread_mutex_t mu;
	int suspended;
	int wake_pending;
	int64_t last_write_ms;
};

#define MAX_DECODED 16

/* Per-request state, from the first call of the access handler until
 * NOTIFY_COMPLETED. */
struct conn_state {
	char *buf;
	size_t len, cap;
	int too_large;
	struct MHD_Connection *conn;
	char remote[64];
	char *decoded[MAX_DECODED];   /* strings handed to handlers, freed at the end */
	size_t ndecoded;
	int bad_query;
	int64_t start_ms;
};

static const char *const security_headers[][2] = {
	{"Content-Security-Policy",
	 "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	 "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "no-referrer"},
};

static void add_common_headers(struct MHD_Response *r)
{
	for (size_t i = 0; i < sizeof(security_headers) / sizeof(security_headers[0]); i++)
		MHD_add_response_header(r, security_headers[i][0], security_headers[i][1]);
}

/* Queue a JSON reply (steals body; NULL sends no body). */
static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned int status, json_t *body,
				 const char *const extra[][2], size_t nextra)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text = NULL;
	size_t len = 0;

	if (body != NULL) {
		text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(body);
		if (text == NULL)
			return MHD_NO;
		len = strlen(text);
		text[len++] = '\n';   /* json_dumps leaves room: its NUL */
	}
	r = MHD_create_response_from_buffer(len, text != NULL ? text : (void *)"",
					    text != NULL ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	add_common_headers(r);
	if (body != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	for (size_t i = 0; i < nextra; i++)
		if (extra[i][1] != NULL && extra[i][1][0] != '\0')
			MHD_add_response_header(r, extra[i][0], extra[i][1]);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static json_t *error_body(const struct tb_error *e)
{
	return json_pack("{s:{s:s, s:s, s:s}}", "error", "code", tb_err_name(e->code), "message",
			 e->message[0] ? e->message : tb_err_name(e->code), "field", e->field);
}

static enum MHD_Result send_error(struct MHD_Connection *conn, const struct tb_error *e,
				  const char *const extra[][2], size_t nextra)
{
	const char *www[4][2] = {{MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"testbedd\""}};

	if (e->code == TB_ERR_UNAUTHORIZED && nextra < 4) {
		for (size_t i = 0; i < nextra; i++)
			www[i + 1][0] = extra[i][0], www[i + 1][1] = extra[i][1];
		return send_json(conn, 401, error_body(e), (const char *const(*)[2])www, nextra + 1);
	}
	return send_json(conn, tb_err_http_status(e->code), error_body(e), extra, nextra);
}

static enum MHD_Result fail_now(struct MHD_Connection *conn, int code, const char *field,
				const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

static enum MHD_Result fail_now(struct MHD_Connection *conn, int code, const char *field,
				const char *fmt, ...)
{
	struct tb_error e;
	va_list ap;

	e.code = code;
	snprintf(e.field, sizeof(e.field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	return send_error(conn, &e, NULL, 0);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode len bytes of s (and '+' as space when plus); NULL on a bad
 * escape or an encoded NUL. */
static char *pct_decode(const char *s, size_t len, int plus)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plus && s[i] == '+') {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* MHD must not decode: we decode each path segment and query value ourselves
 * so that %2f, %2e%2e and %00 cannot change the meaning of a path. */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

static int keep(struct conn_state *cs, char *s)
{
	if (s == NULL || cs->ndecoded >= MAX_DECODED) {
		free(s);
		return -1;
	}
	cs->decoded[cs->ndecoded++] = s;
	return 0;
}

/* Split a raw path into decoded segments; refuse escapes that change the
 * path's shape ('/', NUL), "." and ".." segments and control characters. */
static int split_path(struct conn_state *cs, const char *raw, char *seg[], size_t max, size_t *nseg,
		      struct tb_error *err)
{
	const char *p = raw;

	*nseg = 0;
	if (*p != '/')
		return tb_fail(err, TB_ERR_INVALID, "path", "a path starts with /");
	while (*p == '/') {
		const char *start = ++p;
		char *d;

		while (*p != '\0' && *p != '/')
			p++;
		if (p == start) {
			if (*p == '\0')
				break;   /* trailing slash */
			return tb_fail(err, TB_ERR_INVALID, "path", "empty path segment (//)");
		}
		d = pct_decode(start, (size_t)(p - start), 0);
		if (d == NULL)
			return tb_fail(err, TB_ERR_INVALID, "path", "bad or NUL percent-escape in the path");
		if (strcmp(d, ".") == 0 || strcmp(d, "..") == 0 || strchr(d, '/') != NULL ||
		    strchr(d, '\\') != NULL) {
			free(d);
			return tb_fail(err, TB_ERR_INVALID, "path", "the path may not contain . or .. segments or an encoded slash");
		}
		for (const char *q = d; *q; q++) {
			if ((unsigned char)*q < 0x20 || *q == 0x7f) {
				free(d);
				return tb_fail(err, TB_ERR_INVALID, "path", "control character in the path");
			}
		}
		if (*nseg >= max || keep(cs, d) != 0)
			return tb_fail(err, TB_ERR_NOT_FOUND, "path", "no such path");
		seg[(*nseg)++] = d;
	}
	return 0;
}

/* How a pattern matches: 0 no, 1 yes (args filled). */
static int match(const char *pattern, char *seg[], size_t nseg, const char *args[])
{
	size_t i = 0, a = 0;
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
		}
		i++;
	}
	return i == nseg;
}

static enum MHD_Result check_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct conn_state *cs = cls;
	char *k, *v;

	(void)kind;
	k = pct_decode(key, strlen(key), 1);
	v = value != NULL ? pct_decode(value, strlen(value), 1) : strdup("");
	if (k == NULL || v == NULL)
		cs->bad_query = 1;
	free(k);
	free(v);
	return cs->bad_query ? MHD_NO : MHD_YES;
}

const char *tb_req_query(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;
	const char *raw = MHD_lookup_connection_value(cs->conn, MHD_GET_ARGUMENT_KIND, name);
	char *d;

	if (raw == NULL)
		return NULL;
	d = pct_decode(raw, strlen(raw), 1);
	if (keep(cs, d) != 0)
		return NULL;
	return d;
}

const char *tb_req_header(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;

	return MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND, name);
}

const char *tb_req_cookie(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;

	return MHD_lookup_connection_value(cs->conn, MHD_COOKIE_KIND, name);
}

int tb_reply_json(struct tb_reply *rp, unsigned int status, json_t *body)
{
	rp->status = status;
	json_decref(rp->body);
	rp->body = body;
	if (body == NULL && status != 204)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

int tb_json_only(const json_t *body, const char *const allowed[], struct tb_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)body, key, v) {
		size_t i;
		char list[256] = "";

		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] != NULL)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
			if (allowed[i + 1] != NULL)
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		}
		return tb_fail(err, TB_ERR_UNKNOWN_FIELD, key, "unknown field \"%.60s\"; allowed: %s", key, list);
	}
	return 0;
}

int tb_json_string(const json_t *body, const char *key, int required, const char **out,
		   struct tb_error *err)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL) {
		if (required)
			return tb_fail(err, TB_ERR_INVALID, key, "%s is required", key);
		return 0;
	}
	if (!json_is_string(v))
		return tb_fail(err, TB_ERR_INVALID, key, "%s must be a string", key);
	*out = json_string_value(v);
	return 0;
}

static int is_mutation(const char *method)
{
	return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

static void audit(struct tb_http *h, const struct tb_route *route, const struct tb_request *rq,
		  const char *actor, unsigned int status, const struct tb_reply *rp, const char *result)
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
	struct tb_error err;

	char at[TB_TIME_MAX];

	if (tb_store_audit_append(h->app->store, &row, &err) != 0)
		tb_error("audit", "cannot record %s %s: %s", rq->method, rq->path, err.message);
	tb_time_format(row.at, at);
	tb_events_publish(h->app->events, "audit",
			  strncmp(rq->path, "/api/v1/hosts/", 14) == 0 ? rq->args[0] : NULL, 0,
			  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "at", at, "actor", row.actor,
				    "remote", row.remote, "method", row.method, "path", row.path, "action", row.action,
				    "target", row.target, "status", row.status, "result", row.result));
}

/* Authenticate and authorise; 0 or an error in e. */
static int authenticate(struct tb_http *h, struct conn_state *cs, const struct tb_route *route,
			const char *method, struct tb_principal *who, struct tb_error *e)
{
	struct MHD_Connection *c = cs->conn;
	const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "tb_session");
	int retry, rc;

	if (authz != NULL) {
		if (strncmp(authz, "Bearer ", 7) != 0)
			return tb_fail(e, TB_ERR_UNAUTHORIZED, "Authorization",
				       "use Authorization: Bearer TOKEN");
		if ((rc = tb_auth_limited(h->app->auth, cs->remote, &retry, e)) != 0)
			return rc;
		if ((rc = tb_auth_bearer(h->app->auth, authz + 7, who, e)) != 0) {
			tb_auth_failed(h->app->auth, cs->remote);
			return rc;
		}
	} else if (cookie != NULL) {
		const char *csrf = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-CSRF-Token");

		if ((rc = tb_auth_cookie(h->app->auth, cookie, csrf, is_mutation(method), who, e)) != 0)
			return rc;
	} else {
		return tb_fail(e, TB_ERR_UNAUTHORIZED, "",
			       "authentication required: send Authorization: Bearer TOKEN or log in");
	}
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
	if (ct == NULL || strncmp(ct, "application/json", 16) != 0 || (ct[16] != '\0' && ct[16] != ';'))
		return tb_fail(e, TB_ERR_MEDIA_TYPE, "Content-Type", "send the body as Content-Type: application/json");
	if (cs->len == 0)
		return tb_fail(e, TB_ERR_BAD_JSON, "", "the body is empty; expected a JSON object");
	j = json_loadb(cs->buf, cs->len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL)
		return tb_fail(e, TB_ERR_BAD_JSON, "", "malformed JSON at line %d, column %d: %s", je.line,
			       je.column, je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return tb_fail(e, TB_ERR_BAD_JSON, "", "expected a JSON object");
	}
	*out = j;
	return 0;
}

/* A non-JSON reply (steals text). */
static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status, char *text, size_t len,
				 const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	add_common_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Called by the bus (publisher's thread, bus lock held) when an event for
 * this client arrives while it waits.  Never blocks for long. */
static void sse_wake(void *cls)
{
	struct sse_client *c = cls;

	pthread_mutex_lock(&c->mu);
	if (c->suspended) {
		c->suspended = 0;
		MHD_resume_connection(c->conn);
	} else {
		c->wake_pending = 1;
	}
	pthread_mutex_unlock(&c->mu);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char ping[] = ": ping\n\n";
	struct sse_client *c = cls;

	(void)pos;
	for (;;) {
		size_t n = 0;
		enum tb_sub_status st = tb_sub_next(c->sub, buf, max, &n);
		int64_t now = tb_monotonic_ms();

		if (st == TB_SUB_DATA) {
			c->last_write_ms = now;
			return (ssize_t)n;
		}
		if (st == TB_SUB_CLOSED)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (now - c->last_write_ms >= SSE_HEARTBEAT_MS && max >= sizeof(ping) - 1) {
			/* also how a dead client is found: the write fails */
			c->last_write_ms = now;
			memcpy(buf, ping, sizeof(ping) - 1);
			return (ssize_t)(sizeof(ping) - 1);
		}
		pthread_mutex_lock(&c->mu);
		if (c->wake_pending) {
			c->wake_pending = 0;
			pthread_mutex_unlock(&c->mu);
			continue;
		}
		MHD_suspend_connection(c->conn);
		c->suspended = 1;
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
}

static void sse_free(void *cls)
{
	struct sse_client *c = cls;

	tb_events_unsubscribe(c->sub);
	tb_metrics_sse(c->h->app->metrics, -1);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static enum MHD_Result start_stream(struct tb_http *h, struct conn_state *cs, struct tb_reply *rp)
{
	struct sse_client *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct tb_error e = {0};

	if (c == NULL)
		return MHD_NO;
	c->h = h;
	c->conn = cs->conn;
	c->last_write_ms = tb_monotonic_ms();
	pthread_mutex_init(&c->mu, NULL);
	if (tb_events_subscribe(h->app->events, rp->stream_since, &rp->stream_filter, sse_wake, c, &c->sub, &e) != 0) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return send_error(cs->conn, &e, NULL, 0);
	}
	tb_metrics_sse(h->app->metrics, +1);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, c, sse_free);
	if (r == NULL) {
		sse_free(c);
		return MHD_NO;
	}
	add_common_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	/* Idle streams are kept alive by heartbeats, not by the daemon's timeout. */
	MHD_set_connection_option(cs->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
	ret = MHD_queue_response(cs->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Every few seconds wake the waiting streams, so that idle ones send their
 * heartbeat (and dead clients are found) on time. */
static void *heartbeat(void *arg)
{
	struct tb_http *h = arg;

	pthread_mutex_lock(&h->hb_lock);
	while (!h->hb_stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += SSE_HEARTBEAT_MS / 3000;
		pthread_cond_timedwait(&h->hb_cond, &h->hb_lock, &until);
		if (h->hb_stop)
			break;
		pthread_mutex_unlock(&h->hb_lock);
		tb_events_wake_all(h->app->events);
		pthread_mutex_lock(&h->hb_lock);
	}
	pthread_mutex_unlock(&h->hb_lock);
	return NULL;
}

static enum MHD_Result serve_api(struct tb_http *h, struct conn_state *cs, const char *method,
				 const char *raw_path, char *seg[], size_t nseg)
{
	struct tb_request rq = {.app = h->app, .method = method, .remote = cs->remote, .edge = cs};
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
	for (const struct tb_route *r = tb_routes; r->method != NULL; r++) {
		const char *args[TB_ROUTE_MAX_ARGS] = {0};

		if (!match(r->pattern, seg, nseg, args))
			continue;
		if (strcmp(r->method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0)) {
			route = r;
			memcpy(rq.args, args, sizeof(args));
			break;
		}
		if (strstr(allow, r->method) == NULL) {
			if (allow[0])
				strncat(allow, ", ", sizeof(allow) - strlen(allow) - 1);
			strncat(allow, r->method, sizeof(allow) - strlen(allow) - 1);
		}
	}
	if (route == NULL && allow[0])
		return send_json(cs->conn, 405,
				 json_pack("{s:{s:s, s:s, s:s}}", "error", "code", "method_not_allowed", "message",
					   "this path does not take that method; see the Allow header", "field", ""),
				 extra_allow, 1);
	if (route == NULL)
		return fail_now(cs->conn, TB_ERR_NOT_FOUND, "", "no such API path: %s", path);
	if (cs->bad_query)
		return fail_now(cs->conn, TB_ERR_INVALID, "query", "bad or NUL percent-escape in the query string");
	if (cs->too_large) {
		rc = tb_fail(&rp.err, TB_ERR_TOO_LARGE, "", "the body is larger than %zu bytes", h->cfg.body_limit);
	} else if (route->flags & TB_ROUTE_PUBLIC) {
		rc = 0;
		if (route->flags & TB_ROUTE_LOGIN) {
			int retry = 0;

			rc = tb_auth_limited(h->app->auth, cs->remote, &retry, &rp.err);
			if (rc != 0)
				snprintf(retry_s, sizeof(retry_s), "%d", retry);
		}
	} else {
		rc = authenticate(h, cs, route, method, &who, &rp.err);
		if (rc == TB_ERR_RATE_LIMITED)
			snprintf(retry_s, sizeof(retry_s), "%d", TB_AUTH_WINDOW_S);
		if (rc == 0)
			rq.who = &who;
	}
	if (rc == 0 && (route->flags & TB_ROUTE_BODY))
		rc = parse_body(cs, &body, &rp.err);
	else if (rc == 0 && cs->len > 0)
		rc = tb_fail(&rp.err, TB_ERR_INVALID, "", "%s %s takes no body", method, route->pattern);
	if (rc == 0) {
		rq.body = body;
		rc = route->handler(&rq, &rp);
		if (rc != 0 && rp.err.code == 0)
			tb_fail(&rp.err, rc, "", "%s", tb_err_name(rc));
		if (rc != 0 && (route->flags & TB_ROUTE_LOGIN) && rc == TB_ERR_UNAUTHORIZED)
			tb_auth_failed(h->app->auth, cs->remote);
	}
	json_decref(body);
	status = rc == 0 ? rp.status : tb_err_http_status(rp.err.code);
	if (is_mutation(method))
		audit(h, route, &rq, who.name[0] != '\0' ? who.name : "-", status, &rp,
		      rc == 0 ? "ok" : tb_err_name(rp.err.code));
	{
		const char *const extra[][2] = {{MHD_HTTP_HEADER_SET_COOKIE, rp.set_cookie},
						{MHD_HTTP_HEADER_RETRY_AFTER, retry_s}};

		if (rc != 0) {
			json_decref(rp.body);
			free(rp.text);
			ret = send_error(cs->conn, &rp.err, extra, 2);
		} else if (rp.stream) {
			ret = start_stream(h, cs, &rp);
		} else if (rp.text != NULL) {
			ret = send_text(cs->conn, status, rp.text, rp.text_len, rp.content_type);
		} else {
			ret = send_json(cs->conn, status, rp.body, extra, 2);
		}
	}
	tb_metrics_request(h->app->metrics, route->pattern, route->method, status,
			   (double)(tb_monotonic_ms() - cs->start_ms) / 1000.0);
	return ret;
}

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
		{".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
		{".json", "application/json"}, {".map", "application/json"},
		{".svg", "image/svg+xml"}, {".png", "image/png"}, {".ico", "image/x-icon"},
		{".woff2", "font/woff2"}, {".txt", "text/plain; charset=utf-8"},
		{".webmanifest", "application/manifest+json"},
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i][0]) == 0)
			return types[i][1];
	return "application/octet-stream";
}

static enum MHD_Result serve_static(struct tb_http *h, struct conn_state *cs, const char *method,
				    char *seg[], size_t nseg)
{
	char rel[PATH_MAX] = "", full[PATH_MAX * 2];
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st;
	int fd;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		const char *const extra[][2] = {{MHD_HTTP_HEADER_ALLOW, "GET, HEAD"}};

		return send_json(cs->conn, 405,
				 json_pack("{s:{s:s, s:s, s:s}}", "error", "code", "method_not_allowed", "message",
					   "static files are read-only", "field", ""),
				 extra, 1);
	}
	if (!h->have_static)
		return fail_now(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	for (size_t i = 0; i < nseg; i++) {
		if (seg[i][0] == '.')
			return fail_now(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
		strncat(rel, "/", sizeof(rel) - strlen(rel) - 1);
		strncat(rel, seg[i], sizeof(rel) - strlen(rel) - 1);
	}
	if (nseg == 0)
		snprintf(rel, sizeof(rel), "/index.html");
	/* split_path refused "..", "." and encoded slashes, and no segment
	 * here starts with a dot, so full stays inside the static root. */
	if ((size_t)snprintf(full, sizeof(full), "%s%s", h->static_root, rel) >= sizeof(full))
		return fail_now(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	fd = open(full, O_RDONLY | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return fail_now(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	}
	r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (r == NULL) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(full));
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	ret = MHD_queue_response(cs->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result dispatch(struct tb_http *h, struct conn_state *cs, const char *url,
				const char *method)
{
	char *seg[32];
	size_t nseg = 0;
	struct tb_error e = {0};

	MHD_get_connection_values(cs->conn, MHD_GET_ARGUMENT_KIND, check_query, cs);
	if (split_path(cs, url, seg, sizeof(seg) / sizeof(seg[0]), &nseg, &e) != 0)
		return send_error(cs->conn, &e, NULL, 0);
	if ((nseg >= 1 && strcmp(seg[0], "api") == 0) || (nseg == 1 && strcmp(seg[0], "metrics") == 0))
		return serve_api(h, cs, method, url, seg, nseg);
	if (cs->too_large)
		return fail_now(cs->conn, TB_ERR_TOO_LARGE, "", "the body is larger than %zu bytes", h->cfg.body_limit);
	return serve_static(h, cs, method, seg, nseg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct tb_http *h = cls;
	struct conn_state *cs = *con_cls;

	(void)version;
	if (cs == NULL) {
		const union MHD_ConnectionInfo *ci;
		const char *clen;

		cs = calloc(1, sizeof(*cs));
		if (cs == NULL)
			return MHD_NO;
		cs->conn = conn;
		cs->start_ms = tb_monotonic_ms();
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci == NULL || ci->client_addr == NULL ||
		    getnameinfo(ci->client_addr,
				ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								       : sizeof(struct sockaddr_in),
				cs->remote, sizeof(cs->remote), NULL, 0, NI_NUMERICHOST) != 0)
			snprintf(cs->remote, sizeof(cs->remote), "unknown");
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (clen != NULL && strtoull(clen, NULL, 10) > h->cfg.body_limit)
			cs->too_large = 1;
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (cs->too_large || cs->len + n > h->cfg.body_limit) {
			cs->too_large = 1;
			return MHD_YES;
		}
		if (cs->len + n + 1 > cs->cap) {
			size_t cap = (cs->len + n + 1) * 2;
			char *b = realloc(cs->buf, cap);

			if (b == NULL)
				return MHD_NO;
			cs->buf = b;
			cs->cap = cap;
		}
		memcpy(cs->buf + cs->len, upload_data, n);
		cs->len += n;
		return MHD_YES;
	}
	return dispatch(h, cs, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (cs == NULL)
		return;
	for (size_t i = 0; i < cs->ndecoded; i++)
		free(cs->decoded[i]);
	free(cs->buf);
	free(cs);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	tb_warn("http", "%s", msg);
}

/* Read a PEM file whole; a key must be readable by its owner only. */
static int read_pem(const char *path, int secret, char **out, struct tb_error *err)
{
	struct stat st;
	char *buf;
	FILE *f;
	size_t n;

	*out = NULL;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return tb_fail(err, TB_ERR_CONFIG, "tls", "cannot read %s: %s", path, strerror(errno));
	if (secret && (st.st_mode & (S_IRWXG | S_IRWXO)))
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s can be read by group or others; chmod 600 it", path);
	if (st.st_size <= 0 || st.st_size > 1024 * 1024)
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s is empty or too large for a PEM file", path);
	f = fopen(path, "rb");
	buf = f != NULL ? malloc((size_t)st.st_size + 1) : NULL;
	if (buf == NULL) {
		if (f != NULL)
			fclose(f);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "cannot read %s", path);
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	buf[n] = '\0';
	if (strstr(buf, "-----BEGIN ") == NULL) {
		free(buf);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s is not a PEM file", path);
	}
	*out = buf;
	return 0;
}

int tb_http_start(struct tb_app *app, const struct tb_http_config *cfg, struct tb_http **out,
		  struct tb_error *err)
{
	struct tb_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls_opts[3] = {{MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL},
					     {MHD_OPTION_END, 0, NULL}};

	*out = NULL;
	if (h == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	h->app = app;
	h->cfg = *cfg;
	memset(&ss, 0, sizeof(ss));
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		if (inet_pton(AF_INET, cfg->bind_address, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			s4->sin_port = htons((uint16_t)cfg->port);
		} else if (inet_pton(AF_INET6, cfg->bind_address, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)cfg->port);
			flags |= MHD_USE_IPv6;
		} else {
			free(h);
			return tb_fail(err, TB_ERR_INVALID, "listen", "not an IP address to listen on: %s",
				       cfg->bind_address);
		}
	}
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		free(h);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "TLS needs both a certificate and a key");
	}
	if (cfg->tls_cert != NULL) {
		int rc;

		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			free(h);
			return tb_fail(err, TB_ERR_CONFIG, "tls", "this libmicrohttpd was built without TLS");
		}
		if ((rc = read_pem(cfg->tls_cert, 0, &h->tls_cert, err)) != 0 ||
		    (rc = read_pem(cfg->tls_key, 1, &h->tls_key, err)) != 0) {
			free(h->tls_cert);
			free(h);
			return rc;
		}
		flags |= MHD_USE_TLS;
	}
	if (cfg->static_dir != NULL) {
		struct stat st;

		if (stat(cfg->static_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			tb_warn("http", "no static files: %s is not a directory", cfg->static_dir);
		} else {
			snprintf(h->static_root, sizeof(h->static_root), "%s", cfg->static_dir);
			h->have_static = 1;
		}
	}
	if (h->tls_cert != NULL) {
		tls_opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, h->tls_key};
		tls_opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, h->tls_cert};
	}
	h->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2,
				MHD_OPTION_CONNECTION_LIMIT, cfg->connection_limit,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->per_ip_limit,
				MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
				MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
				MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_ARRAY, tls_opts,
				MHD_OPTION_END);
	pthread_mutex_init(&h->hb_lock, NULL);
	pthread_cond_init(&h->hb_cond, NULL);
	if (h->d == NULL) {
		free(h->tls_cert);
		free(h->tls_key);
	}
	if (h->d != NULL && pthread_create(&h->heartbeat, NULL, heartbeat, h) == 0)
		h->hb_running = 1;
	if (h->d == NULL) {
		pthread_mutex_destroy(&h->hb_lock);
		pthread_cond_destroy(&h->hb_cond);
		free(h);
		return tb_fail(err, TB_ERR_IO, "listen", "cannot listen on %s port %u (in use, or not an address of this machine?)",
			       cfg->bind_address, cfg->port);
	}
	*out = h;
	return 0;
}

unsigned int tb_http_port(const struct tb_http *h)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return info != NULL ? info->port : 0;
}

void tb_http_stop(struct tb_http *h)
{
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->hb_lock);
	h->hb_stop = 1;
	pthread_cond_broadcast(&h->hb_cond);
	pthread_mutex_unlock(&h->hb_lock);
	if (h->hb_running)
		pthread_join(h->heartbeat, NULL);
	/* The app closed the bus first: every stream was woken and ends. */
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->hb_lock);
	pthread_cond_destroy(&h->hb_cond);
	if (h->tls_key != NULL)
		memset(h->tls_key, 0, strlen(h->tls_key));
	free(h->tls_key);
	free(h->tls_cert);
	free(h);
}
