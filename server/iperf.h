/*
 * iperf.h - iperf3 as testbedd drives it: what a version can do, the
 * command lines of a run's server and client, and parsers for everything
 * iperf3 prints (3.12 text and -J, 3.17+ --json-stream), normalised to one
 * JSON shape so that the store, the API and the pages never care which
 * version ran.  facts.md's iperf3 section is what this rests on.
 *
 * Pure: no I/O, no threads, no globals.  Every parser takes bytes as they
 * come and never crashes on truncated or garbage input (fuzzed in
 * tests/unit/test_iperf.c): what it cannot read is TB_ERR_INVALID with a
 * message, which the runner stores as error class parse_error.
 *
 * Ownership: json_t values returned through out-parameters or callbacks are
 * new references the receiver owns.  struct tb_argv owns its strings.
 *
 * ---- The normalised shapes (api/openapi.yaml: IperfInterval, IperfEnd) ----
 *
 * interval: {"start":0.0,"end":1.0,"omitted":false,
 *            "sum":{SIDE}, "streams":[{"socket":5, SIDE...}, ...],
 *            "sum_reverse":{SIDE}  (only --bidir: the reverse direction)}
 * SIDE:     {"bytes":N, "bits_per_second":X, "sender":true|false,
 *            TCP sender: "retransmits":N, "snd_cwnd":N (bytes), "rtt_us":N
 *            (streams only; absent where iperf3 does not say),
 *            UDP receiver: "jitter_ms":X, "lost_packets":N, "packets":N,
 *            "lost_percent":X; UDP sender: "packets":N}
 * end:      {"sender":{"bytes","bits_per_second","seconds",
 *                      TCP: "retransmits"?, UDP: "packets"},
 *            "receiver":{"bytes","bits_per_second","seconds",
 *                        UDP: "jitter_ms","lost_packets","packets","lost_percent"},
 *            "sender_reverse":{...}, "receiver_reverse":{...}   (bidir only)
 *            "cpu":{"host_total":X,"host_user":X,"host_system":X,
 *                   "remote_total":X,"remote_user":X,"remote_system":X},
 *            "sender_tcp_congestion":"cubic", "receiver_tcp_congestion":"cubic"}
 *           For TCP, sender = end.sum_sent, receiver = end.sum_received; for
 *           UDP the same keys (3.11+), never the ambiguous end.sum.  Keys
 *           iperf3 did not print are absent (not 0).
 * result:   {"cookie":"...", "version":"iperf 3.12", "system_info":"Linux ...",
 *            "timesecs":N, "test_start":{...as iperf3 prints it...},
 *            "connected":N  (how many streams start.connected lists: 0
 *            when none connected, e.g. a UDP connect datagram lost),
 *            "intervals":[interval...], "end":end or null,
 *            "error":"iperf3's error text" or null,
 *            "server_output":result  (only with --get-server-output: the
 *            server's -J object or text, parsed the same way)}
 *           Missing start fields are null; "end" is null when iperf3's end
 *           is {} (the test never ran).  A sum of 0 bytes in 0 seconds with
 *           a null bits_per_second (cJSON's NaN: iperf3 stopped before a
 *           stream connected) is left out of end, not a parse error.
 *
 * Two things every parser does to what iperf3 prints:
 *  - an interval equal to the one before it (same start, end, bytes and
 *    omitted) is dropped: on an error iperf3 3.12 and 3.21 print the last
 *    interval again (-J, --json-stream and a server's text alike);
 *  - error texts are iperf3's message as -J has it: text output's
 *    "iperf3: error - " (and "iperf3: ") in front is taken off, so
 *    "iperf3: error - the server is busy ..." and -J's "the server is busy
 *    ..." are the same string; "interrupt - ..." stays as it is.
 */
#ifndef TB_IPERF_H
#define TB_IPERF_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "error.h"

/* ---- versions ---- */

struct tb_iperf_caps {
	int major, minor, patch; /* 3, 12, 0 */
	char version[32];        /* "3.12" as printed */
	bool json_stream;        /* --json-stream: 3.17+ */
	bool bidir;              /* --bidir: 3.7+ */
	bool snd_timeout;        /* --snd-timeout: 3.12+ */
	bool rcv_timeout;        /* --rcv-timeout: 3.10+ */
	bool idle_timeout;       /* -s -1 --idle-timeout: 3.11+ */
	bool connect_timeout;    /* --connect-timeout: 3.2+ */
	bool udp_sum_sent;       /* end.sum_sent/sum_received for UDP: 3.11+ */
	int max_omit_s;          /* -O limit: 60 before 3.18, then 600 */
};

