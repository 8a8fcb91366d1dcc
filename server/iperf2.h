/*
 * iperf2.h - iperf 2 (Debian 12's `iperf` 2.1.8) as testbedd drives it: its
 * version, the command lines of a run's server and client, and a parser of
 * its `-e -i 1` text into iperf.h's normalised shapes (interval, end,
 * result), so that a matrix compares iperf2 with iperf3 on the same fields.
 * facts.md's iperf2 part and tests/data/iperf2/ are what this rests on.
 *
 * Pure: no I/O, no threads, no globals.  The parser never fails on content:
 * lines it does not know are skipped.
 *
 * Traps designed around:
 *  - iperf2 exits 0 when its connection is refused ("tcp connect failed:
 *    Connection refused"): the result's "error" carries that line and the
 *    driver classes it "refused", whatever the exit status;
 *  - a UDP server reads -l bytes (1470 by default) and counts only what it
 *    read: the server is always given the client's -l (1470 when unset);
 *  - iperf2's -b K/M/G are 1024-based where iperf3's are 1000-based: the
 *    client gets the rate in plain bits/s; "0" (unlimited) is refused by
 *    iperf2 for UDP ("IPG delay target of inf"): it gets 100 Gbit/s, as fast
 *    as it can send.
 */
#ifndef TB_IPERF2_H
#define TB_IPERF2_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "iperf.h"

/* The output of `iperf -v` ("iperf version 2.1.8 (12 August 2022)
 * pthreads"; it prints to stderr) -> "2.1.8".  TB_ERR_INVALID when it is
 * not iperf 2. */
int tb_iperf2_version_parse(const char *text, char *out, size_t len, struct tb_error *err);

/* `iperf -s [-u] [-l LEN] [-w WIN] -i 1 -e -p PORT [-V]`: -l is the client's
 * (UDP: 1470 when unset, 1450 over IPv6); -V when family is 6. */
int tb_iperf2_server_argv(const struct tb_iperf_params *p, unsigned int port, struct tb_argv *out,
			  struct tb_error *err);
/* `iperf -c ADDR -p PORT <tb_iperf2_params_args>`. */
int tb_iperf2_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			  struct tb_error *err);
/* `-t T -i 1 -e [-u] [-b BPS] [-l LEN] [-w WIN] [-R] [-P N] [-S TOS] [-Z CC] [-V]`
 * (-V: family 6).
 * TB_ERR_INVALID naming the field iperf2 cannot do here: direction bidir,
 * omit_s, zerocopy, affinity. */
int tb_iperf2_params_args(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err);

/*
 * The text of a client or server run with `-e -i 1`, fed as it arrives.
 * A line's side comes from the column header above it: "Write/Err" is the
 * sender's (TCP with Rtry and Cwnd/RTT, UDP with PPS), "Reads=Dist" and
 * "Jitter Lost/Total" the receiver's.  A line from 0 of a stream (or of
 * [SUM]) already seen is its summary, as is the line after "Server Report:"
 * (a UDP client's view of the receiver).  With parallel > 1 an interval is
 * emitted at its [SUM] line, with the streams before it.
 */
struct tb_iperf2_text;

/* interval_s: the -i given (a first line from 0 longer than 1.5 of it is a
 * summary: a side that printed no interval). */
struct tb_iperf2_text *tb_iperf2_text_new(int parallel, int interval_s, tb_iperf_interval_fn on_interval, void *cls);
void tb_iperf2_text_feed(struct tb_iperf2_text *t, const char *data, size_t len);
/* Whether a summary line was read (the side's test is over). */
bool tb_iperf2_text_done(const struct tb_iperf2_text *t);
/* {"intervals":[...], "end":{"sender"?,"receiver"?} or null, "error": the
 * first line saying "failed" or "ERROR" or null, "connected": how many
 * "connected with" lines, "cookie": null, "version": null}.  Frees t. */
int tb_iperf2_text_finish(struct tb_iperf2_text *t, json_t **result, struct tb_error *err);

#endif /* TB_IPERF2_H */
