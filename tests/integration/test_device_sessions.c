/*
 * test_device_sessions.c - "Remember this device" logins against the real
 * testbedd on port 0: POST /api/v1/session with "remember": true gives a
 * 30-day session whose cookie has the matching Max-Age; without it the
 * session and its cookie last the ordinary TTL; a non-boolean remember is
 * refused.  DELETE /api/v1/sessions logs the caller's token out everywhere:
 * every session of it ends, and so do the event streams opened with them,
 * while its bearer use and another token's sessions go on.  "Your devices":
 * GET /api/v1/sessions lists the caller's token's sessions (the caller's own
 * marked current, no secret), DELETE /api/v1/sessions/{id} ends one of them
 * and its event stream, and is 404 for another token's session.
 * Sliding expiry and last use: a session's last use and the client's address
 * as the edge sees it (another loopback address; behind a trusted proxy its
 * X-Forwarded-For client) are listed; a use a minute or more after the last
 * one moves a remembered session's expiry to 30 days from now and sends the
 * cookie again with that Max-Age, an ordinary session keeps its expiry.  So
 * that no test waits a minute (or days), the daemon's SQLite file is written
 * by the test to put a session's last use and expiry in the past (the clock
 * itself is tests/unit/test_auth.c's).  An admin's view: GET ?all=1 lists
 * every token's sessions with the token's name (403 for a viewer), and the
 * admin ends another token's session: audited session.end naming the owner,
 * the session is gone and its event stream ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "daemon.h"
#include "timeutil.h"
#include "ssestream.h"

/* the last chunk of a chunked reply: the daemon ended the stream */
#define STREAM_END "\r\n0\r\n\r\n"

static struct tb_test_daemon D;
static char viewer[128];

static int setup(void **state)
{
	(void)state;
	static const char *const args[] = {"--trusted-proxy", "127.0.0.3", NULL};

	if (tb_test_daemon_start(&D, NULL, args) != 0)
		return -1;
	return tb_test_create_token(&D, "phone", "viewer", viewer, sizeof(viewer)) == 201 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D);
}

/* GET /whoami with the header hdr ("Cookie: ..."); the status. */
static long whoami(const char *hdr)
{
	const char *h[2] = {hdr, NULL};
	struct tb_test_resp r;
	char url[256];
	long status;

	snprintf(url, sizeof(url), "%s/api/v1/whoami", D.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	status = r.status;
	tb_test_resp_free(&r);
	return status;
}

/* Log in as secret (remember: "true", "false" or NULL for absent); the reply in r. */
static void login(const char *secret, const char *remember, struct tb_test_resp *r)
{
	static const char *const h[] = {"Content-Type: application/json", NULL};
	char url[256], body[512];

	snprintf(url, sizeof(url), "%s/api/v1/session", D.url);
	if (remember != NULL)
		snprintf(body, sizeof(body), "{\"token\":\"%s\",\"remember\":%s}", secret, remember);
	else
		snprintf(body, sizeof(body), "{\"token\":\"%s\"}", secret);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), r), 0);
}

/* The cookie's Max-Age, and that the cookie works for GET /whoami. */
static long max_age_and_use(struct tb_test_resp *r)
{
	char buf[512], cookie[600];
	const char *m;
	long age;

	assert_non_null(tb_test_header(r, "Set-Cookie", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "HttpOnly"));
	m = strstr(buf, "Max-Age=");
	assert_non_null(m);
	age = strtol(m + 8, NULL, 10);
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie, sizeof(cookie), "Cookie: %s", buf);
	assert_int_equal(whoami(cookie), 200);
	return age;
}

static void test_remember_gives_a_30_day_cookie(void **state)
{
	struct tb_test_resp r;
	long age;

	(void)state;
	login(viewer, "true", &r);
	assert_int_equal(r.status, 200);
	age = max_age_and_use(&r);
	assert_true(age > 30L * 24 * 3600 - 60);
	assert_true(age <= 30L * 24 * 3600);
	/* the secret is only in the cookie: the reply body has no cookie value */
	assert_null(strstr(r.body, "tb_session"));
	tb_test_resp_free(&r);
}

