/*
 * netperf.c - netperf's version, the command lines testbedd runs it with,
 * and the parser of its omni output: see netperf.h.
 */
#include "netperf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSEL 13        /* the most fields of a selectors line (TB_NETPERF_RR_SELECTORS) */
#define NSEL_STREAM 12 /* TB_NETPERF_SELECTORS */
enum { F_THR, F_UNITS, F_ELAPSED, F_PROTO, F_DIR, F_LSENT, F_LCALLS, F_LRECVD, F_RSENT, F_RRECVD, F_RCALLS, F_RETR };
enum { R_THR, R_UNITS, R_ELAPSED, R_PROTO, R_RATE, R_MEAN, R_P50, R_P90, R_P99, R_REQ, R_RESP, R_LSENT, R_LRECVD };

int tb_netperf_version_parse(const char *text, char *out, size_t len, struct tb_error *err)
{
	const char *v = text != NULL ? strstr(text, "Netperf version ") : NULL;
	size_t n;

	if (v == NULL)
		return tb_fail(err, TB_ERR_INVALID, "version", "not netperf: `netperf -V` printed \"%.60s\"",
			       text != NULL ? text : "");
	v += strlen("Netperf version ");
	n = strspn(v, "0123456789.");
	if (n == 0 || n >= len)
		return tb_fail(err, TB_ERR_INVALID, "version", "not netperf: no version number");
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

const char *tb_netperf_test(const struct tb_iperf_params *p, struct tb_error *err)
{
	if (p->dir == TB_IPERF_BIDIR) {
		tb_fail(err, TB_ERR_INVALID, "direction",
			"direction bidir is iperf3's --bidir; netperf (tool) runs forward or reverse");
		return NULL;
	}
	if (p->proto == TB_IPERF_UDP) {
		if (p->dir == TB_IPERF_REVERSE) {
			tb_fail(err, TB_ERR_INVALID, "direction",
				"netperf (tool) has no reverse UDP test (no UDP_MAERTS): run udp forward");
			return NULL;
		}
		return "UDP_STREAM";
	}
	return p->dir == TB_IPERF_REVERSE ? "TCP_MAERTS" : "TCP_STREAM";
}

const char *tb_netperf_rr_test(const struct tb_iperf_params *p, struct tb_error *err)
{
	if (p->dir != TB_IPERF_FORWARD) {
		tb_fail(err, TB_ERR_INVALID, "direction",
			"netperf-rr (tool) runs forward only: the client asks, the server answers");
		return NULL;
	}
	return p->proto == TB_IPERF_UDP ? "UDP_RR" : "TCP_RR";
}

/* What netperf cannot do as testbedd runs it: the field and why. */
static int refuse(const struct tb_iperf_params *p, bool rr, struct tb_error *err)
{
	if (p->parallel > 1)
		return tb_fail(err, TB_ERR_INVALID, "parallel",
			       "parallel is iperf's -P; a netperf (tool) test is one connection");
	if (p->omit_s > 0)
		return tb_fail(err, TB_ERR_INVALID, "omit_s", "omit_s is iperf3's -O; netperf (tool) has none");
	if (p->zerocopy)
		return tb_fail(err, TB_ERR_INVALID, "zerocopy", "zerocopy is iperf3's -Z; netperf (tool) has none");
	if (p->bitrate[0] != '\0' && strcmp(p->bitrate, "0") != 0)
		return tb_fail(err, TB_ERR_INVALID, "bitrate",
			       "netperf (tool) sends as fast as it can (a rate needs a netperf built with "
			       "--enable-intervals): unset bitrate or give 0");
	return (rr ? tb_netperf_rr_test(p, err) : tb_netperf_test(p, err)) == NULL ? TB_ERR_INVALID : 0;
}

static int addn(struct tb_argv *a, long v)
{
	char w[32];

	snprintf(w, sizeof(w), "%ld", v);
	return tb_argv_add(a, w);
}

/* "L,R" of both values (netperf's local,remote pairs). */
static int add_pair(struct tb_argv *a, const char *l, const char *r)
{
	char w[64];

	snprintf(w, sizeof(w), "%s,%s", l, r);
	return tb_argv_add(a, w);
}

static int args(const struct tb_iperf_params *p, bool rr, struct tb_argv *a, struct tb_error *err)
{
	char tos[16], cpu[24], len[24];
	int rc, bad;

	tb_argv_reset(a);
	if ((rc = tb_iperf_params_check(p, err)) != 0 || (rc = refuse(p, rr, err)) != 0)
		return rc;
	bad = tb_argv_add(a, "-t") || tb_argv_add(a, rr ? tb_netperf_rr_test(p, err) : tb_netperf_test(p, err)) ||
	      tb_argv_add(a, "-l") || addn(a, p->duration_s) || tb_argv_add(a, "-f") || tb_argv_add(a, "k") ||
	      tb_argv_add(a, "-P") || tb_argv_add(a, "0");
	if (p->family == 6)
		bad = bad || tb_argv_add(a, "-6");
	if (p->affinity[0] != '\0') { /* iperf3's -A n (both ends) or n,m */
		snprintf(cpu, sizeof(cpu), "%s", p->affinity);
		bad = bad || tb_argv_add(a, "-T") ||
		      (strchr(cpu, ',') != NULL ? tb_argv_add(a, cpu) : add_pair(a, cpu, cpu));
	}
	bad = bad || tb_argv_add(a, "--") || tb_argv_add(a, "-o") ||
	      tb_argv_add(a, rr ? TB_NETPERF_RR_SELECTORS : TB_NETPERF_SELECTORS);
	if (rr && p->length > 0) { /* the request and the response */
		snprintf(len, sizeof(len), "%ld", (long)p->length);
		bad = bad || tb_argv_add(a, "-r") || add_pair(a, len, len);
	} else if (!rr && p->proto == TB_IPERF_UDP) {
		bad = bad || tb_argv_add(a, "-m") || addn(a, p->length > 0 ? p->length : TB_NETPERF_UDP_LEN);
	} else if (!rr && p->length > 0) {
		bad = bad || tb_argv_add(a, "-m") || addn(a, p->length);
	}
	if (p->window > 0)
		bad = bad || tb_argv_add(a, "-s") || addn(a, p->window) || tb_argv_add(a, "-S") || addn(a, p->window);
	if (p->tos >= 0) {
		snprintf(tos, sizeof(tos), "%d", p->tos);
		bad = bad || tb_argv_add(a, "-Y") || add_pair(a, tos, tos);
	}
	if (p->congestion[0] != '\0')
		bad = bad || tb_argv_add(a, "-K") || tb_argv_add(a, p->congestion);
	if (bad) {
		tb_argv_reset(a);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "netperf command line too long");
	}
	return 0;
}

