/*
 * test_proc.c - tb_proc_run with real /bin/sh programs: output and exit
 * codes, signals, the timeout and cancel stop the whole process group (a
 * backgrounded sleep too, and one that ignores SIGTERM), nothing survives a
 * normal end, a secret given in env_add is in the child's environment and
 * in no /proc/PID/cmdline, the daemon's environment and descriptors do not
 * reach the child, output is bounded, no zombie is left.
 *
 * The test process sets itself up like testbedd: SIGPIPE ignored, SIGTERM,
 * SIGINT and SIGHUP blocked (main.c), so that the child's reset is tested.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "timeutil.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A process is gone when kill fails or it is a zombie waiting for its
 * (new) parent to reap it: orphans are reaped late on these machines. */
static int gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	if (kill(pid, 0) != 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return 1;
	return p[1] == ' ' && p[2] == 'Z';
}

static int wait_gone(pid_t pid, long ms)
{
	for (long t = 0; t < ms; t += 20) {
		if (gone(pid))
			return 1;
		sleep_ms(20);
	}
	return gone(pid);
}

/* No child of this process is left, zombie or not. */
static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static int run(const char *script, long timeout_ms, struct tb_proc_result *res)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct tb_error e;

	return tb_proc_run(argv, NULL, timeout_ms, 0, NULL, res, &e);
}

