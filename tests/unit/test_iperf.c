/*
 * test_iperf.c - iperf.h against iperf3's real output.
 *
 * Every file in tests/data/iperf3/ (captured from iperf 3.12 and 3.21, see
 * its README.md) is a line of the table below: the parser it goes through
 * and facts read from the file, written as "path=value" over the parsed
 * result ("end.receiver.bits_per_second=27388335545.781689",
 * "intervals#=3" for a list's length, "3.33 GBytes" for a text value, so a
 * fact reads like the line it comes from).  A file in the directory that
 * the table lacks fails the test.  Then: chunked feeding (1 byte, random
 * sizes) gives what one feed gives, intervals arrive as soon as their last
 * line does, truncation at byte offsets and deterministic garbage never
 * crash and give a result or TB_ERR_INVALID (run under ASan in CI), and
 * tables of versions, command lines and error texts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <math.h>

#include <cmocka.h>

#include "jsonpath.h"
#include "datafile.h"

#include "iperf.h"

/* ---- the data ---- */

enum parser { P_JSON, P_STREAM, P_TEXT, P_VERSION, P_CODES, P_README };

struct sample {
	const char *file;
	enum parser parser;
	int parallel; /* text: the run's -P */
	bool bidir;   /* text: the run used --bidir */
	enum tb_iperf_errclass errclass;
	const char *facts[32];
};

#define TCP312 "cookie=\"vaqfke6qfmhe4cusgxycno45aqqfvpja2oin\""