/* The output of `iperf3 --version` (or of `uname -s; iperf3 --version`):
 * the line "iperf 3.12 (cJSON 1.7.15)" anywhere in it gives the version.
 * snd_timeout also needs a line saying Linux (the uname line --version
 * prints second, or `uname -s`): iperf3 has --snd-timeout only where
 * TCP_USER_TIMEOUT exists, and calls it an unrecognized option elsewhere.
 * TB_ERR_INVALID naming what it got when it is not iperf3 3.x. */
int tb_iperf_caps_parse(const char *version_output, struct tb_iperf_caps *caps, struct tb_error *err);

/* ---- command lines ---- */

enum tb_iperf_proto { TB_IPERF_TCP, TB_IPERF_UDP };
enum tb_iperf_dir { TB_IPERF_FORWARD, TB_IPERF_REVERSE, TB_IPERF_BIDIR };

/* Every iperf3 parameter a matrix can set for one run.  "Unset" values
 * leave iperf3's default (and the option off the command line). */
struct tb_iperf_params {
	enum tb_iperf_proto proto;
	enum tb_iperf_dir dir;
	int duration_s;      /* -t, 1..86400 */
	int omit_s;          /* -O, 0 = unset */
	int parallel;        /* -P, 1 = unset */
	long length;         /* -l bytes, 0 = unset */
	long window;         /* -w bytes, 0 = unset */
	char bitrate[24];    /* -b as given ("0", "100M", "1.5G"); "" = unset */
	char congestion[32]; /* -C, "" = unset */
	int tos;             /* -S, -1 = unset */
	bool zerocopy;       /* -Z */
	char affinity[24];   /* -A "n" or "n,m", "" = unset */
	int interval_s;      /* -i, 1 */
	int tool;            /* traffic.h's enum tb_tool: 0 iperf3 (the default), 1 iperf2 */
	int family;          /* address family of the run: 4 (0 counts as 4) or 6 (iperf3 -6, iperf2 -V) */
};

/* A NULL-terminated argv that owns its strings (fixed size: no cleanup).
 * v[] points into buf: pass it by pointer, never copy it by value.  v[0] is
 * "iperf3" in a server or client argv, the first option in params_args. */
#define TB_ARGV_MAX 48
#define TB_ARGV_BUF 1024
struct tb_argv {
	const char *v[TB_ARGV_MAX + 1];
	int n;
	char buf[TB_ARGV_BUF];
	size_t used;
};

/* Client timeouts testbedd passes (ms).  --rcv-timeout is 30 s, not less, so
 * that a slow UDP -R run (one datagram every few seconds) does not trip it. */
#define TB_IPERF_CONNECT_TIMEOUT_MS 5000
#define TB_IPERF_RCV_TIMEOUT_MS 30000
#define TB_IPERF_SND_TIMEOUT_MS 10000

/* `iperf3 -s -1 -p PORT --idle-timeout IDLE --forceflush -i 1` (text: the
 * receiver's or sender's intervals stream live over ssh on 3.12;
 * --idle-timeout only where caps has it and IDLE > 0).  Never -D.
 * TB_ERR_INVALID before 3.1.5 (no --forceflush). */
int tb_iperf_server_argv(const struct tb_iperf_caps *caps, unsigned int port, int idle_timeout_s, struct tb_argv *out,
			 struct tb_error *err);

/* `iperf3 -c ADDR -p PORT <tb_iperf_params_args>
 * --connect-timeout MS [--rcv-timeout MS] [--snd-timeout MS] -J|--json-stream`
 * for the client: --json-stream on 3.17+, else -J; the timeouts the version
 * has: --rcv-timeout only when the client receives (-R, --bidir: iperf3
 * refuses it otherwise), --snd-timeout only for TCP.  TB_ERR_INVALID when
 * the run needs what the version lacks (--bidir before 3.7, -O over
 * caps->max_omit_s).  Options in a fixed order, so that equal runs have
 * equal command lines. */
int tb_iperf_client_argv(const struct tb_iperf_caps *caps, const char *server_addr, unsigned int port,
			 const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);

/* The client options of p alone, for plans made before any version is
 * known: `-t 10 -u -b 0 -R` (no address, port or output options).  Order:
 * -t -O -u -b -R|--bidir -P -l -w -C -S -Z -A -i -6; -i only when interval_s
 * is over 1 (0 counts as 1), -6 only when family is 6.  TB_ERR_INVALID naming the field for a value
 * iperf3 would refuse (window over 512 MiB, UDP length over 65507, ...). */
