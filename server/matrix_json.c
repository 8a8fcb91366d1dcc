/*
 * matrix_json.c - plans, runs and run params as JSON (matrix.h): the whole
 * plan, or a page of its runs with the timeline's rounds that hold them.
 */
#include "matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_internal.h"
#include "matrix_profile.h"
#include "traffic.h"

static const char *const order_names[] = {"sequential", "interleaved", "shuffled"};

static json_t *str_or_null(const char *s)
{
	return s[0] != '\0' ? json_string(s) : json_null();
}

json_t *tb_matrix_params_json(const struct tb_iperf_params *p)
{
	json_t *j = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:i}", "protocol",
			      tb_iperf_proto_name(p->proto), "direction", tb_iperf_dir_name(p->dir), "duration_s",
			      p->duration_s, "omit_s", p->omit_s, "parallel", p->parallel, "length",
			      p->length > 0 ? json_integer(p->length) : json_null(), "window",
			      p->window > 0 ? json_integer(p->window) : json_null(), "bitrate", str_or_null(p->bitrate),
			      "congestion", str_or_null(p->congestion), "tos",
			      p->tos >= 0 ? json_integer(p->tos) : json_null(), "zerocopy", (int)p->zerocopy,
			      "affinity", str_or_null(p->affinity), "interval_s", p->interval_s);

	/* "tool" only when not the default iperf3: params stored before tools were are the same */
	if (j != NULL && p->tool != TB_TOOL_IPERF3 && tb_tool_name(p->tool) != NULL &&
	    json_object_set_new(j, "tool", json_string(tb_tool_name(p->tool))) != 0) {
		json_decref(j);
		return NULL;
	}
	/* "family" likewise only when IPv6, so IPv4 runs compare with those stored before it */
	if (j != NULL && p->family == 6 && json_object_set_new(j, "family", json_string("ipv6")) != 0) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static int int_key(const json_t *j, const char *key, long long lo, long long hi, long long dflt, int required,
		   long long *out, struct tb_error *err)
{
	const json_t *v = json_object_get(j, key);
	char got[64];

	if (v == NULL || json_is_null(v)) {
		if (required)
			return tb_fail(err, TB_ERR_INVALID, key, "%s is required: a whole number %lld..%lld", key, lo,
				       hi);
		*out = dflt;
		return 0;
	}
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return tb_fail(err, TB_ERR_INVALID, key, "%s must be a whole number %lld..%lld, got %s", key, lo, hi,
			       got);
	*out = json_integer_value(v);
	return 0;
}

/* An optional key with the matrix grammar; absent or null leaves *out alone. */
static int value_key(const json_t *j, const char *key, enum tb_mx_axis axis, struct tb_mx_value *out, int *set,
		     struct tb_error *err)
{
	const json_t *v = json_object_get(j, key);

	*set = v != NULL && !json_is_null(v);
	return *set ? tb_mx_value_parse(axis, v, key, out, err) : 0;
}

