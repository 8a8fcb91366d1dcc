/*
 * test_ssh.c - the SSH adapter against a real sshd on 127.0.0.1
 * (tests/support/sshd.c): output and exit status, quoting, host key pinning,
 * authentication errors, timeouts that really stop the remote command,
 * spawn + kill by pid, the session pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "ssh.h"
#include "sshd.h"

static struct tb_sshd sshd;
/* other sshd instances, global so that teardown stops them after a failure */
static struct tb_sshd tcsh_sshd, rekey_sshd;
static struct tb_ssh_pool *pool;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static struct tb_ssh_target target_of(const struct tb_sshd *d)
{
	struct tb_ssh_target t = {
		.machine = "left",
		.os = "ubuntu",
		.address = "127.0.0.1",
		.port = d->port,
		.user = d->user,
		.key_file = d->client_key,
		.pinned_fp = d->host_fp,
		.connect_timeout_s = 5,
	};
	return t;
}

static int setup(void **state)
{
	if (tb_sshd_start(&sshd, NULL) != 0)
		return -1;
	pool = tb_ssh_pool_new(2, 60);
	return pool != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	tb_ssh_pool_free(pool);
	tb_sshd_stop(&sshd);
	tb_sshd_stop(&tcsh_sshd);
	tb_sshd_stop(&rekey_sshd);
	return 0;
}

static void expect_ok(int rc, const struct tb_error *err)
{
	if (rc != 0)
		fail_msg("rc %d (%s): %s", rc, tb_err_name(rc), err->message);
}

/* ---- output, status, quoting ---- */

static void test_exec_output_and_status(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	const char *argv[] = {"sh", "-c", "echo out; echo err >&2; cat; exit 3", NULL};
	int rc;

	rc = tb_ssh_run_capture(pool, &t, argv, 5000, 4096, &cap, &err);
	expect_ok(rc, &err);
	assert_string_equal(cap.out, "out\n");
	assert_string_equal(cap.err, "err\n");
	assert_int_equal(cap.res.exit_status, 3);
	assert_string_equal(cap.res.exit_signal, "");
	assert_false(cap.res.stopped);
	assert_string_equal(cap.res.host_fp, sshd.host_fp);
	tb_ssh_capture_free(&cap);

	/* a command that does not exist: sh's 127, message on stderr */
	{
		const char *nx[] = {"tb-no-such-command", NULL};

		rc = tb_ssh_run_capture(pool, &t, nx, 5000, 4096, &cap, &err);
		expect_ok(rc, &err);
		assert_int_equal(cap.res.exit_status, 127);
		assert_non_null(strstr(cap.err, "tb-no-such-command"));
		tb_ssh_capture_free(&cap);
	}
}

static void test_capture_is_bounded(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	const char *argv[] = {"head", "-c", "300000", "/dev/zero", NULL};
	int rc;

	rc = tb_ssh_run_capture(pool, &t, argv, 5000, 1000, &cap, &err);
	expect_ok(rc, &err);
	assert_int_equal(cap.out_len, 1000);
	assert_true(cap.out_truncated);
	assert_false(cap.err_truncated);
	assert_int_equal(cap.res.exit_status, 0);
	tb_ssh_capture_free(&cap);
}

struct timing {
	long long start;
	long long first; /* ms after start of the first stdout chunk */
	size_t chunks;
	char text[256];
	size_t len;
};

static int on_timed_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct timing *tm = cls;

	if (stream != TB_SSH_STDOUT)
		return 0;
	if (tm->chunks++ == 0)
		tm->first = now_ms() - tm->start;
	if (tm->len + len < sizeof(tm->text)) {
		memcpy(tm->text + tm->len, data, len);
		tm->len += len;
	}
	return 0;
}

/* Output is delivered while the command runs, not at its end. */
static void test_exec_streams_live(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_result res;
	struct tb_error err = {0};
	struct timing tm = {0};
	const char *argv[] = {"sh", "-c", "echo first; sleep 1.5; echo second", NULL};
	long long total;
	int rc;

	tm.start = now_ms();
	rc = tb_ssh_exec(pool, &t, argv, 10000, on_timed_output, &tm, &res, &err);
	total = now_ms() - tm.start;
	expect_ok(rc, &err);
	assert_int_equal(res.exit_status, 0);
	assert_true(tm.chunks >= 2);
	assert_true(tm.len < sizeof(tm.text));
	tm.text[tm.len] = '\0';
	assert_string_equal(tm.text, "first\nsecond\n");
	assert_true(total >= 1500);
	if (tm.first > total - 1000)
		fail_msg("first chunk came at %lld ms of %lld: not streamed", tm.first, total);
}

/* Hostile arguments arrive byte-exact: printf '%s\0' ARGS on the server. */
static void check_roundtrip_on(struct tb_ssh_pool *p, const struct tb_ssh_target *t, const char *const *args);

