/* ticker.c - a periodic background thread.  See ticker.h. */
#include "ticker.h"

#include <time.h>

#include "timeutil.h"

static void *run(void *arg)
{
	struct tb_ticker *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec until;

		pthread_mutex_unlock(&t->lock);
		t->fn(t->cls);
		pthread_mutex_lock(&t->lock);
		until = tb_cond_deadline(t->period_ms);
		while (!t->stop && !t->kick)
			if (pthread_cond_timedwait(&t->cond, &t->lock, &until) != 0)
				break;
		t->kick = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int tb_ticker_start(struct tb_ticker *t, long period_ms, tb_tick_fn fn, void *cls)
{
	t->period_ms = period_ms > 0 ? period_ms : 1000;
	t->fn = fn;
	t->cls = cls;
	t->stop = 0;
	t->kick = 0;
	pthread_mutex_init(&t->lock, NULL);
	tb_cond_init(&t->cond);
	if (pthread_create(&t->thread, NULL, run, t) != 0) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		return -1;
	}
	t->running = 1;
	return 0;
}

int tb_ticker_stopping(struct tb_ticker *t)
{
	int stop;

	if (!t->running)
		return 0;
	pthread_mutex_lock(&t->lock);
	stop = t->stop;
	pthread_mutex_unlock(&t->lock);
	return stop;
}

void tb_ticker_kick(struct tb_ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->kick = 1;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void tb_ticker_stop(struct tb_ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	t->running = 0;
}
