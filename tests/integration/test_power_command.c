/*
 * test_power_command.c - the command power driver against real programs.
 *
 * A power switch: powerman's powermand (Debian package powerman) on
 * 127.0.0.1 with a vpc device, vpcd (its virtual power controller) run by
 * powermand as a coprocess, driven by `pm -h 127.0.0.1:PORT --on|--off|
 * --cycle|--reset|-Q NODE`, as an operator's inventory would.  powermand
 * runs in the foreground; its pid is kept and it is stopped by pid at the
 * end (vpcd, its child on a pty, ends with it).  Skipped when powerman is
 * not installed (deploy/setup installs it).
 *
 * Hostile values: a recording sh script written by the test gets a machine
 * name, mac and address full of spaces, quotes, ;, $(...) and backquotes;
 * each must arrive as exactly one argument, unchanged, and nothing in them
 * may run.  The step's command line, given to sh, must run the same argv.
 *
 * Last, the real testbedd with the powerman method in its inventory: its
 * power actions switch vpcd's plug.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "daemon.h"
#include "inventory.h"
#include "power.h"
#include "proc.h"
#include "steps.h"
#include "timeutil.h"

static char dir[64], conf[128], pmaddr[64], recorder[128], recout[128];
static pid_t powermand_pid;
static int no_powerman;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A TCP port nothing listens on right now (bind 0, close). */
static int free_port(void)
{
	struct sockaddr_in sin = {0};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0)
		port = -1;
	else
		port = ntohs(sin.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* exit status of argv (-1 when it did not run), stdout into out */
static int run(const char *const argv[], char *out, size_t outsz)
{
	struct tb_proc_result r;
	struct tb_error e;
	int rc = tb_proc_run(argv, NULL, 10000, 65536, NULL, &r, &e), st;

	st = rc == 0 ? r.exit_status : -1;
	if (out != NULL)
		snprintf(out, outsz, "%s", r.out != NULL ? r.out : "");
	tb_proc_result_free(&r);
	return st;
}

static int group_setup(void **state)
{
	char text[1024];
	int port;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tbcmd-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	/* the recorder: "$#", then each argument NUL-terminated */
	snprintf(recorder, sizeof(recorder), "%s/record args.sh", dir);
	snprintf(recout, sizeof(recout), "%s/args.out", dir);
	snprintf(text, sizeof(text), "#!/bin/sh\nprintf '%%s\\n' \"$#\" > '%s'\nprintf '%%s\\0' \"$@\" >> '%s'\n",
		 recout, recout);
	if (write_file(recorder, text, 0700) != 0)
		return -1;

	if (access("/usr/sbin/powermand", X_OK) != 0 || access("/usr/sbin/vpcd", X_OK) != 0 ||
	    access("/usr/bin/pm", X_OK) != 0) {
		no_powerman = 1;
		return 0;
	}
	if ((port = free_port()) < 0)
		return -1;
	snprintf(pmaddr, sizeof(pmaddr), "127.0.0.1:%d", port);
	snprintf(conf, sizeof(conf), "%s/powerman.conf", dir);
	snprintf(text, sizeof(text),
		 "include \"/etc/powerman/vpc.dev\"\n"
		 "listen \"%s\"\n"
		 "device \"vpc0\" \"vpc\" \"/usr/sbin/vpcd |&\"\n"
		 "node \"left\" \"vpc0\" \"0\"\n"
		 "node \"right\" \"vpc0\" \"1\"\n",
		 pmaddr);
	if (write_file(conf, text, 0600) != 0)
		return -1;
	powermand_pid = fork();
	if (powermand_pid < 0)
		return -1;
	if (powermand_pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		tb_test_child_init();
		dup2(devnull, 0);
		dup2(devnull, 1);
		execl("/usr/sbin/powermand", "powermand", "-f", "-c", conf, (char *)NULL);
		_exit(127);
	}
	tb_test_child_track(powermand_pid, "powermand");
	for (int i = 0; i < 100; i++) {
		const char *q[] = {"pm", "-h", pmaddr, "-q", NULL};

		if (run(q, NULL, 0) == 0)
			return 0;
		if (waitpid(powermand_pid, NULL, WNOHANG) == powermand_pid) {
			tb_test_child_untrack(powermand_pid);
			powermand_pid = 0;
			break;
		}
		sleep_ms(50);
	}
	fprintf(stderr, "powermand did not start on %s\n", pmaddr);
	return -1;
}

static int group_teardown(void **state)
{
	const char *rm[] = {"rm", "-rf", dir, NULL};

	(void)state;
	if (powermand_pid > 0) {
		kill(powermand_pid, SIGTERM);
		waitpid(powermand_pid, NULL, 0);
		tb_test_child_untrack(powermand_pid);
	}
	if (dir[0] != '\0')
		run(rm, NULL, 0);
	return 0;
}

/* ---- the method, as the inventory would give it ---- */

static char *on_tmpl[] = {"pm", "-h", "{bmc}", "--on", "{host}", NULL};
static char *off_tmpl[] = {"pm", "-h", "{bmc}", "--off", "{host}", NULL};
static char *cycle_tmpl[] = {"pm", "-h", "{bmc}", "--cycle", "{host}", NULL};
static char *reset_tmpl[] = {"pm", "-h", "{bmc}", "--reset", "{host}", NULL};
static char *status_tmpl[] = {"pm", "-h", "{bmc}", "-Q", "{host}", NULL};

static struct tb_power_method pm_method(void)
{
	struct tb_power_method pm = {0};

	pm.driver = TB_POWER_COMMAND;
	pm.address = pmaddr;
	pm.argv[TB_POWER_ON] = on_tmpl;
	pm.argv[TB_POWER_OFF] = off_tmpl;
	pm.argv[TB_POWER_CYCLE] = cycle_tmpl;
	pm.argv[TB_POWER_RESET] = reset_tmpl;
	pm.argv[TB_POWER_STATUS] = status_tmpl;
	/* pm -Q NODE prints "on:      NODE", "off:     " and "unknown: " lines */
	pm.on_pattern = "^on: +[^ ]";
	pm.off_pattern = "^off: +[^ ]";
	pm.timeout_s = 10;
	return pm;
}

static int cmd(const struct tb_machine *m, const struct tb_power_method *pm, enum tb_power_op op, int *is_on,
	       struct tb_test_steps *s, const volatile int *cancel, struct tb_error *e)
{
	struct tb_power_call c = {
		.m = m, .pm = pm, .step = tb_test_step, .step_cls = s, .cancel = cancel, .timeout_ms = 15000};

	memset(e, 0, sizeof(*e));
	return tb_power_command.run(&c, op, is_on, e);
}

/* What pm itself says about node. */
static const char *pm_query(const char *node)
{
	static char out[256];
	const char *q[] = {"pm", "-h", pmaddr, "-Q", node, NULL};

	assert_int_equal(run(q, out, sizeof(out)), 0);
	return out;
}

static void test_powerman(void **state)
{
	struct tb_machine left = {.name = "left"};
	struct tb_power_method pm = pm_method();
	struct tb_test_steps s = {0};
	struct tb_error e;
	char want[256];
	int on = -1;

	(void)state;
	if (no_powerman)
		skip();
	assert_ptr_equal(tb_power_driver_for(&pm), &tb_power_command);
	/* vpcd starts with every plug off */
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), 0);
	assert_int_equal(on, 0);
	snprintf(want, sizeof(want), "pm -h %s -Q left", pmaddr);
	assert_string_equal(s.command[0], want);
	assert_int_equal(s.status[0], 0);
	assert_string_equal(s.what[0], "command power status for left");

	assert_int_equal(cmd(&left, &pm, TB_POWER_ON, NULL, &s, NULL, &e), 0);
	snprintf(want, sizeof(want), "pm -h %s --on left", pmaddr);
	assert_string_equal(s.command[1], want);
	assert_string_equal(s.output[1], "Command completed successfully");
	assert_non_null(strstr(pm_query("left"), "on:      left\n"));
	assert_non_null(strstr(pm_query("right"), "off:     right\n")); /* only its own plug */
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), 0);
	assert_int_equal(on, 1);

	assert_int_equal(cmd(&left, &pm, TB_POWER_CYCLE, NULL, &s, NULL, &e), 0);
	assert_int_equal(cmd(&left, &pm, TB_POWER_RESET, NULL, &s, NULL, &e), 0);
	assert_non_null(strstr(pm_query("left"), "on:      left\n"));
	assert_int_equal(cmd(&left, &pm, TB_POWER_OFF, NULL, &s, NULL, &e), 0);
	assert_non_null(strstr(pm_query("left"), "off:     left\n"));
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), 0);
	assert_int_equal(on, 0);
}

