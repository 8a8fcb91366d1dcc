/* hookrx.c - a recording HTTP receiver for webhook tests: see hookrx.h. */
#include "hookrx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct tb_hookrx {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	int fail_n, fail_status;
	struct tb_hookrx_req reqs[TB_HOOKRX_MAX];
	size_t n;
};

/* Read one request from c into r: 0 or -1. */
static int read_request(int c, struct tb_hookrx_req *r)
{
	size_t cap = 65536, len = 0, need = 0;
	char *buf = malloc(cap + 1), *end = NULL, *cl;

	if (buf == NULL)
		return -1;
	for (;;) {
		struct pollfd p = {c, POLLIN, 0};
		ssize_t k;

		if (end != NULL && len >= need)
			break;
		if (len == cap || poll(&p, 1, 10000) <= 0 || (k = read(c, buf + len, cap - len)) <= 0) {
			free(buf);
			return -1;
		}
		len += (size_t)k;
		buf[len] = '\0';
		if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
			size_t hl = (size_t)(end - buf) + 4;

			need = hl;
			for (cl = buf; (cl = strchr(cl, '\n')) != NULL; cl++)
				if (strncasecmp(cl + 1, "Content-Length:", 15) == 0)
					need = hl + strtoul(cl + 16, NULL, 10);
		}
	}
	*end = '\0';
	sscanf(buf, "%15s %511s", r->method, r->path);
	r->headers = strdup(strchr(buf, '\n') != NULL ? strchr(buf, '\n') + 1 : "");
	r->len = len - (size_t)(end + 4 - buf);
	r->body = malloc(r->len + 1);
	if (r->body != NULL) {
		memcpy(r->body, end + 4, r->len);
		r->body[r->len] = '\0';
	}
	free(buf);
	return r->headers != NULL && r->body != NULL ? 0 : -1;
}

static void *serve(void *arg)
{
	struct tb_hookrx *rx = arg;

	for (;;) {
		struct pollfd p = {rx->fd, POLLIN, 0};
		struct tb_hookrx_req r;
		char reply[128];
		int c, status = 200;

		pthread_mutex_lock(&rx->lock);
		if (rx->stop) {
			pthread_mutex_unlock(&rx->lock);
			return NULL;
		}
		pthread_mutex_unlock(&rx->lock);
		if (poll(&p, 1, 100) <= 0 || (c = accept(rx->fd, NULL, NULL)) < 0)
			continue;
		memset(&r, 0, sizeof(r));
		if (read_request(c, &r) != 0) {
			close(c);
			continue;
		}
		pthread_mutex_lock(&rx->lock);
		if (rx->fail_n > 0) {
			rx->fail_n--;
			status = rx->fail_status;
		}
		r.answered = status;
		if (rx->n < TB_HOOKRX_MAX)
			rx->reqs[rx->n++] = r;
		pthread_cond_broadcast(&rx->cond);
		pthread_mutex_unlock(&rx->lock);
		snprintf(reply, sizeof(reply), "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
			 status);
		if (write(c, reply, strlen(reply)) < 0)
			perror("hookrx: write");
		close(c);
	}
}

int tb_hookrx_start(struct tb_hookrx **out, unsigned int *port)
{
	struct tb_hookrx *rx = calloc(1, sizeof(*rx));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	socklen_t al = sizeof(a);

	if (rx == NULL)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rx->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (rx->fd < 0 || bind(rx->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(rx->fd, 16) != 0 ||
	    getsockname(rx->fd, (struct sockaddr *)&a, &al) != 0) {
		perror("hookrx");
		free(rx);
		return -1;
	}
	*port = ntohs(a.sin_port);
	pthread_mutex_init(&rx->lock, NULL);
	pthread_cond_init(&rx->cond, NULL);
	if (pthread_create(&rx->thread, NULL, serve, rx) != 0) {
		close(rx->fd);
		free(rx);
		return -1;
	}
	*out = rx;
	return 0;
}

void tb_hookrx_fail_next(struct tb_hookrx *rx, int n, int status)
{
	pthread_mutex_lock(&rx->lock);
	rx->fail_n = n;
	rx->fail_status = status;
	pthread_mutex_unlock(&rx->lock);
}

size_t tb_hookrx_count(struct tb_hookrx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->n;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

int tb_hookrx_wait(struct tb_hookrx *rx, size_t n, long ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&rx->lock);
	while (rx->n < n && rc == 0)
		rc = pthread_cond_timedwait(&rx->cond, &rx->lock, &until);
	rc = rx->n >= n ? 0 : -1;
	pthread_mutex_unlock(&rx->lock);
	return rc;
}

const struct tb_hookrx_req *tb_hookrx_get(struct tb_hookrx *rx, size_t i)
{
	const struct tb_hookrx_req *r;

	pthread_mutex_lock(&rx->lock);
	r = i < rx->n ? &rx->reqs[i] : NULL;
	pthread_mutex_unlock(&rx->lock);
	return r;
}

const char *tb_hookrx_header(const struct tb_hookrx_req *r, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);

	for (const char *l = r->headers; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
			const char *v = l + nl + 1, *e;

			while (*v == ' ')
				v++;
			e = strpbrk(v, "\r\n");
			snprintf(buf, len, "%.*s", (int)(e != NULL ? (size_t)(e - v) : strlen(v)), v);
			return buf;
		}
	}
	return NULL;
}

void tb_hookrx_stop(struct tb_hookrx *rx)
{
	if (rx == NULL)
		return;
	pthread_mutex_lock(&rx->lock);
	rx->stop = 1;
	pthread_mutex_unlock(&rx->lock);
	pthread_join(rx->thread, NULL);
	close(rx->fd);
	for (size_t i = 0; i < rx->n; i++) {
		free(rx->reqs[i].headers);
		free(rx->reqs[i].body);
	}
	free(rx);
}
