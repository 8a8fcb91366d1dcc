/*
 * sse_clients.c - the SSE fan-out benchmark client (a bench tool, not part of
 * the daemon: Linux, epoll, one thread).
 *
 * Opens N connections to GET /api/v1/events (bearer token, Accept:
 * text/event-stream), waits until every one has its 200 and headers, then
 * publishes K events, one at a time, by POST /api/v1/tokens (each mutating
 * request publishes one "audit" event), and records for every event the delay
 * from just before its POST to each client's receipt of that event's "id:"
 * line.  Reports p50/p99 of "publish -> last client received" (one value per
 * event) and of the per-client delays (N x K values), how long the POST itself
 * took, and the daemon's resident memory (VmRSS of --pid) idle, with N clients
 * connected and after the events.
 *
 * Events are matched to publishes by id: the first "audit" event with an id
 * above the previous publish's, seen after a POST was started, is that POST's.
 * The next POST starts --interval-ms after the previous one, or later: not
 * before every client got the previous event (or --event-timeout-ms passed),
 * so that each delay belongs to one event.
 *
 * --publish-port sends the POSTs to another port than the streams' (the
 * daemon's, when the streams go through a proxy).
 *
 *   sse_clients --port P [--publish-port P] --token-file F [--clients N] [--events K]
 *               [--interval-ms MS] [--pid PID] [--path PATH] [--name LABEL]
 *
 * The last line is "RESULT key=value ..." for deploy/bench.  Exit status: 0
 * when it ran (whatever the figures), 1 on usage, 2 when the run could not be
 * made (connections refused, a status other than 200, no event at all).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum cstate { C_CONNECTING, C_HEADERS, C_STREAM, C_CLOSED };
enum chstate { CH_SIZE, CH_SIZE_EXT, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_DONE };

struct client {
	int fd;
	enum cstate state;
	char hdr[4096];
	size_t hdrlen;
	bool chunked;
	enum chstate ch;
	size_t chunk_left;
	char line[4096];
	size_t linelen;
	bool line_overflow;
	int64_t ev_id; /* id of the event being read, -1 none */
	double ev_t;   /* when its id: line arrived */
	char ev_type[64];
	int64_t last_id;
	long received;
};

struct post {
	int fd; /* -1: none in flight */
	char req[1024];
	size_t reqlen, sent;
	char resp[4096];
	size_t resplen;
	double t0;
};

static const char *host = "127.0.0.1";
static int port;
static int publish_port; /* 0: port (the streams go through a proxy, the POSTs straight) */
static char token[512];
static const char *path = "/api/v1/events?type=audit";
static int nclients = 1000;
static int nevents = 50;
static int interval_ms = 100;
static int event_timeout_ms = 2000;
static int deadline_s = 60; /* publishing stops after this */
static int connect_timeout_s = 30;
static long daemon_pid;
static const char *server_name = "testbedd";

static struct client *clients;
static int epfd;
static struct post post = {.fd = -1};

/* Per event: id, publish time, POST answer time and status; per client and event: receipt. */
static int64_t *ev_ids;
static double *ev_t0, *ev_tresp;
static int *ev_status;
static double *recv_t;     /* [client * nevents + k], 0: not received */
static int *ev_count;      /* clients that got event k */
static int cur_event = -1; /* the event being published, -1 none */
static int nevents_done;
static long unexpected, dropped, bad_status;
static int64_t highest_assigned;

#define POST_TAG (-1)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sse_clients: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(code);
}

struct memory {
	long rss_kib, hwm_kib, threads;
};

static struct memory read_memory(void)
{
	struct memory m = {-1, -1, -1};
	char fn[64], line[256];
	FILE *f;

	if (daemon_pid <= 0)
		return m;
	snprintf(fn, sizeof(fn), "/proc/%ld/status", daemon_pid);
	f = fopen(fn, "r");
	if (f == NULL)
		return m;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			m.rss_kib = strtol(line + 6, NULL, 10);
		else if (strncmp(line, "VmHWM:", 6) == 0)
			m.hwm_kib = strtol(line + 6, NULL, 10);
		else if (strncmp(line, "Threads:", 8) == 0)
			m.threads = strtol(line + 8, NULL, 10);
	}
	fclose(f);
	return m;
}

