/* console_sol.c - an ipmi-sol console: IPMI serial-over-LAN through the
 * machine's BMC (its ipmi power entry), read by running
 *
 *   ipmitool -I lanplus -H ADDR -p PORT -U USER -E -C SUITE sol activate
 *
 * under `stdbuf -o0` (see sol_argv) as a child with pipes (proc.h's
 * tb_proc_spawn: the password in IPMI_PASSWORD in its environment only,
 * never argv).  Its stdout is the
 * console, less ipmitool's own lines ("[SOL Session operational.  Use ~? for
 * help]" at the start, "~B [send break]" after a Break); its stdin takes the
 * input.  ipmitool's escapes ("~." ends it, "~^Z" stops it, ...) work only
 * right after a CR or LF: a '~' typed there is sent as "~~" (ipmitool sends
 * one '~'), so no input can trigger one; a Break is "~B", sent only at the
 * start of a line (console_break_check refuses it elsewhere).  When the BMC
 * says a SOL session is already active (one left by a killed ipmitool),
 * `sol deactivate` ends it and the next try (after the backoff) gets it.
 * The session ends at end of input (ipmitool deactivates), else by signals.
 * See console_internal.h. */
#include "console_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "power.h"
#include "proc.h"
#include "timeutil.h"
#include "validate.h"
#include "wipe.h"

#define SOL_OPEN_MS 30000L       /* from the start to "SOL Session operational" */
#define SOL_GRACE_MS 2000L       /* at end of input ipmitool deactivates and exits */
#define SOL_DEACTIVATE_MS 10000L /* the `sol deactivate` run */
#define IPMI_PASSWORD_MAX 20

/* One of ipmitool's own lines on its stdout, taken out of the console's
 * bytes: armed times the pattern, then optional CRs and a LF. */
struct strip {
	const char *pat;
	size_t plen;
	size_t m;  /* bytes of pat matched (held back) */
	int armed; /* how many are still to come */
};

/* Filter n bytes of in into out (room n + s->plen).  Returns the count. */
static size_t strip_run(struct strip *s, const unsigned char *in, size_t n, unsigned char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = in[i];

		if (s->armed <= 0) {
			out[k++] = ch;
		} else if (s->m < s->plen) {
			if (ch == (unsigned char)s->pat[s->m]) {
				s->m++;
				continue;
			}
			memcpy(out + k, s->pat, s->m); /* not it: give back what was held */
			k += s->m;
			s->m = ch == (unsigned char)s->pat[0];
			if (!s->m)
				out[k++] = ch;
		} else if (ch != '\r') { /* the whole line: its end goes too */
			s->armed--;
			s->m = 0;
			if (ch != '\n')
				out[k++] = ch;
		}
	}
	return k;
}

/* The BMC password of c (from the file or testbedd's environment), as the
 * ipmi power driver reads it. */
static int sol_password(struct console *c, char *buf, size_t sz, struct tb_error *err)
{
	struct tb_machine m = {.name = c->name};
	struct tb_power_method pm = {.driver = TB_POWER_IPMI,
				     .address = c->bmc_address,
				     .user = c->bmc_user,
				     .password_file = c->bmc_password_file[0] ? c->bmc_password_file : NULL,
				     .password_env = c->bmc_password_env[0] ? c->bmc_password_env : NULL};
	struct tb_power_call call = {.m = &m, .pm = &pm};
	int rc = tb_power_read_password(&call, buf, sz, err);

	if (rc == 0 && strlen(buf) > IPMI_PASSWORD_MAX)
		rc = tb_fail(err, TB_ERR_CONFIG, "password", "%s: the BMC password is longer than %d bytes", c->name,
			     IPMI_PASSWORD_MAX);
	return rc;
}

/* ipmitool's argv for verb ("activate", "deactivate") into argv (17).
 * activate runs under `stdbuf -o0`: ipmitool's stdout to a pipe is block
 * buffered and flushed only when the console says something, so on a quiet
 * console "SOL Session operational" (our sign that the session is up) and
 * "[send break]" would wait in its buffer. */
