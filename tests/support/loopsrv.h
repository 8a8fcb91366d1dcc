/*
 * loopsrv.h - the loopback listener the test receivers share (hookrx.c,
 * smtprx.c): a TCP socket on 127.0.0.1, a free port; one thread that accepts
 * one connection at a time and hands it to the owner's callback (the thread
 * closes it after); a lock and a condition for what the callback records;
 * a stop that joins the thread.  The owner embeds struct tb_loopsrv.
 */
#ifndef TB_TEST_LOOPSRV_H
#define TB_TEST_LOOPSRV_H

#include <pthread.h>
#include <stddef.h>

/* Called on the server's thread for each accepted connection c; must not
 * close c.  It takes lock itself to record, and broadcasts cond after. */
typedef void tb_loopsrv_fn(int c, void *arg);

struct tb_loopsrv {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock; /* guards stop, accepted and the owner's records */
	pthread_cond_t cond;  /* the owner broadcasts it when it records */
	int stop;
	size_t accepted; /* connections accepted so far */
	tb_loopsrv_fn *serve;
	void *arg;
};

/* Listen on 127.0.0.1, a free port (into *port), and serve each connection
 * with serve(c, arg) on a thread of its own.  0 or -1 (perror'd with name). */
int tb_loopsrv_start(struct tb_loopsrv *s, const char *name, tb_loopsrv_fn *serve, void *arg, unsigned int *port);
/* *count read under the lock. */
size_t tb_loopsrv_get(struct tb_loopsrv *s, const size_t *count);
/* Wait until *count (guarded by the lock) is at least n, for at most ms.  0 or -1. */
int tb_loopsrv_wait(struct tb_loopsrv *s, const size_t *count, size_t n, long ms);
/* Stop accepting, join the thread (after the connection it serves), close the socket. */
void tb_loopsrv_stop(struct tb_loopsrv *s);

#endif /* TB_TEST_LOOPSRV_H */
