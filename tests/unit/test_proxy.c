/*
 * test_proxy.c - the client address behind a reverse proxy (proxy.c),
 * called directly: a table of peers, X-Forwarded-For chains and
 * X-Forwarded-Proto values, trusted and not, garbage and IPv6; and the
 * parsing of --trusted-proxy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

static void test_client_table(void **state)
{
	static const struct {
		const char *peer, *xff, *xfp, *client;
		int https;
	} cases[] = {
		/* no header: the peer, trusted or not */
		{"127.0.0.1", NULL, NULL, "127.0.0.1", 0},
		{"192.0.2.9", NULL, NULL, "192.0.2.9", 0},
		/* an untrusted peer: both headers ignored */
		{"192.0.2.9", "203.0.113.5", "https", "192.0.2.9", 0},
		{"192.0.2.9", "10.0.0.1", NULL, "192.0.2.9", 0},
		/* a trusted peer: the rightmost address */
		{"127.0.0.1", "203.0.113.5", "https", "203.0.113.5", 1},
		{"127.0.0.1", "203.0.113.5", "http", "203.0.113.5", 0},
		{"127.0.0.1", "203.0.113.5", " HTTPS ", "203.0.113.5", 1},
		{"127.0.0.1", "203.0.113.5", "https, http", "203.0.113.5", 0},
		/* a client's forged entry on the left is not believed */
		{"127.0.0.1", "1.2.3.4, 203.0.113.5", NULL, "203.0.113.5", 0},
		/* a chain of our own proxies is skipped */
		{"127.0.0.1", "1.2.3.4, 203.0.113.5, 10.1.2.3", NULL, "203.0.113.5", 0},
		{"127.0.0.1", "203.0.113.5,10.1.2.3,127.0.0.1", NULL, "203.0.113.5", 0},
		/* only proxies: the leftmost */
		{"127.0.0.1", "10.1.2.3, 10.9.9.9", NULL, "10.1.2.3", 0},
		/* garbage: the last hop believed */
		{"127.0.0.1", "not-an-address", NULL, "127.0.0.1", 0},
		{"127.0.0.1", "203.0.113.5, <script>", NULL, "127.0.0.1", 0},
		{"127.0.0.1", "203.0.113.5, bogus, 10.1.2.3", NULL, "10.1.2.3", 0},
		{"127.0.0.1", "", NULL, "127.0.0.1", 0},
		{"127.0.0.1", " , ", NULL, "127.0.0.1", 0},
		{"127.0.0.1", "203.0.113.5,", NULL, "203.0.113.5", 0},
		{"127.0.0.1", "999.1.1.1", NULL, "127.0.0.1", 0},
		/* ports */
		{"127.0.0.1", "203.0.113.5:4711", NULL, "203.0.113.5", 0},
		{"127.0.0.1", "[2001:db8::7]:4711", NULL, "2001:db8::7", 0},
		/* IPv6: peers, clients, mapped addresses, zones */
		{"::1", "2001:db8::7", "https", "2001:db8::7", 1},
		{"::1", "2001:DB8:0:0::7", NULL, "2001:db8::7", 0},
		{"2001:db8:ff::1", "203.0.113.5", NULL, "203.0.113.5", 0},
		{"2001:db8:fe::1", "203.0.113.5", NULL, "2001:db8:fe::1", 0},
		{"::ffff:127.0.0.1", "::ffff:203.0.113.5", NULL, "203.0.113.5", 0},
		{"::1", "fe80::1%eth0", NULL, "fe80::1", 0},
		{"::1", "[2001:db8::7", NULL, "::1", 0},
	};
	struct tb_proxies p;
	char out[TB_PROXY_ADDR_MAX];

	(void)state;
	assert_int_equal(tb_proxy_parse("127.0.0.1, ::1,10.0.0.0/8 ,2001:db8:ff::/48", &p, NULL), 0);
	assert_int_equal(p.n, 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int https = -1;

		tb_proxy_client(&p, cases[i].peer, cases[i].xff, cases[i].xfp, out, sizeof(out), &https);
		if (strcmp(out, cases[i].client) != 0 || https != cases[i].https)
			fail_msg("case %zu: peer %s xff \"%s\" xfp \"%s\": got %s https %d, want %s https %d", i,
				 cases[i].peer, cases[i].xff ? cases[i].xff : "(none)",
				 cases[i].xfp ? cases[i].xfp : "(none)", out, https, cases[i].client, cases[i].https);
	}
}

static void test_no_trusted_proxy(void **state)
{
	struct tb_proxies p;
	char out[TB_PROXY_ADDR_MAX];
	int https = -1;

	(void)state;
	assert_int_equal(tb_proxy_parse(NULL, &p, NULL), 0);
	assert_int_equal(p.n, 0);
	tb_proxy_client(&p, "127.0.0.1", "203.0.113.5", "https", out, sizeof(out), &https);
	assert_string_equal(out, "127.0.0.1");
	assert_int_equal(https, 0);
}

static void test_parse(void **state)
{
	static const char *const bad[] = {"localhost",  "127.0.0.1/33", "::1/129",    "10.0.0.0/",
					  "10.0.0.0/x", "1.2.3.4.5",    "10.0.0.0/-1"};
	struct tb_proxies p;
	struct tb_error e = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		if (tb_proxy_parse(bad[i], &p, &e) != TB_ERR_CONFIG)
			fail_msg("\"%s\" was taken", bad[i]);
		assert_string_equal(e.field, "--trusted-proxy");
	}
	assert_int_equal(tb_proxy_parse("0.0.0.0/0", &p, NULL), 0);
	assert_int_equal(tb_proxy_trusted(&p, "198.51.100.1"), 1);
	assert_int_equal(tb_proxy_trusted(&p, "::1"), 0);
	assert_int_equal(tb_proxy_parse("192.0.2.0/25", &p, NULL), 0);
	assert_int_equal(tb_proxy_trusted(&p, "192.0.2.127"), 1);
	assert_int_equal(tb_proxy_trusted(&p, "192.0.2.128"), 0);
	assert_int_equal(tb_proxy_parse("", &p, NULL), 0);
	assert_int_equal(p.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_table),
		cmocka_unit_test(test_no_trusted_proxy),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
