/*
 * test_hostile.c - hostile requests against the real testbedd on port 0
 * (issue 15): each with the exact status and JSON error code it must get.
 *
 * A table of single requests (long segments, media types, query limits,
 * static files behind symbolic links, npm's files); requests libcurl will not
 * send (duplicate Content-Length, Content-Length with Transfer-Encoding, a
 * declared body over the limit) go over a raw socket; the failed-auth limiter
 * (a good token still works after 10 bad ones; Retry-After is the time left);
 * and an unauthenticated flood whose effect on the database is bounded and
 * counted in /metrics.  Every request comes from 127.0.0.1, one address: the
 * limiter's cases run against daemons of their own.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "http.h"

/* Database growth allowed for the whole unauthenticated flood (both kinds,
 * 400 requests): the one aggregated audit row and its event, SQLite pages and
 * the WAL's frames for them, and the prober's own writes meanwhile.  Before
 * the fix, 200 requests with 20,000-byte segments grew it by ~28 MB. */
#define FLOOD_DB_BOUND (512 * 1024)

enum who { NOBODY, ADMIN, VIEWER, BAD };

static struct tb_test_daemon D;
static char viewer_tok[128];
static char static_dir[512], outside_dir[512];

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A static root of our own: a page, a real subdirectory, a symbolic link to a
 * directory outside holding a "secret", a link to a directory inside, a link
 * to a file, and npm's manifest and lockfile. */
