/*
 * test_device_sessions.c - "Remember this device" logins against the real
 * testbedd on port 0: POST /api/v1/session with "remember": true gives a
 * 30-day session whose cookie has the matching Max-Age; without it the
 * session and its cookie last the ordinary TTL; a non-boolean remember is
 * refused.  DELETE /api/v1/sessions logs the caller's token out everywhere:
 * every session of it ends, and so do the event streams opened with them,
 * while its bearer use and another token's sessions go on.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remember_gives_a_30_day_cookie),
		cmocka_unit_test(test_without_remember_the_ordinary_ttl),
		cmocka_unit_test(test_remember_must_be_boolean),
		cmocka_unit_test(test_log_out_everywhere),
	};

	return cmocka_run_group_tests_name("device_sessions", tests, setup, teardown);
}
