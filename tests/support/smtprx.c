/* smtprx.c - a recording SMTP receiver for the email sink's tests: see smtprx.h. */
#include "smtprx.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "loopsrv.h"

struct tb_smtprx {
	struct tb_loopsrv srv; /* its lock guards the fields below */
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

/* One SMTP session on connection c (on the listener's thread). */
static void session(int c, void *arg)
{
	struct tb_smtprx *rx = arg;
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
			pthread_mutex_lock(&rx->srv.lock);
			if (rx->n < TB_SMTPRX_MAX)
				rx->mails[rx->n++] = m;
			else
				free(d);
			pthread_cond_broadcast(&rx->srv.cond);
			pthread_mutex_unlock(&rx->srv.lock);
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

int tb_smtprx_start(struct tb_smtprx **out, unsigned int *port)
{
	struct tb_smtprx *rx = calloc(1, sizeof(*rx));

	if (rx == NULL)
		return -1;
	if (tb_loopsrv_start(&rx->srv, "smtprx", session, rx, port) != 0) {
		free(rx);
		return -1;
	}
	*out = rx;
	return 0;
}

size_t tb_smtprx_sessions(struct tb_smtprx *rx)
{
	return tb_loopsrv_get(&rx->srv, &rx->srv.accepted);
}

size_t tb_smtprx_count(struct tb_smtprx *rx)
{
	return tb_loopsrv_get(&rx->srv, &rx->n);
}

int tb_smtprx_wait(struct tb_smtprx *rx, size_t n, long ms)
{
	return tb_loopsrv_wait(&rx->srv, &rx->n, n, ms);
}

const struct tb_smtprx_mail *tb_smtprx_get(struct tb_smtprx *rx, size_t i)
{
	const struct tb_smtprx_mail *m;

	pthread_mutex_lock(&rx->srv.lock);
	m = i < rx->n ? &rx->mails[i] : NULL;
	pthread_mutex_unlock(&rx->srv.lock);
	return m;
}

void tb_smtprx_stop(struct tb_smtprx *rx)
{
	if (rx == NULL)
		return;
	tb_loopsrv_stop(&rx->srv);
	for (size_t i = 0; i < rx->n; i++)
		free(rx->mails[i].data);
	free(rx);
}