static void check_roundtrip(const struct tb_ssh_target *t, const char *const *args)
{
	check_roundtrip_on(NULL, t, args);
}

static void check_roundtrip_on(struct tb_ssh_pool *p, const struct tb_ssh_target *t, const char *const *args)
{
	const char *argv[400];
	char expected[65536];
	size_t n = 0, elen = 0;
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	int rc;

	argv[n++] = "printf";
	argv[n++] = "%s\\0";
	for (size_t i = 0; args[i] != NULL; i++) {
		size_t l = strlen(args[i]);

		assert_true(n < 398 && elen + l + 1 < sizeof(expected));
		argv[n++] = args[i];
		memcpy(expected + elen, args[i], l + 1);
		elen += l + 1;
	}
	argv[n] = NULL;
	rc = tb_ssh_run_capture(p, t, argv, 10000, sizeof(expected), &cap, &err);
	expect_ok(rc, &err);
	if (cap.out_len != elen || memcmp(cap.out, expected, elen) != 0)
		fail_msg("arguments changed on the way: sent %zu bytes, got %zu (stderr: %s)", elen, cap.out_len,
			 cap.err);
	assert_int_equal(cap.res.exit_status, 0);
	tb_ssh_capture_free(&cap);
}

static const char *const hostile[] = {
	"",         "a b",     " ",       "'",    "\"",    "'\"'",        "it's",
	"$HOME",    "${HOME}", "$(id)",   "`id`", "\\",    "\\\\",        "a\\nb",
	";",        "|",       "&",       "&&",   ">",     "<",           "2>&1",
	"*",        "?",       "[a]",     "~",    "~root", "{a,b}",       "#",
	"!",        "!!",      "a!b",     "!$",   "^x^y",  "\n",          "a\nb",
	"\n\n",     "'\n'",    "!\n",     "\r\n", "\t",    "-",           "--",
	"-n",       "-e",      "%s",      "%%",   "\\0",   "caf\xc3\xa9", "\xf0\x9f\x98\x80",
	"\xff\xfe", "\xc3",    "$status", "a=b",  NULL,
};

static void test_hostile_argv(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	static char bytes[255][4];
	const char *every[256];

	check_roundtrip(&t, hostile);
	for (int b = 1; b <= 255; b++) {
		bytes[b - 1][0] = 'X';
		bytes[b - 1][1] = (char)b;
		bytes[b - 1][2] = 'Y';
		every[b - 1] = bytes[b - 1];
	}
	every[255] = NULL;
	check_roundtrip(&t, every);
}

static void check_timeout_stops(struct tb_ssh_pool *p, const struct tb_ssh_target *t);

/* The same through a csh login shell: sshd hands the command to tcsh -c. */
static void test_hostile_argv_tcsh(void **state)
{
	struct tb_sshd *d = &tcsh_sshd;
	struct tb_ssh_target t;
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	const char *parent[] = {"sh", "-c", "ps -o comm= -p $PPID", NULL};
	int rc;

	assert_int_equal(tb_sshd_start(d, "ForceCommand /usr/bin/tcsh -c "
					  "\"$SSH_ORIGINAL_COMMAND\"\n"),
			 0);
	t = target_of(d);
	t.os = "freebsd";
	/* prove that tcsh is the shell that parsed our line */
	rc = tb_ssh_run_capture(NULL, &t, parent, 10000, 4096, &cap, &err);
	expect_ok(rc, &err);
	assert_string_equal(cap.out, "tcsh\n");
	tb_ssh_capture_free(&cap);
	check_roundtrip(&t, hostile);
	/* the watchdog works under csh too */
	t.machine = "router";
	check_timeout_stops(NULL, &t);
	/* and a standby shell: csh starts /bin/sh, which evals the same script */
	{
		struct tb_ssh_pool *p = tb_ssh_pool_new(2, 60);
		struct tb_ssh_pool_stats st;

		assert_non_null(p);
		assert_int_equal(tb_ssh_standby(p, &t, &err), 0);
		check_roundtrip_on(p, &t, hostile);
		tb_ssh_pool_stats(p, &st);
		assert_int_equal(st.standbys, 1);
		tb_ssh_pool_free(p);
	}
	tb_sshd_stop(d);
}

/* ---- host keys and authentication ---- */

static void test_pinned_key_accepted(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	char fp[TB_SSH_FP_MAX];

	/* pinned as `ssh-keygen -lf` prints it: must match libssh's rendering */
	assert_int_equal(strncmp(sshd.host_fp, "SHA256:", 7), 0);
	expect_ok(tb_ssh_exec(NULL, &t, argv, 5000, NULL, NULL, &res, &err), &err);
	assert_string_equal(res.host_fp, sshd.host_fp);
	assert_int_equal(res.exit_status, 0);
	expect_ok(tb_ssh_host_key(&t, fp, &err), &err);
	assert_string_equal(fp, sshd.host_fp);
}

