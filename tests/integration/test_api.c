/*
 * test_api.c - the HTTP edge and auth against the real testbedd on port 0:
 * bad input is a table (request -> status and error code), every route under
 * every kind of caller, security headers, static files, sessions, audit,
 * first start, SIGHUP reload and the failed-login limit.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

enum who { NOBODY, VIEWER, OPERATOR, ADMIN, REVOKED, GARBAGE, COOKIE, COOKIE_CSRF };

static struct tb_test_daemon D;
static char tok[8][128];
static char cookie_hdr[256], csrf_hdr[256];

static void call(enum who w, const char *method, const char *path, const char *ctype, const char *body, size_t body_len,
		 struct tb_test_resp *r)
{
	char url[2048], auth[256], ct[128];
	const char *h[4] = {0};
	int n = 0;

	snprintf(url, sizeof(url), "%s%s", D.url, path);
	if (w == COOKIE || w == COOKIE_CSRF) {
		h[n++] = cookie_hdr;
		if (w == COOKIE_CSRF)
			h[n++] = csrf_hdr;
	} else if (w != NOBODY) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok[w]);
		h[n++] = auth;
	}
	if (ctype != NULL) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h[n++] = ct;
	}
	assert_int_equal(tb_test_http(method, url, h, body, body != NULL ? body_len : 0, r), 0);
}

static void create_token(const char *name, const char *role, char out[128])
{
	struct tb_test_resp r;
	char body[128];

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"%s\"}", name, role);
	call(ADMIN, "POST", "/api/v1/tokens", "application/json", body, strlen(body), &r);
	assert_int_equal(r.status, 201);
	snprintf(out, 128, "%s", json_string_value(json_object_get(r.json, "secret")));
	tb_test_resp_free(&r);
}

static int setup(void **state)
{
	struct tb_test_resp r;
	char body[256], buf[512];
	json_t *id;

	(void)state;
	if (tb_test_daemon_start(&D, NULL, NULL) != 0)
		return -1;
	snprintf(tok[ADMIN], sizeof(tok[ADMIN]), "%s", D.admin_token);
	create_token("v", "viewer", tok[VIEWER]);
	create_token("o", "operator", tok[OPERATOR]);
	create_token("gone", "viewer", tok[REVOKED]);
	snprintf(tok[GARBAGE], sizeof(tok[GARBAGE]), "tbk_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	/* revoke "gone": its id is the number after tbk_ */
	snprintf(body, sizeof(body), "/api/v1/tokens/%ld", strtol(tok[REVOKED] + 4, NULL, 10));
	call(ADMIN, "DELETE", body, NULL, NULL, 0, &r);
	if (r.status != 204)
		return -1;
	tb_test_resp_free(&r);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", tok[ADMIN]);
	call(NOBODY, "POST", "/api/v1/session", "application/json", body, strlen(body), &r);
	if (r.status != 200 || tb_test_header(&r, "Set-Cookie", buf, sizeof(buf)) == NULL)
		return -1;
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie_hdr, sizeof(cookie_hdr), "Cookie: %s", buf);
	id = json_object_get(json_object_get(r.json, "session"), "csrf_token");
	snprintf(csrf_hdr, sizeof(csrf_hdr), "X-CSRF-Token: %s", json_string_value(id));
	tb_test_resp_free(&r);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D) == 0 ? 0 : -1;
}

struct api_case {
	const char *name;
	enum who who;
	const char *method;
	const char *path;
	const char *ctype;
	const char *body;
	long status;
	const char *code; /* expected error.code, NULL when not an error */
};