int tb_netperf_params_args(const struct tb_iperf_params *p, struct tb_argv *a, struct tb_error *err)
{
	return args(p, false, a, err);
}

int tb_netperf_rr_params_args(const struct tb_iperf_params *p, struct tb_argv *a, struct tb_error *err)
{
	return args(p, true, a, err);
}

static int client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, bool rr,
		       struct tb_argv *out, struct tb_error *err)
{
	struct tb_argv opts;
	int rc, bad;

	if ((rc = args(p, rr, &opts, err)) != 0)
		return rc;
	tb_argv_reset(out);
	bad = tb_argv_add(out, "netperf") || tb_argv_add(out, "-H") || tb_argv_add(out, addr) ||
	      tb_argv_add(out, "-p") || addn(out, (long)port);
	for (int i = 0; i < opts.n && !bad; i++)
		bad = tb_argv_add(out, opts.v[i]);
	if (bad) {
		tb_argv_reset(out);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "netperf command line too long");
	}
	return 0;
}

int tb_netperf_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			   struct tb_error *err)
{
	return client_argv(addr, port, p, false, out, err);
}

int tb_netperf_rr_client_argv(const char *addr, unsigned int port, const struct tb_iperf_params *p, struct tb_argv *out,
			      struct tb_error *err)
{
	return client_argv(addr, port, p, true, out, err);
}

int tb_netperf_server_argv(const struct tb_iperf_params *p, unsigned int port, struct tb_argv *out,
			   struct tb_error *err)
{
	int rc, bad;

	tb_argv_reset(out);
	if ((rc = tb_iperf_params_check(p, err)) != 0 || (rc = refuse(p, false, err)) != 0)
		return rc;
	bad = tb_argv_add(out, "netserver") || tb_argv_add(out, "-D") || tb_argv_add(out, "-p") ||
	      addn(out, (long)port);
	if (p->family == 6)
		bad = bad || tb_argv_add(out, "-6");
	if (bad) {
		tb_argv_reset(out);
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "netserver command line too long");
	}
	return 0;
}

/* Cut line (in place) at commas into f[NSEL]; how many fields it had. */
static int split(char *line, char *f[NSEL])
{
	int n = 0;

	for (char *s = line, *c;; s = c + 1) {
		if (n < NSEL)
			f[n] = s;
		n++;
		if ((c = strchr(s, ',')) == NULL)
			break;
		*c = '\0';
	}
	return n;
}

/* A field as a number; -1 when it is not one (netperf prints -1 for what
 * it could not measure). */
