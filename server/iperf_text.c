/*
 * iperf_text.c - iperf3's text output (a server's or client's, with
 * --forceflush) read line by line into the normalised shapes of iperf.h.
 *
 * The lines it reads (3.12 and 3.21 print them the same; split on blanks):
 *   [  5]   0.00-1.00   sec  3.33 GBytes  28.6 Gbits/sec    4   1023 KBytes
 *   [  5]   0.00-1.00   sec  3.33 GBytes  28.6 Gbits/sec                  (omitted)
 *   [  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  0.019 ms  0/39 (0%)
 *   [  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  39
 *   [SUM][TX-C]   0.00-1.00   sec  2.64 GBytes  22.7 Gbits/sec    0
 *   [  5]   0.00-3.00   sec  12.0 GBytes  34.4 Gbits/sec    4             sender
 * after a column header ("[ ID] Interval ... Retr  Cwnd", "... Jitter
 * Lost/Total Datagrams", "... Total Datagrams"), and "iperf3: ..." errors.
 */
#include "iperf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_LINE_MAX 4096
#define MAX_TOKENS 16
#define DIGITS "0123456789"

enum role { ROLE_NONE, ROLE_TX_C, ROLE_RX_C, ROLE_TX_S, ROLE_RX_S };
enum final { FINAL_NONE, FINAL_SENDER, FINAL_RECEIVER };

/* One data line, read. */
struct tline {
	bool sum_line; /* [SUM] */
	long long socket;
	enum role role;
	char range[40]; /* "0.00-1.00" as printed */
	double start, end;
	double bytes, bps;
	bool has_retr, has_cwnd, has_jitter, has_dgrams, omitted;
	long long retr, lost, total, dgrams;
	double cwnd, jitter;
	enum final final;
};

/* The interval being read: its lines arrive one by one. */
struct pending {
	bool active;
	char range[40];
	double start, end;
	bool omitted;
	json_t *streams;
	json_t *sum[2]; /* client->server, server->client */
};

struct tb_iperf_text {
	int parallel;
	bool bidir;
	tb_iperf_interval_fn on_interval;
	void *cls;
	char line[TEXT_LINE_MAX + 1];
	size_t len;
	bool overlong; /* skipping to the end of a too long line */
	bool udp;      /* the last column header names Datagrams */
	struct pending p;
	json_t *intervals;
	json_t *last; /* borrowed from intervals */
	json_t *end;
	json_t *error;
	bool nomem;
};

/* ---- reading one line ---- */

/* "3.33" -> 3.33: digits, optionally a point and digits.  No sign, exponent
 * or hex (strtod would take those, and the locale's decimal point). */