#define J "application/json"
static const struct api_case cases[] = {
	{"health needs no token", NOBODY, "GET", "/api/v1/health", NULL, NULL, 200, NULL},
	{"hosts need a token", NOBODY, "GET", "/api/v1/hosts", NULL, NULL, 401, "unauthorized"},
	{"hosts: viewer", VIEWER, "GET", "/api/v1/hosts", NULL, NULL, 200, NULL},
	{"hosts: operator", OPERATOR, "GET", "/api/v1/hosts", NULL, NULL, 200, NULL},
	{"hosts: admin", ADMIN, "GET", "/api/v1/hosts", NULL, NULL, 200, NULL},
	{"hosts: cookie", COOKIE, "GET", "/api/v1/hosts", NULL, NULL, 200, NULL},
	{"hosts: revoked token", REVOKED, "GET", "/api/v1/hosts", NULL, NULL, 401, "unauthorized"},
	{"hosts: unknown token", GARBAGE, "GET", "/api/v1/hosts", NULL, NULL, 401, "unauthorized"},
	{"host by name", VIEWER, "GET", "/api/v1/hosts/left", NULL, NULL, 200, NULL},
	{"unknown host", VIEWER, "GET", "/api/v1/hosts/nope", NULL, NULL, 404, "not_found"},
	{"whoami", OPERATOR, "GET", "/api/v1/whoami", NULL, NULL, 200, NULL},
	{"whoami needs a token", NOBODY, "GET", "/api/v1/whoami", NULL, NULL, 401, "unauthorized"},
	{"tokens: viewer refused", VIEWER, "GET", "/api/v1/tokens", NULL, NULL, 403, "forbidden"},
	{"tokens: operator refused", OPERATOR, "GET", "/api/v1/tokens", NULL, NULL, 403, "forbidden"},
	{"tokens: admin", ADMIN, "GET", "/api/v1/tokens", NULL, NULL, 200, NULL},
	{"tokens: admin cookie, GET needs no CSRF", COOKIE, "GET", "/api/v1/tokens", NULL, NULL, 200, NULL},
	{"create token: nobody", NOBODY, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\"}", 401,
	 "unauthorized"},
	{"create token: viewer", VIEWER, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\"}", 403,
	 "forbidden"},
	{"create token: operator", OPERATOR, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\"}", 403,
	 "forbidden"},
	{"create token: revoked", REVOKED, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\"}", 401,
	 "unauthorized"},
	{"create token: admin", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\"}", 201, NULL},
	{"create token: cookie without CSRF", COOKIE, "POST", "/api/v1/tokens", J,
	 "{\"name\":\"b\",\"role\":\"viewer\"}", 403, "csrf_required"},
	{"create token: cookie with CSRF", COOKIE_CSRF, "POST", "/api/v1/tokens", J,
	 "{\"name\":\"b\",\"role\":\"viewer\"}", 201, NULL},
	{"malformed JSON", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":", 400, "invalid_json"},
	{"JSON not an object", ADMIN, "POST", "/api/v1/tokens", J, "[1,2]", 400, "invalid_json"},
	{"empty body", ADMIN, "POST", "/api/v1/tokens", J, "", 400, "invalid_json"},
	{"duplicate key", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"name\":\"b\",\"role\":\"viewer\"}",
	 400, "invalid_json"},
	{"invalid UTF-8", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"\xff\xfe\",\"role\":\"viewer\"}", 400,
	 "invalid_json"},
	{"wrong type", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":5,\"role\":\"viewer\"}", 400, "invalid_field"},
	{"missing field", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a\"}", 400, "invalid_field"},
	{"bad role", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"god\"}", 400, "invalid_field"},
	{"bad token name", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a b;rm\",\"role\":\"viewer\"}", 400,
	 "invalid_field"},
	{"unknown field", ADMIN, "POST", "/api/v1/tokens", J, "{\"name\":\"a\",\"role\":\"viewer\",\"admin\":true}",
	 400, "unknown_field"},
	{"no content type", ADMIN, "POST", "/api/v1/tokens", NULL, "{\"name\":\"a\",\"role\":\"viewer\"}", 415,
	 "unsupported_media_type"},
	{"wrong content type", ADMIN, "POST", "/api/v1/tokens", "text/plain", "{\"name\":\"a\",\"role\":\"viewer\"}",
	 415, "unsupported_media_type"},
	{"revoke: bad id", ADMIN, "DELETE", "/api/v1/tokens/abc", NULL, NULL, 400, "invalid_field"},
	{"revoke: unknown id", ADMIN, "DELETE", "/api/v1/tokens/999999", NULL, NULL, 404, "not_found"},
	{"revoke: operator", OPERATOR, "DELETE", "/api/v1/tokens/1", NULL, NULL, 403, "forbidden"},
	{"wrong method", VIEWER, "DELETE", "/api/v1/hosts", NULL, NULL, 405, "method_not_allowed"},
	{"wrong method on a host", ADMIN, "PUT", "/api/v1/hosts/left", NULL, NULL, 405, "method_not_allowed"},
	{"unknown route", VIEWER, "GET", "/api/v1/nothing", NULL, NULL, 404, "not_found"},
	{"unknown API version", VIEWER, "GET", "/api/v2/hosts", NULL, NULL, 404, "not_found"},
	{"dot-dot in path", VIEWER, "GET", "/api/v1/../../etc/passwd", NULL, NULL, 400, "invalid_field"},
	{"encoded dot-dot", VIEWER, "GET", "/api/v1/hosts/%2e%2e", NULL, NULL, 400, "invalid_field"},
	{"encoded slash", VIEWER, "GET", "/api/v1/hosts/a%2fb", NULL, NULL, 400, "invalid_field"},
	{"encoded NUL", VIEWER, "GET", "/api/v1/hosts/left%00", NULL, NULL, 400, "invalid_field"},
	{"bad escape", VIEWER, "GET", "/api/v1/hosts/%zz", NULL, NULL, 400, "invalid_field"},
	{"static dot-dot", NOBODY, "GET", "/../etc/passwd", NULL, NULL, 400, "invalid_field"},
	{"static encoded dot-dot", NOBODY, "GET", "/%2e%2e/%2e%2e/etc/passwd", NULL, NULL, 400, "invalid_field"},
	{"static dotfile", NOBODY, "GET", "/.git/config", NULL, NULL, 404, "not_found"},
	{"static missing", NOBODY, "GET", "/nope.js", NULL, NULL, 404, "not_found"},
	{"static POST", NOBODY, "POST", "/index.html", NULL, NULL, 405, "method_not_allowed"},
	{"query with NUL", ADMIN, "GET", "/api/v1/audit?host=a%00b", NULL, NULL, 400, "invalid_field"},
	{"audit: viewer", VIEWER, "GET", "/api/v1/audit", NULL, NULL, 403, "forbidden"},
	{"audit: admin", ADMIN, "GET", "/api/v1/audit?limit=5", NULL, NULL, 200, NULL},
	{"audit: limit 0", ADMIN, "GET", "/api/v1/audit?limit=0", NULL, NULL, 400, "invalid_field"},
	{"audit: limit text", ADMIN, "GET", "/api/v1/audit?limit=ten", NULL, NULL, 400, "invalid_field"},
	{"audit: bad since", ADMIN, "GET", "/api/v1/audit?since=yesterday", NULL, NULL, 400, "invalid_field"},
	{"audit: since", ADMIN, "GET", "/api/v1/audit?since=2020-01-01T00:00:00Z", NULL, NULL, 200, NULL},
	{"trust: operator", OPERATOR, "POST", "/api/v1/hosts/left/trust", J,
	 "{\"os\":\"ubuntu\",\"fingerprint\":\"SHA256:x\"}", 403, "forbidden"},
	{"trust: nothing presented", ADMIN, "POST", "/api/v1/hosts/left/trust", J,
	 "{\"os\":\"ubuntu\",\"fingerprint\":\"SHA256:x\"}", 409, "conflict"},
	{"trust: unknown OS", ADMIN, "POST", "/api/v1/hosts/left/trust", J,
	 "{\"os\":\"windows\",\"fingerprint\":\"SHA256:x\"}", 404, "not_found"},
	{"trust: unknown host", ADMIN, "POST", "/api/v1/hosts/nope/trust", J,
	 "{\"os\":\"ubuntu\",\"fingerprint\":\"SHA256:x\"}", 404, "not_found"},
	{"trust: missing fingerprint", ADMIN, "POST", "/api/v1/hosts/left/trust", J, "{\"os\":\"ubuntu\"}", 400,
	 "invalid_field"},
	{"GET with a body", VIEWER, "GET", "/api/v1/hosts", J, "{}", 400, "invalid_field"},
	{"login: bad token", NOBODY, "POST", "/api/v1/session", J, "{\"token\":\"tbk_1_nope\"}", 401, "unauthorized"},
	{"login: unknown field", NOBODY, "POST", "/api/v1/session", J, "{\"token\":\"x\",\"role\":\"admin\"}", 400,
	 "unknown_field"},
};

