/*
 * iperf2_parse.c - iperf 2.1.8's `-e -i 1` text read line by line into
 * iperf.h's normalised shapes.  See iperf2.h.
 *
 * The lines it reads (tests/data/iperf2/ has each):
 *   [ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr
 *   [  1] 0.0000-1.0000 sec  2.69 GBytes  23.1 Gbits/sec  22038/0         23      767K/47(8) us  61458825
 *   [ ID] Interval            Transfer     Bandwidth      Write/Err  PPS
 *   [  1] 0.0000-1.0000 sec   256 MBytes  2.15 Gbits/sec  31583/0    31585 pps
 *   [ ID] Interval            Transfer    Bandwidth       Reads=Dist
 *   [ *1] 0.0000-1.0000 sec  1.91 GBytes  16.4 Gbits/sec  22544=4178:2:2:4889:592:2:1:12878
 *   [ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total  Latency ...
 *   [  1] 0.0000-1.0000 sec  43.2 MBytes   362 Mbits/sec   0.000 ms 724/31542 (2.3%) ...
 *   [SUM] 0.0000-1.0000 sec  3.94 GBytes  33.9 Gbits/sec  32308/0        29
 *   [  1] Server Report:
 *   tcp connect failed: Connection refused
 */
#include "iperf2.h"

#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096
#define MAX_TOK 24
#define KEYS_MAX 130 /* streams (ids 0..128) and [SUM] (the last) */

enum side { SIDE_UNKNOWN, SIDE_SENDER, SIDE_RECEIVER };

struct tb_iperf2_text {
	int parallel;
	double interval_s;
	tb_iperf_interval_fn on_interval;
	void *cls;
	char line[LINE_MAX_LEN + 1];
	size_t len;
	bool overlong;
	enum side side; /* from the last column header */
	bool udp;
	bool server_report; /* the next data line is the Server Report's */
	bool seen[KEYS_MAX];
	bool done;
	int connected;
	json_t *intervals, *streams, *end, *error;
};

/* "3.33" -> 3.33 (digits, optionally a point and digits). */
static bool dec(const char *s, double *out)
{
	char *e;

	if (*s < '0' || *s > '9')
		return false;
	*out = strtod(s, &e);
	return *e == '\0';
}

