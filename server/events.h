/*
 * events.h - the in-process event bus: every live thing testbedd reports
 * (host state and the BMC's view, action states and steps, matrix, run and
 * boot states, iperf3 intervals, audit entries) is an event with a
 * monotonically increasing id.
 *
 * Events are kept in a bounded ring in memory and persisted in the store, so
 * that a subscriber can resume after any id (Last-Event-ID) with no loss and
 * no duplicate: from the ring when it still holds the id, else from the
 * store; when even the store no longer holds it, the subscriber first gets a
 * "reset" record saying what the oldest kept id is.  A live-only
 * subscriber first gets a "stream" record with the id it starts after.
 *
 * Producers never block on subscribers: publishing appends to the ring and
 * returns the id.  A writer thread then stores what was published since its
 * last transaction in one transaction (in id order), and only then is an
 * event visible to subscribers: it calls each waiting subscriber's wake
 * function (which must not block) for them.  So a subscriber never sees an
 * event the store does not hold.  Crash safety: an event is committed (WAL,
 * synchronous=NORMAL: it survives a crash of testbedd, not a power loss)
 * before anyone sees it; a crash loses only events published and not yet
 * committed (at most one transaction's worth, never delivered to anyone),
 * and their ids are given again after the restart.  Publishing waits only
 * when the writer is TB_EVENTS_RING events behind (the store stalled).  A subscriber that falls more than TB_EVENTS_MAX_LAG
 * events behind is dropped (its next read says so) and may resume.
 *
 * Every subscription runs under a token (its owner) and, when opened with a
 * browser session, under that session: it ends when the token is revoked
 * (tb_events_drop_owner), when the session is logged out
 * (tb_events_drop_session), and at its end time (the session's expiry, at
 * most TB_EVENTS_MAX_LIFETIME_S after it began).  A token has at most
 * TB_EVENTS_PER_TOKEN subscriptions open at once.
 *
 * Thread-safe (the bus runs a writer thread of its own).  Subscriptions are used by one reader thread at a time.
 */
#ifndef TB_EVENTS_H
#define TB_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_store;
struct tb_events;
struct tb_sub;

#define TB_EVENTS_RING 4096
#define TB_EVENTS_MAX_LAG 20000
#define TB_EVENTS_KEEP 100000         /* events kept in the store, at most ... */
#define TB_EVENTS_KEEP_DAYS 30        /* ... and for at most this long */
#define TB_EVENTS_PER_TOKEN 16        /* open subscriptions per owner (a token), by default */
#define TB_EVENTS_MAX_LIFETIME_S 3600 /* a subscription ends after an hour (resume goes on) */

int tb_events_new(struct tb_store *st, struct tb_events **out, struct tb_error *err);
/* The open subscriptions one owner may have (TB_EVENTS_PER_TOKEN unless
 * set; testbedd --streams-per-token).  Before subscriptions are made. */
void tb_events_set_per_token(struct tb_events *ev, unsigned int n);
/* Stop: every read from now on says TB_SUB_CLOSED, and every waiting
 * subscriber is woken to hear it.  Publishing fails from now on; what was
 * published before is stored, then the writer ends (joined here). */
void tb_events_close(struct tb_events *ev);
/* Free (after close, once the readers are gone).  NULL is allowed. */
void tb_events_free(struct tb_events *ev);

/* Publish: type ("host.state"), host (or NULL), matrix id (0: none), data
 * (the reference is stolen).  Returns the new id, or a negative tb_err. */
int64_t tb_events_publish(struct tb_events *ev, const char *type, const char *host, int64_t matrix, json_t *data);

/* The last id published (0 when none). */
int64_t tb_events_last_id(struct tb_events *ev);

/* Wait until every event published before the call is stored and visible
 * to subscribers (tests; tb_events_close does it too). */
void tb_events_flush(struct tb_events *ev);

struct tb_events_filter {
	const char *host;  /* NULL: any */
	const char *types; /* NULL: any; "host.state,audit"; "host." is a prefix */
	int64_t matrix;    /* 0: any */
	int hide_audit;    /* the subscriber may not see audit events (not an admin) */
	int64_t owner;     /* the token it runs under, for tb_events_drop_owner
				      and the TB_EVENTS_PER_TOKEN cap (0: none, no cap) */
	int64_t session;   /* the session it runs under, for tb_events_drop_session
				      (0: none) */
	int64_t ends_at;   /* unix s when it ends (the session's expiry; 0: none);
				      it ends TB_EVENTS_MAX_LIFETIME_S after it began anyway */
};

typedef void (*tb_events_wake_fn)(void *cls);

/* A subscription delivering events with id > since that match f (strings
 * are copied).  wake(cls) is called, from the publisher's thread, when an
 * event arrives while the subscriber is waiting (see tb_sub_next).
 * TB_ERR_RATE_LIMITED (with a message for the client) when f->owner already
 * has TB_EVENTS_PER_TOKEN subscriptions that have not ended. */
int tb_events_subscribe(struct tb_events *ev, int64_t since, const struct tb_events_filter *f, tb_events_wake_fn wake,
			void *cls, struct tb_sub **out, struct tb_error *err);
void tb_events_unsubscribe(struct tb_sub *sub);
/* The same cap check alone, for a handler that refuses before the stream
 * starts (tb_events_subscribe checks again: this one may race). */
int tb_events_check_cap(struct tb_events *ev, int64_t owner, struct tb_error *err);

enum tb_sub_status { TB_SUB_DATA, TB_SUB_WAIT, TB_SUB_CLOSED };

/* Format the next events for the wire (SSE: "id: N\nevent: T\ndata: J\n\n"
 * each) into buf, at most len bytes, never splitting an event unless one
 * event alone exceeds len (then it continues on the next call).
 * TB_SUB_DATA: *n bytes written.  TB_SUB_WAIT: nothing now; the caller
 * must wait for wake (the subscription is marked waiting atomically with
 * this answer).  TB_SUB_CLOSED: the bus is closing, the subscriber was
 * dropped (lagging, its token revoked, its session ended) or its end time
 * passed; end the stream.  A waiting subscriber hears of its end time only
 * when woken: the edge's heartbeat (http_sse.c) wakes every stream it serves. */
enum tb_sub_status tb_sub_next(struct tb_sub *sub, char *buf, size_t len, size_t *n);

/* End every subscription of owner (a revoked token): its next read says
 * TB_SUB_CLOSED. */
void tb_events_drop_owner(struct tb_events *ev, int64_t owner);
/* The same for the subscriptions of a session (logged out).  0 does nothing. */
void tb_events_drop_session(struct tb_events *ev, int64_t session);

/* Counters for /metrics. */
struct tb_events_stats {
	uint64_t published;
	uint64_t pruned; /* events the retention deleted from the store */
	uint64_t dropped_subscribers;
	size_t subscribers;
	uint64_t batches; /* the writer's transactions (published / batches: events a transaction) */
};
void tb_events_stats(struct tb_events *ev, struct tb_events_stats *out);

#endif /* TB_EVENTS_H */
