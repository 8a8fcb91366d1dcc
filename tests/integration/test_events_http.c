/*
 * test_events_http.c - GET /api/v1/events over real HTTP against the real
 * daemon: live delivery, resume with Last-Event-ID and ?since= with no loss
 * and no duplicate (also across a daemon restart), filters, bad input,
 * cookie sessions, the heartbeat, and /metrics checked by promtool.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "ssestream.h"

/* The ids of the events of a type in a stream, in order. */
static size_t ids_of(const struct tb_test_stream *s, const char *type, long long *ids, size_t max)
{
	char pat[64];
	size_t n = 0;
	const char *p = s->buf;

	snprintf(pat, sizeof(pat), "\nevent: %s\n", type);
	while (p != NULL && (p = strstr(p, "id: ")) != NULL) {
		long long id = atoll(p + 4);
		const char *eol = strchr(p, '\n');

		if (eol != NULL && strncmp(eol, pat, strlen(pat)) == 0 && n < max)
			ids[n++] = id;
		p += 4;
	}
	return n;
}

static void create_token(struct tb_test_daemon *d, const char *name)
{
	assert_int_equal(tb_test_create_token(d, name, "viewer", NULL, 0), 201);
}

static void auth_header(const struct tb_test_daemon *d, char *out, size_t len)
{
	snprintf(out, len, "Authorization: Bearer %s\r\n", d->admin_token);
}

