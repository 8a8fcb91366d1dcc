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
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon.h"
#include "ssestream.h"

/* the last chunk of a chunked reply: the daemon ended the stream */
#define STREAM_END "\r\n0\r\n\r\n"

static struct tb_test_daemon D;
static char viewer[128];

static int setup(void **state)
{
	(void)state;
	if (tb_test_daemon_start(&D, NULL, NULL) != 0)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remember_gives_a_30_day_cookie),
		cmocka_unit_test(test_without_remember_the_ordinary_ttl),
		cmocka_unit_test(test_remember_must_be_boolean),
		cmocka_unit_test(test_log_out_everywhere),
		cmocka_unit_test(test_your_devices_lists_own_sessions),
		cmocka_unit_test(test_end_one_session),
	};

	return cmocka_run_group_tests_name("device_sessions", tests, setup, teardown);
}