static void test_table(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct api_case *c = &cases[i];
		struct tb_test_resp r;
		const char *code;

		call(c->who, c->method, c->path, c->ctype, c->body, c->body != NULL ? strlen(c->body) : 0, &r);
		code = tb_test_error_code(&r);
		if (r.status != c->status || (c->code != NULL && strcmp(code, c->code) != 0) ||
		    (c->code == NULL && code[0] != '\0')) {
			fprintf(stderr, "FAIL %s: %s %s -> %ld %s (expected %ld %s): %s\n", c->name, c->method, c->path,
				r.status, code, c->status, c->code ? c->code : "", r.body);
			failures++;
		}
		if (c->code != NULL) {
			/* every error has the one shape, with a sentence for a person */
			json_t *e = json_object_get(r.json, "error");

			if (!json_is_string(json_object_get(e, "message")) ||
			    json_string_length(json_object_get(e, "message")) < 5 ||
			    !json_is_string(json_object_get(e, "field"))) {
				fprintf(stderr, "FAIL %s: error shape: %s\n", c->name, r.body);
				failures++;
			}
		}
		tb_test_resp_free(&r);
	}
	assert_int_equal(failures, 0);
}

static void test_oversized(void **state)
{
	struct tb_test_resp r;
	size_t n = 400 * 1024;
	char *big = malloc(n + 1), hdr[80 * 1024];
	char url[256];
	const char *h[] = {hdr, NULL};

	(void)state;
	memset(big, 'x', n);
	big[n] = '\0';
	call(ADMIN, "POST", "/api/v1/tokens", J, big, n, &r);
	assert_int_equal(r.status, 413);
	assert_string_equal(tb_test_error_code(&r), "too_large");
	tb_test_resp_free(&r);
	free(big);

	/* a header larger than the per-connection memory: MHD answers 431 */
	snprintf(hdr, sizeof(hdr), "X-Big: ");
	memset(hdr + 7, 'y', sizeof(hdr) - 8);
	hdr[sizeof(hdr) - 1] = '\0';
	snprintf(url, sizeof(url), "%s/api/v1/health", D.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_true(r.status == 431 || r.status == 413);
	tb_test_resp_free(&r);
}

static void test_allow_header(void **state)
{
	struct tb_test_resp r;
	char buf[128];

	(void)state;
	call(VIEWER, "DELETE", "/api/v1/hosts", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 405);
	assert_non_null(tb_test_header(&r, "Allow", buf, sizeof(buf)));
	assert_string_equal(buf, "GET");
	tb_test_resp_free(&r);
	call(ADMIN, "PATCH", "/api/v1/tokens", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 405);
	assert_non_null(tb_test_header(&r, "Allow", buf, sizeof(buf)));
	assert_string_equal(buf, "GET, POST");
	tb_test_resp_free(&r);
}

static void test_www_authenticate(void **state)
{
	struct tb_test_resp r;
	char buf[128];

	(void)state;
	call(NOBODY, "GET", "/api/v1/hosts", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 401);
	assert_non_null(tb_test_header(&r, "WWW-Authenticate", buf, sizeof(buf)));
	assert_string_equal(buf, "Bearer realm=\"testbedd\"");
	tb_test_resp_free(&r);
}

static void test_security_headers(void **state)
{
	const char *paths[] = {"/api/v1/health", "/", "/nope", "/api/v1/hosts"};
	struct tb_test_resp r;
	char buf[512];

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		call(NOBODY, "GET", paths[i], NULL, NULL, 0, &r);
		assert_non_null(tb_test_header(&r, "Content-Security-Policy", buf, sizeof(buf)));
		assert_non_null(strstr(buf, "frame-ancestors 'none'"));
		assert_non_null(strstr(buf, "script-src 'self'"));
		assert_null(strstr(buf, "unsafe-inline"));
		assert_non_null(tb_test_header(&r, "X-Content-Type-Options", buf, sizeof(buf)));
		assert_string_equal(buf, "nosniff");
		tb_test_resp_free(&r);
	}
}

