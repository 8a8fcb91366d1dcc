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
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conserver.h"
#include "daemon.h"

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

static void test_break_needs_rfc2217(void **state)
{
	static const unsigned char will_comport[] = {255, 251, 44};
	static const unsigned char brk_on[] = {255, 250, 44, 5, 5, 255, 240};
	static const unsigned char brk_off[] = {255, 250, 44, 5, 6, 255, 240};
	static const unsigned char dont_comport[] = {255, 254, 44}, wont_comport[] = {255, 252, 44};
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char inv[1024];
	unsigned char got[4096];
	size_t glen;
	unsigned int port;
	int lfd = tb_test_console_listen(&port), c;
	json_t *j;

	(void)state;
	snprintf(inv, sizeof(inv),
		 "version: 1\nssh:\n  user: root\n  key_file: %%s\n  connect_timeout_s: 2\nmachines:\n"
		 "  left:\n    role: host\n"
		 "    console: {type: tcp, address: 127.0.0.1, port: %u, protocol: telnet}\n"
		 "    os:\n      ubuntu: {address: 127.0.0.1, port: 9}\n",
		 port);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	c = tb_test_console_accept(lfd);
	assert_true(read_until(c, will_comport, sizeof(will_comport), got, sizeof(got), &glen));
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/hosts/left/console/lease", "{}", 200, &r);
	tb_test_resp_free(&r);

	/* not refused: the Break goes as RFC 2217's SET-CONTROL, on then off */
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/hosts/left/console/input", "{\"key\":\"break\"}", 204, &r);
	tb_test_resp_free(&r);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_break_needs_rfc2217),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
