/*
 * test_netperf.c - netperf as a traffic tool (issue 20 item 6): its version,
 * the command lines (netserver, netperf with the omni selectors and the
 * options iperf's params map to), the parser of the omni output into the
 * normalised ends, the driver, and the spec's refusals.
 *
 * netperf is not packaged in Debian 12, so no real netperf runs here: the
 * outputs below are built from netperf 2.7.0's documented omni format
 * (`-P 0 -- -o SELECTORS`: one line of the selectors' values, comma
 * separated; -1 for what it could not measure; DIRECTION "Send" or
 * "Receive"), not captured.  A real capture should replace them when a host
 * with netperf is at hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mxfix.h"
#include "netperf.h"
#include "traffic.h"

static const char *joined(const struct tb_argv *a)
{
	static char buf[1024];
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->n; i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? " " : "", a->v[i]);
	return buf;
}

static struct tb_iperf_params params(enum tb_iperf_proto proto, enum tb_iperf_dir dir)
{
	return (struct tb_iperf_params){.proto = proto,
					.dir = dir,
					.duration_s = 10,
					.parallel = 1,
					.tos = -1,
					.interval_s = 1,
					.tool = TB_TOOL_NETPERF};
}

static void test_version(void **state)
{
	char v[32];
	struct tb_error e = {0};

	(void)state;
	assert_int_equal(tb_netperf_version_parse("Netperf version 2.7.0\n", v, sizeof(v), &e), 0);
	assert_string_equal(v, "2.7.0");
	assert_int_equal(tb_netperf_version_parse("sh: 1: netperf: not found\n", v, sizeof(v), &e), TB_ERR_INVALID);
}

static void test_command_lines(void **state)
{
	struct tb_iperf_params p = params(TB_IPERF_TCP, TB_IPERF_FORWARD);
	struct tb_argv a;
	struct tb_error e = {0};

	(void)state;
	assert_int_equal(tb_netperf_server_argv(&p, 5201, &a, &e), 0);
	assert_string_equal(joined(&a), "netserver -D -p 5201");
	assert_int_equal(tb_netperf_client_argv("198.19.20.2", 5201, &p, &a, &e), 0);
	assert_string_equal(joined(&a),
			    "netperf -H 198.19.20.2 -p 5201 -t TCP_STREAM -l 10 -f k -P 0 -- -o " TB_NETPERF_SELECTORS);
	/* window both ends, tos both ends, congestion, affinity as -T */
	p.window = 2097152;
	p.tos = 16;
	p.length = 131072;
	snprintf(p.congestion, sizeof(p.congestion), "bbr");
	snprintf(p.affinity, sizeof(p.affinity), "1,2");
	assert_int_equal(tb_netperf_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t TCP_STREAM -l 10 -f k -P 0 -T 1,2 -- -o " TB_NETPERF_SELECTORS
					" -m 131072 -s 2097152 -S 2097152 -Y 16,16 -K bbr");
	snprintf(p.affinity, sizeof(p.affinity), "3");
	p.window = 0;
	p.tos = -1;
	p.length = 0;
	p.congestion[0] = '\0';
	p.dir = TB_IPERF_REVERSE;
	p.family = 6;
	assert_int_equal(tb_netperf_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t TCP_MAERTS -l 10 -f k -P 0 -6 -T 3,3 -- -o " TB_NETPERF_SELECTORS);
	assert_int_equal(tb_netperf_server_argv(&p, 5201, &a, &e), 0);
	assert_string_equal(joined(&a), "netserver -D -p 5201 -6");
	/* UDP: a datagram size always (1470 unset), as fast as it can */
	p = params(TB_IPERF_UDP, TB_IPERF_FORWARD);
	snprintf(p.bitrate, sizeof(p.bitrate), "0");
	assert_int_equal(tb_netperf_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t UDP_STREAM -l 10 -f k -P 0 -- -o " TB_NETPERF_SELECTORS " -m 1470");
}

static void test_refused(void **state)
{
	static const struct {
		enum tb_iperf_proto proto;
		enum tb_iperf_dir dir;
		int parallel, omit, zerocopy;
		const char *bitrate, *field;
	} cases[] = {
		{TB_IPERF_TCP, TB_IPERF_BIDIR, 1, 0, 0, "", "direction"},
		{TB_IPERF_UDP, TB_IPERF_REVERSE, 1, 0, 0, "", "direction"},
		{TB_IPERF_TCP, TB_IPERF_FORWARD, 4, 0, 0, "", "parallel"},
		{TB_IPERF_TCP, TB_IPERF_FORWARD, 1, 2, 0, "", "omit_s"},
		{TB_IPERF_TCP, TB_IPERF_FORWARD, 1, 0, 1, "", "zerocopy"},
		{TB_IPERF_UDP, TB_IPERF_FORWARD, 1, 0, 0, "100M", "bitrate"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_iperf_params p = params(cases[i].proto, cases[i].dir);
		struct tb_argv a;
		struct tb_error e = {0};

		p.parallel = cases[i].parallel;
		p.omit_s = cases[i].omit;
		p.zerocopy = cases[i].zerocopy != 0;
		snprintf(p.bitrate, sizeof(p.bitrate), "%s", cases[i].bitrate);
		assert_int_equal(tb_netperf_params_args(&p, &a, &e), TB_ERR_INVALID);
		assert_string_equal(e.field, cases[i].field);
		assert_int_equal(tb_netperf_server_argv(&p, 5201, &a, &e), TB_ERR_INVALID);
	}
}

static json_t *parse(const char *text)
{
	json_t *r = NULL;
	struct tb_error e = {0};

	assert_int_equal(tb_netperf_parse(text, strlen(text), &r, &e), 0);
	assert_non_null(r);
	return r;
}

static double num(const json_t *r, const char *side, const char *key)
{
	const json_t *v = json_object_get(json_object_get(json_object_get(r, "end"), side), key);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_parse(void **state)
{
	/* TCP_STREAM: the client sent; 1176543210 bytes in 10 s */
	json_t *r = parse("941234.57,10^3bits/s,10.00,TCP,Send,1176543210,17954,0,0,1176543210,143000,12\n");

	(void)state;
	assert_true(json_is_null(json_object_get(r, "error")));
	assert_int_equal(json_integer_value(json_object_get(r, "connected")), 1);
	assert_int_equal(json_array_size(json_object_get(r, "intervals")), 0);
	assert_true(num(r, "sender", "bits_per_second") == 1176543210.0 * 8 / 10);
	assert_true(num(r, "receiver", "bytes") == 1176543210.0);
	assert_true(num(r, "sender", "retransmits") == 12);
	assert_null(json_object_get(json_object_get(json_object_get(r, "end"), "receiver"), "lost_percent"));
	json_decref(r);
	/* TCP_MAERTS: the server sent (REMOTE_BYTES_SENT), the client received;
	 * retransmits are the client's, not the sender's: left out */
	r = parse("Throughput,Throughput Units,Elapsed Time (sec),Protocol,Direction,Local Bytes Sent,"
		  "Local Send Calls,Local Bytes Recvd,Remote Bytes Sent,Remote Bytes Recvd,Remote Recv Calls,"
		  "Local Transport Retransmissions\n"
		  "400000.00,10^3bits/s,5.00,TCP,Receive,0,0,250000000,250000000,0,0,0\n");
	assert_true(num(r, "sender", "bytes") == 250000000.0);
	assert_true(num(r, "receiver", "bits_per_second") == 250000000.0 * 8 / 5);
	assert_null(json_object_get(json_object_get(json_object_get(r, "end"), "sender"), "retransmits"));
	json_decref(r);
	/* UDP_STREAM: 100000 datagrams sent, 98000 received: 2 % lost */
	r = parse("117600.00,10^3bits/s,10.00,UDP,Send,147000000,100000,0,0,144060000,98000,-1\n");
	assert_true(num(r, "receiver", "lost_packets") == 2000);
	assert_true(num(r, "receiver", "lost_percent") == 2.0);
	assert_true(num(r, "sender", "packets") == 100000);
	assert_true(num(r, "receiver", "packets") == 98000);
	assert_null(json_object_get(json_object_get(json_object_get(r, "end"), "sender"), "retransmits"));
	json_decref(r);
	/* no netserver: netperf's complaint, no values line */
	r = parse("establish control: are you sure there is a netserver listening on 198.19.20.2 at port 5201?\n"
		  "establish_control could not establish the control connection from 0.0.0.0 port 0 address family "
		  "AF_UNSPEC to 198.19.20.2 port 5201 address family AF_INET\n");
	assert_true(json_is_null(json_object_get(r, "end")));
	assert_int_equal(json_integer_value(json_object_get(r, "connected")), 0);
	assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "netserver listening"));
	json_decref(r);
	/* a values line cut short is no values line */
	r = parse("941234.57,10^3bits/s,10.00,TCP,Se");
	assert_true(json_is_null(json_object_get(r, "end")));
	json_decref(r);
	r = parse("");
	assert_true(json_is_null(json_object_get(r, "end")));
	json_decref(r);
}

/* The driver: its table line, its parsers (the server's done at once: the
 * client has both ends), its error classes. */
static void test_driver(void **state)
{
	const struct tb_traffic_driver *d = tb_traffic_driver_for(TB_TOOL_NETPERF);
	struct tb_tool_caps caps = {0};
	struct tb_iperf_params p = params(TB_IPERF_TCP, TB_IPERF_FORWARD);
	struct tb_traffic_parser *ps;
	const char *out = "941234.57,10^3bits/s,10.00,TCP,Send,1176543210,17954,0,0,1176543210,143000,0\n";
	char why[200], msg[200];
	struct tb_error e = {0};
	json_t *r = NULL;
	bool retry;

	(void)state;
	assert_non_null(d);
	assert_string_equal(d->name, "netperf");
	assert_int_equal(tb_tool_parse("netperf"), TB_TOOL_NETPERF);
	assert_false(d->available(&caps, why, sizeof(why)));
	assert_non_null(strstr(why, "netperf -V"));
	snprintf(caps.netperf, sizeof(caps.netperf), "2.7.0");
	assert_true(d->available(&caps, why, sizeof(why)));
	assert_string_equal(d->version(&caps), "2.7.0");
	d->listen_check(false, &p, 5201, why, sizeof(why));
	assert_string_equal(why, "ss -Hltn 'sport = :5201' | grep -q .");
	d->listen_check(true, &p, 5201, why, sizeof(why));
	assert_string_equal(why, "sockstat -46 -l -P tcp -p 5201 | grep -q netserver");

	ps = d->parser_new(&caps, &p, false, NULL, NULL);
	assert_true(d->parser_done(ps));
	assert_int_equal(d->parser_finish(ps, "Starting netserver\n", 19, &r, &e), 0);
	assert_true(json_is_null(json_object_get(r, "error")));
	json_decref(r);

	ps = d->parser_new(&caps, &p, true, NULL, NULL);
	assert_false(d->parser_done(ps));
	d->parser_feed(ps, out, strlen(out));
	assert_int_equal(d->parser_finish(ps, out, strlen(out), &r, &e), 0);
	assert_null(d->error_class(r, msg, sizeof(msg), &retry));
	json_decref(r);
	r = json_pack("{s:n, s:s}", "end", "error", "establish control: are you sure there is a netserver listening");
	assert_string_equal(d->error_class(r, msg, sizeof(msg), &retry), "refused");
	assert_false(retry);
	json_decref(r);
	r = json_pack("{s:n, s:n}", "end", "error");
	assert_string_equal(d->error_class(r, msg, sizeof(msg), &retry), "iperf_error");
	assert_non_null(strstr(msg, "no result line"));
	json_decref(r);
}

/* A spec with netperf is refused before anything runs where netperf cannot
 * follow it, naming the tool's field. */
static void test_spec(void **state)
{
	static const struct {
		const char *extra, *field, *says;
	} cases[] = {
		{"'tool':'netperf','iperf':{'parallel':[1,4]}", "tool", "one connection"},
		{"'tool':['iperf3','netperf'],'protocols':['udp'],'directions':['forward','reverse']", "tool[1]",
		 "no reverse UDP"},
		{"'tool':'netperf','protocols':['udp'],'iperf':{'bitrate':'100M'}", "tool", "as fast as it can"},
		{"'tool':'netperf','directions':['bidir']", "tool", "no bidir"},
		{"'tool':'netpref'", "tool", "\"netperf-rr\""},
		{"'tool':['iperf3','netperf-rr'],'directions':['forward','reverse']", "tool[1]", "no reverse"},
		{"'tool':'netperf-rr','iperf':{'parallel':[2]}", "tool", "one connection"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[512];
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};

		snprintf(spec, sizeof(spec), "{'name':'x','pairs':[{'client':'left','server':'right'}],%s}",
			 cases[i].extra);
		assert_int_equal(mx_plan_text(spec, mx_inv_sim, 1, &plan, &err), TB_ERR_INVALID);
		assert_null(plan);
		assert_string_equal(err.field, cases[i].field);
		if (strstr(err.message, cases[i].says) == NULL)
			fail_msg("%s: %s", spec, err.message);
	}
	{ /* tcp forward and reverse plan, each run's command netperf's */
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};

		assert_int_equal(mx_plan_text("{'name':'x','pairs':[{'client':'left','server':'right'}],'tool':"
					      "'netperf','protocols':['tcp'],'directions':['forward','reverse']}",
					      mx_inv_sim, 1, &plan, &err),
				 0);
		tb_matrix_plan_free(plan);
	}
}