static bool parse_dec(const char *s, double *out)
{
	size_t n = strspn(s, DIGITS), m = 0;
	double v = 0, scale = 1;

	if (n == 0 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	if (s[n] == '.') {
		m = strspn(s + n + 1, DIGITS);
		if (m == 0 || m > 9)
			return false;
		for (size_t i = 0; i < m; i++)
			v += (s[n + 1 + i] - '0') * (scale /= 10);
		m++;
	}
	if (s[n + m] != '\0')
		return false;
	*out = v;
	return true;
}

static bool parse_int(const char *s, size_t n, long long *out)
{
	long long v = 0;

	if (n == 0 || n > 18 || strspn(s, DIGITS) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	*out = v;
	return true;
}

/* A number and its unit: "3.33" "GBytes" (1024-based) or "28.6" "Gbits/sec"
 * (1000-based), in bytes or bits/s; false for anything else or too large. */
static bool parse_amount(const char *num, const char *unit, bool bytes, double *out)
{
	static const char *const byte_units[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
	static const char *const bit_units[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
	double v, mult = 1;

	if (!parse_dec(num, &v))
		return false;
	for (size_t i = 0; i < 5; i++, mult *= bytes ? 1024.0 : 1000.0) {
		if (strcmp(unit, bytes ? byte_units[i] : bit_units[i]) == 0) {
			*out = v * mult;
			return *out < 9.0e18;
		}
	}
	return false;
}

/* "[  5]" or "[SUM]", then with --bidir "[TX-C]" etc.; *rest after them. */
static bool parse_tags(const char *s, struct tline *l, const char **rest)
{
	static const char *const roles[] = {"[TX-C]", "[RX-C]", "[TX-S]", "[RX-S]"};
	const char *close;
	size_t n;

	if (s[0] != '[' || (close = strchr(s, ']')) == NULL)
		return false;
	s++;
	s += strspn(s, " ");
	n = (size_t)(close - s);
	if (n == 3 && strncmp(s, "SUM", 3) == 0)
		l->sum_line = true;
	else if (!parse_int(s, n, &l->socket))
		return false;
	s = close + 1;
	for (size_t i = 0; i < 4; i++) {
		if (strncmp(s, roles[i], 6) == 0) {
			l->role = (enum role)(ROLE_TX_C + i);
			s += 6;
			break;
		}
	}
	if (*s != ' ' && *s != '\t')
		return false;
	*rest = s;
	return true;
}

/* "0.00-1.00" */
static bool parse_range(const char *s, struct tline *l)
{
	char a[24], b[24];
	const char *dash = strchr(s, '-');
	size_t n;

	if (dash == NULL || (n = (size_t)(dash - s)) == 0 || n >= sizeof(a) || strlen(dash + 1) >= sizeof(b) ||
	    strlen(s) >= sizeof(l->range))
		return false;
	memcpy(a, s, n);
	a[n] = '\0';
	strcpy(b, dash + 1);
	strcpy(l->range, s);
	return parse_dec(a, &l->start) && parse_dec(b, &l->end);
}

/* The columns after the bitrate: "", "4" (Retr, or UDP Total Datagrams),
 * "4 1023 KBytes" (Retr Cwnd), "0.019 ms 0/39 (0%)" (Jitter Lost/Total). */
static bool parse_columns(char **t, int n, bool udp, struct tline *l)
{
	const char *slash;
	size_t plen;

	switch (n) {
	case 0: return true;
	case 1:
		if (udp) {
			l->has_dgrams = true;
			return parse_int(t[0], strlen(t[0]), &l->dgrams);
		}
		l->has_retr = true;
		return parse_int(t[0], strlen(t[0]), &l->retr);
	case 3:
		l->has_retr = l->has_cwnd = true;
		return parse_int(t[0], strlen(t[0]), &l->retr) && parse_amount(t[1], t[2], true, &l->cwnd);
	case 4:
		l->has_jitter = true;
		slash = strchr(t[2], '/');
		plen = strlen(t[3]);
		/* The percentage is printed with 2 digits ("(0.85%)", "(1e+02%)"):
		 * lost_percent is computed from lost/total instead. */
		return strcmp(t[1], "ms") == 0 && parse_dec(t[0], &l->jitter) && slash != NULL &&
		       parse_int(t[2], (size_t)(slash - t[2]), &l->lost) &&
		       parse_int(slash + 1, strlen(slash + 1), &l->total) && plen >= 3 && t[3][0] == '(' &&
		       strcmp(t[3] + plen - 2, "%)") == 0;
	default: return false;
	}
}

/* A data line ("[  5]   0.00-1.00   sec ..."); false for any other line. */
static bool parse_line(char *s, bool udp, struct tline *l)
{
	char *t[MAX_TOKENS + 1], *rest = NULL;
	const char *after;
	int n = 0;

	memset(l, 0, sizeof(*l));
	if (!parse_tags(s, l, &after))
		return false;
	rest = s + (after - s);
	for (char *tok = rest; n <= MAX_TOKENS;) {
		tok += strspn(tok, " \t");
		if (*tok == '\0')
			break;
		t[n++] = tok;
		tok += strcspn(tok, " \t");
		if (*tok != '\0')
			*tok++ = '\0';
	}
	if (n < 6 || n > MAX_TOKENS)
		return false;
	if (strcmp(t[n - 1], "sender") == 0 || strcmp(t[n - 1], "receiver") == 0) {
		l->final = t[n - 1][0] == 's' ? FINAL_SENDER : FINAL_RECEIVER;
		n--;
	} else if (strcmp(t[n - 1], "(omitted)") == 0) {
		l->omitted = true;
		n--;
	}
	return n >= 6 && parse_range(t[0], l) && strcmp(t[1], "sec") == 0 &&
	       parse_amount(t[2], t[3], true, &l->bytes) && parse_amount(t[4], t[5], false, &l->bps) &&
	       parse_columns(t + 6, n - 6, udp, l);
}

/* ---- building the shapes ---- */

/* Which direction a line's numbers are: 1 for server->client with --bidir. */
static int direction(const struct tline *l)
{
	return l->role == ROLE_RX_C || l->role == ROLE_TX_S;
}

/* The line is the sending side's. */
static bool is_sender(const struct tline *l)
{
	if (l->role != ROLE_NONE)
		return l->role == ROLE_TX_C || l->role == ROLE_TX_S;
	return l->has_retr || l->has_dgrams;
}

static double lost_percent(const struct tline *l)
{
	return l->total > 0 ? 100.0 * (double)l->lost / (double)l->total : 0.0;
}

static bool set_int(json_t *o, const char *key, long long v)
{
	return json_object_set_new(o, key, json_integer((json_int_t)v)) == 0;
}

static bool set_real(json_t *o, const char *key, double v)
{
	return json_object_set_new(o, key, json_real(v)) == 0;
}

/* SIDE of an interval line: with socket and cwnd for a stream. */
static json_t *line_side(const struct tline *l, bool stream)
{
	json_t *s = json_object();
	bool ok = s != NULL;

	if (ok && stream && !l->sum_line)
		ok = set_int(s, "socket", l->socket);
	ok = ok && set_int(s, "bytes", llround(l->bytes)) && set_real(s, "bits_per_second", l->bps) &&
	     json_object_set_new(s, "sender", json_boolean(is_sender(l))) == 0;
	if (ok && l->has_retr)
		ok = set_int(s, "retransmits", l->retr);
	if (ok && l->has_cwnd && stream)
		ok = set_int(s, "snd_cwnd", llround(l->cwnd));
	if (ok && l->has_jitter)
		ok = set_real(s, "jitter_ms", l->jitter) && set_int(s, "lost_packets", l->lost) &&
		     set_int(s, "packets", l->total) && set_real(s, "lost_percent", lost_percent(l));
	if (ok && l->has_dgrams)
		ok = set_int(s, "packets", l->dgrams);
	if (!ok) {
		json_decref(s);
		return NULL;
	}
	return s;
}

static void pending_clear(struct pending *p)
{
	json_decref(p->streams);
	json_decref(p->sum[0]);
	json_decref(p->sum[1]);
	memset(p, 0, sizeof(*p));
}

/* Hand over the interval being read (dropped when its first sum is missing:
 * cut short, or a repeat of the one before). */
static void flush(struct tb_iperf_text *t)
{
	struct pending *p = &t->p;
	json_t *iv, *copy = NULL;
	bool ok;

	if (!p->active)
		return;
	if (p->sum[0] == NULL) {
		pending_clear(p);
		return;
	}
	if ((iv = json_object()) == NULL) {
		t->nomem = true;
		pending_clear(p);
		return;
	}
	ok = set_real(iv, "start", p->start) && set_real(iv, "end", p->end) &&
	     json_object_set_new(iv, "omitted", json_boolean(p->omitted)) == 0 &&
	     json_object_set(iv, "sum", p->sum[0]) == 0 && json_object_set(iv, "streams", p->streams) == 0;
	if (ok && p->sum[1] != NULL)
		ok = json_object_set(iv, "sum_reverse", p->sum[1]) == 0;
	pending_clear(p);
	if (!ok) {
		t->nomem = true;
		json_decref(iv);
		return;
	}
	/* 3.12 prints the last interval again when the client stops early. */
	if (t->last != NULL &&
	    json_real_value(json_object_get(t->last, "start")) == json_real_value(json_object_get(iv, "start")) &&
	    json_real_value(json_object_get(t->last, "end")) == json_real_value(json_object_get(iv, "end")) &&
	    json_is_true(json_object_get(t->last, "omitted")) == json_is_true(json_object_get(iv, "omitted")) &&
	    json_integer_value(json_object_get(json_object_get(t->last, "sum"), "bytes")) ==
		    json_integer_value(json_object_get(json_object_get(iv, "sum"), "bytes"))) {
		json_decref(iv);
		return;
	}
	if ((t->on_interval != NULL && (copy = json_deep_copy(iv)) == NULL) ||
	    json_array_append(t->intervals, iv) != 0) {
		t->nomem = true;
		json_decref(copy);
		json_decref(iv);
		return;
	}
	t->last = iv;
	json_decref(iv);
	if (copy != NULL)
		t->on_interval(t->cls, copy);
}

static void interval_line(struct tb_iperf_text *t, const struct tline *l)
{
	struct pending *p = &t->p;
	int d = t->bidir ? direction(l) : 0;
	bool is_sum = l->sum_line || t->parallel <= 1;
	json_t *x;

	if (p->active && (strcmp(p->range, l->range) != 0 || p->omitted != l->omitted || (is_sum && p->sum[d] != NULL)))
		flush(t);
	if (!p->active) {
		if ((p->streams = json_array()) == NULL) {
			t->nomem = true;
			return;
		}
		p->active = true;
		strcpy(p->range, l->range);
		p->start = l->start;
		p->end = l->end;
		p->omitted = l->omitted;
	}
	if (!l->sum_line) {
		if ((x = line_side(l, true)) == NULL || json_array_append_new(p->streams, x) != 0)
			t->nomem = true;
	}
	if (is_sum) {
		if ((p->sum[d] = line_side(l, false)) == NULL)
			t->nomem = true;
	}
	if (p->sum[0] != NULL && (!t->bidir || p->sum[1] != NULL))
		flush(t);
}

/* A summary line: end.sender / end.receiver (+ _reverse with --bidir). */
static void summary_line(struct tb_iperf_text *t, const struct tline *l)
{
	static const char *const keys[2][2] = {{"sender", "sender_reverse"}, {"receiver", "receiver_reverse"}};
	int d = t->bidir ? direction(l) : 0;
	bool sender = l->final == FINAL_SENDER, ok;
	json_t *x;

	flush(t);
	/* With -P the [SUM] line is the total; per-stream lines are not kept. */
	if (t->parallel > 1 && !l->sum_line)
		return;
	if ((t->end == NULL && (t->end = json_object()) == NULL) || (x = json_object()) == NULL) {
		t->nomem = true;
		return;
	}
	ok = set_int(x, "bytes", llround(l->bytes)) && set_real(x, "bits_per_second", l->bps) &&
	     set_real(x, "seconds", l->end - l->start);
	if (ok && sender && l->has_retr)
		ok = set_int(x, "retransmits", l->retr);
	if (ok && sender && (l->has_jitter || l->has_dgrams))
		ok = set_int(x, "packets", l->has_jitter ? l->total : l->dgrams);
	/* The sender's UDP line has jitter 0 and loss 0: it does not know them. */
	if (ok && !sender && l->has_jitter)
		ok = set_real(x, "jitter_ms", l->jitter) && set_int(x, "lost_packets", l->lost) &&
		     set_int(x, "packets", l->total) && set_real(x, "lost_percent", lost_percent(l));
	if (!ok) {
		json_decref(x);
		t->nomem = true;
	} else if (json_object_set_new(t->end, keys[sender ? 0 : 1][d], x) != 0) {
		t->nomem = true;
	}
}

/* "iperf3: error - the server is busy ..." -> "the server is busy ..." */
static void error_line(struct tb_iperf_text *t, const char *s)
{
	s += strlen("iperf3: ");
	if (strncmp(s, "error - ", 8) == 0)
		s += 8;
	char ascii[TEXT_LINE_MAX + 1];
	size_t n = 0;

	if (t->error != NULL)
		return;
	/* iperf3's messages are ASCII; a JSON string must be UTF-8. */
	for (; s[n] != '\0' && n < TEXT_LINE_MAX; n++)
		ascii[n] = (unsigned char)s[n] >= 0x20 && (unsigned char)s[n] < 0x7f ? s[n] : '?';
	ascii[n] = '\0';
	if ((t->error = json_string(ascii)) == NULL)
		t->nomem = true;
}

static void text_line(struct tb_iperf_text *t)
{
	struct tline l;
	char *s = t->line;

	if (t->len > 0 && s[t->len - 1] == '\r')
		s[--t->len] = '\0';
	if (strncmp(s, "iperf3: ", 8) == 0) {
		error_line(t, s);
	} else if (strncmp(s, "[ ID]", 5) == 0) {
		flush(t);
		t->udp = strstr(s, "Datagrams") != NULL;
	} else if (strncmp(s, "- - - ", 6) == 0) {
		flush(t);
	} else if (parse_line(s, t->udp, &l)) {
		if (l.final != FINAL_NONE)
			summary_line(t, &l);
		else
			interval_line(t, &l);
	}
}

/* ---- the interface ---- */

struct tb_iperf_text *tb_iperf_text_new(int parallel, bool bidir, tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_iperf_text *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	if ((t->intervals = json_array()) == NULL) {
		free(t);
		return NULL;
	}
	t->parallel = parallel;
	t->bidir = bidir;
	t->on_interval = on_interval;
	t->cls = cls;
	return t;
}

void tb_iperf_text_feed(struct tb_iperf_text *t, const char *data, size_t len)
{
	if (t == NULL || data == NULL)
		return;
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - data) : len;

		if (!t->overlong && n <= TEXT_LINE_MAX - t->len) {
			memcpy(t->line + t->len, data, n);
			t->len += n;
		} else {
			t->overlong = true;
		}
		data += n;
		len -= n;
		if (nl != NULL) {
			data++;
			len--;
			t->line[t->len] = '\0';
			if (!t->overlong)
				text_line(t);
			t->len = 0;
			t->overlong = false;
		}
	}
}

int tb_iperf_text_finish(struct tb_iperf_text *t, json_t **result, struct tb_error *err)
{
	json_t *r;
	bool ok;

	*result = NULL;
	if (t == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory reading iperf3 output");
	if (t->len > 0 && !t->overlong) {
		t->line[t->len] = '\0';
		text_line(t);
	}
	flush(t);
	r = json_object();
	ok = r != NULL && !t->nomem;
	ok = ok && json_object_set(r, "intervals", t->intervals) == 0 &&
	     json_object_set_new(r, "end", t->end != NULL ? json_incref(t->end) : json_null()) == 0 &&
	     json_object_set_new(r, "error", t->error != NULL ? json_incref(t->error) : json_null()) == 0 &&
	     json_object_set_new(r, "cookie", json_null()) == 0;
	pending_clear(&t->p);
	json_decref(t->intervals);
	json_decref(t->end);
	json_decref(t->error);
	free(t);
	if (!ok) {
		json_decref(r);
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory reading iperf3 output");
	}
	*result = r;
	return 0;
}
