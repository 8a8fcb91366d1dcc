/*
 * hostmeta_shape.c - the link shaping of a host or router in its metadata:
 * FreeBSD's dummynet pipes (`ipfw pipe show`) and Linux's qdiscs that
 * someone added (`tc qdisc show`), each parsed a line at a time like the
 * other hostmeta.c sections (hostmeta.h has the JSON).
 *
 * The ipfw layout is FreeBSD's sbin/ipfw/dummynet.c, list_pipes() and
 * print_flowset_parms(), FreeBSD 8 to 15: a link line per pipe,
 *	"00001:  50.000 Mbit/s    0 ms burst 0"
 * then its internal flowset, where the queue and the plr are glued,
 *	"q131073  50 sl.plr 0.020000 0 flows (1 buckets) sched 65537 ..."
 * then " sched 65537 type FIFO ...".  The pre-8 dummynet printed the queue
 * and plr on the link line itself ("00001:  50.000 Mbit/s    0 ms   50 sl.
 * plr 0.020000 0 queues (1 buckets) droptail"): both are read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmeta.h"
#include "hostmeta_internal.h"

/* s as a non-negative decimal fraction ("0.020000", "50.000"). */
static int to_double(struct span s, double *out)
{
	char buf[32], *end;

	if (s.n == 0 || s.n >= sizeof(buf) || strspn(s.p, "0123456789.") < s.n)
		return 0;
	memcpy(buf, s.p, s.n);
	buf[s.n] = '\0';
	*out = strtod(buf, &end);
	return *end == '\0';
}

static int ends_with(struct span w, const char *lit)
{
	size_t n = strlen(lit);

	return w.n >= n && memcmp(w.p + w.n - n, lit, n) == 0;
}

/* The words of one line of a pipe (after its "NNNNN:" or "qNNNNN") into p. */
static void pipe_words(json_t *p, struct span rest, int *oom)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {{"Mbit/s", 1e6}, {"Kbit/s", 1e3}, {"bit/s", 1}};
	struct span w, prev = {"", 0};
	json_int_t n;
	double d;
	int want_plr = 0;
	char q[48];

	while (hm_next_word(&rest, &w)) {
		if (want_plr && to_double(w, &d))
			hm_put(p, "plr", json_real(d), oom);
		want_plr = ends_with(w, "plr");
		if (hm_equals(w, "unlimited"))
			hm_put(p, "bw_bps", json_integer(0), oom);
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (hm_equals(w, units[i].unit) && to_double(prev, &d) && d * units[i].mult < 9e15)
				hm_put(p, "bw_bps", json_integer((json_int_t)(d * units[i].mult + 0.5)), oom);
		if (hm_equals(w, "ms") && hm_to_int(prev, &n))
			hm_put(p, "delay_ms", json_integer(n), oom);
		/* the queue: "50 sl." (slots), "64 KB" or "4000 B" (bytes) */
		if (hm_to_int(prev, &n) &&
		    (hm_starts(w, "sl.") || hm_starts(w, "KB") || hm_equals(w, "B") || hm_equals(w, "Bplr"))) {
			snprintf(q, sizeof(q), "%lld %s", (long long)n,
				 hm_starts(w, "sl.")  ? "sl."
				 : hm_starts(w, "KB") ? "KB"
						      : "B");
			hm_put(p, "queue", hm_chk(json_string(q), oom), oom);
		}
		prev = w;
	}
}

/* ipfw pipe show -> {"N": {"bw_bps", "delay_ms", "plr", "queue"}}. */
json_t *hm_ipfw_pipes_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom), *cur = NULL;
	struct span line, rest, w;
	const char *pos = text;
	json_int_t n;

	while (o != NULL && !*oom && hm_next_line(&pos, &line)) {
		rest = line;
		if (!hm_next_word(&rest, &w))
			continue;
		if (w.p == line.p && w.n > 1 && w.p[w.n - 1] == ':' && hm_to_int((struct span){w.p, w.n - 1}, &n)) {
			char key[24];

			snprintf(key, sizeof(key), "%lld", (long long)n);
			cur = hm_chk(json_pack("{s:i, s:i, s:f}", "bw_bps", 0, "delay_ms", 0, "plr", 0.0), oom);
			hm_put(o, key, cur, oom);
			if (*oom)
				break;
			pipe_words(cur, rest, oom);
		} else if (cur != NULL && w.p == line.p && w.n > 1 && w.p[0] == 'q' &&
			   hm_to_int((struct span){w.p + 1, w.n - 1}, &n)) {
			pipe_words(cur, rest, oom); /* the pipe's own flowset */
		} else if (w.p == line.p) {
			cur = NULL; /* a queue or scheduler of its own, or a flow table */
		}
	}
	return hm_nonempty(o, oom);
}

/* tc qdisc show -> {"DEV root" | "DEV parent P": {"kind", "options"}}, the
 * qdiscs with a handle other than 0: (the kernel's defaults: noqueue,
 * pfifo_fast, mq and its children, fq_codel by net.core.default_qdisc). */
json_t *hm_tc_qdisc_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom), *q;
	struct span line, rest, kind, handle, w, dev, where, parent = {"", 0};
	const char *pos = text;
	char key[96];

	while (o != NULL && !*oom && hm_next_line(&pos, &line)) {
		rest = line;
		/* "qdisc tbf 8001: dev ix0 root refcnt 2 rate 100Mbit burst 125000b lat 50ms" */
		if (!hm_next_word(&rest, &w) || !hm_equals(w, "qdisc") || !hm_next_word(&rest, &kind) ||
		    !hm_next_word(&rest, &handle) || hm_equals(handle, "0:") || !hm_next_word(&rest, &w) ||
		    !hm_equals(w, "dev") || !hm_next_word(&rest, &dev) || !hm_next_word(&rest, &where) || dev.n > 32)
			continue;
		parent.n = 0;
		if (hm_equals(where, "parent") && (!hm_next_word(&rest, &parent) || parent.n > 32))
			continue;
		if (!hm_equals(where, "root") && !hm_equals(where, "parent"))
			continue;
		snprintf(key, sizeof(key), "%.*s %s%.*s", (int)dev.n, dev.p, parent.n > 0 ? "parent " : "root",
			 (int)parent.n, parent.p);
		rest = hm_trim(rest, 1);
		if (hm_starts(rest, "refcnt ")) {
			hm_next_word(&rest, &w);
			hm_next_word(&rest, &w);
			rest = hm_trim(rest, 1);
		}
		q = hm_chk(json_object(), oom);
		hm_put_str(q, "kind", kind, oom);
		hm_put_str(q, "options", rest, oom);
		hm_put(o, key, q, oom);
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_ipfw_pipes(const char *text)
{
	return hm_run(hm_ipfw_pipes_parse, text);
}

json_t *tb_hostmeta_tc_qdisc(const char *text)
{
	return hm_run(hm_tc_qdisc_parse, text);
}
