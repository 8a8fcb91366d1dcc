/*
 * test_run_idle.c - the idle check's parts that need no remote host: the
 * spec's options with their defaults, the parsing of a look's output (Linux
 * as /proc/loadavg and /proc/stat's cpuN lines print it; FreeBSD's
 * `sysctl -n vm.loadavg` "{ 0.52 0.58 0.59 }" and kern.cp_times, five
 * counters per CPU, constructed from sysctl(8)'s documented formats: the
 * sim's FreeBSD persona is a Linux namespace), the verdict and its
 * sentences, and the Linux command itself run on this machine (real
 * /proc, real pgrep) and parsed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_idle.h"

static const char linux_look[] = "@load\n"
				 "3.20 1.10 0.50 2/345 6789\n"
				 "@cpu\n"
				 "cpu0 1000 0 500 10000 100 0 0 0 0 0\n"
				 "cpu1 2000 10 600 9000 0 50 50 0 0 0\n"
				 "@cpu\n"
				 /* +10 softirq of +100 ticks on both CPUs together */
				 "cpu0 1020 0 510 10040 100 0 5 0 0 0\n"
				 "cpu1 2010 10 600 9010 0 50 55 0 0 0\n"
				 "@procs\n"
				 "1234 iperf3 -s -p 5999\n"
				 "77 iperf -s -u\n";

static const char bsd_look[] = "@load\n"
			       "{ 0.52 0.58 0.59 }\n"
			       "@cpu\n"
			       "100 0 50 10 840 200 0 100 0 700\n"
			       "@cpu\n"
			       /* +100 ticks, +20 interrupt */
			       "110 0 55 20 865 210 0 105 10 725\n"
			       "@procs\n";

static void test_opts_defaults_and_values(void **state)
{
	struct tb_idle_opts o;
	json_t *j;

	(void)state;
	tb_idle_opts_from_json(NULL, &o);
	assert_true(o.enabled);
	assert_true(o.max_load < 0 && o.max_softirq_pct < 0);
	assert_int_equal(o.wait_s, 30);
	tb_idle_opts_from_json(json_false(), &o);
	assert_false(o.enabled);
	j = json_pack("{s:f, s:i, s:i}", "max_load", 1.5, "max_softirq_percent", 10, "wait_s", 3);
	tb_idle_opts_from_json(j, &o);
	json_decref(j);
	assert_true(o.enabled);
	assert_true(o.max_load > 1.49 && o.max_load < 1.51);
	assert_true(o.max_softirq_pct > 9.99 && o.max_softirq_pct < 10.01);
	assert_int_equal(o.wait_s, 3);
}

static void test_parse_linux(void **state)
{
	struct tb_idle_seen s;

	(void)state;
	assert_int_equal(tb_idle_parse(false, linux_look, &s, NULL), 0);
	assert_true(s.load1 > 3.19 && s.load1 < 3.21);
	assert_true(s.softirq_pct > 9.99 && s.softirq_pct < 10.01);
	assert_int_equal(s.nstrays, 2);
	assert_int_equal(s.stray_pid[0], 1234);
	assert_string_equal(s.stray_args[0], "iperf3 -s -p 5999");
	assert_int_equal(s.stray_pid[1], 77);
}

static void test_parse_freebsd(void **state)
{
	struct tb_idle_seen s;

	(void)state;
	assert_int_equal(tb_idle_parse(true, bsd_look, &s, NULL), 0);
	assert_true(s.load1 > 0.51 && s.load1 < 0.53);
	assert_true(s.softirq_pct > 19.99 && s.softirq_pct < 20.01);
	assert_int_equal(s.nstrays, 0);
}

/* One reading only (no softirq threshold asked), no load, garbage: what
 * is not there is "not known", never 0; no process list is an error. */
static void test_parse_partial(void **state)
{
	struct tb_idle_seen s;
	struct tb_error e = {0};

	(void)state;
	assert_int_equal(tb_idle_parse(false, "@load\n@cpu\ncpu0 1 2 3 4\n@procs\n", &s, NULL), 0);
	assert_true(s.load1 < 0 && s.softirq_pct < 0);
	assert_int_equal(s.nstrays, 0);
	assert_int_equal(tb_idle_parse(false, "@load\n0.1 0.1 0.1 1/2 3\n", &s, &e), TB_ERR_INVALID);
	assert_non_null(strstr(e.message, "process list"));
	assert_int_equal(tb_idle_parse(false, "", &s, NULL), TB_ERR_INVALID);
	/* a host's args with control bytes are kept printable */
	assert_int_equal(tb_idle_parse(false, "@procs\n9 iperf3 -s\x1b[2J\nnot a pid\n", &s, NULL), 0);
	assert_int_equal(s.nstrays, 1);
	assert_string_equal(s.stray_args[0], "iperf3 -s?[2J");
}