static int open_socket(int to)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)to)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	inet_pton(AF_INET, host, &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void ep_add(int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event e = {.events = events, .data.u64 = tag};

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) != 0)
		die(2, "epoll_ctl: %s", strerror(errno));
}

static void ep_mod(int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event e = {.events = events, .data.u64 = tag};

	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e);
}

static void client_close(struct client *c, const char *why)
{
	if (c->state == C_CLOSED)
		return;
	if (c->state == C_STREAM) {
		dropped++;
		if (dropped <= 5)
			fprintf(stderr, "sse_clients: client %d lost its stream: %s\n", (int)(c - clients), why);
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->state = C_CLOSED;
}

/* An event is complete (blank line). */
static void dispatch(struct client *c)
{
	int ci = (int)(c - clients);

	if (c->ev_id < 0)
		goto reset;
	c->last_id = c->ev_id;
	if (strcmp(c->ev_type, "audit") != 0)
		goto reset;
	c->received++;
	for (int k = cur_event; k >= 0; k--) {
		if (ev_ids[k] == c->ev_id) {
			if (recv_t[(size_t)ci * nevents + k] == 0) {
				recv_t[(size_t)ci * nevents + k] = c->ev_t;
				ev_count[k]++;
			}
			goto reset;
		}
		if (ev_ids[k] != 0 && ev_ids[k] < c->ev_id)
			break;
	}
	/* Not a known event: the current publish's, if it has none yet. */
	if (cur_event >= 0 && ev_ids[cur_event] == 0 && c->ev_id > highest_assigned && c->ev_t >= ev_t0[cur_event]) {
		ev_ids[cur_event] = c->ev_id;
		highest_assigned = c->ev_id;
		recv_t[(size_t)ci * nevents + cur_event] = c->ev_t;
		ev_count[cur_event]++;
	} else {
		unexpected++;
	}
reset:
	c->ev_id = -1;
	c->ev_type[0] = '\0';
}

static void sse_line(struct client *c, const char *line, size_t len, double t)
{
	if (len == 0) {
		dispatch(c);
		return;
	}
	if (line[0] == ':')
		return; /* comment: heartbeat */
	if (len > 3 && strncmp(line, "id:", 3) == 0) {
		const char *v = line + 3;

		while (*v == ' ')
			v++;
		c->ev_id = strtoll(v, NULL, 10);
		c->ev_t = t;
	} else if (len > 6 && strncmp(line, "event:", 6) == 0) {
		const char *v = line + 6;

		while (*v == ' ')
			v++;
		snprintf(c->ev_type, sizeof(c->ev_type), "%.*s", (int)(len - (size_t)(v - line)), v);
	}
}

static void sse_bytes(struct client *c, const char *p, size_t n, double t)
{
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];

		if (ch == '\n') {
			size_t len = c->linelen;

			if (len > 0 && c->line[len - 1] == '\r')
				len--;
			c->line[len] = '\0';
			if (!c->line_overflow)
				sse_line(c, c->line, len, t);
			else if (len == 0)
				sse_line(c, "", 0, t);
			c->linelen = 0;
			c->line_overflow = false;
		} else if (c->linelen + 1 < sizeof(c->line)) {
			c->line[c->linelen++] = ch;
		} else {
			c->line_overflow = true; /* a long data: line; only id/event matter */
			c->linelen = 0;
		}
	}
}

/* Body bytes: undo chunked transfer coding when the response uses it. */
static void body_bytes(struct client *c, const char *p, size_t n, double t)
{
	if (!c->chunked) {
		sse_bytes(c, p, n, t);
		return;
	}
	while (n > 0) {
		switch (c->ch) {
		case CH_SIZE:
			if (isxdigit((unsigned char)*p)) {
				int d = isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);

				c->chunk_left = c->chunk_left * 16 + (size_t)d;
			} else if (*p == '\n') {
				c->ch = c->chunk_left == 0 ? CH_DONE : CH_DATA;
			} else if (*p != '\r') {
				c->ch = CH_SIZE_EXT;
			}
			p++, n--;
			break;
		case CH_SIZE_EXT:
			if (*p == '\n')
				c->ch = c->chunk_left == 0 ? CH_DONE : CH_DATA;
			p++, n--;
			break;
		case CH_DATA: {
			size_t m = n < c->chunk_left ? n : c->chunk_left;

			sse_bytes(c, p, m, t);
			p += m, n -= m;
			c->chunk_left -= m;
			if (c->chunk_left == 0)
				c->ch = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
		case CH_DATA_LF:
			if (*p == '\n')
				c->ch = CH_SIZE;
			p++, n--;
			break;
		case CH_DONE: client_close(c, "the server ended the stream (last chunk)"); return;
		}
	}
}

