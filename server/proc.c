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
#include <unistd.h>

#include "outbuf.h"
#include "shquote.h"
#include "timeutil.h"

/*
 * closefrom(3) closes every descriptor from lowfd up with one call.  FreeBSD
 * has it (hidden by _POSIX_C_SOURCE) and so does glibc since 2.34; elsewhere
 * the child closes every possible descriptor up to RLIMIT_NOFILE.
 */
#if defined(__FreeBSD__) || \
	(defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)))
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
			return tb_fail(err, TB_ERR_INVALID, NULL, "program path too long: %.64s...",
				       argv0);
		if (stat(argv0, &st) != 0 || !S_ISREG(st.st_mode) || access(argv0, X_OK) != 0)
			return tb_fail(err, TB_ERR_NOT_FOUND, NULL,
				       "%s is not an executable file on this machine", argv0);
		snprintf(out, outsz, "%s", argv0);
		return 0;
	}
	if (strchr(argv0, '/') != NULL || argv0[0] == '\0')
		return tb_fail(err, TB_ERR_INVALID, NULL,
			       "a program is a bare name or an absolute path, not \"%s\"", argv0);
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
	return tb_fail(err, TB_ERR_NOT_FOUND, NULL, "%s is not installed on this machine (looked in %s)",
		       argv0, TB_PROC_PATH);
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
static void child(const char *path, char *const argv[], char *const envp[], int devnull,
		  int out_w, int err_w, int ep_w, int maxfd)
{
	int src[4] = {devnull, out_w, err_w, ep_w}, hi[4];
	static const int sigs[] = {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1,
				   SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU};
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
	if (n > 0 && strspn(argv[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				     "0123456789_./-") == n &&
	    s[0] == '\'' && strncmp(s + 1, argv[0], n) == 0 && s[n + 1] == '\'') {
		memmove(s, s + 1, n);
		memmove(s + n, s + n + 2, strlen(s + n + 2) + 1);
	}
	return s;
}

int tb_proc_run(const char *const argv[], const char *const env_add[], long timeout_ms,
		size_t max_output, const volatile int *cancel, struct tb_proc_result *res,
		struct tb_error *err)
{
	char path[PATH_MAX];
	char **envp = NULL;
	size_t nenv = 0, nadd = 0;
	int devnull = -1, out_r = -1, out_w = -1, err_r = -1, err_w = -1, ep_r = -1, ep_w = -1;
	int p[2], rc = 0, maxfd = 1024, status = 0;
	struct tb_outbuf ob = {0}, eb = {0};
	struct rlimit rl;
	pid_t pid = -1;
	int64_t start = 0, deadline, kill_at = 0, exited_at = 0;
	bool exited = false, stopping = false, killed = false;
	static const char path_env[] = "PATH=" TB_PROC_PATH;
	static const char lc_env[] = "LC_ALL=C";

	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
	if (max_output == 0)
		max_output = DEFAULT_MAX_OUTPUT;
	ob.max = eb.max = max_output;
	if (timeout_ms <= 0)
		timeout_ms = DEFAULT_TIMEOUT_MS;
	if (argv == NULL || argv[0] == NULL) {
		rc = tb_fail(err, TB_ERR_INVALID, NULL, "no program to run");
		goto out;
	}
	if ((rc = find_program(argv[0], path, sizeof(path), err)) != 0)
		goto out;

	/* Everything the child needs is built before fork: no malloc after it. */
	for (; env_add != NULL && env_add[nadd] != NULL; nadd++)
		if (!valid_env_entry(env_add[nadd])) {
			rc = tb_fail(err, TB_ERR_INVALID, NULL,
				     "an environment entry for %s is not NAME=VALUE", argv[0]);
			goto out;
		}
	envp = calloc(nadd + 3, sizeof(*envp));
	if (envp == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory starting %s", argv[0]);
		goto out;
	}
	envp[nenv++] = (char *)path_env;
	envp[nenv++] = (char *)lc_env;
	for (size_t i = 0; i < nadd; i++) {
		size_t k = 0;

		/* A PATH or LC_ALL given by the caller replaces ours. */
		for (; k < nenv; k++) {
			const char *eq = strchr(envp[k], '=');

			if (strncmp(envp[k], env_add[i], (size_t)(eq - envp[k]) + 1) == 0)
				break;
		}
		envp[k] = (char *)env_add[i];
		if (k == nenv)
			nenv++;
	}
	envp[nenv] = NULL;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		maxfd = rl.rlim_cur > 1048576 ? 1048576 : (int)rl.rlim_cur;
	else
		maxfd = 1048576;

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0) {
		rc = tb_fail(err, TB_ERR_IO, NULL, "cannot open /dev/null: %s", strerror(errno));
		goto out;
	}
	if (pipe(p) != 0)
		goto pipe_fail;
	out_r = p[0], out_w = p[1];
	if (pipe(p) != 0)
		goto pipe_fail;
	err_r = p[0], err_w = p[1];
	if (pipe(p) != 0)
		goto pipe_fail;
	ep_r = p[0], ep_w = p[1];
	if (set_cloexec(out_r) || set_cloexec(out_w) || set_cloexec(err_r) || set_cloexec(err_w) ||
	    set_cloexec(ep_r) || set_cloexec(ep_w))
		goto pipe_fail;

	start = tb_monotonic_ms();
	pid = fork();
	if (pid < 0) {
		rc = tb_fail(err, TB_ERR_IO, NULL, "cannot start %s: fork: %s", argv[0],
			     strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(path, (char *const *)argv, envp, devnull, out_w, err_w, ep_w, maxfd);
	(void)setpgid(pid, pid); /* also here: no race with an early kill(-pid) */
	res->pid = pid;
	close_fd(&out_w);
	close_fd(&err_w);
	close_fd(&ep_w);
	close_fd(&devnull);

	/* The exec-error pipe closes on a successful exec, or carries errno. */
	{
		int e = 0;
		ssize_t n;

		struct pollfd ep = {ep_r, POLLIN, 0};

		/* Bounded: a child forked by another thread in the instant
		 * between pipe() and set_cloexec() could hold ep_w open. */
		n = 0;
		if (poll(&ep, 1, (int)(timeout_ms < 5000 ? timeout_ms : 5000)) > 0)
			do
				n = read(ep_r, &e, sizeof(e));
			while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(e)) {
			rc = tb_fail(err, TB_ERR_IO, NULL, "cannot run %s: %s", path, strerror(e));
			/* the child exits 127 at once; reaped below */
			exited = true;
		}
	}

	deadline = start + timeout_ms;
	while (rc == 0) {
		struct pollfd pfd[2];
		nfds_t n = 0;
		int64_t now = tb_monotonic_ms();
		long wait = TICK_MS;

		if (!exited) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			/* WNOWAIT: the zombie keeps the pid and group id ours until
			 * we reap it, so that kill(-pid) can never hit a stranger. */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				exited = true;
				exited_at = now;
				(void)kill(-pid, SIGKILL); /* what it left in its group */
			}
		}
		if (exited && out_r < 0 && err_r < 0)
			break;
		if (exited && now - exited_at >= DRAIN_MS)
			break;
		if (!exited && !stopping) {
			if (cancel != NULL && *cancel) {
				res->canceled = true;
				stopping = true;
			} else if (now >= deadline) {
				res->timed_out = true;
				stopping = true;
			}
			if (stopping) {
				(void)kill(-pid, SIGTERM);
				kill_at = now + TB_PROC_KILL_GRACE_MS;
			}
		}
		if (stopping && !exited && !killed && now >= kill_at) {
			(void)kill(-pid, SIGKILL);
			killed = true;
		}
		if (!exited && !stopping && deadline - now < wait)
			wait = (long)(deadline - now);
		if (out_r < 0 && err_r < 0 && wait > 10)
			wait = 10; /* only the exit is left to notice */
		if (wait < 1)
			wait = 1;
		if (out_r >= 0)
			pfd[n].fd = out_r, pfd[n].events = POLLIN, pfd[n++].revents = 0;
		if (err_r >= 0)
			pfd[n].fd = err_r, pfd[n].events = POLLIN, pfd[n++].revents = 0;
		if (poll(n > 0 ? pfd : NULL, n, (int)wait) < 0 && errno != EINTR) {
			rc = tb_fail(err, TB_ERR_IO, NULL, "waiting for %s: poll: %s", argv[0],
				     strerror(errno));
			break;
		}
		for (nfds_t i = 0; i < n; i++) {
			char buf[4096];
			ssize_t got;
			int *fdp = pfd[i].fd == out_r ? &out_r : &err_r;

			if (pfd[i].revents == 0)
				continue;
			got = read(*fdp, buf, sizeof(buf));
			if (got > 0)
				tb_outbuf_add(fdp == &out_r ? &ob : &eb, buf, (size_t)got);
			else if (got == 0 || (errno != EINTR && errno != EAGAIN))
				close_fd(fdp);
		}
	}

	/* Reap.  On a poll error the child may still run: stop it first. */
	if (!exited) {
		(void)kill(-pid, SIGKILL);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	res->elapsed_ms = (long)(tb_monotonic_ms() - start);
	if (status != -1 && WIFEXITED(status))
		res->exit_status = WEXITSTATUS(status);
	else if (status != -1 && WIFSIGNALED(status))
		res->term_signal = WTERMSIG(status);
	if (rc == 0 && res->canceled)
		rc = tb_fail(err, TB_ERR_CANCELED, NULL, "%s was stopped on request", argv[0]);
	else if (rc == 0 && res->timed_out)
		rc = tb_fail(err, TB_ERR_TIMEOUT, NULL, "%s did not finish within %ld ms and was stopped",
			     argv[0], timeout_ms);
	goto out;

pipe_fail:
	rc = tb_fail(err, TB_ERR_IO, NULL, "cannot start %s: pipe: %s", argv[0], strerror(errno));
out:
	close_fd(&devnull);
	close_fd(&out_r);
	close_fd(&out_w);
	close_fd(&err_r);
	close_fd(&err_w);
	close_fd(&ep_r);
	close_fd(&ep_w);
	free(envp);
	res->out_len = ob.len;
	res->out_truncated = ob.truncated;
	res->err_len = eb.len;
	res->err_truncated = eb.truncated;
	res->out = tb_outbuf_take(&ob);
	res->err = tb_outbuf_take(&eb);
	if (res->out == NULL || res->err == NULL) {
		if (rc == 0)
			rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory reading the output of %s",
				     argv != NULL && argv[0] != NULL ? argv[0] : "a program");
	}
	return rc;
}
