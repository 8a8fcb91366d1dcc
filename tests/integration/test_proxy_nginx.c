/*
 * test_proxy_nginx.c - testbedd behind nginx (Debian nginx-light) on
 * loopback, nginx running deploy/nginx/testbedd-proxy.conf itself:
 *   - with --trusted-proxy 127.0.0.1 the audit names the client nginx saw
 *     (a client on 127.0.0.2; what it put in its own X-Forwarded-For is
 *     not believed), the login limiter locks out that client and not
 *     another one behind the same proxy, login and a CSRF-checked cookie
 *     mutation work through nginx, live events arrive through it one by
 *     one while the stream stays open (nothing held back until a buffer
 *     fills or the reply ends; their speed against direct is
 *     ./deploy/bench --only proxy, not a test), and
 *     X-Forwarded-Proto: https keeps the cookie Secure only from the
 *     trusted peer;
 *   - without --trusted-proxy the audit names nginx (127.0.0.1) and the
 *     headers change nothing.
 * Clients pick their source address (127.0.0.2, 127.0.0.3: loopback holds
 * all of 127/8) with CURLOPT_INTERFACE.  Skipped when nginx is missing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "children.h"
#include "daemon.h"
#include "datafile.h"
#include "ssestream.h"

#define NGINX "/usr/sbin/nginx"

struct nginx {
	pid_t pid;
	unsigned int port;
	char dir[320];
};

static unsigned int free_port(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int port;

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int connects(unsigned int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* nginx in front of d, in a directory of d's, running the deploy snippet. */
static void nginx_start(struct nginx *n, const struct tb_test_daemon *d)
{
	char conf[400], snippet[400], text[2048];
	const char *src = getenv("TB_SOURCE_DIR");

	snprintf(n->dir, sizeof(n->dir), "%s/nginx", d->dir);
	assert_int_equal(mkdir(n->dir, 0700), 0);
	assert_non_null(src); /* tests/CMakeLists.txt sets it */
	snprintf(snippet, sizeof(snippet), "%s/deploy/nginx/testbedd-proxy.conf", src);
	n->port = free_port();
	snprintf(text, sizeof(text),
		 "daemon off;\nmaster_process off;\nworker_processes 1;\npid %s/nginx.pid;\n"
		 "error_log %s/error.log;\nevents { worker_connections 64; }\n"
		 "http {\n access_log off;\n client_body_temp_path %s;\n proxy_temp_path %s;\n"
		 " fastcgi_temp_path %s;\n uwsgi_temp_path %s;\n scgi_temp_path %s;\n"
		 " upstream testbedd { server 127.0.0.1:%u; keepalive 4; }\n"
		 " server { listen 127.0.0.1:%u; include %s; }\n}\n",
		 n->dir, n->dir, n->dir, n->dir, n->dir, n->dir, n->dir, d->port, n->port, snippet);
	snprintf(conf, sizeof(conf), "%s/nginx.conf", n->dir);
	assert_int_equal(tb_test_write_file(conf, text, 0600), 0);
	n->pid = fork();
	assert_true(n->pid >= 0);
	if (n->pid == 0) {
		tb_test_child_init();
		execl(NGINX, NGINX, "-p", n->dir, "-e", "stderr", "-c", conf, (char *)NULL);
		_exit(127);
	}
	tb_test_child_track(n->pid, "nginx");
	for (int i = 0; i < 200 && !connects(n->port); i++) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	assert_true(connects(n->port));
}

static void nginx_stop(struct nginx *n)
{
	int st;

	kill(n->pid, SIGTERM);
	waitpid(n->pid, &st, 0);
	tb_test_child_untrack(n->pid);
}

/* One request from the source address src ("127.0.0.2"); the status, the
 * raw headers then the body into *hdrs (free it) when hdrs is not NULL. */