static void test_static(void **state)
{
	struct tb_test_resp r;
	char buf[128];

	(void)state;
	call(NOBODY, "GET", "/", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_string_equal(buf, "text/html; charset=utf-8");
	assert_non_null(strstr(r.body, "<title>testbedd</title>"));
	tb_test_resp_free(&r);
	call(NOBODY, "GET", "/app.css", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_string_equal(buf, "text/css; charset=utf-8");
	tb_test_resp_free(&r);
}

/* A page's ETag answers 304 when it did not change; the vendored chart
 * library (deploy/setup copies it with a gzip twin) goes gzipped to a
 * browser that takes gzip and plain to one that does not; npm's own tree is
 * not served. */
static void test_static_cache_and_gzip(void **state)
{
	struct tb_test_resp r;
	char etag[128], hdr[160], buf[128], url[256];
	const char *h1[] = {hdr, NULL};
	const char *gz[] = {"Accept-Encoding: gzip, deflate, br", NULL};
	size_t plain;

	(void)state;
	call(NOBODY, "GET", "/app.css", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "ETag", etag, sizeof(etag)));
	tb_test_resp_free(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s", etag);
	snprintf(url, sizeof(url), "%s/app.css", D.url);
	assert_int_equal(tb_test_http("GET", url, h1, NULL, 0, &r), 0);
	assert_int_equal(r.status, 304);
	assert_int_equal(r.len, 0);
	tb_test_resp_free(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: \"0-0\"");
	assert_int_equal(tb_test_http("GET", url, h1, NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	tb_test_resp_free(&r);

	call(NOBODY, "GET", "/vendor/echarts.mjs", NULL, NULL, 0, &r);
	if (r.status == 404)
		fail_msg("static/vendor/echarts.mjs is missing: deploy/setup installs the chart library");
	assert_int_equal(r.status, 200);
	assert_null(tb_test_header(&r, "Content-Encoding", buf, sizeof(buf)));
	assert_non_null(tb_test_header(&r, "Content-Type", buf, sizeof(buf)));
	assert_string_equal(buf, "text/javascript; charset=utf-8");
	plain = r.len;
	assert_true(plain > 100000);
	tb_test_resp_free(&r);
	snprintf(url, sizeof(url), "%s/vendor/echarts.mjs", D.url);
	assert_int_equal(tb_test_http("GET", url, gz, NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Content-Encoding", buf, sizeof(buf)));
	assert_string_equal(buf, "gzip");
	assert_true(r.len > 0 && r.len < plain / 2);
	assert_int_equal((unsigned char)r.body[0], 0x1f); /* the gzip magic */
	assert_int_equal((unsigned char)r.body[1], 0x8b);
	assert_non_null(tb_test_header(&r, "Vary", buf, sizeof(buf)));
	tb_test_resp_free(&r);

	call(NOBODY, "GET", "/node_modules/echarts/package.json", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 404);
	tb_test_resp_free(&r);
}

static void test_hosts_shape(void **state)
{
	struct tb_test_resp r;
	json_t *hosts, *left, *state_j;

	(void)state;
	call(VIEWER, "GET", "/api/v1/hosts", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	hosts = json_object_get(r.json, "hosts");
	assert_int_equal(json_array_size(hosts), 2);
	left = json_array_get(hosts, 0);
	assert_string_equal(json_string_value(json_object_get(left, "name")), "left");
	assert_string_equal(json_string_value(json_object_get(left, "role")), "host");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_object_get(left, "os"), "freebsd"), "address")),
		"127.0.0.2");
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(left, "boot"), "entries"),
							      "freebsd")),
			    "freebsd");
	state_j = json_object_get(left, "state");
	assert_non_null(json_object_get(state_j, "reachability"));
	/* no secret and no path of a secret file anywhere */
	assert_null(strstr(r.body, "key_file"));
	assert_null(strstr(r.body, "password"));
	assert_null(strstr(r.body, "not a key: nothing listens")); /* the key file's text */
	tb_test_resp_free(&r);
}