static const struct sample samples[] = {
	/* ---- iperf 3.12 -J ---- */
	{"tcp_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {TCP312, "version=\"iperf 3.12\"",
	  "system_info=\"Linux vm 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 x86_64\"", "timesecs=1796207290",
	  "test_start.protocol=\"TCP\"", "test_start.duration=2", "error=null", "intervals#=2", "intervals[0].start=0",
	  "intervals[0].end=1.000108", "intervals[0].omitted=false", "intervals[0].sum.bytes=3491758080",
	  "intervals[0].sum.bits_per_second=27931047985.809563", "intervals[0].sum.retransmits=3",
	  "intervals[0].sum.sender=true", "intervals[0].sum.snd_cwnd=absent", "intervals[0].streams#=1",
	  "intervals[0].streams[0].socket=5", "intervals[0].streams[0].snd_cwnd=1047728",
	  "intervals[0].streams[0].rtt_us=40", "intervals[1].streams[0].rtt_us=32", "intervals[0].sum_reverse=absent",
	  /* 3.12 says sum_received.sender true: the key name decides */
	  "end.sender.bytes=6849822720", "end.sender.bits_per_second=27394989866.590946", "end.sender.seconds=2.000314",
	  "end.sender.retransmits=3", "end.receiver.bits_per_second=27388335545.781689", "end.receiver.seconds=2.0008",
	  "end.receiver.retransmits=absent", "end.cpu.host_total=92.204425779679767",
	  "end.cpu.remote_total=68.05742839692887", "end.sender_tcp_congestion=\"bbr\""}},
	{"udp_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=\"nh6vgvk56e76nyuamcpxq2h4oc7uklqvr67y\"", "test_start.protocol=\"UDP\"", "intervals#=2",
	  "intervals[0].sum.packets=39", "intervals[0].sum.sender=true", "intervals[0].sum.jitter_ms=absent",
	  "intervals[1].sum.bytes=1245184", "intervals[1].streams[0].packets=38", "end.sender.packets=77",
	  "end.sender.bytes=2523136", "end.sender.jitter_ms=absent", "end.sender.lost_packets=absent",
	  "end.receiver.jitter_ms=0.028588908944378065", "end.receiver.lost_packets=0", "end.receiver.packets=77",
	  "end.receiver.lost_percent=0", "end.receiver.bits_per_second=10091726.570147818",
	  "end.sender_tcp_congestion=absent", "error=null"}},
	{"busy_json.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_BUSY,
	 {"error=\"the server is busy running a test. try again later\"", "version=\"iperf 3.12\"", "cookie=null",
	  "timesecs=null", "test_start=null", "intervals#=0", "end=null"}},
	{"refused_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_REFUSED,
	 {"error=\"unable to connect to server: Connection refused\"", "intervals#=0", "end=null", "cookie=null",
	  "connected=0"}},
	{"sigint_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the client has terminated\"", "cookie=\"ixgnriyecwz6ebnwutqliiepwmgpjzds574k\"",
	  "connected=1", "intervals#=3", "intervals[2].start=2.000521", "intervals[2].end=2.500027",
	  "intervals[2].sum.bytes=873857024", "end.sender.bytes=4064149504", "end.sender.retransmits=12",
	  "end.receiver.bytes=0", "end.receiver.bits_per_second=0", "end.sender_tcp_congestion=\"bbr\"",
	  "end.receiver_tcp_congestion=absent"}},
	/* generated (README.md, "More iperf 3.12") */
	{"tcp_P2_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.num_streams=2", "intervals#=2", "intervals[0].streams#=2", "intervals[0].streams[1].socket=7",
	  "intervals[0].streams[1].bytes=1918894080", "intervals[0].sum.bytes=3840409600",
	  "end.sender.bytes=7693926400", "end.receiver.bits_per_second=30766106574.748676"}},
	{"tcp_R_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.reverse=1", "intervals#=2", "intervals[0].sum.sender=false",
	  "intervals[0].sum.retransmits=absent", "intervals[1].sum.bytes=3264348054", "end.sender.bytes=6350438400",
	  "end.sender.retransmits=12", "end.receiver.bytes=6349914006", "end.receiver.seconds=2.000026"}},
	{"bidir_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].streams#=2", "intervals[0].streams[1].sender=false",
	  "intervals[0].sum.bytes=3001548800", "intervals[0].sum.sender=true",
	  "intervals[0].sum_reverse.bytes=370671616", "intervals[0].sum_reverse.sender=false",
	  "intervals[1].sum_reverse.bytes=1005453312", "end.sender.bytes=5426380800",
	  "end.sender_reverse.bytes=1384120320", "end.sender_reverse.retransmits=0",
	  "end.receiver_reverse.bytes=1376124928", "end.receiver_reverse.bits_per_second=5503412787.974375"}},
	{"tcp_O1_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.omit=1", "intervals#=3", "intervals[0].omitted=true", "intervals[0].sum.bytes=3430154240",
	  "intervals[1].omitted=false", "intervals[1].start=4.9e-05", "intervals[2].omitted=false",
	  "end.sender.bytes=6864240640"}},
	{"udp_b0_l8000_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.packets=204540", "end.sender.packets=398520",
	  "end.receiver.lost_packets=44157", "end.receiver.packets=398515",
	  "end.receiver.lost_percent=11.080246913580247", "end.receiver.jitter_ms=0.00561882649006208",
	  "end.receiver.bytes=2834864000"}},
	{"srvkilled_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_OTHER,
	 /* the 0-1.000199 interval is in the file twice */
	 {"error=\"the server has terminated\"", "intervals#=1", "intervals[0].end=1.000199",
	  "intervals[0].sum.bytes=4107796480", "end.sender.bytes=6423838720", "end.receiver.bytes=0"}},
	{"rcvtimeout_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_TIMEOUT,
	 {"error=\"idle timeout for receiving data\"", "intervals#=1", "intervals[0].sum.sender=false",
	  "intervals[0].sum.bytes=3199729558", "end=null", "cookie=\"tolke3qnofi2zcp3ehxjkh2uas2nujmmv7ny\""}},
	/* a UDP client whose connect datagram was dropped, stopped by timeout(1):
	 * its sum_sent/sum_received are 0 bytes in 0 s with a null (NaN)
	 * bits_per_second, which is no measurement, not a parse error */
	{"udplost_json_312.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the client has terminated\"", "connected=0", "test_start=null", "intervals#=0",
	  "end.sender=absent", "end.receiver=absent", "end.cpu.host_total=0.0040210120403449323",
	  "cookie=\"wqilvp63r2nwwhqecuoy65d2uv6smxgappnt\""}},

	/* ---- iperf 3.21 -J ---- */
	{"tcp_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=\"zybctffrkcfdcns6czd46v26ojelz7gnzvsz\"", "version=\"iperf 3.21\"", "timesecs=1796222345",
	  "test_start.bidir=0", "intervals#=2", "intervals[1].streams[0].rtt_us=67", "intervals[1].sum.retransmits=0",
	  "end.sender.bytes=3331457024", "end.receiver.bytes=3331588096",
	  "end.receiver.bits_per_second=13281791971.93416"}},
	{"udp_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.packets=39", "end.sender.packets=77",
	  "end.receiver.jitter_ms=0.034010142777059646", "end.receiver.lost_packets=0"}},
	{"busy_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_BUSY,
	 {"error=\"the server is busy running a test. try again later\"", "version=\"iperf 3.21\"", "end=null",
	  "intervals#=0"}},
	{"refused_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_REFUSED,
	 {"error=\"unable to connect to server - server may have stopped running or use a different port, firewall "
	  "issue, etc.: Connection refused\"",
	  "end=null"}},
	{"sigint_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the client has terminated by signal Interrupt(2)\"", "intervals#=3",
	  "intervals[2].end=2.495974", "end.receiver.bytes=0", "end.sender.bytes=4554096640"}},
	{"srv_json_321.json",
	 P_JSON,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=\"i33dgst4orgo4ab4l4xivsjapaakilffgw32\"", "intervals#=3", "intervals[0].sum.sender=false",
	  "intervals[2].sum.bytes=1572864", "end.sender.bytes=0", "end.receiver.bytes=3029073920",
	  "end.receiver_tcp_congestion=\"bbr\"", "end.sender_tcp_congestion=absent"}},

	/* ---- iperf 3.21 --json-stream ---- */
	{"tcp_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=\"akdgqku5wvlmjdfbqnzszvxftw4d2rqfku6g\"", "version=\"iperf 3.21\"", "test_start.interval=1",
	  "intervals#=3", "intervals[0].end=1.005053", "intervals[2].sum.bytes=2660630528",
	  "intervals[2].streams[0].rtt_us=68", "end.sender.bytes=5742264320", "end.receiver.bytes=5741084672",
	  "error=null"}},
	{"tcp_R_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.reverse=1", "intervals#=2", "intervals[0].sum.sender=false", "intervals[0].sum.bytes=2840068096",
	  "end.sender.bytes=5715918848", "end.sender.retransmits=4", "end.receiver.bytes=5711462400"}},
	{"udp_b0_l8000_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.blksize=8000", "intervals#=2", "intervals[0].sum.packets=169908",
	  "intervals[1].sum.packets=168804", "end.sender.packets=338712", "end.receiver.lost_packets=3105",
	  "end.receiver.packets=338712", "end.receiver.lost_percent=0.91670799971657335",
	  "end.receiver.jitter_ms=0.01179609323486098", "end.receiver.bytes=2684856000",
	  "end.sender.bytes=2709688000"}},
	{"udp_b100M_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.target_bitrate=100000000", "intervals#=2", "intervals[0].sum.bits_per_second=100055860.78349856",
	  "end.receiver.lost_packets=0", "end.receiver.packets=764",
	  "end.receiver.bits_per_second=100030824.66312683"}},
	{"tcp_P2_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].streams#=2", "intervals[0].streams[1].socket=7",
	  "intervals[0].streams[1].bytes=1331953664", "intervals[0].sum.bytes=2944663552",
	  "end.sender.bytes=5862326272", "end.receiver.bytes=5859704832"}},
	{"bidir_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"test_start.bidir=1", "intervals#=2", "intervals[0].streams#=2", "intervals[0].streams[1].sender=false",
	  "intervals[0].sum.bytes=1627652096", "intervals[0].sum.sender=true",
	  "intervals[0].sum_reverse.bytes=1276510208", "intervals[0].sum_reverse.sender=false",
	  "end.sender.bytes=3338403840", "end.receiver.bytes=3334864896", "end.sender_reverse.bytes=2619473920",
	  "end.receiver_reverse.bytes=2615279616"}},
	{"busy_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_BUSY,
	 {"error=\"the server is busy running a test. try again later\"", "version=null", "intervals#=0", "end=null"}},
	{"refused_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_REFUSED,
	 {"error=\"unable to connect to server - server may have stopped running or use a different port, firewall "
	  "issue, etc.: Connection refused\"",
	  "intervals#=0", "end=null", "cookie=null", "connected=null"}},
	{"sigint_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the client has terminated by signal Interrupt(2)\"", "intervals#=3",
	  "intervals[2].start=2.001624", "intervals[2].end=2.494818", "end.receiver.bytes=0",
	  "end.sender.bytes=3839098880", "end.receiver_tcp_congestion=absent"}},
	{"srvkilled_jsonstream_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_OTHER,
	 /* the 1.000821-2.00082 interval is in the file twice */
	 {"error=\"the server has terminated\"", "intervals#=2", "intervals[1].start=1.000821",
	  "intervals[1].sum.retransmits=4", "end.sender.retransmits=46"}},
	{"tcp_jsonstream_getsrv_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "end.sender.bytes=4527226880", "server_output.intervals#=3",
	  "server_output.intervals[0].sum.bytes=1.93 GBytes", "server_output.intervals[0].sum.sender=false",
	  "server_output.intervals[2].sum.bytes=6.50 MBytes", "server_output.end.receiver.bytes=4.22 GBytes",
	  "server_output.end.receiver.bits_per_second=18.1 Gbits/sec", "server_output.cookie=null"}},
	{"tcp_jsonstream_getsrvjson_321.jsonl",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "cookie=\"zrmjejrj3rrwz2vllearnl44ricc4x36bai6\"",
	  "server_output.cookie=\"zrmjejrj3rrwz2vllearnl44ricc4x36bai6\"", "server_output.intervals#=2",
	  "server_output.intervals[0].sum.sender=false", "server_output.intervals[1].sum.bytes=1417543680",
	  "server_output.end.receiver.bytes=2997878784", "server_output.end.sender.bytes=0"}},
	{"tcp_jsonstream_full_321.out",
	 P_STREAM,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=\"jebpdiftzgjrvxh7zj33t6gpks5wuvtui4n2\"", "intervals#=2", "intervals[1].sum.bytes=1677852672",
	  "end.sender.bytes=3478650880", "end.receiver.bytes=3478650880"}},

	/* ---- text: 3.12 clients ---- */
	{"tcp_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"cookie=null", "error=null", "intervals#=3", "intervals[0].start=0", "intervals[0].end=1",
	  "intervals[0].sum.bytes=3.33 GBytes", "intervals[0].sum.bits_per_second=28.6 Gbits/sec",
	  "intervals[0].sum.retransmits=4", "intervals[0].sum.sender=true", "intervals[0].sum.snd_cwnd=absent",
	  "intervals[0].streams[0].socket=5", "intervals[0].streams[0].snd_cwnd=1023 KBytes",
	  "intervals[2].sum.bytes=4.27 GBytes", "end.sender.bytes=12.0 GBytes", "end.sender.retransmits=4",
	  "end.sender.seconds=3", "end.receiver.bits_per_second=34.4 Gbits/sec", "end.receiver.retransmits=absent"}},
	{"udp_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.bytes=1.22 MBytes", "intervals[0].sum.bits_per_second=10.2 Mbits/sec",
	  "intervals[0].sum.packets=39", "intervals[0].sum.sender=true", "intervals[1].sum.packets=38",
	  "end.sender.packets=77", "end.sender.jitter_ms=absent", "end.receiver.jitter_ms=0.008",
	  "end.receiver.lost_packets=0", "end.receiver.packets=77", "end.receiver.lost_percent=0",
	  "end.receiver.bytes=2.41 MBytes"}},
	{"tcp_R_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.sender=false", "intervals[0].sum.retransmits=absent",
	  "intervals[1].sum.bytes=2.72 GBytes", "end.sender.retransmits=0", "end.sender.bytes=5.17 GBytes",
	  "end.receiver.bits_per_second=22.2 Gbits/sec"}},
	{"udp_b10M_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[1].sum.bits_per_second=9.96 Mbits/sec", "intervals[1].sum.packets=38",
	  "end.receiver.jitter_ms=0.144", "end.sender.packets=77"}},
	{"bidir_text_312.txt",
	 P_TEXT,
	 1,
	 true,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].streams#=2", "intervals[0].streams[1].socket=7",
	  "intervals[0].sum.bytes=2.59 GBytes", "intervals[0].sum.sender=true", "intervals[0].sum.retransmits=5",
	  "intervals[0].sum_reverse.bytes=638 MBytes", "intervals[0].sum_reverse.bits_per_second=5.35 Gbits/sec",
	  "intervals[0].sum_reverse.sender=false", "intervals[1].sum_reverse.bytes=336 MBytes",
	  "end.sender.bytes=5.77 GBytes", "end.sender.retransmits=6", "end.receiver.bytes=5.77 GBytes",
	  "end.sender_reverse.bytes=979 MBytes", "end.sender_reverse.retransmits=1",
	  "end.receiver_reverse.bytes=973 MBytes", "end.receiver_reverse.bits_per_second=4.08 Gbits/sec"}},
	{"bidir_P2_text_312.txt",
	 P_TEXT,
	 2,
	 true,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].streams#=4", "intervals[0].sum.bytes=2.64 GBytes",
	  "intervals[0].sum.retransmits=0", "intervals[0].sum_reverse.bytes=898 MBytes",
	  "intervals[0].sum_reverse.bits_per_second=7.53 Gbits/sec", "intervals[1].sum.bytes=3.28 GBytes",
	  "end.sender.bytes=5.92 GBytes", "end.receiver.bits_per_second=25.4 Gbits/sec",
	  "end.sender_reverse.bytes=1.22 GBytes", "end.receiver_reverse.bytes=1.21 GBytes",
	  "end.receiver_reverse.bits_per_second=5.20 Gbits/sec"}},
	{"sigint_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the client has terminated\"", "intervals#=2", "intervals[1].start=1",
	  "intervals[1].end=1.5", "intervals[1].sum.bytes=1.46 GBytes", "intervals[1].streams[0].snd_cwnd=895 KBytes",
	  "end.sender.bytes=4.45 GBytes", "end.sender.retransmits=32", "end.sender.seconds=1.5", "end.receiver.bytes=0",
	  "end.receiver.bits_per_second=0"}},

	/* ---- text: 3.12 servers (-s -1 --forceflush -i 1) ---- */
	{"srv1.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=4", "intervals[0].sum.sender=false", "intervals[0].sum.retransmits=absent",
	  "intervals[1].sum.bytes=4.43 GBytes", "intervals[3].start=3", "intervals[3].end=3",
	  "intervals[3].sum.bytes=768 KBytes", "end.receiver.bytes=12.0 GBytes",
	  "end.receiver.bits_per_second=34.4 Gbits/sec", "end.receiver.seconds=3", "end.sender=absent", "error=null"}},
	{"srv_P2_text_312.txt",
	 P_TEXT,
	 2,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=3", "intervals[0].streams#=2", "intervals[0].streams[1].socket=8",
	  "intervals[0].streams[1].bits_per_second=15.3 Gbits/sec", "intervals[0].sum.bytes=3.58 GBytes",
	  "intervals[0].sum.bits_per_second=30.7 Gbits/sec", "intervals[2].sum.bytes=1.88 MBytes",
	  "end.receiver.bytes=7.17 GBytes", "end.receiver.bits_per_second=30.8 Gbits/sec"}},
	{"srv_udp_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.sender=false", "intervals[0].sum.jitter_ms=0.019",
	  "intervals[0].sum.lost_packets=0", "intervals[0].sum.packets=39", "intervals[1].sum.jitter_ms=0.144",
	  "end.receiver.packets=77", "end.receiver.jitter_ms=0.144"}},
	{"srv_udp_b0_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 /* "(21%)" in the file; lost_percent is 100 * 42509 / 204536 */
	 {"intervals#=3", "intervals[0].sum.bytes=1.21 GBytes", "intervals[0].sum.lost_packets=42509",
	  "intervals[0].sum.packets=204536", "intervals[0].sum.lost_percent=20.783138420620332",
	  "intervals[1].sum.lost_packets=1648", "intervals[2].sum.bits_per_second=928 Mbits/sec",
	  "end.receiver.lost_packets=44157", "end.receiver.packets=398515", "end.receiver.jitter_ms=0.006"}},
	{"srv_R_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].sum.sender=true", "intervals[0].sum.retransmits=7",
	  "intervals[0].streams[0].snd_cwnd=1.12 MBytes", "intervals[1].streams[0].snd_cwnd=1023 KBytes",
	  "end.sender.bytes=5.91 GBytes", "end.sender.retransmits=12", "end.receiver=absent"}},
	{"srv_bidir_text_312.txt",
	 P_TEXT,
	 1,
	 true,
	 TB_IPERF_ERR_NONE,
	 /* [RX-S] is client->server: sum; [TX-S] server->client: sum_reverse */
	 {"intervals#=3", "intervals[0].sum.bytes=2.59 GBytes", "intervals[0].sum.sender=false",
	  "intervals[0].sum_reverse.bytes=642 MBytes", "intervals[0].sum_reverse.sender=true",
	  "intervals[0].sum_reverse.retransmits=1", "intervals[2].sum.bytes=768 KBytes",
	  "end.receiver.bytes=5.77 GBytes", "end.sender_reverse.bytes=979 MBytes", "end.sender_reverse.retransmits=1",
	  "end.sender=absent", "end.receiver_reverse=absent"}},
	{"srv_bidir2_text_312.txt",
	 P_TEXT,
	 1,
	 true,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=3", "intervals[0].sum.bytes=2.79 GBytes", "intervals[2].sum_reverse.bytes=0",
	  "intervals[2].sum_reverse.bits_per_second=0", "end.receiver.bytes=5.05 GBytes",
	  "end.sender_reverse.bytes=1.29 GBytes"}},
	{"srv_bidir_P2_text_312.txt",
	 P_TEXT,
	 2,
	 true,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=2", "intervals[0].streams#=4", "intervals[0].sum.bytes=2.64 GBytes",
	  "intervals[0].sum.sender=false", "intervals[0].sum_reverse.bytes=905 MBytes",
	  "intervals[0].sum_reverse.bits_per_second=7.59 Gbits/sec", "intervals[0].sum_reverse.retransmits=0",
	  "intervals[1].sum_reverse.bytes=342 MBytes", "end.receiver.bytes=5.92 GBytes",
	  "end.sender_reverse.bytes=1.22 GBytes", "end.sender_reverse.bits_per_second=5.23 Gbits/sec"}},
	{"srv_O1_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=4", "intervals[0].omitted=true", "intervals[0].sum.bytes=3.19 GBytes",
	  "intervals[1].omitted=false", "intervals[1].start=0", "intervals[1].sum.bytes=3.18 GBytes",
	  "intervals[3].sum.bytes=1.38 MBytes", "end.receiver.bytes=6.39 GBytes"}},
	{"srv_sigint_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_OTHER,
	 /* the 0.00-1.00 line is in the file twice */
	 {"error=\"the client has terminated\"", "intervals#=1", "intervals[0].sum.bytes=2.99 GBytes",
	  "end.receiver.bytes=4.45 GBytes", "end.receiver.seconds=1"}},
	{"srv_term_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the server has terminated\"", "intervals#=2", "intervals[1].end=1.5",
	  "intervals[1].sum.bits_per_second=37.4 Gbits/sec", "end.receiver.bytes=5.98 GBytes"}},
	{"srv_stop_text_312.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_INTERRUPT,
	 {"error=\"interrupt - the server has terminated\"", "intervals#=2", "intervals[1].sum.retransmits=2",
	  "intervals[1].sum.sender=true", "end.sender.bytes=4.55 GBytes", "end.sender.retransmits=29"}},

	/* ---- text: 3.21 ---- */
	{"tcp_text_321.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 /* one space fewer before "sender" than 3.12 */
	 {"intervals#=2", "intervals[0].sum.bytes=1.69 GBytes", "intervals[0].streams[0].snd_cwnd=895 KBytes",
	  "end.sender.retransmits=8", "end.sender.bytes=3.33 GBytes", "end.receiver.seconds=2.01"}},
	{"srv_text_321.txt",
	 P_TEXT,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"intervals#=4", "intervals[3].sum.bytes=1.25 MBytes", "intervals[3].sum.bits_per_second=5.99 Gbits/sec",
	  "end.receiver.bytes=4.61 GBytes", "end.receiver.bits_per_second=13.2 Gbits/sec"}},

	/* ---- versions, exit codes, the README ---- */
	{"version_312.txt",
	 P_VERSION,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"version=\"3.12\"", "major=3", "minor=12", "patch=0", "json_stream=false", "bidir=true", "snd_timeout=true",
	  "rcv_timeout=true", "idle_timeout=true", "connect_timeout=true", "udp_sum_sent=true", "max_omit_s=60"}},
	{"version_321.txt",
	 P_VERSION,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"version=\"3.21\"", "major=3", "minor=21", "json_stream=true", "bidir=true", "snd_timeout=true",
	  "max_omit_s=600"}},
	{"exit_codes_312.txt",
	 P_CODES,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"files#=3", "files[0].file=\"refused_json_312.json\"", "files[0].rc=0", "files[1].file=\"busy_json.json\"",
	  "files[1].rc=0", "files[2].rc=1"}},
	{"exit_codes_321.txt",
	 P_CODES,
	 1,
	 false,
	 TB_IPERF_ERR_NONE,
	 {"files#=22", "files[13].file=\"refused_jsonstream_321.jsonl\"", "files[13].rc=1",
	  "files[17].file=\"sigint_jsonstream_321.jsonl\"", "files[17].rc=0"}},
	{"README.md", P_README, 1, false, TB_IPERF_ERR_NONE, {NULL}},
};