static double val(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && *end == '\0' ? v : -1;
}

/* One end of the run: {bytes, bits_per_second, seconds[, packets]}. */
static json_t *end_of(double bytes, double secs, double packets)
{
	json_t *o = json_pack("{s:f, s:f, s:f}", "bytes", bytes, "bits_per_second", secs > 0 ? bytes * 8 / secs : 0,
			      "seconds", secs);

	if (o != NULL && packets >= 0)
		json_object_set_new(o, "packets", json_integer((json_int_t)packets));
	return o;
}

/* The values of f into end {sender, receiver}. */
static json_t *ends(char *f[NSEL])
{
	bool recv = strncmp(f[F_DIR], "Rec", 3) == 0; /* the server sent (TCP_MAERTS) */
	bool udp = strstr(f[F_PROTO], "UDP") != NULL;
	double secs = val(f[F_ELAPSED]);
	double sent = val(recv ? f[F_RSENT] : f[F_LSENT]), got = val(recv ? f[F_LRECVD] : f[F_RRECVD]);
	double scalls = udp ? val(f[F_LCALLS]) : -1, rcalls = udp ? val(f[F_RCALLS]) : -1;
	json_t *snd = end_of(sent, secs, scalls), *rcv = end_of(got, secs, rcalls);

	if (snd != NULL && !recv && !udp && val(f[F_RETR]) >= 0)
		json_object_set_new(snd, "retransmits", json_integer((json_int_t)val(f[F_RETR])));
	if (rcv != NULL && udp && scalls > 0 && rcalls >= 0) {
		double lost = scalls > rcalls ? scalls - rcalls : 0;

		json_object_set_new(rcv, "lost_packets", json_integer((json_int_t)lost));
		json_object_set_new(rcv, "lost_percent", json_real(100.0 * lost / scalls));
	}
	return json_pack("{s:o*, s:o*}", "sender", snd, "receiver", rcv);
}

/* A latency or rate figure: null where netperf printed -1 (not measured). */
static json_t *fig(const char *s)
{
	double v = val(s);

	return v >= 0 ? json_real(v) : json_null();
}

/* The values of a request/response line into end {sender, receiver, rr}. */
static json_t *rr_ends(char *f[NSEL])
{
	double secs = val(f[R_ELAPSED]);

	return json_pack("{s:o*, s:o*, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}}", "sender",
			 end_of(val(f[R_LSENT]), secs, -1), "receiver", end_of(val(f[R_LRECVD]), secs, -1), "rr",
			 "transactions_per_s", fig(f[R_RATE]), "mean_latency_us", fig(f[R_MEAN]), "p50_latency_us",
			 fig(f[R_P50]), "p90_latency_us", fig(f[R_P90]), "p99_latency_us", fig(f[R_P99]),
			 "request_bytes", fig(f[R_REQ]), "response_bytes", fig(f[R_RESP]));
}

/* The client's output with values lines of nsel fields, made an end by ends_of. */
static int parse(const char *text, size_t len, int nsel, json_t *(*ends_of)(char *f[NSEL]), json_t **result,
		 struct tb_error *err)
{
	char *copy = malloc(len + 1), *line, *save = NULL, *f[NSEL] = {0}, *values = NULL;
	json_t *error = json_null(), *end = json_null();

	*result = NULL;
	if (copy == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = strtok_r(copy, "\r\n", &save); line != NULL; line = strtok_r(NULL, "\r\n", &save)) {
		char probe[512], *g[NSEL];

		snprintf(probe, sizeof(probe), "%s", line);
		if (split(probe, g) == nsel && strcmp(g[F_UNITS], "Throughput Units") != 0 &&
		    strcmp(g[0], "THROUGHPUT") != 0 && strcmp(g[0], "Throughput") != 0)
			values = line; /* the last one wins */
		else if (json_is_null(error) && strspn(line, " \t") < strlen(line))
			error = json_string(line);
	}
	if (values != NULL && split(values, f) == nsel) {
		end = ends_of(f);
		json_decref(error);
		error = json_null();
	}
	*result = json_pack("{s:[], s:o, s:o, s:i, s:n, s:n}", "intervals", "end", end, "error", error, "connected",
			    values != NULL, "cookie", "version");
	free(copy);
	if (*result == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

int tb_netperf_parse(const char *text, size_t len, json_t **result, struct tb_error *err)
{
	return parse(text, len, NSEL_STREAM, ends, result, err);
}

int tb_netperf_rr_parse(const char *text, size_t len, json_t **result, struct tb_error *err)
{
	return parse(text, len, NSEL, rr_ends, result, err);
}
