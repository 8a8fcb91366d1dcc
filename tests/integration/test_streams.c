/*
 * test_streams.c - event streams end with what they were opened under, and a
 * token cannot open streams without bound; over real HTTP against the real
 * daemon (port 0):
 *   - logging out ends the streams opened with that cookie (not those of the
 *     token's other session, nor its bearer streams);
 *   - a session's streams end when it expires (the session made short with
 *     the test-only TESTBEDD_TEST_SESSION_TTL_S, which the daemon warns of);
 *   - the (TB_EVENTS_PER_TOKEN + 1)th open stream of one token, counted over
 *     its sessions and its bearer use, gets 429 with the JSON error; another
 *     token is not affected; ended streams give their place back;
 *   - a client that closed its side is found at the next heartbeat wake,
 *     without a write to it (before the first ping), and its place is free;
 *   - a console's stream (its own source, the edge's one stream mechanism):
 *     its state first, the console's bytes in base64 with their end offset
 *     as id, a reconnect with Last-Event-ID gets only what came after, and
 *     an idle one gets the edge's heartbeat like the bus's streams.  The
 *     console server is the test's own TCP listener (as ser2net's would be);
 *   - a console stream opened with a session ends with it (logout, revoke),
 *     and one opened with a bearer token when that token is revoked;
 *   - a console lease without input lapses, and its viewers are told.
 * (Revoking a token ends its streams: test_events_http.c.)
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "conserver.h"
#include "daemon.h"
#include "ssestream.h"
#include "events.h"

/* The last chunk of a chunked reply: the stream ended. */
#define STREAM_END "\r\n0\r\n\r\n"

/* Open a stream and wait for its first record: it is subscribed. */
static void open_live(struct tb_test_stream *s, unsigned int port, const char *headers)
{
	tb_test_stream_open(s, port, "/api/v1/events", headers);
	assert_true(tb_test_stream_read_until(s, "event: stream\n", 10000));
	assert_non_null(strstr(s->buf, "HTTP/1.1 200"));
}

struct session {
	char cookie[300]; /* "Cookie: tb_session=...\r\n" */
	char csrf[300];   /* "X-CSRF-Token: ..." */
};

static void login(const struct tb_test_daemon *d, const char *token, struct session *se)
{
	struct tb_test_resp r;
	char url[256], body[256], c[300];
	const char *h[] = {"Content-Type: application/json", NULL};

	snprintf(url, sizeof(url), "%s/api/v1/session", d->url);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", token);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(tb_test_header(&r, "Set-Cookie", c, sizeof(c)));
	c[strcspn(c, ";")] = '\0';
	snprintf(se->cookie, sizeof(se->cookie), "Cookie: %s\r\n", c);
	snprintf(se->csrf, sizeof(se->csrf), "X-CSRF-Token: %s",
		 json_string_value(json_object_get(json_object_get(r.json, "session"), "csrf_token")));
	tb_test_resp_free(&r);
}

static void logout(const struct tb_test_daemon *d, const struct session *se)
{
	struct tb_test_resp r;
	char url[256], cookie[300];
	const char *h[] = {cookie, se->csrf, NULL};

	snprintf(cookie, sizeof(cookie), "%.*s", (int)strcspn(se->cookie, "\r"), se->cookie);
	snprintf(url, sizeof(url), "%s/api/v1/session", d->url);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
}

static void bearer_header(const char *token, char *out, size_t len)
{
	snprintf(out, len, "Authorization: Bearer %s\r\n", token);
}