static void test_live_and_resume(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	char hdr[512], path[128];
	long long ids[64], last;
	size_t n;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	auth_header(&d, hdr, sizeof(hdr));
	tb_test_stream_open(&s, d.port, "/api/v1/events?type=audit", hdr);
	assert_true(tb_test_stream_read_until(&s, "\r\n\r\n", 5000));
	assert_non_null(strstr(s.buf, "HTTP/1.1 200"));
	assert_non_null(strstr(s.buf, "text/event-stream"));
	/* live: three changes arrive as they happen */
	create_token(&d, "a1");
	create_token(&d, "a2");
	create_token(&d, "a3");
	assert_true(tb_test_stream_read_until(&s, "\"target\":\"a3\"", 5000));
	n = ids_of(&s, "audit", ids, 64);
	assert_int_equal(n, 3);
	assert_true(ids[0] < ids[1] && ids[1] < ids[2]);
	last = ids[1]; /* pretend the client saw only two */
	tb_test_stream_close(&s);

	/* missed while away: resumed with Last-Event-ID, no loss, no duplicate */
	create_token(&d, "b1");
	create_token(&d, "b2");
	snprintf(hdr + strlen(hdr), sizeof(hdr) - strlen(hdr), "Last-Event-ID: %lld\r\n", last);
	tb_test_stream_open(&s, d.port, "/api/v1/events?type=audit", hdr);
	assert_true(tb_test_stream_read_until(&s, "\"target\":\"b2\"", 5000));
	n = ids_of(&s, "audit", ids, 64);
	assert_int_equal(n, 3); /* a3, b1, b2 */
	assert_true(ids[0] > last);
	assert_non_null(strstr(s.buf, "\"target\":\"a3\""));
	assert_null(strstr(s.buf, "\"target\":\"a2\""));
	last = ids[2];
	tb_test_stream_close(&s);

	/* across a restart: ids continue and the stream resumes from the store */
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	create_token(&d, "c1");
	auth_header(&d, hdr, sizeof(hdr));
	snprintf(path, sizeof(path), "/api/v1/events?type=audit&since=%lld", last - 1);
	tb_test_stream_open(&s, d.port, path, hdr);
	assert_true(tb_test_stream_read_until(&s, "\"target\":\"c1\"", 5000));
	n = ids_of(&s, "audit", ids, 64);
	assert_int_equal(n, 2); /* b2, c1 */
	assert_int_equal(ids[0], last);
	assert_true(ids[1] > last);
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_filters_and_bad_input(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	struct tb_test_resp r;
	char hdr[512], url[256], auth[200];
	const char *h[] = {auth, NULL};
	static const struct {
		const char *query;
		long status;
		const char *field;
	} bad[] = {
		{"?since=abc", 400, "since"}, {"?since=-1", 400, "since"},  {"?type=Host", 400, "type"},
		{"?type=a;b", 400, "type"},   {"?matrix=0", 400, "matrix"}, {"?matrix=x", 400, "matrix"},
	};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(url, sizeof(url), "%s/api/v1/events%s", d.url, bad[i].query);
		assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
		assert_int_equal(r.status, bad[i].status);
		assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")),
				    bad[i].field);
		tb_test_resp_free(&r);
	}
	snprintf(url, sizeof(url), "%s/api/v1/events", d.url);
	assert_int_equal(tb_test_http("GET", url, NULL, NULL, 0, &r), 0);
	assert_int_equal(r.status, 401);
	tb_test_resp_free(&r);

	/* ?host= and ?type=host. : host.state of left only, no audit */
	auth_header(&d, hdr, sizeof(hdr));
	tb_test_stream_open(&s, d.port, "/api/v1/events?since=0&host=left&type=host.", hdr);
	assert_true(tb_test_stream_read_until(&s, "event: host.state", 10000));
	create_token(&d, "z");
	tb_test_stream_read_until(&s, "\"target\":\"z\"", 1000);
	assert_null(strstr(s.buf, "event: audit"));
	assert_null(strstr(s.buf, "\"host\":\"right\""));
	assert_non_null(strstr(s.buf, "\"host\":\"left\""));
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_cookie_session_stream(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	struct tb_test_resp r;
	char url[256], body[256], cookie[400], hdr[512];
	const char *h[] = {"Content-Type: application/json", NULL};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/api/v1/session", d.url);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", d.admin_token);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Set-Cookie", cookie, sizeof(cookie)));
	cookie[strcspn(cookie, ";")] = '\0';
	tb_test_resp_free(&r);
	snprintf(hdr, sizeof(hdr), "Cookie: %s\r\n", cookie);
	tb_test_stream_open(&s, d.port, "/api/v1/events?type=audit", hdr);
	assert_true(tb_test_stream_read_until(&s, "\r\n\r\n", 5000));
	assert_non_null(strstr(s.buf, "HTTP/1.1 200"));
	create_token(&d, "via-cookie");
	assert_true(tb_test_stream_read_until(&s, "\"target\":\"via-cookie\"", 5000));
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static int promtool_ok(const char *text)
{
	char path[] = "/tmp/tbmetrics-XXXXXX";
	int fd = mkstemp(path), status;
	pid_t pid;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	lseek(fd, 0, SEEK_SET);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 0);
		execlp("promtool", "promtool", "check", "metrics", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	close(fd);
	unlink(path);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_metrics(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	struct tb_test_stream s;
	char url[256], auth[200], hdr[512], ct[128];
	const char *h[] = {auth, NULL};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	auth_header(&d, hdr, sizeof(hdr));
	tb_test_stream_open(&s, d.port, "/api/v1/events", hdr);
	assert_true(tb_test_stream_read_until(&s, "\r\n\r\n", 5000));
	create_token(&d, "m");
	snprintf(url, sizeof(url), "%s/api/v1/hosts", d.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	tb_test_resp_free(&r);
	snprintf(url, sizeof(url), "%s/metrics", d.url);
	assert_int_equal(tb_test_http("GET", url, NULL, NULL, 0, &r), 0);
	assert_int_equal(r.status, 401);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_non_null(strstr(ct, "text/plain; version=0.0.4"));
	assert_non_null(strstr(
		r.body, "testbedd_http_requests_total{route=\"/api/v1/hosts\",method=\"GET\",status=\"200\"} 1\n"));
	assert_non_null(strstr(
		r.body, "testbedd_http_requests_total{route=\"/api/v1/tokens\",method=\"POST\",status=\"201\"} 1\n"));
	assert_non_null(strstr(
		r.body,
		"testbedd_http_request_duration_seconds_bucket{route=\"/api/v1/hosts\",method=\"GET\",status=\"200\",le=\"+Inf\"} 1\n"));
	assert_non_null(strstr(r.body, "testbedd_sse_clients 1\n"));
	assert_non_null(strstr(r.body, "testbedd_host_up{host=\"left\""));
	assert_non_null(strstr(r.body, "testbedd_build_info{version="));
	assert_non_null(strstr(r.body, "testbedd_events_published_total "));
	assert_true(promtool_ok(r.body));
	/* promtool does fail on a broken exposition: the check is real */
	assert_false(promtool_ok("# TYPE x counter\nx{a=\"1\" 2\n"));
	tb_test_resp_free(&r);
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_heartbeat(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	char hdr[512];
	long long t0;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	auth_header(&d, hdr, sizeof(hdr));
	tb_test_stream_open(&s, d.port, "/api/v1/events?type=nothing.", hdr);
	t0 = tb_test_now_ms();
	assert_true(tb_test_stream_read_until(&s, "\r\n\r\n", 5000));
	/* an idle stream gets a comment every 15 s (woken every 5 s) */
	assert_true(tb_test_stream_read_until(&s, ": ping\n\n", 25000));
	assert_true(tb_test_now_ms() - t0 >= 14000);
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A viewer's stream carries no audit entries; revoking its token ends it;
 * resuming after an id the daemon never had gets a reset. */
static void test_viewer_revoke_and_ahead(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	struct tb_test_resp r;
	char url[256], auth[200], body[128], secret[128], hdr[512];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	long long id;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/api/v1/tokens", d.url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	snprintf(body, sizeof(body), "{\"name\":\"watcher\",\"role\":\"viewer\"}");
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 201);
	snprintf(secret, sizeof(secret), "%s", json_string_value(json_object_get(r.json, "secret")));
	id = json_integer_value(json_object_get(json_object_get(r.json, "token"), "id"));
	tb_test_resp_free(&r);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", secret);
	tb_test_stream_open(&s, d.port, "/api/v1/events?since=0", hdr);
	assert_true(tb_test_stream_read_until(&s, "event: host.state", 10000));
	create_token(&d, "seen-by-admins-only");
	/* revoke the watcher's token: its stream ends */
	snprintf(url, sizeof(url), "%s/api/v1/tokens/%lld", d.url, id);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
	/* the stream ends: the last chunk of the chunked reply arrives */
	assert_true(tb_test_stream_read_until(&s, "\r\n0\r\n\r\n", 5000));
	assert_null(strstr(s.buf, "event: audit"));
	assert_null(strstr(s.buf, "seen-by-admins-only"));
	tb_test_stream_close(&s);

	auth_header(&d, hdr, sizeof(hdr));
	strncat(hdr, "Last-Event-ID: 999999\r\n", sizeof(hdr) - strlen(hdr) - 1);
	tb_test_stream_open(&s, d.port, "/api/v1/events", hdr);
	assert_true(tb_test_stream_read_until(&s, "event: reset\ndata: {\"oldest\":", 5000));
	tb_test_stream_close(&s);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_and_resume),
		cmocka_unit_test(test_filters_and_bad_input),
		cmocka_unit_test(test_cookie_session_stream),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_viewer_revoke_and_ahead),
	};

	return cmocka_run_group_tests_name("events_http", tests, NULL, NULL);
}