/* Request/response (netperf-rr): TCP_RR or UDP_RR forward, -r LEN,LEN, the RR selectors. */
static void test_rr(void **state)
{
	struct tb_iperf_params p = params(TB_IPERF_TCP, TB_IPERF_FORWARD);
	struct tb_error e = {0};
	struct tb_argv a;

	(void)state;
	p.tool = TB_TOOL_NETPERF_RR;
	assert_int_equal(tb_netperf_rr_client_argv("198.19.20.2", 5201, &p, &a, &e), 0);
	assert_string_equal(joined(&a),
			    "netperf -H 198.19.20.2 -p 5201 -t TCP_RR -l 10 -f k -P 0 -- -o " TB_NETPERF_RR_SELECTORS);
	p.proto = TB_IPERF_UDP;
	p.length = 64;
	assert_int_equal(tb_netperf_rr_params_args(&p, &a, &e), 0);
	assert_string_equal(joined(&a), "-t UDP_RR -l 10 -f k -P 0 -- -o " TB_NETPERF_RR_SELECTORS " -r 64,64");
	p.dir = TB_IPERF_REVERSE;
	assert_int_equal(tb_netperf_rr_params_args(&p, &a, &e), TB_ERR_INVALID);
	assert_string_equal(e.field, "direction");
	assert_ptr_equal(tb_traffic_driver_for(TB_TOOL_NETPERF_RR), &tb_traffic_netperf_rr);
	assert_int_equal(tb_tool_parse("netperf-rr"), TB_TOOL_NETPERF_RR);
	assert_string_equal(tb_traffic_netperf_rr.binary, "netperf");
}

