/* ssestream.c - see ssestream.h. */
#include "ssestream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

long long tb_test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tb_test_stream_open(struct tb_test_stream *s, unsigned int port, const char *path, const char *headers)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
	char req[2048];
	int n;

	memset(s, 0, sizeof(*s));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n%s\r\n",
		     path, headers);
	assert_int_equal(write(s->fd, req, (size_t)n), n);
}

/* One read into buf: 1 bytes came, 0 nothing within the wait, -1 closed. */
static int read_some(struct tb_test_stream *s, long long end)
{
	struct pollfd p = {.fd = s->fd, .events = POLLIN};
	char chunk[8192];
	ssize_t r;
	char *nb;

	if (poll(&p, 1, (int)(end - tb_test_now_ms())) <= 0)
		return 0;
	r = read(s->fd, chunk, sizeof(chunk));
	if (r <= 0)
		return -1;
	nb = realloc(s->buf, s->len + (size_t)r + 1);
	assert_non_null(nb);
	s->buf = nb;
	memcpy(s->buf + s->len, chunk, (size_t)r);
	s->len += (size_t)r;
	s->buf[s->len] = '\0';
	return 1;
}

int tb_test_stream_read_until(struct tb_test_stream *s, const char *needle, long timeout_ms)
{
	long long end = tb_test_now_ms() + timeout_ms;

	for (;;) {
		if (s->buf != NULL && strstr(s->buf, needle) != NULL)
			return 1;
		if (tb_test_now_ms() >= end || read_some(s, end) < 0)
			return s->buf != NULL && strstr(s->buf, needle) != NULL;
	}
}

int tb_test_stream_read_to_eof(struct tb_test_stream *s, long timeout_ms)
{
	long long end = tb_test_now_ms() + timeout_ms;

	while (tb_test_now_ms() < end)
		if (read_some(s, end) < 0)
			return 1;
	return 0;
}

void tb_test_stream_close(struct tb_test_stream *s)
{
	if (s->fd > 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
