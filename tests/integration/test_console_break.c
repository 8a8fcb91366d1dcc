/*
 * test_console_break.c - Break on a tcp console with protocol: telnet,
 * over real HTTP against the real daemon (port 0); the console server is the
 * test's own TCP listener on 127.0.0.1 (tests/support/conserver.c), speaking
 * telnet by hand:
 *   - the reader's hello asks for RFC 2217 (IAC WILL COM-PORT-OPTION);
 *   - a server that has not refused it gets a Break as SET-CONTROL BREAK ON
 *     (IAC SB 44 5 5 IAC SE) and then BREAK OFF (... 5 6 ...): 204;
 *   - a server that says IAC DONT COM-PORT-OPTION (a telnet accepter
 *     without RFC 2217) has no Break: 409 saying so, nothing sent.
 * Before, the refused Break answered 204 and sent a subnegotiation the
 * server ignores: the caller was told a Break went when none did.
 *   - two Breaks asked for within 250 ms, even before the reader took the
 *     first, are two Breaks (the second waits for the first's OFF; it was
 *     dropped, with a 204); a fifth while four wait is a 409;
 *   - a server that stops reading until typed input fills every buffer
 *     still gets a Break asked for then, ON and OFF, and an answer to each
 *     of its negotiations (both were dropped when the wire was full, the
 *     OFF too: the line stayed in Break).
 */
#include <poll.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>

#include <cmocka.h>

#include "conserver.h"
#include "daemon.h"

#define TB_TEST_INPUT 4096 /* TB_CONSOLE_INPUT_MAX: the most one request types */

/* 1 when want[0..n) is in got[0..glen). */
static int has(const unsigned char *got, size_t glen, const unsigned char *want, size_t n)
{
	for (size_t k = 0; k + n <= glen; k++)
		if (memcmp(got + k, want, n) == 0)
			return 1;
	return 0;
}

/* Read from fd until the bytes want[0..n) have come (bounded: 10 s); 1
 * when they did.  What came is in got (its length *glen). */
static int read_until(int fd, const unsigned char *want, size_t n, unsigned char *got, size_t cap, size_t *glen)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	*glen = 0;
	for (int i = 0; i < 100; i++) {
		if (has(got, *glen, want, n))
			return 1;
		if (*glen == cap)
			return 0;
		if (poll(&p, 1, 100) == 1) {
			ssize_t r = read(fd, got + *glen, cap - *glen);

			if (r <= 0)
				return 0;
			*glen += (size_t)r;
		}
	}
	return 0;
}

static const unsigned char brk_on[] = {255, 250, 44, 5, 5, 255, 240};
static const unsigned char brk_off[] = {255, 250, 44, 5, 6, 255, 240};

/* How often want[0..n) is in got[0..glen); *last the offset of the last one. */
static int count(const unsigned char *got, size_t glen, const unsigned char *want, size_t n, size_t *last)
{
	int k = 0;

	for (size_t i = 0; i + n <= glen; i++) {
		if (memcmp(got + i, want, n) == 0) {
			k++;
			*last = i;
		}
	}
	return k;
}

/* Read fd into got (appending at *glen) until ons ONs and as many OFFs and
 * answers telnet answers have come, or 20 s went; 1 when they did. */
static int read_breaks(int fd, unsigned char *got, size_t cap, size_t *glen, int ons, int answers)
{
	static const unsigned char wont99[] = {255, 252, 99};
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t on = 0, off = 0, a = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; t.tv_sec - t0.tv_sec < 20; clock_gettime(CLOCK_MONOTONIC, &t)) {
		int r = poll(&p, 1, 50);

		if (r == 1) { /* counted once the line goes quiet: megabytes come */
			ssize_t n = read(fd, got + *glen, cap - *glen);

			if (n <= 0)
				return 0;
			*glen += (size_t)n;
			if (*glen < cap)
				continue;
		}
		if (count(got, *glen, brk_on, sizeof(brk_on), &on) >= ons &&
		    count(got, *glen, brk_off, sizeof(brk_off), &off) >= ons && off > on &&
		    count(got, *glen, wont99, sizeof(wont99), &a) >= answers)
			return 1;
		if (*glen == cap)
			return 0;
	}
	return 0;
}

/* A daemon whose left has a telnet console at the test's listener lfd
 * (port): started, connected (*c), the hello read, the admin's lease taken. */
static void start_console(struct tb_test_daemon *d, int lfd, unsigned int port, int *c)
{
	static const unsigned char will_comport[] = {255, 251, 44};
	struct tb_test_resp r;
	unsigned char got[256];
	size_t glen;
	char inv[1024];

	snprintf(inv, sizeof(inv),
		 "version: 1\nssh:\n  user: root\n  key_file: %%s\n  connect_timeout_s: 2\nmachines:\n"
		 "  left:\n    role: host\n"
		 "    console: {type: tcp, address: 127.0.0.1, port: %u, protocol: telnet}\n"
		 "    os:\n      ubuntu: {address: 127.0.0.1, port: 9}\n",
		 port);
	assert_int_equal(tb_test_daemon_start(d, inv, NULL), 0);
	*c = tb_test_console_accept(lfd);
	assert_true(read_until(*c, will_comport, sizeof(will_comport), got, sizeof(got), &glen));
	tb_test_api_expect(d, NULL, "POST", "/api/v1/hosts/left/console/lease", "{}", 200, &r);
	tb_test_resp_free(&r);
}

