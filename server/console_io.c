/* console_io.c - the reader thread of one console: connect (TCP to a
 * console server, raw or telnet with RFC 2217 for Break, or a local serial
 * device set raw at the inventory's speed; IPMI SOL is console_sol.c), read
 * into the ring, the log and the viewers, write queued input, reconnect with
 * a backoff.  See console.h. */
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

/* What a connection has on its way out: input (telnet-encoded in telnet
 * mode) and telnet's own words, and when a Break's OFF is due. */
struct wire {
	unsigned char buf[2 * TB_CONSOLE_QUEUE_MAX + 64];
	size_t len;
	int64_t brk_off_ms; /* monotonic; 0: none pending */
};

/* A telnet Break: RFC 2217's BREAK ON and, 250 ms later, OFF (7 bytes each). */
#define BREAK_PAIR 14
/* What a telnet wire keeps free of typed input: one read's answers and a
 * Break's ON and OFF, so that neither is ever dropped.  A read waits while
 * less is free (only answers to a flood of negotiation can take it). */
#define WIRE_RESERVE (sizeof(((struct tb_telnet_out *)0)->buf) + BREAK_PAIR)
_Static_assert(2 * TB_CONSOLE_QUEUE_MAX > WIRE_RESERVE, "the wire holds typed input beside its reserve");

static size_t wire_room(const struct wire *w)
{
	return sizeof(w->buf) - w->len;
}

static void wire_add(struct wire *w, const void *data, size_t n)
{
	if (n <= sizeof(w->buf) - w->len) {
		memcpy(w->buf + w->len, data, n);
		w->len += n;
	}
}

/* Move queued input (and a Break) onto the wire.  Under c->mu. */
static void take_input(struct console *c, struct wire *w)
{
	int telnet = c->type == TB_CONSOLE_TCP && c->protocol == TB_CONSOLE_TELNET;
	size_t n;

	/* a device's goes in flush_input; a Break asked for while the last one
	 * is still on waits for its OFF (then goes: two Breaks, two Breaks) */
	if (c->brk > 0 && telnet && w->brk_off_ms == 0 && wire_room(w) >= BREAK_PAIR) {
		unsigned char b[7];

		c->brk--;
		/* RFC 2217: BREAK ON now, OFF 250 ms later (tcsendbreak's length) */
		wire_add(w, b, tb_telnet_break(1, b));
		w->brk_off_ms = tb_monotonic_ms() + 250;
	}
	n = c->inlen;
	if (telnet) {
		size_t room = wire_room(w) > WIRE_RESERVE ? wire_room(w) - WIRE_RESERVE : 0;

		if (n > room / 2) /* encoding at most doubles */
			n = room / 2;
		w->len += tb_telnet_encode(&c->tn, c->inq, n, w->buf + w->len);
	} else {
		if (n > sizeof(w->buf) - w->len)
			n = sizeof(w->buf) - w->len;
		memcpy(w->buf + w->len, c->inq, n);
		w->len += n;
	}
	memmove(c->inq, c->inq + n, c->inlen - n);
	c->inlen -= n;
}

/* Write what is on the wire (as much as the line takes now), a device's
 * Break, a telnet Break's OFF when due.  -1 with why on a write error. */
static int flush_input(struct console *c, int fd, struct wire *w, char *why, size_t whylen)
{
	ssize_t n;

	pthread_mutex_lock(&c->mu);
	if (c->brk > 0 && c->type == TB_CONSOLE_DEVICE) {
		c->brk--;
		tcsendbreak(fd, 0);
	}
	take_input(c, w);
	pthread_mutex_unlock(&c->mu);
	if (w->brk_off_ms != 0 && tb_monotonic_ms() >= w->brk_off_ms) {
		unsigned char b[7];

		wire_add(w, b, tb_telnet_break(0, b));
		w->brk_off_ms = 0;
	}
	if (w->len == 0)
		return 0;
	n = write(fd, w->buf, w->len);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		snprintf(why, whylen, "write: %s", strerror(errno));
		return -1;
	}
	if (n > 0) {
		memmove(w->buf, w->buf + n, w->len - (size_t)n);
		w->len -= (size_t)n;
	}
	return 0;
}

/* Bytes read from the line: telnet's taken out in telnet mode (its answers
 * go on the wire), the rest to the console. */
static void got_bytes(struct console *c, struct wire *w, unsigned char *buf, size_t n)
{
	if (c->type == TB_CONSOLE_TCP && c->protocol == TB_CONSOLE_TELNET) {
		struct tb_telnet_out reply = {.len = 0};

		n = tb_telnet_decode(&c->tn, buf, n, buf, &reply);
		wire_add(w, reply.buf, reply.len);
		pthread_mutex_lock(&c->mu);
		c->comport = tb_telnet_comport(&c->tn);
		pthread_mutex_unlock(&c->mu);
	}
	if (n > 0) {
		pthread_mutex_lock(&c->mu);
		console_got(c, buf, n);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Read and write until the line goes or the service closes; why gets the
 * reason it went. */
static void serve(struct console *c, int fd, char *why, size_t whylen)
{
	static struct wire zero;
	struct wire *w = malloc(sizeof(*w));
	unsigned char buf[TB_CONSOLE_READ_MAX];
	int telnet = c->type == TB_CONSOLE_TCP && c->protocol == TB_CONSOLE_TELNET;

	if (w == NULL) {
		snprintf(why, whylen, "out of memory");
		return;
	}
	*w = zero;
	if (telnet)
		w->len = tb_telnet_hello(&c->tn, w->buf);
	while (!c->cs->closing) {
		int r;
		short ev = POLLIN;

		if (telnet && wire_room(w) < WIRE_RESERVE)
			ev = 0; /* answers still to write: read once they are */
		pthread_mutex_lock(&c->mu);
		if (c->inlen > 0 || (c->brk > 0 && w->brk_off_ms == 0) || w->len > 0)
			ev |= POLLOUT;
		pthread_mutex_unlock(&c->mu);
		if ((r = wait_fd(c, fd, ev, w->brk_off_ms != 0 ? 50 : 1000)) < 0) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			break;
		}
		if (r == 1 && (ev & POLLIN) != 0) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n == 0) {
				snprintf(why, whylen, "%s",
					 c->type == TB_CONSOLE_TCP ? "the console server closed the connection"
								   : "end of file on the device");
				break;
			}
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				snprintf(why, whylen, "read: %s", strerror(errno));
				break;
			}
			if (n > 0)
				got_bytes(c, w, buf, (size_t)n);
		}
		if (flush_input(c, fd, w, why, whylen) != 0)
			break;
	}
	free(w);
}

