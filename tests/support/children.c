/* children.c - helper processes stopped at the test program's exit: see children.h. */
#include "children.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 32

static struct {
	pid_t pid;
	const char *what;
} children[MAX_CHILDREN];
static int handler_set;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* SIGTERM, up to 3 s to go, then SIGKILL.  Only a child not yet waited for is
 * signalled: its pid cannot have been reused (a test that reaped it itself and
 * did not untrack it gets ECHILD here). */
static void stop_child(pid_t pid)
{
	if (waitpid(pid, NULL, WNOHANG) != 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 60; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void stop_all(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (children[i].pid <= 0 || waitpid(children[i].pid, NULL, WNOHANG) != 0)
			continue;
		fprintf(stderr, "test support: %s (pid %ld) was still running at exit (a failed test?): stopping it\n",
			children[i].what, (long)children[i].pid);
		stop_child(children[i].pid);
		children[i].pid = 0;
	}
}

void tb_test_child_init(void)
{
	pid_t parent = getppid();

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent) /* the parent died before prctl */
		_exit(1);
}

void tb_test_child_track(pid_t pid, const char *what)
{
	if (pid <= 0)
		return;
	if (!handler_set && atexit(stop_all) == 0)
		handler_set = 1;
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (children[i].pid <= 0) {
			children[i].pid = pid;
			children[i].what = what;
			return;
		}
	}
	fprintf(stderr, "test support: more than %d helper processes; pid %ld is not tracked\n", MAX_CHILDREN,
		(long)pid);
}

void tb_test_child_untrack(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i].pid == pid && pid > 0)
			children[i].pid = 0;
}
