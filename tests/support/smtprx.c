/* smtprx.c - a recording SMTP receiver for the email sink's tests: see smtprx.h. */
#include "smtprx.h"

#include <arpa/inet.h>
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

struct tb_smtprx {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	size_t sessions;
	struct tb_smtprx_mail mails[TB_SMTPRX_MAX];
	size_t n;
};

static void say(int c, const char *s)
{
	if (write(c, s, strlen(s)) < 0)
		perror("smtprx: write");
}

/* One line (CRLF stripped) into buf; 0 or -1 (closed, 10 s of silence). */
static int read_line(int c, char *buf, size_t len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = {c, POLLIN, 0};
		char ch;

		if (poll(&p, 1, 10000) <= 0 || read(c, &ch, 1) != 1)
			return -1;
		if (ch == '\n') {
			if (n > 0 && buf[n - 1] == '\r')
				n--;
			buf[n] = '\0';
			return 0;
		}
		if (n + 1 < len)
			buf[n++] = ch;
	}
}

static void session(struct tb_smtprx *rx, int c)
{
	struct tb_smtprx_mail m;
	char line[2048];

	memset(&m, 0, sizeof(m));
	say(c, "220 smtprx ESMTP\r\n");
	while (read_line(c, line, sizeof(line)) == 0) {
		if (strncasecmp(line, "EHLO", 4) == 0) {
			say(c, "250-smtprx\r\n250 8BITMIME\r\n");
		} else if (strncasecmp(line, "HELO", 4) == 0 || strncasecmp(line, "NOOP", 4) == 0) {
			say(c, "250 ok\r\n");
		} else if (strncasecmp(line, "MAIL FROM:", 10) == 0) {
			snprintf(m.from, sizeof(m.from), "%s", line + 10);
			say(c, "250 ok\r\n");
		} else if (strncasecmp(line, "RCPT TO:", 8) == 0) {
			size_t k = strlen(m.rcpt);

			snprintf(m.rcpt + k, sizeof(m.rcpt) - k, "%s%s", k > 0 ? " " : "", line + 8);
			say(c, "250 ok\r\n");
		} else if (strncasecmp(line, "DATA", 4) == 0) {
			size_t cap = 65536, len = 0;
			char *d = malloc(cap);

			say(c, "354 go ahead\r\n");
			while (d != NULL && read_line(c, line, sizeof(line)) == 0 && strcmp(line, ".") != 0) {
				const char *l = line[0] == '.' ? line + 1 : line; /* dot-stuffing */

				if (len + strlen(l) + 2 < cap)
					len += (size_t)sprintf(d + len, "%s\n", l);
			}
			if (d == NULL)
				return;
			d[len] = '\0';
			m.data = d;
			pthread_mutex_lock(&rx->lock);
			if (rx->n < TB_SMTPRX_MAX)
				rx->mails[rx->n++] = m;
			else
				free(d);
			pthread_cond_broadcast(&rx->cond);
			pthread_mutex_unlock(&rx->lock);
			memset(&m, 0, sizeof(m));
			say(c, "250 queued\r\n");
		} else if (strncasecmp(line, "RSET", 4) == 0) {
			free(m.data);
			memset(&m, 0, sizeof(m));
			say(c, "250 ok\r\n");
		} else if (strncasecmp(line, "QUIT", 4) == 0) {
			say(c, "221 bye\r\n");
			break;
		} else {
			say(c, "502 not here\r\n");
		}
	}
	free(m.data);
}

static void *serve(void *arg)
{
	struct tb_smtprx *rx = arg;

	for (;;) {
		struct pollfd p = {rx->fd, POLLIN, 0};
		int c;

		pthread_mutex_lock(&rx->lock);
		if (rx->stop) {
			pthread_mutex_unlock(&rx->lock);
			return NULL;
		}
		pthread_mutex_unlock(&rx->lock);
		if (poll(&p, 1, 100) <= 0 || (c = accept(rx->fd, NULL, NULL)) < 0)
			continue;
		pthread_mutex_lock(&rx->lock);
		rx->sessions++;
		pthread_mutex_unlock(&rx->lock);
		session(rx, c);
		close(c);
	}
}

int tb_smtprx_start(struct tb_smtprx **out, unsigned int *port)
{
	struct tb_smtprx *rx = calloc(1, sizeof(*rx));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	socklen_t al = sizeof(a);

	if (rx == NULL)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rx->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (rx->fd < 0 || bind(rx->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(rx->fd, 16) != 0 ||
	    getsockname(rx->fd, (struct sockaddr *)&a, &al) != 0) {
		perror("smtprx");
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

size_t tb_smtprx_sessions(struct tb_smtprx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->sessions;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

size_t tb_smtprx_count(struct tb_smtprx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->n;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

int tb_smtprx_wait(struct tb_smtprx *rx, size_t n, long ms)
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

const struct tb_smtprx_mail *tb_smtprx_get(struct tb_smtprx *rx, size_t i)
{
	const struct tb_smtprx_mail *m;

	pthread_mutex_lock(&rx->lock);
	m = i < rx->n ? &rx->mails[i] : NULL;
	pthread_mutex_unlock(&rx->lock);
	return m;
}

void tb_smtprx_stop(struct tb_smtprx *rx)
{
	if (rx == NULL)
		return;
	pthread_mutex_lock(&rx->lock);
	rx->stop = 1;
	pthread_mutex_unlock(&rx->lock);
	pthread_join(rx->thread, NULL);
	close(rx->fd);
	for (size_t i = 0; i < rx->n; i++)
		free(rx->mails[i].data);
	free(rx);
}
