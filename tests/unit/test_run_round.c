/*
 * test_run_round.c - the look barrier of a round's runs (server/run_round.c):
 * no run passes it before every run of the round has looked or been
 * skipped; a run that never looks (skipped) holds no one; a second call is
 * nothing; a stop lets a waiting run go; one that never comes holds the
 * others for the round's bound only (20 s by default); with no round
 * nothing waits.
 * Real threads; the order is checked with a counter under a lock.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_exec.h"
#include "timeutil.h"

struct runner {
	struct tb_run_ctl ctl;
	int delay_ms;  /* before it looks */
	int looked_at; /* how many had looked when this one arrived */
	int passed_at; /* how many had looked when this one passed */
	pthread_t th;
};

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int looked;

static void *run(void *arg)
{
	struct runner *r = arg;

	tb_sleep_ms(r->delay_ms, NULL);
	pthread_mutex_lock(&count_lock);
	r->looked_at = ++looked;
	pthread_mutex_unlock(&count_lock);
	tb_run_round_looked(&r->ctl);
	pthread_mutex_lock(&count_lock);
	r->passed_at = looked;
	pthread_mutex_unlock(&count_lock);
	return NULL;
}

static void test_no_one_passes_before_all_looked(void **state)
{
	struct tb_run_round rd;
	struct runner r[3] = {{.delay_ms = 0}, {.delay_ms = 150}, {.delay_ms = 300}};

	(void)state;
	looked = 0;
	tb_run_round_init(&rd, 4);
	for (int i = 0; i < 3; i++) {
		r[i].ctl.round = &rd;
		assert_int_equal(pthread_create(&r[i].th, NULL, run, &r[i]), 0);
	}
	/* a fourth run of the round never started: skipped, it holds no one */
	{
		struct tb_run_ctl skipped = {.round = &rd};

		tb_run_round_skip(&skipped);
		tb_run_round_skip(&skipped); /* once per run: the second call is nothing */
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(r[i].th, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].passed_at, 3); /* the first two waited for the third */
	assert_int_equal(rd.pending, 0);
	/* a run's second call (its retries) does not count it again nor wait */
	tb_run_round_looked(&r[0].ctl);
	assert_int_equal(rd.pending, 0);
	tb_run_round_destroy(&rd);
}

static void test_stop_and_no_round(void **state)
{
	struct tb_run_round rd;
	struct tb_run_ctl alone = {0}, stopped = {.stop = TB_RUN_CANCEL};
	int64_t t0;

	(void)state;
	tb_run_round_looked(&alone); /* not in a round: returns at once */
	assert_int_equal(alone.round_looked, 0);
	tb_run_round_init(&rd, 2);
	stopped.round = &rd;
	t0 = tb_monotonic_ms();
	tb_run_round_looked(&stopped); /* the other never comes, but this run is stopped */
	assert_true(tb_monotonic_ms() - t0 < 1000);
	assert_int_equal(rd.pending, 1);
	tb_run_round_destroy(&rd);
}

/* A run of the round that neither looks nor is skipped (stuck in its look)
 * holds the others for wait_ms, not longer. */
static void test_bounded(void **state)
{
	struct tb_run_round rd;
	struct tb_run_ctl waiting = {0};
	int64_t t0, took;

	(void)state;
	tb_run_round_init(&rd, 2);
	assert_int_equal(rd.wait_ms, TB_RUN_ROUND_WAIT_MS);
	assert_int_equal(TB_RUN_ROUND_WAIT_MS, 20000);
	rd.wait_ms = 300;
	waiting.round = &rd;
	t0 = tb_monotonic_ms();
	tb_run_round_looked(&waiting);
	took = tb_monotonic_ms() - t0;
	assert_true(took >= 300); /* it did wait for the other */
	assert_true(took < 3000); /* and went at the bound */
	assert_int_equal(rd.pending, 1);
	assert_int_equal(waiting.round_looked, 1);
	tb_run_round_destroy(&rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_one_passes_before_all_looked),
		cmocka_unit_test(test_stop_and_no_round),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