static void test_unknown_key_refused(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"touch", "/tmp/tb-ssh-test-must-not-exist", NULL};
	int rc;

	t.pinned_fp = NULL;
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, &res, &err);
	assert_int_equal(rc, TB_ERR_HOSTKEY);
	assert_int_equal(err.code, TB_ERR_HOSTKEY);
	assert_string_equal(res.host_fp, sshd.host_fp);
	assert_non_null(strstr(err.message, "left (ubuntu)"));
	assert_non_null(strstr(err.message, sshd.host_fp));
	assert_non_null(strstr(err.message, "tbctl host trust left"));
	assert_int_equal(access("/tmp/tb-ssh-test-must-not-exist", F_OK), -1);
}

static void test_wrong_pin_refused(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	const char *pin = "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU";
	int rc;

	t.pinned_fp = pin;
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, &res, &err);
	assert_int_equal(rc, TB_ERR_HOSTKEY);
	assert_string_equal(res.host_fp, sshd.host_fp);
	assert_non_null(strstr(err.message, "which is not the pinned"));
	assert_non_null(strstr(err.message, pin));
	assert_non_null(strstr(err.message, sshd.host_fp));

	t.pinned_fp = "47DEQpj8HBSa"; /* not SHA256:... */
	assert_int_equal(tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, &res, &err), TB_ERR_CONFIG);
	assert_string_equal(err.field, "pinned_fp");
}

/* The host is reinstalled (new host key) while a session to it is pooled. */
static void test_changed_key_refused(void **state)
{
	struct tb_sshd *d = &rekey_sshd;
	struct tb_ssh_target t;
	struct tb_ssh_pool *p = tb_ssh_pool_new(2, 60);
	struct tb_ssh_pool_stats st;
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	char old_fp[128];
	int rc;

	assert_non_null(p);
	assert_int_equal(tb_sshd_start(d, NULL), 0);
	t = target_of(d);
	snprintf(old_fp, sizeof(old_fp), "%s", d->host_fp);
	t.pinned_fp = old_fp;
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err), &err);

	assert_int_equal(tb_sshd_restart_new_host_key(d), 0);
	assert_string_not_equal(d->host_fp, old_fp);
	rc = tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err);
	assert_int_equal(rc, TB_ERR_HOSTKEY);
	assert_string_equal(res.host_fp, d->host_fp);
	assert_non_null(strstr(err.message, d->host_fp));
	assert_non_null(strstr(err.message, old_fp));
	tb_ssh_pool_stats(p, &st);
	/* the pooled session died with the old sshd: retried on a new one */
	assert_int_equal(st.retries, 1);
	assert_int_equal(st.connects, 1);

	/* once the admin pins the new key it works again */
	t.pinned_fp = d->host_fp;
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err), &err);
	tb_ssh_pool_free(p);
	tb_sshd_stop(d);
}

static void test_wrong_client_key(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	int rc;

	t.key_file = sshd.other_key;
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, NULL, &err);
	assert_int_equal(rc, TB_ERR_UNAUTHORIZED);
	assert_non_null(strstr(err.message, "left (ubuntu) refused the key"));
	assert_non_null(strstr(err.message, sshd.other_key));
	assert_non_null(strstr(err.message, "authorized_keys"));

	t.key_file = "/nonexistent/tb-key";
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, NULL, &err);
	assert_int_equal(rc, TB_ERR_CONFIG);
	assert_string_equal(err.field, "key_file");
	assert_non_null(strstr(err.message, "left (ubuntu)"));
	assert_non_null(strstr(err.message, "/nonexistent/tb-key"));
	assert_non_null(strstr(err.message, "No such file"));

	t.key_file = sshd.config; /* readable, not a key */
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, NULL, &err);
	assert_int_equal(rc, TB_ERR_CONFIG);
}

static void test_unreachable(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	long long start;
	int s = socket(AF_INET, SOCK_STREAM, 0), rc;

	/* a port that was free a moment ago: nothing listens there */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	close(s);
	t.port = ntohs(sa.sin_port);

	start = now_ms();
	rc = tb_ssh_exec(pool, &t, argv, 5000, NULL, NULL, NULL, &err);
	assert_int_equal(rc, TB_ERR_UNREACHABLE);
	assert_true(now_ms() - start < 2000);
	assert_non_null(strstr(err.message, "left (ubuntu)"));
	assert_non_null(strstr(err.message, "does not answer ssh"));
}

/* ---- timeouts, spawn, kill ---- */

struct pid_watch {
	long pid;
	int alive_at_start;
};

/* stdout of `echo $$; exec sleep 30`: the first line is the pid */
static int on_pid_line(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct pid_watch *w = cls;

	if (stream == TB_SSH_STDOUT && w->pid == 0) {
		w->pid = strtol(data, NULL, 10);
		w->alive_at_start = tb_process_alive((pid_t)w->pid);
	}
	return 0;
}

static int wait_gone(long pid, long ms)
{
	for (long waited = 0; waited < ms; waited += 50) {
		if (!tb_process_alive((pid_t)pid))
			return 1;
		msleep(50);
	}
	return 0;
}

