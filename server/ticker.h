/*
 * ticker.h - a background thread that calls a function every period until
 * it is stopped: the BMC watcher, idle power-off and the wake schedule each
 * run on one.  A stop wakes the thread at once (it never sleeps out its
 * period) and waits for the call in progress to return.
 */
#ifndef TB_TICKER_H
#define TB_TICKER_H

#include <pthread.h>

typedef void (*tb_tick_fn)(void *cls);

struct tb_ticker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int running, stop;
	long period_ms;
	tb_tick_fn fn;
	void *cls;
};

/* Call fn(cls) now and then every period_ms.  0, or -1 (no thread). */
int tb_ticker_start(struct tb_ticker *t, long period_ms, tb_tick_fn fn, void *cls);
/* 1 once a stop was asked: a long fn checks it between steps. */
int tb_ticker_stopping(struct tb_ticker *t);
/* Stop and join.  A ticker never started (zeroed) or stopped already is fine. */
void tb_ticker_stop(struct tb_ticker *t);

#endif /* TB_TICKER_H */
