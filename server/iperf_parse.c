/*
 * iperf_parse.c - iperf3's JSON output normalised (iperf.h): a whole -J
 * document, and --json-stream fed in chunks.  One normaliser serves both:
 * a --json-stream event's data is exactly the matching piece of -J (3.17+).
 */
#include "iperf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

/* A --json-stream line longer than this is not iperf3's (a server_output_json
 * event of an hour-long run is a few MB). */
#define STREAM_LINE_MAX ((size_t)64 << 20)

static int fail(struct tb_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* TB_ERR_INVALID with a message that starts with "iperf3 output: ". */
static int fail(struct tb_error *err, const char *fmt, ...)
{
	char msg[TB_ERROR_MSG_MAX - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tb_fail(err, TB_ERR_INVALID, NULL, "iperf3 output: %s", msg);
}

static int nomem(struct tb_error *err)
{
	return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory reading iperf3 output");
}

/* ---- the normaliser ---- */

enum { OPT = 0, REQ = 1 };
enum { REAL = 0, COUNT = 1 };

/*
 * out[as] = o[key] as a real or a count (an integer; iperf3 prints counts
 * as integers, a real is rounded).  0 when copied or absent and optional;
 * -1 when required and absent, or not a number; *oom on a failed allocation.
 */
static int copy_num(json_t *out, const char *as, const json_t *o, const char *key, int kind, int req, bool *oom)
{
	const json_t *v = json_object_get(o, key);
	json_t *x;

	if (v == NULL || json_is_null(v))
		return req == REQ ? -1 : 0;
	if (!json_is_number(v))
		return -1;
	if (kind == REAL) {
		x = json_real(json_number_value(v));
	} else if (json_is_integer(v)) {
		x = json_integer(json_integer_value(v));
	} else {
		double d = json_real_value(v);

		if (!(d > -9.0e18 && d < 9.0e18))
			return -1;
		x = json_integer((json_int_t)llround(d));
	}
	if (json_object_set_new(out, as, x) != 0)
		*oom = true;
	return 0;
}

/* One SIDE (iperf.h) of an interval from iperf3's sum or streams[i]. */
static json_t *side(const json_t *o, bool stream, const char *path, struct tb_error *err)
{
	static const struct {
		const char *key, *as;
		int kind;
		bool stream_only;
	} opt[] = {
		{"retransmits", "retransmits", COUNT, false},
		{"snd_cwnd", "snd_cwnd", COUNT, true},
		{"rtt", "rtt_us", COUNT, true},
		{"jitter_ms", "jitter_ms", REAL, false},
		{"lost_packets", "lost_packets", COUNT, false},
		{"packets", "packets", COUNT, false},
		{"lost_percent", "lost_percent", REAL, false},
	};
	json_t *s;
	bool oom = false;
	int bad = 0;

	if (!json_is_object(o)) {
		fail(err, "%s is not an object", path);
		return NULL;
	}
	if ((s = json_object()) == NULL) {
		nomem(err);
		return NULL;
	}
	if (stream)
		bad |= copy_num(s, "socket", o, "socket", COUNT, OPT, &oom);
	bad |= copy_num(s, "bytes", o, "bytes", COUNT, REQ, &oom);
	bad |= copy_num(s, "bits_per_second", o, "bits_per_second", REAL, REQ, &oom);
	oom |= json_object_set_new(s, "sender", json_boolean(json_is_true(json_object_get(o, "sender")))) != 0;
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (stream || !opt[i].stream_only)
			bad |= copy_num(s, opt[i].as, o, opt[i].key, opt[i].kind, OPT, &oom);
	if (bad != 0 || oom) {
		json_decref(s);
		if (oom)
			nomem(err);
		else
			fail(err, "%s: bytes or bits_per_second missing, or a field that is not a number", path);
		return NULL;
	}
	return s;
}

/* A normalised interval from one element of -J's intervals (or the data of
 * a --json-stream interval event). */
static json_t *interval(const json_t *iv, const char *path, struct tb_error *err)
{
	const json_t *sum = json_object_get(iv, "sum"), *streams = json_object_get(iv, "streams");
	const json_t *rev = json_object_get(iv, "sum_bidir_reverse");
	char sub[96];
	json_t *out, *arr = NULL, *x;
	bool oom = false;
	size_t i;

	if (!json_is_object(iv) || !json_is_object(sum)) {
		fail(err, "%s has no sum object", path);
		return NULL;
	}
	if (streams != NULL && !json_is_array(streams)) {
		fail(err, "%s.streams is not a list", path);
		return NULL;
	}
	if ((out = json_object()) == NULL || (arr = json_array()) == NULL) {
		json_decref(out);
		nomem(err);
		return NULL;
	}
	if (copy_num(out, "start", sum, "start", REAL, REQ, &oom) != 0 ||
	    copy_num(out, "end", sum, "end", REAL, REQ, &oom) != 0) {
		json_decref(out);
		json_decref(arr);
		fail(err, "%s.sum has no start or end time", path);
		return NULL;
	}
	oom |= json_object_set_new(out, "omitted", json_boolean(json_is_true(json_object_get(sum, "omitted")))) != 0;
	snprintf(sub, sizeof(sub), "%s.sum", path);
	if ((x = side(sum, false, sub, err)) == NULL)
		goto bad;
	oom |= json_object_set_new(out, "sum", x) != 0;
	for (i = 0; i < json_array_size(streams); i++) {
		snprintf(sub, sizeof(sub), "%s.streams[%zu]", path, i);
		if ((x = side(json_array_get(streams, i), true, sub, err)) == NULL)
			goto bad;
		oom |= json_array_append_new(arr, x) != 0;
	}
	oom |= json_object_set_new(out, "streams", arr) != 0;
	arr = NULL;
	if (rev != NULL) {
		snprintf(sub, sizeof(sub), "%s.sum_bidir_reverse", path);
		if ((x = side(rev, false, sub, err)) == NULL)
			goto bad;
		oom |= json_object_set_new(out, "sum_reverse", x) != 0;
	}
	if (!oom)
		return out;
	nomem(err);
bad:
	json_decref(arr);
	json_decref(out);
	return NULL;
}

/* iperf3 repeats the last interval before an error (3.12 and 3.21). */
static bool same_interval(const json_t *a, const json_t *b)
{
	const json_t *sa = json_object_get(a, "sum"), *sb = json_object_get(b, "sum");

	return a != NULL && b != NULL &&
	       json_real_value(json_object_get(a, "start")) == json_real_value(json_object_get(b, "start")) &&
	       json_real_value(json_object_get(a, "end")) == json_real_value(json_object_get(b, "end")) &&
	       json_is_true(json_object_get(a, "omitted")) == json_is_true(json_object_get(b, "omitted")) &&
	       json_integer_value(json_object_get(sa, "bytes")) == json_integer_value(json_object_get(sb, "bytes"));
}

/* A sum of nothing: 0 bytes in 0 seconds, which iperf3 divides into a NaN
 * bits_per_second that cJSON prints as null (3.12: a UDP client stopped
 * before its stream connected).  Not a measurement: left out of end. */
static bool empty_sum(const json_t *o)
{
	const json_t *bytes = json_object_get(o, "bytes"), *secs = json_object_get(o, "seconds");

	return json_is_null(json_object_get(o, "bits_per_second")) && json_is_number(bytes) &&
	       json_number_value(bytes) == 0 && json_is_number(secs) && json_number_value(secs) == 0;
}

/* end (iperf.h) from -J's end; json null when iperf3's is {} or absent (or
 * has only empty sums and no cpu). */
static json_t *end_of(const json_t *e, struct tb_error *err)
{
	static const struct {
		const char *from, *to;
		bool sender;
	} sums[] = {
		{"sum_sent", "sender", true},
		{"sum_received", "receiver", false},
		{"sum_sent_bidir_reverse", "sender_reverse", true},
		{"sum_received_bidir_reverse", "receiver_reverse", false},
	};
	static const char *const cpu_keys[] = {"host_total",   "host_user",   "host_system",
					       "remote_total", "remote_user", "remote_system"};
	static const char *const cc_keys[] = {"sender_tcp_congestion", "receiver_tcp_congestion"};
	const json_t *cpu;
	json_t *out, *x;
	bool oom = false;
	int bad = 0;

	if (e == NULL || json_is_null(e))
		return json_null();
	if (!json_is_object(e)) {
		fail(err, "end is not an object");
		return NULL;
	}
	if ((out = json_object()) == NULL) {
		nomem(err);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		const json_t *o = json_object_get(e, sums[i].from);

		if (o == NULL || empty_sum(o))
			continue;
		if (!json_is_object(o) || (x = json_object()) == NULL) {
			bad |= -1;
			oom |= json_is_object(o);
			break;
		}
		bad |= copy_num(x, "bytes", o, "bytes", COUNT, REQ, &oom);
		bad |= copy_num(x, "bits_per_second", o, "bits_per_second", REAL, REQ, &oom);
		bad |= copy_num(x, "seconds", o, "seconds", REAL, REQ, &oom);
		if (sums[i].sender) {
			bad |= copy_num(x, "retransmits", o, "retransmits", COUNT, OPT, &oom);
			bad |= copy_num(x, "packets", o, "packets", COUNT, OPT, &oom);
		} else {
			/* sum_sent's jitter and loss are 0: the sender does not know them. */
			bad |= copy_num(x, "jitter_ms", o, "jitter_ms", REAL, OPT, &oom);
			bad |= copy_num(x, "lost_packets", o, "lost_packets", COUNT, OPT, &oom);
			bad |= copy_num(x, "packets", o, "packets", COUNT, OPT, &oom);
			bad |= copy_num(x, "lost_percent", o, "lost_percent", REAL, OPT, &oom);
		}
		oom |= json_object_set_new(out, sums[i].to, x) != 0;
	}
	cpu = json_object_get(e, "cpu_utilization_percent");
	if (bad == 0 && !oom && json_is_object(cpu)) {
		if ((x = json_object()) == NULL)
			oom = true;
		for (size_t i = 0; x != NULL && i < sizeof(cpu_keys) / sizeof(cpu_keys[0]); i++)
			bad |= copy_num(x, cpu_keys[i], cpu, cpu_keys[i], REAL, OPT, &oom);
		oom |= json_object_set_new(out, "cpu", x) != 0;
	}
	for (size_t i = 0; i < sizeof(cc_keys) / sizeof(cc_keys[0]); i++) {
		const json_t *cc = json_object_get(e, cc_keys[i]);

		if (json_is_string(cc))
			oom |= json_object_set_new(out, cc_keys[i], json_string(json_string_value(cc))) != 0;
	}
	if (bad != 0 || oom) {
		json_decref(out);
		if (oom)
			nomem(err);
		else
			fail(err, "end: a sum without bytes, bits_per_second or seconds, or a field not a number");
		return NULL;
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return json_null();
	}
	return out;
}

static json_t *string_or_null(const json_t *v)
{
	return json_is_string(v) ? json_string(json_string_value(v)) : json_null();
}

/* The -P and --bidir of a run from what iperf3 printed (3.12 has no
 * test_start.bidir: then the end's bidir sums tell). */
static void run_shape(const json_t *start, const json_t *end, int *parallel, bool *bidir)
{
	const json_t *ts = json_object_get(start, "test_start");
	json_int_t n = json_integer_value(json_object_get(ts, "num_streams"));

	*parallel = n >= 1 && n <= 128 ? (int)n : 1;
	*bidir = json_integer_value(json_object_get(ts, "bidir")) == 1 ||
		 json_object_get(end, "sum_sent_bidir_reverse") != NULL;
}

/* server_output_text through the text parser. */
static json_t *server_text(const char *text, const json_t *start, const json_t *end, struct tb_error *err)
{
	struct tb_iperf_text *t;
	json_t *r = NULL;
	int parallel;
	bool bidir;

	run_shape(start, end, &parallel, &bidir);
	if ((t = tb_iperf_text_new(parallel, bidir, NULL, NULL)) == NULL) {
		nomem(err);
		return NULL;
	}
	tb_iperf_text_feed(t, text, strlen(text));
	if (tb_iperf_text_finish(t, &r, err) != 0)
		return NULL;
	return r;
}

/*
 * The result (iperf.h).  start/end/error are iperf3's (borrowed);
 * intervals (normalised) and server_output (or NULL) are stolen.
 */
static json_t *result_of(const json_t *start, json_t *intervals, const json_t *end, const json_t *error,
			 json_t *server_output, struct tb_error *err)
{
	const json_t *ts = json_object_get(start, "test_start");
	const json_t *secs = json_object_get(json_object_get(start, "timestamp"), "timesecs");
	const json_t *sys = json_object_get(start, "system_info");
	const json_t *conn = json_object_get(start, "connected");
	json_t *r = json_object(), *e, *timesecs;
	bool oom = r == NULL;

	if ((e = end_of(end, err)) == NULL) {
		json_decref(r);
		json_decref(intervals);
		json_decref(server_output);
		return NULL;
	}
	if (!oom) {
		oom |= json_object_set_new(r, "cookie", string_or_null(json_object_get(start, "cookie"))) != 0;
		oom |= json_object_set_new(r, "version", string_or_null(json_object_get(start, "version"))) != 0;
		oom |= json_object_set_new(r, "system_info", string_or_null(sys)) != 0;
		timesecs = json_is_integer(secs) ? json_integer(json_integer_value(secs)) : json_null();
		oom |= json_object_set_new(r, "timesecs", timesecs) != 0;
		oom |= json_object_set_new(r, "test_start", json_is_object(ts) ? json_deep_copy(ts) : json_null()) != 0;
		oom |= json_object_set_new(r, "connected",
					   json_is_array(conn) ? json_integer((json_int_t)json_array_size(conn))
							       : json_null()) != 0;
		oom |= json_object_set_new(r, "intervals", intervals) != 0;
		oom |= json_object_set_new(r, "end", e) != 0;
		oom |= json_object_set_new(r, "error", string_or_null(error)) != 0;
		if (server_output != NULL)
			oom |= json_object_set_new(r, "server_output", server_output) != 0;
	} else {
		json_decref(intervals);
		json_decref(e);
		json_decref(server_output);
	}
	if (oom) {
		json_decref(r);
		nomem(err);
		return NULL;
	}
	return r;
}

/* A whole -J object (depth 0) or a server_output_json inside one (1). */
static json_t *parse_doc(const json_t *doc, int depth, struct tb_error *err)
{
	const json_t *start = json_object_get(doc, "start"), *ivs = json_object_get(doc, "intervals");
	const json_t *end = json_object_get(doc, "end"), *error = json_object_get(doc, "error");
	const json_t *sot = json_object_get(doc, "server_output_text");
	const json_t *soj = json_object_get(doc, "server_output_json");
	json_t *intervals, *so = NULL, *last = NULL;
	char path[40];

	if (!json_is_object(doc) || (start == NULL && ivs == NULL && end == NULL && error == NULL)) {
		fail(err, "not an iperf3 -J object (no start, intervals, end or error)");
		return NULL;
	}
	if ((start != NULL && !json_is_object(start)) || (ivs != NULL && !json_is_array(ivs)) ||
	    (error != NULL && !json_is_string(error) && !json_is_null(error))) {
		fail(err, "start is not an object, intervals not a list or error not a string");
		return NULL;
	}
	if ((intervals = json_array()) == NULL) {
		nomem(err);
		return NULL;
	}
	for (size_t i = 0; i < json_array_size(ivs); i++) {
		json_t *iv;

		snprintf(path, sizeof(path), "intervals[%zu]", i);
		if ((iv = interval(json_array_get(ivs, i), path, err)) == NULL) {
			json_decref(intervals);
			return NULL;
		}
		if (same_interval(iv, last)) {
			json_decref(iv);
			continue;
		}
		last = iv;
		if (json_array_append_new(intervals, iv) != 0) {
			json_decref(intervals);
			nomem(err);
			return NULL;
		}
	}
	if (depth == 0 && json_is_string(sot))
		so = server_text(json_string_value(sot), start, end, err);
	else if (depth == 0 && json_is_object(soj))
		so = parse_doc(soj, depth + 1, err);
	if (depth == 0 && (json_is_string(sot) || json_is_object(soj)) && so == NULL) {
		json_decref(intervals);
		return NULL;
	}
	return result_of(start, intervals, end, error, so, err);
}

int tb_iperf_parse_json(const char *text, size_t len, json_t **result, struct tb_error *err)
{
	struct tb_error e;
	json_error_t je;
	json_t *doc;

	*result = NULL;
	if (text == NULL || len == 0)
		return fail(err, "empty");
	if ((doc = json_loadb(text, len, 0, &je)) == NULL)
		return fail(err, "not JSON (%s at byte %d)", je.text, je.position);
	tb_error_clear(&e);
	*result = parse_doc(doc, 0, &e);
	json_decref(doc);
	if (*result == NULL)
		return tb_fail(err, e.code != 0 ? e.code : TB_ERR_INVALID, NULL, "%s", e.message);
	return 0;
}

/* ---- --json-stream ---- */

struct tb_iperf_stream {
	tb_iperf_interval_fn on_interval;
	void *cls;
	struct tb_outbuf line; /* the line being read, shorter than STREAM_LINE_MAX */
	unsigned long lineno;
	bool done;             /* the end event was read: the rest is not events */
	json_t *start;         /* start event data or NULL */
	json_t *intervals;     /* normalised */
	json_t *end;           /* end event data or NULL */
	json_t *error;         /* the first error event's text or NULL */
	json_t *server_output; /* normalised, or NULL */
	json_t *last;          /* borrowed from intervals */
	struct tb_error err;   /* the first failure; later bytes are ignored */
};

struct tb_iperf_stream *tb_iperf_stream_new(tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_iperf_stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	if ((s->intervals = json_array()) == NULL) {
		free(s);
		return NULL;
	}
	s->on_interval = on_interval;
	s->cls = cls;
	s->line.max = STREAM_LINE_MAX - 1;
	return s;
}

static void stream_free(struct tb_iperf_stream *s)
{
	tb_outbuf_free(&s->line);
	json_decref(s->start);
	json_decref(s->intervals);
	json_decref(s->end);
	json_decref(s->error);
	json_decref(s->server_output);
	free(s);
}

static void on_interval_event(struct tb_iperf_stream *s, const json_t *data)
{
	char path[48];
	json_t *iv, *copy = NULL;

	snprintf(path, sizeof(path), "line %lu: interval", s->lineno);
	if ((iv = interval(data, path, &s->err)) == NULL)
		return;
	if (same_interval(iv, s->last)) {
		json_decref(iv);
		return;
	}
	if ((s->on_interval != NULL && (copy = json_deep_copy(iv)) == NULL) ||
	    json_array_append(s->intervals, iv) != 0) {
		json_decref(copy);
		json_decref(iv);
		nomem(&s->err);
		return;
	}
	s->last = iv;
	json_decref(iv);
	if (copy != NULL)
		s->on_interval(s->cls, copy);
}

/* One complete line: one event. */
static void stream_line(struct tb_iperf_stream *s)
{
	const char *name;
	json_error_t je;
	json_t *ev, *data;

	s->lineno++;
	if (strspn(tb_outbuf_str(&s->line), " \t\r") == s->line.len)
		return;
	if ((ev = json_loadb(tb_outbuf_str(&s->line), s->line.len, 0, &je)) == NULL) {
		fail(&s->err, "line %lu is not JSON (%s)", s->lineno, je.text);
		return;
	}
	name = json_string_value(json_object_get(ev, "event"));
	data = json_object_get(ev, "data");
	if (name == NULL || data == NULL) {
		fail(&s->err, "line %lu is not a --json-stream event (no event name or data)", s->lineno);
	} else if (strcmp(name, "start") == 0) {
		if (s->start != NULL)
			fail(&s->err, "line %lu: a second start event", s->lineno);
		else if (!json_is_object(data))
			fail(&s->err, "line %lu: start data is not an object", s->lineno);
		else
			s->start = json_incref(data);
	} else if (strcmp(name, "interval") == 0) {
		on_interval_event(s, data);
	} else if (strcmp(name, "error") == 0) {
		if (!json_is_string(data))
			fail(&s->err, "line %lu: error data is not a string", s->lineno);
		else if (s->error == NULL)
			s->error = json_incref(data);
	} else if (strcmp(name, "end") == 0) {
		s->end = json_incref(data);
		s->done = true;
	} else if (strcmp(name, "server_output_text") == 0 || strcmp(name, "server_output_json") == 0) {
		json_t *so = NULL;

		/* Before end: the shape of the run comes from start alone. */
		if (json_is_string(data))
			so = server_text(json_string_value(data), s->start, NULL, &s->err);
		else if (json_is_object(data))
			so = parse_doc(data, 1, &s->err);
		else
			fail(&s->err, "line %lu: %s data is neither text nor an object", s->lineno, name);
		json_decref(s->server_output);
		s->server_output = so;
	}
	/* Other events: a later iperf3's; not ours to read. */
	json_decref(ev);
}

/* Append n bytes to the line being read. */
static int stream_append(struct tb_iperf_stream *s, const char *data, size_t n)
{
	tb_outbuf_add(&s->line, data, n);
	if (s->line.truncated)
		return fail(&s->err, "line %lu is longer than %zu bytes", s->lineno + 1, STREAM_LINE_MAX);
	return s->line.nomem ? nomem(&s->err) : 0;
}

void tb_iperf_stream_feed(struct tb_iperf_stream *s, const char *data, size_t len)
{
	if (s == NULL || data == NULL)
		return;
	while (len > 0 && !s->done && s->err.code == 0) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - data) : len;

		if (stream_append(s, data, n) != 0)
			return;
		data += n;
		len -= n;
		if (nl != NULL) {
			data++;
			len--;
			stream_line(s);
			tb_outbuf_clear(&s->line);
		}
	}
}

int tb_iperf_stream_finish(struct tb_iperf_stream *s, json_t **result, struct tb_error *err)
{
	int rc;

	*result = NULL;
	if (s == NULL)
		return nomem(err);
	if (!s->done && s->line.len > 0 && s->err.code == 0)
		stream_line(s);
	if (s->err.code == 0 && s->start == NULL && s->end == NULL && s->error == NULL)
		fail(&s->err, "no start, end or error event in %lu lines", s->lineno);
	if (s->err.code != 0) {
		rc = tb_fail(err, s->err.code, s->err.field, "%s", s->err.message);
		stream_free(s);
		return rc;
	}
	*result = result_of(s->start, json_incref(s->intervals), s->end, s->error, s->server_output, &s->err);
	s->server_output = NULL;
	if (*result != NULL)
		rc = 0;
	else
		rc = tb_fail(err, s->err.code != 0 ? s->err.code : TB_ERR_INVALID, NULL, "%s", s->err.message);
	stream_free(s);
	return rc;
}
