/* run_sample.c - CPU and memory samples during a run: see run_sample.h. */
#include "run_sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "@@tb-sample"

/* The first sample comes half a second in, the next a second apart: half
 * way between iperf3's one-second intervals, each within 0.5 s of one.
 * sleep holds no descriptor of the channel, so that when the shell is
 * killed (by pid, with the run) the channel ends at once, not when the
 * orphaned sleep does. */
const char *tb_sample_command(enum tb_sample_os os)
{
	if (os == TB_SAMPLE_FREEBSD)
		return "d=0.5; while :; do echo " MARKER "; sysctl -n kern.cp_times; sysctl vm.stats.vm.v_page_count "
		       "vm.stats.vm.v_free_count vm.stats.vm.v_inactive_count hw.pagesize; sleep $d >/dev/null 2>&1; d=1; done";
	return "d=0.5; while :; do echo " MARKER "; grep -h -E"
	       " '^(cpu[0-9]|MemTotal:|MemAvailable:)' /proc/stat /proc/meminfo; sleep $d >/dev/null 2>&1; d=1; done";
}

/* Up to max unsigned numbers of line (up to its end or a newline) into v. */
static size_t numbers(const char *p, uint64_t *v, size_t max, int *only_numbers)
{
	size_t n = 0;

	*only_numbers = 1;
	while (*p != '\0' && *p != '\n') {
		char *end;

		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (*p < '0' || *p > '9') {
			*only_numbers = 0;
			while (*p != '\0' && *p != '\n' && *p != ' ' && *p != '\t')
				p++;
			continue;
		}
		if (n < max)
			v[n] = (uint64_t)strtoull(p, &end, 10);
		else
			(void)strtoull(p, &end, 10);
		n++;
		p = end;
	}
	return n;
}

static uint64_t value_after(const char *line, const char *name)
{
	size_t k = strlen(name);

	if (strncmp(line, name, k) != 0)
		return 0;
	return (uint64_t)strtoull(line + k, NULL, 10);
}

/* One line of Linux's /proc/stat or /proc/meminfo. */
static void linux_line(const char *line, struct tb_sample_frame *f)
{
	uint64_t v[10] = {0};
	int only;

	if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
		/* cpuN user nice system idle iowait irq softirq steal guest guest_nice */
		const char *p = line + 3;
		unsigned long idx = strtoul(p, NULL, 10);

		while (*p >= '0' && *p <= '9')
			p++;
		if (idx >= TB_SAMPLE_MAX_CPUS || numbers(p, v, 10, &only) < 4)
			return;
		f->cpu[idx] = (struct tb_cpu_ticks){.user = v[0],
						    .nice = v[1],
						    .system = v[2],
						    .idle = v[3],
						    .iowait = v[4],
						    .interrupt = v[5],
						    .softirq = v[6],
						    .steal = v[7]};
		if (idx + 1 > f->ncpu)
			f->ncpu = idx + 1;
	} else if (strncmp(line, "MemTotal:", 9) == 0) {
		f->mem_total_kib = value_after(line, "MemTotal:");
	} else if (strncmp(line, "MemAvailable:", 13) == 0) {
		f->mem_available_kib = value_after(line, "MemAvailable:");
	}
}

struct bsd_mem {
	uint64_t pages, free, inactive, pagesize;
};

/* One line of FreeBSD's kern.cp_times (numbers only) or a vm.stats value. */
static void freebsd_line(const char *line, struct tb_sample_frame *f, struct bsd_mem *m)
{
	uint64_t v[TB_SAMPLE_MAX_CPUS * 5]; /* 10 KiB of stack: the samplers of a run parse at once */
	int only;
	size_t n;

	if (line[0] >= '0' && line[0] <= '9') {
		n = numbers(line, v, sizeof(v) / sizeof(v[0]), &only);
		if (!only || n == 0 || n % 5 != 0 || n / 5 > TB_SAMPLE_MAX_CPUS)
			return;
		/* user nice system interrupt idle, per CPU (sys/resource.h CPUSTATES) */
		f->ncpu = n / 5;
		for (size_t i = 0; i < f->ncpu; i++)
			f->cpu[i] = (struct tb_cpu_ticks){.user = v[5 * i],
							  .nice = v[5 * i + 1],
							  .system = v[5 * i + 2],
							  .interrupt = v[5 * i + 3],
							  .idle = v[5 * i + 4]};
		return;
	}
	if (strncmp(line, "vm.stats.vm.v_page_count:", 25) == 0)
		m->pages = value_after(line, "vm.stats.vm.v_page_count:");
	else if (strncmp(line, "vm.stats.vm.v_free_count:", 25) == 0)
		m->free = value_after(line, "vm.stats.vm.v_free_count:");
	else if (strncmp(line, "vm.stats.vm.v_inactive_count:", 29) == 0)
		m->inactive = value_after(line, "vm.stats.vm.v_inactive_count:");
	else if (strncmp(line, "hw.pagesize:", 12) == 0)
		m->pagesize = value_after(line, "hw.pagesize:");
}

