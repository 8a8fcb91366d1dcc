/*
 * feed.h - a byte stream a module hands to the HTTP edge to serve as a
 * response of its own (server-sent events of a console; the edge serves the
 * bus's streams through the same interface, http_sse.c).
 *
 * The producer makes the feed; the edge owns it from the moment the handler
 * returns it in struct tb_reply and calls, in this order:
 *   attach(f, wake, cls)  once: from now on the producer calls wake(cls)
 *                         (from any thread, maybe under its own lock; wake
 *                         never blocks on anything but a mutex) when next
 *                         has something new (the edge wakes itself every
 *                         few seconds for its heartbeat and its check for a
 *                         client that went away);
 *   next(f, buf, max)     never blocks: > 0 bytes written to buf, 0 nothing
 *                         now (wait for wake), -1 the stream is over;
 *   close(f)              once, last: detaches and frees f.
 * A handler that fails after making a feed calls close itself.
 */
#ifndef TB_FEED_H
#define TB_FEED_H

#include <stddef.h>

struct tb_feed {
	void (*attach)(struct tb_feed *f, void (*wake)(void *cls), void *cls);
	long (*next)(struct tb_feed *f, char *buf, size_t max);
	void (*close)(struct tb_feed *f);
};

#endif /* TB_FEED_H */