static void test_busy_sentences(void **state)
{
	struct tb_idle_opts o;
	struct tb_idle_seen s;
	char msg[256];

	(void)state;
	tb_idle_opts_from_json(NULL, &o);
	assert_int_equal(tb_idle_parse(false, linux_look, &s, NULL), 0);
	assert_true(tb_idle_busy(&o, &s, "right", msg, sizeof(msg)));
	assert_string_equal(msg, "right: a stray iperf3 (pid 1234: iperf3 -s -p 5999) is running (and 1 more)");
	s.nstrays = 0;
	assert_false(tb_idle_busy(&o, &s, "right", msg, sizeof(msg))); /* no thresholds: load is no matter */
	o.max_load = 1.0;
	assert_true(tb_idle_busy(&o, &s, "left", msg, sizeof(msg)));
	assert_string_equal(msg, "left: load 3.20 > 1.00");
	o.max_load = 4.0;
	o.max_softirq_pct = 5;
	assert_true(tb_idle_busy(&o, &s, "left", msg, sizeof(msg)));
	assert_string_equal(msg, "left: softirq 10.0 % > 5.0 %");
	o.max_softirq_pct = 10.5;
	assert_false(tb_idle_busy(&o, &s, "left", msg, sizeof(msg)));
	s.load1 = -1; /* not known: never busy by load */
	o.max_load = 0;
	assert_false(tb_idle_busy(&o, &s, "left", msg, sizeof(msg)));
}

/* The processes the matrix's earlier runs started (a server still exiting)
 * are not strays; the others stay, in their order. */
static void test_own_pids_are_not_strays(void **state)
{
	struct tb_idle_opts o;
	struct tb_idle_seen s;
	char msg[256];
	long mine[] = {99, 1234};

	(void)state;
	tb_idle_opts_from_json(NULL, &o);
	assert_int_equal(tb_idle_parse(false, linux_look, &s, NULL), 0);
	assert_int_equal(s.nstrays, 2);
	tb_idle_drop_own(&s, mine, 2);
	assert_int_equal(s.nstrays, 1);
	assert_true(tb_idle_busy(&o, &s, "right", msg, sizeof(msg)));
	assert_string_equal(msg, "right: a stray iperf (pid 77: iperf -s -u) is running");
	mine[0] = 77;
	tb_idle_drop_own(&s, mine, 2);
	assert_int_equal(s.nstrays, 0);
	assert_false(tb_idle_busy(&o, &s, "right", msg, sizeof(msg)));
	tb_idle_drop_own(&s, mine, 0); /* nothing known: nothing dropped */
	assert_int_equal(s.nstrays, 0);
}

/* The run's own server, started beside the first look, listens on the
 * run's port: "-p PORT" as a word, not a longer port nor another option. */
static void test_own_port_is_not_a_stray(void **state)
{
	static const char look[] = "@load\n0.10 0.10 0.10 1/100 1\n@cpu\ncpu0 1 0 1 100 0 0 0 0 0 0\n@procs\n"
				   "10 iperf3 -s -1 -p 52010 --forceflush -i 1\n"
				   "11 iperf3 -s -p 520100\n"
				   "12 netserver -p 52010\n"
				   "13 iperf -s -P 52010\n";
	struct tb_idle_seen s;

	(void)state;
	assert_int_equal(tb_idle_parse(false, look, &s, NULL), 0);
	assert_int_equal(s.nstrays, 4);
	tb_idle_drop_port(&s, 52010);
	assert_int_equal(s.nstrays, 2);
	assert_int_equal(s.stray_pid[0], 11);
	assert_int_equal(s.stray_pid[1], 13);
}

/* The Linux command as a host runs it, here on this machine, with an
 * iperf3 server of the test's own (started and stopped by its pid) that
 * must be among the strays with its args as it was started. */
static void test_linux_command_here(void **state)
{
	FILE *f;
	char *buf = calloc(1, 65536), port[16], want[64];
	size_t n;
	struct tb_idle_seen s;
	pid_t child;
	int found = 0;

	(void)state;
	assert_non_null(buf);
	snprintf(port, sizeof(port), "%d", 50000 + (int)(getpid() % 9000));
	snprintf(want, sizeof(want), "iperf3 -s -1 -B 127.0.0.1 -p %s", port);
	if ((child = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl("/usr/bin/iperf3", "iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port, (char *)NULL);
		_exit(127);
	}
	assert_true(child > 0);
	nanosleep(&(struct timespec){.tv_nsec = 300 * 1000 * 1000}, NULL);
	f = popen(tb_idle_command(false, true), "r");
	assert_non_null(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	pclose(f);
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	assert_int_equal(tb_idle_parse(false, buf, &s, NULL), 0);
	assert_true(s.load1 >= 0);
	assert_true(s.softirq_pct >= 0 && s.softirq_pct <= 100);
	{ /* its line as the parser takes it ("pid args"; the parser keeps only the first few) */
		char line[96];

		snprintf(line, sizeof(line), "\n%ld %s\n", (long)child, want);
		found = strstr(buf, line) != NULL && s.nstrays >= 1;
	}
	if (!found)
		fail_msg("iperf3 (pid %ld, \"%s\") is not among the strays of:\n%s", (long)child, want, buf);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_defaults_and_values),
		cmocka_unit_test(test_parse_linux),
		cmocka_unit_test(test_parse_freebsd),
		cmocka_unit_test(test_parse_partial),
		cmocka_unit_test(test_busy_sentences),
		cmocka_unit_test(test_own_pids_are_not_strays),
		cmocka_unit_test(test_own_port_is_not_a_stray),
		cmocka_unit_test(test_linux_command_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