int tb_sample_parse(enum tb_sample_os os, const char *text, struct tb_sample_frame *out, struct tb_error *err)
{
	struct bsd_mem m = {0};
	const char *p = text;

	out->ncpu = 0;
	out->mem_total_kib = out->mem_available_kib = 0;
	while (*p != '\0') {
		if (os == TB_SAMPLE_FREEBSD)
			freebsd_line(p, out, &m);
		else
			linux_line(p, out);
		p += strcspn(p, "\n");
		if (*p == '\n')
			p++;
	}
	if (os == TB_SAMPLE_FREEBSD && m.pagesize > 0 && m.pages > 0) {
		out->mem_total_kib = m.pages * m.pagesize / 1024;
		out->mem_available_kib = (m.free + m.inactive) * m.pagesize / 1024;
	}
	if (out->ncpu == 0)
		return tb_fail(err, TB_ERR_INVALID, "", "no CPU counters in the sample");
	return 0;
}

static double pct(uint64_t part, uint64_t total)
{
	return total > 0 ? (double)((long long)(part * 10000 / total)) / 100.0 : 0.0;
}

static uint64_t diff(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0; /* a counter that went back (a CPU came online): nothing */
}

json_t *tb_sample_delta(const struct tb_sample_frame *prev, const struct tb_sample_frame *cur)
{
	json_t *cpus, *j;
	double top = -1.0;
	size_t busiest = 0;

	if (prev->ncpu != cur->ncpu || cur->ncpu == 0 || (cpus = json_array()) == NULL)
		return NULL;
	for (size_t i = 0; i < cur->ncpu; i++) {
		const struct tb_cpu_ticks *a = &prev->cpu[i], *b = &cur->cpu[i];
		uint64_t user = diff(a->user, b->user) + diff(a->nice, b->nice);
		uint64_t sys = diff(a->system, b->system) + diff(a->steal, b->steal);
		uint64_t intr = diff(a->interrupt, b->interrupt), soft = diff(a->softirq, b->softirq);
		uint64_t idle = diff(a->idle, b->idle) + diff(a->iowait, b->iowait);
		uint64_t total = user + sys + intr + soft + idle;
		double busy = 100.0 - pct(idle, total);

		if (total > 0 && busy > top) {
			top = busy;
			busiest = i;
		}
		json_array_append_new(cpus, json_pack("{s:f, s:f, s:f, s:f, s:f}", "user", pct(user, total), "system",
						      pct(sys, total), "interrupt", pct(intr, total), "softirq",
						      pct(soft, total), "idle", pct(idle, total)));
	}
	j = json_pack("{s:o, s:I}", "cpu", cpus, "busiest", (json_int_t)busiest);
	if (j != NULL && cur->mem_total_kib > 0)
		json_object_set_new(j, "mem",
				    json_pack("{s:I, s:I, s:f}", "total_kib", (json_int_t)cur->mem_total_kib,
					      "available_kib", (json_int_t)cur->mem_available_kib, "used_pct",
					      pct(cur->mem_total_kib - (cur->mem_available_kib < cur->mem_total_kib
										? cur->mem_available_kib
										: cur->mem_total_kib),
						  cur->mem_total_kib)));
	return j;
}

/* ---- the stream reader ---- */
struct tb_sample_reader {
	enum tb_sample_os os;
	tb_sample_fn fn;
	void *cls;
	char *buf; /* the frame being read (after its marker) */
	size_t len;
	int in_frame, have_prev, overflow;
	char line[128]; /* a partial line, to find markers across chunks */
	size_t line_len;
	struct tb_sample_frame prev, cur;
};

struct tb_sample_reader *tb_sample_reader_new(enum tb_sample_os os, tb_sample_fn on_sample, void *cls)
{
	struct tb_sample_reader *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->buf = malloc(TB_SAMPLE_FRAME_MAX + 1)) == NULL) {
		free(r);
		return NULL;
	}
	r->os = os;
	r->fn = on_sample;
	r->cls = cls;
	return r;
}