/* Failures of the program: TB_ERR_REMOTE with its words; the method does only what it has. */
static void test_failures(void **state)
{
	struct tb_machine left = {.name = "left"}, nosuch = {.name = "nosuch"};
	struct tb_power_method pm = pm_method();
	struct tb_test_steps s = {0};
	struct tb_error e;
	int on = -1;

	(void)state;
	if (no_powerman)
		skip();
	/* a node powerman does not know: exit 209, "No such nodes: nosuch" */
	assert_int_equal(cmd(&nosuch, &pm, TB_POWER_ON, NULL, &s, NULL, &e), TB_ERR_REMOTE);
	assert_non_null(strstr(e.message, "nosuch: the on command failed (exit 209): No such nodes: nosuch"));
	assert_int_equal(s.status[0], 209);
	/* nothing listening there */
	pm.address = "127.0.0.1:1";
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), TB_ERR_REMOTE);
	assert_non_null(strstr(e.message, "could not connect to address 127.0.0.1:1"));
	/* output that matches neither pattern */
	pm = pm_method();
	pm.on_pattern = "^ON$";
	pm.off_pattern = "^OFF$";
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), TB_ERR_REMOTE);
	assert_non_null(strstr(e.message, "matches neither on_pattern /^ON$/ nor off_pattern /^OFF$/"));
	/* only on_pattern: anything else means off */
	pm.off_pattern = NULL;
	on = -1;
	assert_int_equal(cmd(&left, &pm, TB_POWER_STATUS, &on, &s, NULL, &e), 0);
	assert_int_equal(on, 0);

	/* no soft: template: the method cannot, and runs nothing */
	pm = pm_method();
	assert_int_equal(tb_power_method_ops(&pm), TB_POWER_BIT(TB_POWER_ON) | TB_POWER_BIT(TB_POWER_OFF) |
							   TB_POWER_BIT(TB_POWER_CYCLE) | TB_POWER_BIT(TB_POWER_RESET) |
							   TB_POWER_BIT(TB_POWER_STATUS));
	s.n = 0;
	assert_int_equal(cmd(&left, &pm, TB_POWER_SOFT, NULL, &s, NULL, &e), TB_ERR_INVALID);
	assert_int_equal(s.n, 0);
}

