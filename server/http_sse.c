/* http_sse.c - the one way the edge serves a stream (server-sent events):
 * a struct tb_feed (feed.h) read into a response, the connection suspended
 * while the feed has nothing and resumed on its wake, a heartbeat comment
 * when idle, a client that went away found.  Two kinds of feed: a module's
 * own (a console's viewers: edge_start_feed) and the bus's (a subscription,
 * wrapped here: edge_start_stream).  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "feed.h"
#include "services.h"
#include "metrics.h"
#include "ticker.h"
#include "timeutil.h"

/* Milliseconds between heartbeat comments on an idle event stream. */
#define SSE_HEARTBEAT_MS 15000
/* Bytes handed to a stream per write: small, since it is per client (1,000
 * clients x 16 KiB was a quarter of the daemon's memory). */
#define SSE_BLOCK 4096

/* One stream's connection: its feed and its suspended state, in h->streams
 * (under h->streams_mu) from its start to its end so that the heartbeat
 * wakes it.  mu orders suspend (in the reader) before resume (in a waker). */
struct sse_client {
	struct tb_http *h;
	struct tb_feed *feed;
	struct MHD_Connection *conn;
	struct tb_sub *leash; /* or NULL: ends a feed with its token and session (below) */
	struct sse_client *prev, *next;
	int listed; /* in h->streams */
	pthread_mutex_t mu;
	int suspended;
	int wake_pending;
	int64_t last_write_ms;
};

/* The feed's wake (any thread, maybe under the producer's lock), and the
 * heartbeat's: resume a suspended connection, or have its reader look
 * again.  Never blocks on anything but c->mu. */
static void sse_wake(void *cls)
{
	struct sse_client *c = cls;

	pthread_mutex_lock(&c->mu);
	if (c->suspended) {
		c->suspended = 0;
		MHD_resume_connection(c->conn);
	} else {
		c->wake_pending = 1;
	}
	pthread_mutex_unlock(&c->mu);
}

/* 1 when the client closed its side: a stream's client sends nothing after
 * its request, so end of file on a peek means it is gone.  Found at the next
 * wake (the heartbeat's, every 5 s) instead of when a write fails (the second
 * ping after the close, up to 30 s): until then it would count against its
 * token's stream cap.  Over TLS a close_notify is data, so there it is the
 * ping that finds it. */
static int client_gone(struct sse_client *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;
	char b;
	ssize_t r;

	if (ci == NULL)
		return 0;
	/* poll first: MSG_DONTWAIT is not POSIX (FreeBSD hides it) */
	p = (struct pollfd){.fd = ci->connect_fd, .events = POLLIN};
	if (poll(&p, 1, 0) != 1)
		return 0;
	if (p.revents & (POLLHUP | POLLERR))
		return 1;
	r = recv(ci->connect_fd, &b, 1, MSG_PEEK);
	return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* 1 when the token or the session c's feed was opened under has ended (the
 * token revoked; logged out, out everywhere, expired): the bus ends its subscriptions
 * then, and the leash is one that shows no event (its type is none), only
 * that end.  Never blocks but on the bus's lock. */
