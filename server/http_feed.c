/* http_feed.c - serving a struct tb_feed (feed.h) as a response of its own:
 * suspend while it has nothing, resume on its wake, a heartbeat comment when
 * idle.  The same shape as the bus's streams (http_sse.c), for producers
 * that are not the bus (a console's viewers).  See http_edge.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "feed.h"
#include "timeutil.h"

#define FEED_HEARTBEAT_MS 15000
#define FEED_BLOCK 4096

struct feed_client {
	struct tb_feed *feed;
	struct MHD_Connection *conn;
	pthread_mutex_t mu;
	int suspended;
	int wake_pending;
	int64_t last_write_ms;
};

/* The producer's wake (any thread): resume a suspended connection. */
static void feed_wake(void *cls)
{
	struct feed_client *c = cls;

	pthread_mutex_lock(&c->mu);
	if (c->suspended) {
		c->suspended = 0;
		MHD_resume_connection(c->conn);
	} else {
		c->wake_pending = 1;
	}
	pthread_mutex_unlock(&c->mu);
}

/* 1 when the client closed its side (it sends nothing after its request). */
static int feed_client_gone(struct feed_client *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;
	char b;
	ssize_t r;

	if (ci == NULL)
		return 0;
	p = (struct pollfd){.fd = ci->connect_fd, .events = POLLIN};
	if (poll(&p, 1, 0) != 1)
		return 0;
	if (p.revents & (POLLHUP | POLLERR))
		return 1;
	r = recv(ci->connect_fd, &b, 1, MSG_PEEK);
	return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static ssize_t feed_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char ping[] = ": ping\n\n";
	struct feed_client *c = cls;

	(void)pos;
	for (;;) {
		long n = c->feed->next(c->feed, buf, max);
		int64_t now = tb_monotonic_ms();

		if (n > 0) {
			c->last_write_ms = now;
			return (ssize_t)n;
		}
		if (n < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (feed_client_gone(c))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (now - c->last_write_ms >= FEED_HEARTBEAT_MS && max >= sizeof(ping) - 1) {
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

static void feed_free(void *cls)
{
	struct feed_client *c = cls;

	c->feed->close(c->feed);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

enum MHD_Result edge_start_feed(struct conn_state *cs, struct tb_feed *feed)
{
	struct feed_client *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (c == NULL) {
		feed->close(feed);
		return MHD_NO;
	}
	c->feed = feed;
	c->conn = cs->conn;
	c->last_write_ms = tb_monotonic_ms();
	pthread_mutex_init(&c->mu, NULL);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, FEED_BLOCK, feed_read, c, feed_free);
	if (r == NULL) {
		feed_free(c);
		return MHD_NO;
	}
	feed->attach(feed, feed_wake, c);
	edge_add_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	MHD_set_connection_option(cs->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
	ret = MHD_queue_response(cs->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}
