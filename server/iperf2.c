/*
 * iperf2.c - iperf 2's version and the command lines testbedd runs it with:
 * see iperf2.h.  The parser is iperf2_parse.c.
 */
#include "iperf2.h"

#include <stdio.h>
#include <string.h>

#define UDP_DEFAULT_LEN 1470L            /* iperf2's IPv4 UDP datagram */
#define UDP_DEFAULT_LEN6 1450L           /* iperf2's IPv6 UDP datagram */
#define UDP_UNLIMITED_BPS "100000000000" /* "0" for iperf2 UDP: as fast as it can */

int tb_iperf2_version_parse(const char *text, char *out, size_t len, struct tb_error *err)
{
	const char *v = text != NULL ? strstr(text, "iperf version 2.") : NULL;
	size_t n;

	if (v == NULL)
		return tb_fail(err, TB_ERR_INVALID, "version", "not iperf 2: `iperf -v` printed \"%.60s\"",
			       text != NULL ? text : "");
	v += strlen("iperf version ");
	n = strspn(v, "0123456789.");
	if (n == 0 || n >= len)
		return tb_fail(err, TB_ERR_INVALID, "version", "not iperf 2: no version number");
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

/* A whole number as one word. */
static int addn(struct tb_argv *a, long v)
{
	char w[32];

	snprintf(w, sizeof(w), "%ld", v);
	return tb_argv_add(a, w);
}

/* iperf3's -b (1000-based "1.5G", no /burst here) in plain bits/s. */
static int bitrate_bps(const char *s, char *out, size_t len)
{
	double v = 0, scale = 1, mult = 1;
	const char *p = s;
	bool frac = false;

	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !frac); p++) {
		if (*p == '.') {
			frac = true;
			continue;
		}
		if (frac)
			v += (*p - '0') * (scale /= 10);
		else
			v = v * 10 + (*p - '0');
	}
	switch (*p) {
	case 'k':
	case 'K':
		mult = 1e3;
		p++;
		break;
	case 'm':
	case 'M':
		mult = 1e6;
		p++;
		break;
	case 'g':
	case 'G':
		mult = 1e9;
		p++;
		break;
	case 't':
	case 'T':
		mult = 1e12;
		p++;
		break;
	default: break;
	}
	if (*p != '\0' || p == s)
		return -1;
	snprintf(out, len, "%.0f", v * mult);
	return 0;
}

/* What iperf2 cannot do as testbedd runs it: the field and why. */
static int refuse(const struct tb_iperf_params *p, struct tb_error *err)
{
	if (p->dir == TB_IPERF_BIDIR)
		return tb_fail(err, TB_ERR_INVALID, "direction",
			       "direction bidir is iperf3's --bidir; iperf2 (tool) runs forward or reverse");
	if (p->omit_s > 0)
		return tb_fail(err, TB_ERR_INVALID, "omit_s", "omit_s is iperf3's -O; iperf2 (tool) has none");
	if (p->zerocopy)
		return tb_fail(err, TB_ERR_INVALID, "zerocopy", "zerocopy is iperf3's -Z; iperf2 (tool) has none");
	if (p->affinity[0] != '\0')
		return tb_fail(err, TB_ERR_INVALID, "affinity", "affinity is iperf3's -A; iperf2 (tool) has none");
	if (strchr(p->bitrate, '/') != NULL)
		return tb_fail(err, TB_ERR_INVALID, "bitrate", "bitrate /burst is iperf3's; iperf2 (tool) has none");
	return 0;
}

/* iperf2's own default over IPv6 is 1450 (1470 + 48 bytes of headers would
 * not fit a 1500-byte MTU unfragmented). */
static long udp_len(const struct tb_iperf_params *p)
{
	return p->length > 0 ? p->length : p->family == 6 ? UDP_DEFAULT_LEN6 : UDP_DEFAULT_LEN;
}