#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static char data_dir[1024];

/* The file's bytes, NUL-terminated (malloc'd). */
static char *read_data(const char *name, size_t *len)
{
	char *buf = tb_test_read_file(data_dir, name, len);

	if (buf == NULL)
		fail_msg("cannot read %s/%s", data_dir, name);
	return buf;
}

/* ---- running a parser ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64* */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void collect(void *cls, json_t *interval)
{
	assert_int_equal(json_array_append_new((json_t *)cls, interval), 0);
}

enum chunking { WHOLE, BYTES, RANDOM };

static size_t chunk_len(enum chunking c, size_t left)
{
	size_t n = c == WHOLE ? left : c == BYTES ? 1 : 1 + (size_t)(rnd() % 97);

	return n < left ? n : left;
}

/* Parse buf with the sample's parser; *intervals gets what the callback
 * delivered (stream and text). */
static int run(enum parser p, int parallel, bool bidir, const char *buf, size_t len, enum chunking c, json_t **result,
	       json_t **intervals, struct tb_error *err)
{
	json_t *got = json_array();
	size_t off = 0;
	int rc;

	assert_non_null(got);
	*result = NULL;
	if (p == P_JSON) {
		rc = tb_iperf_parse_json(buf, len, result, err);
	} else if (p == P_STREAM) {
		struct tb_iperf_stream *s = tb_iperf_stream_new(collect, got);

		assert_non_null(s);
		do {
			size_t n = chunk_len(c, len - off);

			tb_iperf_stream_feed(s, buf + off, n);
			off += n;
		} while (off < len);
		rc = tb_iperf_stream_finish(s, result, err);
	} else {
		struct tb_iperf_text *t = tb_iperf_text_new(parallel, bidir, collect, got);

		assert_non_null(t);
		do {
			size_t n = chunk_len(c, len - off);

			tb_iperf_text_feed(t, buf + off, n);
			off += n;
		} while (off < len);
		rc = tb_iperf_text_finish(t, result, err);
	}
	if (intervals != NULL)
		*intervals = got;
	else
		json_decref(got);
	return rc;
}