static void make_static(void)
{
	char p[1024];

	snprintf(static_dir, sizeof(static_dir), "%s/static", D.dir);
	snprintf(outside_dir, sizeof(outside_dir), "%s/outside", D.dir);
	assert_int_equal(mkdir(static_dir, 0755), 0);
	assert_int_equal(mkdir(outside_dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/index.html", static_dir);
	write_text(p, "<!doctype html><title>t</title>\n");
	snprintf(p, sizeof(p), "%s/real", static_dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/real/page.txt", static_dir);
	write_text(p, "inside\n");
	snprintf(p, sizeof(p), "%s/secret.txt", outside_dir);
	write_text(p, "outside\n");
	snprintf(p, sizeof(p), "%s/linked", static_dir);
	assert_int_equal(symlink(outside_dir, p), 0);
	snprintf(p, sizeof(p), "%s/alias", static_dir);
	assert_int_equal(symlink("real", p), 0);
	snprintf(p, sizeof(p), "%s/real/file-link.txt", static_dir);
	assert_int_equal(symlink("page.txt", p), 0);
	snprintf(p, sizeof(p), "%s/package.json", static_dir);
	write_text(p, "{\"name\":\"x\"}\n");
	snprintf(p, sizeof(p), "%s/package-lock.json", static_dir);
	write_text(p, "{\"lockfileVersion\":3}\n");
	snprintf(p, sizeof(p), "%s/real/yarn.lock", static_dir);
	write_text(p, "# yarn\n");
}

static int setup(void **state)
{
	const char *extra[] = {"--static", NULL, NULL};

	(void)state;
	/* the static root lives in the daemon's directory: start once to get
	 * it, stop, fill it, start again on the same directories */
	if (tb_test_daemon_start(&D, NULL, NULL) != 0 || tb_test_daemon_kill(&D) != 0)
		return -1;
	make_static();
	extra[1] = static_dir;
	if (tb_test_daemon_launch(&D, extra, 0) != 0)
		return -1;
	return tb_test_create_token(&D, "v", "viewer", viewer_tok, sizeof(viewer_tok)) == 201 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D);
}

static void call(const struct tb_test_daemon *d, enum who w, const char *method, const char *path, const char *ctype,
		 const char *body, struct tb_test_resp *r)
{
	char url[32768], auth[256], ct[128];
	const char *h[4] = {0};
	int n = 0;

	snprintf(url, sizeof(url), "%s%s", d->url, path);
	if (w == ADMIN)
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	else if (w == VIEWER)
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", viewer_tok);
	else if (w == BAD)
		snprintf(auth, sizeof(auth), "Authorization: Bearer tbk_1_notthetoken");
	if (w != NOBODY)
		h[n++] = auth;
	if (ctype != NULL) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h[n++] = ct;
	}
	assert_int_equal(tb_test_http(method, url, h, body, body != NULL ? strlen(body) : 0, r), 0);
}

/* "/api/v1/hosts/" + n x c + tail */
static char *long_path(const char *head, size_t n, char c, const char *tail)
{
	size_t hl = strlen(head), tl = strlen(tail);
	char *p = malloc(hl + n + tl + 1);

	assert_non_null(p);
	memcpy(p, head, hl);
	memset(p + hl, c, n);
	memcpy(p + hl + n, tail, tl + 1);
	return p;
}

struct hostile {
	const char *name;
	enum who who;
	const char *method;
	const char *path; /* "@257" / "@256": a host segment of that many bytes */
	const char *ctype;
	const char *body;
	long status;
	const char *code; /* error.code, or NULL for a success */
};

static const struct hostile table[] = {
	{"segment of 257 bytes", VIEWER, "GET", "@257", NULL, NULL, 414, "uri_too_long"},
	{"segment of 257 bytes, no token", NOBODY, "POST", "@257/power", "application/json", "{}", 414, "uri_too_long"},
	{"segment of 257 bytes, static", NOBODY, "GET", "/x/@257", NULL, NULL, 414, "uri_too_long"},
	{"segment of 256 bytes routes", VIEWER, "GET", "@256", NULL, NULL, 404, "not_found"},
	{"encoded segment over 256 bytes", VIEWER, "GET",
	 "/api/v1/hosts/%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"
	 "%41%41%41",
	 NULL, NULL, 414, "uri_too_long"},
	{"APPLICATION/JSON", ADMIN, "POST", "/api/v1/tokens", "APPLICATION/JSON",
	 "{\"name\":\"u1\",\"role\":\"viewer\"}", 201, NULL},
	{"Application/Json; charset", ADMIN, "POST", "/api/v1/tokens", "Application/Json; charset=utf-8",
	 "{\"name\":\"u2\",\"role\":\"viewer\"}", 201, NULL},
	{"application/jsonx", ADMIN, "POST", "/api/v1/tokens", "application/jsonx",
	 "{\"name\":\"u3\",\"role\":\"viewer\"}", 415, "unsupported_media_type"},
	{"limit=+5", ADMIN, "GET", "/api/v1/audit?limit=+5", NULL, NULL, 400, "invalid_field"},
	{"limit=%2B5", ADMIN, "GET", "/api/v1/audit?limit=%2B5", NULL, NULL, 400, "invalid_field"},
	{"limit=%205", ADMIN, "GET", "/api/v1/audit?limit=%205", NULL, NULL, 400, "invalid_field"},
	{"limit=5x", ADMIN, "GET", "/api/v1/audit?limit=5x", NULL, NULL, 400, "invalid_field"},
	{"limit=00005", ADMIN, "GET", "/api/v1/audit?limit=00005", NULL, NULL, 400, "invalid_field"},
	{"limit=5", ADMIN, "GET", "/api/v1/audit?limit=5", NULL, NULL, 200, NULL},
	{"static page", NOBODY, "GET", "/real/page.txt", NULL, NULL, 200, NULL},
	{"symlinked directory outside", NOBODY, "GET", "/linked/secret.txt", NULL, NULL, 404, "not_found"},
	{"symlinked directory inside", NOBODY, "GET", "/alias/page.txt", NULL, NULL, 404, "not_found"},
	{"symlinked file", NOBODY, "GET", "/real/file-link.txt", NULL, NULL, 404, "not_found"},
	{"package.json", NOBODY, "GET", "/package.json", NULL, NULL, 404, "not_found"},
	{"package-lock.json", NOBODY, "GET", "/package-lock.json", NULL, NULL, 404, "not_found"},
	{"yarn.lock", NOBODY, "GET", "/real/yarn.lock", NULL, NULL, 404, "not_found"},
};

static void test_table(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct hostile *t = &table[i];
		struct tb_test_resp r;
		char *path = NULL, buf[256];
		const char *at = strchr(t->path, '@');

		if (at != NULL) {
			char head[64];

			snprintf(head, sizeof(head), "%.*s", (int)(at - t->path), t->path);
			path = long_path(head[0] ? head : "/api/v1/hosts/", (size_t)atoi(at + 1), 'h',
					 at + 1 + strspn(at + 1, "0123456789"));
		}
		call(&D, t->who, t->method, path != NULL ? path : t->path, t->ctype, t->body, &r);
		free(path);
		if (r.status != t->status || (t->code != NULL && strcmp(tb_test_error_code(&r), t->code) != 0)) {
			print_error("%s: %s %s: got %ld %s, want %ld %s\n", t->name, t->method, t->path, r.status,
				    tb_test_error_code(&r), t->status, t->code != NULL ? t->code : "");
			failures++;
		} else if (t->code != NULL &&
			   (tb_test_header(&r, "Content-Security-Policy", buf, sizeof(buf)) == NULL ||
			    tb_test_header(&r, "X-Content-Type-Options", buf, sizeof(buf)) == NULL ||
			    strcmp(buf, "nosniff") != 0)) {
			print_error("%s: an error without the security headers\n", t->name);
			failures++;
		}
		tb_test_resp_free(&r);
	}
	assert_int_equal(failures, 0);
}