static void test_without_remember_the_ordinary_ttl(void **state)
{
	struct tb_test_resp r;
	long age;

	(void)state;
	login(viewer, "false", &r);
	assert_int_equal(r.status, 200);
	age = max_age_and_use(&r);
	assert_true(age > 0 && age <= 12L * 3600);
	tb_test_resp_free(&r);
	login(viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	age = max_age_and_use(&r);
	assert_true(age > 0 && age <= 12L * 3600);
	tb_test_resp_free(&r);
}

static void test_remember_must_be_boolean(void **state)
{
	struct tb_test_resp r;

	(void)state;
	login(viewer, "\"yes\"", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(tb_test_error_code(&r), "invalid_field");
	assert_null(tb_test_header(&r, "Set-Cookie", (char[8]){0}, 8));
	tb_test_resp_free(&r);
}

/* A logged-in session of secret: "Cookie: ..." and "X-CSRF-Token: ..." headers. */
static void session_of(const char *secret, char cookie[600], char csrf[300])
{
	char buf[512];
	struct tb_test_resp r;

	login(secret, "true", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Set-Cookie", buf, sizeof(buf)));
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie, 600, "Cookie: %s", buf);
	snprintf(csrf, 300, "X-CSRF-Token: %s",
		 json_string_value(json_object_get(json_object_get(r.json, "session"), "csrf_token")));
	tb_test_resp_free(&r);
}

static void test_log_out_everywhere(void **state)
{
	char phone[600], phone_csrf[300], laptop[600], laptop_csrf[300], other[600], other_csrf[300];
	char secret[128], bearer[200], line[700], url[256];
	const char *h[3];
	struct tb_test_stream s_phone, s_other;
	struct tb_test_resp r;

	(void)state;
	assert_int_equal(tb_test_create_token(&D, "everywhere", "viewer", secret, sizeof(secret)), 201);
	session_of(secret, phone, phone_csrf);
	session_of(secret, laptop, laptop_csrf);
	session_of(viewer, other, other_csrf);
	snprintf(line, sizeof(line), "%s\r\n", phone);
	tb_test_stream_open(&s_phone, D.port, "/api/v1/events", line);
	assert_true(tb_test_stream_read_until(&s_phone, "event: stream\n", 10000));
	snprintf(line, sizeof(line), "%s\r\n", other);
	tb_test_stream_open(&s_other, D.port, "/api/v1/events", line);
	assert_true(tb_test_stream_read_until(&s_other, "event: stream\n", 10000));
	/* a cookie caller needs the CSRF header */
	h[0] = laptop, h[1] = NULL;
	snprintf(url, sizeof(url), "%s/api/v1/sessions", D.url);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 403);
	tb_test_resp_free(&r);
	assert_int_equal(whoami(phone), 200);
	/* from the laptop: log out everywhere */
	h[1] = laptop_csrf, h[2] = NULL;
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	assert_non_null(tb_test_header(&r, "Set-Cookie", line, sizeof(line)));
	assert_non_null(strstr(line, "Max-Age=0"));
	tb_test_resp_free(&r);
	assert_int_equal(whoami(laptop), 401);
	assert_int_equal(whoami(phone), 401);
	/* the phone's open stream ends at once; another token's goes on */
	assert_true(tb_test_stream_read_until(&s_phone, STREAM_END, 5000));
	assert_false(tb_test_stream_read_until(&s_other, STREAM_END, 1000));
	assert_int_equal(whoami(other), 200);
	/* the token itself still works as a bearer */
	snprintf(bearer, sizeof(bearer), "Authorization: Bearer %s", secret);
	assert_int_equal(whoami(bearer), 200);
	tb_test_stream_close(&s_phone);
	tb_test_stream_close(&s_other);
}

/* GET /api/v1/sessions as cookie; the reply in r (status 200 asserted). */
static json_t *list_sessions(const char *cookie, struct tb_test_resp *r)
{
	const char *h[2] = {cookie, NULL};
	char url[256];

	snprintf(url, sizeof(url), "%s/api/v1/sessions", D.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, r), 0);
	assert_int_equal(r->status, 200);
	assert_non_null(r->json);
	return json_object_get(r->json, "sessions");
}