int tb_matrix_params_from_json(const json_t *j, struct tb_iperf_params *p, struct tb_error *err)
{
	static const char *const keys[] = {"protocol",     "direction", "duration_s", "omit_s",     "parallel",
					   "length",       "window",    "bitrate",    "congestion", "tos",
					   "zerocopy",     "affinity",  "interval_s", "tunables",   "tool",
					   "link_profile", "family",    NULL};
	static const char *const protos[] = {"tcp", "udp", NULL};
	static const char *const dirs[] = {"forward", "reverse", "bidir", NULL};
	struct tb_iperf_params x;
	struct tb_mx_value v;
	const char *key;
	const json_t *e;
	long long n;
	int rc, set;

	memset(&x, 0, sizeof(x));
	if (!json_is_object(j))
		return tb_fail(err, TB_ERR_INVALID, "", "run params must be a JSON object");
	json_object_foreach((json_t *)j, key, e)
	{
		int known = 0;

		for (int i = 0; keys[i] != NULL && !known; i++)
			known = strcmp(key, keys[i]) == 0;
		if (!known)
			return tb_fail(err, TB_ERR_UNKNOWN_FIELD, key, "%.40s: unknown field in run params", key);
	}
	for (int pass = 0; pass < 2; pass++) {
		const char *k = pass == 0 ? "protocol" : "direction";
		const char *const *names = pass == 0 ? protos : dirs;
		int found = -1;

		e = json_object_get(j, k);
		for (int i = 0; json_is_string(e) && names[i] != NULL; i++)
			if (strcmp(json_string_value(e), names[i]) == 0)
				found = i;
		if (found < 0)
			return tb_fail(err, TB_ERR_INVALID, k, "%s must be one of %s", k,
				       pass == 0 ? "tcp | udp" : "forward | reverse | bidir");
		if (pass == 0)
			x.proto = (enum tb_iperf_proto)found;
		else
			x.dir = (enum tb_iperf_dir)found;
	}
	if ((rc = int_key(j, "duration_s", 1, 86400, 0, 1, &n, err)) != 0)
		return rc;
	x.duration_s = (int)n;
	if ((rc = int_key(j, "omit_s", 0, TB_MX_OMIT_MAX, 0, 0, &n, err)) != 0)
		return rc;
	x.omit_s = (int)n;
	if ((rc = int_key(j, "parallel", 1, 128, 1, 0, &n, err)) != 0)
		return rc;
	x.parallel = (int)n;
	if ((rc = int_key(j, "tos", 0, 255, -1, 0, &n, err)) != 0)
		return rc;
	x.tos = (int)n;
	if ((rc = int_key(j, "interval_s", 1, 60, 1, 0, &n, err)) != 0)
		return rc;
	x.interval_s = (int)n;
	if ((rc = value_key(j, "length", TB_MX_LENGTH, &v, &set, err)) != 0)
		return rc;
	x.length = set ? v.num : 0;
	if (x.proto == TB_IPERF_UDP && x.length > 65507)
		return tb_fail(err, TB_ERR_INVALID, "length", "length is %ld bytes; UDP runs take at most 65507",
			       x.length);
	if ((rc = value_key(j, "window", TB_MX_WINDOW, &v, &set, err)) != 0)
		return rc;
	x.window = set ? v.num : 0;
	if ((rc = value_key(j, "bitrate", TB_MX_BITRATE, &v, &set, err)) != 0)
		return rc;
	if (set)
		snprintf(x.bitrate, sizeof(x.bitrate), "%s", v.str);
	if ((rc = value_key(j, "congestion", TB_MX_CONGESTION, &v, &set, err)) != 0)
		return rc;
	if (set)
		snprintf(x.congestion, sizeof(x.congestion), "%s", v.str);
	if ((rc = value_key(j, "zerocopy", TB_MX_ZEROCOPY, &v, &set, err)) != 0)
		return rc;
	x.zerocopy = set && v.num != 0;
	if ((rc = value_key(j, "affinity", TB_MX_AFFINITY, &v, &set, err)) != 0)
		return rc;
	if (set)
		snprintf(x.affinity, sizeof(x.affinity), "%s", v.str);
	if ((rc = value_key(j, "tool", TB_MX_TOOL, &v, &set, err)) != 0)
		return rc;
	x.tool = set ? (int)v.num : TB_TOOL_IPERF3;
	if ((rc = value_key(j, "family", TB_MX_FAMILY, &v, &set, err)) != 0)
		return rc;
	x.family = set ? (int)v.num : 4;
	*p = x;
	return 0;
}