static void *cancel_later(void *arg)
{
	volatile int *flag = arg;

	sleep_ms(300);
	*flag = 1;
	return NULL;
}

static void test_timeout_cancel_missing(void **state)
{
	static char *sleep_t[] = {"sleep", "10", NULL};
	static char *missing_t[] = {"tb-no-such-power-tool", "{host}", NULL};
	static char *mac_t[] = {"echo", "{mac}", NULL};
	struct tb_machine left = {.name = "left"};
	struct tb_power_method pm = {0};
	struct tb_test_steps s = {0};
	struct tb_error e;
	volatile int cancel = 0;
	pthread_t th;
	int64_t t0, dt;

	(void)state;
	pm.driver = TB_POWER_COMMAND;
	pm.argv[TB_POWER_OFF] = sleep_t;
	pm.timeout_s = 1;
	t0 = tb_monotonic_ms();
	assert_int_equal(cmd(&left, &pm, TB_POWER_OFF, NULL, &s, NULL, &e), TB_ERR_TIMEOUT);
	dt = tb_monotonic_ms() - t0;
	assert_true(dt >= 1000 && dt < 1000 + TB_PROC_KILL_GRACE_MS + 500);
	assert_non_null(strstr(e.message, "did not end within 1000 ms: sleep 10"));

	pm.timeout_s = 30;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, (void *)&cancel), 0);
	t0 = tb_monotonic_ms();
	assert_int_equal(cmd(&left, &pm, TB_POWER_OFF, NULL, &s, &cancel, &e), TB_ERR_CANCELED);
	dt = tb_monotonic_ms() - t0;
	pthread_join(th, NULL);
	assert_true(dt >= 250 && dt < 1500);

	pm.argv[TB_POWER_OFF] = missing_t;
	assert_int_equal(cmd(&left, &pm, TB_POWER_OFF, NULL, &s, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "tb-no-such-power-tool is not installed"));

	/* {mac} without a mac: refused before running */
	pm.argv[TB_POWER_OFF] = mac_t;
	s.n = 0;
	assert_int_equal(cmd(&left, &pm, TB_POWER_OFF, NULL, &s, NULL, &e), TB_ERR_CONFIG);
	assert_string_equal(e.field, "mac");
	assert_int_equal(s.n, 0);
}

