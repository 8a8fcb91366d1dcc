/*
 * ssh.h - run commands on testbed hosts over SSH (libssh 0.10).
 *
 * Every remote command is an argv array, sent through tb_ssh_command_line()
 * (shquote.h), so it runs exactly as given under sh, bash or csh/tcsh login
 * shells.  Sessions are made with explicit options only: no ~/.ssh/config, no
 * ssh-agent, no known_hosts file, key authentication from one key file.  A
 * host is trusted only through its pinned SHA256 host key fingerprint; an
 * unknown or changed key is refused (TB_ERR_HOSTKEY) and the presented one
 * given back, so that an admin can accept it (`tbctl host trust NAME`).
 *
 * Threads: libssh sessions are not thread-safe.  A struct tb_ssh_pool is
 * (one mutex): it hands each session to one caller at a time and keeps idle
 * authenticated sessions per target for reuse (a new session costs a TCP
 * connect, key exchange and authentication, about 0.27 s on the testbed; a
 * reused one about 0.03 s per command).  Any number of threads may call the
 * tb_ssh_* functions on one pool at once; each call uses its own session.
 * A NULL pool is allowed everywhere: the call then makes a session of its
 * own and closes it before returning.
 *
 * Ownership: targets, argv arrays and strings passed in stay the caller's
 * and are not kept after a call returns.  Output callbacks get pointers into
 * buffers owned by this module, valid only during the callback.
 *
 * Errors follow error.h; every message names the machine and OS ("left
 * (ubuntu)") and says what to do.  Codes: TB_ERR_INVALID (bad argument),
 * TB_ERR_CONFIG (key file unreadable, pinned fingerprint malformed),
 * TB_ERR_UNREACHABLE (no TCP connection, connect timeout, connection lost),
 * TB_ERR_HOSTKEY, TB_ERR_UNAUTHORIZED (key refused), TB_ERR_REMOTE (the
 * server refused a channel or request), TB_ERR_TIMEOUT, TB_ERR_CANCELED,
 * TB_ERR_NOT_FOUND (tb_ssh_kill: no such process), TB_ERR_NOMEM,
 * TB_ERR_INTERNAL (libssh failure).
 *
 * The process must ignore SIGPIPE (the daemon does) like any socket user.
 */
#ifndef TB_SSH_H
#define TB_SSH_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* "SHA256:" + 43 base64 characters + NUL, with room to spare. */
#define TB_SSH_FP_MAX 96

/* Where and how to log in.  All strings stay the caller's. */
struct tb_ssh_target {
	const char *machine;    /* "left": for messages */
	const char *os;         /* "ubuntu": for messages */
	const char *address;    /* host name or IP address */
	unsigned int port;      /* 0 = 22 */
	const char *user;       /* NULL = "root" */
	const char *key_file;   /* unencrypted private key (OpenSSH or PEM) */
	const char *pinned_fp;  /* "SHA256:base64" as `ssh-keygen -lf` prints it;
				 * NULL = none pinned: every key is refused */
	long connect_timeout_s; /* TCP connect, key exchange, auth and each
				 * request; <= 0 = 10 s */
};

enum tb_ssh_stream { TB_SSH_STDOUT = 1, TB_SSH_STDERR = 2 };

/*
 * Receives the remote command's output as it arrives, in chunks of any size
 * (not split at lines).  Return 0 to go on; anything else stops the command
 * as a timeout would, and the call returns TB_ERR_CANCELED.  Called in the
 * calling thread, never concurrently for one call.
 */
typedef int (*tb_ssh_output_fn)(void *cls, enum tb_ssh_stream stream, const char *data, size_t len);

/* Receives the remote pid of a tb_ssh_spawn command, before any output of
 * that command.  Return 0 to go on, non-zero to stop it (TB_ERR_CANCELED). */
typedef int (*tb_ssh_pid_fn)(void *cls, long pid);

/* What happened to one command.  Filled as far as the call got. */
struct tb_ssh_result {
	int exit_status;             /* 0..255, or -1: none (signal, timeout) */
	char exit_signal[16];        /* "TERM", "KILL" when the command died of a
				      * signal, else "" */
	bool stopped;                /* timeout or cancel: testbedd signalled it */
	bool reused;                 /* the session came from the pool */
	char host_fp[TB_SSH_FP_MAX]; /* the host key the server presented, set as
				      * soon as the key exchange is done, also on
				      * TB_ERR_HOSTKEY; "" when not reached */
};