static void test_output_and_exit(void **state)
{
	struct tb_proc_result r;

	assert_int_equal(run("echo out; echo err >&2; printf tail; exit 3", 5000, &r), 0);
	assert_string_equal(r.out, "out\ntail");
	assert_int_equal(r.out_len, 8);
	assert_string_equal(r.err, "err\n");
	assert_int_equal(r.exit_status, 3);
	assert_int_equal(r.term_signal, 0);
	assert_false(r.timed_out);
	assert_true(r.pid > 0);
	tb_proc_result_free(&r);

	assert_int_equal(run("true", 5000, &r), 0);
	assert_int_equal(r.exit_status, 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	assert_true(r.elapsed_ms < 1000);
	tb_proc_result_free(&r);

	/* stdin is /dev/null: cat ends at once with nothing */
	assert_int_equal(run("cat; readlink /proc/$$/fd/0", 5000, &r), 0);
	assert_string_equal(r.out, "/dev/null\n");
	tb_proc_result_free(&r);
	assert_no_children();
}

static void test_signal(void **state)
{
	struct tb_proc_result r;

	assert_int_equal(run("kill -s USR1 $$", 5000, &r), 0);
	assert_int_equal(r.exit_status, -1);
	assert_int_equal(r.term_signal, SIGUSR1);
	tb_proc_result_free(&r);
	/* SIGPIPE is ignored in the daemon, default again in the child */
	assert_int_equal(run("kill -s PIPE $$", 5000, &r), 0);
	assert_int_equal(r.term_signal, SIGPIPE);
	tb_proc_result_free(&r);
	assert_no_children();
}

static void test_not_found(void **state)
{
	const char *argv1[] = {"tb-no-such-program", NULL};
	const char *argv2[] = {"./sh", NULL};
	const char *argv3[] = {"/nonexistent/tb", NULL};
	const char *argv4[] = {"/bin/echo", "abs", NULL};
	struct tb_proc_result r;
	struct tb_error e;

	assert_int_equal(tb_proc_run(argv1, NULL, 1000, 0, NULL, &r, &e), TB_ERR_NOT_FOUND);
	assert_non_null(strstr(e.message, "tb-no-such-program is not installed"));
	assert_non_null(strstr(e.message, "/usr/local/sbin:"));
	assert_int_equal(r.pid, 0);
	tb_proc_result_free(&r);
	assert_int_equal(tb_proc_run(argv2, NULL, 1000, 0, NULL, &r, &e), TB_ERR_INVALID);
	tb_proc_result_free(&r);
	assert_int_equal(tb_proc_run(argv3, NULL, 1000, 0, NULL, &r, &e), TB_ERR_NOT_FOUND);
	tb_proc_result_free(&r);
	assert_int_equal(tb_proc_run(argv4, NULL, 1000, 0, NULL, &r, &e), 0);
	assert_string_equal(r.out, "abs\n");
	tb_proc_result_free(&r);
	assert_no_children();
}

/* The timeout stops the whole group: sh and the sleep it started. */
static void test_timeout_kills_group(void **state)
{
	struct tb_proc_result r;
	struct tb_error e;
	const char *argv[] = {"sh", "-c", "sleep 30 & echo $!; wait", NULL};
	int64_t t0 = tb_monotonic_ms();
	pid_t sleeper;

	assert_int_equal(tb_proc_run(argv, NULL, 300, 0, NULL, &r, &e), TB_ERR_TIMEOUT);
	assert_true(r.timed_out);
	assert_non_null(strstr(e.message, "did not finish within 300 ms"));
	/* SIGTERM reached sh although the test (like the daemon) blocks it */
	assert_int_equal(r.term_signal, SIGTERM);
	assert_true(tb_monotonic_ms() - t0 < 300 + 800);
	sleeper = (pid_t)atol(r.out);
	assert_true(sleeper > 1);
	assert_true(wait_gone(sleeper, 3000));
	tb_proc_result_free(&r);
	assert_no_children();
}

/* A group that ignores SIGTERM gets SIGKILL after the grace. */
static void test_timeout_kill_after_grace(void **state)
{
	struct tb_proc_result r;
	int64_t t0 = tb_monotonic_ms(), dt;
	pid_t sleeper;

	assert_int_equal(run("trap '' TERM; sleep 30 & echo $!; wait; wait", 200, &r), TB_ERR_TIMEOUT);
	dt = tb_monotonic_ms() - t0;
	assert_int_equal(r.term_signal, SIGKILL);
	assert_true(dt >= 200 + TB_PROC_KILL_GRACE_MS - 50);
	assert_true(dt < 200 + TB_PROC_KILL_GRACE_MS + 1000);
	sleeper = (pid_t)atol(r.out);
	assert_true(sleeper > 1);
	assert_true(wait_gone(sleeper, 3000));
	tb_proc_result_free(&r);
	assert_no_children();
}

/* After a normal end, what the command left in its group is stopped too,
 * and the call does not wait for it. */
static void test_leftover_killed(void **state)
{
	struct tb_proc_result r;
	pid_t sleeper;

	assert_int_equal(run("sleep 30 >/dev/null 2>&1 & echo $!", 5000, &r), 0);
	assert_int_equal(r.exit_status, 0);
	assert_true(r.elapsed_ms < 1000);
	sleeper = (pid_t)atol(r.out);
	assert_true(sleeper > 1);
	assert_true(wait_gone(sleeper, 3000));
	tb_proc_result_free(&r);

	/* one holding our stdout open: killed, the call returns at once */
	assert_int_equal(run("sleep 30 & echo $!", 5000, &r), 0);
	assert_true(r.elapsed_ms < 1500);
	sleeper = (pid_t)atol(r.out);
	assert_true(wait_gone(sleeper, 3000));
	tb_proc_result_free(&r);
	assert_no_children();
}

struct canceller {
	volatile int flag;
	long after_ms;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;

	sleep_ms(c->after_ms);
	c->flag = 1;
	return NULL;
}

static void test_cancel(void **state)
{
	struct canceller c = {0, 200};
	const char *argv[] = {"sleep", "30", NULL};
	struct tb_proc_result r;
	struct tb_error e;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
	assert_int_equal(tb_proc_run(argv, NULL, 20000, 0, &c.flag, &r, &e), TB_ERR_CANCELED);
	pthread_join(th, NULL);
	assert_true(r.canceled);
	assert_false(r.timed_out);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_true(r.elapsed_ms < 1500);
	tb_proc_result_free(&r);
	assert_no_children();
}

#define SECRET "tb-proc-secret-5ee3c0de"

struct bg_run {
	int rc;
	struct tb_proc_result r;
	volatile int done;
};

static void *run_secret(void *arg)
{
	struct bg_run *b = arg;
	const char *argv[] = {"sh", "-c", "sleep 0.6; printf %s \"$TB_SECRET\"", NULL};
	const char *env[] = {"TB_SECRET=" SECRET, NULL};

	b->rc = tb_proc_run(argv, env, 5000, 0, NULL, &b->r, NULL);
	b->done = 1;
	return NULL;
}

/* 1 when any /proc/PID/<what> of a process holds needle. */
static int proc_holds(const char *what, const char *needle, pid_t only)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	assert_non_null(d);
	while (!found && (de = readdir(d)) != NULL) {
		char path[300], buf[65536];
		size_t n, len = strlen(needle);
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (only > 0 && atol(de->d_name) != (long)only)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/%s", de->d_name, what);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		for (size_t i = 0; i + len <= n; i++)
			if (memcmp(buf + i, needle, len) == 0) {
				found = 1;
				break;
			}
	}
	closedir(d);
	return found;
}

