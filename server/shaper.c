/* shaper.c - link profiles as dummynet and tc commands, and their checks (shaper.h). */
#include "shaper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC "tc"
#define TBF_MIN_BURST 32768.0
#define DUMMYNET_SLOTS 50
#define FRAME 1514

bool tb_shape_tc_empty(const struct tb_shape *s)
{
	return s->none || (s->bps <= 0 && s->loss <= 0 && s->delay_ms <= 0);
}

/* Each word onto out; -1 when one does not fit. */
static int add_all(struct tb_argv *out, const char *const words[])
{
	for (int i = 0; words[i] != NULL; i++)
		if (tb_argv_add(out, words[i]) != 0)
			return -1;
	return 0;
}

/* x rounded to a whole number, then suffix ("20000000bit/s", "600ms"). */
static int add_int(struct tb_argv *out, double x, const char *suffix)
{
	char w[48];

	snprintf(w, sizeof(w), "%.0f%s", x, suffix);
	return tb_argv_add(out, w);
}

int tb_shape_ipfw_argv(const struct tb_shape *s, struct tb_argv *out)
{
	static const char *const del[] = {"ipfw", "-q", "pipe", "1", "delete", NULL};
	static const char *const cfg[] = {"ipfw", "-q", "pipe", "1", "config", "bw", NULL};
	int rc;

	tb_argv_reset(out);
	if (s->none)
		return add_all(out, del);
	rc = add_all(out, cfg) | add_int(out, s->bps, "bit/s");
	if (s->delay_ms > 0)
		rc |= tb_argv_add(out, "delay") | add_int(out, s->delay_ms, "");
	if (s->loss > 0) {
		char w[32];

		snprintf(w, sizeof(w), "%.6f", s->loss / 100.0);
		rc |= tb_argv_add(out, "plr") | tb_argv_add(out, w);
	}
	if (s->queue > 0)
		rc |= tb_argv_add(out, "queue") | add_int(out, s->queue, "");
	return rc != 0 ? -1 : 0;
}

int tb_shape_tc_argv(const struct tb_shape *s, const char *ifname, struct tb_argv *out)
{
	const char *const head[] = {TC, "qdisc", "replace", "dev", ifname, "root", "handle", "1:", NULL};
	const char *const del[] = {TC, "qdisc", "del", "dev", ifname, "root", NULL};
	int rc;

	tb_argv_reset(out);
	if (tb_shape_tc_empty(s))
		return add_all(out, del);
	rc = add_all(out, head);
	if (s->loss <= 0 && s->delay_ms <= 0) { /* a rate only: tbf, which every kernel has */
		double burst = fmax(floor(s->bps / 8 / 100), TBF_MIN_BURST);
		int slots = s->queue > 0 ? s->queue : DUMMYNET_SLOTS;

		rc |= tb_argv_add(out, "tbf") | tb_argv_add(out, "rate") | add_int(out, s->bps, "bit") |
		      tb_argv_add(out, "burst") | add_int(out, burst, "") | tb_argv_add(out, "limit") |
		      add_int(out, (double)slots * FRAME + burst, "");
		return rc != 0 ? -1 : 0;
	}
	rc |= tb_argv_add(out, "netem");
	if (s->delay_ms > 0)
		rc |= tb_argv_add(out, "delay") | add_int(out, s->delay_ms, "ms");
	if (s->loss > 0) {
		char w[32];

		snprintf(w, sizeof(w), "%.4g%%", s->loss);
		rc |= tb_argv_add(out, "loss") | tb_argv_add(out, w);
	}
	if (s->bps > 0)
		rc |= tb_argv_add(out, "rate") | add_int(out, s->bps, "bit");
	if (s->queue > 0)
		rc |= tb_argv_add(out, "limit") | add_int(out, s->queue, "");
	return rc != 0 ? -1 : 0;
}

static bool near(double got, double want, double rel)
{
	return fabs(got - want) <= want * rel + 0.5;
}

