/*
 * test_console_reload.c - the consoles follow an inventory reload, over real
 * HTTP against the real daemon (port 0); the console servers are the test's
 * own TCP listeners on 127.0.0.1 (what ser2net is to the sim):
 *   - a console added by the reload gets a reader (its server sees the
 *     daemon connect, its stream reads what the server writes);
 *   - a console gone from the inventory: its reader lets go of the server,
 *     its viewers' streams end with an "end" event saying why, its lease and
 *     its routes are gone (404), and once its last viewer is gone its
 *     scrollback is freed (not at the next reload);
 *   - a console whose definition changed (another port): the old server is
 *     let go, the new one connected, the old viewers told by an "end" event;
 *     the scrollback and its offsets go on (Last-Event-ID resumes) and the
 *     lease stays;
 *   - an unchanged console is not touched: the same connection, its viewer's
 *     stream goes on, its scrollback kept;
 *   - a change of protocol alone (raw to telnet) restarts the reader too,
 *     and the new reader connects only once the old one let go (a console
 *     server taking one connection, as ser2net by default, refused it when
 *     the new one came first);
 *   - reloads back and forth while another thread reads the hosts, takes
 *     and drops the lease, types and opens streams: no crash, and under AddressSanitizer
 *     (build/...-asan) no use after free (a console freed under a reader).
 * Before, a reload changed nothing of the consoles (the readers were those
 * of the start).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
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

#define STREAM_END "\r\n0\r\n\r\n"

/* 1 when the daemon closed its side of fd (bounded wait). */
static int closed_by_daemon(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char b[256];

	for (int i = 0; i < 150; i++) {
		if (poll(&p, 1, 100) == 1 && read(fd, b, sizeof(b)) == 0)
			return 1;
	}
	return 0;
}

/* An inventory: left on port l, and each of right, router, far when its
 * port is not 0. */
static void inventory(char *out, size_t len, unsigned int l, unsigned int r, unsigned int ro, unsigned int far)
{
	char con[160];
	int n = snprintf(out, len,
			 "version: 1\nssh:\n  user: root\n  key_file: %%s\n  connect_timeout_s: 2\nmachines:\n"
			 "  left:\n    role: host\n    console: {type: tcp, address: 127.0.0.1, port: %u}\n"
			 "    os:\n      ubuntu: {address: 127.0.0.1, port: 9}\n",
			 l);
	const char *names[] = {"right", "router", "far"};
	unsigned int ports[] = {r, ro, far};

	for (int i = 0; i < 3; i++) {
		con[0] = '\0';
		if (ports[i] != 0)
			snprintf(con, sizeof(con), "    console: {type: tcp, address: 127.0.0.1, port: %u}\n",
				 ports[i]);
		n += snprintf(out + n, len - (size_t)n,
			      "  %s:\n    role: host\n%s    os:\n      ubuntu: {address: 127.0.0.1, port: 9}\n",
			      names[i], con);
	}
}

static void reload(struct tb_test_daemon *d, const char *text)
{
	struct tb_test_resp r;

	assert_int_equal(tb_test_daemon_write_inventory(d, text), 0);
	tb_test_api_expect(d, NULL, "POST", "/api/v1/inventory/reload", NULL, 200, &r);
	tb_test_resp_free(&r);
}

static void stream(struct tb_test_stream *s, const struct tb_test_daemon *d, const char *host, const char *extra)
{
	char path[128], hdr[400];

	snprintf(path, sizeof(path), "/api/v1/hosts/%s/console%s", host, extra);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", d->admin_token);
	tb_test_stream_open(s, d->port, path, hdr);
	assert_true(tb_test_stream_read_until(s, "event: state\n", 10000));
	assert_non_null(strstr(s->buf, "HTTP/1.1 200"));
}

static long status_of(const struct tb_test_daemon *d, const char *method, const char *path, const char *body)
{
	struct tb_test_resp r;
	long st = tb_test_api(d, NULL, method, path, body, &r);

	tb_test_resp_free(&r);
	return st;
}

