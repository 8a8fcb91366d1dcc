/*
 * netperf.h - netperf 2.7 as testbedd drives it: its version, the command
 * lines of a run's server (netserver) and client, and a parser of the
 * client's omni output (`-P 0 -- -o SELECTORS`: one line of comma-separated
 * values) into iperf.h's normalised shapes (end.sender, end.receiver), so
 * that a matrix compares netperf with iperf3 and iperf2 on the same fields.
 *
 * netperf is not packaged in Debian 12 (non-free in older releases): a host
 * that has it says so in `netperf -V`; nothing here ran against a real
 * netperf on this machine.  The command lines follow netperf's manual
 * (2.7.0: the global options -H -p -t -l -f -P -4 -6 -T, the omni test
 * options after "--": -o -m -s -S -Y -K), and the parser is tested on
 * output built from the documented omni format (tests/unit/test_netperf.c
 * says so).
 *
 * Tests: proto tcp forward is TCP_STREAM, reverse TCP_MAERTS (the server
 * sends), udp forward UDP_STREAM (as fast as netperf sends: it has no rate
 * without --enable-intervals).  netperf's figures come at the end only (its
 * interim results need --enable-demo): a run has no live intervals.
 *
 * Request/response (the tool "netperf-rr"): TCP_RR or UDP_RR, forward only
 * (the client asks, the server answers), requests and responses of
 * iperf.length bytes (netperf's default 1), its figures the transaction rate
 * and the latency of one (mean, 50th, 90th, 99th percentile, in
 * microseconds: omni's MEAN_LATENCY, P50_LATENCY, P90_LATENCY, P99_LATENCY).
 *
 * Pure: no I/O, no threads, no globals.
 */
#ifndef TB_NETPERF_H
#define TB_NETPERF_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "iperf.h"

/* The omni selectors the client asks for, in the order of its output. */
#define TB_NETPERF_SELECTORS                                                                             \
	"THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME,PROTOCOL,DIRECTION,LOCAL_BYTES_SENT,LOCAL_SEND_CALLS," \
	"LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT,REMOTE_BYTES_RECVD,REMOTE_RECV_CALLS,LOCAL_TRANSPORT_RETRANS"
/* The same for request/response tests. */
#define TB_NETPERF_RR_SELECTORS                                                                        \
	"THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME,PROTOCOL,TRANSACTION_RATE,MEAN_LATENCY,P50_LATENCY," \
	"P90_LATENCY,P99_LATENCY,REQUEST_SIZE,RESPONSE_SIZE,LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD"
/* UDP_STREAM's datagram when the spec gives no length (iperf2's IPv4 one). */
#define TB_NETPERF_UDP_LEN 1470L

/* `netperf -V` ("Netperf version 2.7.0") -> "2.7.0".  TB_ERR_INVALID when
 * it is not netperf. */
int tb_netperf_version_parse(const char *text, char *out, size_t len, struct tb_error *err);

/* The test of p: "TCP_STREAM", "TCP_MAERTS", "UDP_STREAM"; NULL with
 * TB_ERR_INVALID naming the field netperf cannot do (udp reverse, bidir). */
const char *tb_netperf_test(const struct tb_iperf_params *p, struct tb_error *err);

/* The request/response test of p: "TCP_RR", "UDP_RR"; NULL with
 * TB_ERR_INVALID naming direction when it is not forward. */
const char *tb_netperf_rr_test(const struct tb_iperf_params *p, struct tb_error *err);

/* `netserver -D -p PORT [-6]` (-D: in the foreground, stopped by pid). */
int tb_netperf_server_argv(const struct tb_iperf_params *p, unsigned int port, struct tb_argv *out,
			   struct tb_error *err);
/* `netperf -H ADDR -p PORT <tb_netperf_params_args>`. */
int tb_netperf_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			   struct tb_error *err);
/* `-t TEST -l T -f k -P 0 [-6] [-T L,R] -- -o SELECTORS [-m LEN] [-s W -S W]
 * [-Y TOS,TOS] [-K CC]`: affinity "n" or "n,m" is -T (netperf's local,remote
 * CPUs, as iperf3's -A), tos is -Y, congestion -K.  TB_ERR_INVALID naming
 * the field netperf cannot do here: direction bidir, udp reverse, parallel
 * over 1, omit_s, zerocopy, a bitrate. */
int tb_netperf_params_args(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);

/* `-t TCP_RR|UDP_RR -l T -P 0 [-6] [-T L,R] -- -o RR_SELECTORS [-r L,L]
 * [-s W -S W] [-Y TOS,TOS] [-K CC]`: what tb_netperf_params_args refuses,
 * and any direction but forward. */
int tb_netperf_rr_params_args(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);
/* `netperf -H ADDR -p PORT <tb_netperf_rr_params_args>`. */
int tb_netperf_rr_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			      struct tb_error *err);

/* The client's stdout (all of it) -> *result: {"intervals": [], "end":
 * {"sender": {bytes, bits_per_second, seconds[, retransmits][, packets]},
 * "receiver": {bytes, bits_per_second, seconds[, packets, lost_packets,
 * lost_percent]}} or null, "error": the first line that is not the values
 * (netperf's complaint) or null, "connected": 1 when a values line was
 * read, "cookie": null, "version": null}.  The values line is the last one
 * with as many fields as TB_NETPERF_SELECTORS; a header line of the
 * selectors' names is skipped.  Which end sent comes from DIRECTION (Send:
 * the client, Receive: the server) and the bytes: bits_per_second from the
 * bytes over ELAPSED_TIME.  Never fails on content; TB_ERR_NOMEM only. */
int tb_netperf_parse(const char *text, size_t len, json_t **result, struct tb_error *err);

/* The same for a request/response test (TB_NETPERF_RR_SELECTORS): "end"
 * {"sender": {bytes (the requests), bits_per_second, seconds}, "receiver":
 * {bytes (the responses), ...}, "rr": {"transactions_per_s",
 * "mean_latency_us", "p50_latency_us", "p90_latency_us", "p99_latency_us",
 * "request_bytes", "response_bytes"}} (a figure netperf printed as -1, not
 * measured, is null). */
int tb_netperf_rr_parse(const char *text, size_t len, json_t **result, struct tb_error *err);

#endif /* TB_NETPERF_H */