/* "-t 10 -u -b 0" (the run's tool's options), or null when they cannot be made. */
static json_t *args_json(const struct tb_iperf_params *p)
{
	const struct tb_traffic_driver *d = tb_traffic_driver_for(p->tool);
	struct tb_argv a;
	char buf[TB_ARGV_BUF];
	size_t used = 0;

	memset(&a, 0, sizeof(a));
	if (d == NULL || d->params_args(p, &a, NULL) != 0)
		return json_null();
	buf[0] = '\0';
	for (int i = 0; i < a.n && a.v[i] != NULL && used < sizeof(buf); i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s", i > 0 ? " " : "", a.v[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return json_string(buf);
}

static json_t *os_or_null(const char *os)
{
	return os[0] != '\0' ? json_string(os) : json_null();
}

json_t *tb_matrix_run_json(const struct tb_planned_run *r)
{
	json_t *j = json_pack("{s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "seq", r->seq, "cell",
			      r->cell, "repeat", r->repeat, "round", r->round, "client", r->client, "server", r->server,
			      "link", r->link, "server_address", r->server_address, "protocol",
			      tb_iperf_proto_name(r->p.proto), "direction", tb_iperf_dir_name(r->p.dir), "params",
			      tb_matrix_params_json(&r->p), "iperf_args", args_json(&r->p));

	if (j != NULL && (json_object_set_new(j, "client_os", os_or_null(r->client_os)) != 0 ||
			  json_object_set_new(j, "server_os", os_or_null(r->server_os)) != 0 ||
			  json_object_set_new(j, "tool", json_string(tb_tool_name(r->p.tool))) != 0 ||
			  json_object_set_new(j, "family", json_string(r->p.family == 6 ? "ipv6" : "ipv4")) != 0 ||
			  (r->tset >= 0 && json_object_set_new(j, "tunable_set", json_integer(r->tset)) != 0) ||
			  (r->lprof >= 0 && json_object_set_new(j, "link_profile", json_integer(r->lprof)) != 0))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static json_t *boot_json(const struct tb_planned_boot *b)
{
	return json_pack("{s:o, s:o, s:s, s:o, s:s, s:f, s:o}", "seq", b->seq >= 0 ? json_integer(b->seq) : json_null(),
			 "round", b->round >= 0 ? json_integer(b->round) : json_null(), "machine", b->machine, "from",
			 os_or_null(b->from), "to", b->to, "estimated_s", (double)b->estimated_ms / 1000.0, "path",
			 b->path != NULL ? json_string(b->path) : json_null());
}

/* [{"round","start_s","end_s","runs":[seq...],"boots":[machine...]}]: when
 * each round that holds a run from..to-1 starts and ends by the estimate
 * (every round is walked for the times; only those are listed). */
static json_t *timeline_json(const struct tb_matrix_plan *plan, int from, int to)
{
	json_t *tl = json_array(), *seqs = NULL, *boots = NULL;
	int64_t at = 0, longest = 0;
	int bad = tl == NULL, b = 0, first = 0;

	for (int i = 0; !bad && i < plan->nruns; i++) {
		int64_t t = tb_mx_run_ms(plan, i), step = 0; /* the round's boots go at once */
		int round = plan->slots[i].round, shown;

		if (i == 0 || plan->slots[i - 1].round != round) {
			/* a round starts: first the boots it needs */
			first = i;
			for (int k = b; k < plan->nboots && plan->boots[k].round == round; k++)
				if (plan->boots[k].estimated_ms > step)
					step = plan->boots[k].estimated_ms;
			at += step;
		}
		if (t > longest)
			longest = t;
		if (i + 1 < plan->nruns && plan->slots[i + 1].round == round)
			continue;
		/* the round's last run: list it when it holds a run of the page */
		shown = first < to && i >= from;
		if (shown && ((seqs = json_array()) == NULL || (boots = json_array()) == NULL))
			bad = 1;
		for (; b < plan->nboots && plan->boots[b].round == round; b++)
			if (shown && !bad)
				bad |= json_array_append_new(boots, json_string(plan->boots[b].machine)) != 0;
		for (int k = first; shown && !bad && k <= i; k++)
			bad |= json_array_append_new(seqs, json_integer(k)) != 0;
		if (shown && !bad) {
			int64_t end = at + longest + TB_MATRIX_RUN_OVERHEAD_MS;

			bad |= json_array_append_new(tl,
						     json_pack("{s:i, s:f, s:f, s:o, s:o}", "round", round, "start_s",
							       (double)at / 1000.0, "end_s", (double)end / 1000.0,
							       "runs", seqs, "boots", boots)) != 0;
			seqs = boots = NULL;
		}
		json_decref(seqs);
		json_decref(boots);
		seqs = boots = NULL;
		at += longest + TB_MATRIX_RUN_OVERHEAD_MS + plan->pause_ms;
		longest = 0;
	}
	if (bad || tl == NULL) {
		json_decref(tl);
		return NULL;
	}
	return tl;
}

json_t *tb_matrix_plan_page_json(const struct tb_matrix_plan *plan, int offset, int limit)
{
	int from = offset < 0 ? 0 : offset > plan->nruns ? plan->nruns : offset;
	int to = limit < 0 || limit > plan->nruns - from ? plan->nruns : from + limit;
	json_t *runs = json_array(), *tl = timeline_json(plan, from, to), *boots = json_array(), *j;

	for (int i = 0; boots != NULL && i < plan->nboots; i++)
		if (json_array_append_new(boots, boot_json(&plan->boots[i])) != 0) {
			json_decref(boots);
			boots = NULL;
		}
	for (int i = from; runs != NULL && i < to; i++) {
		struct tb_planned_run r;

		tb_matrix_plan_run(plan, i, &r);
		if (json_array_append_new(runs, tb_matrix_run_json(&r)) != 0) {
			json_decref(runs);
			runs = NULL;
		}
	}
	if (runs == NULL || tl == NULL || boots == NULL) {
		json_decref(runs);
		json_decref(tl);
		json_decref(boots);
		return NULL;
	}
	j = json_pack(
		"{s:s, s:s, s:o, s:s, s:i, s:i, s:i, s:f, s:o, s:o, s:o}", "name", plan->name, "order",
		order_names[plan->order], "seed",
		plan->order == TB_ORDER_SHUFFLED ? json_integer((json_int_t)plan->seed) : json_null(), "concurrency",
		plan->one_at_a_time ? "none"
		: plan->by_pair     ? "pairs"
				    : "disjoint",
		"runs", plan->nruns, "cells", plan->ncells, "rounds", plan->nrounds, "estimated_s",
		(double)plan->estimated_ms / 1000.0, "spec", json_deep_copy(plan->spec), "plan", runs, "timeline", tl);
	if (j != NULL &&
	    (json_object_set_new(j, "combinations", json_integer(plan->ncombos)) != 0 ||
	     json_object_set_new(j, "boots", boots) != 0 ||
	     (plan->sp->ntunables > 0 && json_object_set_new(j, "tunables", tb_mx_tunables_plan_json(plan)) != 0) ||
	     (plan->sp->nlprofs > 0 && json_object_set_new(j, "link_profiles", tb_mx_linkprof_plan_json(plan)) != 0) ||
	     (json_object_get(plan->spec, "profile") != NULL &&
	      json_object_set_new(j, "profile", tb_mx_profile_plan_json(plan->spec)) != 0) ||
	     json_object_set_new(j, "page",
				 json_pack("{s:i, s:i, s:i, s:o}", "offset", from, "limit",
					   limit < 0 ? plan->nruns : limit, "returned", to - from, "next_offset",
					   to < plan->nruns ? json_integer(to) : json_null())) != 0)) {
		json_decref(j);
		return NULL;
	}
	if (j == NULL)
		json_decref(boots);
	return j;
}

json_t *tb_matrix_plan_json(const struct tb_matrix_plan *plan)
{
	return tb_matrix_plan_page_json(plan, 0, -1);
}