static json_t *caps_json(const struct tb_iperf_caps *c)
{
	json_t *j = json_pack("{s:s, s:i, s:i, s:i, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:i}", "version", c->version,
			      "major", c->major, "minor", c->minor, "patch", c->patch, "json_stream", c->json_stream,
			      "bidir", c->bidir, "snd_timeout", c->snd_timeout, "rcv_timeout", c->rcv_timeout,
			      "idle_timeout", c->idle_timeout, "connect_timeout", c->connect_timeout, "udp_sum_sent",
			      c->udp_sum_sent, "max_omit_s", c->max_omit_s);

	assert_non_null(j);
	return j;
}

/* exit_codes_*.txt: {"files":[{"file","rc"}...]} */
static json_t *codes_json(char *buf)
{
	json_t *files = json_array();

	for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char name[128];
		int rc;

		assert_int_equal(sscanf(line, "%127s %d", name, &rc), 2);
		json_array_append_new(files, json_pack("{s:s, s:i}", "file", name, "rc", rc));
	}
	return json_pack("{s:o}", "files", files);
}

/* ---- facts ---- */

/* "3.33 GBytes" (1024-based), "28.6 Gbits/sec" (1000-based) or a number. */
static double expected_number(const char *v, double *tolerance)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{"Bytes", 1},    {"KBytes", 1024},   {"MBytes", 1048576}, {"GBytes", 1073741824.0},
		{"bits/sec", 1}, {"Kbits/sec", 1e3}, {"Mbits/sec", 1e6},  {"Gbits/sec", 1e9},
	};
	char *end;
	double x = strtod(v, &end);

	*tolerance = fabs(x) * 1e-12;
	if (*end == '\0')
		return x;
	assert_true(*end == ' ');
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end + 1, units[i].unit) == 0) {
			/* text byte counts are rounded to whole bytes */
			*tolerance = strstr(units[i].unit, "Bytes") != NULL ? 0.51 : fabs(x) * units[i].mult * 1e-12;
			return x * units[i].mult;
		}
	}
	fail_msg("unknown unit in %s", v);
	return 0;
}

static void check_fact(const json_t *root, const char *file, const char *fact)
{
	char path[160];
	const char *eq = strchr(fact, '='), *want;
	const json_t *v;
	char *got;
	bool ok;
	size_t n;

	assert_non_null(eq);
	n = (size_t)(eq - fact);
	assert_true(n < sizeof(path));
	memcpy(path, fact, n);
	path[n] = '\0';
	want = eq + 1;
	if (n > 0 && path[n - 1] == '#') {
		path[n - 1] = '\0';
		v = tb_test_walk(root, path, '.');
		ok = json_is_array(v) && json_array_size(v) == (size_t)atoi(want);
	} else {
		v = tb_test_walk(root, path, '.');
		if (strcmp(want, "absent") == 0) {
			ok = v == NULL;
		} else if (strcmp(want, "null") == 0) {
			ok = json_is_null(v);
		} else if (strcmp(want, "true") == 0 || strcmp(want, "false") == 0) {
			ok = json_is_boolean(v) && json_is_true(v) == (want[0] == 't');
		} else if (want[0] == '"') {
			ok = json_is_string(v) && strlen(want) >= 2 &&
			     strncmp(json_string_value(v), want + 1, strlen(want) - 2) == 0 &&
			     json_string_length(v) == strlen(want) - 2;
		} else {
			double tol, x = expected_number(want, &tol);

			ok = json_is_number(v) && fabs(json_number_value(v) - x) <= tol;
		}
	}
	if (!ok) {
		got = v != NULL ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
		fail_msg("%s: %s, got %s", file, fact, got != NULL ? got : "(absent)");
	}
}

/* ---- the table ---- */

static const struct sample *find_sample(const char *file)
{
	for (size_t i = 0; i < NSAMPLES; i++)
		if (strcmp(samples[i].file, file) == 0)
			return &samples[i];
	return NULL;
}

static void test_samples(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];
		struct tb_error err;
		json_t *r = NULL, *ivs = NULL;
		size_t len;
		char *buf = read_data(s->file, &len);

		tb_error_clear(&err);
		switch (s->parser) {
		case P_JSON:
		case P_STREAM:
		case P_TEXT:
			if (run(s->parser, s->parallel, s->bidir, buf, len, WHOLE, &r, &ivs, &err) != 0)
				fail_msg("%s: %s", s->file, err.message);
			assert_int_equal(tb_iperf_classify(json_string_value(json_object_get(r, "error"))),
					 s->errclass);
			/* the callback saw every interval of the result, in order */
			if (s->parser != P_JSON && !json_equal(ivs, json_object_get(r, "intervals")))
				fail_msg("%s: the callback's intervals differ from the result's", s->file);
			break;
		case P_VERSION: {
			struct tb_iperf_caps caps;

			assert_int_equal(tb_iperf_caps_parse(buf, &caps, &err), 0);
			r = caps_json(&caps);
			break;
		}
		case P_CODES:
			r = codes_json(buf);
			for (size_t k = 0; k < json_array_size(json_object_get(r, "files")); k++) {
				const char *f = json_string_value(
					json_object_get(json_array_get(json_object_get(r, "files"), k), "file"));

				if (find_sample(f) == NULL)
					fail_msg("%s names %s, which is not in the table", s->file, f);
			}
			break;
		case P_README:
			/* the README says what every file is */
			for (size_t k = 0; k < NSAMPLES; k++)
				if (samples[k].parser != P_README && strstr(buf, samples[k].file) == NULL)
					fail_msg("README.md does not describe %s", samples[k].file);
			break;
		}
		for (size_t k = 0; k < sizeof(s->facts) / sizeof(s->facts[0]) && s->facts[k] != NULL; k++)
			check_fact(r, s->file, s->facts[k]);
		json_decref(r);
		json_decref(ivs);
		free(buf);
	}
}

/* Every file in the directory is a line of the table. */
static void test_every_file(void **state)
{
	DIR *d = opendir(data_dir);
	struct dirent *e;
	size_t n = 0;

	(void)state;
	if (d == NULL)
		fail_msg("cannot open %s", data_dir);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (find_sample(e->d_name) == NULL)
			fail_msg("%s/%s is not in test_iperf.c's table", data_dir, e->d_name);
		n++;
	}
	closedir(d);
	assert_int_equal(n, NSAMPLES);
}

/* 1 byte at a time and random chunks give what one feed gives. */
static void test_chunked(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];
		json_t *whole, *r, *ivs;
		size_t len;
		char *buf;

		if (s->parser != P_STREAM && s->parser != P_TEXT)
			continue;
		buf = read_data(s->file, &len);
		assert_int_equal(run(s->parser, s->parallel, s->bidir, buf, len, WHOLE, &whole, NULL, NULL), 0);
		for (int c = BYTES; c <= RANDOM; c++) {
			for (int round = 0; round < (c == RANDOM ? 8 : 1); round++) {
				assert_int_equal(run(s->parser, s->parallel, s->bidir, buf, len, (enum chunking)c, &r,
						     &ivs, NULL),
						 0);
				if (!json_equal(r, whole) || !json_equal(ivs, json_object_get(whole, "intervals")))
					fail_msg("%s: chunked feeding (%s) gives another result", s->file,
						 c == BYTES ? "1 byte" : "random");
				json_decref(r);
				json_decref(ivs);
			}
		}
		json_decref(whole);
		free(buf);
	}
}