/* Read the recorder's output: argc, then the arguments. */
static int read_args(char args[][256], int max)
{
	char buf[4096];
	FILE *f = fopen(recout, "r");
	size_t n;
	char *p, *end;
	int argc, i = 0;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	argc = atoi(buf);
	p = strchr(buf, '\n') + 1;
	end = buf + n;
	while (p < end && i < max) {
		snprintf(args[i++], 256, "%s", p);
		p += strlen(p) + 1;
	}
	assert_int_equal(i, argc);
	unlink(recout);
	return argc;
}

static void test_hostile_values(void **state)
{
	static const char host[] = "left; touch PWNED1 $(touch PWNED2) `touch PWNED3` 'sq' \"dq\" * \\ $HOME";
	static const char mac[] = "02:00 ;|& $(id)";
	static const char addr[] = "a b'c\"d;e>f";
	char *tmpl[] = {recorder, "{host}", "--mac={mac}", "{bmc}", "x{host}y", "", "{nope}", NULL};
	struct tb_machine m = {.name = (char *)host, .mac = (char *)mac};
	struct tb_power_method pm = {0};
	struct tb_test_steps s = {0};
	struct tb_error e;
	char args[16][256], again[16][256], want[600], pwned[128];
	const char *sh[] = {"sh", "-c", NULL, NULL};
	int argc;

	(void)state;
	pm.driver = TB_POWER_COMMAND;
	pm.address = (char *)addr;
	pm.argv[TB_POWER_ON] = tmpl;
	pm.timeout_s = 10;
	assert_int_equal(cmd(&m, &pm, TB_POWER_ON, NULL, &s, NULL, &e), 0);
	argc = read_args(args, 16);
	assert_int_equal(argc, 6);
	assert_string_equal(args[0], host);
	snprintf(want, sizeof(want), "--mac=%s", mac);
	assert_string_equal(args[1], want);
	assert_string_equal(args[2], addr);
	snprintf(want, sizeof(want), "x%sy", host);
	assert_string_equal(args[3], want);
	assert_string_equal(args[4], "");
	assert_string_equal(args[5], "{nope}"); /* not a placeholder here: the inventory refuses it */
	for (int i = 1; i <= 3; i++) {
		snprintf(pwned, sizeof(pwned), "PWNED%d", i);
		assert_int_equal(access(pwned, F_OK), -1);
		snprintf(pwned, sizeof(pwned), "%s/PWNED%d", dir, i);
		assert_int_equal(access(pwned, F_OK), -1);
	}
	/* the step shows the argv quoted for sh: sh runs exactly the same */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.status[0], 0);
	assert_non_null(strstr(s.command[0],
			       "'left; touch PWNED1 $(touch PWNED2) `touch PWNED3` '\\''sq'\\'' \"dq\" * \\ $HOME'"));
	sh[2] = s.command[0];
	assert_int_equal(run(sh, NULL, 0), 0);
	assert_int_equal(read_args(again, 16), argc);
	for (int i = 0; i < argc; i++)
		assert_string_equal(again[i], args[i]);
}

/* Wait for action id to end; its state into st, the reply kept in r. */
static void wait_action(const struct tb_test_daemon *d, long long id, char *st, size_t stsz, struct tb_test_resp *r)
{
	if (tb_test_wait_action(d, id, 30000, st, stsz, r) != 0)
		fail_msg("action %lld still %s after 30 s", id, st);
}

static long long post_power(const struct tb_test_daemon *d, const char *const h[], const char *host, const char *action)
{
	struct tb_test_resp r;
	char url[256], body[64];
	long long id;

	snprintf(url, sizeof(url), "%s/api/v1/hosts/%s/power", d->url, host);
	snprintf(body, sizeof(body), "{\"action\":\"%s\"}", action);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	if (r.status != 202)
		fail_msg("POST %s: %ld %s", body, r.status, r.body);
	id = json_integer_value(json_object_get(json_object_get(r.json, "action"), "id"));
	tb_test_resp_free(&r);
	return id;
}