struct audit_find {
	const char *action, *target, *actor;
	long status;
};

static int audit_has(const struct audit_find *f)
{
	struct tb_test_resp r;
	json_t *row;
	size_t i;
	int found = 0;

	call(ADMIN, "GET", "/api/v1/audit?limit=1000", NULL, NULL, 0, &r);
	json_array_foreach(json_object_get(r.json, "audit"), i, row)
	{
		if (strcmp(json_string_value(json_object_get(row, "action")), f->action) == 0 &&
		    strcmp(json_string_value(json_object_get(row, "target")), f->target) == 0 &&
		    strcmp(json_string_value(json_object_get(row, "actor")), f->actor) == 0 &&
		    json_integer_value(json_object_get(row, "status")) == f->status)
			found = 1;
	}
	tb_test_resp_free(&r);
	return found;
}

static void test_audit(void **state)
{
	const struct audit_find ok = {"token.create", "v", "admin", 201};
	const struct audit_find refused = {"token.create", "", "-", 401};
	const struct audit_find forbidden = {"token.create", "", "v", 403};
	const struct audit_find revoke = {"token.revoke", "", "admin", 204};
	struct tb_test_resp r;

	(void)state;
	assert_true(audit_has(&ok));
	/* a request that failed authentication is counted, not audited (issue 15) */
	assert_false(audit_has(&refused));
	assert_true(audit_has(&forbidden));
	(void)revoke;
	/* filters */
	call(ADMIN, "GET", "/api/v1/audit?actor=v", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_true(json_array_size(json_object_get(r.json, "audit")) >= 1);
	for (size_t i = 0; i < json_array_size(json_object_get(r.json, "audit")); i++)
		assert_string_equal(json_string_value(json_object_get(
					    json_array_get(json_object_get(r.json, "audit"), i), "actor")),
				    "v");
	tb_test_resp_free(&r);
	call(ADMIN, "GET", "/api/v1/audit?since=2999-01-01T00:00:00Z", NULL, NULL, 0, &r);
	assert_int_equal(json_array_size(json_object_get(r.json, "audit")), 0);
	tb_test_resp_free(&r);
	/* reads are not audited */
	call(ADMIN, "GET", "/api/v1/audit?limit=1000", NULL, NULL, 0, &r);
	assert_null(strstr(r.body, "\"method\":\"GET\""));
	tb_test_resp_free(&r);
}

static void test_tokens_list_has_no_secret(void **state)
{
	struct tb_test_resp r;

	(void)state;
	call(ADMIN, "GET", "/api/v1/tokens", NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, tok[VIEWER]));
	assert_null(strstr(r.body, "tbk_"));
	assert_null(strstr(r.body, "hash"));
	assert_true(json_array_size(json_object_get(r.json, "tokens")) >= 4);
	tb_test_resp_free(&r);
}

