/*
 * ssh.c - commands on a session: channels, the watchdog, streaming,
 * timeouts; exec, spawn, kill and capture.  Sessions come from ssh_pool.c
 * (made in ssh_session.c).  See ssh.h and ssh_internal.h.
 */
#include "ssh_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh/callbacks.h>

#include "log.h"
#include "outbuf.h"
#include "shquote.h"
#include "timeutil.h"

/* ssh_channel_poll_timeout() waits for stdout only (libssh 0.10), so stderr
 * is looked at between slices of this length. */
#define POLL_SLICE_MS 100
#define READ_CHUNK 16384
/* Chunks drained per turn before the deadline is looked at again. */
#define DRAIN_TURNS 64

static int min_ms(long long a, long long b)
{
	long long m = a < b ? a : b;

	return m < 0 ? 0 : (int)m;
}

static void result_init(struct tb_ssh_result *res)
{
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
}

/* ---- running one command ---- */

/*
 * Run before every command, in the /bin/sh that then execs it (see
 * TB_SSH_STOP_GRACE_MS in ssh.h).  A background watchdog holds the channel's
 * stdin (the command gets /dev/null) and blocks reading it.  We never send
 * anything on stdin, so the read returns only when the channel's stdin is
 * closed: by our EOF at a timeout, by sshd when the connection breaks, or by
 * sshd after the command ended and was reaped.  In the last case $$ (the
 * command, exec keeps the pid) is gone and the watchdog just exits;
 * otherwise it signals the whole process group of the ssh session (sshd
 * makes one per session with setsid), TERM and one second later KILL; it
 * ignores TERM itself and its sleep inherits that.  Its stdout and stderr go
 * to /dev/null so that sshd does not wait for it.  fd 3 carries stdin past
 * the /dev/null that sh gives asynchronous lists without job control.
 * OpenSSH's own "signal" request would do the same, but sshd refuses it for
 * root logins ("session signalling requires privilege separation").
 */
#define WATCHDOG                                                               \
	"exec 3<&0; (trap '' TERM; read _; kill -0 $$ 2>/dev/null || exit 0; " \
	"kill -s TERM 0; sleep 1; kill -s KILL 0) <&3 >/dev/null 2>&1 & "      \
	"exec 3<&- </dev/null"

struct run {
	tb_ssh_output_fn out;
	void *cls;
	tb_ssh_gate_fn gate; /* NULL, or: send "go" on stdin when it says 1 */
	void *gate_cls;
	bool gate_done; /* "go" sent */
	bool canceled;
	bool got_status;
	int exit_status;
	char exit_signal[16];
};

static void on_exit_status(ssh_session s, ssh_channel ch, int status, void *ud)
{
	struct run *r = ud;

	(void)s;
	(void)ch;
	r->got_status = true;
	r->exit_status = status;
}

static void on_exit_signal(ssh_session s, ssh_channel ch, const char *sig, int core, const char *errmsg,
			   const char *lang, void *ud)
{
	struct run *r = ud;

	(void)s;
	(void)ch;
	(void)core;
	(void)errmsg;
	(void)lang;
	snprintf(r->exit_signal, sizeof(r->exit_signal), "%s", sig != NULL ? sig : "?");
}

static bool run_ended(ssh_channel ch, const struct run *r)
{
	return r->got_status || r->exit_signal[0] != '\0' || ssh_channel_is_closed(ch);
}

/* Pass what is buffered on both streams to the callback; -1: session broken. */
static int drain(ssh_channel ch, struct run *r)
{
	char buf[READ_CHUNK];

	for (int is_stderr = 0; is_stderr <= 1; is_stderr++) {
		for (int turn = 0; turn < DRAIN_TURNS; turn++) {
			int n = ssh_channel_read_nonblocking(ch, buf, sizeof(buf), is_stderr);

			if (n == SSH_ERROR)
				return -1;
			if (n <= 0)
				break;
			if (r->out != NULL && !r->canceled &&
			    r->out(r->cls, is_stderr ? TB_SSH_STDERR : TB_SSH_STDOUT, buf, (size_t)n) != 0)
				r->canceled = true;
		}
	}
	return 0;
}

/*
 * Process incoming packets for up to ms, also after EOF.  libssh 0.10 has no
 * public "wait for anything" call for one channel; ssh_channel_get_exit_status
 * waits until exit-status, close or SSH_OPTIONS_TIMEOUT, so the timeout is
 * lowered around it.
 */