static void test_through_the_daemon(void **state)
{
	static const char inv_fmt[] = "version: 1\n"
				      "ssh: {user: root, key_file: %%s, connect_timeout_s: 1}\n"
				      "machines:\n"
				      "  left:\n"
				      "    role: host\n"
				      "    boot_timeout_s: 5\n"
				      "    shutdown_timeout_s: 5\n"
				      "    power:\n"
				      "      - driver: command\n"
				      "        address: \"%s\"\n"
				      "        on: [pm, -h, \"{bmc}\", --on, \"{host}\"]\n"
				      "        off: [pm, -h, \"{bmc}\", --off, \"{host}\"]\n"
				      "        status: [pm, -h, \"{bmc}\", -Q, \"{host}\"]\n"
				      "        on_pattern: \"^on: +[^ ]\"\n"
				      "        off_pattern: \"^off: +[^ ]\"\n"
				      "    os:\n"
				      "      ubuntu: {address: 127.0.0.1, port: 9}\n"
				      "  slow:\n"
				      "    role: host\n"
				      "    shutdown_timeout_s: 5\n"
				      "    power:\n"
				      "      - driver: command\n"
				      "        status: [echo, \"on\"]\n"
				      "        on_pattern: \"^on$\"\n"
				      "        off: [sleep, \"16\"]\n"
				      "        timeout_s: 25\n"
				      "    os:\n"
				      "      ubuntu: {address: 127.0.0.1, port: 9}\n";
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char inv[2048], auth[200], st[32], want[256];
	const char *h[] = {auth, "Content-Type: application/json", NULL};

	(void)state;
	if (no_powerman)
		skip();
	snprintf(inv, sizeof(inv), inv_fmt, pmaddr);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	/* off first, so that "on" has something to do */
	wait_action(&d, post_power(&d, h, "left", "off"), st, sizeof(st), &r);
	tb_test_resp_free(&r);
	assert_non_null(strstr(pm_query("left"), "off:     left\n"));

	/* on: the plug goes on; nothing answers ssh, so the action fails after boot_timeout_s */
	wait_action(&d, post_power(&d, h, "left", "on"), st, sizeof(st), &r);
	assert_string_equal(st, "failed");
	snprintf(want, sizeof(want), "\"pm -h %s --on left\"", pmaddr);
	assert_non_null(strstr(r.body, want));
	assert_non_null(strstr(r.body, "command power on for left"));
	tb_test_resp_free(&r);
	assert_non_null(strstr(pm_query("left"), "on:      left\n"));

	/* off: nothing answers, the status command says on: pm --off */
	wait_action(&d, post_power(&d, h, "left", "off"), st, sizeof(st), &r);
	if (strcmp(st, "succeeded") != 0)
		fail_msg("off: %s", r.body);
	snprintf(want, sizeof(want), "\"pm -h %s -Q left\"", pmaddr);
	assert_non_null(strstr(r.body, want));
	snprintf(want, sizeof(want), "\"pm -h %s --off left\"", pmaddr);
	assert_non_null(strstr(r.body, want));
	tb_test_resp_free(&r);
	assert_non_null(strstr(pm_query("left"), "off:     left\n"));

	/* no cycle: template and no Wake-on-LAN: refused, nothing run */
	wait_action(&d, post_power(&d, h, "left", "cycle"), st, sizeof(st), &r);
	assert_string_equal(st, "failed");
	assert_null(strstr(r.body, "--cycle"));
	tb_test_resp_free(&r);

	/* a command may take its timeout_s (25 s here), not only the 15 s a BMC call gets */
	{
		int64_t t0 = tb_monotonic_ms();

		wait_action(&d, post_power(&d, h, "slow", "off"), st, sizeof(st), &r);
		if (strcmp(st, "succeeded") != 0)
			fail_msg("slow off: %s", r.body);
		assert_true(tb_monotonic_ms() - t0 >= 16000);
		assert_non_null(strstr(r.body, "\"sleep 16\""));
		tb_test_resp_free(&r);
	}
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_powerman),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_timeout_cancel_missing),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_through_the_daemon),
	};

	return cmocka_run_group_tests_name("power_command", tests, group_setup, group_teardown);
}