/* Logout ends the streams of that cookie, and only those. */
static void test_logout_ends_its_streams(void **state)
{
	struct tb_test_daemon d;
	struct session one, two;
	struct tb_test_stream s1, s1b, s2, sb;
	char secret[128], hdr[256];

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(tb_test_create_token(&d, "web", "viewer", secret, sizeof(secret)), 201);
	login(&d, secret, &one);
	login(&d, secret, &two);
	open_live(&s1, d.port, one.cookie);
	open_live(&s1b, d.port, one.cookie);
	open_live(&s2, d.port, two.cookie);
	bearer_header(secret, hdr, sizeof(hdr));
	open_live(&sb, d.port, hdr);
	logout(&d, &one);
	/* both streams of that session end at once (the last chunk arrives) */
	assert_true(tb_test_stream_read_until(&s1, STREAM_END, 5000));
	assert_true(tb_test_stream_read_until(&s1b, STREAM_END, 5000));
	/* the token's other session and its bearer stream go on (a drop is
	 * immediate: a wrong one would have ended them by now) */
	assert_false(tb_test_stream_read_until(&s2, STREAM_END, 1000));
	assert_false(tb_test_stream_read_until(&sb, STREAM_END, 100));
	/* a logged-out cookie opens nothing */
	tb_test_stream_close(&s1);
	tb_test_stream_open(&s1, d.port, "/api/v1/events", one.cookie);
	assert_true(tb_test_stream_read_until(&s1, "\r\n\r\n", 5000));
	assert_non_null(strstr(s1.buf, "HTTP/1.1 401"));
	tb_test_stream_close(&s1);
	tb_test_stream_close(&s1b);
	tb_test_stream_close(&s2);
	tb_test_stream_close(&sb);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A session's streams end when the session expires. */
static void test_expired_session_ends_its_streams(void **state)
{
	struct tb_test_daemon d;
	struct session se;
	struct tb_test_stream s, sb;
	char secret[128], hdr[256];

	(void)state;
	/* a 3 s session (the daemon inherits the variable); one stream still
	 * opens well inside it (it only needs the login's reply first) */
	setenv("TESTBEDD_TEST_SESSION_TTL_S", "3", 1);
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	unsetenv("TESTBEDD_TEST_SESSION_TTL_S");
	assert_true(tb_test_daemon_log_contains(&d, "TESTBEDD_TEST_SESSION_TTL_S"));
	assert_int_equal(tb_test_create_token(&d, "short", "viewer", secret, sizeof(secret)), 201);
	login(&d, secret, &se);
	open_live(&s, d.port, se.cookie);
	bearer_header(secret, hdr, sizeof(hdr));
	open_live(&sb, d.port, hdr);
	/* over at 3 s; a waiting stream hears it at the next heartbeat wake (5 s) */
	assert_true(tb_test_stream_read_until(&s, STREAM_END, 15000));
	/* the token's bearer stream is not a session's: it goes on */
	assert_false(tb_test_stream_read_until(&sb, STREAM_END, 100));
	tb_test_stream_close(&s);
	tb_test_stream_close(&sb);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* One token: TB_EVENTS_PER_TOKEN streams, then 429 with the JSON error. */
static void test_streams_per_token_cap(void **state)
{
	struct tb_test_daemon d;
	struct session se;
	struct tb_test_stream s[TB_EVENTS_PER_TOKEN], extra;
	struct tb_test_resp r;
	char secret[128], other[128], url[256], auth[200], hdr[256];
	const char *h[] = {auth, "Accept: text/event-stream", NULL};
	const char *code, *msg;
	int half = TB_EVENTS_PER_TOKEN / 2;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(tb_test_create_token(&d, "greedy", "viewer", secret, sizeof(secret)), 201);
	assert_int_equal(tb_test_create_token(&d, "other", "viewer", other, sizeof(other)), 201);
	/* half through a session, half with the bearer token: one count */
	login(&d, secret, &se);
	bearer_header(secret, hdr, sizeof(hdr));
	for (int i = 0; i < TB_EVENTS_PER_TOKEN; i++)
		open_live(&s[i], d.port, i < half ? se.cookie : hdr);
	snprintf(url, sizeof(url), "%s/api/v1/events", d.url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", secret);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 429);
	assert_non_null(r.json);
	code = tb_test_error_code(&r);
	msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
	assert_string_equal(code, "rate_limited");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "event streams open"));
	tb_test_resp_free(&r);
	/* through the session too */
	tb_test_stream_open(&extra, d.port, "/api/v1/events", se.cookie);
	assert_true(tb_test_stream_read_until(&extra, "}}", 5000));
	assert_non_null(strstr(extra.buf, "HTTP/1.1 429"));
	assert_non_null(strstr(extra.buf, "\"code\":\"rate_limited\""));
	tb_test_stream_close(&extra);
	/* another token is not affected */
	bearer_header(other, hdr, sizeof(hdr));
	open_live(&extra, d.port, hdr);
	tb_test_stream_close(&extra);
	/* logging out ends the session's half: their places are free at once */
	logout(&d, &se);
	for (int i = 0; i < half; i++)
		assert_true(tb_test_stream_read_until(&s[i], STREAM_END, 5000));
	bearer_header(secret, hdr, sizeof(hdr));
	for (int i = 0; i < half; i++) {
		tb_test_stream_close(&s[i]);
		open_live(&s[i], d.port, hdr);
	}
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 429);
	tb_test_resp_free(&r);
	for (int i = 0; i < TB_EVENTS_PER_TOKEN; i++)
		tb_test_stream_close(&s[i]);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* --streams-per-token sets the cap: with 2, the third stream of a token is
 * refused, and the message says how many it has. */
static void test_streams_per_token_option(void **state)
{
	static const char *const extra_args[] = {"--streams-per-token", "2", NULL};
	struct tb_test_daemon d;
	struct tb_test_stream s[2];
	struct tb_test_resp r;
	char secret[128], url[256], auth[200], hdr[256];
	const char *h[] = {auth, "Accept: text/event-stream", NULL};
	const char *msg;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra_args), 0);
	assert_int_equal(tb_test_create_token(&d, "two", "viewer", secret, sizeof(secret)), 201);
	bearer_header(secret, hdr, sizeof(hdr));
	for (int i = 0; i < 2; i++)
		open_live(&s[i], d.port, hdr);
	snprintf(url, sizeof(url), "%s/api/v1/events", d.url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", secret);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 429);
	msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "already has 2 event streams open"));
	tb_test_resp_free(&r);
	for (int i = 0; i < 2; i++)
		tb_test_stream_close(&s[i]);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* Clients that closed their side (shutdown: they can still read) are found
 * without writing to them: their streams end before the first ": ping" (15 s;
 * the wakes come every 5 s), and their places under the cap are free again.
 * Before, only a failed write found them, and a half-closed client's writes
 * do not fail: those streams stayed, and kept their token at its cap. */