static bool header_has(const char *hdr, const char *name, const char *value)
{
	size_t nl = strlen(name);

	for (const char *p = strstr(hdr, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
		const char *h = p + 2;

		if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
			const char *v = h + nl + 1;
			const char *e = strstr(v, "\r\n");
			size_t vl = strlen(value);

			if (e == NULL)
				e = v + strlen(v);

			for (; v < e; v++)
				if (strncasecmp(v, value, vl) == 0)
					return true;
		}
	}
	return false;
}

static char first_bad[600];

static void client_read(struct client *c)
{
	static char buf[65536];

	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));
		double t = now();

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			client_close(c, strerror(errno));
			return;
		}
		if (n == 0) {
			client_close(c, "the server closed the connection");
			return;
		}
		if (c->state == C_HEADERS) {
			size_t take = (size_t)n;
			char *end;

			if (take > sizeof(c->hdr) - 1 - c->hdrlen)
				take = sizeof(c->hdr) - 1 - c->hdrlen;
			memcpy(c->hdr + c->hdrlen, buf, take);
			c->hdrlen += take;
			c->hdr[c->hdrlen] = '\0';
			end = strstr(c->hdr, "\r\n\r\n");
			if (end == NULL) {
				if (c->hdrlen >= sizeof(c->hdr) - 1)
					client_close(c, "headers too long");
				continue;
			}
			size_t hl = (size_t)(end + 4 - c->hdr);
			int status = 0;

			*end = '\0';
			sscanf(c->hdr, "HTTP/1.%*d %d", &status);
			if (status != 200 || !header_has(c->hdr, "content-type", "text/event-stream")) {
				bad_status++;
				if (first_bad[0] == '\0')
					snprintf(first_bad, sizeof(first_bad), "%.590s", c->hdr);
				client_close(c, "bad status");
				return;
			}
			c->chunked = header_has(c->hdr, "transfer-encoding", "chunked");
			c->state = C_STREAM;
			/* the rest of this read (and the header bytes past hdrlen) is body */
			size_t already = c->hdrlen - take; /* header bytes from earlier reads */
			size_t body_off = hl - already;    /* offset of the body in buf */

			if (body_off < (size_t)n)
				body_bytes(c, buf + body_off, (size_t)n - body_off, t);
			continue;
		}
		body_bytes(c, buf, (size_t)n, t);
		if (c->state == C_CLOSED || (size_t)n < sizeof(buf))
			return; /* level-triggered: epoll says so if there is more */
	}
}

static void client_start(struct client *c, int i)
{
	c->fd = open_socket(port);
	if (c->fd < 0)
		die(2, "socket/connect: %s", strerror(errno));
	c->state = C_CONNECTING;
	c->ev_id = -1;
	ep_add(c->fd, EPOLLOUT, (uint64_t)i);
}

static void client_writable(struct client *c, int i)
{
	char req[1024];
	int err = 0;
	socklen_t len = sizeof(err);
	int n;

	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err != 0) {
		fprintf(stderr, "sse_clients: connect: %s\n", strerror(err));
		bad_status++;
		client_close(c, "connect");
		return;
	}
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
		     "Accept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
		     path, host, port, token);
	if (write(c->fd, req, (size_t)n) != n) {
		bad_status++;
		client_close(c, "write");
		return;
	}
	c->state = C_HEADERS;
	ep_mod(c->fd, EPOLLIN, (uint64_t)i);
}

