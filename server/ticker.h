/*
 * ticker.h - a background thread that calls a function every period until
 * it is stopped: the reachability prober, the BMC watcher, idle power-off,
 * the wake schedule and the event streams' heartbeat each run on one.  A
 * stop wakes the thread at once (it never sleeps out its period) and waits
 * for the call in progress to return; a kick makes the next call now.
 */
#ifndef TB_TICKER_H
#define TB_TICKER_H

#include <pthread.h>

typedef void (*tb_tick_fn)(void *cls);

struct tb_ticker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int running, stop, kick;
	long period_ms;
	tb_tick_fn fn;
	void *cls;
};

/* Call fn(cls) now and then every period_ms.  0, or -1 (no thread). */
int tb_ticker_start(struct tb_ticker *t, long period_ms, tb_tick_fn fn, void *cls);
/* 1 once a stop was asked: a long fn checks it between steps. */
int tb_ticker_stopping(struct tb_ticker *t);
/* Call fn again now (after the call in progress, if any), then every
 * period_ms from there.  A ticker not running: nothing happens. */
void tb_ticker_kick(struct tb_ticker *t);
/* Stop and join.  A ticker never started (zeroed) or stopped already is fine. */
void tb_ticker_stop(struct tb_ticker *t);

#endif /* TB_TICKER_H */