static int leash_ended(struct sse_client *c)
{
	char skip[256]; /* the leash's own records: "stream", "reset" */
	size_t n;
	enum tb_sub_status st;

	if (c->leash == NULL)
		return 0;
	while ((st = tb_sub_next(c->leash, skip, sizeof(skip), &n)) == TB_SUB_DATA) {
	}
	return st == TB_SUB_CLOSED;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char ping[] = ": ping\n\n";
	struct sse_client *c = cls;

	(void)pos;
	for (;;) {
		long n = leash_ended(c) ? -1 : c->feed->next(c->feed, buf, max);
		int64_t now = tb_monotonic_ms();

		if (n > 0) {
			c->last_write_ms = now;
			return (ssize_t)n;
		}
		if (n < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (client_gone(c))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (now - c->last_write_ms >= SSE_HEARTBEAT_MS && max >= sizeof(ping) - 1) {
			/* also how a dead client is found: the write fails */
			c->last_write_ms = now;
			memcpy(buf, ping, sizeof(ping) - 1);
			return (ssize_t)(sizeof(ping) - 1);
		}
		pthread_mutex_lock(&c->mu);
		if (c->wake_pending) {
			c->wake_pending = 0;
			pthread_mutex_unlock(&c->mu);
			continue;
		}
		MHD_suspend_connection(c->conn);
		c->suspended = 1;
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
}

/* Out of the heartbeat's list first (nothing wakes c after), then the feed
 * closed (its producer stops waking c), then c freed. */
static void sse_free(void *cls)
{
	struct sse_client *c = cls;
	struct tb_http *h = c->h;

	pthread_mutex_lock(&h->streams_mu);
	if (c->listed) {
		if (c->prev != NULL)
			c->prev->next = c->next;
		else
			h->streams = c->next;
		if (c->next != NULL)
			c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&h->streams_mu);
	if (c->leash != NULL)
		tb_events_unsubscribe(c->leash);
	if (c->feed != NULL)
		c->feed->close(c->feed);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* A stream's connection state for cs, not yet serving (sse_serve) and in no
 * list: NULL when out of memory. */
static struct sse_client *sse_new(struct tb_http *h, struct conn_state *cs)
{
	struct sse_client *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->h = h;
	c->conn = cs->conn;
	c->last_write_ms = tb_monotonic_ms();
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

/* Serve c's feed (set, its wake attached to c) as the reply: c and the feed
 * are the response's from here on, also when this fails. */
static enum MHD_Result sse_serve(struct sse_client *c)
{
	struct tb_http *h = c->h;
	struct MHD_Response *r;
	enum MHD_Result ret;

	pthread_mutex_lock(&h->streams_mu);
	c->next = h->streams;
	if (h->streams != NULL)
		h->streams->prev = c;
	h->streams = c;
	c->listed = 1;
	pthread_mutex_unlock(&h->streams_mu);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, c, sse_free);
	if (r == NULL) {
		sse_free(c);
		return MHD_NO;
	}
	edge_add_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	/* Idle streams are kept alive by heartbeats, not by the daemon's timeout. */
	MHD_set_connection_option(c->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
	ret = MHD_queue_response(c->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result edge_start_feed(struct tb_http *h, struct conn_state *cs, struct tb_feed *feed,
				const struct tb_principal *who)
{
	struct sse_client *c = sse_new(h, cs);
	struct tb_error e = {0};

	if (c == NULL) {
		feed->close(feed);
		return MHD_NO;
	}
	if (who != NULL) {
		/* Tied to what it was opened under, as the bus's streams are:
		 * its token (revoked: tb_events_drop_owner) and, a browser's,
		 * its session (logged out, expired; an EventSource resumes when
		 * the leash's hour is up).  A bearer's (tbctl console) has no
		 * session and no end time, only its token.  The leash counts
		 * against the token's stream cap like any stream of its. */
		const struct tb_events_filter leash = {.types = "-",
						       .hide_audit = 1,
						       .owner = who->token_id,
						       .session = who->session_id,
						       .ends_at = who->expires_at};

		if (tb_events_subscribe(h->sv->events, -1, &leash, sse_wake, c, &c->leash, &e) != 0) {
			feed->close(feed);
			sse_free(c);
			return edge_send_error(cs->conn, &e, NULL, 0);
		}
	}
	c->feed = feed;
	feed->attach(feed, sse_wake, c);
	return sse_serve(c);
}

/* ---- the bus's streams: a subscription as a feed ---- */

struct bus_feed {
	struct tb_feed f; /* first */
	struct tb_sub *sub;
	struct tb_metrics *metrics;
};

/* Never called: the subscription was made with sse_wake. */
static void bus_attach(struct tb_feed *tf, void (*wake)(void *cls), void *cls)
{
	(void)tf;
	(void)wake;
	(void)cls;
}

static long bus_next(struct tb_feed *tf, char *buf, size_t max)
{
	struct bus_feed *b = (struct bus_feed *)tf;
	size_t n = 0;

	switch (tb_sub_next(b->sub, buf, max, &n)) {
	case TB_SUB_DATA: return (long)n;
	case TB_SUB_CLOSED: return -1;
	default: return 0;
	}
}

static void bus_close(struct tb_feed *tf)
{
	struct bus_feed *b = (struct bus_feed *)tf;

	tb_events_unsubscribe(b->sub);
	tb_metrics_sse(b->metrics, -1);
	free(b);
}

enum MHD_Result edge_start_stream(struct tb_http *h, struct conn_state *cs, struct tb_reply *rp)
{
	struct sse_client *c = sse_new(h, cs);
	struct bus_feed *b = calloc(1, sizeof(*b));
	struct tb_error e = {0};

	if (c == NULL || b == NULL) {
		free(b);
		if (c != NULL)
			sse_free(c);
		return MHD_NO;
	}
	if (tb_events_subscribe(h->sv->events, rp->stream_since, &rp->stream_filter, sse_wake, c, &b->sub, &e) != 0) {
		free(b);
		sse_free(c);
		return edge_send_error(cs->conn, &e, NULL, 0);
	}
	b->f = (struct tb_feed){bus_attach, bus_next, bus_close};
	b->metrics = h->sv->metrics;
	tb_metrics_sse(b->metrics, +1);
	c->feed = &b->f;
	return sse_serve(c);
}

/* ---- the heartbeat ---- */

/* Every few seconds (on a ticker) wake every stream, so that idle ones send
 * their heartbeat and dead clients are found on time, and a feed that ends
 * by time (a bus subscription's session) hears of it. */
static void wake_streams(void *cls)
{
	struct tb_http *h = cls;

	pthread_mutex_lock(&h->streams_mu);
	for (struct sse_client *c = h->streams; c != NULL; c = c->next)
		sse_wake(c);
	pthread_mutex_unlock(&h->streams_mu);
}

int edge_sse_start(struct tb_http *h)
{
	return tb_ticker_start(&h->heartbeat, SSE_HEARTBEAT_MS / 3, wake_streams, h);
}

void edge_sse_stop(struct tb_http *h)
{
	tb_ticker_stop(&h->heartbeat);
}