int console_reads(const struct tb_machine *m)
{
	return m->console.type == TB_CONSOLE_TCP || m->console.type == TB_CONSOLE_DEVICE ||
	       m->console.type == TB_CONSOLE_IPMI_SOL;
}

void console_setup_kind(struct console *c, const struct tb_machine *m)
{
	c->protocol = m->console.protocol;
	c->bol = 1;
	if (m->console.type != TB_CONSOLE_IPMI_SOL)
		return;
	for (size_t i = 0; i < m->npower; i++) {
		const struct tb_power_method *pm = &m->power[i];

		if (pm->driver != TB_POWER_IPMI)
			continue;
		snprintf(c->bmc_address, sizeof(c->bmc_address), "%s", pm->address != NULL ? pm->address : "");
		c->bmc_port = pm->port != 0 ? pm->port : 623u;
		snprintf(c->bmc_user, sizeof(c->bmc_user), "%s", pm->user != NULL ? pm->user : "");
		snprintf(c->bmc_password_file, sizeof(c->bmc_password_file), "%s",
			 pm->password_file != NULL ? pm->password_file : "");
		snprintf(c->bmc_password_env, sizeof(c->bmc_password_env), "%s",
			 pm->password_env != NULL ? pm->password_env : "");
		c->bmc_cipher_suite = pm->cipher_suite;
		return;
	}
}

const char *console_type_name(const struct console *c)
{
	switch (c->type) {
	case TB_CONSOLE_TCP: return "tcp";
	case TB_CONSOLE_DEVICE: return "device";
	case TB_CONSOLE_IPMI_SOL: return "ipmi-sol";
	default: return "none";
	}
}

int console_break_check(struct console *c, struct tb_error *err)
{
	int rc = 0;

	if (c->type == TB_CONSOLE_TCP && c->protocol != TB_CONSOLE_TELNET)
		return tb_fail(err, TB_ERR_INVALID, "key",
			       "the console of %s is raw TCP, which has no Break (a device console has one, and a "
			       "tcp console with protocol: telnet sends RFC 2217's)",
			       c->name);
	if (c->type == TB_CONSOLE_TCP) { /* telnet */
		pthread_mutex_lock(&c->mu);
		if (c->connected && !c->comport)
			rc = tb_fail(err, TB_ERR_CONFLICT, "key",
				     "the console server of %s refused RFC 2217 (telnet's COM-PORT-OPTION), which "
				     "carries a Break: not sent (ser2net: use its telnet(rfc2217) accepter)",
				     c->name);
		pthread_mutex_unlock(&c->mu);
		return rc;
	}
	if (c->type != TB_CONSOLE_IPMI_SOL)
		return 0;
	pthread_mutex_lock(&c->mu);
	/* ipmitool takes ~B only at the start of a line: after what is queued */
	if (c->inlen > 0 ? c->inq[c->inlen - 1] != '\r' && c->inq[c->inlen - 1] != '\n' : !c->bol)
		rc = tb_fail(err, TB_ERR_CONFLICT, "key",
			     "the console of %s is IPMI SOL, where ipmitool sends a Break (~B) only at the start of "
			     "a line: send Enter first",
			     c->name);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* Open c's line by its kind: a descriptor, or -1 with why. */
static int open_line(struct console *c, char *why, size_t whylen)
{
	return c->type == TB_CONSOLE_TCP ? connect_tcp(c, why, whylen) : open_device(c, why, whylen);
}

void *console_thread(void *arg)
{
	struct console *c = arg;
	int backoff = BACKOFF_MIN_MS;
	char why[200];

	while (!c->cs->closing) {
		int fd = -1;

		why[0] = '\0';
		if (c->type == TB_CONSOLE_IPMI_SOL) {
			/* connects, serves and says so itself */
			if (console_sol_session(c, why, sizeof(why)))
				backoff = BACKOFF_MIN_MS;
		} else if ((fd = open_line(c, why, sizeof(why))) >= 0) {
			tb_info("console", "%s: connected", c->name);
			pthread_mutex_lock(&c->mu);
			c->inlen = 0; /* typed while it was away: not for the new line */
			c->brk = 0;
			c->comport = 1; /* telnet: asked for in the hello, until the server refuses */
			console_set_state(c, 1, NULL);
			pthread_mutex_unlock(&c->mu);
			backoff = BACKOFF_MIN_MS;
			serve(c, fd, why, sizeof(why));
			close(fd);
		}
		if (c->cs->closing)
			break;
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