/* A command that hangs is stopped at its timeout and is gone remotely. */
static void check_timeout_stops(struct tb_ssh_pool *p, const struct tb_ssh_target *t)
{
	struct tb_ssh_result res;
	struct tb_error err = {0};
	struct pid_watch w = {0};
	const char *argv[] = {"sh", "-c", "echo $$; exec sleep 30", NULL};
	long long start = now_ms(), took;
	int rc;

	rc = tb_ssh_exec(p, t, argv, 1000, on_pid_line, &w, &res, &err);
	took = now_ms() - start;
	assert_int_equal(rc, TB_ERR_TIMEOUT);
	assert_true(res.stopped);
	assert_true(took >= 1000);
	/* Not a speed target: only proof that it was stopped, long before
	 * sleep 30 would have ended by itself (generous for sanitizer builds). */
	if (took > 15000)
		fail_msg("took %lld ms to stop: the timeout did not stop it", took);
	assert_non_null(strstr(err.message, t->machine));
	assert_non_null(strstr(err.message, "did not end in time"));
	assert_true(w.pid > 1);
	assert_true(w.alive_at_start);
	/* the command died of the watchdog's SIGTERM, not of a closed pipe */
	assert_string_equal(res.exit_signal, "TERM");
	if (!wait_gone(w.pid, 2000))
		fail_msg("remote sleep (pid %ld) still runs after the timeout", w.pid);
}

static void test_timeout_stops_remote_command(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	const char *after[] = {"echo", "still usable", NULL};
	struct tb_ssh_pool_stats before, st;

	tb_ssh_pool_stats(pool, &before);
	check_timeout_stops(pool, &t);
	/* the session survives a timeout and is reused */
	expect_ok(tb_ssh_run_capture(pool, &t, after, 5000, 100, &cap, &err), &err);
	assert_string_equal(cap.out, "still usable\n");
	assert_true(cap.res.reused);
	tb_ssh_capture_free(&cap);
	tb_ssh_pool_stats(pool, &st);
	assert_int_equal(st.connects, before.connects);
}

/* A port that accepts TCP but never speaks ssh: the connect timeout holds. */
static void test_connect_timeout(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	long long start, took;
	int s = socket(AF_INET, SOCK_STREAM, 0), rc;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 4), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	t.port = ntohs(sa.sin_port);
	t.connect_timeout_s = 1;

	start = now_ms();
	rc = tb_ssh_exec(NULL, &t, argv, 5000, NULL, NULL, NULL, &err);
	took = now_ms() - start;
	close(s);
	assert_int_equal(rc, TB_ERR_UNREACHABLE);
	assert_non_null(strstr(err.message, "left (ubuntu)"));
	/* The connect timeout applied (not the 5 s command timeout, not a hang). */
	if (took < 900 || took > 4500)
		fail_msg("connect timeout of 1 s took %lld ms", took);
}

struct spawn_ctx {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long pid;
	int pid_before_output; /* on_pid came before any output */
	int outputs;
	char out[256];
	size_t out_len;
	int rc;
	struct tb_error err;
	struct tb_ssh_result res;
	long long took;
};

/* A zeroed spawn_ctx with its lock and condition, and their end. */
static void spawn_ctx_init(struct spawn_ctx *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
}

static void spawn_ctx_end(struct spawn_ctx *c)
{
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
}

