/*
 * proc.h - run a local program safely from a multi-threaded daemon.
 *
 * testbedd runs a few local tools (ipmitool, etherwake) while it holds
 * sockets, a database and other threads.  tb_proc_run is the one way to do
 * it, so that every run has the same guarantees:
 *
 *  - argv only, never a shell; argv[0] is looked up in the fixed PATH
 *    TB_PROC_PATH (not the daemon's PATH) and run with execve;
 *  - the child's environment is exactly PATH=TB_PROC_PATH, LC_ALL=C and
 *    env_add: nothing of the daemon's environment leaks into it, and a
 *    secret given in env_add ("IPMI_PASSWORD=...") is in the child's
 *    environment only, never on a command line (/proc/PID/cmdline, ps);
 *  - stdin is /dev/null; stdout and stderr are captured separately, each
 *    bounded (the rest is read and dropped); no other descriptor of the
 *    daemon reaches the child, whether or not it was opened close-on-exec;
 *  - the signal mask and ignored signals (the daemon blocks SIGTERM and
 *    ignores SIGPIPE) are reset to the defaults in the child;
 *  - the child leads its own process group.  At the deadline (or a cancel)
 *    the whole group gets SIGTERM and, TB_PROC_KILL_GRACE_MS later, SIGKILL.
 *    When the child has ended, by itself or not, whatever it left in its
 *    group gets SIGKILL: a command never outlives its call (processes that
 *    left the group with setsid survive, as with any tool);
 *  - the child is always reaped (no zombies), also on errors.
 *
 * Ownership: argv, env_add and cancel stay the caller's and are not kept.
 * res->out / res->err are malloc'd by tb_proc_run and released with
 * tb_proc_result_free.  Thread-safe: any number of threads may call
 * tb_proc_run at once (it uses no global state and only async-signal-safe
 * calls between fork and exec).  It does not touch SIGCHLD; the process
 * must not set SIGCHLD to SIG_IGN (that would reap the child behind its
 * back).
 */
#ifndef TB_PROC_H
#define TB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* The only directories where a program is looked up. */
#define TB_PROC_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Between SIGTERM and SIGKILL to the group at the deadline or a cancel. */
#define TB_PROC_KILL_GRACE_MS 1000

/* What happened to one run.  Filled as far as the run got. */
struct tb_proc_result {
	pid_t pid;       /* the child's pid (also its process group), 0 if none */
	int exit_status; /* 0..255 when it exited, else -1 */
	int term_signal; /* the signal that ended it, else 0 */
	bool timed_out;  /* the deadline passed and testbedd signalled it */
	bool canceled;   /* *cancel became non-zero and testbedd signalled it */
	long elapsed_ms; /* from fork to reaping */
	char *out;       /* stdout, NUL-terminated, at most max_output bytes */
	size_t out_len;
	char *err; /* stderr, the same */
	size_t err_len;
	bool out_truncated; /* more arrived than max_output and was dropped */
	bool err_truncated;
};

/*
 * Run argv (NULL-terminated, argv[0] a program name looked up in
 * TB_PROC_PATH, or an absolute path) with env_add ("NAME=VALUE" strings,
 * NULL-terminated; may be NULL) and wait until it ends, at most timeout_ms
 * (> 0; <= 0 means 60 s) plus the kill grace.  cancel (may be NULL) is
 * polled every 50 ms.  Blocks; spawns one process.
 *
 * Returns 0 when the program ran and ended by itself, whatever its exit
 * status: read res->exit_status / res->term_signal.  TB_ERR_TIMEOUT or
 * TB_ERR_CANCELED when it was stopped (res filled, output included).
 * TB_ERR_NOT_FOUND: no such program in TB_PROC_PATH (the message names the
 * program and the PATH).  TB_ERR_INVALID (empty argv, bad env_add entry),
 * TB_ERR_IO (pipe, fork or exec failed), TB_ERR_NOMEM.  On every return
 * res holds valid (possibly empty, "") buffers to free with
 * tb_proc_result_free, except after TB_ERR_NOMEM where they may be NULL.
 */
int tb_proc_run(const char *const argv[], const char *const env_add[], long timeout_ms, size_t max_output,
		const volatile int *cancel, struct tb_proc_result *res, struct tb_error *err);

/* Free res->out and res->err (not res) and reset res.  NULL is allowed. */
void tb_proc_result_free(struct tb_proc_result *res);

/*
 * The command as a person would retype it in sh (tb_sh_quote_argv rules):
 * for logs and action steps.  It shows argv only; env_add, where secrets
 * go, is never part of it.  malloc'd (free it); NULL when out of memory.
 */
char *tb_proc_display(const char *const argv[]);

/*
 * A long-running child with pipes (a console's `ipmitool sol activate`):
 * the same guarantees as tb_proc_run (argv only, TB_PROC_PATH, the
 * environment exactly PATH, LC_ALL and env_add, no other descriptor, signals
 * reset, its own process group), except that stdin, stdout and stderr are
 * pipes the caller reads and writes (non-blocking, close-on-exec) and
 * nothing waits for it.  The caller ends it with tb_proc_child_end, always.
 */
struct tb_proc_child {
	pid_t pid; /* also its process group; 0 none */
	int in;    /* its stdin (write), -1 once closed */
	int out;   /* its stdout (read) */
	int err;   /* its stderr (read) */
	bool exited;
};
/* Start argv.  Errors as tb_proc_run's (TB_ERR_NOT_FOUND, TB_ERR_INVALID,
 * TB_ERR_IO, TB_ERR_NOMEM); on error nothing is left to end. */
int tb_proc_spawn(const char *const argv[], const char *const env_add[], struct tb_proc_child *ch,
		  struct tb_error *err);
/* 1 when the child has ended (not reaped yet: its pid stays ours), else 0.
 * Does not block. */
int tb_proc_child_ended(struct tb_proc_child *ch);
/* End it: close its stdin (a polite program exits at end of input), wait up
 * to grace_ms, then SIGTERM its group, TB_PROC_KILL_GRACE_MS later SIGKILL;
 * reap it and close the pipes.  *status (may be NULL) gets the exit status
 * (0..255) or -1 when a signal ended it.  Blocks at most grace_ms +
 * TB_PROC_KILL_GRACE_MS + a little.  A zeroed (pid 0) child is allowed. */
void tb_proc_child_end(struct tb_proc_child *ch, long grace_ms, int *status);

#endif /* TB_PROC_H */