/* The RR values line (built from the documented omni format: latencies in
 * microseconds, -1 where netperf measured nothing) into end.rr. */
static void test_rr_parse(void **state)
{
	static const char out[] = "10162.45,Trans/s,10.00,TCP,10162.45,98.21,91,115,180,1,1,101625,101625\n";
	static const char nop99[] = "5000.00,Trans/s,2.00,UDP,5000.00,199.80,190,230,-1,64,64,640000,640000\n";
	static const char refused[] = "establish control: are you sure there is a netserver listening on "
				      "198.19.20.2 at port 12865?\n";
	struct tb_error e = {0};
	json_t *r = NULL;
	const json_t *end, *rr;

	(void)state;
	assert_int_equal(tb_netperf_rr_parse(out, sizeof(out) - 1, &r, &e), 0);
	end = json_object_get(r, "end");
	rr = json_object_get(end, "rr");
	assert_true(json_real_value(json_object_get(rr, "transactions_per_s")) == 10162.45);
	assert_true(json_real_value(json_object_get(rr, "mean_latency_us")) == 98.21);
	assert_true(json_real_value(json_object_get(rr, "p50_latency_us")) == 91);
	assert_true(json_real_value(json_object_get(rr, "p90_latency_us")) == 115);
	assert_true(json_real_value(json_object_get(rr, "p99_latency_us")) == 180);
	assert_true(json_real_value(json_object_get(rr, "request_bytes")) == 1);
	assert_true(json_number_value(json_object_get(json_object_get(end, "sender"), "bytes")) == 101625);
	assert_true(json_number_value(json_object_get(json_object_get(end, "receiver"), "bits_per_second")) ==
		    101625 * 8 / 10.0);
	assert_int_equal(json_integer_value(json_object_get(r, "connected")), 1);
	json_decref(r);
	assert_int_equal(tb_netperf_rr_parse(nop99, sizeof(nop99) - 1, &r, &e), 0);
	assert_true(json_is_null(json_object_get(json_object_get(json_object_get(r, "end"), "rr"), "p99_latency_us")));
	json_decref(r);
	/* a stream test's line is no RR line, and netserver's absence is the error */
	assert_int_equal(tb_netperf_rr_parse(refused, sizeof(refused) - 1, &r, &e), 0);
	assert_true(json_is_null(json_object_get(r, "end")));
	assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "netserver listening"));
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version), cmocka_unit_test(test_command_lines), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_parse),   cmocka_unit_test(test_driver),        cmocka_unit_test(test_spec),
		cmocka_unit_test(test_rr),      cmocka_unit_test(test_rr_parse),
	};

	return cmocka_run_group_tests(tests, mx_setup, mx_teardown);
}
