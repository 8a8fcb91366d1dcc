/*
 * test_iperf2_parse.c - iperf 2.1.8's -e text (server/iperf2_parse.c) on
 * captured output (tests/data/iperf2/, see its README): sides from the column
 * headers, summaries, the UDP Server Report, -P 2 with [SUM], -R, the refused
 * connection that exits 0 (classed "refused" by the driver), chunking, and
 * garbage; and the command lines (server given the client's -l, 1000-based
 * -b in plain bits/s, what iperf2 refuses).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include <cmocka.h>

#include "datafile.h"
#include "iperf2.h"
#include "traffic.h"

struct got {
	int n;
};

static void on_interval(void *cls, json_t *iv)
{
	((struct got *)cls)->n++;
	json_decref(iv);
}

static json_t *parse_chunked(const char *name, int parallel, size_t chunk, int *live)
{
	char dir[1024];
	size_t len;
	char *s;
	struct got g = {0};
	struct tb_iperf2_text *t;
	json_t *r = NULL;

	tb_test_data_dir("iperf2", dir, sizeof(dir));
	s = tb_test_read_file(dir, name, &len);
	assert_non_null(s);
	t = tb_iperf2_text_new(parallel, 1, on_interval, &g);
	assert_non_null(t);
	for (size_t i = 0; i < len; i += chunk)
		tb_iperf2_text_feed(t, s + i, len - i < chunk ? len - i : chunk);
	assert_int_equal(tb_iperf2_text_finish(t, &r, NULL), 0);
	free(s);
	if (live != NULL)
		*live = g.n;
	return r;
}

static json_t *parse(const char *name, int parallel)
{
	return parse_chunked(name, parallel, 1 << 20, NULL);
}

static double num(const json_t *o, const char *path)
{
	char buf[128], *save = NULL;
	const json_t *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k != NULL; k = strtok_r(NULL, ".", &save))
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(k)) : json_object_get(v, k);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static bool near(double a, double b)
{
	return fabs(a - b) <= fabs(b) * 1e-9 + 1e-9;
}

static void tcp_client(void **state)
{
	int live = 0;
	json_t *r = parse_chunked("iperf2_2.1.8_tcp_client_e.txt", 1, 1 << 20, &live);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 3);
	assert_int_equal(live, 3);
	assert_true(near(num(r, "intervals.0.sum.bits_per_second"), 23.1e9));
	assert_true(near(num(r, "intervals.0.sum.bytes"), 2.69 * 1073741824.0));
	assert_true(json_is_true(
		json_object_get(json_object_get(json_array_get(json_object_get(r, "intervals"), 0), "sum"), "sender")));
	assert_int_equal((int)num(r, "intervals.1.sum.retransmits"), 2);
	assert_int_equal((int)num(r, "intervals.0.streams.0.snd_cwnd"), 767 * 1024);
	assert_int_equal((int)num(r, "intervals.0.streams.0.rtt_us"), 47);
	assert_true(near(num(r, "end.sender.bits_per_second"), 22.8e9));
	assert_int_equal((int)num(r, "end.sender.retransmits"), 38);
	assert_true(near(num(r, "end.sender.seconds"), 3.0164));
	assert_null(json_object_get(json_object_get(r, "end"), "receiver"));
	assert_true(json_is_null(json_object_get(r, "error")));
	assert_int_equal((int)num(r, "connected"), 1);
	json_decref(r);
}

/* A server without -i prints only the summary of each connection: the first
 * is the end (the later connections are other runs of the capture). */
static void tcp_server_summary_only(void **state)
{
	json_t *r = parse("iperf2_2.1.8_tcp_server_e.txt", 1);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 0);
	assert_true(near(num(r, "end.receiver.bits_per_second"), 22.9e9));
	assert_true(near(num(r, "end.receiver.bytes"), 8.01 * 1073741824.0));
	json_decref(r);
}