/* The id of cookie's own session (the one GET /sessions marks current). */
static long long own_session_id(const char *cookie)
{
	struct tb_test_resp r;
	json_t *arr = list_sessions(cookie, &r), *o;
	long long id = 0;
	size_t i;

	json_array_foreach(arr, i, o) if (json_is_true(json_object_get(o, "current")))
		id = json_integer_value(json_object_get(o, "id"));
	tb_test_resp_free(&r);
	assert_true(id > 0);
	return id;
}

/* DELETE /api/v1/sessions/{id} as cookie + csrf (csrf may be NULL); the status. */
static long end_session(const char *cookie, const char *csrf, long long id)
{
	const char *h[3] = {cookie, csrf, NULL};
	struct tb_test_resp r;
	char url[256];
	long status;

	snprintf(url, sizeof(url), "%s/api/v1/sessions/%lld", D.url, id);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	status = r.status;
	tb_test_resp_free(&r);
	return status;
}

static void test_your_devices_lists_own_sessions(void **state)
{
	static const char *const hj[] = {
		"Content-Type: application/json",
		"User-Agent: Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", NULL};
	char a[600], a_csrf[300], b[600], b_csrf[300], o[600], o_csrf[300], secret[128], url[256], body[300];
	struct tb_test_resp r, lr;
	json_t *arr, *s;
	size_t i, current = 0, firefox = 0;

	(void)state;
	assert_int_equal(tb_test_create_token(&D, "lister", "viewer", secret, sizeof(secret)), 201);
	session_of(secret, a, a_csrf);
	session_of(viewer, o, o_csrf);
	/* b logs in from a phone's Firefox, not remembered */
	snprintf(url, sizeof(url), "%s/api/v1/session", D.url);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", secret);
	assert_int_equal(tb_test_http("POST", url, hj, body, strlen(body), &lr), 0);
	assert_int_equal(lr.status, 200);
	assert_non_null(tb_test_header(&lr, "Set-Cookie", url, sizeof(url)));
	url[strcspn(url, ";")] = '\0';
	snprintf(b, sizeof(b), "Cookie: %s", url);
	snprintf(b_csrf, sizeof(b_csrf), "X-CSRF-Token: %s",
		 json_string_value(json_object_get(json_object_get(lr.json, "session"), "csrf_token")));
	tb_test_resp_free(&lr);

	arr = list_sessions(a, &r);
	assert_int_equal(json_array_size(arr), 2);
	json_array_foreach(arr, i, s)
	{
		assert_true(json_integer_value(json_object_get(s, "id")) > 0);
		assert_true(json_is_string(json_object_get(s, "created_at")));
		assert_true(json_is_string(json_object_get(s, "expires_at")));
		assert_true(json_is_boolean(json_object_get(s, "remember")));
		current += json_is_true(json_object_get(s, "current"));
		if (json_object_get(s, "device") != NULL) {
			assert_string_equal(json_string_value(json_object_get(s, "device")), "Firefox on Android");
			assert_true(json_is_false(json_object_get(s, "remember")));
			assert_true(json_is_false(json_object_get(s, "current")));
			firefox++;
		}
	}
	assert_int_equal(current, 1);
	assert_int_equal(firefox, 1);
	/* neither secret (cookie or CSRF) nor a hash is in the reply */
	assert_null(strstr(r.body, strchr(a, '=') + 1));
	assert_null(strstr(r.body, strchr(b, '=') + 1));
	assert_null(strstr(r.body, strchr(a_csrf, ' ') + 1));
	assert_null(strstr(r.body, "hash"));
	tb_test_resp_free(&r);
	/* a bearer caller sees its token's sessions, none current */
	snprintf(body, sizeof(body), "Authorization: Bearer %s", secret);
	arr = list_sessions(body, &r);
	assert_int_equal(json_array_size(arr), 2);
	json_array_foreach(arr, i, s) assert_true(json_is_false(json_object_get(s, "current")));
	tb_test_resp_free(&r);
	/* another token's list has only its own */
	arr = list_sessions(o, &r);
	json_array_foreach(arr, i, s)
		assert_int_not_equal(json_integer_value(json_object_get(s, "id")), own_session_id(a));
	tb_test_resp_free(&r);
}