int tb_iperf_params_args(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);

/* For the other traffic tools' command lines (iperf2.c): p checked as
 * tb_iperf_params_args checks it; a word appended to a (-1: a is full);
 * a emptied. */
int tb_iperf_params_check(const struct tb_iperf_params *p, struct tb_error *err);
int tb_argv_add(struct tb_argv *a, const char *word);
void tb_argv_reset(struct tb_argv *a);

/* ---- parsers ---- */

/* A whole -J document (3.12 or later) -> result.  TB_ERR_INVALID for
 * anything that is not an iperf3 JSON object (empty, truncated, garbage). */
int tb_iperf_parse_json(const char *text, size_t len, json_t **result, struct tb_error *err);

/*
 * Incremental parsers: feed bytes as they arrive (any chunking), get a
 * callback per normalised interval as soon as it is complete, and the
 * whole result at the end.
 */
typedef void (*tb_iperf_interval_fn)(void *cls, json_t *interval /* stolen */);

struct tb_iperf_stream; /* --json-stream client output */
struct tb_iperf_text;   /* text output of a server (or client) with --forceflush */

/* NULL when out of memory.  on_interval may be NULL. */
struct tb_iperf_stream *tb_iperf_stream_new(tb_iperf_interval_fn on_interval, void *cls);
void tb_iperf_stream_feed(struct tb_iperf_stream *s, const char *data, size_t len);
/* After the last byte: the result (as tb_iperf_parse_json's), or
 * TB_ERR_INVALID when no start/end/error event arrived or a line was not
 * JSON (a last line cut short counts).  Bytes after the end event are not
 * read (3.20+ --json-stream-full-output prints the whole -J object there).
 * Frees s. */
int tb_iperf_stream_finish(struct tb_iperf_stream *s, json_t **result, struct tb_error *err);

/* parallel: the -P of the run (the text has one line per stream and a
 * [SUM] line when parallel > 1); bidir: the run used --bidir. */
struct tb_iperf_text *tb_iperf_text_new(int parallel, bool bidir, tb_iperf_interval_fn on_interval, void *cls);
void tb_iperf_text_feed(struct tb_iperf_text *t, const char *data, size_t len);
/* After the last byte: {"intervals":[...], "end":{sender/receiver from the
 * summary lines} or null, "error": the first "iperf3: ..." line's text
 * (see above) or null, "cookie": null (text has none)}.  Frees t.  Never
 * fails on content: lines it does not know are skipped (a server prints
 * headers, banners and "Server listening" lines).  Text has no rtt, cpu or
 * congestion; its bytes are the printed 3 digits (KBytes.. are 1024-based,
 * Kbits/sec.. 1000-based), lost_percent is computed from lost/total.  Which
 * side a line is: [TX-x]/[RX-x] with --bidir, else a TCP line with a Retr
 * column is the sender's and a UDP line with jitter the receiver's; with
 * --bidir sum is client->server ([TX-C], [RX-S]) and sum_reverse the other
 * way.  Stdout and stderr may be fed merged (errors are on stderr).  A
 * line over 4 KiB is skipped. */
int tb_iperf_text_finish(struct tb_iperf_text *t, json_t **result, struct tb_error *err);

/* ---- errors ---- */

enum tb_iperf_errclass {
	TB_IPERF_ERR_NONE,      /* no error */
	TB_IPERF_ERR_BUSY,      /* "the server is busy running a test" */
	TB_IPERF_ERR_REFUSED,   /* "unable to connect to server ... Connection refused" */
	TB_IPERF_ERR_INTERRUPT, /* "interrupt - the client has terminated" (SIGINT) */
	TB_IPERF_ERR_TIMEOUT,   /* connect/receive/send timeouts, "idle timeout" */
	TB_IPERF_ERR_OTHER,     /* anything else iperf3 said ("the server has terminated", ...) */
};

/* The class of iperf3's error text (NULL or "" -> NONE); both 3.12 and 3.21
 * wordings, with or without text output's "iperf3: error - " in front.
 * INTERRUPT is any "interrupt - ...": also a server's own "interrupt - the
 * server has terminated" (SIGTERM); TIMEOUT is --rcv-timeout's "idle timeout
 * for receiving data" and any "... timed out" (--connect-timeout,
 * --snd-timeout). */
enum tb_iperf_errclass tb_iperf_classify(const char *error_text);

#endif /* TB_IPERF_H */