/* ---- raw requests ---- */

static int raw_connect(const struct tb_test_daemon *d)
{
	struct sockaddr_in a = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)d->port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Send req and read what comes back until the server closes or 10 s pass
 * without a byte (a liveness bound, not a measurement: the server answers
 * within milliseconds).  The reply text, malloc'd. */
static char *raw_exchange(const char *req)
{
	int fd = raw_connect(&D);
	size_t len = 0, cap = 65536;
	char *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t n;

		if (poll(&p, 1, 10000) <= 0)
			break;
		n = read(fd, out + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len + 1 >= cap)
			break;
	}
	out[len] = '\0';
	close(fd);
	return out;
}

struct raw_case {
	const char *name;
	const char *request; /* "%s": the admin token */
	int status;
	const char *code;
	const char *field; /* error.field */
	int one_reply;     /* a pipelined request after it must not be answered */
};

static const struct raw_case raw_cases[] = {
	{"two equal Content-Length",
	 "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
	 "Content-Length: 30\r\nContent-Length: 30\r\n\r\n{\"name\":\"dup\",\"role\":\"viewer\"}",
	 400, "invalid_field", "Content-Length", 1},
	{"two conflicting Content-Length, a smuggled request behind",
	 "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
	 "Content-Length: 30\r\nContent-Length: 70\r\n\r\n{\"name\":\"dup\",\"role\":\"viewer\"}"
	 "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
	 400, "invalid_field", "Content-Length", 1},
	{"Content-Length and Transfer-Encoding",
	 "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
	 "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n1e\r\n{\"name\":\"cte\",\"role\":\"viewer\"}\r\n0\r\n\r\n",
	 400, "invalid_field", "Content-Length", 1},
	{"a declared body over 256 KiB, none sent: 413 at once",
	 "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
	 "Content-Length: 10000000\r\n\r\n",
	 413, "too_large", "", 1},
	{"the same over 256 KiB with Expect: 100-continue",
	 "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
	 "Expect: 100-continue\r\nContent-Length: 300000\r\n\r\n",
	 413, "too_large", "", 1},
};

static void test_raw(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(raw_cases) / sizeof(raw_cases[0]); i++) {
		const struct raw_case *c = &raw_cases[i];
		char req[4096], first[64], code[96], field[96];
		char *out, *body, *second;

		snprintf(req, sizeof(req), c->request, D.admin_token);
		out = raw_exchange(req);
		snprintf(first, sizeof(first), "HTTP/1.1 %d ", c->status);
		snprintf(code, sizeof(code), "\"code\":\"%s\"", c->code);
		snprintf(field, sizeof(field), "\"field\":\"%s\"", c->field);
		if (strncmp(out, first, strlen(first)) != 0 || (body = strstr(out, "\r\n\r\n")) == NULL ||
		    strstr(body, code) == NULL || strstr(body, field) == NULL || strstr(out, "nosniff") == NULL)
			fail_msg("%s: got\n%.600s", c->name, out);
		second = strstr(out + 1, "HTTP/1.1 ");
		if (c->one_reply && second != NULL)
			fail_msg("%s: a second reply came (a smuggled request was answered):\n%.600s", c->name, out);
		free(out);
	}
}

