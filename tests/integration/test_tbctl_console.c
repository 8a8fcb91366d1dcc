/*
 * test_tbctl_console.c - `tbctl console` against the real daemon (port 0),
 * whose console server is the test's own TCP listener on 127.0.0.1 (what
 * ser2net is to the sim):
 *   - attached in a pty (util-linux `script`, as a person's terminal): the
 *     scrollback and live output shown, what is typed reaches the console
 *     (a "~" inside a line too; Ctrl-C as a byte: raw mode), "~B" asks for
 *     a Break (refused on raw TCP: the refusal is shown), "~." leaves with exit 0 and gives the lease
 *     back, and no escape reaches the console;
 *   - --watch reads without the lease and says when the reader loses and
 *     finds the console server again; when a reload changes the console,
 *     it says why the stream ended and goes on with the new reader's bytes;
 *     when a reload removes it, it says so and leaves (404: exit 2);
 *   - --log list and --log ID print the kept boot logs.
 * The stream is read by tbctl_sse.c (tbctl's one SSE reader): these fail
 * when its output, typing or escapes break.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "conserver.h"
#include "daemon.h"
#include "ssestream.h"

/* What the console server read from the daemon, kept whole. */
struct line {
	int fd;
	char buf[4096];
	size_t len;
};

/* Read from the daemon until got holds needle (bounded): 1 when it does. */
static int line_until(struct line *l, const char *needle, long ms)
{
	long long until = tb_test_now_ms() + ms;

	while (strstr(l->buf, needle) == NULL && tb_test_now_ms() < until) {
		struct pollfd p = {.fd = l->fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) != 1)
			continue;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - 1 - l->len);
		if (n <= 0)
			break;
		l->len += (size_t)n;
		l->buf[l->len] = '\0';
	}
	return strstr(l->buf, needle) != NULL;
}

static void nap(void)
{
	struct timespec t = {0, 50 * 1000 * 1000};

	nanosleep(&t, NULL);
}

/* 1 when the file at path contains needle within ms (a bound). */
static int file_until(const char *path, const char *needle, long ms)
{
	long long until = tb_test_now_ms() + ms;
	static char text[65536];

	do {
		FILE *f = fopen(path, "r");
		size_t n = 0;

		if (f != NULL) {
			n = fread(text, 1, sizeof(text) - 1, f);
			fclose(f);
		}
		text[n] = '\0';
		if (strstr(text, needle) != NULL)
			return 1;
		nap();
	} while (tb_test_now_ms() < until);
	fprintf(stderr, "%s has no \"%s\"; it has:\n%s\n", path, needle, text);
	return 0;
}