static void wait_packets(struct conn *c, ssh_channel ch, int ms)
{
	long zero = 0, usec = (long)(ms > 0 ? ms : 1) * 1000;

	if (!ssh_channel_is_eof(ch)) {
		ssh_channel_poll_timeout(ch, ms, 0);
		return;
	}
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &zero);
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
	ssh_channel_get_exit_status(ch);
	zero = 0;
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &c->timeout_s);
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT_USEC, &zero);
}

/*
 * Stop the command: EOF on its stdin wakes the watchdog (WATCHDOG), which
 * signals the session's process group; the "signal" request does the same
 * where sshd allows it.  Returns true when the command ended.
 */
static bool stop_command(struct conn *c, ssh_channel ch, struct run *r)
{
	long long until = tb_monotonic_ms() + TB_SSH_STOP_GRACE_MS;

	if (!run_ended(ch, r) && ssh_is_connected(c->s)) {
		ssh_channel_request_send_signal(ch, "TERM");
		ssh_channel_send_eof(ch);
	}
	while (!run_ended(ch, r) && ssh_is_connected(c->s) && tb_monotonic_ms() < until) {
		if (drain(ch, r) != 0)
			break;
		wait_packets(c, ch, min_ms(until - tb_monotonic_ms(), POLL_SLICE_MS));
	}
	if (!run_ended(ch, r) && ssh_is_connected(c->s))
		ssh_channel_request_send_signal(ch, "KILL");
	if (ssh_is_connected(c->s))
		drain(ch, r);
	return run_ended(ch, r);
}

enum pump_end { PUMP_DONE, PUMP_TIMEOUT, PUMP_CANCELED, PUMP_LOST };

/* Stream output until the command ended (EOF and exit status) or deadline. */
static enum pump_end pump(struct conn *c, ssh_channel ch, struct run *r, long long deadline)
{
	for (;;) {
		int slice;

		if (drain(ch, r) != 0)
			return PUMP_LOST;
		if (r->canceled)
			return PUMP_CANCELED;
		/* EOF first (all output read), then the status that follows it */
		if (ssh_channel_is_eof(ch) && run_ended(ch, r))
			return PUMP_DONE;
		if (tb_monotonic_ms() >= deadline)
			return PUMP_TIMEOUT;
		if (!ssh_is_connected(c->s))
			return PUMP_LOST;
		if (r->gate != NULL && !r->gate_done) {
			int g = r->gate(r->gate_cls);

			if (g < 0) {
				r->canceled = true;
				return PUMP_CANCELED;
			}
			if (g > 0) {
				if (ssh_channel_write(ch, "go\n", 3) != 3)
					return PUMP_LOST;
				r->gate_done = true;
			}
		}
		slice = min_ms(deadline - tb_monotonic_ms(), r->gate != NULL && !r->gate_done ? 1 : POLL_SLICE_MS);
		if (!ssh_channel_is_eof(ch)) {
			if (ssh_channel_poll_timeout(ch, slice, 0) == SSH_ERROR)
				return PUMP_LOST;
		} else {
			wait_packets(c, ch, slice);
		}
	}
}

/*
 * A standby shell: the login shell runs /bin/sh, which waits for one line on
 * its stdin and evals it (the script a command would have been exec'd as);
 * EOF (the channel closed, the session dropped) ends it with 125, having run
 * nothing.  It uses no CPU while it waits.
 */
#define STANDBY "/bin/sh -c 'IFS= read -r tbline || exit 125; eval \"$tbline\"'"

/* c's standby channel, taken off it, when its shell still waits (no byte,
 * no EOF came from it); else NULL (a dead one is freed). */
static ssh_channel standby_take(struct conn *c)
{
	ssh_channel ch = c->standby;

	if (ch == NULL)
		return NULL;
	c->standby = NULL;
	if (ssh_channel_is_open(ch) && !ssh_channel_is_eof(ch) && ssh_channel_poll(ch, 0) == 0 &&
	    ssh_channel_poll(ch, 1) == 0)
		return ch;
	tb_debug("ssh", "a standby shell ended before it was used; a new channel instead");
	ssh_channel_free(ch);
	return NULL;
}