static void test_closed_clients_give_their_place_back(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s[TB_EVENTS_PER_TOKEN], extra;
	char secret[128], hdr[256];

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(tb_test_create_token(&d, "leaky", "viewer", secret, sizeof(secret)), 201);
	bearer_header(secret, hdr, sizeof(hdr));
	for (int i = 0; i < TB_EVENTS_PER_TOKEN; i++)
		open_live(&s[i], d.port, hdr);
	tb_test_stream_open(&extra, d.port, "/api/v1/events", hdr);
	assert_true(tb_test_stream_read_until(&extra, "}}", 5000));
	assert_non_null(strstr(extra.buf, "HTTP/1.1 429"));
	tb_test_stream_close(&extra);
	for (int i = 0; i < TB_EVENTS_PER_TOKEN; i++)
		assert_int_equal(shutdown(s[i].fd, SHUT_WR), 0);
	for (int i = 0; i < TB_EVENTS_PER_TOKEN; i++) {
		assert_true(tb_test_stream_read_to_eof(&s[i], 40000));
		assert_null(strstr(s[i].buf, ": ping"));
		tb_test_stream_close(&s[i]);
	}
	open_live(&extra, d.port, hdr);
	tb_test_stream_close(&extra);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A daemon whose host left has a console on the test's console server; cfd
 * is the daemon's connection to it. */
static void console_daemon(struct tb_test_daemon *d, int *lfd, int *cfd)
{
	static const char inv[] = "version: 1\n"
				  "ssh:\n"
				  "  user: root\n"
				  "  key_file: %%s\n"
				  "  connect_timeout_s: 2\n"
				  "machines:\n"
				  "  left:\n"
				  "    role: host\n"
				  "    console: {type: tcp, address: 127.0.0.1, port: %u}\n"
				  "    os:\n"
				  "      ubuntu: {address: 127.0.0.1, port: 9}\n";
	char text[1024];
	unsigned int port;

	*lfd = tb_test_console_listen(&port);
	snprintf(text, sizeof(text), inv, port);
	assert_int_equal(tb_test_daemon_start(d, text, NULL), 0);
	*cfd = tb_test_console_accept(*lfd);
}

/* A console's stream is served by the edge's one stream mechanism: the
 * console's framing (state, then output: base64 with the end offset as id),
 * Last-Event-ID, and the heartbeat (the edge wakes every stream it serves;
 * nothing of the console's own does any more: without that wake an idle
 * console stream never pings). */
static void test_console_stream(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s, again;
	char hdr[512];
	int lfd, cfd;

	(void)state;
	console_daemon(&d, &lfd, &cfd);
	tb_test_console_write(cfd, "hello console\r\n"); /* 15 bytes */
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", d.admin_token);
	tb_test_stream_open(&s, d.port, "/api/v1/hosts/left/console?from=0", hdr);
	assert_true(tb_test_stream_read_until(&s, "event: state\ndata: {", 10000));
	assert_non_null(strstr(s.buf, "HTTP/1.1 200"));
	assert_non_null(strstr(s.buf, "Content-Type: text/event-stream"));
	assert_true(tb_test_stream_read_until(&s, "id: 15\nevent: output\ndata: aGVsbG8gY29uc29sZQ0K\n\n", 10000));
	/* reconnecting after offset 15: only what came later */
	tb_test_console_write(cfd, "more");
	assert_true(tb_test_stream_read_until(&s, "id: 19\nevent: output\ndata: bW9yZQ==\n\n", 10000));
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\nLast-Event-ID: 15\r\n", d.admin_token);
	tb_test_stream_open(&again, d.port, "/api/v1/hosts/left/console", hdr);
	assert_true(tb_test_stream_read_until(&again, "id: 19\nevent: output\ndata: bW9yZQ==\n\n", 10000));
	assert_null(strstr(again.buf, "aGVsbG8"));
	tb_test_stream_close(&again);
	/* idle: the heartbeat comment (15 s), as on the bus's streams */
	assert_true(tb_test_stream_read_until(&s, ": ping\n\n", 30000));
	tb_test_stream_close(&s);
	close(cfd);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A console's stream opened with a session ends with it, as the bus's do:
 * logged out (also "log out everywhere"), and its token revoked.  Before,
 * a console's viewer read on after both. */
static void test_console_stream_ends_with_its_session(void **state)
{
	struct tb_test_daemon d;
	struct session one, two;
	struct tb_test_stream s1, s2;
	struct tb_test_resp r;
	char secret[128], url[256], auth[300];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	const char *body = "{\"name\":\"web\",\"role\":\"viewer\"}";
	long id;
	int lfd, cfd;

	(void)state;
	console_daemon(&d, &lfd, &cfd);
	snprintf(url, sizeof(url), "%s/api/v1/tokens", d.url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 201);
	snprintf(secret, sizeof(secret), "%s", json_string_value(json_object_get(r.json, "secret")));
	id = (long)json_integer_value(json_object_get(json_object_get(r.json, "token"), "id"));
	tb_test_resp_free(&r);
	login(&d, secret, &one);
	login(&d, secret, &two);
	tb_test_stream_open(&s1, d.port, "/api/v1/hosts/left/console", one.cookie);
	tb_test_stream_open(&s2, d.port, "/api/v1/hosts/left/console", two.cookie);
	assert_true(tb_test_stream_read_until(&s1, "event: state\n", 10000));
	assert_true(tb_test_stream_read_until(&s2, "event: state\n", 10000));
	logout(&d, &one);
	assert_true(tb_test_stream_read_until(&s1, STREAM_END, 5000));
	/* the other session's goes on, and reads the console */
	tb_test_console_write(cfd, "still here");
	assert_true(tb_test_stream_read_until(&s2, "data: c3RpbGwgaGVyZQ==\n\n", 10000));
	assert_null(strstr(s2.buf, STREAM_END));
	/* revoking the token ends it */
	assert_true(id > 0);
	snprintf(url, sizeof(url), "%s/api/v1/tokens/%ld", d.url, id);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
	assert_true(tb_test_stream_read_until(&s2, STREAM_END, 5000));
	tb_test_stream_close(&s1);
	tb_test_stream_close(&s2);
	close(cfd);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A token's id (from POST /tokens) and secret. */
static long make_token(const struct tb_test_daemon *d, const char *name, char *secret, size_t len)
{
	struct tb_test_resp r;
	char body[128];
	long id;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"viewer\"}", name);
	tb_test_api_expect(d, NULL, "POST", "/api/v1/tokens", body, 201, &r);
	snprintf(secret, len, "%s", json_string_value(json_object_get(r.json, "secret")));
	id = (long)json_integer_value(json_object_get(json_object_get(r.json, "token"), "id"));
	tb_test_resp_free(&r);
	assert_true(id > 0);
	return id;
}

/* A console's stream opened with a bearer token (tbctl console) ends when
 * that token is revoked, as a session's does with its session; another
 * token's stream goes on.  Before, a bearer's console stream had no leash
 * and read on after its token was revoked. */
static void test_console_bearer_stream_ends_with_its_token(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream sa, sb;
	struct tb_test_resp r;
	char a[128], b[128], ha[256], hb[256], url[256], auth[300];
	const char *h[] = {auth, NULL};
	long ida;
	int lfd, cfd;

	(void)state;
	console_daemon(&d, &lfd, &cfd);
	ida = make_token(&d, "alice", a, sizeof(a));
	make_token(&d, "bob", b, sizeof(b));
	bearer_header(a, ha, sizeof(ha));
	bearer_header(b, hb, sizeof(hb));
	tb_test_stream_open(&sa, d.port, "/api/v1/hosts/left/console", ha);
	tb_test_stream_open(&sb, d.port, "/api/v1/hosts/left/console", hb);
	assert_true(tb_test_stream_read_until(&sa, "event: state\n", 10000));
	assert_true(tb_test_stream_read_until(&sb, "event: state\n", 10000));
	snprintf(url, sizeof(url), "%s/api/v1/tokens/%ld", d.url, ida);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	assert_int_equal(tb_test_http("DELETE", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 204);
	tb_test_resp_free(&r);
	/* the revoked token's stream ends at once (the drop wakes it) */
	assert_true(tb_test_stream_read_until(&sa, STREAM_END, 5000));
	/* bob's goes on and reads the console */
	tb_test_console_write(cfd, "still here");
	assert_true(tb_test_stream_read_until(&sb, "data: c3RpbGwgaGVyZQ==\n\n", 10000));
	assert_null(strstr(sb.buf, STREAM_END));
	tb_test_stream_close(&sa);
	tb_test_stream_close(&sb);
	close(cfd);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* A lease without input lapses (README: 15 minutes; made 2 s with the
 * test-only TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S, which the daemon warns of),
 * and the viewers are told by a state event without anyone asking (the
 * console's feed looks at the edge's heartbeat wake): then nobody may type. */
static void test_console_lease_lapses(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream s;
	struct tb_test_resp r;
	char url[256], auth[300], hdr[320];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	int lfd, cfd;

	(void)state;
	setenv("TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S", "2", 1);
	console_daemon(&d, &lfd, &cfd);
	unsetenv("TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S");
	assert_true(tb_test_daemon_log_contains(&d, "TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S"));
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	snprintf(url, sizeof(url), "%s/api/v1/hosts/left/console/lease", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{}", 2, &r), 0);
	assert_int_equal(r.status, 200);
	tb_test_resp_free(&r);
	/* opened with the lease held: its first state names the holder */
	snprintf(hdr, sizeof(hdr), "%s\r\n", auth);
	tb_test_stream_open(&s, d.port, "/api/v1/hosts/left/console", hdr);
	assert_true(tb_test_stream_read_until(&s, "\"lease\":{\"holder\":", 10000));
	assert_null(strstr(s.buf, "\"lease\":null"));
	/* lapsed at 2 s, seen at a heartbeat wake (every 5 s) */
	assert_true(tb_test_stream_read_until(&s, "\"lease\":null", 20000));
	snprintf(url, sizeof(url), "%s/api/v1/hosts/left/console/input", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{\"text\":\"x\"}", 12, &r), 0);
	assert_int_equal(r.status, 409);
	assert_non_null(strstr(r.body, "nobody holds"));
	tb_test_resp_free(&r);
	tb_test_stream_close(&s);
	close(cfd);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logout_ends_its_streams),
		cmocka_unit_test(test_expired_session_ends_its_streams),
		cmocka_unit_test(test_streams_per_token_cap),
		cmocka_unit_test(test_streams_per_token_option),
		cmocka_unit_test(test_closed_clients_give_their_place_back),
		cmocka_unit_test(test_console_stream),
		cmocka_unit_test(test_console_stream_ends_with_its_session),
		cmocka_unit_test(test_console_lease_lapses),
		cmocka_unit_test(test_console_bearer_stream_ends_with_its_token),
	};

	return cmocka_run_group_tests_name("streams", tests, NULL, NULL);
}
