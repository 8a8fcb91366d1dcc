/*
 * iperf.c - what an iperf3 version can do, the command lines testbedd runs
 * it with, and the class of its error texts: see iperf.h.  The parsers are
 * in iperf_parse.c (-J, --json-stream) and iperf_text.c (text).
 */
#include "iperf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- versions ---- */

static bool at_least(const struct tb_iperf_caps *c, int major, int minor, int patch)
{
	if (c->major != major)
		return c->major > major;
	if (c->minor != minor)
		return c->minor > minor;
	return c->patch >= patch;
}

/* "12" -> 12; -1 unless 1..4 digits. */
static int small_int(const char **p)
{
	int n = 0, digits = 0;

	while (**p >= '0' && **p <= '9' && digits < 5) {
		n = n * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	return digits >= 1 && digits <= 4 ? n : -1;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The version line "iperf 3.12 (cJSON 1.7.15)" and, when given, the uname
 * line that `iperf3 --version` prints next ("Linux vm 6.1.0 ..."). */
int tb_iperf_caps_parse(const char *version_output, struct tb_iperf_caps *caps, struct tb_error *err)
{
	const char *line = version_output, *found = NULL;
	bool on_linux = false;
	char first[48];
	size_t n;

	memset(caps, 0, sizeof(*caps));
	if (version_output == NULL)
		return tb_fail(err, TB_ERR_INVALID, "version", "no iperf3 --version output");
	while (*line != '\0') {
		size_t len = strcspn(line, "\r\n");

		if (found == NULL && starts_with(line, "iperf "))
			found = line;
		/* "Linux" alone is what `uname -s` prints before it. */
		if (starts_with(line, "Linux") && (len == 5 || line[5] == ' '))
			on_linux = true;
		line += len;
		line += strspn(line, "\r\n");
	}
	if (found == NULL) {
		n = strcspn(version_output, "\r\n");
		if (n >= sizeof(first))
			n = sizeof(first) - 1;
		memcpy(first, version_output, n);
		first[n] = '\0';
		return tb_fail(err, TB_ERR_INVALID, "version", "not iperf3 3.x: `iperf3 --version` printed \"%s\"",
			       first);
	}
	line = found + strlen("iperf ");
	n = strcspn(line, " \t\r\n(");
	if (n >= sizeof(caps->version))
		n = sizeof(caps->version) - 1;
	memcpy(caps->version, line, n);
	caps->version[n] = '\0';
	caps->major = small_int(&line);
	if (*line == '.') {
		line++;
		caps->minor = small_int(&line);
	} else {
		caps->minor = -1;
	}
	if (*line == '.') {
		line++;
		caps->patch = small_int(&line);
	}
	if (caps->major != 3 || caps->minor < 0 || caps->patch < 0) {
		char v[sizeof(caps->version)];

		memcpy(v, caps->version, sizeof(v));
		memset(caps, 0, sizeof(*caps));
		return tb_fail(err, TB_ERR_INVALID, "version", "not iperf3 3.x: the version is \"%s\"", v);
	}
	caps->json_stream = at_least(caps, 3, 17, 0);
	caps->bidir = at_least(caps, 3, 7, 0);
	/* Only where TCP_USER_TIMEOUT exists (Linux); elsewhere iperf3 calls
	 * the option unrecognized. */
	caps->snd_timeout = at_least(caps, 3, 12, 0) && on_linux;
	caps->rcv_timeout = at_least(caps, 3, 10, 0);
	caps->idle_timeout = at_least(caps, 3, 11, 0);
	caps->connect_timeout = at_least(caps, 3, 2, 0);
	caps->udp_sum_sent = at_least(caps, 3, 11, 0);
	caps->max_omit_s = at_least(caps, 3, 18, 0) ? 600 : 60;
	return 0;
}

/* ---- command lines ---- */

static int add(struct tb_argv *a, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static int add(struct tb_argv *a, const char *fmt, ...)
{
	size_t room = sizeof(a->buf) - a->used;
	va_list ap;
	int w;

	if (a->n >= TB_ARGV_MAX || room == 0)
		return -1;
	va_start(ap, fmt);
	w = vsnprintf(a->buf + a->used, room, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= room)
		return -1;
	a->v[a->n++] = a->buf + a->used;
	a->v[a->n] = NULL;
	a->used += (size_t)w + 1;
	return 0;
}

static void argv_reset(struct tb_argv *a)
{
	a->n = 0;
	a->used = 0;
	a->v[0] = NULL;
}

static int full(struct tb_argv *a, struct tb_error *err)
{
	argv_reset(a);
	return tb_fail(err, TB_ERR_INTERNAL, NULL, "iperf3 command line longer than %d words or %d bytes", TB_ARGV_MAX,
		       TB_ARGV_BUF);
}

/* Every character of s is in set (and s is 1..max-1 long). */
static bool only(const char *s, size_t max, const char *set)
{
	size_t n = strnlen(s, max);

	return n > 0 && n < max && strspn(s, set) == n;
}

#define DIGITS "0123456789"

/* iperf3's -b: 1000-based, optional /burst: "0", "100M", "1.5G", "10M/100". */
static bool valid_bitrate(const char *s)
{
	const char *p = s;

	if (*p < '0' || *p > '9')
		return false;
	p += strspn(p, DIGITS);
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		p += strspn(p, DIGITS);
	}
	if (*p != '\0' && strchr("KMGTkmgt", *p) != NULL)
		p++;
	if (*p == '/') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		p += strspn(p, DIGITS);
	}
	return *p == '\0';
}

/* -A "n" or "n,m". */
static bool valid_affinity(const char *s)
{
	size_t n = strspn(s, DIGITS);

	if (n == 0 || n > 4)
		return false;
	if (s[n] == '\0')
		return true;
	if (s[n] != ',')
		return false;
	s += n + 1;
	n = strspn(s, DIGITS);
	return n > 0 && n <= 4 && s[n] == '\0';
}

static int check_params(const struct tb_iperf_params *p, struct tb_error *err)
{
	if (p->proto != TB_IPERF_TCP && p->proto != TB_IPERF_UDP)
		return tb_fail(err, TB_ERR_INVALID, "protocol", "protocol must be tcp or udp, got %d", (int)p->proto);
	if (p->dir != TB_IPERF_FORWARD && p->dir != TB_IPERF_REVERSE && p->dir != TB_IPERF_BIDIR)
		return tb_fail(err, TB_ERR_INVALID, "direction", "direction must be forward, reverse or bidir, got %d",
			       (int)p->dir);
	if (p->family != 0 && p->family != 4 && p->family != 6)
		return tb_fail(err, TB_ERR_INVALID, "family", "family must be 4 or 6, got %d", p->family);
	if (p->duration_s < 1 || p->duration_s > 86400)
		return tb_fail(err, TB_ERR_INVALID, "duration_s", "duration_s must be 1..86400 seconds, got %d",
			       p->duration_s);
	if (p->omit_s < 0 || p->omit_s > 600)
		return tb_fail(err, TB_ERR_INVALID, "omit_s", "omit_s must be 0..600 seconds, got %d", p->omit_s);
	if (p->parallel < 1 || p->parallel > 128)
		return tb_fail(err, TB_ERR_INVALID, "parallel", "parallel must be 1..128 streams, got %d", p->parallel);
	if (p->length < 0 || p->length > 1048576)
		return tb_fail(err, TB_ERR_INVALID, "length", "length must be 1..1048576 bytes (0: unset), got %ld",
			       p->length);
	if (p->proto == TB_IPERF_UDP && p->length > 65507)
		return tb_fail(err, TB_ERR_INVALID, "length",
			       "length of a UDP run must be at most 65507 bytes, got %ld", p->length);
	if (p->window < 0 || p->window > 536870912)
		return tb_fail(err, TB_ERR_INVALID, "window",
			       "window must be 1..536870912 bytes (iperf3's limit; 0: unset), got %ld", p->window);
	if (strnlen(p->bitrate, sizeof(p->bitrate)) >= sizeof(p->bitrate) ||
	    (p->bitrate[0] != '\0' && !valid_bitrate(p->bitrate)))
		return tb_fail(err, TB_ERR_INVALID, "bitrate",
			       "bitrate must be a number with an optional K, M, G or T (and /burst), like \"100M\"");
	if (p->congestion[0] != '\0' && !only(p->congestion, sizeof(p->congestion),
					      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DIGITS "_-."))
		return tb_fail(err, TB_ERR_INVALID, "congestion",
			       "congestion must be an algorithm name (letters, digits, _ - .), like \"cubic\"");
	if (p->tos < -1 || p->tos > 255)
		return tb_fail(err, TB_ERR_INVALID, "tos", "tos must be 0..255 (-1: unset), got %d", p->tos);
	if (strnlen(p->affinity, sizeof(p->affinity)) >= sizeof(p->affinity) ||
	    (p->affinity[0] != '\0' && !valid_affinity(p->affinity)))
		return tb_fail(err, TB_ERR_INVALID, "affinity", "affinity must be \"n\" or \"n,m\" (CPU numbers)");
	if (p->interval_s < 0 || p->interval_s > 60)
		return tb_fail(err, TB_ERR_INVALID, "interval_s", "interval_s must be 1..60 seconds, got %d",
			       p->interval_s);
	return 0;
}

/* The client options of p, appended to a (p already checked). */
static int add_params(struct tb_argv *a, const struct tb_iperf_params *p)
{
	int bad;

	bad = add(a, "-t") || add(a, "%d", p->duration_s);
	if (p->omit_s > 0)
		bad = bad || add(a, "-O") || add(a, "%d", p->omit_s);
	if (p->proto == TB_IPERF_UDP)
		bad = bad || add(a, "-u");
	if (p->bitrate[0] != '\0')
		bad = bad || add(a, "-b") || add(a, "%s", p->bitrate);
	if (p->dir == TB_IPERF_REVERSE)
		bad = bad || add(a, "-R");
	else if (p->dir == TB_IPERF_BIDIR)
		bad = bad || add(a, "--bidir");
	if (p->parallel > 1)
		bad = bad || add(a, "-P") || add(a, "%d", p->parallel);
	if (p->length > 0)
		bad = bad || add(a, "-l") || add(a, "%ld", p->length);
	if (p->window > 0)
		bad = bad || add(a, "-w") || add(a, "%ld", p->window);
	if (p->congestion[0] != '\0')
		bad = bad || add(a, "-C") || add(a, "%s", p->congestion);
	if (p->tos >= 0)
		bad = bad || add(a, "-S") || add(a, "%d", p->tos);
	if (p->zerocopy)
		bad = bad || add(a, "-Z");
	if (p->affinity[0] != '\0')
		bad = bad || add(a, "-A") || add(a, "%s", p->affinity);
	if (p->interval_s > 1)
		bad = bad || add(a, "-i") || add(a, "%d", p->interval_s);
	if (p->family == 6)
		bad = bad || add(a, "-6");
	return bad != 0 ? -1 : 0;
}

int tb_iperf_params_args(const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	int rc;

	argv_reset(out);
	if ((rc = check_params(p, err)) != 0)
		return rc;
	if (add_params(out, p) != 0)
		return full(out, err);
	return 0;
}

int tb_iperf_server_argv(const struct tb_iperf_caps *caps, unsigned int port, int idle_timeout_s, struct tb_argv *out,
			 struct tb_error *err)
{
	int bad = 0;

	argv_reset(out);
	/* -1 is 3.0.11, --forceflush 3.1.5: without them no live server output. */
	if (!at_least(caps, 3, 1, 5))
		return tb_fail(err, TB_ERR_INVALID, "version",
			       "iperf3 %s is too old to be a server here: --forceflush needs 3.1.5 or later",
			       caps->version);
	if (port < 1 || port > 65535)
		return tb_fail(err, TB_ERR_INVALID, "port", "port must be 1..65535, got %u", port);
	if (idle_timeout_s < 0 || idle_timeout_s > 86400)
		return tb_fail(err, TB_ERR_INVALID, "idle_timeout_s", "idle_timeout_s must be 0..86400, got %d",
			       idle_timeout_s);
	bad = bad || add(out, "iperf3") || add(out, "-s") || add(out, "-1") || add(out, "-p") || add(out, "%u", port);
	if (caps->idle_timeout && idle_timeout_s > 0)
		bad = bad || add(out, "--idle-timeout") || add(out, "%d", idle_timeout_s);
	bad = bad || add(out, "--forceflush") || add(out, "-i") || add(out, "1");
	return bad != 0 ? full(out, err) : 0;
}

int tb_iperf_client_argv(const struct tb_iperf_caps *caps, const char *server_addr, unsigned int port,
			 const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	int rc, bad = 0;

	argv_reset(out);
	if (server_addr == NULL ||
	    !only(server_addr, 64, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DIGITS ".:-_%"))
		return tb_fail(err, TB_ERR_INVALID, "server_address",
			       "the server address must be an IP address or host name, got \"%.64s\"",
			       server_addr != NULL ? server_addr : "");
	if (server_addr[0] == '-')
		return tb_fail(err, TB_ERR_INVALID, "server_address", "the server address must not start with -");
	if (port < 1 || port > 65535)
		return tb_fail(err, TB_ERR_INVALID, "port", "port must be 1..65535, got %u", port);
	if ((rc = check_params(p, err)) != 0)
		return rc;
	if (p->dir == TB_IPERF_BIDIR && !caps->bidir)
		return tb_fail(err, TB_ERR_INVALID, "direction", "--bidir needs iperf3 3.7 or later; this host has %s",
			       caps->version);
	if (p->omit_s > caps->max_omit_s)
		return tb_fail(err, TB_ERR_INVALID, "omit_s", "iperf3 %s takes -O up to %d seconds, got %d",
			       caps->version, caps->max_omit_s, p->omit_s);
	bad = add(out, "iperf3") || add(out, "-c") || add(out, "%s", server_addr) || add(out, "-p") ||
	      add(out, "%u", port) || add_params(out, p);
	if (caps->connect_timeout)
		bad = bad || add(out, "--connect-timeout") || add(out, "%d", TB_IPERF_CONNECT_TIMEOUT_MS);
	/* iperf3 (3.10-3.21) refuses a client --rcv-timeout unless the client
	 * receives: "client receive timeout is valid only in receiving mode". */
	if (caps->rcv_timeout && p->dir != TB_IPERF_FORWARD)
		bad = bad || add(out, "--rcv-timeout") || add(out, "%d", TB_IPERF_RCV_TIMEOUT_MS);
	/* TCP_USER_TIMEOUT on the client's TCP data sockets; UDP ignores it. */
	if (caps->snd_timeout && p->proto == TB_IPERF_TCP)
		bad = bad || add(out, "--snd-timeout") || add(out, "%d", TB_IPERF_SND_TIMEOUT_MS);
	bad = bad || add(out, "%s", caps->json_stream ? "--json-stream" : "-J");
	return bad != 0 ? full(out, err) : 0;
}

/* ---- errors ---- */

enum tb_iperf_errclass tb_iperf_classify(const char *error_text)
{
	const char *s = error_text;

	if (s == NULL || *s == '\0')
		return TB_IPERF_ERR_NONE;
	/* Text output says "iperf3: error - ..." where -J says "...". */
	if (starts_with(s, "iperf3: "))
		s += strlen("iperf3: ");
	if (starts_with(s, "error - "))
		s += strlen("error - ");
	if (strstr(s, "server is busy") != NULL)
		return TB_IPERF_ERR_BUSY;
	/* 3.12 "unable to connect to server: Connection refused"; 3.21 adds
	 * " - server may have stopped running or ..." before the colon. */
	if (starts_with(s, "unable to connect to server") && strstr(s, "Connection refused") != NULL)
		return TB_IPERF_ERR_REFUSED;
	/* 3.12 "interrupt - the client has terminated", 3.21 adds " by signal
	 * Interrupt(2)"; a server's own SIGTERM is "interrupt - the server ...". */
	if (starts_with(s, "interrupt - "))
		return TB_IPERF_ERR_INTERRUPT;
	/* --rcv-timeout: "idle timeout for receiving data"; --connect-timeout
	 * and --snd-timeout end in strerror(ETIMEDOUT). */
	if (strstr(s, "idle timeout for receiving data") != NULL || strstr(s, "timed out") != NULL)
		return TB_IPERF_ERR_TIMEOUT;
	return TB_IPERF_ERR_OTHER;
}

/* ---- shared with the other traffic tools (iperf2.c) ---- */

int tb_iperf_params_check(const struct tb_iperf_params *p, struct tb_error *err)
{
	return check_params(p, err);
}

int tb_argv_add(struct tb_argv *a, const char *word)
{
	return add(a, "%s", word);
}

void tb_argv_reset(struct tb_argv *a)
{
	argv_reset(a);
}
