/* proc.c - run a local program safely: see proc.h. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outbuf.h"
#include "shquote.h"
#include "timeutil.h"

/*
 * closefrom(3) closes every descriptor from lowfd up with one call.  FreeBSD
 * has it (hidden by _POSIX_C_SOURCE) and so does glibc since 2.34; elsewhere
 * the child closes every possible descriptor up to RLIMIT_NOFILE.
 */
#if defined(__FreeBSD__) || (defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)))
#define TB_HAVE_CLOSEFROM 1
void closefrom(int lowfd);
#endif

#define DEFAULT_TIMEOUT_MS 60000L
#define DEFAULT_MAX_OUTPUT 65536u
#define TICK_MS 50L
/* After the child ended: how long to wait for its pipes to close (a
 * process that left the group with setsid may hold them). */
#define DRAIN_MS 500L

static int set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The absolute path of argv0 in TB_PROC_PATH, into out. */
static int find_program(const char *argv0, char *out, size_t outsz, struct tb_error *err)
{
	const char *dir = TB_PROC_PATH, *end;
	struct stat st;

	if (argv0[0] == '/') {
		if (strlen(argv0) >= outsz)
			return tb_fail(err, TB_ERR_INVALID, NULL, "program path too long: %.64s...", argv0);
		if (stat(argv0, &st) != 0 || !S_ISREG(st.st_mode) || access(argv0, X_OK) != 0)
			return tb_fail(err, TB_ERR_NOT_FOUND, NULL, "%s is not an executable file on this machine",
				       argv0);
		snprintf(out, outsz, "%s", argv0);
		return 0;
	}
	if (strchr(argv0, '/') != NULL || argv0[0] == '\0')
		return tb_fail(err, TB_ERR_INVALID, NULL, "a program is a bare name or an absolute path, not \"%s\"",
			       argv0);
	for (; *dir != '\0'; dir = *end != '\0' ? end + 1 : end) {
		int n;

		end = strchr(dir, ':');
		if (end == NULL)
			end = dir + strlen(dir);
		n = snprintf(out, outsz, "%.*s/%s", (int)(end - dir), dir, argv0);
		if (n < 0 || (size_t)n >= outsz)
			continue;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return tb_fail(err, TB_ERR_NOT_FOUND, NULL, "%s is not installed on this machine (looked in %s)", argv0,
		       TB_PROC_PATH);
}

static int valid_env_entry(const char *s)
{
	const char *eq = strchr(s, '=');

	if (eq == NULL || eq == s)
		return 0;
	for (const char *p = s; p < eq; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
		      (p > s && *p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/*
 * The child, between fork and execve: only async-signal-safe calls.  Puts
 * devnull, out_w, err_w on 0, 1, 2 and the exec-error pipe on 3
 * (close-on-exec), closes everything else, resets signals, execs.  On
 * failure writes errno to the pipe and exits 127.
 */
static void child(const char *path, char *const argv[], char *const envp[], int devnull, int out_w, int err_w, int ep_w,
		  int maxfd)
{
	int src[4] = {devnull, out_w, err_w, ep_w}, hi[4];
	static const int sigs[] = {SIGPIPE, SIGINT,  SIGQUIT, SIGTERM, SIGHUP,  SIGCHLD,
				   SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU};
	struct sigaction sa;
	sigset_t none;
	int e;

	(void)setpgid(0, 0);
	/* Move the four above 9 first so that no dup2 below clobbers another. */
	for (int i = 0; i < 4; i++)
		if ((hi[i] = fcntl(src[i], F_DUPFD, 10)) < 0)
			goto fail;
	for (int i = 0; i < 4; i++)
		if (dup2(hi[i], i) < 0)
			goto fail;
	if (set_cloexec(3) != 0)
		goto fail;
#ifdef TB_HAVE_CLOSEFROM
	(void)maxfd;
	closefrom(4);
#else
	for (int fd = 4; fd < maxfd; fd++)
		(void)close(fd);
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)sigaction(sigs[i], &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(path, argv, envp);
fail:
	e = errno;
	{
		ssize_t w = write(3, &e, sizeof(e));
		(void)w;
	}
	_exit(127);
}

void tb_proc_result_free(struct tb_proc_result *res)
{
	if (res == NULL)
		return;
	free(res->out);
	free(res->err);
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
}

char *tb_proc_display(const char *const argv[])
{
	char *s = tb_sh_quote_argv(argv, NULL);
	size_t n;

	if (s == NULL)
		return NULL;
	/* tb_sh_quote_argv quotes argv[0] always; a plain program name reads
	 * better bare ("ipmitool -I lanplus ..."). */
	n = strlen(argv[0]);
	if (n > 0 &&
	    strspn(argv[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_./-") == n &&
	    s[0] == '\'' && strncmp(s + 1, argv[0], n) == 0 && s[n + 1] == '\'') {
		memmove(s, s + 1, n);
		memmove(s + n, s + n + 2, strlen(s + n + 2) + 1);
	}
	return s;
}

/* One run, from building the environment to reaping the child. */
struct run {
	const char *const *argv;
	const volatile int *cancel;
	struct tb_proc_result *res;
	long timeout_ms;
	char path[PATH_MAX];
	char **envp;
	int maxfd;
	int devnull, out_r, out_w, err_r, err_w, ep_r, ep_w;
	struct tb_outbuf ob, eb;
	pid_t pid;
	int64_t start, deadline, kill_at, exited_at;
	bool exited, stopping, killed;
};

/* envp: PATH, LC_ALL and env_add (which may replace either), built before
 * fork so that the child allocates nothing; and the highest descriptor the
 * child may have to close. */
static int build_env(struct run *r, const char *const env_add[], struct tb_error *err)
{
	static const char path_env[] = "PATH=" TB_PROC_PATH;
	static const char lc_env[] = "LC_ALL=C";
	size_t nenv = 0, nadd = 0;
	struct rlimit rl;

	for (; env_add != NULL && env_add[nadd] != NULL; nadd++)
		if (!valid_env_entry(env_add[nadd]))
			return tb_fail(err, TB_ERR_INVALID, NULL, "an environment entry for %s is not NAME=VALUE",
				       r->argv[0]);
	r->envp = calloc(nadd + 3, sizeof(*r->envp));
	if (r->envp == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory starting %s", r->argv[0]);
	r->envp[nenv++] = (char *)path_env;
	r->envp[nenv++] = (char *)lc_env;
	for (size_t i = 0; i < nadd; i++) {
		size_t k = 0;

		/* A PATH or LC_ALL given by the caller replaces ours. */
		for (; k < nenv; k++) {
			const char *eq = strchr(r->envp[k], '=');

			if (strncmp(r->envp[k], env_add[i], (size_t)(eq - r->envp[k]) + 1) == 0)
				break;
		}
		r->envp[k] = (char *)env_add[i];
		if (k == nenv)
			nenv++;
	}
	r->envp[nenv] = NULL;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		r->maxfd = rl.rlim_cur > 1048576 ? 1048576 : (int)rl.rlim_cur;
	else
		r->maxfd = 1048576;
	return 0;
}

/* /dev/null and the three pipes (stdout, stderr, exec error), close-on-exec. */
static int open_pipes(struct run *r, struct tb_error *err)
{
	int p[2];

	r->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (r->devnull < 0)
		return tb_fail(err, TB_ERR_IO, NULL, "cannot open /dev/null: %s", strerror(errno));
	if (pipe(p) != 0)
		goto fail;
	r->out_r = p[0], r->out_w = p[1];
	if (pipe(p) != 0)
		goto fail;
	r->err_r = p[0], r->err_w = p[1];
	if (pipe(p) != 0)
		goto fail;
	r->ep_r = p[0], r->ep_w = p[1];
	if (set_cloexec(r->out_r) || set_cloexec(r->out_w) || set_cloexec(r->err_r) || set_cloexec(r->err_w) ||
	    set_cloexec(r->ep_r) || set_cloexec(r->ep_w))
		goto fail;
	return 0;
fail:
	return tb_fail(err, TB_ERR_IO, NULL, "cannot start %s: pipe: %s", r->argv[0], strerror(errno));
}

/* Fork and exec; then wait (bounded) on the exec-error pipe, which closes
 * on a successful exec or carries errno. */
static int spawn(struct run *r, struct tb_error *err)
{
	struct pollfd ep;
	ssize_t n = 0;
	int e = 0;

	r->start = tb_monotonic_ms();
	r->pid = fork();
	if (r->pid < 0)
		return tb_fail(err, TB_ERR_IO, NULL, "cannot start %s: fork: %s", r->argv[0], strerror(errno));
	if (r->pid == 0)
		child(r->path, (char *const *)r->argv, r->envp, r->devnull, r->out_w, r->err_w, r->ep_w, r->maxfd);
	(void)setpgid(r->pid, r->pid); /* also here: no race with an early kill(-pid) */
	r->res->pid = r->pid;
	close_fd(&r->out_w);
	close_fd(&r->err_w);
	close_fd(&r->ep_w);
	close_fd(&r->devnull);
	/* Bounded: a child forked by another thread in the instant between
	 * pipe() and set_cloexec() could hold ep_w open. */
	ep = (struct pollfd){r->ep_r, POLLIN, 0};
	if (poll(&ep, 1, (int)(r->timeout_ms < 5000 ? r->timeout_ms : 5000)) > 0)
		do
			n = read(r->ep_r, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		r->exited = true; /* the child exits 127 at once; reaped later */
		return tb_fail(err, TB_ERR_IO, NULL, "cannot run %s: %s", r->path, strerror(e));
	}
	r->deadline = r->start + r->timeout_ms;
	return 0;
}

/* Notice the exit (then kill what it left in its group), and at a cancel
 * or the deadline signal the group: SIGTERM, then SIGKILL after the grace. */
static void watch_child(struct run *r, int64_t now)
{
	if (!r->exited) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		/* WNOWAIT: the zombie keeps the pid and group id ours until we
		 * reap it, so that kill(-pid) can never hit a stranger. */
		if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == r->pid) {
			r->exited = true;
			r->exited_at = now;
			(void)kill(-r->pid, SIGKILL); /* what it left in its group */
		}
	}
	if (!r->exited && !r->stopping) {
		if (r->cancel != NULL && *r->cancel) {
			r->res->canceled = true;
			r->stopping = true;
		} else if (now >= r->deadline) {
			r->res->timed_out = true;
			r->stopping = true;
		}
		if (r->stopping) {
			(void)kill(-r->pid, SIGTERM);
			r->kill_at = now + TB_PROC_KILL_GRACE_MS;
		}
	}
	if (r->stopping && !r->exited && !r->killed && now >= r->kill_at) {
		(void)kill(-r->pid, SIGKILL);
		r->killed = true;
	}
}

/* How long the next poll may sleep. */
static long next_wait(const struct run *r, int64_t now)
{
	long wait = TICK_MS;

	if (!r->exited && !r->stopping && r->deadline - now < wait)
		wait = (long)(r->deadline - now);
	if (r->out_r < 0 && r->err_r < 0 && wait > 10)
		wait = 10; /* only the exit is left to notice */
	return wait < 1 ? 1 : wait;
}

/* Read stdout and stderr (each bounded by its outbuf) until the child has
 * ended and its pipes closed, or DRAIN_MS after its end. */
static int pump(struct run *r, struct tb_error *err)
{
	for (;;) {
		struct pollfd pfd[2];
		nfds_t n = 0;
		int64_t now = tb_monotonic_ms();

		watch_child(r, now);
		if (r->exited && r->out_r < 0 && r->err_r < 0)
			return 0;
		if (r->exited && now - r->exited_at >= DRAIN_MS)
			return 0;
		if (r->out_r >= 0)
			pfd[n].fd = r->out_r, pfd[n].events = POLLIN, pfd[n++].revents = 0;
		if (r->err_r >= 0)
			pfd[n].fd = r->err_r, pfd[n].events = POLLIN, pfd[n++].revents = 0;
		if (poll(n > 0 ? pfd : NULL, n, (int)next_wait(r, now)) < 0 && errno != EINTR)
			return tb_fail(err, TB_ERR_IO, NULL, "waiting for %s: poll: %s", r->argv[0], strerror(errno));
		for (nfds_t i = 0; i < n; i++) {
			char buf[4096];
			ssize_t got;
			int *fdp = pfd[i].fd == r->out_r ? &r->out_r : &r->err_r;

			if (pfd[i].revents == 0)
				continue;
			got = read(*fdp, buf, sizeof(buf));
			if (got > 0)
				tb_outbuf_add(fdp == &r->out_r ? &r->ob : &r->eb, buf, (size_t)got);
			else if (got == 0 || (errno != EINTR && errno != EAGAIN))
				close_fd(fdp);
		}
	}
}

/* Reap the child (killing it first if it may still run) and say how it
 * ended. */
static void reap_child(struct run *r)
{
	int status = 0;

	if (!r->exited)
		(void)kill(-r->pid, SIGKILL);
	while (waitpid(r->pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	r->res->elapsed_ms = (long)(tb_monotonic_ms() - r->start);
	if (status != -1 && WIFEXITED(status))
		r->res->exit_status = WEXITSTATUS(status);
	else if (status != -1 && WIFSIGNALED(status))
		r->res->term_signal = WTERMSIG(status);
}

/* A run of argv into res with nothing open yet. */
static struct run run_init(const char *const argv[], struct tb_proc_result *res)
{
	return (struct run){.argv = argv,
			    .res = res,
			    .pid = -1,
			    .devnull = -1,
			    .out_r = -1,
			    .out_w = -1,
			    .err_r = -1,
			    .err_w = -1,
			    .ep_r = -1,
			    .ep_w = -1,
			    .timeout_ms = DEFAULT_TIMEOUT_MS};
}

/* Close what of r is still open (handed-out descriptors are -1 by then). */
static void run_close(struct run *r)
{
	close_fd(&r->devnull);
	close_fd(&r->out_r);
	close_fd(&r->out_w);
	close_fd(&r->err_r);
	close_fd(&r->err_w);
	close_fd(&r->ep_r);
	close_fd(&r->ep_w);
	free(r->envp);
	r->envp = NULL;
}

/* Close what is open, and hand the output to the result. */
static int finish(struct run *r, int rc, struct tb_error *err)
{
	struct tb_proc_result *res = r->res;

	run_close(r);
	res->out_len = r->ob.len;
	res->out_truncated = r->ob.truncated;
	res->err_len = r->eb.len;
	res->err_truncated = r->eb.truncated;
	res->out = tb_outbuf_take(&r->ob);
	res->err = tb_outbuf_take(&r->eb);
	if ((res->out == NULL || res->err == NULL) && rc == 0)
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory reading the output of %s",
			     r->argv != NULL && r->argv[0] != NULL ? r->argv[0] : "a program");
	return rc;
}

int tb_proc_run(const char *const argv[], const char *const env_add[], long timeout_ms, size_t max_output,
		const volatile int *cancel, struct tb_proc_result *res, struct tb_error *err)
{
	struct run r = run_init(argv, res);
	int rc;

	r.cancel = cancel;
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
	r.ob.max = r.eb.max = max_output != 0 ? max_output : DEFAULT_MAX_OUTPUT;
	r.timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS;
	if (argv == NULL || argv[0] == NULL)
		rc = tb_fail(err, TB_ERR_INVALID, NULL, "no program to run");
	else if ((rc = find_program(argv[0], r.path, sizeof(r.path), err)) == 0 &&
		 (rc = build_env(&r, env_add, err)) == 0 && (rc = open_pipes(&r, err)) == 0 &&
		 (rc = spawn(&r, err)) == 0)
		rc = pump(&r, err);
	if (r.pid > 0) {
		reap_child(&r);
		if (rc == 0 && res->canceled)
			rc = tb_fail(err, TB_ERR_CANCELED, NULL, "%s was stopped on request", argv[0]);
		else if (rc == 0 && res->timed_out)
			rc = tb_fail(err, TB_ERR_TIMEOUT, NULL, "%s did not finish within %ld ms and was stopped",
				     argv[0], r.timeout_ms);
	}
	return finish(&r, rc, err);
}

/* ---- a long-running child with pipes (proc.h) ---- */

int tb_proc_spawn(const char *const argv[], const char *const env_add[], struct tb_proc_child *ch, struct tb_error *err)
{
	struct tb_proc_result res;
	struct run r = run_init(argv, &res);
	int in[2] = {-1, -1}, rc;

	memset(&res, 0, sizeof(res));
	memset(ch, 0, sizeof(*ch));
	ch->in = ch->out = ch->err = -1;
	if (argv == NULL || argv[0] == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no program to run");
	if ((rc = find_program(argv[0], r.path, sizeof(r.path), err)) != 0 || (rc = build_env(&r, env_add, err)) != 0 ||
	    (rc = open_pipes(&r, err)) != 0)
		goto out;
	/* stdin: a pipe in place of /dev/null */
	close_fd(&r.devnull);
	if (pipe(in) != 0 || set_cloexec(in[0]) != 0 || set_cloexec(in[1]) != 0) {
		rc = tb_fail(err, TB_ERR_IO, NULL, "cannot start %s: pipe: %s", argv[0], strerror(errno));
		goto out;
	}
	r.devnull = in[0];
	in[0] = -1;
	if ((rc = spawn(&r, err)) != 0) {
		if (r.pid > 0)
			reap_child(&r);
		goto out;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(r.out_r, F_SETFL, O_NONBLOCK);
	fcntl(r.err_r, F_SETFL, O_NONBLOCK);
	ch->pid = r.pid;
	ch->in = in[1];
	ch->out = r.out_r;
	ch->err = r.err_r;
	in[1] = r.out_r = r.err_r = -1;
out:
	for (int i = 0; i < 2; i++)
		close_fd(&in[i]);
	run_close(&r);
	return rc;
}

int tb_proc_child_ended(struct tb_proc_child *ch)
{
	siginfo_t si;

	if (ch->pid <= 0 || ch->exited)
		return 1;
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: the zombie keeps its pid and group ours until reaped */
	if (waitid(P_PID, (id_t)ch->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == ch->pid)
		ch->exited = true;
	return ch->exited;
}

/* Wait up to ms for the child to end (polling). */
static void child_wait(struct tb_proc_child *ch, long ms)
{
	for (int64_t until = tb_monotonic_ms() + ms; !tb_proc_child_ended(ch) && tb_monotonic_ms() < until;) {
		struct timespec ts = {0, 20 * 1000000L};

		nanosleep(&ts, NULL);
	}
}

void tb_proc_child_end(struct tb_proc_child *ch, long grace_ms, int *status)
{
	int st = 0;

	if (status != NULL)
		*status = -1;
	close_fd(&ch->in);
	if (ch->pid > 0) {
		child_wait(ch, grace_ms);
		if (!tb_proc_child_ended(ch)) {
			(void)kill(-ch->pid, SIGTERM);
			child_wait(ch, TB_PROC_KILL_GRACE_MS);
		}
		(void)kill(-ch->pid, SIGKILL); /* it, or what it left in its group */
		while (waitpid(ch->pid, &st, 0) < 0 && errno == EINTR) {
		}
		if (status != NULL && WIFEXITED(st))
			*status = WEXITSTATUS(st);
	}
	close_fd(&ch->out);
	close_fd(&ch->err);
	ch->pid = 0;
}