static void tb_tcp_both_sides(void **state)
{
	json_t *c = parse("iperf2_2.1.8_tb_tcp_client.txt", 1), *s = parse("iperf2_2.1.8_tb_tcp_server.txt", 1);
	const json_t *sum0;

	(void)state;
	assert_int_equal(json_array_size(json_object_get(s, "intervals")), 2);
	sum0 = json_object_get(json_array_get(json_object_get(s, "intervals"), 0), "sum");
	assert_true(json_is_false(json_object_get(sum0, "sender")));
	assert_true(near(num(s, "intervals.0.sum.bits_per_second"), 12.3e9));
	assert_true(near(num(s, "end.receiver.bits_per_second"), 13.8e9));
	assert_non_null(json_object_get(json_object_get(c, "end"), "sender"));
	json_decref(c);
	json_decref(s);
}

/* -R: the client receives ("[ *1]", Reads=Dist), the server sends (Rtry). */
static void tb_tcp_reverse(void **state)
{
	json_t *c = parse("iperf2_2.1.8_tb_tcp_R_client.txt", 1), *s = parse("iperf2_2.1.8_tb_tcp_R_server.txt", 1);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(c, "intervals")), 2);
	assert_true(near(num(c, "end.receiver.bits_per_second"), 7.95e9));
	assert_null(json_object_get(json_object_get(c, "end"), "sender"));
	assert_true(num(s, "end.sender.retransmits") >= 0);
	assert_null(json_object_get(json_object_get(s, "end"), "receiver"));
	json_decref(c);
	json_decref(s);
}

/* The UDP client's Server Report is the receiver's end: 979/94745 lost. */
static void udp_client_server_report(void **state)
{
	json_t *r = parse("iperf2_2.1.8_udp_client_e_l8500_b2G_w2M.txt", 1);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 3);
	assert_int_equal((int)num(r, "intervals.0.sum.packets"), 31583);
	assert_true(near(num(r, "end.sender.bits_per_second"), 2.15e9));
	assert_true(near(num(r, "end.receiver.bits_per_second"), 367e6));
	assert_int_equal((int)num(r, "end.receiver.lost_packets"), 979);
	assert_int_equal((int)num(r, "end.receiver.packets"), 94745);
	assert_true(near(num(r, "end.receiver.lost_percent"), 100.0 * 979 / 94745));
	assert_true(near(num(r, "end.receiver.jitter_ms"), 0));
	json_decref(r);
}

static void udp_server(void **state)
{
	json_t *r = parse("iperf2_2.1.8_udp_server_e.txt", 1);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 3);
	assert_int_equal((int)num(r, "intervals.0.sum.lost_packets"), 724);
	assert_true(near(num(r, "intervals.0.sum.lost_percent"), 100.0 * 724 / 31542));
	assert_true(near(num(r, "intervals.2.sum.jitter_ms"), 0.001));
	assert_true(near(num(r, "end.receiver.bits_per_second"), 367e6));
	json_decref(r);
}

/* The same run seen from both ends agrees (testbedd's own UDP capture). */
static void tb_udp_both_sides(void **state)
{
	json_t *c = parse("iperf2_2.1.8_tb_udp_client.txt", 1), *s = parse("iperf2_2.1.8_tb_udp_server.txt", 1);

	(void)state;
	assert_true(near(num(c, "end.receiver.bits_per_second"), num(s, "end.receiver.bits_per_second")));
	assert_int_equal((int)num(c, "end.receiver.packets"), (int)num(s, "end.receiver.packets"));
	assert_true(near(num(c, "end.sender.bits_per_second"), 100e6));
	json_decref(c);
	json_decref(s);
}