static void test_secret_only_in_env(void **state)
{
	struct bg_run b;
	pthread_t th;
	int seen_env = 0, scans = 0;
	int64_t end;

	memset(&b, 0, sizeof(b));
	assert_int_equal(pthread_create(&th, NULL, run_secret, &b), 0);
	end = tb_monotonic_ms() + 10000;
	while (!b.done && tb_monotonic_ms() < end) {
		/* the secret is on no command line while the child runs ... */
		assert_false(proc_holds("cmdline", SECRET, 0));
		scans++;
		/* ... and in the environment of a running process (the scan saw it) */
		if (!seen_env)
			seen_env = proc_holds("environ", SECRET, 0);
		sleep_ms(10);
	}
	pthread_join(th, NULL);
	assert_true(scans > 3);
	assert_true(seen_env);
	assert_int_equal(b.rc, 0);
	assert_string_equal(b.r.out, SECRET);
	tb_proc_result_free(&b.r);
	assert_no_children();
}

/* The child's environment is PATH, LC_ALL and env_add, nothing of ours. */
static void test_environment(void **state)
{
	const char *argv[] = {"sh", "-c", "env | sort", NULL};
	const char *env[] = {"TB_A=1", "LC_ALL=en_US.UTF-8", NULL};
	const char *bad[] = {"NOEQUALS", NULL};
	const char *bad2[] = {"1X=2", NULL};
	struct tb_proc_result r;
	struct tb_error e;

	setenv("TB_DAEMON_SECRET", "leak", 1);
	assert_int_equal(tb_proc_run(argv, env, 5000, 0, NULL, &r, &e), 0);
	assert_null(strstr(r.out, "TB_DAEMON_SECRET"));
	assert_non_null(strstr(r.out, "PATH=" TB_PROC_PATH "\n"));
	assert_non_null(strstr(r.out, "TB_A=1\n"));
	assert_non_null(strstr(r.out, "LC_ALL=en_US.UTF-8\n"));
	assert_null(strstr(r.out, "LC_ALL=C\n"));
	tb_proc_result_free(&r);
	assert_int_equal(tb_proc_run(argv, bad, 5000, 0, NULL, &r, &e), TB_ERR_INVALID);
	tb_proc_result_free(&r);
	assert_int_equal(tb_proc_run(argv, bad2, 5000, 0, NULL, &r, &e), TB_ERR_INVALID);
	tb_proc_result_free(&r);
	unsetenv("TB_DAEMON_SECRET");
}

static void test_bounded_output(void **state)
{
	const char *argv[] = {"sh", "-c",
			      "i=0; while [ $i -lt 5000 ]; do "
			      "echo 0123456789012345678901234567890123456789 >&2; "
			      "echo 0123456789012345678901234567890123456789; i=$((i+1)); done; echo end >&2",
			      NULL};
	struct tb_proc_result r;
	struct tb_error e;

	assert_int_equal(tb_proc_run(argv, NULL, 20000, 1000, NULL, &r, &e), 0);
	assert_int_equal(r.exit_status, 0); /* read to the end, not blocked */
	assert_int_equal(r.out_len, 1000);
	assert_int_equal(strlen(r.out), 1000);
	assert_true(r.out_truncated);
	assert_int_equal(r.err_len, 1000);
	assert_true(r.err_truncated);
	assert_memory_equal(r.out, "0123456789012345678901234567890123456789\n01234", 46);
	tb_proc_result_free(&r);
	assert_int_equal(run("echo short", 5000, &r), 0);
	assert_false(r.out_truncated);
	tb_proc_result_free(&r);
}

/* Descriptors of the daemon (a socket, a file, neither close-on-exec) do
 * not reach the child: it has exactly 0, 1 and 2. */
static void test_fds_not_inherited(void **state)
{
	struct tb_proc_result r;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int f = open("/dev/null", O_RDONLY);
	int hi = dup2(f, 200);

	assert_true(s >= 0 && f >= 0 && hi == 200);
	/* the fds of a child of sh: what sh got from us (sh's own glob or
	 * pipes would add some).  Looked at until they are 0 1 2, for 2 s at
	 * most: sleep opens a locale file as fd 3 for a moment as it starts
	 * (seen once under load), while an inherited one stays */
	assert_int_equal(run("sleep 3 & n=0; until l=$(ls /proc/$!/fd); [ \"$l\" = \"$(printf '0\\n1\\n2')\" ] || "
			     "[ $n -ge 40 ]; do n=$((n+1)); sleep 0.05; done; echo \"$l\"; kill $!",
			     5000, &r),
			 0);
	assert_string_equal(r.out, "0\n1\n2\n");
	tb_proc_result_free(&r);
	close(s);
	close(f);
	close(hi);
}