/*
 * What a timeout (or a cancel) does to the remote command.  Every command
 * runs as  /bin/sh -c '<watchdog>; exec ARGV'  with stdin from /dev/null.
 * The watchdog is a small background sh that blocks reading the channel's
 * stdin, which testbedd never writes to.  At the deadline testbedd sends EOF
 * on stdin (and an RFC 4254 "signal" TERM request, which OpenSSH refuses for
 * root logins, so the EOF is what works); the watchdog then sends SIGTERM to
 * the ssh session's process group (sshd gives each session its own with
 * setsid: the login shell, the command and every child that stayed in the
 * group) and SIGKILL one second later.  testbedd waits up to
 * TB_SSH_STOP_GRACE_MS for the command to end, then closes the channel.
 *
 * The same happens when the connection breaks (sshd closes the pipes): a
 * command never outlives its ssh channel.  After a normal end the watchdog
 * finds the command gone and exits without signalling anything, so children
 * a command left behind on purpose keep running as with plain ssh.
 * Processes that left the process group (setsid, daemon(3), iperf3 -D)
 * survive in every case: stop those by pid (tb_ssh_spawn + tb_ssh_kill).
 */
#define TB_SSH_STOP_GRACE_MS 2000

/* ---- pool ---- */

struct tb_ssh_pool;

struct tb_ssh_pool_stats {
	unsigned long connects; /* new sessions made (handshake + auth) */
	unsigned long reuses;   /* commands that ran on an idle session */
	unsigned long discards; /* sessions closed as broken, expired or surplus */
	unsigned long retries;  /* commands retried after a dead pooled session */
	unsigned long standbys; /* commands that started in a standby shell (tb_ssh_standby) */
	unsigned int idle;      /* sessions idle in the pool now */
};

/*
 * A pool keeping at most max_idle_per_target idle sessions per target
 * (address, port, user, key file, pinned fingerprint; 0 = keep none) and
 * closing those idle for more than idle_timeout_s (<= 0: 60 s).  Expired
 * sessions are closed lazily, during later calls.  Returns NULL when out of
 * memory.  Also initialises libssh (ssh_init, once per process).
 */
struct tb_ssh_pool *tb_ssh_pool_new(unsigned int max_idle_per_target, long idle_timeout_s);

/*
 * Close every idle session (network: sends a disconnect to each) and free
 * the pool.  No call may be using the pool any more.  NULL is allowed.
 */
void tb_ssh_pool_free(struct tb_ssh_pool *pool);

/* A snapshot of the pool's counters (takes the pool's mutex briefly). */
void tb_ssh_pool_stats(struct tb_ssh_pool *pool, struct tb_ssh_pool_stats *out);

/* ---- commands ---- */

/*
 * Run argv on the target and wait for it to end, streaming stdout and stderr
 * to on_output (may be NULL: output is read and dropped).  The command's
 * stdin is /dev/null.  stderr chunks may lag stdout by up to 0.1 s (libssh
 * 0.10 can wait on one stream only).  Blocks: one
 * handshake unless a pooled session is reused (a dead pooled session is
 * discarded and the call retried once on a new one, as long as the command
 * had not been started), then until the command exits or timeout_ms (> 0)
 * passes (see TB_SSH_STOP_GRACE_MS for what happens remotely then).
 *
 * Returns 0 when the command ran and ended by itself, whatever its exit
 * status: read res->exit_status (-1 with res->exit_signal set when it died
 * of a signal).  TB_ERR_TIMEOUT or TB_ERR_CANCELED when it was stopped, or
 * another negative code when it could not run.  res may be NULL.
 */
int tb_ssh_exec(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[], long timeout_ms,
		tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res, struct tb_error *err);

/*
 * A script run first, in the same shell as the command (no exec of its own):
 * its output, stderr with it (64 KiB kept), goes to done(cls, text, len)
 * once it ended, before any byte of the command's reaches the caller; done
 * is never called when the exec ends first.  script: one line, a constant of
 * testbedd's (nothing of a request reaches it), not shown as the command.
 * For a check at the start of a command that must not cost an exec
 * (run_idle.h's look at a run's ends).  Called on the exec's thread.
 */
struct tb_ssh_before {
	const char *script;
	void (*done)(void *cls, const char *text, size_t len);
	void *cls;
};

/* tb_ssh_exec with before's script first (before->done as above). */
int tb_ssh_exec_before(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const struct tb_ssh_before *before,
		       const char *const argv[], long timeout_ms, tb_ssh_output_fn on_output, void *cls,
		       struct tb_ssh_result *res, struct tb_error *err);

