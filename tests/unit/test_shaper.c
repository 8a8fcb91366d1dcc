/*
 * test_shaper.c - link profiles as dummynet and tc commands and the checks
 * of what a router reads back (shaper.c, issue 20 item 4).  The tbf lines
 * are what iproute2 6.1's `tc qdisc show` printed on this machine for the
 * commands built here; the netem lines are built from tc-netem(8)'s
 * documented output (this machine's kernel has no netem: said so here), the
 * ipfw text is dummynet's (hostmeta_shape.c's format notes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hostmeta.h"
#include "shaper.h"

static void joined(const struct tb_argv *a, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < a->n && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", a->v[i]);
}

static void test_ipfw_argv(void **state)
{
	const struct tb_shape geo = {.bps = 50e6, .loss = 0.5, .delay_ms = 300, .queue = 20};
	const struct tb_shape none = {.none = true};
	struct tb_argv a;
	char line[256];

	(void)state;
	assert_int_equal(tb_shape_ipfw_argv(&geo, &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(line, "ipfw -q pipe 1 config bw 50000000bit/s delay 300 plr 0.005000 queue 20");
	assert_int_equal(tb_shape_ipfw_argv(&none, &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(line, "ipfw -q pipe 1 delete");
}

static void test_tc_argv(void **state)
{
	const struct tb_shape rate = {.bps = 20e6}, big = {.bps = 1e9, .queue = 10};
	const struct tb_shape geo = {.bps = 50e6, .loss = 0.5, .delay_ms = 300, .queue = 20};
	const struct tb_shape empty = {.bps = 0}, none = {.none = true};
	struct tb_argv a;
	char line[256];

	(void)state;
	assert_int_equal(tb_shape_tc_argv(&rate, "ix0", &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(line,
			    "tc qdisc replace dev ix0 root handle 1: tbf rate 20000000bit burst 32768 limit 108468");
	/* burst: a hundredth of a second at the rate; limit: 10 frames beyond it */
	assert_int_equal(tb_shape_tc_argv(&big, "eth1", &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(
		line, "tc qdisc replace dev eth1 root handle 1: tbf rate 1000000000bit burst 1250000 limit 1265140");
	assert_int_equal(tb_shape_tc_argv(&geo, "ix1", &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(
		line, "tc qdisc replace dev ix1 root handle 1: netem delay 300ms loss 0.5% rate 50000000bit limit 20");
	assert_true(tb_shape_tc_empty(&empty));
	assert_false(tb_shape_tc_empty(&rate));
	assert_int_equal(tb_shape_tc_argv(&none, "ix0", &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(line, "tc qdisc del dev ix0 root");
	assert_int_equal(tb_shape_tc_argv(&empty, "ix0", &a), 0);
	joined(&a, line, sizeof(line));
	assert_string_equal(line, "tc qdisc del dev ix0 root");
}

/* `tc qdisc show` as read back, through hostmeta's parser. */
static int tc_check(const struct tb_shape *s, const char *text, char *msg, size_t len)
{
	json_t *all = tb_hostmeta_tc_qdisc(text);
	int rc = tb_shape_tc_check(s, "ix0", json_object_get(all, "ix0 root"), msg, len);

	json_decref(all);
	return rc;
}

static void test_tc_check(void **state)
{
	const struct tb_shape rate = {.bps = 20e6}, odd = {.bps = 123456789}, none = {.none = true};
	const struct tb_shape geo = {.bps = 50e6, .loss = 0.5, .delay_ms = 300};
	const char *tbf20 = "qdisc noqueue 0: dev lo root refcnt 2 \n"
			    "qdisc tbf 1: dev ix0 root refcnt 3 rate 20Mbit burst 32Kb lat 30.3ms \n";
	const char *tbf_odd = "qdisc tbf 1: dev ix0 root refcnt 3 rate 123456Kbit burst 1543194b lat 4.91ms \n";
	const char *tbf30 = "qdisc tbf 1: dev ix0 root refcnt 3 rate 30Mbit burst 32Kb lat 30.3ms \n";
	const char *netem = "qdisc netem 1: dev ix0 root refcnt 3 limit 1000 delay 300ms loss 0.5% rate 50Mbit\n";
	const char *bare = "qdisc noqueue 0: dev ix0 root refcnt 2 \n";
	char msg[400] = "";

	(void)state;
	assert_int_equal(tc_check(&rate, tbf20, msg, sizeof(msg)), 0);
	assert_int_equal(tc_check(&odd, tbf_odd, msg, sizeof(msg)), 0); /* tc prints whole Kbit */
	assert_int_equal(tc_check(&rate, tbf30, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "rate 30000000 bit/s"));
	assert_int_equal(tc_check(&rate, bare, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "no root qdisc on ix0 where a tbf was set"));
	assert_int_equal(tc_check(&geo, netem, msg, sizeof(msg)), 0);
	assert_int_equal(tc_check(&rate, netem, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "a root qdisc netem on ix0 where a tbf was set"));
	assert_int_equal(tc_check(&none, bare, msg, sizeof(msg)), 0);
	assert_int_equal(tc_check(&none, tbf20, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "still lists a tbf root qdisc on ix0"));
}

static void test_ipfw_check(void **state)
{
	const struct tb_shape geo = {.bps = 50e6, .loss = 2, .delay_ms = 300}, none = {.none = true};
	const char *shown =
		"00001:  50.000 Mbit/s  300 ms burst 0\n"
		"q131073  50 sl.plr 0.020000 0 flows (1 buckets) sched 65537 weight 0 lmax 0 pri 0 droptail\n"
		" sched 65537 type FIFO flags 0x0 0 buckets 0 active\n";
	const char *nodelay =
		"00001:  50.000 Mbit/s    0 ms burst 0\n"
		"q131073  50 sl.plr 0.020000 0 flows (1 buckets) sched 65537 weight 0 lmax 0 pri 0 droptail\n";
	json_t *a = tb_hostmeta_ipfw_pipes(shown), *b = tb_hostmeta_ipfw_pipes(nodelay);
	char msg[400] = "";

	(void)state;
	assert_int_equal(tb_shape_ipfw_check(&geo, json_object_get(a, "1"), msg, sizeof(msg)), 0);
	assert_int_equal(tb_shape_ipfw_check(&geo, json_object_get(b, "1"), msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "delay 0 ms"));
	assert_int_equal(tb_shape_ipfw_check(&geo, NULL, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "no pipe 1"));
	assert_int_equal(tb_shape_ipfw_check(&none, NULL, msg, sizeof(msg)), 0);
	assert_int_equal(tb_shape_ipfw_check(&none, json_object_get(a, "1"), msg, sizeof(msg)), -1);
	json_decref(a);
	json_decref(b);
}

/* `ipfw list`: a rule whose action is pipe 1, not a pipe named in a body. */
static void test_ipfw_ruled(void **state)
{
	(void)state;
	assert_true(tb_shape_ipfw_ruled("00100 allow ip from any to any via lo0\n"
					"00200 pipe 1 ip from any to any out xmit ix1\n"
					"65535 allow ip from any to any\n"));
	assert_true(tb_shape_ipfw_ruled("00300 prob 0.5 pipe 1 ip from 10.0.0.0/8 to any\n"));
	assert_false(tb_shape_ipfw_ruled("00200 pipe 2 ip from any to any\n65535 allow ip from any to any\n"));
	assert_false(tb_shape_ipfw_ruled("00200 allow ip from any to any pipe 1\n"));
	assert_false(tb_shape_ipfw_ruled("65535 allow ip from any to any\n"));
	assert_false(tb_shape_ipfw_ruled(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipfw_argv),  cmocka_unit_test(test_tc_argv),    cmocka_unit_test(test_tc_check),
		cmocka_unit_test(test_ipfw_check), cmocka_unit_test(test_ipfw_ruled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
