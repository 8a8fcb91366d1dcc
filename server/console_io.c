/* console_io.c - the reader thread of one console: connect (raw TCP to a
 * console server, or a local serial device set raw at the inventory's
 * speed), read into the ring, the log and the viewers, write queued input,
 * reconnect with a backoff.  See console.h. */
#include "console_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "timeutil.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 8000
#define CONNECT_TIMEOUT_MS 5000

void console_wake_all(struct console *c)
{
	for (struct cfeed *f = c->feeds; f != NULL; f = f->next)
		if (f->wake != NULL)
			f->wake(f->wake_cls);
}

void console_poke(struct console *c)
{
	char b = 1;

	if (write(c->pipe[1], &b, 1) < 0) {
		/* full: the thread is already due to wake */
	}
}

void console_set_state(struct console *c, int connected, const char *error)
{
	if (error != NULL) {
		snprintf(c->last_error, sizeof(c->last_error), "%s", error);
		c->last_error_at = tb_now();
	}
	if (connected != c->connected || error != NULL) {
		if (connected != c->connected)
			c->since = tb_now();
		c->connected = connected;
		c->gen++;
		console_wake_all(c);
	}
}

void console_got(struct console *c, const unsigned char *data, size_t len)
{
	long at = tb_console_grub_banner(c->grub_tail, &c->grub_tlen, data, len);
	int64_t now = tb_now_ms();

	if (at >= 0) { /* a boot begins: its log starts with the banner's line */
		size_t cut = (size_t)at;

		while (cut > 0 && data[cut - 1] != '\n')
			cut--;
		if (cut > 0)
			tb_conlog_write(&c->log, data, cut, now);
		tb_conlog_rotate(&c->log, "grub");
		data += cut;
		len -= cut;
	}
	if (tb_conlog_write(&c->log, data, len, now) != 0 && c->log.f == NULL)
		tb_warn("console", "%s: cannot write its log under %s", c->name, c->log.dir);
	tb_ring_append(&c->ring, data, len);
	console_wake_all(c);
}

/* Wait until fd is ready for ev, the pipe is poked, or ms pass: 1 ready, 0
 * not (timeout, poke), -1 error (errno). */
static int wait_fd(struct console *c, int fd, short ev, int ms)
{
	struct pollfd p[2] = {{.fd = c->pipe[0], .events = POLLIN}, {.fd = fd, .events = ev}};
	int r = poll(p, fd >= 0 ? 2 : 1, ms);

	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (p[0].revents & POLLIN) {
		char b[64];

		while (read(c->pipe[0], b, sizeof(b)) > 0) {
		}
	}
	return fd >= 0 && (p[1].revents & (ev | POLLERR | POLLHUP)) ? 1 : 0;
}

static int connect_tcp(struct console *c, char *why, size_t whylen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	char port[16];
	int fd = -1, rc, soerr = 0;
	socklen_t sl = sizeof(soerr);

	snprintf(port, sizeof(port), "%u", c->port);
	if ((rc = getaddrinfo(c->address, port, &hints, &ai)) != 0) {
		snprintf(why, whylen, "%s: %s", c->address, gai_strerror(rc));
		return -1;
	}
	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		goto fail;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		int64_t until = tb_monotonic_ms() + CONNECT_TIMEOUT_MS;

		if (errno != EINPROGRESS)
			goto fail;
		while (!c->cs->closing && (rc = wait_fd(c, fd, POLLOUT, 200)) == 0 && tb_monotonic_ms() < until) {
		}
		if (rc != 1) {
			errno = rc < 0 ? errno : ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
			errno = soerr;
			goto fail;
		}
	}
	freeaddrinfo(ai);
	return fd;
fail:
	snprintf(why, whylen, "connect to %s port %u: %s", c->address, c->port, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return -1;
}

static speed_t speed_of(unsigned int bps)
{
	switch (bps) {
	case 1200: return B1200;
	case 2400: return B2400;
	case 4800: return B4800;
	case 9600: return B9600;
	case 19200: return B19200;
	case 38400: return B38400;
#ifdef B57600
	case 57600: return B57600;
#endif
#ifdef B230400
	case 230400: return B230400;
#endif
	default: return B115200;
	}
}

