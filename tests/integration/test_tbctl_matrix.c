/*
 * test_tbctl_matrix.c - `tbctl matrix ...`, the real binary against the
 * real testbedd on its loopback test inventory (tests/support/daemon.h):
 * nothing listens at any persona's address, so every run fails at once as
 * ssh_error, which is what these tests lean on.  The default inventory gives
 * only left a link, so the pairs here are right -> left (a server needs a
 * link); left -> right is the spec the plan refuses.
 *
 * Covered: plan (the table, --json, bad specs naming the field as a table of
 * cases, specs that are not JSON), run --wait (exit 5, the failed runs
 * listed), run --quiet, results (cells, --runs, --csv both views),
 * show, list, cancel of an ended matrix (409, exit 2), cancel of a running
 * one and watch of it (exit 6), watch of an ended matrix (at once), watch
 * from the middle, resume --wait, rerun --wait, and watch surviving a
 * testbedd restart (the matrix comes back interrupted: exit 6).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon.h"

#define OUT_MAX (256 * 1024)

struct run {
	int status; /* exit code, -1 when it died by a signal */
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static struct tb_test_daemon dmn;
static char tbctl_exe[512];

/* right -> left: 2 protocols x 2 repeats = 4 runs in 2 cells */
static const char spec_good[] = "{\"name\": \"loop\", \"pairs\": [{\"client\": \"right\", \"server\": \"left\"}],\n"
				" \"protocols\": [\"tcp\", \"udp\"], \"duration_s\": 1, \"repeats\": 2}\n";