/* UDP -R: the client's lines are the receiver's (jitter, loss), the server's the sender's. */
static void tb_udp_reverse(void **state)
{
	json_t *c = parse("iperf2_2.1.8_tb_udp_R_client.txt", 1), *s = parse("iperf2_2.1.8_tb_udp_R_server.txt", 1);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(c, "intervals")), 2);
	assert_int_equal((int)num(c, "intervals.1.sum.packets"), 848);
	assert_int_equal((int)num(c, "end.receiver.packets"), 1703);
	assert_int_equal((int)num(c, "end.receiver.lost_packets"), 0);
	assert_true(near(num(c, "end.receiver.bits_per_second"), 10.0e6));
	assert_null(json_object_get(json_object_get(c, "end"), "sender"));
	assert_int_equal((int)num(s, "end.sender.packets"), 1703);
	assert_null(json_object_get(json_object_get(s, "end"), "receiver"));
	assert_true(tb_iperf2_text_done(NULL) == false);
	json_decref(c);
	json_decref(s);
}

static void parallel_sum(void **state)
{
	json_t *r = parse("iperf2_2.1.8_tcp_client_e_P2.txt", 2);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 2);
	assert_int_equal(
		json_array_size(json_object_get(json_array_get(json_object_get(r, "intervals"), 0), "streams")), 2);
	assert_true(near(num(r, "intervals.0.sum.bits_per_second"), 33.9e9));
	assert_int_equal((int)num(r, "intervals.1.sum.retransmits"), 36);
	assert_int_equal((int)num(r, "end.sender.retransmits"), 65);
	assert_true(near(num(r, "end.sender.bits_per_second"), 31.9e9));
	json_decref(r);
}

/* iperf2 exits 0 here: the output says it failed, and the driver says how. */
static void refused(void **state)
{
	json_t *r = parse("iperf2_2.1.8_refused.txt", 1);
	char msg[256];
	bool retry = true;
	const char *k;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(r, "error")), "tcp connect failed: Connection refused");
	assert_true(json_is_null(json_object_get(r, "end")));
	k = tb_traffic_iperf2.error_class(r, msg, sizeof(msg), &retry);
	assert_non_null(k);
	assert_string_equal(k, "refused");
	assert_false(retry);
	assert_non_null(strstr(msg, "Connection refused"));
	json_decref(r);
	r = parse("iperf2_2.1.8_tcp_client_e.txt", 1);
	assert_null(tb_traffic_iperf2.error_class(r, msg, sizeof(msg), &retry));
	json_decref(r);
}

/* Byte by byte gives what one chunk gives. */
static void chunking(void **state)
{
	static const char *const files[] = {"iperf2_2.1.8_tcp_client_e.txt", "iperf2_2.1.8_udp_server_e.txt",
					    "iperf2_2.1.8_udp_client_e_l8500_b2G_w2M.txt"};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		json_t *a = parse_chunked(files[i], 1, 1, NULL), *b = parse(files[i], 1);

		assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
	}
}

static void garbage(void **state)
{
	static const char *const bad[] = {"[",
					  "[  1]",
					  "[  1] 0.0-",
					  "[  1] x-y sec 1 Bytes 2 bits/sec",
					  "[ 99999999999] 0.0-1.0 sec 1 KBytes 1 bits/sec",
					  "[ ID] Interval Jitter\n[  1] 0.0-1.0 sec 1 KBytes 8 Kbits/sec 0.1 ms /",
					  "\n\n\x01\xff[SUM]]]"};
	unsigned int seed = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_iperf2_text *t = tb_iperf2_text_new(1, 1, NULL, NULL);
		json_t *r = NULL;

		tb_iperf2_text_feed(t, bad[i], strlen(bad[i]));
		assert_int_equal(tb_iperf2_text_finish(t, &r, NULL), 0);
		json_decref(r);
	}
	for (int round = 0; round < 200; round++) {
		struct tb_iperf2_text *t = tb_iperf2_text_new(2, 1, NULL, NULL);
		char buf[600];
		json_t *r = NULL;

		for (size_t i = 0; i < sizeof(buf); i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = "[] 0.-1sec KMGBytesbits/ms()%*SUMID\n"[(seed >> 16) % 37];
		}
		tb_iperf2_text_feed(t, buf, sizeof(buf));
		assert_int_equal(tb_iperf2_text_finish(t, &r, NULL), 0);
		json_decref(r);
	}
}

