/*
 * test_timeutil.c - condition waits on CLOCK_MONOTONIC (timeutil.h):
 *  - a cond made by tb_cond_init, waited on until tb_cond_deadline(ms), times
 *    out no earlier than that deadline on the monotonic clock (a cond on the
 *    default clock, CLOCK_REALTIME, takes the same deadline as long past and
 *    returns at once: the mismatch this helper pair exists to prevent);
 *  - every file of server/ that calls pthread_cond_timedwait makes its conds
 *    with tb_cond_init and reads no CLOCK_REALTIME (a source check, so that a
 *    new timed wait cannot slip back to the wall clock).
 * The property is "waited at least until the deadline"; no speed is asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeutil.h"

static int64_t mono_ms_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_monotonic_cond(void **state)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond, wall;
	struct timespec until;
	int rc;

	(void)state;
	assert_int_equal(tb_cond_init(&cond), 0);
	pthread_mutex_lock(&lock);
	until = tb_cond_deadline(120);
	do
		rc = pthread_cond_timedwait(&cond, &lock, &until);
	while (rc == 0); /* a spurious wake-up: wait on */
	assert_int_equal(rc, ETIMEDOUT);
	assert_true(tb_monotonic_ms() >= mono_ms_of(until));

	/* the same deadline on a default (CLOCK_REALTIME) cond is decades ago */
	assert_int_equal(pthread_cond_init(&wall, NULL), 0);
	until = tb_cond_deadline(60000);
	assert_int_equal(pthread_cond_timedwait(&wall, &lock, &until), ETIMEDOUT);
	assert_true(tb_monotonic_ms() < mono_ms_of(until));
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&wall);
	pthread_cond_destroy(&cond);

	/* normalised: whole seconds and a nanosecond part below one second */
	until = tb_cond_deadline(1999);
	assert_true(until.tv_nsec >= 0 && until.tv_nsec < 1000000000L);
	until = tb_cond_deadline(-5);
	assert_true(until.tv_nsec >= 0 && until.tv_nsec < 1000000000L);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_every_timed_wait_is_monotonic(void **state)
{
	const char *src = getenv("TB_SOURCE_DIR");
	char dir[1024], path[1400];
	DIR *d;
	struct dirent *e;
	int files = 0, bad = 0, ticker = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/server", src != NULL ? src : "..");
	assert_non_null(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char *text;

		if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0 || strcmp(e->d_name, "timeutil.c") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_non_null(text = slurp(path));
		if (strstr(text, "pthread_cond_timedwait") != NULL) {
			files++;
			ticker |= strcmp(e->d_name, "ticker.c") == 0;
			if (strstr(text, "CLOCK_REALTIME") != NULL || strstr(text, "pthread_cond_init(") != NULL ||
			    strstr(text, "PTHREAD_COND_INITIALIZER") != NULL || strstr(text, "tb_cond_init(") == NULL) {
				printf("%s: a timed wait on a cond not made by tb_cond_init, or CLOCK_REALTIME\n",
				       e->d_name);
				bad++;
			}
		}
		free(text);
	}
	closedir(d);
	printf("%d files of server/ with timed waits\n", files);
	/* the scan sees them: the ticker (every periodic thread) waits so */
	assert_true(ticker);
	assert_true(files >= 2);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic_cond),
		cmocka_unit_test(test_every_timed_wait_is_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