/* A chunked body (no Content-Length) over 256 KiB: 413 in the JSON shape
 * at its end; one that goes on past 4 MiB: the connection is closed without
 * reading the rest (before, 10 MiB were read and then answered). */
static void test_chunked_over_limit(void **state)
{
	static const size_t sizes[] = {300 * 1024, 10 * 1024 * 1024};
	char head[512], chunk[8192 + 16];
	char *out;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int fd = raw_connect(&D);
		size_t sent = 0, len = 0;
		ssize_t n;
		int hl;

		hl = snprintf(head, sizeof(head),
			      "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
			      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
			      D.admin_token);
		assert_int_equal(write(fd, head, (size_t)hl), hl);
		/* the server may close while we write: a failed write ends the body */
		while (sent < sizes[k]) {
			memcpy(chunk, "2000\r\n", 6);
			memcpy(chunk + 6 + 8192, "\r\n", 2);
			if (send(fd, chunk, 6 + 8192 + 2, MSG_NOSIGNAL) <= 0)
				break;
			sent += 8192;
		}
		if (sent >= sizes[k])
			(void)!send(fd, "0\r\n\r\n", 5, MSG_NOSIGNAL);
		out = malloc(65536);
		assert_non_null(out);
		for (;;) {
			struct pollfd p = {fd, POLLIN, 0};

			if (poll(&p, 1, 10000) <= 0 || (n = read(fd, out + len, 65535 - len)) <= 0)
				break;
			len += (size_t)n;
		}
		out[len] = '\0';
		close(fd);
		if (k == 0 && (strncmp(out, "HTTP/1.1 413 ", 13) != 0 || strstr(out, "\"code\":\"too_large\"") == NULL))
			fail_msg("a chunked body of %zu bytes: got\n%.400s", sizes[k], out);
		if (k == 1 && strstr(out, "HTTP/1.1 ") != NULL)
			fail_msg("a chunked body of %zu bytes was read to its end:\n%.400s", sizes[k], out);
		free(out);
	}
}

/* ---- the limiter, on a daemon of its own ---- */