int tb_ssh_standby(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, struct tb_error *err)
{
	struct tb_ssh_result res;
	struct conn *c = NULL;
	bool reused = false;
	int rc;

	if (pool == NULL || t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "a standby shell needs a pool and a target");
	result_init(&res);
	for (int attempt = 0;; attempt++) {
		ssh_channel ch;

		if ((rc = tb_ssh_conn_get(pool, t, attempt == 0, &c, &reused, &res, err)) != 0)
			return rc;
		if (c->standby != NULL) { /* one waits already */
			tb_ssh_conn_put(pool, c, true);
			return 0;
		}
		ch = ssh_channel_new(c->s);
		if (ch != NULL && ssh_channel_open_session(ch) == SSH_OK) {
			if (ssh_channel_request_exec(ch, STANDBY) == SSH_OK) {
				c->standby = ch;
				tb_ssh_conn_put(pool, c, true);
				return 0;
			}
			rc = tb_fail(err, TB_ERR_REMOTE, mname(t), "%s (%s) refused the standby shell (%s)", mname(t),
				     oname(t), ssh_get_error(c->s));
			ssh_channel_free(ch);
			tb_ssh_conn_put(pool, c, ssh_is_connected(c->s));
			return rc;
		}
		ssh_channel_free(ch);
		tb_ssh_conn_put(pool, c, false);
		if (!(reused && attempt == 0))
			return tb_fail(err, TB_ERR_UNREACHABLE, mname(t), "%s (%s): no channel for a standby shell",
				       mname(t), oname(t));
	}
}

/* A session to t and a channel on it: a standby shell's when the session
 * has one (*standby), else a new session channel (retrying once on a new
 * session when a pooled one is dead).  0, or an error (nothing held). */
static int get_channel(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, struct conn **cp, ssh_channel *chp,
		       bool *standby, struct tb_ssh_result *res, struct tb_error *err)
{
	bool reused = false;
	int rc;

	for (int attempt = 0;; attempt++) {
		struct conn *c;
		ssh_channel ch;

		if ((rc = tb_ssh_conn_get(pool, t, attempt == 0, &c, &reused, res, err)) != 0)
			return rc;
		res->reused = reused;
		*cp = c;
		if ((*chp = standby_take(c)) != NULL) {
			*standby = true;
			break;
		}
		ch = *chp = ssh_channel_new(c->s);
		if (ch != NULL && ssh_channel_open_session(ch) == SSH_OK)
			break;
		if (reused && attempt == 0) {
			/* the server closed the idle session (restart, timeout) */
			tb_debug("ssh", "pooled session to %s (%s) is dead (%s), reconnecting", mname(t), oname(t),
				 ssh_get_error(c->s));
			ssh_channel_free(ch);
			tb_ssh_conn_put(pool, c, false);
			tb_ssh_pool_count(pool, COUNT_RETRIES);
			continue;
		}
		rc = tb_fail(err, ssh_is_connected(c->s) ? TB_ERR_REMOTE : TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s) did not open a session channel (%s); check its "
			     "sshd (MaxSessions) and log",
			     mname(t), oname(t), ssh_get_error(c->s));
		ssh_channel_free(ch);
		tb_ssh_conn_put(pool, c, false);
		return rc;
	}
	if (reused)
		tb_ssh_pool_count(pool, COUNT_REUSES);
	return 0;
}

/*
 * Open a channel (get_channel), exec line (or, in a standby shell, hand it
 * script), stream, and give the session back.  what names the command in
 * messages.
 */