static void test_reload_adds_removes_and_restarts_readers(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_stream sl, sr, sf, again, all;
	struct tb_test_resp r;
	char inv[2048];
	unsigned int pl, pr, pro, pf, pf2;
	int ll = tb_test_console_listen(&pl), lr = tb_test_console_listen(&pr), lro = tb_test_console_listen(&pro),
	    lf = tb_test_console_listen(&pf), lf2 = tb_test_console_listen(&pf2);
	int cl, cr, cro, cf, cf2;
	json_t *j;

	(void)state;
	inventory(inv, sizeof(inv), pl, pr, 0, pf);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	cl = tb_test_console_accept(ll);
	cr = tb_test_console_accept(lr);
	cf = tb_test_console_accept(lf);
	assert_int_equal(status_of(&d, "GET", "/api/v1/hosts/router/console", NULL), 404);
	tb_test_console_write(cl, "left before\r\n");
	tb_test_console_write(cf, "far before\r\n"); /* 12 bytes */
	stream(&sl, &d, "left", "?from=0");
	stream(&sr, &d, "right", "");
	stream(&sf, &d, "far", "?from=0");
	assert_true(tb_test_stream_read_until(&sl, "data: bGVmdCBiZWZvcmUNCg==\n\n", 10000));
	assert_true(tb_test_stream_read_until(&sf, "id: 12\nevent: output\n", 10000));
	assert_int_equal(status_of(&d, "POST", "/api/v1/hosts/right/console/lease", "{}"), 200);
	assert_int_equal(status_of(&d, "POST", "/api/v1/hosts/far/console/lease", "{}"), 200);

	/* right goes, router comes, far moves to another port, left stays */
	inventory(inv, sizeof(inv), pl, 0, pro, pf2);
	reload(&d, inv);

	/* router: a new reader */
	cro = tb_test_console_accept(lro);
	tb_test_console_write(cro, "router here");
	stream(&again, &d, "router", "?from=0");
	assert_true(tb_test_stream_read_until(&again, "data: cm91dGVyIGhlcmU=\n\n", 10000));
	tb_test_stream_close(&again);

	/* right: its viewer told why, then the end; the server let go; 404 */
	assert_true(tb_test_stream_read_until(&sr, "event: end\ndata: {\"reason\":\"its console is no longer", 10000));
	assert_true(tb_test_stream_read_until(&sr, STREAM_END, 10000));
	assert_true(closed_by_daemon(cr));
	assert_int_equal(status_of(&d, "POST", "/api/v1/hosts/right/console/lease", "{}"), 404);
	assert_int_equal(status_of(&d, "GET", "/api/v1/hosts/right/console", NULL), 404);
	j = tb_test_api_expect(&d, NULL, "GET", "/api/v1/hosts/right", NULL, 200, &r);
	assert_true(json_is_null(json_object_get(json_object_get(j, "host"), "console_state")));
	tb_test_resp_free(&r);
	/* its last viewer's stream ended: its scrollback is freed at once (before, at the next reload) */
	tb_test_stream_close(&sr);
	for (int i = 0; i < 100 && !tb_test_daemon_log_contains(&d, "right: its scrollback is freed"); i++)
		nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
	assert_true(tb_test_daemon_log_contains(&d, "right: its scrollback is freed"));

	/* far: the old server let go, the new one connected, the old viewer told */
	assert_true(closed_by_daemon(cf));
	cf2 = tb_test_console_accept(lf2);
	assert_true(tb_test_stream_read_until(&sf, "event: end\ndata: {\"reason\":\"its console changed", 10000));
	assert_true(tb_test_stream_read_until(&sf, STREAM_END, 10000));
	/* the lease stayed, and the scrollback with its offsets: resuming after
	 * 12 gets only what the new line brings */
	j = tb_test_api_expect(&d, NULL, "GET", "/api/v1/hosts/far", NULL, 200, &r);
	assert_true(
		json_is_object(json_object_get(json_object_get(json_object_get(j, "host"), "console_state"), "lease")));
	tb_test_resp_free(&r);
	tb_test_console_write(cf2, "far after");
	stream(&again, &d, "far", "?from=12");
	assert_true(tb_test_stream_read_until(&again, "id: 21\nevent: output\ndata: ZmFyIGFmdGVy\n\n", 10000));
	assert_null(strstr(again.buf, "ZmFyIGJlZm9yZQ"));
	tb_test_stream_close(&again);
	stream(&all, &d, "far", "?from=0");
	assert_true(tb_test_stream_read_until(&all, "ZmFyIGJlZm9yZQ0K", 10000));
	tb_test_stream_close(&all);

	/* left: untouched (the same connection, the same stream, no end) */
	tb_test_console_write(cl, "left after");
	assert_true(tb_test_stream_read_until(&sl, "data: bGVmdCBhZnRlcg==\n\n", 10000));
	assert_null(strstr(sl.buf, "event: end"));
	assert_null(strstr(sl.buf, STREAM_END));

	tb_test_stream_close(&sl);
	tb_test_stream_close(&sf);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	close(cl);
	close(cr);
	close(cro);
	close(cf);
	close(cf2);
	close(ll);
	close(lr);
	close(lro);
	close(lf);
	close(lf2);
}

/* A reload that changes only a tcp console's protocol (raw to telnet)
 * restarts its reader: the old connection let go, a new one that speaks
 * telnet (its first bytes are IAC negotiations). */