static int spawn_on_pid(void *cls, long pid)
{
	struct spawn_ctx *c = cls;

	pthread_mutex_lock(&c->lock);
	c->pid = pid;
	c->pid_before_output = c->outputs == 0;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int spawn_on_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct spawn_ctx *c = cls;

	pthread_mutex_lock(&c->lock);
	c->outputs++;
	if (c->out_len + len < sizeof(c->out)) {
		memcpy(c->out + c->out_len, data, len);
		c->out_len += len;
		c->out[c->out_len] = '\0';
	}
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void *spawn_thread(void *arg)
{
	struct spawn_ctx *c = arg;
	struct tb_ssh_target t = target_of(&sshd);
	const char *argv[] = {"sh", "-c", "echo hello; echo oops >&2; exec sleep 30", NULL};
	long long start = now_ms();

	c->rc = tb_ssh_spawn(pool, &t, argv, 20000, spawn_on_pid, spawn_on_output, c, &c->res, &c->err);
	c->took = now_ms() - start;
	return NULL;
}

static void test_spawn_and_kill(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct spawn_ctx c;
	struct tb_error err = {0};
	struct timespec until;
	pthread_t th;
	long pid;
	int rc;

	spawn_ctx_init(&c);
	assert_int_equal(pthread_create(&th, NULL, spawn_thread, &c), 0);

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&c.lock);
	while ((c.pid == 0 || strstr(c.out, "oops") == NULL) && pthread_cond_timedwait(&c.cond, &c.lock, &until) == 0)
		;
	pid = c.pid;
	pthread_mutex_unlock(&c.lock);
	assert_true(pid > 1);
	assert_true(tb_process_alive((pid_t)pid));

	rc = tb_ssh_kill(pool, &t, pid, "TERM", &err);
	expect_ok(rc, &err);
	pthread_join(th, NULL);
	expect_ok(c.rc, &c.err);
	assert_true(c.pid_before_output);
	assert_non_null(strstr(c.out, "hello\n"));
	assert_non_null(strstr(c.out, "oops\n"));
	assert_null(strstr(c.out, "\n\n"));
	/* the pid line is not passed on as output */
	{
		char line[32];

		snprintf(line, sizeof(line), "%ld\n", pid);
		assert_null(strstr(c.out, line));
	}
	/* sleep got SIGTERM from kill: it was the spawned pid itself */
	assert_true(strcmp(c.res.exit_signal, "TERM") == 0 || c.res.exit_status == 143);
	assert_true(c.took < 10000);
	assert_true(wait_gone(pid, 2000));

	/* gone now */
	rc = tb_ssh_kill(pool, &t, pid, "TERM", &err);
	assert_int_equal(rc, TB_ERR_NOT_FOUND);
	assert_non_null(strstr(err.message, "has no process"));

	assert_int_equal(tb_ssh_kill(pool, &t, 1, "TERM", &err), TB_ERR_INVALID);
	assert_int_equal(tb_ssh_kill(pool, &t, -1, "KILL", &err), TB_ERR_INVALID);
	assert_int_equal(tb_ssh_kill(pool, &t, pid, "STOP; reboot", &err), TB_ERR_INVALID);
	spawn_ctx_end(&c);
}

/* A gate that opens (1) or refuses (-1) after delay_ms, counting its calls. */
struct gate_ctx {
	struct spawn_ctx *sp;
	long long open_at;
	int answer;
	int calls;
	int out_before_open; /* output arrived while the gate was shut */
	long long opened;    /* when it said 1 */
};

static int test_gate(void *cls)
{
	struct gate_ctx *g = cls;

	g->calls++;
	pthread_mutex_lock(&g->sp->lock);
	if (g->sp->outputs > 0 && g->opened == 0)
		g->out_before_open = 1;
	pthread_mutex_unlock(&g->sp->lock);
	if (now_ms() < g->open_at)
		return 0;
	if (g->answer > 0 && g->opened == 0)
		g->opened = now_ms();
	return g->answer;
}

/* Gated: the pid comes while the gate is shut and nothing runs; "go" runs
 * the command at once; a refused gate runs nothing and says canceled. */
static void test_spawn_gated(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	const char *argv[] = {"sh", "-c", "echo ran", NULL};
	struct spawn_ctx c;
	struct gate_ctx g;
	long long start;
	char path[256], touch[300];
	int rc;

	(void)state;
	spawn_ctx_init(&c);
	memset(&g, 0, sizeof(g));
	g.sp = &c;
	g.answer = 1;
	start = now_ms();
	g.open_at = start + 300;
	rc = tb_ssh_spawn_gated(pool, &t, argv, 10000, test_gate, &g, NULL, spawn_on_pid, spawn_on_output, &c, &c.res,
				&c.err);
	expect_ok(rc, &c.err);
	assert_true(c.pid > 1);
	assert_true(c.pid_before_output);
	assert_int_equal(g.out_before_open, 0);
	assert_true(g.calls > 10); /* asked about every millisecond while shut */
	assert_true(g.opened >= start + 300);
	assert_string_equal(c.out, "ran\n");
	assert_int_equal(c.res.exit_status, 0);

	/* refused: the command never runs */
	snprintf(path, sizeof(path), "/tmp/tb-gate-%ld", (long)getpid());
	unlink(path);
	snprintf(touch, sizeof(touch), "touch %s", path);
	{
		const char *targv[] = {"sh", "-c", touch, NULL};

		memset(&c.out, 0, sizeof(c.out));
		c.out_len = 0;
		c.outputs = 0;
		c.pid = 0;
		memset(&g, 0, sizeof(g));
		g.sp = &c;
		g.answer = -1;
		g.open_at = now_ms() + 100;
		rc = tb_ssh_spawn_gated(pool, &t, targv, 10000, test_gate, &g, NULL, spawn_on_pid, spawn_on_output, &c,
					&c.res, &c.err);
	}
	assert_int_equal(rc, TB_ERR_CANCELED);
	assert_true(c.pid > 1);
	assert_true(wait_gone(c.pid, 3000));
	assert_int_equal(access(path, F_OK), -1); /* touch never ran */
	assert_int_equal(tb_ssh_spawn_gated(pool, &t, argv, 1000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &c.err),
			 TB_ERR_INVALID);
	spawn_ctx_end(&c);
}