static int run_line(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *what, const char *line,
		    const char *script, long timeout_ms, struct run *r, struct tb_ssh_result *res, struct tb_error *err)
{
	struct ssh_channel_callbacks_struct cb;
	struct conn *c = NULL;
	ssh_channel ch = NULL;
	bool healthy = true, standby = false;
	long long deadline;
	int rc;

	if ((rc = get_channel(pool, t, &c, &ch, &standby, res, err)) != 0)
		return rc;
	memset(&cb, 0, sizeof(cb));
	ssh_callbacks_init(&cb);
	cb.userdata = r;
	cb.channel_exit_status_function = on_exit_status;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_set_channel_callbacks(ch, &cb);

	deadline = tb_monotonic_ms() + timeout_ms;
	if (standby) {
		/* the shell waits for one line: the script it evals (STANDBY) */
		tb_ssh_pool_count(pool, COUNT_STANDBYS);
		if (ssh_channel_write(ch, script, (uint32_t)strlen(script)) != (int)strlen(script) ||
		    ssh_channel_write(ch, "\n", 1) != 1) {
			healthy = ssh_is_connected(c->s);
			rc = tb_fail(err, healthy ? TB_ERR_REMOTE : TB_ERR_UNREACHABLE, mname(t),
				     "%s (%s): could not hand `%s` to its waiting shell (%s)", mname(t), oname(t), what,
				     ssh_get_error(c->s));
			goto out;
		}
	} else if (ssh_channel_request_exec(ch, line) != SSH_OK) {
		healthy = ssh_is_connected(c->s);
		rc = tb_fail(err, healthy ? TB_ERR_REMOTE : TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s) refused to run `%s` (%s); check its sshd log", mname(t), oname(t), what,
			     ssh_get_error(c->s));
		goto out;
	}
	/* no EOF on stdin: the watchdog waits for it (WATCHDOG) */

	switch (pump(c, ch, r, deadline)) {
	case PUMP_DONE: rc = 0; break;
	case PUMP_LOST:
		healthy = false;
		rc = tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s): the connection broke while `%s` ran (%s); it is "
			     "stopped there once sshd notices",
			     mname(t), oname(t), what, ssh_get_error(c->s));
		break;
	case PUMP_TIMEOUT:
	case PUMP_CANCELED: {
		bool timeout = !r->canceled;
		bool ended = stop_command(c, ch, r);

		res->stopped = true;
		healthy = ssh_is_connected(c->s);
		rc = tb_fail(err, timeout ? TB_ERR_TIMEOUT : TB_ERR_CANCELED, mname(t), "%s (%s): `%s` %s%s", mname(t),
			     oname(t), what, timeout ? "did not end in time and was stopped" : "was stopped on request",
			     ended ? ""
				   : "; it did not end on SIGTERM and may still run "
				     "there");
		if (timeout && ended)
			tb_debug("ssh", "%s (%s): `%s` timed out after %ld ms", mname(t), oname(t), what, timeout_ms);
		break;
	}
	}
out:
	res->exit_status = r->got_status ? r->exit_status : -1;
	snprintf(res->exit_signal, sizeof(res->exit_signal), "%s", r->exit_signal);
	ssh_remove_channel_callbacks(ch, &cb);
	if (healthy)
		ssh_channel_close(ch);
	ssh_channel_free(ch);
	tb_ssh_conn_put(pool, c, healthy);
	return rc;
}

static int check_call(const struct tb_ssh_target *t, const char *const argv[], long timeout_ms, struct tb_error *err)
{
	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	if (argv == NULL || argv[0] == NULL)
		return tb_fail(err, TB_ERR_INVALID, "argv", "%s (%s): the command is empty", mname(t), oname(t));
	if (timeout_ms <= 0)
		return tb_fail(err, TB_ERR_INVALID, "timeout_ms", "%s (%s): a command needs a timeout > 0 ms, got %ld",
			       mname(t), oname(t), timeout_ms);
	return 0;
}

/* argv as sh would read it, for messages: one line, at most len - 1 bytes. */
static void describe(const char *const argv[], char *buf, size_t len)
{
	char *q = tb_sh_quote_argv(argv, NULL);
	size_t n;

	snprintf(buf, len, "%s", q != NULL ? q : argv[0]);
	free(q);
	n = strlen(buf);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	if (n == len - 1 && len > 4)
		memcpy(buf + len - 4, "...", 3);
}

/* ---- a script before the command, in the same shell ---- */

#define BEFORE_END "@@tb-before-end"
#define BEFORE_MAX 65536

/* What comes before the BEFORE_END line goes to b->done, the rest on. */
struct before_filter {
	const struct tb_ssh_before *b;
	tb_ssh_output_fn next;
	void *next_cls;
	struct tb_outbuf text; /* the script's output so far (BEFORE_MAX kept) */
	size_t start;          /* where the current line begins in text */
	size_t n;              /* bytes of the current line that came */
	char head[24];         /* its first bytes: is it the end line? */
	bool done;
};