static void test_protocol_change_restarts(void **state)
{
	struct tb_test_daemon d;
	char raw[2048], telnet[2048];
	unsigned int pl, pr;
	unsigned char b[16];
	int ll = tb_test_console_listen(&pl), lr = tb_test_console_listen(&pr), cl, c1, c2;
	struct pollfd p;
	char *at;

	(void)state;
	inventory(raw, sizeof(raw), pl, pr, 0, 0);
	snprintf(telnet, sizeof(telnet), "%s", raw);
	/* right's "{type: tcp, address: 127.0.0.1, port: N}" gets ", protocol: telnet" */
	at = strchr(strstr(telnet, "right:"), '}');
	assert_non_null(at);
	memmove(at + strlen(", protocol: telnet"), at, strlen(at) + 1);
	memcpy(at, ", protocol: telnet", strlen(", protocol: telnet"));
	assert_int_equal(tb_test_daemon_start(&d, raw, NULL), 0);
	cl = tb_test_console_accept(ll);
	c1 = tb_test_console_accept(lr);
	reload(&d, telnet);
	p = (struct pollfd){.fd = lr, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 15000), 1); /* the new reader calls */
	/* ... and the old one has already hung up */
	assert_true(recv(c1, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT) == 0);
	assert_true(closed_by_daemon(c1));
	c2 = tb_test_console_accept(lr);
	p = (struct pollfd){.fd = c2, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_true(read(c2, b, sizeof(b)) > 0);
	assert_int_equal(b[0], 255); /* IAC */
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	close(cl);
	close(c1);
	close(c2);
	close(ll);
	close(lr);
}

struct busy {
	const struct tb_test_daemon *d;
	volatile int stop;
	long requests;
	long failures;
};

/* One request as the admin, from the busy thread (no cmocka there: a
 * transport error only counts as a failure). */
static void call(struct busy *b, const char *method, const char *path, const char *body)
{
	char url[256], auth[300];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	struct tb_test_resp r;

	snprintf(url, sizeof(url), "%s%s", b->d->url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", b->d->admin_token);
	if (tb_test_http(method, url, h, body, body != NULL ? strlen(body) : 0, &r) != 0)
		b->failures++;
	else
		tb_test_resp_free(&r);
}

/* Use right's console all the time: its state in the host JSON, the lease
 * taken and dropped, input, a stream opened and read a little. */
static void *use_console(void *arg)
{
	struct busy *b = arg;
	char hdr[400];

	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", b->d->admin_token);
	while (!b->stop) {
		struct tb_test_stream s;

		call(b, "GET", "/api/v1/hosts", NULL);
		call(b, "POST", "/api/v1/hosts/right/console/lease", "{}");
		call(b, "POST", "/api/v1/hosts/right/console/input", "{\"text\":\"x\"}");
		call(b, "DELETE", "/api/v1/hosts/right/console/lease", NULL);
		tb_test_stream_open(&s, b->d->port, "/api/v1/hosts/right/console", hdr);
		tb_test_stream_read_until(&s, "\n\n", 200);
		tb_test_stream_close(&s);
		b->requests++;
	}
	return NULL;
}

/* Reloads that add, change and remove right's console while a thread uses
 * it: the daemon serves on and stops cleanly (under ASan: no use after
 * free, no leak of the stopped consoles). */
static void test_reloads_while_in_use(void **state)
{
	struct tb_test_daemon d;
	struct busy b = {0};
	pthread_t t;
	char with[2048], moved[2048], without[2048];
	unsigned int pl, pr, pr2;
	int ll = tb_test_console_listen(&pl), lr = tb_test_console_listen(&pr), lr2 = tb_test_console_listen(&pr2);

	(void)state;
	inventory(with, sizeof(with), pl, pr, 0, 0);
	inventory(moved, sizeof(moved), pl, pr2, 0, 0);
	inventory(without, sizeof(without), pl, 0, 0, 0);
	assert_int_equal(tb_test_daemon_start(&d, with, NULL), 0);
	b.d = &d;
	assert_int_equal(pthread_create(&t, NULL, use_console, &b), 0);
	for (int i = 0; i < 30; i++)
		reload(&d, i % 3 == 0 ? moved : i % 3 == 1 ? without : with);
	b.stop = 1;
	pthread_join(t, NULL);
	assert_true(b.requests > 0);
	assert_int_equal(b.failures, 0);
	assert_int_equal(status_of(&d, "GET", "/api/v1/hosts/right/console/logs", NULL), 200);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	close(ll);
	close(lr);
	close(lr2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload_adds_removes_and_restarts_readers),
		cmocka_unit_test(test_protocol_change_restarts),
		cmocka_unit_test(test_reloads_while_in_use),
	};

	return cmocka_run_group_tests_name("console_reload", tests, NULL, NULL);
}