/* An interval is handed over when its last line arrives, not one later. */
static void test_live(void **state)
{
	static const struct {
		const char *file;
		const char *through; /* feed up to the end of the line holding this */
		int delivered;
	} cases[] = {
		{"srv1.txt", "[  5]   0.00-1.00", 1},
		{"srv1.txt", "[  5]   3.00-3.00", 4},
		{"srv_P2_text_312.txt", "[  8]   0.00-1.00", 0},
		{"srv_P2_text_312.txt", "[SUM]   0.00-1.00", 1},
		{"bidir_P2_text_312.txt", "[SUM][TX-C]   0.00-1.00", 0},
		{"bidir_P2_text_312.txt", "[SUM][RX-C]   0.00-1.00", 1},
		{"srv_bidir_text_312.txt", "[  5][RX-S]   0.00-1.00", 0},
		{"srv_bidir_text_312.txt", "[  8][TX-S]   0.00-1.00", 1},
		{"tcp_jsonstream_321.jsonl", "\"event\":\"interval\"", 1},
		{"tcp_jsonstream_321.jsonl", "\"end\":2.001039,\"seconds\"", 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sample *s = find_sample(cases[i].file);
		json_t *got = json_array(), *r;
		size_t len, upto;
		char *buf = read_data(cases[i].file, &len), *at = strstr(buf, cases[i].through);

		assert_non_null(s);
		assert_non_null(at);
		upto = (size_t)(strchr(at, '\n') + 1 - buf);
		if (s->parser == P_STREAM) {
			struct tb_iperf_stream *st = tb_iperf_stream_new(collect, got);

			tb_iperf_stream_feed(st, buf, upto);
			assert_int_equal(json_array_size(got), cases[i].delivered);
			assert_int_equal(tb_iperf_stream_finish(st, &r, NULL), 0);
		} else {
			struct tb_iperf_text *t = tb_iperf_text_new(s->parallel, s->bidir, collect, got);

			tb_iperf_text_feed(t, buf, upto);
			if (json_array_size(got) != (size_t)cases[i].delivered)
				fail_msg("%s through \"%s\": %zu intervals, want %d", cases[i].file, cases[i].through,
					 json_array_size(got), cases[i].delivered);
			assert_int_equal(tb_iperf_text_finish(t, &r, NULL), 0);
		}
		json_decref(r);
		json_decref(got);
		free(buf);
	}
}

/* --json-stream-full-output: the -J object after the events says the same. */
static void test_full_output(void **state)
{
	json_t *stream, *doc;
	size_t len;
	char *buf = read_data("tcp_jsonstream_full_321.out", &len), *j = strstr(buf, "\n{\n");

	(void)state;
	assert_non_null(j);
	assert_int_equal(run(P_STREAM, 1, false, buf, len, WHOLE, &stream, NULL, NULL), 0);
	assert_int_equal(tb_iperf_parse_json(j + 1, len - (size_t)(j + 1 - buf), &doc, NULL), 0);
	assert_true(json_equal(json_object_get(stream, "intervals"), json_object_get(doc, "intervals")));
	assert_true(json_equal(json_object_get(stream, "end"), json_object_get(doc, "end")));
	assert_true(json_equal(json_object_get(stream, "cookie"), json_object_get(doc, "cookie")));
	json_decref(stream);
	json_decref(doc);
	free(buf);
}

/* A parser's answer to bad input: a result, or TB_ERR_INVALID and none. */
static void check_outcome(const char *what, int rc, json_t *r, const struct tb_error *err)
{
	if (rc == 0 && r != NULL && json_is_array(json_object_get(r, "intervals")))
		return;
	if (rc == TB_ERR_INVALID && r == NULL && err->code == TB_ERR_INVALID && err->message[0] != '\0')
		return;
	fail_msg("%s: rc %d, result %p, message \"%s\"", what, rc, (void *)r, err->message);
}

static void try_all(const char *what, const char *buf, size_t len)
{
	static const enum parser parsers[] = {P_JSON, P_STREAM, P_TEXT};

	for (size_t p = 0; p < 3; p++) {
		for (int c = WHOLE; c <= (parsers[p] == P_JSON ? WHOLE : RANDOM); c += 2) {
			struct tb_error err;
			json_t *r;
			int rc;

			tb_error_clear(&err);
			rc = run(parsers[p], (int)(rnd() % 3), (rnd() & 1) != 0, buf, len, (enum chunking)c, &r, NULL,
				 &err);
			if (parsers[p] == P_TEXT && rc != 0)
				fail_msg("%s: the text parser failed: %s", what, err.message);
			check_outcome(what, rc, r, &err);
			json_decref(r);
		}
	}
}

/* Cut at byte offsets: every offset for these, every 7th for the rest. */
static void test_truncated(void **state)
{
	static const char *const every[] = {
		"tcp_json_312.json",       "udp_b0_l8000_jsonstream_321.jsonl", "bidir_P2_text_312.txt",
		"srv_sigint_text_312.txt", "tcp_jsonstream_getsrv_321.jsonl",   "refused_jsonstream_321.jsonl"};

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];
		size_t len, step = 7;
		char *buf, what[160];

		if (s->parser != P_JSON && s->parser != P_STREAM && s->parser != P_TEXT)
			continue;
		for (size_t k = 0; k < sizeof(every) / sizeof(every[0]); k++)
			if (strcmp(every[k], s->file) == 0)
				step = 1;
		buf = read_data(s->file, &len);
		for (size_t cut = 0; cut <= len; cut += step) {
			char *copy = malloc(cut + 1); /* exactly cut bytes for ASan */
			struct tb_error err;
			json_t *r;
			int rc;

			assert_non_null(copy);
			memcpy(copy, buf, cut);
			snprintf(what, sizeof(what), "%s cut at %zu", s->file, cut);
			tb_error_clear(&err);
			rc = run(s->parser, s->parallel, s->bidir, copy, cut, WHOLE, &r, NULL, &err);
			check_outcome(what, rc, r, &err);
			json_decref(r);
			free(copy);
		}
		free(buf);
	}
}

/* Random bytes, JSON-ish characters, and mutated samples to every parser. */
static void test_garbage(void **state)
{
	static const char jsonish[] = "{}[]\":,0123456789.-eE tfnrul\\\n\"event\"\"data\"\"interval\"";
	static const char textish[] = "[ ]SUM5TX-CRXS0123456789.- secKMGBytesbits/ms()%/omittedsenderreceiver\n\t";
	char buf[2048], what[64];

	(void)state;
	rng_state = 42;
	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t)(rnd() % sizeof(buf));
		int kind = i % 3;

		for (size_t k = 0; k < len; k++) {
			uint64_t x = rnd();

			buf[k] = kind == 0   ? (char)(x & 0xff)
				 : kind == 1 ? jsonish[x % (sizeof(jsonish) - 1)]
					     : textish[x % (sizeof(textish) - 1)];
		}
		snprintf(what, sizeof(what), "garbage %d", i);
		try_all(what, buf, len);
		/* caps_parse and classify take C strings */
		buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
		{
			struct tb_iperf_caps caps;
			int rc = tb_iperf_caps_parse(buf, &caps, NULL);

			assert_true(rc == 0 || rc == TB_ERR_INVALID);
			(void)tb_iperf_classify(buf);
		}
	}
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];
		size_t len;
		char *orig;

		if (s->parser != P_JSON && s->parser != P_STREAM && s->parser != P_TEXT)
			continue;
		orig = read_data(s->file, &len);
		for (int m = 0; m < 40; m++) {
			char *b = malloc(len + 64);
			size_t n = len;

			assert_non_null(b);
			memcpy(b, orig, len);
			for (int e = 0; e < 1 + m % 8 && n > 0; e++) {
				size_t at = (size_t)(rnd() % n);

				switch (rnd() % 4) {
				case 0: /* change a byte */ b[at] = (char)(rnd() & 0xff); break;
				case 1: /* drop a run of bytes */
				{
					size_t k = 1 + (size_t)(rnd() % 16);

					if (k > n - at)
						k = n - at;
					memmove(b + at, b + at + k, n - at - k);
					n -= k;
					break;
				}
				case 2: /* a structural character */ b[at] = "{}[]\",:\n-."[rnd() % 11]; break;
				default: /* a digit run: huge numbers */ b[at] = (char)('0' + rnd() % 10); break;
				}
			}
			snprintf(what, sizeof(what), "%s mutation %d", s->file, m);
			try_all(what, b, n);
			free(b);
		}
		free(orig);
	}
}