static int before_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct before_filter *f = cls;

	while (!f->done && stream == TB_SSH_STDOUT && len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t k = nl != NULL ? (size_t)(nl - data) : len;

		tb_outbuf_add(&f->text, data, k);
		if (f->n < sizeof(f->head))
			memcpy(f->head + f->n, data, k < sizeof(f->head) - f->n ? k : sizeof(f->head) - f->n);
		f->n += k;
		data += k + (nl != NULL);
		len -= k + (nl != NULL);
		if (nl == NULL)
			break;
		if (f->n == strlen(BEFORE_END) && memcmp(f->head, BEFORE_END, f->n) == 0) {
			f->done = true;
			if (f->start < f->text.len)
				f->text.len = f->start;
			if (f->text.len > 0) /* the newline before_prefix put before the end line */
				f->text.len--;
			if (f->text.p != NULL)
				f->text.p[f->text.len] = '\0';
			f->b->done(f->b->cls, tb_outbuf_str(&f->text), f->text.len);
			break;
		}
		tb_outbuf_add(&f->text, "\n", 1);
		f->start = f->text.len; /* (past max: the end line's bytes are not kept either) */
		f->n = 0;
	}
	if (!f->done && stream == TB_SSH_STDOUT)
		return 0;
	if (len > 0 && f->next != NULL)
		return f->next(f->next_cls, stream, data, len);
	return 0;
}

/* The prefix that runs b's script first: its output, stderr with it, then
 * a newline (its last line may have none) and the end line, then prefix. */
static char *before_prefix(const struct tb_ssh_before *b, const char *prefix)
{
	struct tb_outbuf p = {0};

	tb_outbuf_printf(&p, "{ %s; } 2>&1; echo; echo %s; %s", b->script, BEFORE_END, prefix);
	return p.nomem ? (tb_outbuf_free(&p), NULL) : tb_outbuf_take(&p);
}

