/* hookrx.c - a recording HTTP receiver for webhook tests: see hookrx.h. */
#include "hookrx.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "loopsrv.h"

struct tb_hookrx {
	struct tb_loopsrv srv; /* its lock guards the fields below */
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

/* One connection (on the listener's thread): read the request, record it
 * with the status it gets, answer. */
static void serve_one(int c, void *arg)
{
	struct tb_hookrx *rx = arg;
	struct tb_hookrx_req r;
	char reply[128];
	int status = 200;

	memset(&r, 0, sizeof(r));
	if (read_request(c, &r) != 0) {
		free(r.headers);
		free(r.body);
		return;
	}
	pthread_mutex_lock(&rx->srv.lock);
	if (rx->fail_n > 0) {
		rx->fail_n--;
		status = rx->fail_status;
	}
	r.answered = status;
	if (rx->n < TB_HOOKRX_MAX) {
		rx->reqs[rx->n++] = r;
	} else {
		free(r.headers);
		free(r.body);
	}
	pthread_cond_broadcast(&rx->srv.cond);
	pthread_mutex_unlock(&rx->srv.lock);
	snprintf(reply, sizeof(reply), "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status);
	if (write(c, reply, strlen(reply)) < 0)
		perror("hookrx: write");
}

int tb_hookrx_start(struct tb_hookrx **out, unsigned int *port)
{
	struct tb_hookrx *rx = calloc(1, sizeof(*rx));

	if (rx == NULL)
		return -1;
	if (tb_loopsrv_start(&rx->srv, "hookrx", serve_one, rx, port) != 0) {
		free(rx);
		return -1;
	}
	*out = rx;
	return 0;
}

void tb_hookrx_fail_next(struct tb_hookrx *rx, int n, int status)
{
	pthread_mutex_lock(&rx->srv.lock);
	rx->fail_n = n;
	rx->fail_status = status;
	pthread_mutex_unlock(&rx->srv.lock);
}

size_t tb_hookrx_count(struct tb_hookrx *rx)
{
	return tb_loopsrv_get(&rx->srv, &rx->n);
}

int tb_hookrx_wait(struct tb_hookrx *rx, size_t n, long ms)
{
	return tb_loopsrv_wait(&rx->srv, &rx->n, n, ms);
}

const struct tb_hookrx_req *tb_hookrx_get(struct tb_hookrx *rx, size_t i)
{
	const struct tb_hookrx_req *r;

	pthread_mutex_lock(&rx->srv.lock);
	r = i < rx->n ? &rx->reqs[i] : NULL;
	pthread_mutex_unlock(&rx->srv.lock);
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
	tb_loopsrv_stop(&rx->srv);
	for (size_t i = 0; i < rx->n; i++) {
		free(rx->reqs[i].headers);
		free(rx->reqs[i].body);
	}
	free(rx);
}