static void test_end_one_session(void **state)
{
	char a[600], a_csrf[300], b[600], b_csrf[300], o[600], o_csrf[300], secret[128], line[700];
	struct tb_test_stream s_b, s_o;
	struct tb_test_resp r;
	long long b_id, o_id;

	(void)state;
	assert_int_equal(tb_test_create_token(&D, "ender", "viewer", secret, sizeof(secret)), 201);
	session_of(secret, a, a_csrf);
	session_of(secret, b, b_csrf);
	session_of(viewer, o, o_csrf);
	b_id = own_session_id(b);
	o_id = own_session_id(o);
	snprintf(line, sizeof(line), "%s\r\n", b);
	tb_test_stream_open(&s_b, D.port, "/api/v1/events", line);
	assert_true(tb_test_stream_read_until(&s_b, "event: stream\n", 10000));
	snprintf(line, sizeof(line), "%s\r\n", o);
	tb_test_stream_open(&s_o, D.port, "/api/v1/events", line);
	assert_true(tb_test_stream_read_until(&s_o, "event: stream\n", 10000));
	/* a cookie caller needs its CSRF header */
	assert_int_equal(end_session(a, NULL, b_id), 403);
	assert_int_equal(whoami(b), 200);
	/* another token's session, or none: 404, and it goes on */
	assert_int_equal(end_session(a, a_csrf, o_id), 404);
	assert_int_equal(end_session(a, a_csrf, 999999999LL), 404);
	assert_int_equal(end_session(a, a_csrf, 0), 400);
	assert_int_equal(whoami(o), 200);
	/* from a: end b; b is logged out and its stream ends, a and o go on */
	assert_int_equal(end_session(a, a_csrf, b_id), 204);
	assert_int_equal(whoami(b), 401);
	assert_true(tb_test_stream_read_until(&s_b, STREAM_END, 5000));
	assert_false(tb_test_stream_read_until(&s_o, STREAM_END, 1000));
	assert_int_equal(whoami(a), 200);
	assert_int_equal(whoami(o), 200);
	assert_int_equal(end_session(a, a_csrf, b_id), 404);
	assert_int_equal(json_array_size(list_sessions(a, &r)), 1);
	tb_test_resp_free(&r);
	/* ending one's own session logs out and clears the cookie */
	assert_int_equal(end_session(a, a_csrf, own_session_id(a)), 204);
	assert_int_equal(whoami(a), 401);
	tb_test_stream_close(&s_b);
	tb_test_stream_close(&s_o);
}

/* The session id (from GET /sessions, as cookie) whose "current" is set, and
 * the listed object of it (a new reference: decref it). */
static json_t *own_session(const char *cookie)
{
	struct tb_test_resp r;
	json_t *arr = list_sessions(cookie, &r), *o, *mine = NULL;
	size_t i;

	json_array_foreach(arr, i, o) if (json_is_true(json_object_get(o, "current"))) mine = json_incref(o);
	tb_test_resp_free(&r);
	assert_non_null(mine);
	return mine;
}