/* argv after prefix (and with before, its script first: before_filter) in one exec. */
static int exec_prefixed_gated(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
			       const struct tb_ssh_before *before, const char *prefix, const char *const argv[],
			       long timeout_ms, tb_ssh_gate_fn gate, void *gate_cls, tb_ssh_output_fn on_output,
			       void *cls, struct tb_ssh_result *res, struct tb_error *err)
{
	struct tb_ssh_result local;
	struct tb_error qerr;
	struct run r = {0};
	struct before_filter f = {.b = before, .next = on_output, .next_cls = cls, .text = {.max = BEFORE_MAX}};
	char *line, *script, *pre = NULL, what[96];
	int rc;

	if (res == NULL)
		res = &local;
	result_init(res);
	if ((rc = check_call(t, argv, timeout_ms, err)) != 0)
		return rc;
	/* one line (ssh.h): a standby shell reads one line, and a newline would
	 * end the look there without a word; refused loudly instead */
	if (before != NULL && strpbrk(before->script, "\r\n") != NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "a before script is one line (testbedd's bug)");
	if (before != NULL && (pre = before_prefix(before, prefix)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	script = tb_ssh_script_prefixed(pre != NULL ? pre : prefix, argv, &qerr);
	free(pre);
	line = script != NULL ? tb_ssh_login_line(script, &qerr) : NULL;
	if (line == NULL) {
		free(script);
		return tb_fail(err, qerr.code, qerr.field, "%s (%s): %s", mname(t), oname(t), qerr.message);
	}
	r.out = before != NULL ? before_output : on_output;
	r.cls = before != NULL ? (void *)&f : cls;
	r.gate = gate;
	r.gate_cls = gate_cls;
	describe(argv, what, sizeof(what));
	rc = run_line(pool, t, what, line, script, timeout_ms, &r, res, err);
	free(line);
	free(script);
	tb_outbuf_free(&f.text);
	return rc;
}

static int exec_prefixed(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *prefix,
			 const char *const argv[], long timeout_ms, tb_ssh_output_fn on_output, void *cls,
			 struct tb_ssh_result *res, struct tb_error *err)
{
	return exec_prefixed_gated(pool, t, NULL, prefix, argv, timeout_ms, NULL, NULL, on_output, cls, res, err);
}

int tb_ssh_exec(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[], long timeout_ms,
		tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res, struct tb_error *err)
{
	return exec_prefixed(pool, t, WATCHDOG, argv, timeout_ms, on_output, cls, res, err);
}

int tb_ssh_exec_before(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const struct tb_ssh_before *before,
		       const char *const argv[], long timeout_ms, tb_ssh_output_fn on_output, void *cls,
		       struct tb_ssh_result *res, struct tb_error *err)
{
	return exec_prefixed_gated(pool, t, before, WATCHDOG, argv, timeout_ms, NULL, NULL, on_output, cls, res, err);
}

/* ---- spawn: the first stdout line is the pid ---- */

#define PID_LINE_MAX 24
#define HELD_STDERR_MAX 65536

struct spawn {
	tb_ssh_pid_fn on_pid;
	tb_ssh_output_fn on_output;
	void *cls;
	char line[PID_LINE_MAX];
	size_t n;
	long pid; /* 0 until the pid line arrived */
	bool bad; /* the first line was not a pid */
	bool nomem;
	char *held; /* stderr that came before the pid line */
	size_t held_len;
};

static void drop_held(struct spawn *sp)
{
	free(sp->held);
	sp->held = NULL;
	sp->held_len = 0;
}

static int spawn_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct spawn *sp = cls;

	if (sp->pid == 0 && stream == TB_SSH_STDERR) {
		/* keep the promise "pid first" even if stderr overtakes stdout */
		char *h;

		if (sp->held_len + len > HELD_STDERR_MAX) {
			/* a flood of stderr before the pid line: give up holding */
			int rc = 0;

			if (sp->on_output != NULL && sp->held_len > 0)
				rc = sp->on_output(sp->cls, stream, sp->held, sp->held_len);
			drop_held(sp);
			if (rc == 0 && sp->on_output != NULL)
				rc = sp->on_output(sp->cls, stream, data, len);
			return rc;
		}
		h = realloc(sp->held, sp->held_len + len);
		if (h == NULL) {
			sp->nomem = true;
			return -1;
		}
		memcpy(h + sp->held_len, data, len);
		sp->held = h;
		sp->held_len += len;
		return 0;
	}
	while (sp->pid == 0 && len > 0) {
		char c = *data++;
		char *end;

		len--;
		if (c != '\n') {
			if (sp->n + 1 >= sizeof(sp->line)) {
				sp->bad = true;
				return -1;
			}
			sp->line[sp->n++] = c;
			continue;
		}
		sp->line[sp->n] = '\0';
		errno = 0;
		sp->pid = strtol(sp->line, &end, 10);
		if (errno != 0 || end == sp->line || *end != '\0' || sp->pid <= 1) {
			sp->pid = 0;
			sp->bad = true;
			return -1;
		}
		if (sp->on_pid != NULL && sp->on_pid(sp->cls, sp->pid) != 0)
			return -1;
		if (sp->held_len > 0 && sp->on_output != NULL &&
		    sp->on_output(sp->cls, TB_SSH_STDERR, sp->held, sp->held_len) != 0) {
			drop_held(sp); /* delivered once: not again at the end */
			return -1;
		}
		drop_held(sp);
	}
	if (len > 0 && sp->on_output != NULL)
		return sp->on_output(sp->cls, stream, data, len);
	return 0;
}

/*
 * The gated form: the shell reports its pid, then waits for a "go" line on
 * stdin before it sets up the watchdog and execs the command; EOF instead
 * (a stop, a broken connection) ends it with 125, having run nothing.
 */
#define GATE "echo $$; IFS= read -r tbgo && [ \"$tbgo\" = go ] || exit 125; "

static int spawn_common(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[],
			long timeout_ms, tb_ssh_gate_fn gate, void *gate_cls, const struct tb_ssh_before *before,
			tb_ssh_pid_fn on_pid, tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
			struct tb_error *err)
{
	struct tb_ssh_result local;
	struct spawn sp = {0};
	int rc;

	if (res == NULL)
		res = &local;
	sp.on_pid = on_pid;
	sp.on_output = on_output;
	sp.cls = cls;
	if (gate != NULL)
		rc = exec_prefixed_gated(pool, t, before, GATE WATCHDOG, argv, timeout_ms, gate, gate_cls, spawn_output,
					 &sp, res, err);
	else
		rc = exec_prefixed(pool, t, WATCHDOG "; echo $$", argv, timeout_ms, spawn_output, &sp, res, err);
	if (sp.nomem) {
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for the output of %s", argv[0]);
	} else if (sp.bad) {
		rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
			     "%s (%s): %s did not report its pid as the first line of "
			     "output; check that /bin/sh on %s is a POSIX shell",
			     mname(t), oname(t), argv[0], mname(t));
	} else if (rc == 0 && sp.pid == 0) {
		rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
			     "%s (%s): %s ended (exit status %d) without reporting its pid; "
			     "check that /bin/sh on %s is a POSIX shell",
			     mname(t), oname(t), argv[0], res->exit_status, mname(t));
	}
	/* stderr held back for a pid that never came: still the caller's */
	if (!sp.nomem && sp.held_len > 0 && on_output != NULL)
		on_output(cls, TB_SSH_STDERR, sp.held, sp.held_len);
	free(sp.held);
	return rc;
}

