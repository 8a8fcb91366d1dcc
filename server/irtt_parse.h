/*
 * irtt_parse.h - the round trips of a latency stream beside a run (issue 20
 * item 7): irtt 0.9.0's per-packet lines (`seq=3 rtt=1.73ms rd=76µs ...`,
 * Go durations) or ping's (`64 bytes from A: icmp_seq=4 ttl=64 time=0.045
 * ms`), read as they come, grouped into bins of bin_s seconds by sequence
 * number: each bin is {t, n, lost, min, median, max, rtt: [...]} (t: the
 * bin's start in s since the stream's first packet; RTTs in ms; lost: the
 * sequence numbers of the bin that never came back, counted once a later
 * bin has begun or at the end up to the highest one seen).  And the summary
 * of a run's bins: median and p95 of the RTTs idle and under load.
 *
 * Pure: no I/O, no threads (a reader is used by one thread).
 */
#ifndef TB_IRTT_PARSE_H
#define TB_IRTT_PARSE_H

#include <jansson.h>
#include <stddef.h>

enum tb_rtt_tool { TB_RTT_IRTT, TB_RTT_PING };

/* One packet line: 1 with *seq and *rtt_ms set, 0 when the line is something
 * else (headers, the summary, an error). */
int tb_rtt_parse_line(enum tb_rtt_tool tool, const char *line, long *seq, double *rtt_ms);

/* A Go duration ("1.73ms", "76µs", "30ns", "1m2.5s") in ms: 0, or -1 when
 * it is not one. */
int tb_rtt_go_duration_ms(const char *s, size_t len, double *ms);

/* Receives each finished bin (owns it). */
typedef void (*tb_rtt_bin_fn)(void *cls, json_t *bin);

struct tb_rtt_reader;

/* A reader of a stream sending a packet every interval_s, binned by bin_s
 * (bin_s a whole multiple of interval_s).  NULL when out of memory. */
struct tb_rtt_reader *tb_rtt_reader_new(enum tb_rtt_tool tool, double interval_s, double bin_s, tb_rtt_bin_fn fn,
					void *cls);
/* Bytes of the stream's stdout, split anywhere. */
void tb_rtt_feed(struct tb_rtt_reader *rd, const char *data, size_t len);
/* The end: a last unterminated line and the open bin go out. */
void tb_rtt_finish(struct tb_rtt_reader *rd);
/* Packets received so far. */
long tb_rtt_received(const struct tb_rtt_reader *rd);
/* Free it (NULL allowed; nothing more goes out). */
void tb_rtt_reader_free(struct tb_rtt_reader *rd);

/* {n, lost, min, median, p95, max} (ms) of the "rtt" lists of an array of
 * bins; n 0 and the figures null when there is none.  NULL: out of memory. */
json_t *tb_rtt_phase_summary(const json_t *bins);

/* {"idle": phase summary, "load": phase summary, "median_ratio": load's
 * median / idle's (2 decimals; null when either is unknown)} of the two
 * phases' bins.  NULL: out of memory. */
json_t *tb_rtt_summary(const json_t *idle, const json_t *load);

#endif /* TB_IRTT_PARSE_H */