/* Log in as secret from the local address src with extra header hdr (may be
 * NULL): "Cookie: ..." into cookie. */
static void login_from(const char *src, const char *hdr, const char *secret, int remember, char cookie[600])
{
	const char *h[3] = {"Content-Type: application/json", hdr, NULL};
	char url[256], body[300], buf[512];
	struct tb_test_resp r;

	snprintf(url, sizeof(url), "%s/api/v1/session", D.url);
	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"remember\":%s}", secret, remember ? "true" : "false");
	assert_int_equal(tb_test_http_from(src, "POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Set-Cookie", buf, sizeof(buf)));
	buf[strcspn(buf, ";")] = '\0';
	snprintf(cookie, 600, "Cookie: %s", buf);
	tb_test_resp_free(&r);
}

/* Put session id's last use and expiry back by ago_s and back_s seconds in
 * the daemon's own SQLite file (instead of waiting; the daemon reads a
 * session's row on each request and keeps no copy of it). */
static void backdate(long long id, long ago_s, long back_s)
{
	char path[400], sql[200];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/testbedd.db", D.state_dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 10000);
	snprintf(sql, sizeof(sql),
		 "UPDATE sessions SET last_used_at = last_used_at - %ld, expires_at = expires_at - %ld"
		 " WHERE rowid = %lld",
		 ago_s, back_s, id);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_changes(db), 1);
	sqlite3_close(db);
}

/* GET /whoami as cookie from src: the status, and the Set-Cookie's Max-Age
 * into *age (-1 without a Set-Cookie). */
static long whoami_from(const char *src, const char *cookie, long *age)
{
	const char *h[2] = {cookie, NULL};
	struct tb_test_resp r;
	char url[256], buf[512];
	const char *m;
	long status;

	snprintf(url, sizeof(url), "%s/api/v1/whoami", D.url);
	assert_int_equal(tb_test_http_from(src, "GET", url, h, NULL, 0, &r), 0);
	status = r.status;
	*age = -1;
	if (tb_test_header(&r, "Set-Cookie", buf, sizeof(buf)) != NULL) {
		/* the same cookie again, with the new Max-Age */
		assert_int_equal(strncmp(buf, strchr(cookie, ' ') + 1, strlen(strchr(cookie, ' ') + 1)), 0);
		assert_non_null(strstr(buf, "HttpOnly"));
		assert_non_null((m = strstr(buf, "Max-Age=")));
		*age = strtol(m + 8, NULL, 10);
	}
	tb_test_resp_free(&r);
	return status;
}

/* Seconds from now to an RFC 3339 time of the reply (UTC, "...Z"). */
static long long from_now(json_t *o, const char *key)
{
	const char *t = json_string_value(json_object_get(o, key));
	int64_t v;

	assert_non_null(t);
	assert_int_equal(tb_time_parse(t, &v), 0);
	return (long long)(v - tb_now());
}

/* Session id as the admin's GET /sessions?all=1 lists it (no use of the
 * session itself); a new reference. */
static json_t *any_session(long long id)
{
	struct tb_test_resp r;
	json_t *o, *found = NULL;
	size_t i;

	tb_test_api_expect(&D, NULL, "GET", "/api/v1/sessions?all=1", NULL, 200, &r);
	json_array_foreach(json_object_get(r.json, "sessions"), i,
			   o) if (json_integer_value(json_object_get(o, "id")) == id) found = json_incref(o);
	tb_test_resp_free(&r);
	assert_non_null(found);
	return found;
}

