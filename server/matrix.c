/*
 * matrix.c - a checked spec (matrix_spec.c) counted, expanded into cells and
 * runs, ordered, estimated.  See matrix.h; the JSON is matrix_json.c's.
 *
 * The planner works on compact runs (struct tb_mx_slot, 16 bytes: cell,
 * repeat, round, combination) and decodes a run's details from the spec
 * when asked (tb_matrix_plan_run), so that a plan of TB_MATRIX_MAX_RUNS
 * takes a few MB; the full array of runs is made only for the runner.
 */
#include "matrix.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_internal.h"

const char *tb_iperf_proto_name(enum tb_iperf_proto p)
{
	return p == TB_IPERF_UDP ? "udp" : "tcp";
}

const char *tb_iperf_dir_name(enum tb_iperf_dir d)
{
	switch (d) {
	case TB_IPERF_REVERSE: return "reverse";
	case TB_IPERF_BIDIR: return "bidir";
	default: return "forward";
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
	ovf |= mul(cells, (uint64_t)(sp->ntsets > 0 ? sp->ntsets : 1));
	ovf |= mul(cells, (uint64_t)(sp->nlprofs > 0 ? sp->nlprofs : 1));
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

static void shuffle(struct tb_mx_slot *runs, int n, uint64_t seed)
{
	uint64_t s = seed != 0 ? seed : UINT64_C(0x9E3779B97F4A7C15);

	for (int i = n - 1; i > 0; i--) {
		int j = (int)(xs_next(&s) % (uint64_t)(i + 1));
		struct tb_mx_slot t = runs[i];

		runs[i] = runs[j];
		runs[j] = t;
	}
}

/* ---- expansion ---- */

static void apply(enum tb_mx_axis axis, const struct tb_mx_value *v, struct tb_iperf_params *p)
{
	switch (axis) {
	case TB_MX_PARALLEL: p->parallel = (int)v->num; break;
	case TB_MX_LENGTH: p->length = v->num; break;
	case TB_MX_WINDOW: p->window = v->num; break;
	case TB_MX_BITRATE:
	case TB_MX_UDP_BITRATE: snprintf(p->bitrate, sizeof(p->bitrate), "%s", v->str); break;
	case TB_MX_OMIT: p->omit_s = (int)v->num; break;
	case TB_MX_CONGESTION: snprintf(p->congestion, sizeof(p->congestion), "%s", v->str); break;
	case TB_MX_TOS: p->tos = (int)v->num; break;
	case TB_MX_ZEROCOPY: p->zerocopy = v->num != 0; break;
	case TB_MX_AFFINITY: snprintf(p->affinity, sizeof(p->affinity), "%s", v->str); break;
	case TB_MX_FAMILY: p->family = (int)v->num; break;
	case TB_MX_TOOL: p->tool = (int)v->num; break;
	default: break;
	}
}

/* Cells of one pair and protocol pr (directions x durations x its axes). */
static int64_t cells_of_proto(const struct tb_mx_spec *sp, int pr, int64_t *inner)
{
	enum tb_mx_axis axes[TB_MX_NAXES - 1];
	int64_t n = 1;

	cell_axes(sp->protos[pr], axes);
	for (int a = 0; a < TB_MX_NAXES - 1; a++)
		n *= sp->axes[axes[a]].n;
	*inner = n;
	return n * sp->ndirs * sp->ndurations;
}

/*
 * Cell c of one combination (0 <= c < its cells), in expansion order: the
 * tunable sets (matrix_tunables.c: outermost, so a set's cells go together), link
 * profiles (matrix_linkprof.c: a profile's cells go together in a set), pairs,
 * protocols, directions, durations, then the iperf axes odometer-style (the
 * last axis turns fastest): its pair index and the run's every field but
 * seq, repeat, round and the combination's.
 */
static int decode_cell(const struct tb_mx_spec *sp, int64_t c, struct tb_planned_run *cell)
{
	int64_t per_pair = 0, inner = 0, n = 0;
	enum tb_mx_axis axes[TB_MX_NAXES - 1];
	int pi, pr, d, t, tset, lprof;

	for (pr = 0; pr < sp->nprotos; pr++)
		per_pair += cells_of_proto(sp, pr, &inner);
	tset = (int)(c / (per_pair * sp->npairs)); /* the tunable set, then the link profile in it */
	lprof = sp->nlprofs > 0 ? tset % sp->nlprofs : -1;
	tset = sp->nlprofs > 0 ? tset / sp->nlprofs : tset;
	c %= per_pair * sp->npairs;
	pi = (int)(c / per_pair);
	c %= per_pair;
	for (pr = 0; pr < sp->nprotos; pr++) {
		if (c < (n = cells_of_proto(sp, pr, &inner)))
			break;
		c -= n;
	}
	d = (int)(c / (inner * sp->ndurations));
	c %= inner * sp->ndurations;
	t = (int)(c / inner);
	c %= inner;
	memset(cell, 0, sizeof(*cell));
	cell->tset = sp->ntunables > 0 ? tset : -1;
	cell->lprof = lprof;
	snprintf(cell->client, sizeof(cell->client), "%s", sp->pairs[pi].client);
	snprintf(cell->server, sizeof(cell->server), "%s", sp->pairs[pi].server);
	snprintf(cell->link, sizeof(cell->link), "%s", sp->pairs[pi].link);
	snprintf(cell->server_address, sizeof(cell->server_address), "%s", sp->pairs[pi].address);
	cell->p.proto = sp->protos[pr];
	cell->p.dir = sp->dirs[d];
	cell->p.duration_s = sp->durations[t];
	cell->p.interval_s = 1;
	cell_axes(sp->protos[pr], axes);
	for (int a = TB_MX_NAXES - 2; a >= 0; a--) {
		int k = sp->axes[axes[a]].n;

		apply(axes[a], &sp->axes[axes[a]].v[c % k], &cell->p);
		c /= k;
	}
	if (cell->p.family == 6) /* the plan refused a pair without one */
		snprintf(cell->server_address, sizeof(cell->server_address), "%s", sp->pairs[pi].address6);
	return pi;
}

void tb_matrix_plan_run(const struct tb_matrix_plan *plan, int i, struct tb_planned_run *out)
{
	const struct tb_mx_slot *s = &plan->slots[i];

	decode_cell(plan->sp, s->cell % plan->base_cells, out);
	out->seq = i;
	out->cell = s->cell;
	out->repeat = s->repeat;
	out->round = s->round;
	out->combo = s->combo;
	if (plan->ncombos > 0) {
		const struct tb_mx_combo *c = &plan->sp->combos[s->combo];

		for (int m = 0; m < c->n; m++) {
			if (strcmp(c->machine[m], out->client) == 0)
				snprintf(out->client_os, sizeof(out->client_os), "%s", c->os[m]);
			if (strcmp(c->machine[m], out->server) == 0)
				snprintf(out->server_os, sizeof(out->server_os), "%s", c->os[m]);
		}
	}
}

/* The runs of one combination in the spec's order: interleaved, round r
 * runs every cell once; else each cell's repeats back to back (shuffled:
 * this, then shuffled). */
static void expand(struct tb_matrix_plan *plan, int nruns)
{
	for (int i = 0; i < nruns; i++) {
		struct tb_mx_slot *s = &plan->slots[i];

		if (plan->order == TB_ORDER_INTERLEAVED) {
			s->cell = i % plan->base_cells;
			s->repeat = i / plan->base_cells;
		} else {
			s->cell = i / plan->repeats;
			s->repeat = i % plan->repeats;
		}
		s->round = 0;
		s->combo = 0;
	}
}

/* Per pair of the spec: its machines as small integers (ids[2p] client,
 * [2p+1] server) and the first pair with the same client, server and link
 * (same[p]).  A plan has at most TB_MX_PAIRS_MAX pairs. */
static int pair_ids(const struct tb_mx_spec *sp, int ids[], int same[])
{
	const char *names[2 * TB_MX_PAIRS_MAX];
	int n = 0;

	for (int i = 0; i < sp->npairs * 2; i++) {
		const char *name = i % 2 == 0 ? sp->pairs[i / 2].client : sp->pairs[i / 2].server;
		int k = 0;

		while (k < n && strcmp(names[k], name) != 0)
			k++;
		if (k == n)
			names[n++] = name;
		ids[i] = k;
	}
	for (int p = 0; p < sp->npairs; p++) {
		same[p] = p;
		for (int q = 0; q < p; q++)
			if (strcmp(sp->pairs[q].client, sp->pairs[p].client) == 0 &&
			    strcmp(sp->pairs[q].server, sp->pairs[p].server) == 0 &&
			    strcmp(sp->pairs[q].link, sp->pairs[p].link) == 0) {
				same[p] = same[q];
				break;
			}
	}
	return n;
}

/* The pair index of run i. */
static int pair_of(const struct tb_matrix_plan *plan, const int64_t *per_pair, int i)
{
	return (int)((plan->slots[i].cell % plan->base_cells) % (*per_pair * plan->sp->npairs) / *per_pair);
}

/*
 * concurrency "pairs": a round takes the next run of every pair (client,
 * server, link) whose run is of the round's OS combination; a machine may
 * be in several runs of a round (a server of two clients, each on its own
 * port).  Each pair keeps the order of its runs; the pairs of a round come
 * in the order of their first run.
 */
static int make_pair_rounds(struct tb_matrix_plan *plan, const int same[], int64_t per_pair)
{
	struct tb_mx_slot *out = malloc((size_t)plan->nruns * sizeof(*out));
	/* each pair's runs in order: head[k] the next, next[i] the one after i (-1: none) */
	int *next = malloc((size_t)plan->nruns * sizeof(*next));
	int head[TB_MX_PAIRS_MAX], tail[TB_MX_PAIRS_MAX], group[TB_MX_PAIRS_MAX];
	int np = 0, at = 0, round = 0;

	if (out == NULL || next == NULL) {
		free(out);
		free(next);
		return -1;
	}
	for (int p = 0; p < TB_MX_PAIRS_MAX; p++)
		group[p] = -1;
	for (int i = 0; i < plan->nruns; i++) {
		int g = same[pair_of(plan, &per_pair, i)];

		if (group[g] < 0) {
			group[g] = np;
			head[np++] = i;
		} else {
			next[tail[group[g]]] = i;
		}
		tail[group[g]] = i;
		next[i] = -1;
	}
	while (at < plan->nruns) {
		int first = -1, combo;

		/* the round's OS combination: that of the earliest run left */
		for (int k = 0; k < np; k++)
			if (head[k] >= 0 && (first < 0 || head[k] < first))
				first = head[k];
		combo = plan->slots[first].combo;
		for (int k = 0; k < np; k++) {
			int i = head[k];

			if (i >= 0 && plan->slots[i].combo == combo) {
				out[at] = plan->slots[i];
				out[at++].round = round;
				head[k] = next[i];
			}
		}
		round++;
	}
	memcpy(plan->slots, out, (size_t)plan->nruns * sizeof(*out));
	plan->nrounds = round;
	free(out);
	free(next);
	return 0;
}

/*
 * Cut the ordered runs into rounds (matrix.h) and put them in round order.
 * A round scans what is left in order, takes every run whose machines are
 * free, and makes the machines of every run it meets busy, taken or not.
 * Only the first run left of each pair can change anything (the pair's later
 * runs find its machines busy), so a round looks at the pairs' first runs in
 * order: O(pairs) a round, not O(runs) (a pair sharing a machine with
 * another used to make each round scan the rest of the plan).
 */
static int make_rounds(struct tb_matrix_plan *plan, const int pids[], int np, int64_t per_pair)
{
	struct tb_mx_slot *out = NULL;
	int *next, head[TB_MX_PAIRS_MAX], tail[TB_MX_PAIRS_MAX], at = 0, round = 0;
	char busy[2 * TB_MX_PAIRS_MAX];

	if (plan->one_at_a_time || plan->nruns <= 1) {
		for (int i = 0; i < plan->nruns; i++)
			plan->slots[i].round = i;
		plan->nrounds = plan->nruns;
		return 0;
	}
	if ((next = malloc((size_t)plan->nruns * sizeof(*next))) == NULL ||
	    (out = malloc((size_t)plan->nruns * sizeof(*out))) == NULL) {
		free(next);
		return -1;
	}
	for (int p = 0; p < np; p++)
		head[p] = tail[p] = -1;
	for (int i = 0; i < plan->nruns; i++) {
		int p = pair_of(plan, &per_pair, i);

		next[i] = -1;
		if (head[p] < 0)
			head[p] = i;
		else
			next[tail[p]] = i;
		tail[p] = i;
	}
	while (at < plan->nruns) {
		int order[TB_MX_PAIRS_MAX], n = 0;

		/* the pairs with runs left, by their first run's place in the order */
		for (int p = 0; p < np; p++) {
			int k = n++;

			if (head[p] < 0) {
				n--;
				continue;
			}
			while (k > 0 && head[order[k - 1]] > head[p]) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = p;
		}
		memset(busy, 0, sizeof(busy));
		for (int k = 0; k < n; k++) {
			int p = order[k], i = head[p], c = pids[2 * p], sv = pids[2 * p + 1];

			if (!busy[c] && !busy[sv]) {
				out[at] = plan->slots[i];
				out[at++].round = round;
				head[p] = next[i];
			}
			/* taken or left out, its machines are busy for the rest of the round */
			busy[c] = busy[sv] = 1;
		}
		round++;
	}
	memcpy(plan->slots, out, (size_t)plan->nruns * sizeof(*out));
	plan->nrounds = round;
	free(out);
	free(next);
	return 0;
}

int64_t tb_mx_run_ms(const struct tb_matrix_plan *plan, int i)
{
	return plan->cell_ms[plan->slots[i].cell % plan->base_cells];
}

/* Per round the longest run plus the fixed overhead; the pauses between rounds. */
static int64_t estimate_ms(const struct tb_matrix_plan *plan)
{
	int64_t ms = 0, longest = 0;

	for (int i = 0; i < plan->nruns; i++) {
		int64_t t = tb_mx_run_ms(plan, i);

		if (t > longest)
			longest = t;
		if (i + 1 == plan->nruns || plan->slots[i + 1].round != plan->slots[i].round) {
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
	free(plan->slots);
	free(plan->cell_ms);
	free(plan->boots);
	if (plan->sp != NULL)
		json_decref(plan->sp->stored);
	free(plan->sp);
	json_decref(plan->spec);
	free(plan);
}

/* Copy the planned order of one combination to every combination, in the
 * order that needs the fewest boots; base runs are plan->slots[0..nb). */
static void replicate(struct tb_matrix_plan *plan, const struct tb_mx_spec *sp, int nb, const struct tb_matrix_now *now)
{
	int order[TB_MX_COMBOS_MAX];

	tb_mx_order_combos(sp, now, order);
	for (int k = sp->ncombos - 1; k >= 0; k--)
		for (int i = 0; i < nb; i++) {
			struct tb_mx_slot *r = &plan->slots[k * nb + i];

			if (k > 0)
				*r = plan->slots[i];
			r->cell += k * plan->base_cells;
			r->combo = order[k];
		}
}

int tb_matrix_plan_make(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			struct tb_matrix_plan **out, struct tb_error *err)
{
	return tb_matrix_plan_make_now(spec, inv, seed_if_unset, NULL, out, err);
}

/* "more than N runs" with the factors that made them. */
static int too_many(const struct tb_mx_spec *sp, uint64_t cells, uint64_t runs, uint64_t ncomb, int ovf,
		    struct tb_error *err)
{
	if (ovf)
		return tb_fail(err, TB_ERR_INVALID, "",
			       "the matrix expands to more than %llu runs (pairs x protocols x directions x every "
			       "sweep x repeats); at most %d: use fewer pairs, sweep values or repeats",
			       (unsigned long long)UINT64_MAX, TB_MATRIX_MAX_RUNS);
	if (ncomb > 1)
		return tb_fail(err, TB_ERR_INVALID, "",
			       "the matrix expands to %llu runs (%llu cells x %d repeats x %llu OS combinations); at "
			       "most %d: use fewer pairs, sweep values, repeats or combinations",
			       (unsigned long long)runs, (unsigned long long)cells, sp->repeats,
			       (unsigned long long)ncomb, TB_MATRIX_MAX_RUNS);
	return tb_fail(err, TB_ERR_INVALID, "",
		       "the matrix expands to %llu runs (%llu cells x %d repeats); at most %d: use fewer "
		       "pairs, sweep values or repeats",
		       (unsigned long long)runs, (unsigned long long)cells, sp->repeats, TB_MATRIX_MAX_RUNS);
}

/* Order, cut into rounds, number, boots and estimate plan's compact runs. */
static int schedule(struct tb_matrix_plan *plan, const struct tb_mx_spec *sp, const struct tb_matrix_now *now)
{
	int pids[2 * TB_MX_PAIRS_MAX], same[TB_MX_PAIRS_MAX], rc;
	int64_t per_pair = 0, inner;
	int nb = plan->nruns / (sp->ncombos > 0 ? sp->ncombos : 1);

	for (int pr = 0; pr < sp->nprotos; pr++)
		per_pair += cells_of_proto(sp, pr, &inner);
	for (int c = 0; c < plan->base_cells; c++) {
		struct tb_planned_run r;

		decode_cell(sp, c, &r);
		plan->cell_ms[c] = ((int64_t)r.p.omit_s + r.p.duration_s) * 1000;
	}
	expand(plan, nb);
	if (plan->order == TB_ORDER_SHUFFLED)
		shuffle(plan->slots, nb, plan->seed);
	if (sp->ncombos > 0)
		replicate(plan, sp, nb, now);
	pair_ids(sp, pids, same);
	rc = sp->by_pair ? make_pair_rounds(plan, same, per_pair) : make_rounds(plan, pids, sp->npairs, per_pair);
	if (rc != 0 || tb_mx_plan_boots(plan, sp, now) != 0)
		return -1;
	plan->estimated_ms = estimate_ms(plan);
	return 0;
}

/* The runs as an array (the runner's and the tests' view). */
static int materialize(struct tb_matrix_plan *plan)
{
	if ((plan->runs = calloc((size_t)plan->nruns + 1, sizeof(*plan->runs))) == NULL)
		return -1;
	for (int i = 0; i < plan->nruns; i++)
		tb_matrix_plan_run(plan, i, &plan->runs[i]);
	return 0;
}

static int plan_make(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
		     const struct tb_matrix_now *now, bool lean, struct tb_matrix_plan **out, struct tb_error *err)
{
	uint64_t ncomb, cells, runs;
	json_t *expanded = NULL;
	struct tb_mx_spec *sp;
	struct tb_matrix_plan *plan = NULL;
	int64_t ms;
	int rc, ovf;

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
	ovf = count(sp, &cells, &runs) != 0 || mul(&runs, ncomb) != 0;
	if (ovf || runs > TB_MATRIX_MAX_RUNS) {
		rc = too_many(sp, cells, runs, ncomb, ovf, err);
		goto out;
	}
	if ((plan = calloc(1, sizeof(*plan))) == NULL ||
	    (plan->slots = calloc((size_t)runs + 1, sizeof(*plan->slots))) == NULL ||
	    (plan->cell_ms = calloc((size_t)cells + 1, sizeof(*plan->cell_ms))) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	snprintf(plan->name, sizeof(plan->name), "%s", sp->name);
	plan->order = sp->order;
	plan->seed = sp->order == TB_ORDER_SHUFFLED ? sp->seed : 0;
	plan->pause_ms = sp->pause_ms;
	plan->repeats = sp->repeats;
	plan->base_cells = (int)cells;
	plan->ncells = (int)(cells * ncomb);
	plan->nruns = (int)runs;
	plan->ncombos = sp->ncombos;
	plan->restore_os = sp->ncombos > 0 && !sp->leave_os;
	plan->one_at_a_time = sp->one_at_a_time;
	plan->by_pair = sp->by_pair;
	plan->sp = sp;
	if (schedule(plan, sp, now) != 0 || (!lean && materialize(plan) != 0)) {
		sp = NULL;
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	sp = NULL;
	ms = plan->estimated_ms;
	if (plan->sp->cap_total_s > 0 && ms > plan->sp->cap_total_s * 1000) {
		rc = tb_fail(
			err, TB_ERR_INVALID, "caps.total_s",
			"the matrix takes an estimated %.1f s (%d runs in %d rounds, each round its longest omit + "
			"duration + %.1f s, plus pauses), more than caps.total_s %lld; raise the cap or plan fewer or "
			"shorter runs",
			(double)ms / 1000.0, plan->nruns, plan->nrounds, TB_MATRIX_RUN_OVERHEAD_MS / 1000.0,
			plan->sp->cap_total_s);
		goto out;
	}
	plan->spec = plan->sp->stored;
	plan->sp->stored = NULL;
	*out = plan;
	plan = NULL;
	rc = 0;
out:
	if (sp != NULL)
		json_decref(sp->stored);
	free(sp);
	tb_matrix_plan_free(plan);
	return rc;
}

int tb_matrix_plan_make_now(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			    const struct tb_matrix_now *now, struct tb_matrix_plan **out, struct tb_error *err)
{
	return plan_make(spec, inv, seed_if_unset, now, false, out, err);
}

int tb_matrix_plan_make_lean(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			     const struct tb_matrix_now *now, struct tb_matrix_plan **out, struct tb_error *err)
{
	return plan_make(spec, inv, seed_if_unset, now, true, out, err);
}