static void sol_argv(struct console *c, const char *verb, char port[16], char suite[16], const char *argv[17])
{
	const char *a[] = {"stdbuf", "-o0",       "ipmitool", "-I", "lanplus", "-H",  c->bmc_address, "-p", port,
			   "-U",     c->bmc_user, "-E",       "-C", suite,     "sol", verb,           NULL};
	size_t skip = strcmp(verb, "activate") == 0 ? 0 : 2;

	snprintf(port, 16, "%u", c->bmc_port);
	snprintf(suite, 16, "%d", c->bmc_cipher_suite);
	memcpy(argv, a + skip, sizeof(a) - skip * sizeof(a[0]));
}

/* `sol deactivate`: end a SOL session the BMC still holds.  Canceled as
 * soon as the console stops (c->cs->closing): a stop or the service's close
 * waits for this thread while it holds the console list's lock, so it must
 * not wait out SOL_DEACTIVATE_MS on a BMC that does not answer. */
static void sol_deactivate(struct console *c, const char *env[])
{
	char port[16], suite[16];
	const char *argv[17];
	struct tb_proc_result r;
	struct tb_error err;

	sol_argv(c, "deactivate", port, suite, argv);
	if (tb_proc_run(argv, env, SOL_DEACTIVATE_MS, 4096, &c->cs->closing, &r, &err) == 0)
		tb_info("console", "%s: a SOL session was active on the BMC: deactivated (exit %d)", c->name,
			r.exit_status);
	else
		tb_warn("console", "%s: sol deactivate: %s", c->name, err.message);
	tb_proc_result_free(&r);
}

/* Keep the last non-empty line of ipmitool's words (not its tcgetattr
 * complaint: its stdin is a pipe) in said. */
static void keep_said(char *said, size_t sz, const char *buf, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || buf[i] == '\n' || buf[i] == '\r') {
			size_t len = i - start;

			if (len > 0 && strncmp(buf + start, "tcgetattr", 9) != 0) {
				if (len >= sz)
					len = sz - 1;
				memcpy(said, buf + start, len);
				said[len] = '\0';
			}
			start = i + 1;
		}
	}
}

/* Queued input onto the wire, a '~' at the start of a line doubled, then a
 * Break as "~B" (only at the start of a line).  Under c->mu. */
static size_t sol_take(struct console *c, unsigned char *out, size_t room, struct strip *brk)
{
	size_t k = 0, i = 0;

	for (; i < c->inlen && k + 2 <= room; i++) {
		unsigned char ch = c->inq[i];

		if (ch == '~' && c->bol)
			out[k++] = '~';
		out[k++] = ch;
		c->bol = ch == '\r' || ch == '\n';
	}
	memmove(c->inq, c->inq + i, c->inlen - i);
	c->inlen -= i;
	if (c->brk > 0 && c->inlen == 0 && k + 2 <= room) {
		c->brk--;
		if (c->bol) {
			out[k++] = '~';
			out[k++] = 'B';
			brk->armed++;
		} else {
			tb_warn("console", "%s: a Break not at the start of a line: not sent", c->name);
		}
	}
	return k;
}

struct sol {
	struct console *c;
	struct tb_proc_child ch;
	struct strip banner, brk;
	unsigned char wire[2 * TB_CONSOLE_QUEUE_MAX + 8];
	size_t wlen;
	char said[160];
	int connected;
};

/* ipmitool's stdout: the console, once the banner said the session is up.
 * 0 on end of file. */
static int sol_read_out(struct sol *s)
{
	unsigned char buf[4096], a[4096 + 64], b[4096 + 128];
	ssize_t n = read(s->ch.out, buf, sizeof(buf));
	size_t na, nb;

	if (n == 0)
		return 0;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : 0;
	na = strip_run(&s->banner, buf, (size_t)n, a);
	nb = strip_run(&s->brk, a, na, b);
	if (!s->connected && s->banner.armed == 0) {
		s->connected = 1;
		tb_info("console", "%s: SOL session operational (BMC %s:%u)", s->c->name, s->c->bmc_address,
			s->c->bmc_port);
		pthread_mutex_lock(&s->c->mu);
		s->c->bol = 1;
		console_set_state(s->c, 1, NULL);
		pthread_mutex_unlock(&s->c->mu);
	}
	if (!s->connected) {
		keep_said(s->said, sizeof(s->said), (const char *)b, nb);
	} else if (nb > 0) {
		pthread_mutex_lock(&s->c->mu);
		console_got(s->c, b, nb);
		pthread_mutex_unlock(&s->c->mu);
	}
	return 1;
}