/* the same, slowed down by pauses so that it can be watched, canceled, interrupted */
static const char spec_slow[] =
	"{\"name\": \"slow\", \"pairs\": [{\"client\": \"right\", \"server\": \"left\"}],\n"
	" \"protocols\": [\"tcp\", \"udp\"], \"duration_s\": 1, \"repeats\": 3, \"pause_s\": 1}\n";

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f == NULL)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void write_text(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dmn.dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Start tbctl with argv (NULL-terminated, without argv[0]), stdout and
 * stderr to files named after tag, stdin from /dev/null. */
static pid_t start(const char *tag, const char *const *argv)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char out[400], err[400], url[96];
		const char *args[32];
		int n = 0, o, e, in;

		snprintf(out, sizeof(out), "%s/%s.out", dmn.dir, tag);
		snprintf(err, sizeof(err), "%s/%s.err", dmn.dir, tag);
		o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		in = open("/dev/null", O_RDONLY);
		if (o < 0 || e < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		snprintf(url, sizeof(url), "http://127.0.0.1:%u", dmn.port);
		setenv("TESTBEDD_URL", url, 1);
		setenv("TESTBEDD_TOKEN_FILE", dmn.admin_token_file, 1);
		unsetenv("http_proxy");
		unsetenv("HTTP_PROXY");
		args[n++] = tbctl_exe;
		args[n++] = "--timeout";
		args[n++] = "20";
		for (size_t i = 0; argv[i] != NULL && n < 31; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execv(tbctl_exe, (char *const *)args);
		_exit(127);
	}
	return pid;
}

/* Wait for pid (at most timeout_ms: then it is killed) and read its output. */
static void reap(pid_t pid, const char *tag, long timeout_ms, struct run *r)
{
	char path[400];
	int st = 0;
	long waited = 0;

	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (waited >= timeout_ms) {
			fprintf(stderr, "tbctl %s did not end within %ld ms: killed\n", tag, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		sleep_ms(50);
		waited += 50;
	}
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	snprintf(path, sizeof(path), "%s/%s.out", dmn.dir, tag);
	slurp(path, r->out, sizeof(r->out));
	snprintf(path, sizeof(path), "%s/%s.err", dmn.dir, tag);
	slurp(path, r->err, sizeof(r->err));
}

static void tbctl(struct run *r, const char *const *argv)
{
	reap(start("tbctl", argv), "tbctl", 60000, r);
}

static void show(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s", what, r->status, r->out, r->err);
}

/* Assert, printing the run when it fails. */
#define check(cond, what, r)                             \
	do {                                             \
		if (!(cond)) {                           \
			show(what, r);                   \
			fail_msg("%s: %s", what, #cond); \
		}                                        \
	} while (0)

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The id in "matrix N ..." at the start of out, or in a --quiet "N\n". */
static long long id_of(const struct run *r)
{
	long long id = 0;

	if (sscanf(r->out, "matrix %lld", &id) != 1 && sscanf(r->out, "%lld", &id) != 1)
		id = 0;
	check(id > 0, "the output starts with the matrix id", r);
	return id;
}

/* Start spec (a file) without waiting; its id. */
static long long start_matrix(const char *spec_path)
{
	static struct run r;

	tbctl(&r, A("matrix", "run", spec_path, "--quiet"));
	check(r.status == 0, "matrix run --quiet", &r);
	check(strchr(r.out, ' ') == NULL, "--quiet prints the id alone", &r);
	return id_of(&r);
}

static int setup(void **state)
{
	const char *bin = getenv("TB_BINARY_DIR");

	(void)state;
	if (bin == NULL) {
		fprintf(stderr, "TB_BINARY_DIR is not set (ctest sets it)\n");
		return -1;
	}
	snprintf(tbctl_exe, sizeof(tbctl_exe), "%s/tbctl", bin);
	if (access(tbctl_exe, X_OK) != 0) {
		fprintf(stderr, "%s: %s; build the tbctl target\n", tbctl_exe, strerror(errno));
		return -1;
	}
	return tb_test_daemon_start(&dmn, NULL, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&dmn) == 0 ? 0 : -1;
}

/* ---- plan ---- */

static void test_plan(void **state)
{
	static struct run r;
	char spec[400];
	json_t *j;

	(void)state;
	write_text("good.json", spec_good, spec, sizeof(spec));
	tbctl(&r, A("matrix", "plan", spec));
	check(r.status == 0, "plan", &r);
	check(strstr(r.out, "SEQ") != NULL && strstr(r.out, "IPERF ARGS") != NULL, "plan has its header", &r);
	check(count(r.out, "right -> left") == 4, "plan has a row per run", &r);
	check(count(r.out, " udp ") == 2 && count(r.out, " tcp ") == 2, "plan has both protocols", &r);
	check(strstr(r.out, "lan10 (198.19.10.2)") != NULL, "plan names the link and its address", &r);
	check(strstr(r.out, "-t 1") != NULL, "plan shows the iperf3 arguments", &r);
	check(strstr(r.out, "4 runs in 2 cells") != NULL && strstr(r.out, "estimated") != NULL,
	      "plan ends with the estimate", &r);

	tbctl(&r, A("--json", "matrix", "plan", spec));
	check(r.status == 0, "plan --json", &r);
	j = json_loads(r.out, 0, NULL);
	check(j != NULL, "plan --json parses", &r);
	check(json_array_size(json_object_get(json_object_get(j, "plan"), "plan")) == 4, "plan --json has 4 runs", &r);
	json_decref(j);
}

/* Specs the API refuses: exit 2, the field named as the API names it. */
static void test_plan_bad(void **state)
{
	static const struct {
		const char *spec, *field;
	} cases[] = {
		{"{\"name\":\"b\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"protocols\":[\"tcp\",\"sctp\"]}",
		 "field protocols[1]"},
		/* right has no links: it cannot be a server */
		{"{\"name\":\"b\",\"pairs\":[{\"client\":\"left\",\"server\":\"right\"}]}", "field pairs[0].server"},
		{"{\"name\":\"b\",\"pairs\":[{\"client\":\"right\",\"server\":\"nobody\"}]}", "field pairs[0].server"},
		{"{\"name\":\"b\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"iperf\":{\"parallel\":[1,0]}}",
		 "field iperf.parallel[1]"},
		{"{\"name\":\"b\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"colour\":1}",
		 "field colour"},
	};
	static struct run r;
	char spec[400];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fprintf(stderr, "case: %s\n", cases[i].spec);
		write_text("bad.json", cases[i].spec, spec, sizeof(spec));
		tbctl(&r, A("matrix", "plan", spec));
		check(r.status == 2, cases[i].field, &r);
		check(strstr(r.err, cases[i].field) != NULL, cases[i].field, &r);
		check(strstr(r.err, "HTTP 400") != NULL, cases[i].field, &r);
	}
	/* not JSON, not an object, no file: refused here, exit 1 */
	write_text("broken.json", "{\"name\": \"b\",\n  pairs: []}\n", spec, sizeof(spec));
	tbctl(&r, A("matrix", "plan", spec));
	check(r.status == 1 && strstr(r.err, "broken.json:2:") != NULL, "a spec that is not JSON", &r);
	write_text("list.json", "[1, 2]\n", spec, sizeof(spec));
	tbctl(&r, A("matrix", "run", spec));
	check(r.status == 1 && strstr(r.err, "one JSON object") != NULL, "a spec that is not an object", &r);
	tbctl(&r, A("matrix", "plan", "/nonexistent/spec.json"));
	check(r.status == 1 && strstr(r.err, "/nonexistent/spec.json") != NULL, "a spec that is not there", &r);
	tbctl(&r, A("matrix", "results", "1", "--runs", "--cells"));
	check(r.status == 1, "--runs with --cells", &r);
	tbctl(&r, A("matrix", "watch", "x"));
	check(r.status == 1 && strstr(r.err, "positive whole number") != NULL, "a matrix id is a number", &r);
}

/* ---- a whole matrix: run --wait, results, show, list, cancel ---- */

static void test_run_wait_and_results(void **state)
{
	static struct run r;
	char spec[400], ids[32];
	long long id;
	const char *line;
	int lines = 0;

	(void)state;
	write_text("good.json", spec_good, spec, sizeof(spec));
	tbctl(&r, A("matrix", "run", spec, "--wait"));
	check(r.status == 5, "run --wait: runs failed -> exit 5", &r);
	id = id_of(&r);
	check(count(r.out, "ssh_error") >= 4, "every run failed as ssh_error", &r);
	check(strstr(r.out, "#0 ") != NULL && strstr(r.out, "#3 ") != NULL, "a line per finished run", &r);
	check(strstr(r.out, "failed runs") != NULL && strstr(r.out, "does not answer ssh") != NULL,
	      "the failed runs are listed with their reason", &r);
	check(strstr(r.out, "4 failed") != NULL, "the summary counts them", &r);
	check(strstr(r.err, "failed") != NULL, "stderr says the matrix failed", &r);
	snprintf(ids, sizeof(ids), "%lld", id);

	/* CSV, one line per run, as the server sent it */
	tbctl(&r, A("matrix", "results", ids, "--csv", "--runs"));
	check(r.status == 0, "results --csv --runs", &r);
	check(strncmp(r.out, "id,seq,cell,", 12) == 0, "the CSV starts with its header", &r);
	for (line = r.out; *line; line++)
		lines += *line == '\n';
	check(lines == 5, "a header and one line per run", &r);
	check(count(r.out, "\r\n") == 5, "the server's CRLF kept", &r);
	check(count(r.out, ",ssh_error,") == 4, "each run's error class", &r);

	tbctl(&r, A("matrix", "results", ids, "--csv"));
	check(r.status == 0 && strncmp(r.out, "cell,", 5) == 0 && count(r.out, "\r\n") == 3,
	      "results --csv: a header and one line per cell", &r);

	tbctl(&r, A("matrix", "results", ids));
	check(r.status == 0, "results", &r);
	check(strstr(r.out, "SENDER") != NULL && strstr(r.out, "RECEIVER") != NULL && strstr(r.out, "LOSS") != NULL,
	      "the cells table has its columns", &r);
	check(count(r.out, "right -> left") == 2 && count(r.out, "0/2") == 2, "one row per cell, none ok", &r);

	tbctl(&r, A("matrix", "results", ids, "--runs"));
	check(r.status == 0 && count(r.out, "ssh_error") == 4, "results --runs: one row per run", &r);

	tbctl(&r, A("matrix", "show", ids));
	check(r.status == 0, "show", &r);
	check(strstr(r.out, "failed") != NULL && strstr(r.out, "4/4 done") != NULL, "show: state and progress", &r);
	check(count(r.out, "ssh_error") == 4, "show: the run list", &r);

	tbctl(&r, A("matrix", "list"));
	check(r.status == 0 && strstr(r.out, "loop") != NULL && strstr(r.out, "4/4") != NULL, "list", &r);

	/* an ended matrix: nothing to cancel or resume */
	tbctl(&r, A("matrix", "cancel", ids));
	check(r.status == 2, "cancel of an ended matrix: exit 2", &r);
	check(strstr(r.err, "has ended") != NULL && strstr(r.err, "409") != NULL && strstr(r.err, "conflict") != NULL,
	      "cancel of an ended matrix: the conflict", &r);
	tbctl(&r, A("matrix", "resume", ids));
	check(r.status == 2 && strstr(r.err, "409") != NULL, "resume of a failed matrix: the conflict", &r);

	/* watching an ended matrix ends at once, with its exit code */
	{
		time_t t0 = time(NULL);

		tbctl(&r, A("matrix", "watch", ids));
		check(r.status == 5 && strstr(r.out, "failed") != NULL, "watch of a failed matrix", &r);
		check(time(NULL) - t0 < 5, "watch of an ended matrix does not wait", &r);
	}

	/* rerun: a new matrix from the same spec */
	tbctl(&r, A("matrix", "rerun", ids, "--wait", "--quiet"));
	check(r.status == 5, "rerun --wait", &r);
	check(id_of(&r) > id, "rerun made a new matrix", &r);
	check(strstr(r.out, "failed runs") != NULL && strstr(r.out, "#0 ") == NULL, "--quiet: only the summary", &r);

	tbctl(&r, A("matrix", "show", "999999"));
	check(r.status == 2 && strstr(r.err, "404") != NULL, "show of no matrix", &r);
}

/* watch from the middle; cancel; watch a canceled one; resume --wait. */
static void test_watch_cancel_resume(void **state)
{
	static struct run r;
	char spec[400], ids[32];
	long long id;

	(void)state;
	write_text("slow.json", spec_slow, spec, sizeof(spec));
	id = start_matrix(spec);
	snprintf(ids, sizeof(ids), "%lld", id);
	sleep_ms(1500);
	tbctl(&r, A("matrix", "watch", ids));
	check(r.status == 5, "watch to the end: failed", &r);
	check(strstr(r.out, "following matrix") != NULL && strstr(r.out, "#5 ") != NULL,
	      "watch prints the runs that end while it watches", &r);
	check(strstr(r.out, "6 of 6 runs done") != NULL, "watch sums up", &r);

	id = start_matrix(spec);
	snprintf(ids, sizeof(ids), "%lld", id);
	sleep_ms(1500);
	tbctl(&r, A("matrix", "cancel", ids));
	check(r.status == 0 && strstr(r.out, "cancel requested") != NULL, "cancel of a running matrix", &r);
	tbctl(&r, A("matrix", "watch", ids));
	check(r.status == 6 && strstr(r.out, "canceled") != NULL, "watch of a canceled matrix: exit 6", &r);

	tbctl(&r, A("matrix", "resume", ids, "--wait"));
	check(r.status == 5, "resume --wait runs the rest: they fail", &r);
	check(strstr(r.out, "6 of 6 runs done") != NULL, "resume --wait sums up the whole matrix", &r);
}

/* testbedd restarts while a matrix runs: watch resumes the stream, learns
 * that the matrix is interrupted (no event says so) and exits 6. */
static void test_watch_restart(void **state)
{
	static struct run r;
	char spec[400], ids[32];
	unsigned int port = dmn.port;
	long long id;
	pid_t w;

	(void)state;
	write_text("slow.json", spec_slow, spec, sizeof(spec));
	id = start_matrix(spec);
	snprintf(ids, sizeof(ids), "%lld", id);
	w = start("watch", A("matrix", "watch", ids));
	sleep_ms(1500);
	assert_int_equal(tb_test_daemon_kill(&dmn), 0);
	sleep_ms(300);
	assert_int_equal(tb_test_daemon_launch(&dmn, NULL, port), 0);
	reap(w, "watch", 30000, &r);
	check(r.status == 6, "a matrix interrupted by a restart: exit 6", &r);
	check(strstr(r.err, "resuming") != NULL, "watch said it resumes", &r);
	check(strstr(r.out, "interrupted") != NULL, "watch says interrupted", &r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_plan_bad),
		cmocka_unit_test(test_run_wait_and_results),
		cmocka_unit_test(test_watch_cancel_resume),
		cmocka_unit_test(test_watch_restart),
	};

	return cmocka_run_group_tests_name("tbctl_matrix", tests, setup, teardown);
}