static long req_from(const char *src, const char *method, const char *url, const char *const headers[],
		     const char *body, char **hdrs)
{
	struct tb_test_resp r;
	long status;

	assert_int_equal(tb_test_http_from(src, method, url, headers, body, body != NULL ? strlen(body) : 0, &r), 0);
	status = r.status;
	if (hdrs != NULL) {
		size_t n = strlen(r.headers) + r.len + 1;

		*hdrs = malloc(n);
		assert_non_null(*hdrs);
		snprintf(*hdrs, n, "%s%s", r.headers, r.body);
	}
	tb_test_resp_free(&r);
	return status;
}

/* POST a token named name from src to base (nginx or the daemon) as the
 * admin, the client claiming X-Forwarded-For: 203.0.113.9. */
static void create_from(const struct tb_test_daemon *d, const char *src, const char *base, const char *name)
{
	char url[256], auth[200], body[128];
	const char *h[] = {auth, "Content-Type: application/json", "X-Forwarded-For: 203.0.113.9", NULL};

	snprintf(url, sizeof(url), "%s/api/v1/tokens", base);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"viewer\"}", name);
	assert_int_equal(req_from(src, "POST", url, h, body, NULL), 201);
}

/* The remote of the audit row of token.create with target name. */
static void audit_remote(const struct tb_test_daemon *d, const char *name, char *out, size_t len)
{
	struct tb_test_resp r;
	json_t *row;
	size_t i;

	tb_test_api_expect(d, NULL, "GET", "/api/v1/audit?limit=100", NULL, 200, &r);
	out[0] = '\0';
	json_array_foreach(json_object_get(r.json, "audit"), i, row)
	{
		if (strcmp(json_string_value(json_object_get(row, "action")), "token.create") == 0 &&
		    strcmp(json_string_value(json_object_get(row, "target")), name) == 0)
			snprintf(out, len, "%s", json_string_value(json_object_get(row, "remote")));
	}
	tb_test_resp_free(&r);
	if (out[0] == '\0')
		fail_msg("no audit row for token %s", name);
}

static long login_from(const char *src, const char *base, const char *token, const char *extra, char **hdrs)
{
	char url[256], body[256];
	const char *h[] = {"Content-Type: application/json", extra, NULL};

	snprintf(url, sizeof(url), "%s/api/v1/session", base);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", token);
	return req_from(src, "POST", url, h, body, hdrs);
}

static int nginx_missing(void)
{
	if (access(NGINX, X_OK) == 0)
		return 0;
	fprintf(stderr, "test_proxy_nginx: %s is missing (Debian nginx-light, ./deploy/setup): skipped\n", NGINX);
	return 1;
}