/* Serve the session until ipmitool ends, the opening takes too long or the
 * service closes; why says which. */
static void sol_serve(struct sol *s, char *why, size_t whylen)
{
	struct console *c = s->c;
	int64_t open_until = tb_monotonic_ms() + SOL_OPEN_MS;
	int err_open = 1; /* 0 after stderr's end: poll would report it for ever (a busy loop) */

	while (!c->cs->closing) {
		struct pollfd p[4] = {{.fd = c->pipe[0], .events = POLLIN},
				      {.fd = s->ch.out, .events = POLLIN},
				      {.fd = err_open ? s->ch.err : -1, .events = POLLIN},
				      {.fd = s->ch.in, .events = POLLOUT}};

		if (s->connected) {
			pthread_mutex_lock(&c->mu);
			s->wlen += sol_take(c, s->wire + s->wlen, sizeof(s->wire) - s->wlen, &s->brk);
			pthread_mutex_unlock(&c->mu);
		}
		if (poll(p, s->wlen > 0 ? 4 : 3, 1000) < 0 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			return;
		}
		if (p[0].revents & POLLIN) {
			char b[64];

			while (read(c->pipe[0], b, sizeof(b)) > 0) {
			}
		}
		if (p[2].revents & (POLLIN | POLLHUP)) {
			char e[1024];
			ssize_t n = read(s->ch.err, e, sizeof(e));

			if (n > 0)
				keep_said(s->said, sizeof(s->said), e, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				err_open = 0;
		}
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !sol_read_out(s)) {
			snprintf(why, whylen, "ipmitool sol activate ended%s%s", s->said[0] ? ": " : "", s->said);
			return;
		}
		if (s->wlen > 0 && (p[3].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = write(s->ch.in, s->wire, s->wlen);

			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(why, whylen, "writing to ipmitool: %s", strerror(errno));
				return;
			}
			if (n > 0) {
				memmove(s->wire, s->wire + n, s->wlen - (size_t)n);
				s->wlen -= (size_t)n;
			}
		}
		if (!s->connected && tb_monotonic_ms() > open_until) {
			snprintf(why, whylen, "no SOL session within %ld s%s%s", SOL_OPEN_MS / 1000,
				 s->said[0] ? ": " : "", s->said);
			return;
		}
	}
}

int console_sol_session(struct console *c, char *why, size_t whylen)
{
	char password[256], env_pw[sizeof("IPMI_PASSWORD=") + sizeof(password)], port[16], suite[16];
	const char *env[] = {env_pw, NULL}, *argv[17];
	struct sol *s;
	struct tb_error err;
	int connected, rc;

	if (!tb_valid_address(c->bmc_address) || c->bmc_address[0] == '-' || !tb_valid_user(c->bmc_user) ||
	    c->bmc_user[0] == '-') {
		snprintf(why, whylen, "the ipmi power entry needs a valid address and user for SOL");
		return 0;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return 0;
	}
	if (sol_password(c, password, sizeof(password), &err) != 0) {
		snprintf(why, whylen, "%s", err.message);
		tb_wipe(password, sizeof(password));
		free(s);
		return 0;
	}
	snprintf(env_pw, sizeof(env_pw), "IPMI_PASSWORD=%s", password);
	tb_wipe(password, sizeof(password));
	sol_argv(c, "activate", port, suite, argv);
	s->c = c;
	s->banner = (struct strip){"[SOL Session operational.  Use ~? for help]", 43, 0, 1};
	s->brk = (struct strip){"~B [send break]", 15, 0, 0};
	pthread_mutex_lock(&c->mu);
	c->inlen = 0; /* typed while it was away: not for the new session */
	c->brk = 0;
	pthread_mutex_unlock(&c->mu);
	if ((rc = tb_proc_spawn(argv, env, &s->ch, &err)) != 0) {
		snprintf(why, whylen, "%s", err.message);
	} else {
		tb_debug("console", "%s: ipmitool sol activate started (pid %ld)", c->name, (long)s->ch.pid);
		sol_serve(s, why, whylen);
		tb_proc_child_end(&s->ch, SOL_GRACE_MS, NULL);
		if (strstr(why, "already active") != NULL && !c->cs->closing)
			sol_deactivate(c, env);
	}
	tb_wipe(env_pw, sizeof(env_pw));
	connected = s->connected;
	free(s);
	return connected;
}
