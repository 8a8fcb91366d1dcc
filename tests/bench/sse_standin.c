/*
 * sse_standin.c - a trivial stand-in for testbedd's event stream, to test the
 * benchmark client (sse_clients.c) by itself: `deploy/bench --standin`.
 * Not a model of testbedd: one thread, epoll, no auth check beyond the header
 * being there.
 *
 *   GET  /api/v1/events  -> 200 text/event-stream, chunked; stays open
 *   POST /api/v1/tokens  -> 201, then "id: N\nevent: audit\ndata: {...}\n\n"
 *                           to every stream, one chunk each
 *   anything else        -> 404
 *
 *   sse_standin --port-file FILE     (listens on 127.0.0.1, a free port)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXFD 65536

struct conn {
	char buf[8192];
	size_t len;
	int stream;
};

static struct conn *conns[MAXFD];
static long next_id = 1;

static void drop(int ep, int fd)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(conns[fd]);
	conns[fd] = NULL;
}

static void publish(int ep)
{
	char ev[256], chunk[300];
	int n = snprintf(ev, sizeof(ev), "id: %ld\nevent: audit\ndata: {\"action\":\"token.create\"}\n\n", next_id++);
	int m = snprintf(chunk, sizeof(chunk), "%x\r\n%s\r\n", n, ev);

	for (int fd = 0; fd < MAXFD; fd++)
		if (conns[fd] != NULL && conns[fd]->stream && write(fd, chunk, (size_t)m) != m)
			drop(ep, fd);
}

static void request(int ep, int fd)
{
	struct conn *c = conns[fd];
	char *end = strstr(c->buf, "\r\n\r\n");
	static const char sse[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
				  "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";

	if (end == NULL)
		return;
	if (strncmp(c->buf, "GET /api/v1/events", 18) == 0) {
		c->stream = 1;
		if (write(fd, sse, sizeof(sse) - 1) < 0)
			drop(ep, fd);
		return;
	}
	if (strncmp(c->buf, "POST /api/v1/tokens", 19) == 0) {
		char *cl = strcasestr(c->buf, "content-length:");
		size_t want = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
		static const char ok[] = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
					 "Content-Length: 2\r\nConnection: close\r\n\r\n{}";

		if (c->len < (size_t)(end + 4 - c->buf) + want)
			return; /* body not complete */
		if (write(fd, ok, sizeof(ok) - 1) < 0) {
		}
		drop(ep, fd);
		publish(ep);
		return;
	}
	static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	if (write(fd, nf, sizeof(nf) - 1) < 0) {
	}
	drop(ep, fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct rlimit rl;
	int one = 1, lfd, ep;
	FILE *f;

	if (argc != 3 || strcmp(argv[1], "--port-file") != 0) {
		fprintf(stderr, "usage: sse_standin --port-file FILE\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max < MAXFD ? rl.rlim_max : MAXFD;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4096) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
		perror("sse_standin: listen");
		return 3;
	}
	f = fopen(argv[2], "w");
	if (f == NULL)
		return 3;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	ep = epoll_create1(0);
	struct epoll_event e = {.events = EPOLLIN, .data.fd = lfd};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
	for (;;) {
		struct epoll_event evs[128];
		int n = epoll_wait(ep, evs, 128, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				if (c < 0 || c >= MAXFD) {
					if (c >= 0)
						close(c);
					continue;
				}
				conns[c] = calloc(1, sizeof(struct conn));
				struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				continue;
			}
			struct conn *c = conns[fd];
			ssize_t r;

			if (c == NULL)
				continue;
			r = read(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
			if (r <= 0) {
				drop(ep, fd);
				continue;
			}
			c->len += (size_t)r;
			c->buf[c->len] = '\0';
			if (!c->stream)
				request(ep, fd);
		}
	}
}
