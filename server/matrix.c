/*
 * matrix.c - a checked spec (matrix_spec.c) counted, expanded into cells and
 * runs, ordered, estimated; runs and plans as JSON.  See matrix.h.
 */
#include "matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_internal.h"

static const char *const order_names[] = {"sequential", "interleaved", "shuffled"};

const char *tb_iperf_proto_name(enum tb_iperf_proto p)
{
	return p == TB_IPERF_UDP ? "udp" : "tcp";
}

const char *tb_iperf_dir_name(enum tb_iperf_dir d)
{
	switch (d) {
	case TB_IPERF_REVERSE:
		return "reverse";
	case TB_IPERF_BIDIR:
		return "bidir";
	default:
		return "forward";
	}
}

/* ---- counting ---- */

/* *acc *= b; 1 when it no longer fits (the product then stays too large). */
static int mul(uint64_t *acc, uint64_t b)
{
	if (*acc != 0 && b > UINT64_MAX / *acc)
		return 1;
	*acc *= b;
	return 0;
}

/* The axes a cell of protocol p runs through, outermost first: the bitrate
 * axis of its own protocol only. */
static void cell_axes(enum tb_iperf_proto p, enum tb_mx_axis axes[TB_MX_NAXES - 1])
{
	int n = 0;

	for (int a = 0; a < TB_MX_NAXES; a++) {
		if (a == (p == TB_IPERF_UDP ? TB_MX_BITRATE : TB_MX_UDP_BITRATE))
			continue;
		axes[n++] = (enum tb_mx_axis)a;
	}
}

/* Cells and runs, with overflow checks: 1 when either does not fit 64 bits. */
static int count(const struct tb_mx_spec *sp, uint64_t *cells, uint64_t *runs)
{
	uint64_t per_pair = 0;
	int ovf = 0;

	for (int i = 0; i < sp->nprotos; i++) {
		enum tb_mx_axis axes[TB_MX_NAXES - 1];
		uint64_t n = (uint64_t)sp->ndirs;

		cell_axes(sp->protos[i], axes);
		ovf |= mul(&n, (uint64_t)sp->ndurations);
		for (int a = 0; a < TB_MX_NAXES - 1; a++)
			ovf |= mul(&n, (uint64_t)sp->axes[axes[a]].n);
		if (per_pair > UINT64_MAX - n)
			ovf = 1;
		per_pair += n;
	}
	*cells = (uint64_t)sp->npairs;
	ovf |= mul(cells, per_pair);
	*runs = *cells;
	ovf |= mul(runs, (uint64_t)sp->repeats);
	return ovf;
}

/* ---- shuffling ---- */

/* xorshift64* (Vigna): state never 0. */
static uint64_t xs_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

static void shuffle(struct tb_planned_run *runs, int n, uint64_t seed)
{
	uint64_t s = seed != 0 ? seed : UINT64_C(0x9E3779B97F4A7C15);

	for (int i = n - 1; i > 0; i--) {
		int j = (int)(xs_next(&s) % (uint64_t)(i + 1));
		struct tb_planned_run t = runs[i];

		runs[i] = runs[j];
		runs[j] = t;
	}
}

/* ---- expansion ---- */

static void apply(enum tb_mx_axis axis, const struct tb_mx_value *v, struct tb_iperf_params *p)
{
	switch (axis) {
	case TB_MX_PARALLEL:
		p->parallel = (int)v->num;
		break;
	case TB_MX_LENGTH:
		p->length = v->num;
		break;
	case TB_MX_WINDOW:
		p->window = v->num;
		break;
	case TB_MX_BITRATE:
	case TB_MX_UDP_BITRATE:
		snprintf(p->bitrate, sizeof(p->bitrate), "%s", v->str);
		break;
	case TB_MX_OMIT:
		p->omit_s = (int)v->num;
		break;
	case TB_MX_CONGESTION:
		snprintf(p->congestion, sizeof(p->congestion), "%s", v->str);
		break;
	case TB_MX_TOS:
		p->tos = (int)v->num;
		break;
	case TB_MX_ZEROCOPY:
		p->zerocopy = v->num != 0;
		break;
	case TB_MX_AFFINITY:
		snprintf(p->affinity, sizeof(p->affinity), "%s", v->str);
		break;
	default:
		break;
	}
}