/* Hand-made inputs: edges the captures do not have. */
static void test_odd_inputs(void **state)
{
	static const struct {
		enum parser parser;
		const char *input;
		int rc;
		const char *fact; /* checked when rc is 0 */
	} cases[] = {
		{P_JSON, "", TB_ERR_INVALID, NULL},
		{P_JSON, "[]", TB_ERR_INVALID, NULL},
		{P_JSON, "{}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"colour\":1}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"start\":[]}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"intervals\":{}}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"intervals\":[{\"streams\":[]}]}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"intervals\":[{\"sum\":{\"start\":0,\"end\":1,\"bytes\":\"1\",\"bits_per_second\":8}}]}",
		 TB_ERR_INVALID, NULL},
		{P_JSON, "{\"intervals\":[{\"sum\":{\"start\":0,\"end\":1,\"bytes\":1e300,\"bits_per_second\":8}}]}",
		 TB_ERR_INVALID, NULL},
		{P_JSON, "{\"end\":{\"sum_sent\":{\"bytes\":1}}}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"error\":7}", TB_ERR_INVALID, NULL},
		{P_JSON, "{\"error\":\"x\"}", 0, "error=\"x\""},
		{P_JSON, "{\"intervals\":[{\"sum\":{\"start\":0,\"end\":1,\"bytes\":1.6,\"bits_per_second\":8}}]}", 0,
		 "intervals[0].sum.bytes=2"},
		{P_JSON, "{\"start\":{},\"end\":{\"sum_sent\":{\"bytes\":1,\"bits_per_second\":8,\"seconds\":1}}}", 0,
		 "end.sender.bytes=1"},
		/* an empty sum (0 bytes, 0 s, NaN printed as null) is left out; a null
		 * rate over real bytes or seconds is still unreadable */
		{P_JSON, "{\"end\":{\"sum_sent\":{\"bytes\":0,\"bits_per_second\":null,\"seconds\":0}}}", 0,
		 "end=null"},
		{P_JSON, "{\"end\":{\"sum_sent\":{\"bytes\":9,\"bits_per_second\":null,\"seconds\":0}}}",
		 TB_ERR_INVALID, NULL},
		{P_JSON, "{\"end\":{\"sum_sent\":{\"bytes\":0,\"bits_per_second\":null,\"seconds\":1}}}",
		 TB_ERR_INVALID, NULL},
		{P_JSON, "{\"start\":{\"connected\":[{},{}]}}", 0, "connected=2"},
		{P_STREAM,
		 "{\"event\":\"start\",\"data\":{\"connected\":[]}}\n{\"event\":\"error\",\"data\":\"interrupt - x\"}\n"
		 "{\"event\":\"end\",\"data\":{\"sum_sent\":{\"bytes\":0,\"bits_per_second\":null,\"seconds\":0}}}\n",
		 0, "connected=0"},
		{P_STREAM, "", TB_ERR_INVALID, NULL},
		{P_STREAM, "\n\n  \n", TB_ERR_INVALID, NULL},
		{P_STREAM, "not json\n{\"event\":\"end\",\"data\":{}}\n", TB_ERR_INVALID, NULL},
		{P_STREAM, "{\"data\":{}}\n", TB_ERR_INVALID, NULL},
		{P_STREAM, "{\"event\":\"error\",\"data\":{}}\n", TB_ERR_INVALID, NULL},
		{P_STREAM, "{\"event\":\"start\",\"data\":{}}\n{\"event\":\"start\",\"data\":{}}\n", TB_ERR_INVALID,
		 NULL},
		{P_STREAM, "{\"event\":\"interval\",\"data\":{\"sum\":{}}}\n{\"event\":\"end\",\"data\":{}}\n",
		 TB_ERR_INVALID, NULL},
		/* a last line without its newline is read; one cut short is not JSON */
		{P_STREAM, "{\"event\":\"error\",\"data\":\"x\"}", 0, "error=\"x\""},
		{P_STREAM, "{\"event\":\"error\",\"data\":\"x\"}\n{\"event\":\"end\",\"da", TB_ERR_INVALID, NULL},
		/* blank lines after a longer one are skipped (the line buffer is emptied, not just rewound) */
		{P_STREAM, "{\"event\":\"colour\",\"data\":1}\n\n \n{\"event\":\"error\",\"data\":\"x\"}\n", 0,
		 "error=\"x\""},
		/* a later iperf3's event, and bytes after end */
		{P_STREAM, "{\"event\":\"colour\",\"data\":1}\r\n{\"event\":\"end\",\"data\":{}}\nanything {", 0,
		 "end=null"},
		{P_TEXT, "", 0, "intervals#=0"},
		{P_TEXT, "iperf3: error - the server is busy running a test. try again later\n", 0,
		 "error=\"the server is busy running a test. try again later\""},
		{P_TEXT, "iperf3: parameter error - client receive timeout is valid only in receiving mode\n", 0,
		 "error=\"parameter error - client receive timeout is valid only in receiving mode\""},
		{P_TEXT, "[  5]   0.00-1.00   sec  3.33 GBytes  28.6 Gbits/sec\r\n", 0,
		 "intervals[0].sum.sender=false"},
		{P_TEXT, "[  5]   0.00-1.00   sec  3.33 XBytes  28.6 Gbits/sec\n", 0, "intervals#=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  999999999999999 TBytes  28.6 Gbits/sec\n", 0, "intervals#=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  1e3 Bytes  28.6 Gbits/sec\n", 0, "intervals#=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  -3 Bytes  28.6 Gbits/sec\n", 0, "intervals#=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec  1 2\n", 0, "intervals#=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec  0.1 ms  1/0 (0%)\n", 0,
		 "intervals[0].sum.lost_percent=0"},
		{P_TEXT, "[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec  0.1 ms  1/1 (1e+02%)\n", 0,
		 "intervals[0].sum.lost_percent=100"},
		{P_TEXT, "[ ID] Interval\n[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec  3\n", 0,
		 "intervals[0].sum.retransmits=3"},
		{P_TEXT, "[ ID] Total Datagrams\n[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec  3\n", 0,
		 "intervals[0].sum.packets=3"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_error err;
		json_t *r;
		int rc;

		tb_error_clear(&err);
		rc = run(cases[i].parser, 1, false, cases[i].input, strlen(cases[i].input), WHOLE, &r, NULL, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): rc %d, want %d (%s)", i, cases[i].input, rc, cases[i].rc, err.message);
		if (rc == 0 && cases[i].fact != NULL)
			check_fact(r, cases[i].input, cases[i].fact);
		check_outcome(cases[i].input, rc, r, &err);
		json_decref(r);
	}
}

/* A text line over 4 KiB is skipped, the next one read. */
static void test_long_line(void **state)
{
	size_t n = 10000;
	char *buf = malloc(n + 200);
	json_t *r;

	(void)state;
	assert_non_null(buf);
	memset(buf, 'x', n);
	strcpy(buf + n, "\n[  5]   0.00-1.00   sec  100 Bytes  800 bits/sec\n");
	assert_int_equal(run(P_TEXT, 1, false, buf, strlen(buf), RANDOM, &r, NULL, NULL), 0);
	check_fact(r, "long line", "intervals#=1");
	json_decref(r);
	free(buf);
}

/*
 * jansson allocations fail from the n-th on: the parsers give a result or
 * TB_ERR_NOMEM, never a crash or a leak (ASan's leak check).  Not while
 * jansson itself parses: jansson 2.14 asserts in lex_unget_unsave() when an
 * allocation fails there (akheron/jansson#362, open), so -J is tested from
 * the first allocation after json_loadb, and --json-stream (a json_loadb per
 * line) not at all; its normaliser is -J's.
 */
static long alloc_left, alloc_count;

static void *failing_malloc(size_t n)
{
	return alloc_left-- > 0 ? malloc(n) : NULL;
}

static void *counting_malloc(size_t n)
{
	alloc_count++;
	return malloc(n);
}

static void drop(void *cls, json_t *interval)
{
	(void)cls;
	json_decref(interval);
}

static void test_out_of_memory(void **state)
{
	static const char *const files[] = {"tcp_json_312.json",          "bidir_json_312.json",
					    "udp_b0_l8000_json_312.json", "bidir_P2_text_312.txt",
					    "srv_udp_b0_text_312.txt",    "srv_bidir_text_312.txt"};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const struct sample *s = find_sample(files[i]);
		size_t len;
		char *buf = read_data(files[i], &len);
		bool done = false;
		long first = 0;

		assert_non_null(s);
		if (s->parser == P_JSON) {
			json_t *doc;

			alloc_count = 0;
			json_set_alloc_funcs(counting_malloc, free);
			doc = json_loadb(buf, len, 0, NULL);
			json_set_alloc_funcs(malloc, free);
			assert_non_null(doc);
			json_decref(doc);
			first = alloc_count;
		}
		for (long n = first; !done; n++) {
			struct tb_error err;
			json_t *r = NULL;
			int rc;

			tb_error_clear(&err);
			alloc_left = n;
			json_set_alloc_funcs(failing_malloc, free);
			if (s->parser == P_JSON) {
				rc = tb_iperf_parse_json(buf, len, &r, &err);
			} else {
				struct tb_iperf_text *t = tb_iperf_text_new(s->parallel, s->bidir, drop, NULL);

				tb_iperf_text_feed(t, buf, len);
				rc = tb_iperf_text_finish(t, &r, &err);
			}
			json_set_alloc_funcs(malloc, free);
			done = alloc_left >= 0; /* no allocation failed */
			if (rc == 0)
				assert_non_null(r);
			else if (r != NULL || rc != TB_ERR_NOMEM)
				fail_msg("%s, %ld allocations: rc %d (%s)", files[i], n, rc, err.message);
			if (!done && rc == 0)
				fail_msg("%s, %ld allocations: a failed allocation went unnoticed", files[i], n);
			json_decref(r);
		}
		free(buf);
	}
}

/* ---- versions ---- */

