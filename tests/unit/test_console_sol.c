/*
 * test_console_sol.c - the ipmi-sol console's session loop and its
 * `sol deactivate` (server/console_sol.c), white box:
 *   - ipmitool's stderr at its end while its stdout stays open: the loop
 *     reads that end once and stops polling stderr (before, poll reported it
 *     at once on every turn and the thread spun at 100% CPU until stdout
 *     ended);
 *   - `sol deactivate` run while the console is stopping (its closing flag
 *     set) is canceled at once, not waited out to its 10 s deadline while
 *     the console list's write lock is held (tb_consoles_close).
 *
 * This file compiles console_sol.c itself (as test_auth.c does auth.c) with
 * read() and tb_proc_run() wrapped to count what they did; both still do the
 * real thing.  The session loop's "ipmitool" is three pipes of this test: no
 * real ipmitool can be made to close its stderr alone, and the program is
 * looked up in a fixed PATH (proc.h), so no stand-in can be put there.  The
 * deactivate runs the real ipmitool against a UDP port of this test that
 * never answers (a BMC gone quiet).  (The library's console_sol.o is not
 * linked: every symbol it has is defined here first.)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc.h"

static int err_fd = -1, out_fd = -1;
static atomic_int err_ends, out_reads;

/* read(), counting stderr's ends and stdout's reads of the loop. */
static ssize_t counted_read(int fd, void *buf, size_t n)
{
	ssize_t k = read(fd, buf, n);

	if (fd == err_fd && k == 0)
		atomic_fetch_add(&err_ends, 1);
	if (fd == out_fd)
		atomic_fetch_add(&out_reads, 1);
	return k;
}

static int last_rc;
static int last_canceled = -1;

/* tb_proc_run(), keeping how the run ended. */
static int kept_proc_run(const char *const argv[], const char *const env_add[], long timeout_ms, size_t max_output,
			 const volatile int *cancel, struct tb_proc_result *res, struct tb_error *err)
{
	last_rc = tb_proc_run(argv, env_add, timeout_ms, max_output, cancel, res, err);
	last_canceled = res->canceled;
	return last_rc;
}

#define read(fd, buf, n) counted_read((fd), (buf), (n))
#define tb_proc_run(a, e, t, m, c, r, er) kept_proc_run((a), (e), (t), (m), (c), (r), (er))
#include "console_sol.c"
#undef read
#undef tb_proc_run

struct rig {
	struct tb_consoles cs;
	struct console c;
};

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	r->c.cs = &r->cs;
	snprintf(r->c.name, sizeof(r->c.name), "left");
	assert_int_equal(pipe(r->c.pipe), 0);
	assert_int_equal(pthread_mutex_init(&r->c.mu, NULL), 0);
}

static void rig_free(struct rig *r)
{
	close(r->c.pipe[0]);
	close(r->c.pipe[1]);
	pthread_mutex_destroy(&r->c.mu);
}

struct serve {
	struct sol *s;
	char why[256];
};

static void *serve_thread(void *cls)
{
	struct serve *sv = cls;

	sol_serve(sv->s, sv->why, sizeof(sv->why));
	return NULL;
}

static void wait_out_reads(int n)
{
	for (int i = 0; i < 10000 && atomic_load(&out_reads) < n; i++) {
		struct timespec ts = {0, 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	assert_true(atomic_load(&out_reads) >= n);
}

/* stderr ends first, stdout goes on for two more lines, then ends: the
 * loop read stderr's end exactly once.  Without the mend every turn of the
 * loop read it again: at least once per stdout line, and in fact thousands
 * of times while it spun between them. */
static void test_stderr_end_not_polled_again(void **state)
{
	struct rig r;
	struct serve sv = {0};
	int outp[2], errp[2], inp[2];
	pthread_t t;

	(void)state;
	rig_init(&r);
	assert_int_equal(pipe(outp), 0);
	assert_int_equal(pipe(errp), 0);
	assert_int_equal(pipe(inp), 0);
	sv.s = calloc(1, sizeof(*sv.s));
	assert_non_null(sv.s);
	sv.s->c = &r.c;
	sv.s->ch = (struct tb_proc_child){.pid = 0, .in = inp[1], .out = outp[0], .err = errp[0]};
	sv.s->banner = (struct strip){"[SOL Session operational.  Use ~? for help]", 43, 0, 1};
	sv.s->brk = (struct strip){"~B [send break]", 15, 0, 0};
	err_fd = errp[0];
	out_fd = outp[0];
	atomic_store(&err_ends, 0);
	atomic_store(&out_reads, 0);

	close(errp[1]); /* ipmitool's stderr at its end */
	assert_int_equal(pthread_create(&t, NULL, serve_thread, &sv), 0);
	assert_int_equal(write(outp[1], "one\n", 4), 4);
	wait_out_reads(1);
	assert_int_equal(write(outp[1], "two\n", 4), 4);
	wait_out_reads(2);
	close(outp[1]); /* then its stdout: the session ends */
	assert_int_equal(pthread_join(t, NULL), 0);

	assert_non_null(strstr(sv.why, "ipmitool sol activate ended: two"));
	assert_int_equal(atomic_load(&err_ends), 1);

	err_fd = out_fd = -1;
	close(outp[0]);
	close(errp[0]);
	close(inp[0]);
	close(inp[1]);
	free(sv.s);
	rig_free(&r);
}

/* A stopping console's `sol deactivate` (a BMC that never answers) is
 * canceled: without the mend it ran with no cancel flag and ended by
 * itself or at its deadline (not canceled). */
static void test_deactivate_canceled_when_closing(void **state)
{
	struct rig r;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	const char *env[] = {"IPMI_PASSWORD=not-a-secret", NULL};
	int u;

	(void)state;
	if (access("/usr/bin/ipmitool", X_OK) != 0 && access("/usr/sbin/ipmitool", X_OK) != 0 &&
	    access("/usr/local/bin/ipmitool", X_OK) != 0)
		skip();
	/* the quiet BMC: a UDP port bound and never read */
	u = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(u >= 0);
	assert_int_equal(bind(u, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(u, (struct sockaddr *)&a, &alen), 0);

	rig_init(&r);
	snprintf(r.c.bmc_address, sizeof(r.c.bmc_address), "127.0.0.1");
	snprintf(r.c.bmc_user, sizeof(r.c.bmc_user), "admin");
	r.c.bmc_port = ntohs(a.sin_port);
	r.c.bmc_cipher_suite = 3;
	r.cs.closing = 1; /* the console is stopping */
	last_canceled = -1;
	sol_deactivate(&r.c, env);
	assert_int_equal(last_rc, TB_ERR_CANCELED);
	assert_int_equal(last_canceled, 1);

	rig_free(&r);
	close(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stderr_end_not_polled_again),
		cmocka_unit_test(test_deactivate_canceled_when_closing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
