/*
 * run_sample.h - CPU and memory samples of a host during a run (issue 20
 * item 1): the remote reader's command, the parsing of its output (Linux
 * /proc/stat and /proc/meminfo; FreeBSD `sysctl -n kern.cp_times` and
 * vm.stats), a sample from two readings, and a run's summary.
 *
 * The reader is one long-lived shell loop per host (over the run's ssh
 * session, stopped by its pid with the run): every second it prints a
 * frame, "@@tb-sample" on a line of its own, then the counters.  Counters
 * are cumulative ticks, so a sample is the difference of two frames: the
 * first frame gives none.
 *
 * Pure: no I/O, no locks; a reader is used by one thread.
 */
#ifndef TB_RUN_SAMPLE_H
#define TB_RUN_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

#define TB_SAMPLE_MAX_CPUS 256
#define TB_SAMPLE_FRAME_MAX 65536 /* bytes of one frame, at most (256 CPUs of /proc/stat fit) */

enum tb_sample_os { TB_SAMPLE_LINUX, TB_SAMPLE_FREEBSD };

/* Cumulative ticks of one CPU.  FreeBSD has no softirq (0). */
struct tb_cpu_ticks {
	uint64_t user, nice, system, interrupt, softirq, idle, iowait, steal;
};

struct tb_sample_frame {
	size_t ncpu;
	struct tb_cpu_ticks cpu[TB_SAMPLE_MAX_CPUS];
	uint64_t mem_total_kib, mem_available_kib; /* 0: not known */
};

/* The remote loop for os, printing a frame a second until killed (a
 * constant string: nothing of a request reaches it). */
const char *tb_sample_command(enum tb_sample_os os);

/* Parse one frame's text (without its marker line).  Linux: the "cpuN"
 * lines of /proc/stat and MemTotal/MemAvailable of /proc/meminfo.
 * FreeBSD: the kern.cp_times line (5 counters per CPU: user nice system
 * interrupt idle, sysctl(8)) and "name: value" lines of
 * vm.stats.vm.v_page_count, v_free_count, v_inactive_count and hw.pagesize
 * (available = free + inactive pages).  TB_ERR_INVALID when no CPU is found. */
int tb_sample_parse(enum tb_sample_os os, const char *text, struct tb_sample_frame *out, struct tb_error *err);

/* A sample from two frames: {"cpu": [{"user","system","interrupt",
 * "softirq","idle"} in % per core (nice counts as user, iowait as idle,
 * steal as system)], "busiest": core, "mem": {"total_kib",
 * "available_kib", "used_pct"}}.  NULL when the frames do not match (CPU
 * count changed) or on no memory.  The caller owns the result. */
json_t *tb_sample_delta(const struct tb_sample_frame *prev, const struct tb_sample_frame *cur);

/* A reader of one host's output stream: feed it bytes as they come;
 * each complete frame after the first gives a sample to on_sample (the
 * reference is the callee's).  Frames that do not parse are skipped. */
typedef void (*tb_sample_fn)(void *cls, json_t *sample);
struct tb_sample_reader;
struct tb_sample_reader *tb_sample_reader_new(enum tb_sample_os os, tb_sample_fn on_sample, void *cls);
void tb_sample_feed(struct tb_sample_reader *r, const char *data, size_t len);
void tb_sample_reader_free(struct tb_sample_reader *r);

/* A run's summary of one host's samples (an array of tb_sample_delta's
 * objects): {"samples": n, "cpu": [{"busy_mean","busy_max"} per core],
 * "busiest": core of the highest mean busy, "busiest_mean" and
 * "busiest_max" its mean and max, "busy_mean": the mean of all cores,
 * "interrupt_share": % of busy time in interrupt and softirq,
 * "mem_used_max_pct"}; means cut to two decimals.  The one place a run's
 * CPU figures are computed (run_load.c takes them for results, CSV and
 * A/B).  NULL when empty. */
json_t *tb_sample_summary(const json_t *samples);

#endif /* TB_RUN_SAMPLE_H */