static void test_last_use_and_sliding_expiry(void **state)
{
	char secret[128], phone[600], laptop[600], proxied[600];
	json_t *s;
	long age;
	long long id;

	(void)state;
	assert_int_equal(tb_test_create_token(&D, "slider", "viewer", secret, sizeof(secret)), 201);
	login_from("127.0.0.2", NULL, secret, 1, phone);
	/* the login is the first use: its time and address */
	s = own_session(phone);
	assert_string_equal(json_string_value(json_object_get(s, "last_address")), "127.0.0.2");
	assert_string_equal(json_string_value(json_object_get(s, "last_used_at")),
			    json_string_value(json_object_get(s, "created_at")));
	id = json_integer_value(json_object_get(s, "id"));
	json_decref(s);
	/* within the minute: no write, no cookie again */
	assert_int_equal(whoami_from("127.0.0.4", phone, &age), 200);
	assert_int_equal(age, -1);
	s = own_session(phone);
	assert_string_equal(json_string_value(json_object_get(s, "last_address")), "127.0.0.2");
	json_decref(s);
	/* its last use 2 minutes and its expiry 10 days back: the next use
	 * notes itself and slides the expiry to 30 days from now */
	backdate(id, 120, 10L * 24 * 3600);
	s = any_session(id);
	assert_true(from_now(s, "expires_at") < 21L * 24 * 3600);
	assert_true(from_now(s, "last_used_at") <= -120);
	json_decref(s);
	assert_int_equal(whoami_from("127.0.0.4", phone, &age), 200);
	assert_true(age > 30L * 24 * 3600 - 60 && age <= 30L * 24 * 3600);
	s = own_session(phone);
	assert_true(from_now(s, "expires_at") > 30L * 24 * 3600 - 60);
	assert_true(from_now(s, "last_used_at") > -60);
	assert_string_equal(json_string_value(json_object_get(s, "last_address")), "127.0.0.4");
	json_decref(s);
	/* once a minute: the next use writes nothing and sends no cookie */
	assert_int_equal(whoami_from("127.0.0.5", phone, &age), 200);
	assert_int_equal(age, -1);

	/* an ordinary session: its use is noted, its 12 h are not extended */
	login_from("127.0.0.2", NULL, secret, 0, laptop);
	s = own_session(laptop);
	id = json_integer_value(json_object_get(s, "id"));
	json_decref(s);
	backdate(id, 120, 3600);
	assert_int_equal(whoami_from("127.0.0.6", laptop, &age), 200);
	assert_int_equal(age, -1);
	s = any_session(id);
	assert_true(from_now(s, "expires_at") <= 11L * 3600);
	assert_string_equal(json_string_value(json_object_get(s, "last_address")), "127.0.0.6");
	json_decref(s);

	/* behind the trusted proxy (127.0.0.3): the client it names */
	login_from("127.0.0.3", "X-Forwarded-For: 203.0.113.5", secret, 1, proxied);
	s = own_session(proxied);
	assert_string_equal(json_string_value(json_object_get(s, "last_address")), "203.0.113.5");
	json_decref(s);
}

/* GET /sessions?all=... as hdr: the status, the reply in r. */
static long list_all(const char *hdr, const char *all, struct tb_test_resp *r)
{
	const char *h[2] = {hdr, NULL};
	char url[256];

	snprintf(url, sizeof(url), "%s/api/v1/sessions?all=%s", D.url, all);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, r), 0);
	return r->status;
}