/* Put cell c's repeats where the order wants them (shuffled: sequential first). */
static void place(struct tb_matrix_plan *plan, const struct tb_planned_run *cell)
{
	for (int r = 0; r < plan->repeats; r++) {
		int i = plan->order == TB_ORDER_INTERLEAVED ? r * plan->ncells + cell->cell
							    : cell->cell * plan->repeats + r;

		plan->runs[i] = *cell;
		plan->runs[i].repeat = r;
	}
}

/* Every cell in expansion order: pairs, protocols, directions, durations,
 * then the iperf axes odometer-style (the last axis turns fastest). */
static void expand(const struct tb_mx_spec *sp, struct tb_matrix_plan *plan)
{
	struct tb_planned_run cell;
	int c = 0;

	memset(&cell, 0, sizeof(cell));
	for (int pi = 0; pi < sp->npairs; pi++)
		for (int pr = 0; pr < sp->nprotos; pr++) {
			enum tb_mx_axis axes[TB_MX_NAXES - 1];

			cell_axes(sp->protos[pr], axes);
			for (int d = 0; d < sp->ndirs; d++)
				for (int t = 0; t < sp->ndurations; t++) {
					int idx[TB_MX_NAXES - 1] = {0};
					int k;

					do {
						memset(&cell, 0, sizeof(cell));
						snprintf(cell.client, sizeof(cell.client), "%s", sp->pairs[pi].client);
						snprintf(cell.server, sizeof(cell.server), "%s", sp->pairs[pi].server);
						snprintf(cell.link, sizeof(cell.link), "%s", sp->pairs[pi].link);
						snprintf(cell.server_address, sizeof(cell.server_address), "%s",
							 sp->pairs[pi].address);
						cell.p.proto = sp->protos[pr];
						cell.p.dir = sp->dirs[d];
						cell.p.duration_s = sp->durations[t];
						cell.p.interval_s = 1;
						for (int a = 0; a < TB_MX_NAXES - 1; a++)
							apply(axes[a], &sp->axes[axes[a]].v[idx[a]], &cell.p);
						cell.cell = c++;
						place(plan, &cell);
						for (k = TB_MX_NAXES - 2; k >= 0; k--) {
							if (++idx[k] < sp->axes[axes[k]].n)
								break;
							idx[k] = 0;
						}
					} while (k >= 0);
				}
		}
}

/* The machines of the runs as small integers: (*ids)[2i] client, [2i+1] server. */
static int machine_ids(const struct tb_matrix_plan *plan, int **ids, int *nm)
{
	char (*names)[40] = calloc((size_t)plan->nruns * 2 + 1, sizeof(*names));
	int n = 0;

	*ids = calloc((size_t)plan->nruns * 2 + 1, sizeof(**ids));
	if (names == NULL || *ids == NULL) {
		free(names);
		free(*ids);
		*ids = NULL;
		return -1;
	}
	for (int i = 0; i < plan->nruns * 2; i++) {
		const char *name = i % 2 == 0 ? plan->runs[i / 2].client : plan->runs[i / 2].server;
		int k = 0;

		/* a plan has at most 2 x TB_MX_PAIRS_MAX machines: a linear search is enough */
		while (k < n && strcmp(names[k], name) != 0)
			k++;
		if (k == n)
			snprintf(names[n++], sizeof(names[0]), "%s", name);
		(*ids)[i] = k;
	}
	free(names);
	*nm = n;
	return 0;
}

/*
 * concurrency "pairs": a round takes the next run of every pair (client,
 * server, link) whose run is of the round's OS combination; a machine may
 * be in several runs of a round (a server of two clients, each on its own
 * port).  Each pair keeps the order of its runs.
 */