static void test_trusted(void **state)
{
	const char *const extra[] = {"--trusted-proxy", "127.0.0.1", NULL};
	struct tb_test_daemon d;
	struct nginx n;
	struct tb_test_stream s;
	char via[64], remote[64], sse_auth[200], *hdrs, cookie[300], csrf[300], url[256];
	const char *p;

	(void)state;
	if (nginx_missing())
		skip();
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), 0);
	nginx_start(&n, &d);
	snprintf(via, sizeof(via), "http://127.0.0.1:%u", n.port);

	/* live events through nginx: the stream is open before the event */
	snprintf(sse_auth, sizeof(sse_auth), "Authorization: Bearer %s\r\n", d.admin_token);
	tb_test_stream_open(&s, n.port, "/api/v1/events", sse_auth);
	assert_true(tb_test_stream_read_until(&s, "event: stream\n", 10000));

	/* the audit names the client nginx saw, not what the client claimed */
	create_from(&d, "127.0.0.2", via, "via-nginx");
	audit_remote(&d, "via-nginx", remote, sizeof(remote));
	assert_string_equal(remote, "127.0.0.2");
	assert_true(tb_test_stream_read_until(&s, "via-nginx", 10000));
	/* unbuffered: each event came while the reply goes on, as a chunk of
	 * an event stream, and the next one comes the same way */
	assert_non_null(strstr(s.buf, "Content-Type: text/event-stream"));
	assert_non_null(strstr(s.buf, "Transfer-Encoding: chunked"));
	assert_false(tb_test_stream_read_to_eof(&s, 200));
	create_from(&d, "127.0.0.2", via, "via-nginx-2");
	assert_true(tb_test_stream_read_until(&s, "via-nginx-2", 10000));
	assert_false(tb_test_stream_read_to_eof(&s, 200));
	tb_test_stream_close(&s);
	/* straight to the daemon from an untrusted peer: the header is ignored */
	create_from(&d, "127.0.0.2", d.url, "direct");
	audit_remote(&d, "direct", remote, sizeof(remote));
	assert_string_equal(remote, "127.0.0.2");

	/* login and a cookie mutation with its CSRF token through nginx */
	assert_int_equal(login_from("127.0.0.2", via, d.admin_token, NULL, &hdrs), 200);
	assert_null(strstr(hdrs, "Secure")); /* plain http at nginx */
	p = strstr(hdrs, "tb_session=");
	assert_non_null(p);
	snprintf(cookie, sizeof(cookie), "Cookie: %.*s", (int)strcspn(p, ";\r\n"), p);
	p = strstr(hdrs, "\"csrf_token\"");
	assert_non_null(p);
	p = strchr(p + 12, '"'); /* the value's opening quote */
	assert_non_null(p);
	snprintf(csrf, sizeof(csrf), "X-CSRF-Token: %.*s", (int)strcspn(p + 1, "\""), p + 1);
	free(hdrs);
	{
		const char *h[] = {cookie, csrf, "Content-Type: application/json", NULL};
		const char *h_nocsrf[] = {cookie, "Content-Type: application/json", NULL};

		snprintf(url, sizeof(url), "%s/api/v1/tokens", via);
		assert_int_equal(
			req_from("127.0.0.2", "POST", url, h_nocsrf, "{\"name\":\"c1\",\"role\":\"viewer\"}", NULL),
			403);
		assert_int_equal(
			req_from("127.0.0.2", "POST", url, h, "{\"name\":\"by-cookie\",\"role\":\"viewer\"}", NULL),
			201);
	}

	/* Secure from a trusted peer's X-Forwarded-Proto only */
	assert_int_equal(login_from("127.0.0.1", d.url, d.admin_token, "X-Forwarded-Proto: https", &hdrs), 200);
	assert_non_null(strstr(hdrs, "; Secure"));
	free(hdrs);
	assert_int_equal(login_from("127.0.0.2", d.url, d.admin_token, "X-Forwarded-Proto: https", &hdrs), 200);
	assert_null(strstr(hdrs, "Secure"));
	free(hdrs);

	/* the limiter sees each client behind the proxy: 127.0.0.2 guesses
	 * until it is limited, 127.0.0.3 behind the same nginx is not */
	{
		long st = 0;

		for (int i = 0; i < 20 && st != 429; i++)
			st = login_from("127.0.0.2", via, "tb_wrong", NULL, NULL);
		assert_int_equal(st, 429);
		assert_int_equal(login_from("127.0.0.3", via, "tb_wrong", NULL, NULL), 401);
	}

	nginx_stop(&n);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_untrusted(void **state)
{
	struct tb_test_daemon d;
	struct nginx n;
	char via[64], remote[64], *hdrs;

	(void)state;
	if (nginx_missing())
		skip();
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	nginx_start(&n, &d);
	snprintf(via, sizeof(via), "http://127.0.0.1:%u", n.port);
	create_from(&d, "127.0.0.2", via, "via-nginx");
	audit_remote(&d, "via-nginx", remote, sizeof(remote));
	assert_string_equal(remote, "127.0.0.1");
	assert_int_equal(login_from("127.0.0.1", d.url, d.admin_token, "X-Forwarded-Proto: https", &hdrs), 200);
	assert_null(strstr(hdrs, "Secure"));
	free(hdrs);
	nginx_stop(&n);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trusted),
		cmocka_unit_test(test_untrusted),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