/* The exit status of pid within ms, or -1 (then it is killed). */
static int wait_exit(pid_t pid, long ms)
{
	long long until = tb_test_now_ms() + ms;
	int st = 0;

	while (tb_test_now_ms() < until) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		nap();
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static const char inv_fmt[] = "version: 1\n"
			      "ssh:\n"
			      "  user: root\n"
			      "  key_file: %%s\n"
			      "  connect_timeout_s: 2\n"
			      "machines:\n"
			      "  left:\n"
			      "    role: host\n"
			      "%s"
			      "    os:\n"
			      "      ubuntu: {address: 127.0.0.1, port: 9}\n";

/* The inventory with left's console on port (0: none). */
static void inventory(char *out, size_t len, unsigned int port)
{
	char con[128] = "";

	if (port != 0)
		snprintf(con, sizeof(con), "    console: {type: tcp, address: 127.0.0.1, port: %u}\n", port);
	snprintf(out, len, inv_fmt, con);
}

static json_t *lease(const struct tb_test_daemon *d)
{
	struct tb_test_resp r;
	json_t *j = tb_test_api_expect(d, NULL, "GET", "/api/v1/hosts/left", NULL, 200, &r);
	json_t *l = json_incref(json_object_get(json_object_get(json_object_get(j, "host"), "console_state"), "lease"));

	tb_test_resp_free(&r);
	return l;
}

/* `script -qfec "tbctl console left" typescript` with its stdin a pipe
 * (*in), as the admin: a pty for tbctl, as a person's terminal is. */
static pid_t attach(const struct tb_test_daemon *d, const char *typescript, int *in)
{
	const char *bin = getenv("TB_BINARY_DIR");
	char cmd[600];
	int p[2];
	pid_t pid;

	assert_non_null(bin);
	snprintf(cmd, sizeof(cmd), "%s/tbctl console left", bin);
	assert_int_equal(pipe(p), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (dup2(p[0], 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		close(p[1]);
		setenv("TESTBEDD_URL", d->url, 1);
		setenv("TESTBEDD_TOKEN_FILE", d->admin_token_file, 1);
		unsetenv("http_proxy");
		unsetenv("HTTP_PROXY");
		execlp("script", "script", "-qfec", cmd, typescript, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*in = p[1];
	return pid;
}

static void type(int in, const char *keys)
{
	assert_int_equal(write(in, keys, strlen(keys)), (ssize_t)strlen(keys));
}

static void test_attach_type_escapes(void **state)
{
	struct tb_test_daemon d;
	struct line l = {0};
	char inv[1024], ts[400];
	unsigned int port;
	int lfd = tb_test_console_listen(&port), in;
	pid_t pid;
	json_t *j;

	(void)state;
	inventory(inv, sizeof(inv), port);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	l.fd = tb_test_console_accept(lfd);
	tb_test_console_write(l.fd, "left login: ");
	snprintf(ts, sizeof(ts), "%s/typescript", d.dir);
	pid = attach(&d, ts, &in);
	/* the banner (after the lease was taken), then the scrollback */
	assert_true(file_until(ts, "~. leaves, ~B sends Break", 15000));
	assert_true(file_until(ts, "left login: ", 15000));
	j = lease(&d);
	assert_true(json_is_object(j));
	json_decref(j);
	/* typing reaches the console; its answer comes back live */
	type(in, "root\r");
	assert_true(line_until(&l, "root\r", 10000));
	tb_test_console_write(l.fd, "Password: ");
	assert_true(file_until(ts, "Password: ", 10000));
	/* ~B at a line's start asks for a Break: raw TCP has none, and tbctl
	 * shows the refusal */
	type(in, "~B");
	assert_true(file_until(ts, "no Break", 10000));
	/* a ~ inside a line is typed as it is */
	type(in, "x~y\r");
	assert_true(line_until(&l, "x~y\r", 10000));
	/* raw mode: Ctrl-C is a byte for the console, not a signal to tbctl
	 * (a hung boot waits for it) */
	type(in, "\x03\r");
	assert_true(line_until(&l, "x~y\r\x03\r", 10000));
	/* ~. leaves: exit 0, the lease given back, no escape on the line */
	type(in, "~.");
	assert_int_equal(wait_exit(pid, 15000), 0);
	close(in);
	j = lease(&d);
	assert_true(json_is_null(j));
	json_decref(j);
	line_until(&l, "never", 200);
	assert_string_equal(l.buf, "root\rx~y\r\x03\r");
	close(l.fd);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void reload(struct tb_test_daemon *d, const char *text)
{
	struct tb_test_resp r;

	assert_int_equal(tb_test_daemon_write_inventory(d, text), 0);
	tb_test_api_expect(d, NULL, "POST", "/api/v1/inventory/reload", NULL, 200, &r);
	tb_test_resp_free(&r);
}

static void test_watch_follows_reloads(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_tbctl t;
	char inv[1024], out[16384];
	const char *argv[] = {"console", "left", "--watch", NULL};
	unsigned int p1, p2;
	int l1 = tb_test_console_listen(&p1), l2 = tb_test_console_listen(&p2), c1, c2;
	json_t *j;

	(void)state;
	inventory(inv, sizeof(inv), p1);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	c1 = tb_test_console_accept(l1);
	tb_test_console_write(c1, "first line\r\n");
	tb_test_tbctl_spawn(&d, NULL, argv, &t);
	assert_true(file_until(t.out_path, "first line", 15000));
	j = lease(&d);
	assert_true(json_is_null(j)); /* watching takes no lease */
	json_decref(j);
	/* the reader's state after output (a record without an id, which the
	 * stream reader must not take for one seen before) */
	close(c1);
	assert_true(file_until(t.out_path, "the console is not connected: the console server closed", 15000));
	c1 = tb_test_console_accept(l1);
	assert_true(file_until(t.out_path, "the console is connected again", 15000));
	/* changed: the end's reason, then the new reader's bytes, and what the
	 * old one had is not shown twice */
	inventory(inv, sizeof(inv), p2);
	reload(&d, inv);
	c2 = tb_test_console_accept(l2);
	assert_true(file_until(t.out_path, "testbedd ended the console stream: its console changed", 15000));
	tb_test_console_write(c2, "second line\r\n");
	assert_true(file_until(t.out_path, "second line", 15000));
	/* removed: said, then 404 on the way back, and tbctl leaves */
	inventory(inv, sizeof(inv), 0);
	reload(&d, inv);
	assert_true(file_until(t.out_path, "its console is no longer in the inventory", 15000));
	assert_true(file_until(t.out_path, "HTTP 404", 15000));
	assert_int_equal(tb_test_tbctl_wait(&t, out, sizeof(out)), 2);
	{
		const char *a = strstr(out, "first line"), *b = a != NULL ? strstr(a + 1, "first line") : NULL;

		assert_non_null(a);
		assert_null(b);
	}
	close(c1);
	close(c2);
	close(l1);
	close(l2);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_logs(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char inv[1024], out[16384];
	const char *list[] = {"console", "left", "--log", "list", NULL};
	const char *one[] = {"console", "left", "--log", NULL, NULL};
	unsigned int port;
	int lfd = tb_test_console_listen(&port), c;
	json_t *j;

	(void)state;
	inventory(inv, sizeof(inv), port);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	c = tb_test_console_accept(lfd);
	tb_test_console_write(c, "kept\r\n");
	/* the bytes are in the log once the stream has them */
	{
		struct tb_test_stream s;
		char hdr[400];

		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", d.admin_token);
		tb_test_stream_open(&s, d.port, "/api/v1/hosts/left/console?from=0", hdr);
		assert_true(tb_test_stream_read_until(&s, "data: a2VwdA0K\n\n", 10000));
		tb_test_stream_close(&s);
	}
	assert_int_equal(tb_test_tbctl(&d, NULL, list, out, sizeof(out)), 0);
	assert_non_null(strstr(out, " start "));
	j = tb_test_api_expect(&d, NULL, "GET", "/api/v1/hosts/left/console/logs", NULL, 200, &r);
	one[3] = json_string_value(json_object_get(json_array_get(json_object_get(j, "logs"), 0), "id"));
	assert_non_null(one[3]);
	assert_int_equal(tb_test_tbctl(&d, NULL, one, out, sizeof(out)), 0);
	tb_test_resp_free(&r);
	assert_string_equal(out, "kept\r\n");
	close(c);
	close(lfd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_type_escapes),
		cmocka_unit_test(test_watch_follows_reloads),
		cmocka_unit_test(test_logs),
	};

	return cmocka_run_group_tests_name("tbctl_console", tests, NULL, NULL);
}