static int make_pair_rounds(struct tb_matrix_plan *plan)
{
	struct tb_planned_run *out = malloc((size_t)plan->nruns * sizeof(*out));
	/* each pair's runs in order: head[k] the next, next[i] the one after i (-1: none) */
	int *next = malloc((size_t)plan->nruns * sizeof(*next)), *head = NULL, *tail = NULL;
	int np = 0, at = 0, round = 0;

	if (out == NULL || next == NULL)
		goto fail;
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int k;

		for (k = 0; k < np; k++) {
			const struct tb_planned_run *f = &plan->runs[tail[k]];

			if (strcmp(f->client, r->client) == 0 && strcmp(f->server, r->server) == 0 &&
			    strcmp(f->link, r->link) == 0)
				break;
		}
		if (k == np) {
			int *nh = realloc(head, (size_t)(np + 1) * sizeof(*nh)), *nt;

			if (nh == NULL)
				goto fail;
			head = nh;
			if ((nt = realloc(tail, (size_t)(np + 1) * sizeof(*nt))) == NULL)
				goto fail;
			tail = nt;
			head[np++] = i;
		} else {
			next[tail[k]] = i;
		}
		tail[k] = i;
		next[i] = -1;
	}
	while (at < plan->nruns) {
		int first = -1, combo;

		/* the round's OS combination: that of the earliest run left */
		for (int k = 0; k < np; k++)
			if (head[k] >= 0 && (first < 0 || head[k] < first))
				first = head[k];
		combo = plan->runs[first].combo;
		for (int k = 0; k < np; k++) {
			int i = head[k];

			if (i >= 0 && plan->runs[i].combo == combo) {
				out[at] = plan->runs[i];
				out[at++].round = round;
				head[k] = next[i];
			}
		}
		round++;
	}
	memcpy(plan->runs, out, (size_t)plan->nruns * sizeof(*out));
	plan->nrounds = round;
	free(out);
	free(next);
	free(head);
	free(tail);
	return 0;
fail:
	free(out);
	free(next);
	free(head);
	free(tail);
	return -1;
}

/*
 * Cut the ordered runs into rounds (matrix.h) and put them in round order.
 * Each round scans what is left in order until every machine that still has
 * runs is busy: linear in the runs per round for a fixed set of pairs.
 */
static int make_rounds(struct tb_matrix_plan *plan, bool one_at_a_time)
{
	struct tb_planned_run *out;
	int *ids = NULL, *next = NULL, *left = NULL, nm = 0, head = 0, at = 0, round = 0;
	char *busy = NULL;

	if (one_at_a_time || plan->nruns <= 1) {
		for (int i = 0; i < plan->nruns; i++)
			plan->runs[i].round = i;
		plan->nrounds = plan->nruns;
		return 0;
	}
	if (machine_ids(plan, &ids, &nm) != 0 || (next = malloc((size_t)plan->nruns * sizeof(*next))) == NULL ||
	    (left = calloc((size_t)nm, sizeof(*left))) == NULL || (busy = malloc((size_t)nm)) == NULL ||
	    (out = malloc((size_t)plan->nruns * sizeof(*out))) == NULL) {
		free(ids);
		free(next);
		free(left);
		free(busy);
		return -1;
	}
	for (int i = 0; i < plan->nruns; i++) {
		next[i] = i + 1 < plan->nruns ? i + 1 : -1;
		left[ids[2 * i]]++;
		left[ids[2 * i + 1]]++;
	}
	while (head >= 0) {
		int active = 0, nbusy = 0, prev = -1;

		memset(busy, 0, (size_t)nm);
		for (int k = 0; k < nm; k++)
			active += left[k] > 0;
		for (int i = head; i >= 0 && nbusy < active; i = next[i]) {
			int c = ids[2 * i], sv = ids[2 * i + 1];

			if (!busy[c] && !busy[sv]) {
				out[at] = plan->runs[i];
				out[at++].round = round;
				left[c]--;
				left[sv]--;
				if (prev < 0)
					head = next[i];
				else
					next[prev] = next[i];
			} else {
				prev = i;
			}
			/* taken or left out, its machines are busy for the rest of the round */
			nbusy += !busy[c] + (sv != c && !busy[sv]);
			busy[c] = busy[sv] = 1;
		}
		round++;
	}
	memcpy(plan->runs, out, (size_t)plan->nruns * sizeof(*out));
	plan->nrounds = round;
	free(out);
	free(ids);
	free(next);
	free(left);
	free(busy);
	return 0;
}

/* Per round the longest run plus the fixed overhead; the pauses between rounds. */
static int64_t estimate_ms(const struct tb_matrix_plan *plan)
{
	int64_t ms = 0, longest = 0;

	for (int i = 0; i < plan->nruns; i++) {
		int64_t t = ((int64_t)plan->runs[i].p.omit_s + plan->runs[i].p.duration_s) * 1000;

		if (t > longest)
			longest = t;
		if (i + 1 == plan->nruns || plan->runs[i + 1].round != plan->runs[i].round) {
			ms += longest + TB_MATRIX_RUN_OVERHEAD_MS;
			longest = 0;
		}
	}
	/* the boots before a round go at once (both hosts of a run, and the runs
	 * of the round, each in its thread), as do the boots back at the end */
	for (int i = 0; i < plan->nboots;) {
		int64_t step = 0;
		int round = plan->boots[i].round;

		for (; i < plan->nboots && plan->boots[i].round == round; i++)
			if (plan->boots[i].estimated_ms > step)
				step = plan->boots[i].estimated_ms;
		ms += step;
	}
	return ms + (int64_t)plan->pause_ms * (plan->nrounds > 0 ? plan->nrounds - 1 : 0);
}

