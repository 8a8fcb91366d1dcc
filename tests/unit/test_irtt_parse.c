/*
 * test_irtt_parse.c - the latency stream's parser (server/irtt_parse.c) on
 * captured output (tests/data/irtt/, see its README): irtt 0.9.0's per-packet
 * lines checked against the JSON of the same run, ping's lines, binning by
 * sequence number, loss from the gaps (constructed lines: the lines are the
 * captured format with packets left out), and the phase summary.
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
#include "irtt_parse.h"

struct got {
	json_t *bins;
};

static void on_bin(void *cls, json_t *bin)
{
	json_array_append_new(((struct got *)cls)->bins, bin);
}

static char *data(const char *name)
{
	char dir[1024];
	char *s;

	tb_test_data_dir("irtt", dir, sizeof(dir));
	s = tb_test_read_file(dir, name, NULL);
	assert_non_null(s);
	return s;
}

static void go_durations(void **state)
{
	double ms;

	(void)state;
	assert_int_equal(tb_rtt_go_duration_ms("1.73ms", 6, &ms), 0);
	assert_true(fabs(ms - 1.73) < 1e-9);
	assert_int_equal(tb_rtt_go_duration_ms("76\xc2\xb5s", 5, &ms), 0);
	assert_true(fabs(ms - 0.076) < 1e-9);
	assert_int_equal(tb_rtt_go_duration_ms("30ns", 4, &ms), 0);
	assert_true(fabs(ms - 0.00003) < 1e-12);
	assert_int_equal(tb_rtt_go_duration_ms("1.2s", 4, &ms), 0);
	assert_true(fabs(ms - 1200) < 1e-9);
	assert_int_equal(tb_rtt_go_duration_ms("1m2.5s", 6, &ms), 0);
	assert_true(fabs(ms - 62500) < 1e-9);
	assert_int_equal(tb_rtt_go_duration_ms("n/a", 3, &ms), -1);
	assert_int_equal(tb_rtt_go_duration_ms("12", 2, &ms), -1);
	assert_int_equal(tb_rtt_go_duration_ms("12xs", 4, &ms), -1);
	assert_int_equal(tb_rtt_go_duration_ms("", 0, &ms), -1);
}

/* Every seq= line of the capture is read, and its RTT is the JSON's
 * delay.rtt of that packet to the 3 significant digits irtt prints. */
static void irtt_capture_matches_json(void **state)
{
	char *text = data("client_0.9.0.txt"), *js = data("client_0.9.0.json");
	json_t *doc = json_loads(js, 0, NULL), *rts = json_object_get(doc, "round_trips");
	char *line = text, *nl;
	size_t checked = 0;

	(void)state;
	assert_int_equal(json_array_size(rts), 20);
	for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		long seq;
		double ms, want;

		*nl = '\0';
		if (!tb_rtt_parse_line(TB_RTT_IRTT, line, &seq, &ms))
			continue;
		assert_true(seq >= 0 && (size_t)seq < json_array_size(rts));
		want = (double)json_integer_value(
			       json_object_get(json_object_get(json_array_get(rts, (size_t)seq), "delay"), "rtt")) /
		       1e6;
		assert_true(fabs(ms - want) <= want * 0.006);
		checked++;
	}
	assert_int_equal(checked, 20);
	/* the header and summary lines are not packets */
	{
		long seq;
		double ms;

		assert_int_equal(
			tb_rtt_parse_line(TB_RTT_IRTT, "[Connecting] connecting to 127.0.0.1:29112", &seq, &ms), 0);
		assert_int_equal(tb_rtt_parse_line(TB_RTT_IRTT, "                RTT   153µs  867µs", &seq, &ms), 0);
		assert_int_equal(
			tb_rtt_parse_line(TB_RTT_IRTT, "   packets sent/received: 10/10 (0.00% loss)", &seq, &ms), 0);
	}
	json_decref(doc);
	free(text);
	free(js);
}

/* The capture fed in pieces of 7 bytes: 2 bins of 10 packets, none lost,
 * their median the JSON's packets' median. */