/* What a tb_ssh_before's done got, and when (outputs of the command seen by then). */
struct before_seen {
	struct spawn_ctx *sp;
	int calls;
	char text[512];
	int outputs_then; /* the command's outputs already passed on when done came */
	long pid_then;    /* the spawn's pid already reported when done came */
};

static void before_done(void *cls, const char *text, size_t len)
{
	struct before_seen *b = cls;

	b->calls++;
	snprintf(b->text, sizeof(b->text), "%.*s", (int)len, text);
	pthread_mutex_lock(&b->sp->lock);
	b->outputs_then = b->sp->outputs;
	b->pid_then = b->sp->pid;
	pthread_mutex_unlock(&b->sp->lock);
}

/* A script before the command, in its shell: its output (stderr with it,
 * a line longer than the end mark, a line with no newline at its end)
 * goes to done, once, before the command's first byte; the command's
 * output is its own; in the gated spawn the look comes before the pid
 * line, the gate is let go, the command runs in the same shell (one exec:
 * the before's $$ is the pid reported); a command that never gets there
 * (the exec fails first) never calls done; a script of two lines is refused. */
static void test_before(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	const char *argv[] = {"sh", "-c", "echo cmd-out; echo cmd-err >&2", NULL};
	struct spawn_ctx c;
	struct before_seen b;
	struct tb_ssh_before before = {.script = "echo @look; echo \"pid $$\"; echo warn >&2; "
						 "printf '%080d\\n' 7; printf tail",
				       .done = before_done,
				       .cls = &b};
	struct gate_ctx g;
	char want[64];
	int rc;

	(void)state;
	spawn_ctx_init(&c);
	memset(&b, 0, sizeof(b));
	b.sp = &c;
	rc = tb_ssh_exec_before(pool, &t, &before, argv, 10000, spawn_on_output, &c, &c.res, &c.err);
	expect_ok(rc, &c.err);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.outputs_then, 0);
	assert_non_null(strstr(b.text, "@look\npid "));
	assert_non_null(strstr(b.text, "\nwarn\n")); /* its stderr with it */
	assert_non_null(strstr(b.text, "00000007\ntail"));
	assert_int_equal(b.text[strlen(b.text) - 1], 'l'); /* "tail": no newline added */
	assert_null(strstr(b.text, "@@tb-before-end"));
	assert_non_null(strstr(c.out, "cmd-out\n"));
	assert_non_null(strstr(c.out, "cmd-err\n"));
	assert_null(strstr(c.out, "@look"));
	assert_null(strstr(c.out, "warn"));

	/* gated: the look, then the pid line (the same shell), then the go */
	memset(&c.out, 0, sizeof(c.out));
	c.out_len = 0;
	c.outputs = 0;
	c.pid = 0;
	memset(&b, 0, sizeof(b));
	b.sp = &c;
	memset(&g, 0, sizeof(g));
	g.sp = &c;
	g.answer = 1;
	g.open_at = now_ms() + 100;
	rc = tb_ssh_spawn_gated(pool, &t, argv, 10000, test_gate, &g, &before, spawn_on_pid, spawn_on_output, &c,
				&c.res, &c.err);
	expect_ok(rc, &c.err);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.pid_then, 0); /* before the pid line */
	assert_true(c.pid > 1);
	snprintf(want, sizeof(want), "pid %ld\n", c.pid);
	assert_non_null(strstr(b.text, want)); /* one shell: the look's $$ is the command's pid */
	assert_non_null(strstr(c.out, "cmd-out\n"));
	assert_null(strstr(c.out, "@look"));

	/* the exec fails before the script ends: done never comes */
	{
		struct tb_ssh_before quits = {.script = "exit 3", .done = before_done, .cls = &b};

		memset(&b, 0, sizeof(b));
		b.sp = &c;
		rc = tb_ssh_exec_before(pool, &t, &quits, argv, 10000, spawn_on_output, &c, &c.res, &c.err);
		assert_int_equal(rc, 0);
		assert_int_equal(c.res.exit_status, 3);
		assert_int_equal(b.calls, 0);
	}
	/* a script of two lines is refused, nothing run (a standby shell would read its first line only) */
	{
		struct tb_ssh_before two = {.script = "echo a\necho b", .done = before_done, .cls = &b};

		memset(&b, 0, sizeof(b));
		rc = tb_ssh_exec_before(pool, &t, &two, argv, 10000, spawn_on_output, &c, &c.res, &c.err);
		assert_int_equal(rc, TB_ERR_INVALID);
		assert_int_equal(b.calls, 0);
	}
	spawn_ctx_end(&c);
}

static long standby_pid_now(const struct tb_sshd *d);

/* The pid of the standby shell ("IFS= read -r tbline ...") under sshd d,
 * waited for up to wait_ms (sshd answers the exec request before its child
 * has become the shell), or 0. */
static long standby_pid(const struct tb_sshd *d, long wait_ms)
{
	long long until = now_ms() + wait_ms;
	long pid;

	while ((pid = standby_pid_now(d)) == 0 && now_ms() < until)
		msleep(10);
	return pid;
}

