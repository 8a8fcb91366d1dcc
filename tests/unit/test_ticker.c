/*
 * test_ticker.c - the one periodic thread (ticker.h): it calls at once, a
 * kick makes the next call now rather than a period later, a stop does not
 * sleep out the period, and a ticker never started stops and kicks fine.
 * The waits are bounds (a hang would fail by timeout), never measures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ticker.h"
#include "timeutil.h"

struct counter {
	pthread_mutex_t lock;
	int calls;
};

static void count(void *cls)
{
	struct counter *c = cls;

	pthread_mutex_lock(&c->lock);
	c->calls++;
	pthread_mutex_unlock(&c->lock);
}

/* Wait (at most 10 s) until at least n calls were made. */
static int calls_reach(struct counter *c, int n)
{
	for (int i = 0; i < 1000; i++) {
		int k;

		pthread_mutex_lock(&c->lock);
		k = c->calls;
		pthread_mutex_unlock(&c->lock);
		if (k >= n)
			return k;
		tb_sleep_ms(10, NULL);
	}
	return -1;
}

static void test_kick_and_stop(void **state)
{
	struct tb_ticker t;
	struct counter c = {PTHREAD_MUTEX_INITIALIZER, 0};
	int64_t t0;

	(void)state;
	memset(&t, 0, sizeof(t));
	tb_ticker_kick(&t); /* not running: nothing */
	tb_ticker_stop(&t);
	/* a period of an hour: every call past the first comes from a kick */
	assert_int_equal(tb_ticker_start(&t, 3600 * 1000L, count, &c), 0);
	assert_int_equal(calls_reach(&c, 1), 1);
	tb_ticker_kick(&t);
	assert_int_equal(calls_reach(&c, 2), 2);
	tb_ticker_kick(&t);
	assert_int_equal(calls_reach(&c, 3), 3);
	t0 = tb_monotonic_ms();
	tb_ticker_stop(&t); /* returns: the test would hang otherwise */
	assert_true(tb_monotonic_ms() - t0 < 3600 * 1000L);
	assert_false(tb_ticker_stopping(&t)); /* stopped and joined */
	tb_ticker_stop(&t);                   /* twice is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kick_and_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