static void post_start(int k)
{
	char body[128];
	int bl = snprintf(body, sizeof(body), "{\"name\":\"bench-%d-%d\",\"role\":\"viewer\"}", (int)getpid(), k);

	post.reqlen = (size_t)snprintf(
		post.req, sizeof(post.req),
		"POST /api/v1/tokens HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
		"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		host, publish_port, token, bl, body);
	post.sent = 0;
	post.resplen = 0;
	post.t0 = ev_t0[k] = now();
	post.fd = open_socket(publish_port);
	if (post.fd < 0)
		die(2, "POST socket: %s", strerror(errno));
	ep_add(post.fd, EPOLLOUT, (uint64_t)(int64_t)POST_TAG);
}

static void post_event(uint32_t events)
{
	if (post.fd < 0)
		return;
	if (post.sent < post.reqlen) {
		ssize_t n = write(post.fd, post.req + post.sent, post.reqlen - post.sent);

		if (n < 0 && errno != EAGAIN) {
			ev_status[cur_event] = -1;
			goto done;
		}
		if (n > 0)
			post.sent += (size_t)n;
		if (post.sent == post.reqlen)
			ep_mod(post.fd, EPOLLIN, (uint64_t)(int64_t)POST_TAG);
		return;
	}
	for (;;) {
		ssize_t n = read(post.fd, post.resp + post.resplen, sizeof(post.resp) - 1 - post.resplen);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n > 0) {
			post.resplen += (size_t)n;
			if (post.resplen < sizeof(post.resp) - 1)
				continue;
		}
		break; /* EOF, error or full */
	}
	post.resp[post.resplen] = '\0';
	int status = 0;

	sscanf(post.resp, "HTTP/1.%*d %d", &status);
	ev_status[cur_event] = status;
	if (status != 201 && status != 200) {
		static bool said;

		if (!said) {
			said = true;
			fprintf(stderr, "sse_clients: POST /api/v1/tokens answered:\n%s\n", post.resp);
		}
	}
done:
	(void)events;
	ev_tresp[cur_event] = now();
	epoll_ctl(epfd, EPOLL_CTL_DEL, post.fd, NULL);
	close(post.fd);
	post.fd = -1;
}