static char *joined(const struct tb_argv *a)
{
	static char buf[512];
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->n; i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? " " : "", a->v[i]);
	return buf;
}

static void command_lines(void **state)
{
	struct tb_iperf_params p = {.proto = TB_IPERF_UDP,
				    .duration_s = 10,
				    .parallel = 1,
				    .tos = -1,
				    .interval_s = 1,
				    .tool = TB_TOOL_IPERF2};
	struct tb_argv a;
	struct tb_error e = {0};

	(void)state;
	snprintf(p.bitrate, sizeof(p.bitrate), "100M");
	assert_int_equal(tb_iperf2_server_argv(&p, 5201, &a, &e), 0);
	assert_string_equal(joined(&a), "iperf -s -u -l 1470 -i 1 -e -p 5201");
	assert_int_equal(tb_iperf2_client_argv("198.19.20.2", 5201, &p, &a, &e), 0);
	assert_string_equal(joined(&a), "iperf -c 198.19.20.2 -p 5201 -t 10 -i 1 -e -u -b 100000000 -l 1470");
	p.length = 8500;
	p.window = 2097152;
	assert_int_equal(tb_iperf2_server_argv(&p, 5201, &a, &e), 0);
	assert_string_equal(joined(&a), "iperf -s -u -l 8500 -w 2097152 -i 1 -e -p 5201");
	snprintf(p.bitrate, sizeof(p.bitrate), "0");
	assert_int_equal(tb_iperf2_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t 10 -i 1 -e -u -b 100000000000 -l 8500 -w 2097152");
	p.proto = TB_IPERF_TCP;
	p.dir = TB_IPERF_REVERSE;
	p.length = 0;
	p.window = 0;
	p.bitrate[0] = '\0';
	assert_int_equal(tb_iperf2_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t 10 -i 1 -e -R");
	assert_int_equal(tb_iperf2_server_argv(&p, 5201, &a, &e), 0);
	assert_string_equal(joined(&a), "iperf -s -i 1 -e -p 5201");
	p.dir = TB_IPERF_BIDIR;
	assert_int_equal(tb_iperf2_params_args(&p, &a, &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "direction");
	p.dir = TB_IPERF_FORWARD;
	p.omit_s = 2;
	assert_int_equal(tb_iperf2_params_args(&p, &a, &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "omit_s");
}

static void versions(void **state)
{
	char v[32];

	(void)state;
	assert_int_equal(tb_iperf2_version_parse("iperf version 2.1.8 (12 August 2022) pthreads\n", v, sizeof(v), NULL),
			 0);
	assert_string_equal(v, "2.1.8");
	assert_int_equal(tb_iperf2_version_parse("sh: 1: iperf: not found\n", v, sizeof(v), NULL), TB_ERR_INVALID);
	assert_int_equal(tb_iperf2_version_parse("iperf 3.12 (cJSON 1.7.15)\n", v, sizeof(v), NULL), TB_ERR_INVALID);
	assert_int_equal(tb_tool_parse("iperf2"), TB_TOOL_IPERF2);
	assert_int_equal(tb_tool_parse("iperf3"), TB_TOOL_IPERF3);
	assert_int_equal(tb_tool_parse("netperf"), TB_TOOL_NETPERF);
	assert_int_equal(tb_tool_parse("netperf3"), -1);
	assert_string_equal(tb_tool_name(TB_TOOL_IPERF2), "iperf2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp_client),
		cmocka_unit_test(tcp_server_summary_only),
		cmocka_unit_test(tb_tcp_both_sides),
		cmocka_unit_test(tb_tcp_reverse),
		cmocka_unit_test(udp_client_server_report),
		cmocka_unit_test(udp_server),
		cmocka_unit_test(tb_udp_both_sides),
		cmocka_unit_test(tb_udp_reverse),
		cmocka_unit_test(parallel_sum),
		cmocka_unit_test(refused),
		cmocka_unit_test(chunking),
		cmocka_unit_test(garbage),
		cmocka_unit_test(command_lines),
		cmocka_unit_test(versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