/* The frame read so far is complete: parse it, give a sample. */
static void end_frame(struct tb_sample_reader *r)
{
	json_t *s;

	if (!r->in_frame || r->overflow) {
		r->len = 0;
		r->overflow = 0;
		return;
	}
	r->buf[r->len] = '\0';
	r->len = 0;
	if (tb_sample_parse(r->os, r->buf, &r->cur, NULL) != 0)
		return;
	if (r->have_prev && (s = tb_sample_delta(&r->prev, &r->cur)) != NULL)
		r->fn(r->cls, s);
	r->prev = r->cur;
	r->have_prev = 1;
}

/* One whole line (without its newline). */
static void take_line(struct tb_sample_reader *r, const char *line, size_t n)
{
	if (n == sizeof(MARKER) - 1 && memcmp(line, MARKER, n) == 0) {
		end_frame(r);
		r->in_frame = 1;
		return;
	}
	if (!r->in_frame)
		return;
	if (r->len + n + 1 > TB_SAMPLE_FRAME_MAX) {
		r->overflow = 1;
		return;
	}
	memcpy(r->buf + r->len, line, n);
	r->buf[r->len + n] = '\n';
	r->len += n + 1;
}

void tb_sample_feed(struct tb_sample_reader *r, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			/* long lines (cp_times of many CPUs) go to the frame in pieces */
			if (r->line_len == sizeof(r->line)) {
				if (r->in_frame && r->len + r->line_len <= TB_SAMPLE_FRAME_MAX) {
					memcpy(r->buf + r->len, r->line, r->line_len);
					r->len += r->line_len;
				} else if (r->in_frame) {
					r->overflow = 1;
				}
				r->line_len = 0;
			}
			r->line[r->line_len++] = data[i];
			continue;
		}
		take_line(r, r->line, r->line_len);
		r->line_len = 0;
	}
}

void tb_sample_reader_free(struct tb_sample_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}

/* ---- a run's summary ---- */

/* x cut to two decimals (toward zero, as the samples' shares are). */
static double cents(double x)
{
	return (double)(long long)(x * 100.0) / 100.0;
}

json_t *tb_sample_summary(const json_t *samples)
{
	size_t n = json_array_size(samples), ncpu, busiest = 0;
	double *sum, *max, intr = 0.0, busy_all = 0.0, mem_max = 0.0, top = -1.0;
	json_t *cpus, *out;

	if (n == 0 || (ncpu = json_array_size(json_object_get(json_array_get(samples, 0), "cpu"))) == 0)
		return NULL;
	sum = calloc(ncpu, sizeof(double));
	max = calloc(ncpu, sizeof(double));
	cpus = json_array();
	if (sum == NULL || max == NULL || cpus == NULL) {
		free(sum);
		free(max);
		json_decref(cpus);
		return NULL;
	}
	for (size_t k = 0; k < n; k++) {
		const json_t *s = json_array_get(samples, k);
		const json_t *c = json_object_get(s, "cpu");
		double used = json_number_value(json_object_get(json_object_get(s, "mem"), "used_pct"));

		for (size_t i = 0; i < ncpu && i < json_array_size(c); i++) {
			const json_t *ci = json_array_get(c, i);
			double busy = 100.0 - json_number_value(json_object_get(ci, "idle"));

			sum[i] += busy;
			if (busy > max[i])
				max[i] = busy;
			busy_all += busy;
			intr += json_number_value(json_object_get(ci, "interrupt")) +
				json_number_value(json_object_get(ci, "softirq"));
		}
		if (used > mem_max)
			mem_max = used;
	}
	for (size_t i = 0; i < ncpu; i++) {
		double mean = sum[i] / (double)n;

		if (mean > top) {
			top = mean;
			busiest = i;
		}
		json_array_append_new(cpus, json_pack("{s:f, s:f}", "busy_mean", cents(mean), "busy_max", max[i]));
	}
	out = json_pack("{s:I, s:o, s:I, s:f, s:f, s:f, s:f, s:f}", "samples", (json_int_t)n, "cpu", cpus, "busiest",
			(json_int_t)busiest, "busiest_mean", cents(top), "busiest_max", max[busiest], "busy_mean",
			cents(busy_all / (double)n / (double)ncpu), "interrupt_share",
			busy_all > 0 ? cents(intr / busy_all * 100.0) : 0.0, "mem_used_max_pct", mem_max);
	free(sum);
	free(max);
	return out;
}