static void test_caps(void **state)
{
	static const struct {
		const char *out;
		int rc;
		const char *version;
		int minor, patch;
		bool json_stream, bidir, snd, rcv, idle, connect, udp_sum;
		int max_omit;
	} cases[] = {
		{"iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.1.0 #1 SMP x86_64\n", 0, "3.12", 12, 0, false, true, true, true,
		 true, true, true, 60},
		/* without a line saying Linux, no --snd-timeout (FreeBSD has no TCP_USER_TIMEOUT) */
		{"iperf 3.12 (cJSON 1.7.15)", 0, "3.12", 12, 0, false, true, false, true, true, true, true, 60},
		{"FreeBSD\niperf 3.12 (cJSON 1.7.15)\nFreeBSD h 14.1-RELEASE amd64\n", 0, "3.12", 12, 0, false, true,
		 false, true, true, true, true, 60},
		{"Linux\niperf 3.16 (cJSON 1.7.15)\n", 0, "3.16", 16, 0, false, true, true, true, true, true, true, 60},
		{"iperf 3.17.1 (cJSON 1.7.15)\nLinux h\n", 0, "3.17.1", 17, 1, true, true, true, true, true, true, true,
		 60},
		{"iperf 3.18 (cJSON 1.7.15)\nLinux h\n", 0, "3.18", 18, 0, true, true, true, true, true, true, true,
		 600},
		{"iperf 3.13-mt-beta2 (cJSON 1.7.15)\n", 0, "3.13-mt-beta2", 13, 0, false, true, false, true, true,
		 true, true, 60},
		{"iperf 3.9 (cJSON 1.7.13)\nLinux h\n", 0, "3.9", 9, 0, false, true, false, false, false, true, false,
		 60},
		{"iperf 3.6 (cJSON 1.5.2)\nLinux h\n", 0, "3.6", 6, 0, false, false, false, false, false, true, false,
		 60},
		{"iperf 3.1.3\nLinux h\n", 0, "3.1.3", 1, 3, false, false, false, false, false, false, false, 60},
		{"", TB_ERR_INVALID, "", 0, 0, false, false, false, false, false, false, false, 0},
		{"iperf version 2.1.9 (14 March 2023) pthreads", TB_ERR_INVALID, "", 0, 0, false, false, false, false,
		 false, false, false, 0},
		{"iperf 4.0 (cJSON 1.7.15)", TB_ERR_INVALID, "", 0, 0, false, false, false, false, false, false, false,
		 0},
		{"iperf 3", TB_ERR_INVALID, "", 0, 0, false, false, false, false, false, false, false, 0},
		{"iperf 3.x", TB_ERR_INVALID, "", 0, 0, false, false, false, false, false, false, false, 0},
		{"iperf3: command not found", TB_ERR_INVALID, "", 0, 0, false, false, false, false, false, false, false,
		 0},
	};
	struct tb_iperf_caps c;
	struct tb_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tb_error_clear(&err);
		if (tb_iperf_caps_parse(cases[i].out, &c, &err) != cases[i].rc)
			fail_msg("case %zu (%s): %s", i, cases[i].out, err.message);
		if (cases[i].rc != 0) {
			assert_string_equal(err.field, "version");
			assert_non_null(strstr(err.message, "not iperf3 3.x"));
			continue;
		}
		assert_string_equal(c.version, cases[i].version);
		assert_int_equal(c.major, 3);
		assert_int_equal(c.minor, cases[i].minor);
		assert_int_equal(c.patch, cases[i].patch);
		assert_int_equal(c.json_stream, cases[i].json_stream);
		assert_int_equal(c.bidir, cases[i].bidir);
		assert_int_equal(c.snd_timeout, cases[i].snd);
		assert_int_equal(c.rcv_timeout, cases[i].rcv);
		assert_int_equal(c.idle_timeout, cases[i].idle);
		assert_int_equal(c.connect_timeout, cases[i].connect);
		assert_int_equal(c.udp_sum_sent, cases[i].udp_sum);
		assert_int_equal(c.max_omit_s, cases[i].max_omit);
	}
	assert_int_equal(tb_iperf_caps_parse(NULL, &c, NULL), TB_ERR_INVALID);
}

/* ---- command lines ---- */

static struct tb_iperf_params base_params(void)
{
	struct tb_iperf_params p;

	memset(&p, 0, sizeof(p));
	p.proto = TB_IPERF_TCP;
	p.dir = TB_IPERF_FORWARD;
	p.duration_s = 10;
	p.parallel = 1;
	p.tos = -1;
	p.interval_s = 1;
	return p;
}

static void joined(const struct tb_argv *a, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	assert_true(a->n >= 0 && a->n <= TB_ARGV_MAX);
	assert_null(a->v[a->n]);
	for (int i = 0; i < a->n; i++) {
		assert_non_null(a->v[i]);
		used += (size_t)snprintf(out + used, len - used, "%s%s", i > 0 ? " " : "", a->v[i]);
		assert_true(used < len);
	}
}

enum caps_id { C312, C321, C36, C313, C316, C317, C3011 };

static void caps_of(enum caps_id id, struct tb_iperf_caps *c)
{
	static const char *const out[] = {NULL,
					  NULL,
					  "iperf 3.6 (cJSON 1.5.2)\nLinux h\n",
					  "iperf 3.1.3\nLinux h\n",
					  "iperf 3.16 (cJSON 1.7.15)\nLinux h\n",
					  "iperf 3.17 (cJSON 1.7.15)\nLinux h\n",
					  "iperf 3.0.11\nLinux h\n"};
	size_t len;

	if (id == C312 || id == C321) {
		char *buf = read_data(id == C312 ? "version_312.txt" : "version_321.txt", &len);

		assert_int_equal(tb_iperf_caps_parse(buf, c, NULL), 0);
		free(buf);
	} else {
		assert_int_equal(tb_iperf_caps_parse(out[id], c, NULL), 0);
	}
}

enum tweak {
	T_NONE,
	T_UDP,
	T_UDP_B100M,
	T_REVERSE,
	T_BIDIR,
	T_UDP_REVERSE,
	T_ALL,
	T_OMIT61,
	T_DURATION0,
	T_PARALLEL129,
	T_UDP_LEN65508,
	T_WINDOW_BIG,
	T_BITRATE_WORD,
	T_BITRATE_2DOT,
	T_CC_SHELL,
	T_TOS256,
	T_AFFINITY3,
	T_INTERVAL61,
	T_PROTO_BAD,
};

static struct tb_iperf_params tweaked(enum tweak t)
{
	struct tb_iperf_params p = base_params();

	switch (t) {
	case T_NONE: break;
	case T_UDP:
		p.proto = TB_IPERF_UDP;
		strcpy(p.bitrate, "0");
		break;
	case T_UDP_B100M:
		p.proto = TB_IPERF_UDP;
		strcpy(p.bitrate, "100M");
		p.length = 1400;
		break;
	case T_REVERSE: p.dir = TB_IPERF_REVERSE; break;
	case T_BIDIR: p.dir = TB_IPERF_BIDIR; break;
	case T_UDP_REVERSE:
		p.proto = TB_IPERF_UDP;
		p.dir = TB_IPERF_REVERSE;
		strcpy(p.bitrate, "0");
		break;
	case T_ALL:
		p.dir = TB_IPERF_BIDIR;
		p.duration_s = 30;
		p.omit_s = 2;
		p.parallel = 4;
		p.length = 131072;
		p.window = 4194304;
		strcpy(p.bitrate, "1.5G");
		strcpy(p.congestion, "bbr");
		p.tos = 184;
		p.zerocopy = true;
		strcpy(p.affinity, "1,2");
		p.interval_s = 2;
		break;
	case T_OMIT61: p.omit_s = 61; break;
	case T_DURATION0: p.duration_s = 0; break;
	case T_PARALLEL129: p.parallel = 129; break;
	case T_UDP_LEN65508:
		p.proto = TB_IPERF_UDP;
		p.length = 65508;
		break;
	case T_WINDOW_BIG: p.window = 536870913; break;
	case T_BITRATE_WORD: strcpy(p.bitrate, "fast"); break;
	case T_BITRATE_2DOT: strcpy(p.bitrate, "1.5.5"); break;
	case T_CC_SHELL: strcpy(p.congestion, "bbr;rm"); break;
	case T_TOS256: p.tos = 256; break;
	case T_AFFINITY3: strcpy(p.affinity, "1,2,3"); break;
	case T_INTERVAL61: p.interval_s = 61; break;
	case T_PROTO_BAD: p.proto = (enum tb_iperf_proto)7; break;
	}
	return p;
}

#define A312 "iperf3 -c 198.19.20.2 -p 5201 "
#define A321 A312

static void test_client_argv(void **state)
{
	static const struct {
		enum caps_id caps;
		enum tweak tweak;
		const char *want;  /* the argv joined by spaces, or NULL */
		const char *field; /* of the error when want is NULL */
	} cases[] = {
		{C312, T_NONE, A312 "-t 10 --connect-timeout 5000 --snd-timeout 10000 -J", NULL},
		{C312, T_UDP, A312 "-t 10 -u -b 0 --connect-timeout 5000 -J", NULL},
		{C312, T_UDP_B100M, A312 "-t 10 -u -b 100M -l 1400 --connect-timeout 5000 -J", NULL},
		{C312, T_REVERSE, A312 "-t 10 -R --connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 -J",
		 NULL},
		{C312, T_BIDIR, A312 "-t 10 --bidir --connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 -J",
		 NULL},
		{C312, T_UDP_REVERSE, A312 "-t 10 -u -b 0 -R --connect-timeout 5000 --rcv-timeout 30000 -J", NULL},
		{C312, T_ALL,
		 A312 "-t 30 -O 2 -b 1.5G --bidir -P 4 -l 131072 -w 4194304 -C bbr -S 184 -Z -A 1,2 -i 2 "
		      "--connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 -J",
		 NULL},
		{C321, T_NONE, A321 "-t 10 --connect-timeout 5000 --snd-timeout 10000 --json-stream", NULL},
		{C321, T_UDP, A321 "-t 10 -u -b 0 --connect-timeout 5000 --json-stream", NULL},
		{C321, T_REVERSE,
		 A321 "-t 10 -R --connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 --json-stream", NULL},
		{C321, T_BIDIR,
		 A321 "-t 10 --bidir --connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 --json-stream",
		 NULL},
		{C321, T_ALL,
		 A321 "-t 30 -O 2 -b 1.5G --bidir -P 4 -l 131072 -w 4194304 -C bbr -S 184 -Z -A 1,2 -i 2 "
		      "--connect-timeout 5000 --rcv-timeout 30000 --snd-timeout 10000 --json-stream",
		 NULL},
		/* --json-stream from 3.17 on */
		{C316, T_NONE, A312 "-t 10 --connect-timeout 5000 --snd-timeout 10000 -J", NULL},
		{C317, T_NONE, A312 "-t 10 --connect-timeout 5000 --snd-timeout 10000 --json-stream", NULL},
		/* --bidir from 3.7 on; 3.6 has --connect-timeout only */
		{C36, T_BIDIR, NULL, "direction"},
		{C36, T_REVERSE, A312 "-t 10 -R --connect-timeout 5000 -J", NULL},
		{C313, T_NONE, A312 "-t 10 -J", NULL},
		/* -O up to 60 before 3.18 */
		{C312, T_OMIT61, NULL, "omit_s"},
		{C321, T_OMIT61, A321 "-t 10 -O 61 --connect-timeout 5000 --snd-timeout 10000 --json-stream", NULL},
		{C312, T_DURATION0, NULL, "duration_s"},
		{C312, T_PARALLEL129, NULL, "parallel"},
		{C312, T_UDP_LEN65508, NULL, "length"},
		{C312, T_WINDOW_BIG, NULL, "window"},
		{C312, T_BITRATE_WORD, NULL, "bitrate"},
		{C312, T_BITRATE_2DOT, NULL, "bitrate"},
		{C312, T_CC_SHELL, NULL, "congestion"},
		{C312, T_TOS256, NULL, "tos"},
		{C312, T_AFFINITY3, NULL, "affinity"},
		{C312, T_INTERVAL61, NULL, "interval_s"},
		{C312, T_PROTO_BAD, NULL, "protocol"},
	};
	char got[TB_ARGV_BUF + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_iperf_caps caps;
		struct tb_iperf_params p = tweaked(cases[i].tweak);
		struct tb_argv a;
		struct tb_error err;
		int rc;

		caps_of(cases[i].caps, &caps);
		tb_error_clear(&err);
		rc = tb_iperf_client_argv(&caps, "198.19.20.2", 5201, &p, &a, &err);
		if (cases[i].want == NULL) {
			if (rc != TB_ERR_INVALID || strcmp(err.field, cases[i].field) != 0)
				fail_msg("case %zu: rc %d field \"%s\", want invalid \"%s\"", i, rc, err.field,
					 cases[i].field);
			assert_int_equal(a.n, 0);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: %s", i, err.message);
		joined(&a, got, sizeof(got));
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, got, cases[i].want);
	}
}