void tb_matrix_plan_free(struct tb_matrix_plan *plan)
{
	if (plan == NULL)
		return;
	free(plan->runs);
	free(plan->boots);
	json_decref(plan->spec);
	free(plan);
}

/* Copy the planned order of one combination to every combination, in the
 * order that needs the fewest boots; base runs are plan->runs[0..nb). */
static void replicate(struct tb_matrix_plan *plan, const struct tb_mx_spec *sp, int nb, int ncells,
		      const struct tb_matrix_now *now)
{
	int order[TB_MX_COMBOS_MAX];

	tb_mx_order_combos(sp, now, order);
	for (int k = sp->ncombos - 1; k >= 0; k--) {
		const struct tb_mx_combo *c = &sp->combos[order[k]];

		for (int i = 0; i < nb; i++) {
			struct tb_planned_run *r = &plan->runs[k * nb + i];

			if (k > 0)
				*r = plan->runs[i];
			r->cell += k * ncells;
			r->combo = order[k];
			for (int m = 0; m < c->n; m++) {
				if (strcmp(c->machine[m], r->client) == 0)
					snprintf(r->client_os, sizeof(r->client_os), "%s", c->os[m]);
				if (strcmp(c->machine[m], r->server) == 0)
					snprintf(r->server_os, sizeof(r->server_os), "%s", c->os[m]);
			}
		}
	}
}

int tb_matrix_plan_make(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			struct tb_matrix_plan **out, struct tb_error *err)
{
	return tb_matrix_plan_make_now(spec, inv, seed_if_unset, NULL, out, err);
}

int tb_matrix_plan_make_now(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			    const struct tb_matrix_now *now, struct tb_matrix_plan **out, struct tb_error *err)
{
	uint64_t ncomb;
	json_t *expanded = NULL;
	struct tb_mx_spec *sp;
	struct tb_matrix_plan *plan = NULL;
	uint64_t cells, runs;
	int64_t ms = 0;
	int rc;

	*out = NULL;
	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_mx_expand_groups(spec, inv, &expanded, err)) != 0)
		goto out;
	rc = tb_mx_spec_parse(expanded, inv, seed_if_unset, sp, err);
	json_decref(expanded);
	if (rc != 0)
		goto out;
	ncomb = sp->ncombos > 0 ? (uint64_t)sp->ncombos : 1;
	if (count(sp, &cells, &runs) != 0 || mul(&runs, ncomb) != 0) {
		rc = tb_fail(err, TB_ERR_INVALID, "",
			     "the matrix expands to more than %llu runs (pairs x protocols x directions x every "
			     "sweep x repeats); at most %d: use fewer pairs, sweep values or repeats",
			     (unsigned long long)UINT64_MAX, TB_MATRIX_MAX_RUNS);
		goto out;
	}
	if (runs > TB_MATRIX_MAX_RUNS) {
		if (ncomb > 1)
			rc = tb_fail(err, TB_ERR_INVALID, "",
				     "the matrix expands to %llu runs (%llu cells x %d repeats x %llu OS combinations); at "
				     "most %d: use fewer pairs, sweep values, repeats or combinations",
				     (unsigned long long)runs, (unsigned long long)cells, sp->repeats,
				     (unsigned long long)ncomb, TB_MATRIX_MAX_RUNS);
		else
			rc = tb_fail(err, TB_ERR_INVALID, "",
				     "the matrix expands to %llu runs (%llu cells x %d repeats); at most %d: use fewer "
				     "pairs, sweep values or repeats",
				     (unsigned long long)runs, (unsigned long long)cells, sp->repeats, TB_MATRIX_MAX_RUNS);
		goto out;
	}
	if ((plan = calloc(1, sizeof(*plan))) == NULL ||
	    (plan->runs = calloc((size_t)runs, sizeof(*plan->runs))) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	snprintf(plan->name, sizeof(plan->name), "%s", sp->name);
	plan->order = sp->order;
	plan->seed = sp->order == TB_ORDER_SHUFFLED ? sp->seed : 0;
	plan->pause_ms = sp->pause_ms;
	plan->repeats = sp->repeats;
	plan->ncells = (int)cells;
	plan->nruns = (int)(runs / ncomb);
	expand(sp, plan);
	if (plan->order == TB_ORDER_SHUFFLED)
		shuffle(plan->runs, plan->nruns, plan->seed);
	if (sp->ncombos > 0)
		replicate(plan, sp, plan->nruns, plan->ncells, now);
	plan->ncells = (int)(cells * ncomb);
	plan->nruns = (int)runs;
	plan->ncombos = sp->ncombos;
	plan->restore_os = sp->ncombos > 0 && !sp->leave_os;
	plan->one_at_a_time = sp->one_at_a_time;
	plan->by_pair = sp->by_pair;
	if ((sp->by_pair ? make_pair_rounds(plan) : make_rounds(plan, sp->one_at_a_time)) != 0) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	for (int i = 0; i < plan->nruns; i++)
		plan->runs[i].seq = i;
	if (tb_mx_plan_boots(plan, sp, now) != 0) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	plan->estimated_ms = ms = estimate_ms(plan);
	if (sp->cap_total_s > 0 && ms > sp->cap_total_s * 1000) {
		rc = tb_fail(err, TB_ERR_INVALID, "caps.total_s",
			     "the matrix takes an estimated %.1f s (%d runs in %d rounds, each round its longest omit + "
			     "duration + %.1f s, plus pauses), more than caps.total_s %lld; raise the cap or plan fewer or "
			     "shorter runs",
			     (double)ms / 1000.0, plan->nruns, plan->nrounds, TB_MATRIX_RUN_OVERHEAD_MS / 1000.0,
			     sp->cap_total_s);
		goto out;
	}
	plan->spec = sp->stored;
	sp->stored = NULL;
	*out = plan;
	plan = NULL;
	rc = 0;
out:
	json_decref(sp->stored);
	free(sp);
	tb_matrix_plan_free(plan);
	return rc;
}

