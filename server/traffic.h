/*
 * traffic.h - the traffic tools a run can use, as drivers (like power.h's):
 * what is iperf3's or iperf2's own (its command lines, its parsers, how the
 * run's server is heard to listen, what its exit status and output mean) is
 * behind struct tb_traffic_driver; run_exec.c and run_server.c drive any of
 * them the same way.  Adding a tool is one file that fills a driver and one
 * line in tb_traffic_driver_for() (traffic_drivers.c).
 *
 * Pure: no I/O, no threads, no globals but the const drivers.
 *
 * Ownership: parser objects are the caller's until finish (which frees
 * them); results are new references the caller owns.
 */
#ifndef TB_TRAFFIC_H
#define TB_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "iperf.h"

/* What a host has of each tool (tb_run_host_prepare learns it). */
struct tb_tool_caps {
	bool has_iperf3;
	struct tb_iperf_caps iperf3; /* valid when has_iperf3 */
	char iperf2[32];             /* "2.1.8" from `iperf -v`, "" when absent */
	char netperf[32];            /* "2.7.0" from `netperf -V`, "" when absent */
};

/* One side's output parser: fed as bytes arrive, finished once. */
struct tb_traffic_parser;

struct tb_traffic_driver {
	const char *name;   /* "iperf3", "iperf2", "netperf", "netperf-rr": the spec's "tool" */
	const char *binary; /* the client's process name on the host ("iperf3", "iperf", "netperf") */
	/* The server may stay after its test (iperf2 serves until stopped):
	 * the run stops it by pid once the server printed its summary. */
	bool server_stays;
	/* The client's end holds only its own side (iperf2): the run takes the
	 * other side's end from the server's result. */
	bool merge_ends;
	/* Whether caps has the tool; else a sentence saying what to install. */
	bool (*available)(const struct tb_tool_caps *caps, char *why, size_t len);
	/* The version as the run stores it ("3.12", "2.1.8"). */
	const char *(*version)(const struct tb_tool_caps *caps);
	/* Server and client argv (v[0] the binary); TB_ERR_INVALID naming the
	 * field the tool cannot do. */
	int (*server_argv)(const struct tb_tool_caps *caps, const struct tb_iperf_params *p, unsigned int port,
			   int idle_timeout_s, struct tb_argv *out, struct tb_error *err);
	int (*client_argv)(const struct tb_tool_caps *caps, const char *addr, unsigned int port,
			   const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);
	/* The client options of p alone, for plans (no address or port). */
	int (*params_args)(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);
	/* How the run knows the server listens, one of the two: listen_line,
	 * what the server prints at the start of a line once it listens (iperf3
	 * writes "Server listening on PORT" right after listen(2), flushed by
	 * --forceflush), else listen_check, a shell test polled on the server
	 * host until true (ss on Linux, sockstat on FreeBSD; a few forks a
	 * round), never a connection to it. */
	const char *listen_line;
	void (*listen_check)(bool bsd, const struct tb_iperf_params *p, unsigned int port, char *buf, size_t len);
	/* Parsers of one side's output: live intervals to on_interval (may be
	 * NULL), the whole result at finish (all: every stdout byte, for a
	 * tool that parses at the end).  client: the client's side. */
	struct tb_traffic_parser *(*parser_new)(const struct tb_tool_caps *caps, const struct tb_iperf_params *p,
						bool client, tb_iperf_interval_fn on_interval, void *cls);
	void (*parser_feed)(struct tb_traffic_parser *ps, const char *data, size_t len);
	/* Whether the side printed its summary (the end of its test). */
	bool (*parser_done)(struct tb_traffic_parser *ps);
	/* Frees ps; TB_ERR_INVALID when the output is not the tool's. */
	int (*parser_finish)(struct tb_traffic_parser *ps, const char *all, size_t len, json_t **result,
			     struct tb_error *err);
	/* The error class of a client's parsed result ("busy", "refused",
	 * "timeout", "interrupted", "iperf_error"; NULL: none) with a message;
	 * *retry when trying again may help (a busy server). */
	const char *(*error_class)(const json_t *result, char *msg, size_t len, bool *retry);
};

/* netperf-rr: netperf's request/response test (TCP_RR, UDP_RR). */
enum tb_tool { TB_TOOL_IPERF3 = 0, TB_TOOL_IPERF2 = 1, TB_TOOL_NETPERF = 2, TB_TOOL_NETPERF_RR = 3 };
#define TB_TOOL_COUNT 4

extern const struct tb_traffic_driver tb_traffic_iperf3;
extern const struct tb_traffic_driver tb_traffic_iperf2;
extern const struct tb_traffic_driver tb_traffic_netperf;
extern const struct tb_traffic_driver tb_traffic_netperf_rr;

/* The driver of tool (NULL for a value that is none). */
const struct tb_traffic_driver *tb_traffic_driver_for(int tool);
/* "iperf3", "iperf2" (NULL: none) and back (-1: none). */
const char *tb_tool_name(int tool);
int tb_tool_parse(const char *name);

#endif /* TB_TRAFFIC_H */