static void test_display(void **state)
{
	const char *a1[] = {"ipmitool", "-I", "lanplus", "-E", "chassis", "power", "on", NULL};
	const char *a2[] = {"sh", "-c", "echo 'hi'; x", NULL};
	const char *a3[] = {"a b", "c", NULL};
	char *s;

	s = tb_proc_display(a1);
	assert_string_equal(s, "ipmitool -I lanplus -E chassis power on");
	free(s);
	s = tb_proc_display(a2);
	assert_string_equal(s, "sh -c 'echo '\\''hi'\\''; x'");
	free(s);
	s = tb_proc_display(a3);
	assert_string_equal(s, "'a b' c");
	free(s);
}

/* Many runs from several threads at once: each gets its own output. */
static void *run_many(void *arg)
{
	long id = (long)(intptr_t)arg;
	char script[64], want[32];

	snprintf(script, sizeof(script), "echo %ld", id);
	snprintf(want, sizeof(want), "%ld\n", id);
	for (int i = 0; i < 20; i++) {
		struct tb_proc_result r;

		if (run(script, 5000, &r) != 0 || strcmp(r.out, want) != 0)
			return (void *)1;
		tb_proc_result_free(&r);
	}
	return NULL;
}

/* Read fd (non-blocking) until buf holds want or 5 s passed. */
static void read_until(int fd, char *buf, size_t max, const char *want)
{
	size_t n = strlen(buf);

	for (int i = 0; i < 500 && strstr(buf, want) == NULL; i++) {
		ssize_t got = read(fd, buf + n, max - 1 - n);

		if (got > 0) {
			n += (size_t)got;
			buf[n] = '\0';
		} else {
			sleep_ms(10);
		}
	}
	assert_non_null(strstr(buf, want));
}

/* A spawned child: its pipes both ways, the added environment, its end at
 * the end of its input; one that ignores its input ends by signal with its
 * whole group (a grandchild too); nothing left to reap. */
static void test_spawn(void **state)
{
	const char *talk[] = {"sh", "-c", "read x; echo \"got $x $TB_SPAWN_VAR\"; echo oops >&2; read y; exit 3", NULL};
	const char *env[] = {"TB_SPAWN_VAR=s3cret", NULL};
	const char *deaf[] = {"sh", "-c", "sleep 30 & echo $!; exec sleep 30", NULL};
	const char *missing[] = {"tb-no-such-program", NULL};
	struct tb_proc_child ch;
	struct tb_error e = {0};
	char out[256] = "", err[256] = "";
	int status = -2;
	pid_t grandchild;

	(void)state;
	assert_int_equal(tb_proc_spawn(talk, env, &ch, &e), 0);
	assert_true(ch.pid > 0);
	assert_int_equal(write(ch.in, "hi\n", 3), 3);
	read_until(ch.out, out, sizeof(out), "got hi s3cret\n");
	read_until(ch.err, err, sizeof(err), "oops\n");
	assert_int_equal(tb_proc_child_ended(&ch), 0); /* waits for its second line */
	tb_proc_child_end(&ch, 2000, &status);         /* stdin closed: read y fails, exit 3 */
	assert_int_equal(status, 3);
	assert_no_children();

	assert_int_equal(tb_proc_spawn(deaf, NULL, &ch, &e), 0);
	out[0] = '\0';
	read_until(ch.out, out, sizeof(out), "\n");
	grandchild = (pid_t)strtol(out, NULL, 10);
	assert_true(grandchild > 0);
	tb_proc_child_end(&ch, 50, &status);
	assert_int_equal(status, -1);
	for (int i = 0; i < 100 && !gone(grandchild); i++)
		sleep_ms(20);
	assert_true(gone(grandchild));
	assert_no_children();

	assert_int_equal(tb_proc_spawn(missing, NULL, &ch, &e), TB_ERR_NOT_FOUND);
	assert_no_children();
}

static void test_threads(void **state)
{
	pthread_t th[6];
	void *ret;

	for (long i = 0; i < 6; i++)
		assert_int_equal(pthread_create(&th[i], NULL, run_many, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], &ret);
		assert_null(ret);
	}
	assert_no_children();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_and_exit),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_timeout_kill_after_grace),
		cmocka_unit_test(test_leftover_killed),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_secret_only_in_env),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_bounded_output),
		cmocka_unit_test(test_fds_not_inherited),
		cmocka_unit_test(test_display),
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_threads),
	};
	sigset_t set;

	/* as testbedd's main.c */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
