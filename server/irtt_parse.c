/* irtt_parse.c - round trips of irtt or ping: see irtt_parse.h. */
#include "irtt_parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 512
#define BIN_MAX 1000 /* packets in one bin: bin_s / interval_s, bounded */

struct tb_rtt_reader {
	enum tb_rtt_tool tool;
	long per_bin; /* sequence numbers in a bin */
	double bin_s;
	tb_rtt_bin_fn fn;
	void *cls;
	char line[LINE_MAX_LEN];
	size_t line_len;
	int skipping; /* the current line outgrew line[]: dropped */
	long base;    /* the stream's first sequence number (ping: 1 on Linux, 0 on FreeBSD) */
	long bin;     /* the open bin, -1 before the first packet */
	long top;     /* the highest sequence number seen (from base) */
	long received;
	double rtt[BIN_MAX];
	long n;
};

int tb_rtt_go_duration_ms(const char *s, size_t len, double *ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ns", 1e-6}, {"\xc2\xb5s", 1e-3}, {"\xce\xbcs", 1e-3}, {"us", 1e-3}, {"ms", 1.0},
		     {"s", 1e3},   {"m", 60e3},         {"h", 3600e3},       {NULL, 0}};
	char buf[64];
	const char *p;
	double total = 0;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	p = buf;
	while (*p != '\0') {
		char *end;
		double v = strtod(p, &end);
		int u;

		if (end == p || (*p != '.' && (*p < '0' || *p > '9')))
			return -1;
		for (u = 0; units[u].unit != NULL; u++) {
			size_t k = strlen(units[u].unit);

			/* "m" must not take the "m" of "ms" */
			if (strncmp(end, units[u].unit, k) == 0 && !(k == 1 && end[0] == 'm' && end[1] == 's'))
				break;
		}
		if (units[u].unit == NULL)
			return -1;
		total += v * units[u].ms;
		p = end + strlen(units[u].unit);
	}
	*ms = total;
	return 0;
}

/* The value of "name" (a word starting the line or after a space) up to the
 * next space: its start and length, or NULL. */
static const char *field(const char *line, const char *name, size_t *len)
{
	size_t k = strlen(name);

	for (const char *p = strstr(line, name); p != NULL; p = strstr(p + 1, name)) {
		if (p == line || p[-1] == ' ') {
			const char *v = p + k;

			*len = strcspn(v, " \t\r\n");
			return v;
		}
	}
	return NULL;
}

int tb_rtt_parse_line(enum tb_rtt_tool tool, const char *line, long *seq, double *rtt_ms)
{
	const char *v;
	char *end;
	size_t len;
	long s;

	if ((v = field(line, tool == TB_RTT_IRTT ? "seq=" : "icmp_seq=", &len)) == NULL || len == 0)
		return 0;
	s = strtol(v, &end, 10);
	if (end != v + len || s < 0)
		return 0;
	if (tool == TB_RTT_IRTT) {
		if ((v = field(line, "rtt=", &len)) == NULL || tb_rtt_go_duration_ms(v, len, rtt_ms) != 0)
			return 0;
	} else {
		/* "time=0.045 ms" (both OSes), "time<1 ms" on some old pings: not taken */
		if ((v = field(line, "time=", &len)) == NULL)
			return 0;
		*rtt_ms = strtod(v, &end);
		if (end == v || strncmp(end, " ms", 3) != 0)
			return 0;
	}
	*seq = s;
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The value at quantile q of n sorted values (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
	double rank = ceil(q * (double)n);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;

	return v[i < n ? i : n - 1];
}

static double median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ms3(double x)
{
	return round(x * 1000) / 1000;
}

/* The open bin out, with up_to sequence numbers (from the bin's start) sent. */
static void emit(struct tb_rtt_reader *rd, long sent)
{
	json_t *list = json_array(), *bin;
	double sorted[BIN_MAX];
	size_t n = (size_t)rd->n;

	if (list == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_real(ms3(rd->rtt[i])));
	memcpy(sorted, rd->rtt, n * sizeof(sorted[0]));
	qsort(sorted, n, sizeof(sorted[0]), cmp_double);
	bin = json_pack("{s:f, s:I, s:I, s:o, s:o, s:o, s:o}", "t", (double)rd->bin * rd->bin_s, "n", (json_int_t)n,
			"lost", (json_int_t)(sent > rd->n ? sent - rd->n : 0), "min",
			n ? json_real(ms3(sorted[0])) : json_null(), "median",
			n ? json_real(ms3(median(sorted, n))) : json_null(), "max",
			n ? json_real(ms3(sorted[n - 1])) : json_null(), "rtt", list);
	rd->n = 0;
	if (bin != NULL)
		rd->fn(rd->cls, bin);
}

/* One packet: a later bin first sends out the open one (and, empty, any
 * bin wholly lost in between). */
static void take(struct tb_rtt_reader *rd, long seq, double rtt)
{
	long b;

	if (rd->bin < 0)
		rd->base = rd->tool == TB_RTT_PING && seq > 0 ? 1 : 0;
	seq -= rd->base;
	if (seq < 0)
		return;
	b = seq / rd->per_bin;
	if (b < rd->bin)
		return; /* late: its bin has gone out */
	while (rd->bin >= 0 && b > rd->bin) {
		emit(rd, rd->per_bin);
		rd->bin++;
	}
	rd->bin = b;
	if (seq > rd->top)
		rd->top = seq;
	if (rd->n < BIN_MAX)
		rd->rtt[rd->n++] = rtt;
	rd->received++;
}

struct tb_rtt_reader *tb_rtt_reader_new(enum tb_rtt_tool tool, double interval_s, double bin_s, tb_rtt_bin_fn fn,
					void *cls)
{
	struct tb_rtt_reader *rd;
	double per;

	if (interval_s <= 0 || bin_s < interval_s)
		return NULL;
	per = floor(bin_s / interval_s + 0.5);
	if ((rd = calloc(1, sizeof(*rd))) == NULL)
		return NULL;
	rd->tool = tool;
	rd->per_bin = per > BIN_MAX ? BIN_MAX : (long)per;
	rd->bin_s = (double)rd->per_bin * interval_s;
	rd->fn = fn;
	rd->cls = cls;
	rd->bin = -1;
	rd->top = -1;
	return rd;
}

static void take_line(struct tb_rtt_reader *rd)
{
	long seq;
	double rtt;

	rd->line[rd->line_len] = '\0';
	if (!rd->skipping && tb_rtt_parse_line(rd->tool, rd->line, &seq, &rtt))
		take(rd, seq, rtt);
	rd->line_len = 0;
	rd->skipping = 0;
}

void tb_rtt_feed(struct tb_rtt_reader *rd, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n') {
			take_line(rd);
		} else if (rd->line_len + 1 < sizeof(rd->line)) {
			rd->line[rd->line_len++] = data[i];
		} else {
			rd->skipping = 1;
		}
	}
}

