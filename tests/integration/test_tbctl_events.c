/*
 * test_tbctl_events.c - `tbctl events` follows the stream and resumes by
 * itself: events published while testbedd restarts are printed once each,
 * in order, none missed; a viewer can follow, a bad token exits 4.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static pid_t run_tbctl(const struct tb_test_daemon *d, const char *token_file, const char *out,
		       const char *const args[])
{
	pid_t pid = fork();

	if (pid == 0) {
		char exe[512], url[96];
		const char *argv[16];
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), n = 0;

		snprintf(exe, sizeof(exe), "%s/tbctl", getenv("TB_BINARY_DIR"));
		snprintf(url, sizeof(url), "http://127.0.0.1:%u", d->port);
		setenv("TESTBEDD_URL", url, 1);
		setenv("TESTBEDD_TOKEN_FILE", token_file, 1);
		dup2(fd, 1);
		argv[n++] = exe;
		for (size_t i = 0; args[i] != NULL; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void create_token(struct tb_test_daemon *d, const char *name)
{
	assert_int_equal(tb_test_create_token(d, name, "viewer", NULL, 0), 201);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	if (f != NULL) {
		if (fread(buf, 1, 65535, f) == 0)
			buf[0] = '\0';
		fclose(f);
	}
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Wait (at most 10 s) until testbedd has n event streams open: /metrics's
 * testbedd_sse_clients counts a stream once it is subscribed, so an event
 * published after this reaches it. */
static void wait_streams(const struct tb_test_daemon *d, int n)
{
	char url[128], auth[200], want[64];
	const char *h[] = {auth, NULL};

	snprintf(url, sizeof(url), "%s/metrics", d->url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	snprintf(want, sizeof(want), "\ntestbedd_sse_clients %d\n", n);
	for (int i = 0; i < 200; i++) {
		struct tb_test_resp r;
		int seen;

		assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
		seen = r.body != NULL && strstr(r.body, want) != NULL;
		tb_test_resp_free(&r);
		if (seen)
			return;
		sleep_ms(50);
	}
	fail_msg("tbctl events did not open its stream within 10 s");
}

static void test_follow_and_resume(void **state)
{
	struct tb_test_daemon d;
	char out[400];
	const char *args[] = {"events", "--type", "audit", NULL};
	pid_t t;
	int status;
	char *text;
	unsigned int port;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	port = d.port;
	snprintf(out, sizeof(out), "%s/events.out", d.dir);
	t = run_tbctl(&d, d.admin_token_file, out, args);
	wait_streams(&d, 1);
	create_token(&d, "before-1");
	create_token(&d, "before-2");
	/* testbedd goes away and comes back on the same port */
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	sleep_ms(300);
	assert_int_equal(tb_test_daemon_launch(&d, NULL, port), 0);
	create_token(&d, "after-1");
	create_token(&d, "after-2");
	for (int i = 0; i < 100; i++) {
		text = slurp(out);
		if (strstr(text, "after-2") != NULL)
			break;
		free(text);
		text = NULL;
		sleep_ms(100);
	}
	kill(t, SIGINT);
	waitpid(t, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (text == NULL)
		text = slurp(out);
	fprintf(stderr, "%s", text);
	assert_int_equal(count(text, "token.create before-1"), 1);
	assert_int_equal(count(text, "token.create before-2"), 1);
	assert_int_equal(count(text, "token.create after-1"), 1);
	assert_int_equal(count(text, "token.create after-2"), 1);
	assert_true(strstr(text, "before-2") < strstr(text, "after-1"));
	assert_int_equal(count(text, " audit "), 4);
	free(text);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_refused(void **state)
{
	struct tb_test_daemon d;
	char out[400], bad[400];
	const char *args[] = {"events", NULL};
	int status;
	FILE *f;
	pid_t t;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(out, sizeof(out), "%s/events.out", d.dir);
	snprintf(bad, sizeof(bad), "%s/bad.token", d.dir);
	f = fopen(bad, "w");
	fputs("tbk_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", f);
	fclose(f);
	chmod(bad, 0600);
	t = run_tbctl(&d, bad, out, args);
	waitpid(t, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 4);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follow_and_resume),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests_name("tbctl_events", tests, NULL, NULL);
}