static void test_client_argv_address(void **state)
{
	static const struct {
		const char *addr;
		unsigned int port;
		const char *field; /* NULL: accepted */
	} cases[] = {
		{"198.19.20.2", 5201, NULL},
		{"fd00::2", 1, NULL},
		{"fe80::1%data0", 65535, NULL},
		{"right.lab", 5201, NULL},
		{"", 5201, "server_address"},
		{"a b", 5201, "server_address"},
		{"-oProxyCommand=x", 5201, "server_address"},
		{"$(reboot)", 5201, "server_address"},
		{"198.19.20.2", 0, "port"},
		{"198.19.20.2", 65536, "port"},
	};
	struct tb_iperf_caps caps;
	struct tb_iperf_params p = base_params();

	(void)state;
	caps_of(C312, &caps);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_argv a;
		struct tb_error err;
		int rc;

		tb_error_clear(&err);
		rc = tb_iperf_client_argv(&caps, cases[i].addr, cases[i].port, &p, &a, &err);
		if (cases[i].field == NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(a.v[2], cases[i].addr);
		} else if (rc != TB_ERR_INVALID || strcmp(err.field, cases[i].field) != 0) {
			fail_msg("%s:%u: rc %d field %s", cases[i].addr, cases[i].port, rc, err.field);
		}
	}
	assert_int_equal(tb_iperf_client_argv(&caps, NULL, 5201, &p, &(struct tb_argv){0}, NULL), TB_ERR_INVALID);
}

static void test_params_args(void **state)
{
	static const struct {
		enum tweak tweak;
		const char *want;
	} cases[] = {
		{T_NONE, "-t 10"},
		{T_UDP, "-t 10 -u -b 0"},
		{T_UDP_REVERSE, "-t 10 -u -b 0 -R"},
		{T_BIDIR, "-t 10 --bidir"},
		{T_ALL, "-t 30 -O 2 -b 1.5G --bidir -P 4 -l 131072 -w 4194304 -C bbr -S 184 -Z -A 1,2 -i 2"},
		/* no version known yet: -O 61 is for the client argv to refuse */
		{T_OMIT61, "-t 10 -O 61"},
		{T_DURATION0, NULL},
		{T_TOS256, NULL},
	};
	char got[TB_ARGV_BUF + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_iperf_params p = tweaked(cases[i].tweak);
		struct tb_argv a;
		int rc = tb_iperf_params_args(&p, &a, NULL);

		if (cases[i].want == NULL) {
			assert_int_equal(rc, TB_ERR_INVALID);
			continue;
		}
		assert_int_equal(rc, 0);
		joined(&a, got, sizeof(got));
		assert_string_equal(got, cases[i].want);
	}
	/* a zeroed interval_s counts as iperf3's default 1 */
	{
		struct tb_iperf_params p = base_params();
		struct tb_argv a;

		p.interval_s = 0;
		assert_int_equal(tb_iperf_params_args(&p, &a, NULL), 0);
		joined(&a, got, sizeof(got));
		assert_string_equal(got, "-t 10");
	}
}

static void test_server_argv(void **state)
{
	static const struct {
		enum caps_id caps;
		unsigned int port;
		int idle;
		const char *want; /* NULL: TB_ERR_INVALID */
	} cases[] = {
		{C312, 5201, 30, "iperf3 -s -1 -p 5201 --idle-timeout 30 --forceflush -i 1"},
		{C321, 5301, 30, "iperf3 -s -1 -p 5301 --idle-timeout 30 --forceflush -i 1"},
		{C312, 5201, 0, "iperf3 -s -1 -p 5201 --forceflush -i 1"},
		/* no --idle-timeout before 3.11 */
		{C36, 5201, 30, "iperf3 -s -1 -p 5201 --forceflush -i 1"},
		/* no --forceflush before 3.1.5 */
		{C313, 5201, 30, NULL},
		{C3011, 5201, 30, NULL},
		{C312, 0, 30, NULL},
		{C312, 70000, 30, NULL},
		{C312, 5201, -1, NULL},
	};
	char got[TB_ARGV_BUF + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_iperf_caps caps;
		struct tb_argv a;
		int rc;

		caps_of(cases[i].caps, &caps);
		rc = tb_iperf_server_argv(&caps, cases[i].port, cases[i].idle, &a, NULL);
		if (cases[i].want == NULL) {
			assert_int_equal(rc, TB_ERR_INVALID);
			continue;
		}
		assert_int_equal(rc, 0);
		joined(&a, got, sizeof(got));
		assert_string_equal(got, cases[i].want);
	}
}

/* ---- errors ---- */

static void test_classify(void **state)
{
	static const struct {
		const char *text;
		enum tb_iperf_errclass want;
	} cases[] = {
		{NULL, TB_IPERF_ERR_NONE},
		{"", TB_IPERF_ERR_NONE},
		{"the server is busy running a test. try again later", TB_IPERF_ERR_BUSY},
		{"iperf3: error - the server is busy running a test. try again later", TB_IPERF_ERR_BUSY},
		{"unable to connect to server: Connection refused", TB_IPERF_ERR_REFUSED},
		{"unable to connect to server - server may have stopped running or use a different port, firewall "
		 "issue, etc.: Connection refused",
		 TB_IPERF_ERR_REFUSED},
		{"iperf3: error - unable to connect to server: Connection refused", TB_IPERF_ERR_REFUSED},
		{"unable to connect to server: No route to host", TB_IPERF_ERR_OTHER},
		{"unable to connect to server: Connection timed out", TB_IPERF_ERR_TIMEOUT},
		{"interrupt - the client has terminated", TB_IPERF_ERR_INTERRUPT},
		{"interrupt - the client has terminated by signal Interrupt(2)", TB_IPERF_ERR_INTERRUPT},
		{"iperf3: interrupt - the client has terminated", TB_IPERF_ERR_INTERRUPT},
		{"interrupt - the server has terminated", TB_IPERF_ERR_INTERRUPT},
		{"the server has terminated", TB_IPERF_ERR_OTHER},
		{"the client has terminated", TB_IPERF_ERR_OTHER},
		{"idle timeout for receiving data", TB_IPERF_ERR_TIMEOUT},
		{"unable to write to stream socket: Connection timed out", TB_IPERF_ERR_TIMEOUT},
		{"unable to write to stream socket: Transport endpoint is not connected", TB_IPERF_ERR_OTHER},
		{"parameter error - client receive timeout is valid only in receiving mode", TB_IPERF_ERR_OTHER},
		{"receive timeout value is incorrect or not in range", TB_IPERF_ERR_OTHER},
		{"idle timeout parameter is not positive or larger than allowed limit", TB_IPERF_ERR_OTHER},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tb_iperf_classify(cases[i].text) != cases[i].want)
			fail_msg("\"%s\": class %d, want %d", cases[i].text ? cases[i].text : "(null)",
				 tb_iperf_classify(cases[i].text), cases[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_every_file),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_full_output),
		cmocka_unit_test(test_odd_inputs),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_client_argv),
		cmocka_unit_test(test_client_argv_address),
		cmocka_unit_test(test_params_args),
		cmocka_unit_test(test_server_argv),
		cmocka_unit_test(test_classify),
	};

	tb_test_data_dir("iperf3", data_dir, sizeof(data_dir));
	return cmocka_run_group_tests_name("iperf", tests, NULL, NULL);
}