static void irtt_capture_binned(void **state)
{
	char *text = data("client_0.9.0.txt");
	struct got g = {json_array()};
	struct tb_rtt_reader *rd = tb_rtt_reader_new(TB_RTT_IRTT, 0.1, 1.0, on_bin, &g);
	size_t len = strlen(text);
	json_t *b0, *b1, *sum;

	(void)state;
	for (size_t i = 0; i < len; i += 7)
		tb_rtt_feed(rd, text + i, len - i < 7 ? len - i : 7);
	assert_int_equal(json_array_size(g.bins), 1); /* the second is open until the end */
	tb_rtt_finish(rd);
	assert_int_equal(json_array_size(g.bins), 2);
	assert_int_equal(tb_rtt_received(rd), 20);
	b0 = json_array_get(g.bins, 0);
	b1 = json_array_get(g.bins, 1);
	assert_true(fabs(json_number_value(json_object_get(b0, "t"))) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(b1, "t")) - 1.0) < 1e-9);
	assert_int_equal(json_integer_value(json_object_get(b0, "n")), 10);
	assert_int_equal(json_integer_value(json_object_get(b0, "lost")), 0);
	assert_int_equal(json_integer_value(json_object_get(b1, "lost")), 0);
	/* seq 0-9: 0.123 1.73 0.369 0.209 0.094 0.187 0.255 0.139 0.156 0.287 */
	assert_true(fabs(json_number_value(json_object_get(b0, "min")) - 0.094) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(b0, "max")) - 1.73) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(b0, "median")) - (0.187 + 0.209) / 2) < 1e-9);
	sum = tb_rtt_phase_summary(g.bins);
	assert_int_equal(json_integer_value(json_object_get(sum, "n")), 20);
	assert_int_equal(json_integer_value(json_object_get(sum, "lost")), 0);
	/* p95 of 20 (nearest rank: the 19th) is the second largest, 0.369 */
	assert_true(fabs(json_number_value(json_object_get(sum, "p95")) - 0.369) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(sum, "max")) - 1.73) < 1e-9);
	json_decref(sum);
	tb_rtt_reader_free(rd);
	json_decref(g.bins);
	free(text);
}

/* Packets left out of the captured format: lost in their bin, a bin with
 * none back still goes out (empty), and a late packet is dropped. */
static void irtt_gaps_are_lost(void **state)
{
	struct got g = {json_array()};
	struct tb_rtt_reader *rd = tb_rtt_reader_new(TB_RTT_IRTT, 0.1, 0.5, on_bin, &g);
	const char *lines = "seq=0 rtt=1ms rd=1ms sd=1ms ipdv=n/a\n"
			    "seq=3 rtt=3ms rd=1ms sd=1ms ipdv=1ms\n"
			    "seq=12 rtt=40ms rd=1ms sd=1ms ipdv=1ms\n"
			    "seq=4 rtt=2ms rd=1ms sd=1ms ipdv=1ms\n"
			    "seq=13 rtt=50ms rd=1ms sd=1ms ipdv=1ms";

	(void)state;
	tb_rtt_feed(rd, lines, strlen(lines));
	tb_rtt_finish(rd);
	assert_int_equal(json_array_size(g.bins), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 0), "n")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 0), "lost")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 1), "n")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 1), "lost")), 5);
	assert_true(json_is_null(json_object_get(json_array_get(g.bins, 1), "median")));
	/* the last bin: seq 10-13 sent as far as seen, 12 and 13 back */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 2), "n")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g.bins, 2), "lost")), 2);
	assert_true(fabs(json_number_value(json_object_get(json_array_get(g.bins, 2), "median")) - 45) < 1e-9);
	tb_rtt_reader_free(rd);
	json_decref(g.bins);
}

/* iputils ping: icmp_seq from 1, time= in ms. */
static void ping_capture(void **state)
{
	char *text = data("ping_iputils.txt");
	struct got g = {json_array()};
	struct tb_rtt_reader *rd = tb_rtt_reader_new(TB_RTT_PING, 0.2, 1.0, on_bin, &g);
	json_t *b;
	long seq;
	double ms;

	(void)state;
	tb_rtt_feed(rd, text, strlen(text));
	tb_rtt_finish(rd);
	assert_int_equal(json_array_size(g.bins), 1);
	b = json_array_get(g.bins, 0);
	assert_int_equal(json_integer_value(json_object_get(b, "n")), 5);
	assert_int_equal(json_integer_value(json_object_get(b, "lost")), 0);
	assert_true(fabs(json_number_value(json_object_get(b, "min")) - 0.030) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(b, "max")) - 0.045) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(b, "median")) - 0.041) < 1e-9);
	/* FreeBSD's form (icmp_seq from 0) parses the same */
	assert_int_equal(
		tb_rtt_parse_line(TB_RTT_PING, "64 bytes from 198.18.0.2: icmp_seq=0 ttl=64 time=0.081 ms", &seq, &ms),
		1);
	assert_int_equal(seq, 0);
	assert_int_equal(tb_rtt_parse_line(TB_RTT_PING, "rtt min/avg/max/mdev = 0.030/0.039/0.045/0.005 ms", &seq, &ms),
			 0);
	tb_rtt_reader_free(rd);
	json_decref(g.bins);
	free(text);
}

static void empty_summary(void **state)
{
	json_t *bins = json_array(), *s;

	(void)state;
	s = tb_rtt_phase_summary(bins);
	assert_int_equal(json_integer_value(json_object_get(s, "n")), 0);
	assert_true(json_is_null(json_object_get(s, "median")));
	json_decref(s);
	json_decref(bins);
	assert_null(tb_rtt_reader_new(TB_RTT_IRTT, 0, 1, on_bin, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(go_durations),        cmocka_unit_test(irtt_capture_matches_json),
		cmocka_unit_test(irtt_capture_binned), cmocka_unit_test(irtt_gaps_are_lost),
		cmocka_unit_test(ping_capture),        cmocka_unit_test(empty_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