int tb_shape_ipfw_check(const struct tb_shape *s, const json_t *pipe, char *msg, size_t len)
{
	double bw = json_number_value(json_object_get(pipe, "bw_bps"));
	double plr = json_number_value(json_object_get(pipe, "plr"));
	double delay = json_number_value(json_object_get(pipe, "delay_ms"));

	if (s->none) {
		if (pipe == NULL)
			return 0;
		snprintf(msg, len, "ipfw pipe 1 show still lists pipe 1 after its delete");
		return -1;
	}
	if (pipe != NULL && near(bw, s->bps, 0.001) && fabs(plr - s->loss / 100.0) <= 1e-6 &&
	    near(delay, s->delay_ms, 0))
		return 0;
	snprintf(msg, len,
		 "ipfw pipe 1 show reads back %s (bw %.0f bit/s, delay %.0f ms, plr %g) where bw %.0f bit/s, "
		 "delay %d ms, plr %g was set",
		 pipe == NULL ? "no pipe 1" : "pipe 1", bw, delay, plr, s->bps, s->delay_ms, s->loss / 100.0);
	return -1;
}

bool tb_shape_ipfw_ruled(const char *text)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		char buf[256], *save = NULL, *w;
		const char *nl = strchr(line, '\n');
		size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line);
		bool pipe = false;

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), line);
		/* "NNNNN [set S] [prob P] pipe 1 ...": the action, then its number */
		for (w = strtok_r(buf, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
			if (pipe && strcmp(w, "1") == 0)
				return true;
			pipe = strcmp(w, "pipe") == 0;
			if (strcmp(w, "from") == 0)
				break; /* the body: a "pipe" after it is no action */
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	return false;
}

/* The number before unit in a tc word ("20Mbit", "600ms", "0.5%"): 1 and
 * *out scaled, else 0. */
static int tc_number(const char *w, double *out)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {{"Tbit", 1e12}, {"Gbit", 1e9}, {"Mbit", 1e6}, {"Kbit", 1e3}, {"bit", 1},
		     {"us", 1e-3},   {"ms", 1},     {"s", 1e3},    {"%", 1}};
	char *end;
	double x = strtod(w, &end);

	if (end == w)
		return 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			*out = x * units[i].mult;
			return 1;
		}
	return 0;
}

/* The value after key in tc's options ("rate 20Mbit burst ..."): 1 and *out. */
static int tc_option(const char *options, const char *key, double *out)
{
	char buf[512], *save = NULL, *w;
	int next = 0;

	snprintf(buf, sizeof(buf), "%s", options != NULL ? options : "");
	for (w = strtok_r(buf, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		if (next)
			return tc_number(w, out);
		next = strcmp(w, key) == 0;
	}
	return 0;
}

int tb_shape_tc_check(const struct tb_shape *s, const char *ifname, const json_t *qdisc, char *msg, size_t len)
{
	const char *kind = json_string_value(json_object_get(qdisc, "kind"));
	const char *opts = json_string_value(json_object_get(qdisc, "options"));
	const char *want = tb_shape_tc_empty(s) ? NULL : s->loss <= 0 && s->delay_ms <= 0 ? "tbf" : "netem";
	double rate = 0, loss = 0, delay = 0;
	bool ok;

	if (want == NULL) {
		if (qdisc == NULL)
			return 0;
		snprintf(msg, len, "tc qdisc show still lists a %s root qdisc on %s after its delete",
			 kind != NULL ? kind : "?", ifname);
		return -1;
	}
	if (kind == NULL || strcmp(kind, want) != 0) {
		snprintf(msg, len, "tc qdisc show reads back %s%s on %s where a %s was set",
			 kind != NULL ? "a root qdisc " : "no root qdisc", kind != NULL ? kind : "", ifname, want);
		return -1;
	}
	(void)tc_option(opts, "rate", &rate);
	(void)tc_option(opts, "loss", &loss);
	(void)tc_option(opts, "delay", &delay);
	ok = (s->bps <= 0 || near(rate, s->bps, 0.005)) && fabs(loss - s->loss) <= 1e-3 &&
	     near(delay, s->delay_ms, 0.001);
	if (ok)
		return 0;
	snprintf(msg, len,
		 "tc qdisc show reads back %s on %s (rate %.0f bit/s, delay %.0f ms, loss %g %%) where rate %.0f "
		 "bit/s, delay %d ms, loss %g %% was set",
		 kind, ifname, rate, delay, loss, s->bps, s->delay_ms, s->loss);
	return -1;
}
