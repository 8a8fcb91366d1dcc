/*
 * run_idle.h - the idle check before each run (issue 20 item 5): both ends'
 * load, softirq share and any stray traffic tool (iperf3, iperf, netperf,
 * netserver) are looked at; a busy end makes the run wait, re-checking
 * every second for at most the spec's idle.wait_s, then fail with the error
 * class "busy_host" whose message names the end and what was busy.  When it
 * starts to wait, a run.waiting event {matrix, run, seq, busy, wait_s} says
 * so; a run that waited keeps {waited_s, busy} as its summary's "idle".
 *
 * The spec's "idle" (matrix_spec.c checks its shape): false skips the
 * check; an object may give max_load (1-minute load average), and
 * max_softirq_percent (the share of all CPU time in softirq over a 0.25 s
 * window; FreeBSD has no softirq: its interrupt share), both unchecked
 * unless given, and wait_s (0..3600, default 30).  Strays are always
 * checked.  The first look is made by the run's own commands, before its
 * server starts and before its client's shell waits for the go
 * (run_idle_look_new); the run's server ("-p PORT", the run's port) is no
 * stray where the look may see it (an end that is both), and neither are the processes earlier runs of its matrix started
 * (their recorded pids: a server still exiting);
 * on Linux a process in another network namespace (a container, another sim
 * host on the same kernel) does not count either.
 *
 * Cost: the first look, none of its own (a few ms in each end's shell); a
 * look while waiting, one ssh command per end, both ends at once (a thread
 * for the server end); 0.25 s more when max_softirq_percent is set.
 *
 * The parser and the verdict are pure; run_idle_wait blocks (ssh, sleeps).
 */
#ifndef TB_RUN_IDLE_H
#define TB_RUN_IDLE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "error.h"

#define TB_IDLE_STRAYS_MAX 4

struct tb_idle_opts {
	bool enabled;
	double max_load;        /* < 0: not checked */
	double max_softirq_pct; /* < 0: not checked */
	int wait_s;
};

/* What one look at a host saw. */
struct tb_idle_seen {
	double load1;       /* 1-minute load average, -1: not known */
	double softirq_pct; /* -1: not measured */
	int nstrays;        /* all strays seen; the first TB_IDLE_STRAYS_MAX are kept */
	long stray_pid[TB_IDLE_STRAYS_MAX];
	char stray_args[TB_IDLE_STRAYS_MAX][96];
};

/* The options of a stored spec's "idle" (NULL: the defaults: on, strays
 * only, wait 30 s).  The spec was checked when it was stored. */
void tb_idle_opts_from_json(const json_t *idle, struct tb_idle_opts *out);

/* The remote command of one look (a constant string: nothing of a request
 * reaches it).  bsd: FreeBSD's sysctl vm.loadavg and kern.cp_times;
 * softirq: two CPU readings 0.25 s apart. */
const char *tb_idle_command(bool bsd, bool softirq);

/* Parse a look's output (sections "@load", "@cpu" (once or twice), "@procs"
 * of "pid args" lines).  TB_ERR_INVALID when the "@procs" section is
 * missing (the command did not run to its end). */
int tb_idle_parse(bool bsd, const char *text, struct tb_idle_seen *out, struct tb_error *err);

/* Drop from seen the strays listening on port (their args have "-p PORT"):
 * the run's own server, where a look may see it (run_idle_look_new). */
void tb_idle_drop_port(struct tb_idle_seen *seen, int port);

/* Drop from seen the strays whose pid is one of own[0..n) (processes this
 * matrix's earlier runs started on that host, say a server still exiting):
 * they are testbedd's, not strays. */
void tb_idle_drop_own(struct tb_idle_seen *seen, const long *own, int n);

/* Whether seen is busy under o; if so, a sentence naming what into msg:
 * "right: a stray iperf3 (pid 1234: iperf3 -s -p 5201) is running",
 * "left: load 3.20 > 1.00". */
bool tb_idle_busy(const struct tb_idle_opts *o, const struct tb_idle_seen *seen, const char *host, char *msg,
		  size_t len);

struct tb_services;
struct tb_run_ctl;
struct tb_run_row;
struct tb_run_host;

struct run_idle_result {
	const char *klass; /* NULL: both ends idle, or the check is off */
	char message[512]; /* the class's message; when it waited, what was busy */
	long waited_ms;    /* 0: idle at the first look */
};

/* The check for run r between ch and sh, with the options of r's matrix,
 * waiting while an end is busy (a look a second, wait_s at most; a stop
 * ends the wait as "canceled" or "interrupted").  A look that fails (ssh)
 * gives "ssh_error".  Blocks; logs a line when the run waited. */
void run_idle_wait(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *r,
		   const struct tb_run_host *ch, const struct tb_run_host *sh, struct run_idle_result *out);

/*
 * The first look at a run's ends, made by the run's own commands (no ssh
 * exec of its own): the server's exec and the client's gated shell run the
 * look's script first (tb_ssh_before, ssh.h), the server's before it
 * starts, the client's before its pid line.  Only when both ends are idle
 * is the client let go; else the attempt is stopped before its client and
 * the run goes through run_idle_wait (which waits, publishes run.waiting,
 * or fails the run) and starts again.
 *
 * run_idle_look_new: NULL when the matrix's spec has "idle": false (or no
 * memory: then run_idle_wait before the run, as before).
 * run_idle_look_before: what end side (0 client, 1 server) runs first.
 * run_idle_look_verdict: 1 both ends looked and are idle, 0 not both
 * looked yet, -1 one is busy or its look's output is not one (logged).
 * Called by one thread (the client's gate); the looks' ends come on others.
 * run_idle_look_free: after both execs ended; NULL ok.
 */
struct tb_ssh_before;
struct run_idle_look;
struct run_idle_look *run_idle_look_new(struct tb_services *sv, const struct tb_run_row *r,
					const struct tb_run_host *ch, const struct tb_run_host *sh);
void run_idle_look_before(struct run_idle_look *l, int side, struct tb_ssh_before *b);
int run_idle_look_verdict(struct run_idle_look *l);
void run_idle_look_free(struct run_idle_look *l);
/* For a look made while the run before still runs (its server started
 * ahead, run_early.h): whether the verdict reads the strays only (no
 * max_load or max_softirq_percent: a test's load would count), and that
 * run's port, whose processes are no strays either.  Before the looks. */
bool run_idle_look_strays_only(const struct run_idle_look *l);
void run_idle_look_also_port(struct run_idle_look *l, int port);

#endif /* TB_RUN_IDLE_H */