static void test_admin_sees_and_ends_every_session(void **state)
{
	char secret[128], c[600], c_csrf[300], d[600], d_csrf[300], admin[300], own[600], own_csrf[300], line[700];
	char path[128];
	struct tb_test_stream s_c;
	struct tb_test_resp r;
	json_t *o, *arr;
	long long id;
	size_t i, seen = 0, viewers = 0;

	(void)state;
	snprintf(admin, sizeof(admin), "Authorization: Bearer %s", D.admin_token);
	assert_int_equal(tb_test_create_token(&D, "someone", "viewer", secret, sizeof(secret)), 201);
	session_of(secret, c, c_csrf);
	session_of(viewer, own, own_csrf);
	id = own_session_id(c);
	/* a viewer: its own list only; ?all=1 is 403, with a cookie or a bearer */
	assert_int_equal(list_all(own, "1", &r), 403);
	assert_string_equal(tb_test_error_code(&r), "forbidden");
	tb_test_resp_free(&r);
	snprintf(line, sizeof(line), "Authorization: Bearer %s", viewer);
	assert_int_equal(list_all(line, "1", &r), 403);
	tb_test_resp_free(&r);
	assert_int_equal(list_all(own, "0", &r), 200);
	json_array_foreach(json_object_get(r.json, "sessions"), i, o)
		assert_string_equal(json_string_value(json_object_get(json_object_get(o, "token"), "name")), "phone");
	tb_test_resp_free(&r);
	assert_int_equal(list_all(admin, "yes", &r), 400);
	tb_test_expect_field(&r, "all=yes", "all");
	tb_test_resp_free(&r);
	/* the admin: every token's sessions, each with its token's name */
	assert_int_equal(list_all(admin, "1", &r), 200);
	arr = json_object_get(r.json, "sessions");
	json_array_foreach(arr, i, o)
	{
		const char *name = json_string_value(json_object_get(json_object_get(o, "token"), "name"));

		assert_non_null(name);
		if (json_integer_value(json_object_get(o, "id")) == id) {
			assert_string_equal(name, "someone");
			assert_true(json_is_false(json_object_get(o, "current")));
			seen++;
		}
		viewers += strcmp(name, "phone") == 0;
	}
	assert_int_equal(seen, 1);
	assert_true(viewers > 0);
	assert_null(strstr(r.body, strchr(c, '=') + 1));
	assert_null(strstr(r.body, "hash"));
	tb_test_resp_free(&r);

	/* the admin ends someone's session: gone, its stream ends, audited */
	snprintf(line, sizeof(line), "%s\r\n", c);
	tb_test_stream_open(&s_c, D.port, "/api/v1/events", line);
	assert_true(tb_test_stream_read_until(&s_c, "event: stream\n", 10000));
	snprintf(path, sizeof(path), "/api/v1/sessions/%lld", id);
	tb_test_api_expect(&D, NULL, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
	assert_int_equal(whoami(c), 401);
	assert_true(tb_test_stream_read_until(&s_c, STREAM_END, 5000));
	tb_test_stream_close(&s_c);
	tb_test_api_expect(&D, NULL, "DELETE", path, NULL, 404, &r);
	tb_test_resp_free(&r);
	assert_int_equal(whoami(own), 200);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/audit?action=session.end&limit=5", NULL, 200, &r);
	o = json_array_get(json_object_get(r.json, "audit"), 1); /* newest first: the 404 is [0] */
	assert_non_null(o);
	snprintf(line, sizeof(line), "someone session %lld", id);
	assert_string_equal(json_string_value(json_object_get(o, "target")), line);
	assert_string_equal(json_string_value(json_object_get(o, "actor")), "admin");
	assert_int_equal(json_integer_value(json_object_get(o, "status")), 204);
	tb_test_resp_free(&r);
	/* a viewer still cannot end another token's */
	session_of(secret, d, d_csrf);
	assert_int_equal(end_session(own, own_csrf, own_session_id(d)), 404);
	assert_int_equal(whoami(d), 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remember_gives_a_30_day_cookie),
		cmocka_unit_test(test_without_remember_the_ordinary_ttl),
		cmocka_unit_test(test_remember_must_be_boolean),
		cmocka_unit_test(test_log_out_everywhere),
		cmocka_unit_test(test_your_devices_lists_own_sessions),
		cmocka_unit_test(test_end_one_session),
		cmocka_unit_test(test_last_use_and_sliding_expiry),
		cmocka_unit_test(test_admin_sees_and_ends_every_session),
	};

	return cmocka_run_group_tests_name("device_sessions", tests, setup, teardown);
}