/* ---- JSON ---- */

static json_t *str_or_null(const char *s)
{
	return s[0] != '\0' ? json_string(s) : json_null();
}

json_t *tb_matrix_params_json(const struct tb_iperf_params *p)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:i}", "protocol",
			 tb_iperf_proto_name(p->proto), "direction", tb_iperf_dir_name(p->dir), "duration_s",
			 p->duration_s, "omit_s", p->omit_s, "parallel", p->parallel, "length",
			 p->length > 0 ? json_integer(p->length) : json_null(), "window",
			 p->window > 0 ? json_integer(p->window) : json_null(), "bitrate", str_or_null(p->bitrate),
			 "congestion", str_or_null(p->congestion), "tos",
			 p->tos >= 0 ? json_integer(p->tos) : json_null(), "zerocopy", (int)p->zerocopy, "affinity",
			 str_or_null(p->affinity), "interval_s", p->interval_s);
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
static int value_key(const json_t *j, const char *key, enum tb_mx_axis axis, struct tb_mx_value *out,
		     int *set, struct tb_error *err)
{
	const json_t *v = json_object_get(j, key);

	*set = v != NULL && !json_is_null(v);
	return *set ? tb_mx_value_parse(axis, v, key, out, err) : 0;
}

int tb_matrix_params_from_json(const json_t *j, struct tb_iperf_params *p, struct tb_error *err)
{
	static const char *const keys[] = {"protocol", "direction", "duration_s", "omit_s", "parallel",
					   "length", "window", "bitrate", "congestion", "tos", "zerocopy",
					   "affinity", "interval_s", NULL};
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
	json_object_foreach((json_t *)j, key, e) {
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
	*p = x;
	return 0;
}

/* "-t 10 -u -b 0", or null when the options cannot be made. */
static json_t *args_json(const struct tb_iperf_params *p)
{
	struct tb_argv a;
	char buf[TB_ARGV_BUF];
	size_t used = 0;

	memset(&a, 0, sizeof(a));
	if (tb_iperf_params_args(p, &a, NULL) != 0)
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
			 r->cell, "repeat", r->repeat, "round", r->round, "client", r->client, "server", r->server, "link", r->link,
			 "server_address", r->server_address, "protocol", tb_iperf_proto_name(r->p.proto),
			 "direction", tb_iperf_dir_name(r->p.dir), "params", tb_matrix_params_json(&r->p),
			 "iperf_args", args_json(&r->p));

	if (j != NULL && (json_object_set_new(j, "client_os", os_or_null(r->client_os)) != 0 ||
			  json_object_set_new(j, "server_os", os_or_null(r->server_os)) != 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static json_t *boot_json(const struct tb_planned_boot *b)
{
	return json_pack("{s:o, s:o, s:s, s:o, s:s, s:f}", "seq", b->seq >= 0 ? json_integer(b->seq) : json_null(),
			 "round", b->round >= 0 ? json_integer(b->round) : json_null(), "machine", b->machine, "from",
			 os_or_null(b->from), "to", b->to, "estimated_s", (double)b->estimated_ms / 1000.0);
}

/* [{"round","start_s","end_s","runs":[seq...]}]: when each round starts and
 * ends by the estimate. */
static json_t *timeline_json(const struct tb_matrix_plan *plan)
{
	json_t *tl = json_array(), *seqs = NULL, *boots = NULL;
	int64_t at = 0, longest = 0;
	int bad = tl == NULL, b = 0;

	for (int i = 0; !bad && i < plan->nruns; i++) {
		int64_t t = ((int64_t)plan->runs[i].p.omit_s + plan->runs[i].p.duration_s) * 1000;

		if (seqs == NULL) {
			/* a round starts: first the boots it needs */
			int64_t step = 0;   /* the round's boots go at once */

			if ((seqs = json_array()) == NULL || (boots = json_array()) == NULL)
				break;
			for (; b < plan->nboots && plan->boots[b].round == plan->runs[i].round; b++) {
				bad |= json_array_append_new(boots, json_string(plan->boots[b].machine)) != 0;
				if (plan->boots[b].estimated_ms > step)
					step = plan->boots[b].estimated_ms;
			}
			at += step;
		}
		bad |= json_array_append_new(seqs, json_integer(plan->runs[i].seq)) != 0;
		if (t > longest)
			longest = t;
		if (i + 1 == plan->nruns || plan->runs[i + 1].round != plan->runs[i].round) {
			int64_t end = at + longest + TB_MATRIX_RUN_OVERHEAD_MS;

			bad |= json_array_append_new(tl, json_pack("{s:i, s:f, s:f, s:o, s:o}", "round", plan->runs[i].round,
								   "start_s", (double)at / 1000.0, "end_s",
								   (double)end / 1000.0, "runs", seqs, "boots", boots)) != 0;
			seqs = boots = NULL;
			at = end + plan->pause_ms;
			longest = 0;
		}
	}
	json_decref(seqs);
	json_decref(boots);
	if (bad || tl == NULL) {
		json_decref(tl);
		return NULL;
	}
	return tl;
}

json_t *tb_matrix_plan_json(const struct tb_matrix_plan *plan)
{
	json_t *runs = json_array(), *tl = timeline_json(plan), *boots = json_array(), *j;

	for (int i = 0; boots != NULL && i < plan->nboots; i++)
		if (json_array_append_new(boots, boot_json(&plan->boots[i])) != 0) {
			json_decref(boots);
			boots = NULL;
		}

	for (int i = 0; runs != NULL && i < plan->nruns; i++)
		if (json_array_append_new(runs, tb_matrix_run_json(&plan->runs[i])) != 0) {
			json_decref(runs);
			runs = NULL;
		}
	if (runs == NULL || tl == NULL || boots == NULL) {
		json_decref(runs);
		json_decref(tl);
		json_decref(boots);
		return NULL;
	}
	j = json_pack("{s:s, s:s, s:o, s:s, s:i, s:i, s:i, s:f, s:o, s:o, s:o}", "name", plan->name, "order",
			 order_names[plan->order], "seed",
			 plan->order == TB_ORDER_SHUFFLED ? json_integer((json_int_t)plan->seed) : json_null(),
			 "concurrency", plan->one_at_a_time ? "none" : plan->by_pair ? "pairs" : "disjoint", "runs", plan->nruns, "cells",
			 plan->ncells, "rounds", plan->nrounds, "estimated_s", (double)plan->estimated_ms / 1000.0, "spec",
			 json_deep_copy(plan->spec), "plan", runs, "timeline", tl);
	if (j != NULL && (json_object_set_new(j, "combinations", json_integer(plan->ncombos)) != 0 ||
			  json_object_set_new(j, "boots", boots) != 0)) {
		json_decref(j);
		return NULL;
	}
	if (j == NULL)
		json_decref(boots);
	return j;
}