int tb_ssh_spawn(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[], long timeout_ms,
		 tb_ssh_pid_fn on_pid, tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
		 struct tb_error *err)
{
	return spawn_common(pool, t, argv, timeout_ms, NULL, NULL, NULL, on_pid, on_output, cls, res, err);
}

int tb_ssh_spawn_gated(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[],
		       long timeout_ms, tb_ssh_gate_fn gate, void *gate_cls, const struct tb_ssh_before *before,
		       tb_ssh_pid_fn on_pid, tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
		       struct tb_error *err)
{
	if (gate == NULL)
		return tb_fail(err, TB_ERR_INVALID, "gate", "a gated spawn needs a gate");
	return spawn_common(pool, t, argv, timeout_ms, gate, gate_cls, before, on_pid, on_output, cls, res, err);
}

/* ---- capture ---- */

struct capture_sink {
	struct tb_outbuf out, err; /* each bounded by max_bytes */
};

static int capture_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct capture_sink *s = cls;
	struct tb_outbuf *b = stream == TB_SSH_STDOUT ? &s->out : &s->err;

	tb_outbuf_add(b, data, len);
	return b->nomem ? -1 : 0;
}

int tb_ssh_run_capture(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, const char *const argv[],
		       long timeout_ms, size_t max_bytes, struct tb_ssh_capture *cap, struct tb_error *err)
{
	struct capture_sink s = {.out = {.max = max_bytes}, .err = {.max = max_bytes}};
	int rc;

	memset(cap, 0, sizeof(*cap));
	rc = tb_ssh_exec(pool, t, argv, timeout_ms, capture_output, &s, &cap->res, err);
	cap->out_len = s.out.len;
	cap->err_len = s.err.len;
	cap->out_truncated = s.out.truncated;
	cap->err_truncated = s.err.truncated;
	/* never NULL buffers: "" when nothing arrived */
	cap->out = tb_outbuf_take(&s.out);
	cap->err = tb_outbuf_take(&s.err);
	if (cap->out == NULL || cap->err == NULL || s.out.nomem || s.err.nomem)
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for the output of %s",
			     argv != NULL && argv[0] != NULL ? argv[0] : "a command");
	return rc;
}

void tb_ssh_capture_free(struct tb_ssh_capture *cap)
{
	if (cap == NULL)
		return;
	free(cap->out);
	free(cap->err);
	memset(cap, 0, sizeof(*cap));
}

/* ---- kill ---- */

int tb_ssh_kill(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, long pid, const char *sig,
		struct tb_error *err)
{
	static const char *const allowed[] = {"TERM", "KILL", "INT", "HUP", "USR1", "USR2"};
	struct tb_ssh_capture cap;
	char spid[32];
	const char *argv[] = {"kill", "-s", sig, spid, NULL};
	bool ok = false;
	int rc;

	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	for (size_t i = 0; sig != NULL && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strcmp(sig, allowed[i]) == 0)
			ok = true;
	if (!ok)
		return tb_fail(err, TB_ERR_INVALID, "signal",
			       "%s (%s): signal must be TERM, KILL, INT, HUP, USR1 or USR2", mname(t), oname(t));
	/* kill -s SIG 0 / -1 would hit a whole process group or everything */
	if (pid <= 1)
		return tb_fail(err, TB_ERR_INVALID, "pid", "%s (%s): refusing to signal pid %ld", mname(t), oname(t),
			       pid);
	snprintf(spid, sizeof(spid), "%ld", pid);
	rc = tb_ssh_run_capture(pool, t, argv, timeout_s_of(t) * 1000, 4096, &cap, err);
	if (rc == 0 && cap.res.exit_status != 0) {
		char *nl = strchr(cap.err, '\n');

		if (nl != NULL)
			*nl = '\0';
		if (strstr(cap.err, "No such process") != NULL || strstr(cap.err, "no such process") != NULL)
			rc = tb_fail(err, TB_ERR_NOT_FOUND, "pid", "%s (%s) has no process %ld (it has ended)",
				     mname(t), oname(t), pid);
		else
			rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
				     "%s (%s): kill -s %s %ld failed (exit status %d: %s)", mname(t), oname(t), sig,
				     pid, cap.res.exit_status, cap.err);
	}
	tb_ssh_capture_free(&cap);
	return rc;
}