/* A serial device, raw (no echo, no signals, no line editing), 8N1, at the
 * inventory's speed. */
static int open_device(struct console *c, char *why, size_t whylen)
{
	struct termios t;
	int fd = open(c->device, O_RDWR | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || tcgetattr(fd, &t) != 0) {
		snprintf(why, whylen, "%s: %s", c->device, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
	t.c_oflag &= ~(tcflag_t)OPOST;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB);
	t.c_cflag |= CS8 | CLOCAL | CREAD;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	cfsetispeed(&t, speed_of(c->speed));
	cfsetospeed(&t, speed_of(c->speed));
	if (tcsetattr(fd, TCSANOW, &t) != 0) {
		snprintf(why, whylen, "%s: setting the line: %s", c->device, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Write what is queued (as much as the line takes now); a Break on a device.
 * Under c->mu.  -1 with why on a write error. */
static int flush_input(struct console *c, int fd, char *why, size_t whylen)
{
	if (c->brk) {
		c->brk = 0;
		if (c->type == TB_CONSOLE_DEVICE)
			tcsendbreak(fd, 0);
	}
	if (c->inlen > 0) {
		ssize_t n = write(fd, c->inq, c->inlen);

		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			snprintf(why, whylen, "write: %s", strerror(errno));
			return -1;
		}
		if (n > 0) {
			memmove(c->inq, c->inq + n, c->inlen - (size_t)n);
			c->inlen -= (size_t)n;
		}
	}
	return 0;
}

/* Read and write until the line goes or the service closes; why gets the
 * reason it went. */
static void serve(struct console *c, int fd, char *why, size_t whylen)
{
	unsigned char buf[4096];

	while (!c->cs->closing) {
		int r;
		short ev = POLLIN;

		pthread_mutex_lock(&c->mu);
		if (c->inlen > 0)
			ev |= POLLOUT;
		pthread_mutex_unlock(&c->mu);
		if ((r = wait_fd(c, fd, ev, 1000)) < 0) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			return;
		}
		if (r == 1) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n == 0) {
				snprintf(why, whylen, "%s",
					 c->type == TB_CONSOLE_TCP ? "the console server closed the connection"
								   : "end of file on the device");
				return;
			}
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				snprintf(why, whylen, "read: %s", strerror(errno));
				return;
			}
			if (n > 0) {
				pthread_mutex_lock(&c->mu);
				console_got(c, buf, (size_t)n);
				pthread_mutex_unlock(&c->mu);
			}
		}
		pthread_mutex_lock(&c->mu);
		r = flush_input(c, fd, why, whylen);
		pthread_mutex_unlock(&c->mu);
		if (r != 0)
			return;
	}
}

void *console_thread(void *arg)
{
	struct console *c = arg;
	int backoff = BACKOFF_MIN_MS;
	char why[200];

	while (!c->cs->closing) {
		int fd;

		why[0] = '\0';
		fd = c->type == TB_CONSOLE_TCP ? connect_tcp(c, why, sizeof(why)) : open_device(c, why, sizeof(why));
		if (fd >= 0) {
			tb_info("console", "%s: connected", c->name);
			pthread_mutex_lock(&c->mu);
			c->inlen = 0; /* typed while it was away: not for the new line */
			console_set_state(c, 1, NULL);
			pthread_mutex_unlock(&c->mu);
			backoff = BACKOFF_MIN_MS;
			serve(c, fd, why, sizeof(why));
			close(fd);
			if (c->cs->closing)
				break;
		}
		tb_info("console", "%s: %s; again in %d ms", c->name, why, backoff);
		pthread_mutex_lock(&c->mu);
		console_set_state(c, 0, why);
		pthread_mutex_unlock(&c->mu);
		/* wait out the backoff (a stop pokes the pipe) */
		for (int64_t until = tb_monotonic_ms() + backoff; !c->cs->closing && tb_monotonic_ms() < until;)
			wait_fd(c, -1, 0, 1000);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	return NULL;
}