static void post_break(struct tb_test_daemon *d)
{
	struct tb_test_resp r;

	tb_test_api_expect(d, NULL, "POST", "/api/v1/hosts/left/console/input", "{\"key\":\"break\"}", 204, &r);
	tb_test_resp_free(&r);
}

static void test_break_needs_rfc2217(void **state)
{
	static const unsigned char dont_comport[] = {255, 254, 44}, wont_comport[] = {255, 252, 44};
	struct tb_test_daemon d;
	struct tb_test_resp r;
	unsigned char got[4096];
	size_t glen;
	unsigned int port;
	int lfd = tb_test_console_listen(&port), c;
	json_t *j;

	(void)state;
	start_console(&d, lfd, port, &c);

	/* not refused: the Break goes as RFC 2217's SET-CONTROL, on then off */
	post_break(&d);
	assert_true(read_until(c, brk_on, sizeof(brk_on), got, sizeof(got), &glen));
	if (!has(got, glen, brk_off, sizeof(brk_off)))
		assert_true(read_until(c, brk_off, sizeof(brk_off), got, sizeof(got), &glen));

	/* refused (the reader's WONT says it read the DONT): no Break, 409 */
	assert_int_equal(write(c, dont_comport, sizeof(dont_comport)), (ssize_t)sizeof(dont_comport));
	assert_true(read_until(c, wont_comport, sizeof(wont_comport), got, sizeof(got), &glen));
	j = tb_test_api_expect(&d, NULL, "POST", "/api/v1/hosts/left/console/input", "{\"key\":\"break\"}", 409, &r);
	assert_non_null(j);
	assert_non_null(strstr(r.body, "refused RFC 2217"));
	tb_test_resp_free(&r);
	/* typing still works: the text comes, and no subnegotiation before it */
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/hosts/left/console/input", "{\"text\":\"x\"}", 204, &r);
	tb_test_resp_free(&r);
	assert_true(read_until(c, (const unsigned char *)"x", 1, got, sizeof(got), &glen));
	assert_false(has(got, glen, brk_on, 3));

	assert_int_equal(tb_test_daemon_stop(&d), 0);
	close(c);
	close(lfd);
}

static void test_two_breaks(void **state)
{
	struct tb_test_daemon d;
	unsigned char got[4096];
	size_t glen = 0;
	unsigned int port;
	int lfd = tb_test_console_listen(&port), c, sent = 0;
	struct tb_test_resp r;
	long st = 204;

	(void)state;
	start_console(&d, lfd, port, &c);
	post_break(&d);
	post_break(&d); /* within the first's 250 ms */
	assert_true(read_breaks(c, got, sizeof(got), &glen, 2, 0));
	/* more at once: each lasts 250 ms on the line, so soon 4 wait */
	for (int i = 0; i < 20 && st == 204; i++) {
		st = tb_test_api(&d, NULL, "POST", "/api/v1/hosts/left/console/input", "{\"key\":\"break\"}", &r);
		if (st == 409)
			assert_non_null(strstr(r.body, "Breaks still to send"));
		sent += st == 204;
		tb_test_resp_free(&r);
	}
	assert_int_equal(st, 409);
	assert_true(sent >= 4);
	assert_true(read_breaks(c, got, sizeof(got), &glen, 2 + sent, 0));
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	close(c);
	close(lfd);
}

static void test_break_on_a_full_wire(void **state)
{
	static unsigned char got[16 << 20]; /* the socket buffers took ~2.3 MB here */
	unsigned char flood[3 * 1000];
	char *body = malloc(TB_TEST_INPUT + 32);
	struct tb_test_daemon d;
	struct tb_test_resp r;
	size_t glen = 0;
	unsigned int port;
	int lfd = tb_test_console_listen(&port), c, small = 2048, posts = 0;
	long st = 204;

	(void)state;
	assert_non_null(body);
	/* a small window: the daemon's writes stop soon once we stop reading */
	assert_int_equal(setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	start_console(&d, lfd, port, &c);
	strcpy(body, "{\"text\":\"");
	memset(body + 9, 'a', TB_TEST_INPUT);
	strcpy(body + 9 + TB_TEST_INPUT, "\"}");
	/* type until every buffer on the way is full and the queue says later */
	while (st == 204 && posts++ < 4000) {
		st = tb_test_api(&d, NULL, "POST", "/api/v1/hosts/left/console/input", body, &r);
		tb_test_resp_free(&r);
	}
	assert_int_equal(st, 409);
	post_break(&d);
	for (int i = 0; i < 1000; i++) { /* a thousand options it does not do */
		flood[3 * i] = 255;
		flood[3 * i + 1] = 253;
		flood[3 * i + 2] = 99;
	}
	assert_int_equal(write(c, flood, sizeof(flood)), (ssize_t)sizeof(flood));
	nanosleep(&(struct timespec){.tv_nsec = 400 * 1000 * 1000},
		  NULL); /* past the Break's 250 ms, the wire still full */
	assert_true(read_breaks(c, got, sizeof(got), &glen, 1, 1000));
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	free(body);
	close(c);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_break_needs_rfc2217),
		cmocka_unit_test(test_two_breaks),
		cmocka_unit_test(test_break_on_a_full_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