static long standby_pid_now(const struct tb_sshd *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	long found = 0;

	while (dir != NULL && found == 0 && (de = readdir(dir)) != NULL) {
		char path[64], buf[512];
		long pid = strtol(de->d_name, NULL, 10), anc;
		FILE *f;
		size_t n;

		if (pid <= 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		/* "/bin/sh" "-c" "IFS= read -r tbline ..." */
		if (n < 24 || strcmp(buf, "/bin/sh") != 0 || strcmp(buf + 8, "-c") != 0 ||
		    strncmp(buf + 11, "IFS= read -r tbline", 19) != 0)
			continue;
		/* one of this test's sshd's descendants, not another test's */
		for (anc = pid; anc > 1 && anc != (long)d->pid;) {
			char line[128];

			snprintf(path, sizeof(path), "/proc/%ld/status", anc);
			if ((f = fopen(path, "r")) == NULL)
				break;
			anc = 0;
			while (fgets(line, sizeof(line), f) != NULL)
				if (strncmp(line, "PPid:", 5) == 0)
					anc = strtol(line + 5, NULL, 10);
			fclose(f);
		}
		if (anc == (long)d->pid)
			found = pid;
	}
	if (dir != NULL)
		closedir(dir);
	return found;
}

/* `echo out; exit 7` on p's session to t: its output and status come back. */
static void check_status_cmd(struct tb_ssh_pool *p, const struct tb_ssh_target *t)
{
	const char *status[] = {"sh", "-c", "echo out; exit 7", NULL};
	struct tb_ssh_capture cap;
	struct tb_error err = {0};
	int rc = tb_ssh_run_capture(p, t, status, 10000, 4096, &cap, &err);

	expect_ok(rc, &err);
	assert_string_equal(cap.out, "out\n");
	assert_int_equal(cap.res.exit_status, 7);
	tb_ssh_capture_free(&cap);
}

/* A standby shell (tb_ssh_standby) runs the next command exactly as an exec
 * would (every hostile argument intact, the exit status, spawn's pid is
 * the command's own), once: the command after it opens a channel as
 * before; a second call while one waits adds none; one whose shell died
 * meanwhile is not used and the command still runs. */
static void test_standby(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_pool *p = tb_ssh_pool_new(2, 60);
	struct tb_ssh_pool_stats st;
	struct tb_error err = {0};
	long shell;
	int rc;

	(void)state;
	assert_non_null(p);
	assert_int_equal(tb_ssh_standby(p, &t, &err), 0);
	assert_int_equal(tb_ssh_standby(p, &t, &err), 0); /* one waits already */
	shell = standby_pid(&sshd, 3000);
	assert_true(shell > 1); /* it is there, waiting */
	check_roundtrip_on(p, &t, hostile);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.standbys, 1);
	assert_int_equal(standby_pid(&sshd, 0), 0); /* used up */

	/* no standby: the next command opens its own channel */
	check_status_cmd(p, &t);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.standbys, 1);

	/* in a standby: the same status; spawn's pid is the command's own */
	assert_int_equal(tb_ssh_standby(p, &t, &err), 0);
	check_status_cmd(p, &t);
	{
		const char *me[] = {"sh", "-c", "echo $$", NULL};
		struct spawn_ctx c;
		char want[32];

		spawn_ctx_init(&c);
		assert_int_equal(tb_ssh_standby(p, &t, &err), 0);
		rc = tb_ssh_spawn(p, &t, me, 10000, spawn_on_pid, spawn_on_output, &c, &c.res, &c.err);
		expect_ok(rc, &c.err);
		snprintf(want, sizeof(want), "%ld\n", c.pid);
		assert_string_equal(c.out, want);
		spawn_ctx_end(&c);
	}
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.standbys, 3);

	/* a standby whose shell died: not used, the command runs all the same */
	assert_int_equal(tb_ssh_standby(p, &t, &err), 0);
	shell = standby_pid(&sshd, 3000);
	assert_true(shell > 1);
	assert_int_equal(kill((pid_t)shell, SIGKILL), 0);
	assert_true(wait_gone(shell, 3000));
	check_status_cmd(p, &t);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.standbys, 3);
	tb_ssh_pool_free(p);
}

static int cancel_on_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	return 1;
}

static void test_cancel_from_callback(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"sh", "-c", "echo go; exec sleep 30", NULL};
	long long start = now_ms();
	int rc;

	rc = tb_ssh_exec(pool, &t, argv, 20000, cancel_on_output, NULL, &res, &err);
	assert_int_equal(rc, TB_ERR_CANCELED);
	assert_true(res.stopped);
	assert_true(now_ms() - start < 5000);
}

/* ---- pool ---- */