static void poll_once(int timeout_ms)
{
	struct epoll_event evs[256];
	int n = epoll_wait(epfd, evs, 256, timeout_ms);

	for (int i = 0; i < n; i++) {
		int64_t tag = (int64_t)evs[i].data.u64;

		if (tag == POST_TAG) {
			post_event(evs[i].events);
			continue;
		}
		struct client *c = &clients[tag];

		if (c->state == C_CONNECTING)
			client_writable(c, (int)tag);
		else if (c->state != C_CLOSED)
			client_read(c);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return -1;
	i = (size_t)(q * (double)n + 0.999999);
	if (i < 1)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sse_clients --port P [--publish-port P] --token-file F [--host A] [--clients N] [--events K]\n"
		"                   [--interval-ms MS] [--event-timeout-ms MS] [--pid PID] [--path PATH]\n"
		"                   [--name LABEL] [--deadline-s S]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	const char *token_file = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			usage();
		if (strcmp(a, "--port") == 0)
			port = atoi(v);
		else if (strcmp(a, "--publish-port") == 0)
			publish_port = atoi(v);
		else if (strcmp(a, "--host") == 0)
			host = v;
		else if (strcmp(a, "--token-file") == 0)
			token_file = v;
		else if (strcmp(a, "--clients") == 0)
			nclients = atoi(v);
		else if (strcmp(a, "--events") == 0)
			nevents = atoi(v);
		else if (strcmp(a, "--interval-ms") == 0)
			interval_ms = atoi(v);
		else if (strcmp(a, "--event-timeout-ms") == 0)
			event_timeout_ms = atoi(v);
		else if (strcmp(a, "--deadline-s") == 0)
			deadline_s = atoi(v);
		else if (strcmp(a, "--pid") == 0)
			daemon_pid = atol(v);
		else if (strcmp(a, "--path") == 0)
			path = v;
		else if (strcmp(a, "--name") == 0)
			server_name = v;
		else
			usage();
		i++;
	}
	if (publish_port <= 0)
		publish_port = port;
	if (port <= 0 || token_file == NULL || nclients < 1 || nevents < 1 || interval_ms < 0)
		usage();
	{
		FILE *f = fopen(token_file, "r");

		if (f == NULL || fgets(token, sizeof(token), f) == NULL)
			die(2, "cannot read the token from %s", token_file);
		fclose(f);
		token[strcspn(token, "\r\n")] = '\0';
	}
	signal(SIGPIPE, SIG_IGN);
	{
		struct rlimit rl;
		rlim_t want = (rlim_t)nclients + 64;

		getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < want) {
			rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
			if (rl.rlim_cur < want && geteuid() == 0)
				rl.rlim_max = rl.rlim_cur = want;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur < want)
			die(2, "RLIMIT_NOFILE is %lu, %d clients need %lu", (unsigned long)rl.rlim_cur, nclients,
			    (unsigned long)want);
	}
	clients = calloc((size_t)nclients, sizeof(*clients));
	ev_ids = calloc((size_t)nevents, sizeof(*ev_ids));
	ev_t0 = calloc((size_t)nevents, sizeof(*ev_t0));
	ev_tresp = calloc((size_t)nevents, sizeof(*ev_tresp));
	ev_status = calloc((size_t)nevents, sizeof(*ev_status));
	ev_count = calloc((size_t)nevents, sizeof(*ev_count));
	recv_t = calloc((size_t)nclients * (size_t)nevents, sizeof(*recv_t));
	if (!clients || !ev_ids || !ev_t0 || !ev_tresp || !ev_status || !ev_count || !recv_t)
		die(2, "out of memory");
	epfd = epoll_create1(EPOLL_CLOEXEC);

	struct memory m_idle = read_memory();

	/* Connect, at most 100 handshakes in flight. */
	double t_start = now(), deadline = t_start + connect_timeout_s;
	int started = 0, streaming = 0, closed = 0;

	for (;;) {
		int pending = 0;

		streaming = closed = 0;
		for (int i = 0; i < started; i++) {
			if (clients[i].state == C_STREAM)
				streaming++;
			else if (clients[i].state == C_CLOSED)
				closed++;
			else
				pending++;
		}
		while (started < nclients && pending < 100) {
			client_start(&clients[started], started);
			started++, pending++;
		}
		if (streaming + closed == nclients || now() > deadline)
			break;
		poll_once(10);
	}
	double t_connected = now();

	if (bad_status > 0)
		fprintf(stderr,
			"sse_clients: %ld of %d connections refused or not an event stream; the first answer:\n%s\n",
			bad_status, nclients, first_bad);
	printf("sse: %d of %d clients streaming after %.2f s%s\n", streaming, nclients, t_connected - t_start,
	       streaming < nclients ? " (NOT ALL)" : "");
	if (streaming == 0)
		die(2, "no client got an event stream");

	/* Let the connections settle, then the memory with everyone connected. */
	for (double until = now() + 0.5; now() < until;)
		poll_once(10);
	struct memory m_conn = read_memory();

	/* Publish. */
	double next = now(), t_pub = next;
	int published = 0;

	for (int k = 0; k < nevents; k++, published++) {
		if (now() - t_pub > deadline_s) {
			fprintf(stderr, "sse_clients: %d s passed: stopped after %d of %d events\n", deadline_s, k,
				nevents);
			break;
		}
		while (now() < next)
			poll_once(1);
		cur_event = k;
		post_start(k);
		for (;;) {
			double t = now();
			bool all = ev_count[k] >= streaming - (int)dropped;

			if (post.fd < 0 && all && t >= ev_t0[k] + interval_ms / 1000.0)
				break;
			if (t > ev_t0[k] + event_timeout_ms / 1000.0) {
				if (post.fd >= 0) {
					fprintf(stderr, "sse_clients: POST %d got no answer in %d ms\n", k,
						event_timeout_ms);
					epoll_ctl(epfd, EPOLL_CTL_DEL, post.fd, NULL);
					close(post.fd);
					post.fd = -1;
					ev_status[k] = -1;
					ev_tresp[k] = t;
				}
				break;
			}
			poll_once(1);
		}
		next = ev_t0[k] + interval_ms / 1000.0;
	}
	/* Late arrivals. */
	for (double until = now() + 0.2; now() < until;)
		poll_once(10);
	cur_event = published - 1;
	nevents_done = published;
	struct memory m_end = read_memory();

	/* Figures. */
	double *last = calloc((size_t)nevents, sizeof(double));
	double *all = calloc((size_t)nclients * (size_t)nevents, sizeof(double));
	double *postt = calloc((size_t)nevents, sizeof(double));
	size_t nlast = 0, nall = 0, npost = 0;
	long missing = 0, post_failed = 0, no_event = 0;

	for (int k = 0; k < nevents_done; k++) {
		double mx = 0;
		int got = 0;

		if (ev_status[k] == 201 || ev_status[k] == 200)
			postt[npost++] = (ev_tresp[k] - ev_t0[k]) * 1000;
		else
			post_failed++;
		if (ev_ids[k] == 0) {
			no_event++;
			continue;
		}
		for (int c = 0; c < nclients; c++) {
			double t = recv_t[(size_t)c * nevents + k];

			if (t == 0)
				continue;
			got++;
			all[nall++] = (t - ev_t0[k]) * 1000;
			if (t - ev_t0[k] > mx)
				mx = t - ev_t0[k];
		}
		if (got < streaming)
			missing += streaming - got;
		else
			last[nlast++] = mx * 1000;
	}
	qsort(last, nlast, sizeof(double), cmp_double);
	qsort(all, nall, sizeof(double), cmp_double);
	qsort(postt, npost, sizeof(double), cmp_double);

	double l50 = pct(last, nlast, 0.50), l99 = pct(last, nlast, 0.99), lmax = nlast ? last[nlast - 1] : -1;
	double a50 = pct(all, nall, 0.50), a99 = pct(all, nall, 0.99);
	double p50 = pct(postt, npost, 0.50), p99 = pct(postt, npost, 0.99);

	printf("sse: %d events published by POST /api/v1/tokens (%ld failed), %d ms apart at least\n", nevents_done,
	       post_failed, interval_ms);
	printf("sse: received %zu of %ld (clients x events); %ld missing, %ld events never seen, %ld unexpected, "
	       "%ld streams lost\n",
	       nall, (long)streaming * nevents_done, missing, no_event, unexpected, dropped);
	printf("sse: publish -> last client received:  p50 %.2f ms  p99 %.2f ms  max %.2f ms  (%zu events)\n", l50, l99,
	       lmax, nlast);
	printf("sse: publish -> each client received:  p50 %.2f ms  p99 %.2f ms  (%zu deliveries)\n", a50, a99, nall);
	printf("sse: POST /api/v1/tokens answered in:  p50 %.2f ms  p99 %.2f ms\n", p50, p99);
	if (daemon_pid > 0)
		printf("sse: %s VmRSS: idle %.1f MiB, %d clients connected %.1f MiB, after the events %.1f MiB "
		       "(VmHWM %.1f MiB, %ld threads)\n",
		       server_name, m_idle.rss_kib / 1024.0, streaming, m_conn.rss_kib / 1024.0, m_end.rss_kib / 1024.0,
		       m_end.hwm_kib / 1024.0, m_end.threads);
	printf("RESULT clients=%d streaming=%d events=%d post_failed=%ld missing=%ld no_event=%ld unexpected=%ld "
	       "dropped=%ld last_p50_ms=%.2f last_p99_ms=%.2f last_max_ms=%.2f all_p50_ms=%.2f all_p99_ms=%.2f "
	       "post_p50_ms=%.2f post_p99_ms=%.2f rss_idle_kib=%ld rss_clients_kib=%ld rss_end_kib=%ld "
	       "hwm_kib=%ld threads=%ld\n",
	       nclients, streaming, nevents_done, post_failed, missing, no_event, unexpected, dropped, l50, l99, lmax,
	       a50, a99, p50, p99, m_idle.rss_kib, m_conn.rss_kib, m_end.rss_kib, m_end.hwm_kib, m_end.threads);
	fflush(stdout);
	for (int i = 0; i < nclients; i++)
		if (clients[i].state != C_CLOSED)
			close(clients[i].fd);
	return nall == 0 ? 2 : 0;
}
