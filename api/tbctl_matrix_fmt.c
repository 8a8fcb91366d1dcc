/* tbctl_matrix_fmt.c - formatting for tbctl matrix: bitrates, durations,
 * counts, a cell's parameters and pair; loading a spec file. */
#include "tbctl_matrix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "tbctl_table.h"

int mx_nomem(void)
{
	fprintf(stderr, "tbctl: out of memory\n");
	return TBCTL_EXIT_SERVER;
}

long long mx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mx_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

const char *mx_str_or(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = tbctl_jstr(obj, key);

	return s != NULL ? s : dflt;
}

/* The number at key, or dflt when missing or null. */
double mx_jnum(const json_t *obj, const char *key, double dflt)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : dflt;
}

int mx_parse_id(const char *s, long long *id)
{
	char *end;

	*id = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || *id <= 0) {
		fprintf(stderr, "tbctl: a matrix id is a positive whole number, got \"%s\"\n", s);
		return -1;
	}
	return 0;
}

/* ---- formatting ---- */

/* 9.41 Gbit/s: three significant digits, as iperf3 prints them; "-" for none. */
void mx_fmt_bps(char *buf, size_t n, double bps)
{
	static const char *const unit[] = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
	int u = 0, prec;

	if (bps < 0) {
		snprintf(buf, n, "-");
		return;
	}
	while (bps >= 999.5 && u < 4) {
		bps /= 1000.0;
		u++;
	}
	prec = bps >= 99.95 || u == 0 ? 0 : bps >= 9.995 ? 1 : 2;
	snprintf(buf, n, "%.*f %s", prec, bps, unit[u]);
}

/* 42s, 3m05s, 2h10m; "-" for a negative time. */
void mx_fmt_dur(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);

	if (s < 0)
		snprintf(buf, n, "-");
	else if (t < 60)
		snprintf(buf, n, "%lds", t);
	else if (t < 3600)
		snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, n, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

/* A whole number as such, else one decimal ("-" for none). */
void mx_fmt_count(char *buf, size_t n, double v)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else if (v == (double)(long long)v)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "%.1f", v);
}

void mx_fmt_percent(char *buf, size_t n, double v)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f%%", v);
}

/* A value of a compare metric in its unit ("-" for none, i.e. < 0). */
void mx_fmt_metric(char *buf, size_t n, const char *metric, double v)
{
	if (strcmp(metric, "lost_percent") == 0)
		mx_fmt_percent(buf, n, v);
	else if (strcmp(metric, "retransmits") == 0)
		mx_fmt_count(buf, n, v);
	else if (strcmp(metric, "jitter_ms") == 0) {
		if (v < 0)
			snprintf(buf, n, "-");
		else
			snprintf(buf, n, "%.3f ms", v);
	} else
		mx_fmt_bps(buf, n, v);
}

/* The median of a stats object {n,mean,median,...} (null when no data): -1. */
double mx_median_of(const json_t *cell, const char *key)
{
	return mx_jnum(json_object_get(cell, key), "median", -1);
}

/* A run's parameters the way iperf3 takes them ("-t 10 -P 4 -b 1G"), then
 * its cell's other dimensions: "-t 3 tool=iperf2 set=2 link=satellite". */