int tb_iperf2_params_args(const struct tb_iperf_params *p, struct tb_argv *a, struct tb_error *err)
{
	char bps[32];
	int rc, bad;

	tb_argv_reset(a);
	if ((rc = tb_iperf_params_check(p, err)) != 0 || (rc = refuse(p, err)) != 0)
		return rc;
	bad = tb_argv_add(a, "-t") || addn(a, p->duration_s) || tb_argv_add(a, "-i") ||
	      addn(a, p->interval_s > 1 ? p->interval_s : 1) || tb_argv_add(a, "-e");
	if (p->proto == TB_IPERF_UDP) {
		bad = bad || tb_argv_add(a, "-u");
		if (p->bitrate[0] != '\0' && strcmp(p->bitrate, "0") != 0) {
			if (bitrate_bps(p->bitrate, bps, sizeof(bps)) != 0)
				return tb_fail(err, TB_ERR_INVALID, "bitrate", "bitrate \"%s\" is not a rate",
					       p->bitrate);
			bad = bad || tb_argv_add(a, "-b") || tb_argv_add(a, bps);
		} else if (p->bitrate[0] != '\0') {
			bad = bad || tb_argv_add(a, "-b") || tb_argv_add(a, UDP_UNLIMITED_BPS);
		}
		bad = bad || tb_argv_add(a, "-l") || addn(a, udp_len(p));
	} else {
		if (p->bitrate[0] != '\0' && strcmp(p->bitrate, "0") != 0) {
			if (bitrate_bps(p->bitrate, bps, sizeof(bps)) != 0)
				return tb_fail(err, TB_ERR_INVALID, "bitrate", "bitrate \"%s\" is not a rate",
					       p->bitrate);
			bad = bad || tb_argv_add(a, "-b") || tb_argv_add(a, bps);
		}
		if (p->length > 0)
			bad = bad || tb_argv_add(a, "-l") || addn(a, p->length);
	}
	if (p->window > 0)
		bad = bad || tb_argv_add(a, "-w") || addn(a, p->window);
	if (p->dir == TB_IPERF_REVERSE)
		bad = bad || tb_argv_add(a, "-R");
	if (p->parallel > 1)
		bad = bad || tb_argv_add(a, "-P") || addn(a, p->parallel);
	if (p->tos >= 0)
		bad = bad || tb_argv_add(a, "-S") || addn(a, p->tos);
	if (p->congestion[0] != '\0')
		bad = bad || tb_argv_add(a, "-Z") || tb_argv_add(a, p->congestion);
	if (p->family == 6)
		bad = bad || tb_argv_add(a, "-V");
	if (bad) {
		tb_argv_reset(a);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "iperf command line too long");
	}
	return 0;
}

int tb_iperf2_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			  struct tb_error *err)
{
	struct tb_argv opts;
	int rc, bad;

	if ((rc = tb_iperf2_params_args(p, &opts, err)) != 0)
		return rc;
	tb_argv_reset(out);
	bad = tb_argv_add(out, "iperf") || tb_argv_add(out, "-c") || tb_argv_add(out, addr) || tb_argv_add(out, "-p") ||
	      addn(out, (long)port);
	for (int i = 0; i < opts.n && !bad; i++)
		bad = tb_argv_add(out, opts.v[i]);
	if (bad) {
		tb_argv_reset(out);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "iperf command line too long");
	}
	return 0;
}

int tb_iperf2_server_argv(const struct tb_iperf_params *p, unsigned int port, struct tb_argv *out, struct tb_error *err)
{
	int rc, bad;

	tb_argv_reset(out);
	if ((rc = tb_iperf_params_check(p, err)) != 0 || (rc = refuse(p, err)) != 0)
		return rc;
	bad = tb_argv_add(out, "iperf") || tb_argv_add(out, "-s");
	if (p->proto == TB_IPERF_UDP)
		bad = bad || tb_argv_add(out, "-u") || tb_argv_add(out, "-l") || addn(out, udp_len(p));
	else if (p->length > 0)
		bad = bad || tb_argv_add(out, "-l") || addn(out, p->length);
	if (p->window > 0)
		bad = bad || tb_argv_add(out, "-w") || addn(out, p->window);
	bad = bad || tb_argv_add(out, "-i") || tb_argv_add(out, "1") || tb_argv_add(out, "-e") ||
	      tb_argv_add(out, "-p") || addn(out, (long)port);
	/* without -V iperf 2 listens on IPv4 only ("-V: can receive on both IPv4 and IPv6") */
	if (p->family == 6)
		bad = bad || tb_argv_add(out, "-V");
	if (bad) {
		tb_argv_reset(out);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "iperf command line too long");
	}
	return 0;
}
