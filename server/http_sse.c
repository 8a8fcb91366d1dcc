/* http_sse.c - event streams (server-sent events) with suspend/resume and
 * heartbeats.  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "services.h"
#include "metrics.h"
#include "ticker.h"
#include "timeutil.h"

/* Milliseconds between heartbeat comments on an idle event stream. */
#define SSE_HEARTBEAT_MS 15000
/* Bytes handed to a stream per write: small, since it is per client (1,000
 * clients x 16 KiB was a quarter of the daemon's memory). */
#define SSE_BLOCK 4096

/* One event-stream client: its subscription and its connection's state.
 * mu orders suspend (in the reader) before resume (in the waker). */
struct sse_client {
	struct tb_http *h;
	struct tb_sub *sub;
	struct MHD_Connection *conn;
	pthread_mutex_t mu;
	int suspended;
	int wake_pending;
	int64_t last_write_ms;
};

/* Called by the bus (publisher's thread, bus lock held) when an event for
 * this client arrives while it waits.  Never blocks for long. */
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

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char ping[] = ": ping\n\n";
	struct sse_client *c = cls;

	(void)pos;
	for (;;) {
		size_t n = 0;
		enum tb_sub_status st = tb_sub_next(c->sub, buf, max, &n);
		int64_t now = tb_monotonic_ms();

		if (st == TB_SUB_DATA) {
			c->last_write_ms = now;
			return (ssize_t)n;
		}
		if (st == TB_SUB_CLOSED)
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

static void sse_free(void *cls)
{
	struct sse_client *c = cls;

	tb_events_unsubscribe(c->sub);
	tb_metrics_sse(c->h->sv->metrics, -1);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

enum MHD_Result edge_start_stream(struct tb_http *h, struct conn_state *cs, struct tb_reply *rp)
{
	struct sse_client *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct tb_error e = {0};

	if (c == NULL)
		return MHD_NO;
	c->h = h;
	c->conn = cs->conn;
	c->last_write_ms = tb_monotonic_ms();
	pthread_mutex_init(&c->mu, NULL);
	if (tb_events_subscribe(h->sv->events, rp->stream_since, &rp->stream_filter, sse_wake, c, &c->sub, &e) != 0) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return edge_send_error(cs->conn, &e, NULL, 0);
	}
	tb_metrics_sse(h->sv->metrics, +1);
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
	MHD_set_connection_option(cs->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
	ret = MHD_queue_response(cs->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Every few seconds (on a ticker) wake the waiting streams, so that idle
 * ones send their heartbeat (and dead clients are found) on time. */
static void wake_streams(void *cls)
{
	struct tb_http *h = cls;

	tb_events_wake_all(h->sv->events);
}

int edge_sse_start(struct tb_http *h)
{
	return tb_ticker_start(&h->heartbeat, SSE_HEARTBEAT_MS / 3, wake_streams, h);
}

void edge_sse_stop(struct tb_http *h)
{
	tb_ticker_stop(&h->heartbeat);
}