static void test_good_token_after_bad_ones(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char buf[32];
	int first, later;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	for (int i = 0; i < 10; i++) {
		call(&d, BAD, "GET", "/api/v1/hosts", NULL, NULL, &r);
		assert_int_equal(r.status, 401);
		assert_string_equal(tb_test_error_code(&r), "unauthorized");
		tb_test_resp_free(&r);
	}
	/* the eleventh bad one: 429 with the time left of the window */
	call(&d, BAD, "GET", "/api/v1/hosts", NULL, NULL, &r);
	assert_int_equal(r.status, 429);
	assert_string_equal(tb_test_error_code(&r), "rate_limited");
	assert_non_null(tb_test_header(&r, "Retry-After", buf, sizeof(buf)));
	first = atoi(buf);
	assert_true(first >= 1 && first <= 60);
	tb_test_resp_free(&r);
	/* a good token from the same address is never refused: a read, a change */
	call(&d, ADMIN, "GET", "/api/v1/whoami", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	tb_test_resp_free(&r);
	call(&d, ADMIN, "POST", "/api/v1/tokens", "application/json", "{\"name\":\"ci\",\"role\":\"viewer\"}", &r);
	assert_int_equal(r.status, 201);
	tb_test_resp_free(&r);
	/* unauthenticated changes are limited too */
	call(&d, NOBODY, "POST", "/api/v1/hosts/left/power", "application/json", "{\"op\":\"on\"}", &r);
	assert_int_equal(r.status, 429);
	assert_non_null(tb_test_header(&r, "Retry-After", buf, sizeof(buf)));
	tb_test_resp_free(&r);
	/* Retry-After counts down: 2 s later at least 2 s less is left (it was
	 * the whole window, 60, whatever the time, before the fix) */
	sleep(2);
	call(&d, BAD, "GET", "/api/v1/hosts", NULL, NULL, &r);
	assert_int_equal(r.status, 429);
	assert_non_null(tb_test_header(&r, "Retry-After", buf, sizeof(buf)));
	later = atoi(buf);
	assert_true(later >= 1 && later <= first - 2);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* ---- the unauthenticated flood ---- */

static long long db_bytes(const struct tb_test_daemon *d)
{
	static const char *const names[] = {"testbedd.db", "testbedd.db-wal", "testbedd.db-shm"};
	long long sum = 0;

	for (size_t i = 0; i < 3; i++) {
		char p[512];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", d->state_dir, names[i]);
		if (stat(p, &st) == 0)
			sum += (long long)st.st_size;
	}
	return sum;
}

/* The value of one metric line (exact labels) in the /metrics text, or -1. */
static long long metric(const char *text, const char *series)
{
	const char *p = text;
	size_t n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return atoll(p + n + 1);
		p += n;
	}
	return -1;
}

static void test_flood(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	long long before, after, n401, n429, n414;
	char *big = long_path("/api/v1/hosts/", 20000, 'B', "/power");
	char *max = long_path("/api/v1/hosts/", 256, 'B', "/power");
	size_t audit_rows;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	before = db_bytes(&d);
	for (int i = 0; i < 200; i++) {
		call(&d, NOBODY, "POST", big, "application/json", "{\"op\":\"on\"}", &r);
		assert_int_equal(r.status, 414);
		assert_string_equal(tb_test_error_code(&r), "uri_too_long");
		tb_test_resp_free(&r);
	}
	/* the longest segment allowed, no token: 401 until the address is
	 * limited, then 429; none of them a row of its own */
	for (int i = 0; i < 200; i++) {
		call(&d, NOBODY, "POST", max, "application/json", "{\"op\":\"on\"}", &r);
		assert_int_equal(r.status, i < 10 ? 401 : 429);
		tb_test_resp_free(&r);
	}
	after = db_bytes(&d);
	print_message("database + WAL: %lld bytes before, %lld after 400 unauthenticated requests (+%lld)\n", before,
		      after, after - before);
	assert_true(after - before < FLOOD_DB_BOUND);
	/* one aggregated row for the address, nothing else */
	call(&d, ADMIN, "GET", "/api/v1/audit?limit=1000", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	audit_rows = json_array_size(json_object_get(r.json, "audit"));
	assert_int_equal(audit_rows, 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(r.json, "audit"), 0), "action")),
		"auth.limited");
	tb_test_resp_free(&r);
	/* /metrics counts them */
	call(&d, ADMIN, "GET", "/metrics", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	n401 = metric(r.body, "testbedd_http_auth_failures_total{route=\"/api/v1/hosts/{name}/power\",status=\"401\"}");
	n429 = metric(r.body, "testbedd_http_auth_failures_total{route=\"/api/v1/hosts/{name}/power\",status=\"429\"}");
	n414 = metric(r.body, "testbedd_http_requests_total{route=\"edge\",method=\"POST\",status=\"414\"}");
	tb_test_resp_free(&r);
	assert_int_equal(n401, 10);
	assert_int_equal(n429, 190);
	assert_int_equal(n414, 200);
	free(big);
	free(max);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* The thread pool: one per core, at least 4 (it was 2: four slow requests
 * stalled every other one); --http-threads sets it. */
static void test_thread_pool(void **state)
{
	const char *extra[] = {"--http-threads", "8", NULL};
	struct tb_test_daemon d;
	struct tb_test_resp r;

	(void)state;
	assert_true(tb_http_threads(0) >= TB_HTTP_MIN_THREADS);
	assert_int_equal(tb_http_threads(6), 6);
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), 0);
	call(&d, NOBODY, "GET", "/api/v1/health", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_chunked_over_limit),
		cmocka_unit_test(test_good_token_after_bad_ones),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_thread_pool),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