void tb_rtt_finish(struct tb_rtt_reader *rd)
{
	if (rd->line_len > 0)
		take_line(rd);
	if (rd->bin >= 0) {
		emit(rd, rd->top - rd->bin * rd->per_bin + 1);
		rd->bin = -1;
	}
}

long tb_rtt_received(const struct tb_rtt_reader *rd)
{
	return rd->received;
}

void tb_rtt_reader_free(struct tb_rtt_reader *rd)
{
	free(rd);
}

json_t *tb_rtt_phase_summary(const json_t *bins)
{
	size_t i, n = 0, cap = 0;
	json_int_t lost = 0;
	double *v = NULL;
	const json_t *b, *x;
	json_t *out;

	json_array_foreach(bins, i, b) cap += json_array_size(json_object_get(b, "rtt"));
	if (cap > 0 && (v = malloc(cap * sizeof(*v))) == NULL)
		return NULL;
	json_array_foreach(bins, i, b)
	{
		size_t k;

		lost += json_integer_value(json_object_get(b, "lost"));
		json_array_foreach(json_object_get(b, "rtt"), k, x) if (json_is_number(x) && n < cap)
			v[n++] = json_number_value(x);
	}
	if (n == 0) {
		free(v);
		return json_pack("{s:i, s:I, s:n, s:n, s:n, s:n}", "n", 0, "lost", lost, "min", "median", "p95", "max");
	}
	qsort(v, n, sizeof(*v), cmp_double);
	out = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f}", "n", (json_int_t)n, "lost", lost, "min", ms3(v[0]), "median",
			ms3(median(v, n)), "p95", ms3(quantile(v, n, 0.95)), "max", ms3(v[n - 1]));
	free(v);
	return out;
}

json_t *tb_rtt_summary(const json_t *idle, const json_t *load)
{
	json_t *si = tb_rtt_phase_summary(idle), *sl = tb_rtt_phase_summary(load);
	const json_t *mi = json_object_get(si, "median"), *ml = json_object_get(sl, "median");
	json_t *ratio = json_is_number(mi) && json_is_number(ml) && json_number_value(mi) > 0
				? json_real(round(json_number_value(ml) / json_number_value(mi) * 100) / 100)
				: json_null();

	if (si == NULL || sl == NULL) {
		json_decref(si);
		json_decref(sl);
		json_decref(ratio);
		return NULL;
	}
	return json_pack("{s:o, s:o, s:o}", "idle", si, "load", sl, "median_ratio", ratio);
}