static void test_pool_reuses_sessions(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_pool *p = tb_ssh_pool_new(1, 60);
	struct tb_ssh_pool_stats st;
	struct tb_ssh_result res;
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	long long t0, t1, t2;

	assert_non_null(p);
	t0 = now_ms();
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err), &err);
	assert_false(res.reused);
	t1 = now_ms();
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err), &err);
	assert_true(res.reused);
	assert_string_equal(res.host_fp, sshd.host_fp);
	t2 = now_ms();
	print_message("first exec %lld ms (new session), second %lld ms (reused)\n", t1 - t0, t2 - t1);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.connects, 1);
	assert_int_equal(st.reuses, 1);
	assert_int_equal(st.idle, 1);

	/* another key is another target: no reuse across it */
	t.pinned_fp = NULL;
	assert_int_equal(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, &res, &err), TB_ERR_HOSTKEY);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.reuses, 1);
	tb_ssh_pool_free(p);

	/* no pool: a new session every time */
	t = target_of(&sshd);
	expect_ok(tb_ssh_exec(NULL, &t, argv, 5000, NULL, NULL, &res, &err), &err);
	assert_false(res.reused);
}

static void test_pool_idle_timeout(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_ssh_pool *p = tb_ssh_pool_new(1, 1);
	struct tb_ssh_pool_stats st;
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};

	assert_non_null(p);
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, NULL, &err), &err);
	msleep(1300);
	expect_ok(tb_ssh_exec(p, &t, argv, 5000, NULL, NULL, NULL, &err), &err);
	tb_ssh_pool_stats(p, &st);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.reuses, 0);
	assert_int_equal(st.discards, 1);
	tb_ssh_pool_free(p);
}

#define WORKERS 4
#define RUNS 5

struct worker {
	int failures;
	char msg[TB_ERROR_MSG_MAX];
};

static void *pool_worker(void *arg)
{
	struct worker *w = arg;
	struct tb_ssh_target t = target_of(&sshd);

	for (int i = 0; i < RUNS; i++) {
		char n[16];
		const char *argv[] = {"echo", n, NULL};
		struct tb_ssh_capture cap;
		struct tb_error err = {0};
		int rc;

		snprintf(n, sizeof(n), "%d", i);
		rc = tb_ssh_run_capture(pool, &t, argv, 10000, 64, &cap, &err);
		if (rc != 0 || strncmp(cap.out, n, strlen(n)) != 0) {
			w->failures++;
			snprintf(w->msg, sizeof(w->msg), "%s", err.message);
		}
		tb_ssh_capture_free(&cap);
	}
	return NULL;
}

/* Threads share one pool; each call has a session to itself. */
static void test_pool_threads(void **state)
{
	pthread_t th[WORKERS];
	struct worker w[WORKERS];
	struct tb_ssh_pool_stats before, after;

	memset(w, 0, sizeof(w));
	tb_ssh_pool_stats(pool, &before);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, pool_worker, &w[i]), 0);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		if (w[i].failures != 0)
			fail_msg("worker %d: %d failures: %s", i, w[i].failures, w[i].msg);
	tb_ssh_pool_stats(pool, &after);
	assert_true(after.reuses > before.reuses);
	assert_true(after.connects - before.connects <= WORKERS);
	assert_true(after.idle <= 2);
}

static void test_invalid_calls(void **state)
{
	struct tb_ssh_target t = target_of(&sshd);
	struct tb_error err = {0};
	const char *argv[] = {"true", NULL};
	const char *empty[] = {NULL};
	const char *dash[] = {"-x", NULL};

	assert_int_equal(tb_ssh_exec(pool, &t, argv, 0, NULL, NULL, NULL, &err), TB_ERR_INVALID);
	assert_int_equal(tb_ssh_exec(pool, &t, empty, 1000, NULL, NULL, NULL, &err), TB_ERR_INVALID);
	assert_int_equal(tb_ssh_exec(pool, &t, dash, 1000, NULL, NULL, NULL, &err), TB_ERR_INVALID);
	assert_non_null(strstr(err.message, "left (ubuntu)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_output_and_status),
		cmocka_unit_test(test_capture_is_bounded),
		cmocka_unit_test(test_exec_streams_live),
		cmocka_unit_test(test_hostile_argv),
		cmocka_unit_test(test_hostile_argv_tcsh),
		cmocka_unit_test(test_pinned_key_accepted),
		cmocka_unit_test(test_unknown_key_refused),
		cmocka_unit_test(test_wrong_pin_refused),
		cmocka_unit_test(test_changed_key_refused),
		cmocka_unit_test(test_wrong_client_key),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_timeout_stops_remote_command),
		cmocka_unit_test(test_spawn_and_kill),
		cmocka_unit_test(test_spawn_gated),
		cmocka_unit_test(test_before),
		cmocka_unit_test(test_standby),
		cmocka_unit_test(test_cancel_from_callback),
		cmocka_unit_test(test_pool_reuses_sessions),
		cmocka_unit_test(test_pool_idle_timeout),
		cmocka_unit_test(test_pool_threads),
		cmocka_unit_test(test_invalid_calls),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