/* A number and its unit: bytes 1024-based, bits/s 1000-based. */
static bool amount(const char *num, const char *unit, bool bytes, double *out)
{
	static const char *const bu[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
	static const char *const ru[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
	double v, mult = 1;

	if (!dec(num, &v))
		return false;
	for (int i = 0; i < 5; i++, mult *= bytes ? 1024.0 : 1000.0)
		if (strcmp(unit, bytes ? bu[i] : ru[i]) == 0) {
			*out = v * mult;
			return true;
		}
	return false;
}

/* "767K" (1024-based) in bytes; false when not a size. */
static bool size_k(const char *s, double *out)
{
	char *e;
	double v;

	if (*s < '0' || *s > '9')
		return false;
	v = strtod(s, &e);
	if (*e == 'K')
		v *= 1024, e++;
	else if (*e == 'M')
		v *= 1048576, e++;
	*out = v;
	return *e == '\0' || *e == '/';
}

static int split(char *s, char **tok)
{
	int n = 0;
	char *save = NULL;

	for (char *p = strtok_r(s, " \t", &save); p != NULL && n < MAX_TOK; p = strtok_r(NULL, " \t", &save))
		tok[n++] = p;
	return n;
}

/* The SIDE object of a data line (tok[0] is the range). */
static json_t *side_of(struct tb_iperf2_text *t, char **tok, int n, bool receiver, bool sum, double *start, double *end)
{
	double bytes, bps, v;
	char *dash = strchr(tok[0], '-');
	json_t *o;

	if (dash == NULL || n < 6 || strcmp(tok[1], "sec") != 0)
		return NULL;
	*dash = '\0';
	if (!dec(tok[0], start) || !dec(dash + 1, end) || !amount(tok[2], tok[3], true, &bytes) ||
	    !amount(tok[4], tok[5], false, &bps))
		return NULL;
	o = json_pack("{s:f, s:f, s:b}", "bytes", bytes, "bits_per_second", bps, "sender", !receiver);
	if (o == NULL)
		return NULL;
	if (!receiver && n >= 7 && strchr(tok[6], '/') != NULL) { /* Write/Err */
		long long writes = strtoll(tok[6], NULL, 10);

		if (t->udp) {
			json_object_set_new(o, "packets", json_integer(writes));
		} else if (n >= 8 && dec(tok[7], &v)) {
			json_object_set_new(o, "retransmits", json_integer((json_int_t)v));
			if (!sum && n >= 9 && size_k(tok[8], &v)) {
				char *rtt = strchr(tok[8], '/');

				json_object_set_new(o, "snd_cwnd", json_integer((json_int_t)v));
				if (rtt != NULL)
					json_object_set_new(o, "rtt_us", json_integer(strtoll(rtt + 1, NULL, 10)));
			}
		}
	} else if (receiver && n >= 9 && strcmp(tok[7], "ms") == 0 && strchr(tok[8], '/') != NULL) {
		long long lost = strtoll(tok[8], NULL, 10), total = strtoll(strchr(tok[8], '/') + 1, NULL, 10);

		if (dec(tok[6], &v))
			json_object_set_new(o, "jitter_ms", json_real(v));
		json_object_set_new(o, "lost_packets", json_integer(lost));
		json_object_set_new(o, "packets", json_integer(total));
		json_object_set_new(o, "lost_percent", json_real(total > 0 ? 100.0 * (double)lost / (double)total : 0));
	}
	return o;
}

static void emit(struct tb_iperf2_text *t, double start, double end, json_t *sum)
{
	json_t *iv = json_pack("{s:f, s:f, s:b, s:O, s:o}", "start", start, "end", end, "omitted", 0, "sum", sum,
			       "streams", t->streams);

	t->streams = json_array(); /* the interval has the one before */
	if (iv == NULL || t->streams == NULL)
		return;
	json_array_append(t->intervals, iv);
	if (t->on_interval != NULL)
		t->on_interval(t->cls, iv);
	else
		json_decref(iv);
}

/* The summary of one side: end.sender or end.receiver (the first one kept). */
static void final(struct tb_iperf2_text *t, json_t *o, double start, double end)
{
	const char *k = json_is_true(json_object_get(o, "sender")) ? "sender" : "receiver";

	json_object_del(o, "sender");
	json_object_set_new(o, "seconds", json_real(end - start));
	if (t->end == NULL)
		t->end = json_object();
	if (json_object_get(t->end, k) == NULL)
		json_object_set(t->end, k, o);
	t->done = true;
}

static void header(struct tb_iperf2_text *t, const char *rest)
{
	t->udp = strstr(rest, "PPS") != NULL || strstr(rest, "Jitter") != NULL;
	if (strstr(rest, "Write/Err") != NULL)
		t->side = SIDE_SENDER;
	else if (strstr(rest, "Reads") != NULL || strstr(rest, "Jitter") != NULL)
		t->side = SIDE_RECEIVER;
	else
		t->side = SIDE_UNKNOWN;
}

static void data_line(struct tb_iperf2_text *t, const char *id, char *rest)
{
	char *tok[MAX_TOK];
	int n = split(rest, tok), key;
	bool sum = strcmp(id, "SUM") == 0, report = t->server_report, receiver;
	double start = 0, end = 0;
	json_t *o;

	if (n < 6)
		return;
	if (sum)
		key = KEYS_MAX - 1;
	else {
		key = atoi(id[0] == '*' ? id + 1 : id);
		if (key < 0 || key >= KEYS_MAX - 1)
			return;
	}
	receiver = report || t->side == SIDE_RECEIVER;
	if ((o = side_of(t, tok, n, receiver, sum, &start, &end)) == NULL)
		return;
	t->server_report = false;
	if (report || (start < 1e-9 && (t->seen[key] || end - start > 1.5 * t->interval_s))) {
		if (sum || t->parallel <= 1)
			final(t, o, start, end);
	} else if (sum) {
		emit(t, start, end, o);
	} else {
		json_object_set_new(o, "socket", json_integer(key));
		json_array_append(t->streams, o);
		if (t->parallel <= 1) {
			json_t *s = json_deep_copy(o);

			json_object_del(s, "socket");
			emit(t, start, end, s);
			json_decref(s);
		}
	}
	t->seen[key] = true;
	json_decref(o);
}

static void line(struct tb_iperf2_text *t, char *s)
{
	char *close, *id, *rest;

	if (s[0] != '[') {
		if (t->error == NULL && (strstr(s, "failed") != NULL || strncmp(s, "ERROR", 5) == 0))
			t->error = json_string(s);
		return;
	}
	if ((close = strchr(s, ']')) == NULL)
		return;
	*close = '\0';
	rest = close + 1;
	for (id = s + 1; *id == ' '; id++)
		;
	if (strcmp(id, "ID") == 0) {
		header(t, rest);
	} else if (strstr(rest, "connected with") != NULL) {
		t->connected++;
	} else if (strstr(rest, "Server Report:") != NULL) {
		t->server_report = true;
	} else if (strcmp(id, "SUM") == 0 || (id[0] >= '0' && id[0] <= '9') || id[0] == '*') {
		data_line(t, id, rest);
	}
}

struct tb_iperf2_text *tb_iperf2_text_new(int parallel, int interval_s, tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_iperf2_text *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->parallel = parallel;
	t->interval_s = interval_s > 1 ? interval_s : 1;
	t->on_interval = on_interval;
	t->cls = cls;
	t->intervals = json_array();
	t->streams = json_array();
	if (t->intervals == NULL || t->streams == NULL) {
		json_decref(t->intervals);
		json_decref(t->streams);
		free(t);
		return NULL;
	}
	return t;
}

void tb_iperf2_text_feed(struct tb_iperf2_text *t, const char *data, size_t len)
{
	for (size_t i = 0; t != NULL && i < len; i++) {
		char c = data[i];

		if (c == '\n') {
			if (!t->overlong) {
				t->line[t->len] = '\0';
				if (t->len > 0 && t->line[t->len - 1] == '\r')
					t->line[--t->len] = '\0';
				line(t, t->line);
			}
			t->len = 0;
			t->overlong = false;
		} else if (t->len < LINE_MAX_LEN) {
			t->line[t->len++] = c == '\0' ? ' ' : c;
		} else {
			t->overlong = true;
		}
	}
}

bool tb_iperf2_text_done(const struct tb_iperf2_text *t)
{
	return t != NULL && t->done;
}

int tb_iperf2_text_finish(struct tb_iperf2_text *t, json_t **result, struct tb_error *err)
{
	json_t *r;

	if (t == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (t->len > 0 && !t->overlong)
		tb_iperf2_text_feed(t, "\n", 1);
	r = json_pack("{s:o, s:o, s:o, s:i, s:n, s:n}", "intervals", t->intervals, "end",
		      t->end != NULL ? t->end : json_null(), "error", t->error != NULL ? t->error : json_null(),
		      "connected", t->connected, "cookie", "version");
	json_decref(t->streams);
	free(t);
	if (r == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	*result = r;
	return 0;
}