void mx_fmt_params(char *buf, size_t n, const json_t *p)
{
	size_t used = 0;
	const char *s;

	buf[0] = '\0';
#define ADD(...)                                                              \
	do {                                                                  \
		if (used < n) {                                               \
			int w_ = snprintf(buf + used, n - used, __VA_ARGS__); \
			if (w_ > 0)                                           \
				used += (size_t)w_;                           \
		}                                                             \
	} while (0)
	if (tbctl_jint(p, "duration_s", 0) > 0)
		ADD("-t %lld", tbctl_jint(p, "duration_s", 0));
	if (tbctl_jint(p, "omit_s", 0) > 0)
		ADD(" -O %lld", tbctl_jint(p, "omit_s", 0));
	if (tbctl_jint(p, "parallel", 1) > 1)
		ADD(" -P %lld", tbctl_jint(p, "parallel", 1));
	if ((s = tbctl_jstr(p, "bitrate")) != NULL)
		ADD(" -b %s", s);
	if (tbctl_jint(p, "length", 0) > 0)
		ADD(" -l %lld", tbctl_jint(p, "length", 0));
	if (tbctl_jint(p, "window", 0) > 0)
		ADD(" -w %lld", tbctl_jint(p, "window", 0));
	if ((s = tbctl_jstr(p, "congestion")) != NULL)
		ADD(" -C %s", s);
	if (tbctl_jint(p, "tos", -1) >= 0)
		ADD(" -S %lld", tbctl_jint(p, "tos", -1));
	if (json_is_true(json_object_get(p, "zerocopy")))
		ADD(" -Z");
	if ((s = tbctl_jstr(p, "affinity")) != NULL)
		ADD(" -A %s", s);
	/* what else the run's cell is: IPv6, another tool, a tunable set, a link profile */
	if ((s = tbctl_jstr(p, "family")) != NULL && strcmp(s, "ipv6") == 0)
		ADD(" -6");
	if ((s = tbctl_jstr(p, "tool")) != NULL)
		ADD(" tool=%s", s);
	if (json_is_object(json_object_get(p, "tunables")))
		ADD(" set=%lld", tbctl_jint(json_object_get(p, "tunables"), "set", 0));
	if (json_is_object(json_object_get(p, "link_profile")))
		ADD(" link=%s", mx_str_or(json_object_get(p, "link_profile"), "name", "none"));
#undef ADD
	if (buf[0] == ' ')
		memmove(buf, buf + 1, strlen(buf));
}

/* "left@ubuntu": the machine, and the OS it ran in when known. */
void mx_fmt_host(char *buf, size_t n, const json_t *o, const char *name_key, const char *os_key)
{
	const char *os = tbctl_jstr(o, os_key);

	snprintf(buf, n, "%s%s%s", mx_str_or(o, name_key, "?"), os ? "@" : "", os ? os : "");
}

void mx_fmt_pair(char *buf, size_t n, const json_t *o)
{
	char c[96], s[96];

	mx_fmt_host(c, sizeof(c), o, "client", "client_os");
	mx_fmt_host(s, sizeof(s), o, "server", "server_os");
	snprintf(buf, n, "%s -> %s", c, s);
}

/* ---- the spec ---- */

/* The spec in path ("-": stdin) as JSON, or NULL after saying why. */
json_t *mx_load_spec(const char *path)
{
	int is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "stdin" : path;
	json_error_t e;
	json_t *j = is_stdin ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &e)
			     : json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (j == NULL) {
		fprintf(stderr, "tbctl: %s", name);
		if (e.line > 0)
			fprintf(stderr, ":%d:%d", e.line, e.column);
		fputs(": ", stderr);
		tbctl_print_safe(stderr, e.text);
		fputc('\n', stderr);
		if (e.line > 0)
			fputs("tbctl: a matrix spec is one JSON object (deploy/examples/baseline.json is one)\n",
			      stderr);
		return NULL;
	}
	if (!json_is_object(j)) {
		fprintf(stderr, "tbctl: %s: a matrix spec is one JSON object {\"name\": ..., \"pairs\": [...]}\n",
			name);
		json_decref(j);
		return NULL;
	}
	return j;
}

char *mx_matrix_path(long long id, const char *tail)
{
	char *p = malloc(96);

	if (p != NULL)
		snprintf(p, 96, "/api/v1/matrices/%lld%s", id, tail);
	return p;
}

size_t mx_columns(void)
{
#ifdef TIOCGWINSZ
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
#endif
	return 80;
}

void mx_print_boot(const json_t *d)
{
	/* a line per boot as it starts and ends (its exact commands: tbctl action ID) */
	fputs("boot ", stdout);
	tbctl_print_safe(stdout, mx_str_or(d, "host", "?"));
	fputs(" into ", stdout);
	tbctl_print_safe(stdout, mx_str_or(d, "os", "?"));
	printf(": %s", mx_str_or(d, "state", "?"));
	if (json_is_integer(json_object_get(d, "action")))
		printf(" (action %lld)", tbctl_jint(d, "action", 0));
	if (tbctl_jstr(d, "error") != NULL) {
		fputs(": ", stdout);
		tbctl_print_safe(stdout, tbctl_jstr(d, "error"));
	}
	fputc('\n', stdout);
}