static void test_first_start(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(stat(D.admin_token_file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(strncmp(D.admin_token, "tbk_", 4) == 0);
	assert_true(tb_test_daemon_log_contains(&D, D.admin_token_file));
	assert_false(tb_test_daemon_log_contains(&D, D.admin_token));
	assert_false(tb_test_daemon_log_contains(&D, tok[VIEWER]));
}

static void test_session_cookie_and_logout(void **state)
{
	struct tb_test_resp r;
	char body[256], buf[512], cookie[300], csrf[300];
	const char *h[3];

	(void)state;
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", tok[VIEWER]);
	call(NOBODY, "POST", "/api/v1/session", J, body, strlen(body), &r);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Set-Cookie", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "HttpOnly"));
	assert_non_null(strstr(buf, "SameSite=Strict"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "session"), "role")), "viewer");
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie, sizeof(cookie), "Cookie: %s", buf);
	snprintf(csrf, sizeof(csrf), "X-CSRF-Token: %s",
		 json_string_value(json_object_get(json_object_get(r.json, "session"), "csrf_token")));
	tb_test_resp_free(&r);
	h[0] = cookie, h[1] = NULL;
	snprintf(body, sizeof(body), "%s/api/v1/whoami", D.url);
	assert_int_equal(tb_test_http("GET", body, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(json_object_get(r.json, "via")), "cookie");
	tb_test_resp_free(&r);
	/* a viewer session cannot create tokens even with the CSRF header */
	h[1] = csrf, h[2] = NULL;
	snprintf(body, sizeof(body), "%s/api/v1/session", D.url);
	assert_int_equal(tb_test_http("DELETE", body, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
	h[1] = NULL;
	snprintf(body, sizeof(body), "%s/api/v1/whoami", D.url);
	assert_int_equal(tb_test_http("GET", body, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 401);
	tb_test_resp_free(&r);
}

static void test_revoked_token_kills_its_sessions(void **state)
{
	struct tb_test_resp r;
	char secret[128], body[256], buf[512], cookie[300], url[256];
	const char *h[2] = {cookie, NULL};

	(void)state;
	create_token("short", "operator", secret);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", secret);
	call(NOBODY, "POST", "/api/v1/session", J, body, strlen(body), &r);
	assert_int_equal(r.status, 200);
	tb_test_header(&r, "Set-Cookie", buf, sizeof(buf));
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie, sizeof(cookie), "Cookie: %s", buf);
	tb_test_resp_free(&r);
	snprintf(body, sizeof(body), "/api/v1/tokens/%ld", strtol(secret + 4, NULL, 10));
	call(ADMIN, "DELETE", body, NULL, NULL, 0, &r);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
	snprintf(url, sizeof(url), "%s/api/v1/whoami", D.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 401);
	tb_test_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_allow_header),
		cmocka_unit_test(test_www_authenticate),
		cmocka_unit_test(test_security_headers),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_static_cache_and_gzip),
		cmocka_unit_test(test_hosts_shape),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_tokens_list_has_no_secret),
		cmocka_unit_test(test_first_start),
		cmocka_unit_test(test_session_cookie_and_logout),
		cmocka_unit_test(test_revoked_token_kills_its_sessions),
	};

	return cmocka_run_group_tests_name("api", tests, setup, teardown);
}