/*
 * tb_ssh_exec for a command that may have to be stopped from elsewhere: runs
 *	/bin/sh -c '<watchdog>; echo $$; exec ARGV'
 * so that on_pid gets the command's remote pid (exec keeps it) before
 * on_output sees any byte of the command's stdout or stderr.  Another thread
 * can then stop it with tb_ssh_kill(pool, t, pid, ...) on another session.
 * The pid line itself is not passed to on_output.  Returns as tb_ssh_exec;
 * TB_ERR_REMOTE when the first stdout line is not a pid.
 */
int tb_ssh_spawn(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[], long timeout_ms,
		 tb_ssh_pid_fn on_pid, tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
		 struct tb_error *err);

/*
 * tb_ssh_spawn, opened ahead: the channel, the login shell and the pid line
 * happen now, but argv runs only when gate(gate_cls), called about every
 * millisecond from this thread while it waits, returns 1 (testbedd then
 * sends "go" on the channel's stdin, which the waiting shell reads before it
 * sets up the watchdog and execs argv).  -1 from gate: argv never runs (EOF
 * ends the shell with 125), TB_ERR_CANCELED.  For a client that must start
 * the moment its server listens, without a channel open and a shell start
 * in between.  timeout_ms counts from now, the wait included.  before (NULL:
 * none): a script run first, before the pid line (struct tb_ssh_before); the
 * gate is asked meanwhile too (a gate that needs its output waits for done).
 */
typedef int (*tb_ssh_gate_fn)(void *cls);
int tb_ssh_spawn_gated(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[],
		       long timeout_ms, tb_ssh_gate_fn gate, void *gate_cls, const struct tb_ssh_before *before,
		       tb_ssh_pid_fn on_pid, tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
		       struct tb_error *err);

/*
 * A standby shell for t, so that the next command to t starts without a
 * channel open and a shell start: a channel is opened now on an idle session
 * to t (a new one when none is idle) and its shell waits, blocked on its
 * stdin (no CPU), for the script of the next tb_ssh_exec, spawn, kill or
 * capture to t, which then runs in it exactly as it would have been exec'd
 * (`/bin/sh`, the same script).  One per idle session; a call when one
 * waits already does nothing.  A standby that ended meanwhile is dropped
 * and the command opens its own channel; an unused one goes with its
 * session (the pool's idle expiry: its shell reads EOF and exits 125,
 * having run nothing).  Blocks for a channel open and an exec request (and a
 * connect when no session is idle).  0, or an error (then nothing waits).
 */
int tb_ssh_standby(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, struct tb_error *err);

/*
 * Run `kill -s SIG PID` on the target.  sig is one of "TERM", "KILL", "INT",
 * "HUP", "USR1", "USR2"; pid must be > 1.  Blocks for one short command
 * (timeout: the target's connect timeout).  0 when the signal was sent;
 * TB_ERR_NOT_FOUND when there is no such process (already ended),
 * TB_ERR_REMOTE when kill failed otherwise.
 */
int tb_ssh_kill(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, long pid, const char *sig,
		struct tb_error *err);

/* Output of tb_ssh_run_capture; release with tb_ssh_capture_free. */
struct tb_ssh_capture {
	char *out; /* stdout, NUL-terminated (may hold other NULs) */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
	bool out_truncated; /* more than max_bytes arrived; the rest was dropped */
	bool err_truncated;
	struct tb_ssh_result res;
};

/*
 * tb_ssh_exec collecting stdout and stderr into malloc'd buffers of at most
 * max_bytes each (the rest is read and dropped, marked truncated).  On every
 * return, errors included, cap holds what arrived: two NUL-terminated
 * buffers, "" when nothing came (NULL only after TB_ERR_NOMEM).  The caller
 * frees them with tb_ssh_capture_free.
 */
int tb_ssh_run_capture(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[],
		       long timeout_ms, size_t max_bytes, struct tb_ssh_capture *cap, struct tb_error *err);

/* Free the buffers of cap (not cap itself) and reset it.  NULL is allowed. */
void tb_ssh_capture_free(struct tb_ssh_capture *cap);

/*
 * Connect to the target, read the host key it presents and disconnect,
 * without checking the pin and without logging in: for an admin who is
 * about to trust a host.  fp gets "SHA256:...".  Blocks for one key exchange.
 */
int tb_ssh_host_key(const struct tb_ssh_target *t, char fp[TB_SSH_FP_MAX], struct tb_error *err);

#endif /* TB_SSH_H */
