/*
 * matrix_os.c - OS combinations in a matrix spec: parse and check them, put
 * them in the order that needs the fewest boots from the hosts' current
 * OSes, and list the boots a plan needs (see matrix.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_check.h"
#include "matrix_internal.h"

static const char *const after_names[] = {"restore", "leave", NULL};

/* The machines of the pairs, for messages: "left, right". */
static void pair_names(const struct tb_mx_spec *sp, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < sp->npairs; i++)
		for (int k = 0; k < 2; k++) {
			const char *n = k == 0 ? sp->pairs[i].client : sp->pairs[i].server;
			int w;

			if (strstr(buf, n) != NULL) /* names are short: a repeat is harmless */
				continue;
			w = snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? ", " : "", n);
			if (w > 0)
				used += (size_t)w;
		}
}

static int in_pairs(const struct tb_mx_spec *sp, const char *name)
{
	for (int i = 0; i < sp->npairs; i++)
		if (strcmp(sp->pairs[i].client, name) == 0 || strcmp(sp->pairs[i].server, name) == 0)
			return 1;
	return 0;
}

/* One combination {machine: os, ...} at os[i]. */
static int parse_combo(const json_t *v, int i, const struct tb_inventory *inv, const struct tb_mx_spec *sp,
		       struct tb_mx_combo *c, struct tb_error *err)
{
	char field[TB_ERROR_FIELD_MAX], got[64], names[256];
	const char *name;
	json_t *os;

	snprintf(field, sizeof(field), "os[%d]", i);
	pair_names(sp, names, sizeof(names));
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_object(v) || json_object_size(v) == 0)
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s must be an object {machine: OS} naming machines of the pairs (%s), got %s", field,
			       names, got);
	if (json_object_size(v) > TB_MX_COMBO_HOSTS)
		return tb_fail(err, TB_ERR_INVALID, field, "%s names %zu machines; at most %d", field,
			       json_object_size(v), TB_MX_COMBO_HOSTS);
	c->n = 0;
	json_object_foreach((json_t *)v, name, os)
	{
		const struct tb_machine *m = tb_inventory_find(inv, name);
		struct tb_error e = {0};

		snprintf(field, sizeof(field), "os[%d].%.40s", i, name);
		if (m == NULL || !in_pairs(sp, name))
			return tb_fail(err, TB_ERR_INVALID, field, "%s: %.40s is not a machine of the pairs (%s)",
				       field, name, names);
		tb_mx_describe(os, got, sizeof(got));
		if (!json_is_string(os))
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be the name of one of %s's OSes, got %s",
				       field, name, got);
		if (tb_machine_persona(m, json_string_value(os)) == NULL) {
			char list[160] = "";
			size_t used = 0;

			for (size_t k = 0; k < m->nos; k++) {
				int w = snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "", m->os[k].os);

				if (w > 0 && (size_t)w < sizeof(list) - used)
					used += (size_t)w;
			}
			return tb_fail(err, TB_ERR_INVALID, field, "%s: %s has no OS %s; its OSes: %s", field, name,
				       got, list);
		}
		/* a machine with one OS is in it already; any other must be able to boot into it */
		if (m->nos > 1 && tb_boot_check(m, json_string_value(os), 0, &e) != 0)
			return tb_fail(err, TB_ERR_INVALID, field, "%s: %s", field, e.message);
		snprintf(c->machine[c->n], sizeof(c->machine[0]), "%s", name);
		snprintf(c->os[c->n], sizeof(c->os[0]), "%s", json_string_value(os));
		c->n++;
	}
	return 0;
}

static int same_combo(const struct tb_mx_combo *a, const struct tb_mx_combo *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		int k = 0;

		while (k < b->n && strcmp(a->machine[i], b->machine[k]) != 0)
			k++;
		if (k == b->n || strcmp(a->os[i], b->os[k]) != 0)
			return 0;
	}
	return 1;
}

int tb_mx_parse_os(const json_t *spec, const struct tb_inventory *inv, struct tb_mx_spec *sp, struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "os"), *after = json_object_get(spec, "os_after");
	char got[64];
	int rc;

	sp->ncombos = 0;
	sp->leave_os = false;
	if (after != NULL && !json_is_null(after)) {
		int a = 0;

		tb_mx_describe(after, got, sizeof(got));
		for (a = 0; after_names[a] != NULL; a++)
			if (json_is_string(after) && strcmp(json_string_value(after), after_names[a]) == 0)
				break;
		if (after_names[a] == NULL)
			return tb_fail(err, TB_ERR_INVALID, "os_after",
				       "os_after must be one of restore | leave (boot the hosts back into the OS they "
				       "were in, or leave them in the last combination's), got %s",
				       got);
		sp->leave_os = a == 1;
	}
	if (v == NULL || json_is_null(v))
		return 0;
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > TB_MX_COMBOS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "os",
			       "os must be a list of 1..%d OS combinations [{machine: OS}, ...], got %s",
			       TB_MX_COMBOS_MAX, got);
	for (size_t i = 0; i < json_array_size(v); i++) {
		if ((rc = parse_combo(json_array_get(v, i), (int)i, inv, sp, &sp->combos[i], err)) != 0)
			return rc;
		for (size_t k = 0; k < i; k++)
			if (same_combo(&sp->combos[k], &sp->combos[i]))
				return tb_fail(err, TB_ERR_INVALID, "os", "os[%zu] is the same combination as os[%zu]",
					       i, k);
		sp->ncombos = (int)i + 1;
	}
	return 0;
}

json_t *tb_mx_os_stored(const struct tb_mx_spec *sp)
{
	json_t *list = json_array();

	for (int i = 0; list != NULL && i < sp->ncombos; i++) {
		json_t *o = json_object();

		for (int k = 0; o != NULL && k < sp->combos[i].n; k++)
			json_object_set_new(o, sp->combos[i].machine[k], json_string(sp->combos[i].os[k]));
		if (o == NULL || json_array_append_new(list, o) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

/* ---- the order with the fewest boots ---- */

/* The OS machine name is in now ("" when off or unknown). */
static const char *now_os(const struct tb_matrix_now *now, const char *name)
{
	for (int i = 0; now != NULL && i < now->n; i++)
		if (strcmp(now->hosts[i].machine, name) == 0)
			return now->hosts[i].os;
	return "";
}

struct state {
	int n;
	char machine[2 * TB_MX_PAIRS_MAX][TB_NAME_MAX];
	char os[2 * TB_MX_PAIRS_MAX][TB_NAME_MAX];
};

static int state_find(struct state *st, const char *name)
{
	for (int i = 0; i < st->n; i++)
		if (strcmp(st->machine[i], name) == 0)
			return i;
	return -1;
}

/* Boots to go into combination c from st; st is changed to c. */
static int step(struct state *st, const struct tb_mx_combo *c)
{
	int boots = 0;

	for (int k = 0; k < c->n; k++) {
		int i = state_find(st, c->machine[k]);

		if (i >= 0 && strcmp(st->os[i], c->os[k]) != 0) {
			snprintf(st->os[i], sizeof(st->os[0]), "%s", c->os[k]);
			boots++;
		}
	}
	return boots;
}

/* Boots back from st to the start (machines that were up in a known OS). */
static int back(const struct state *st, const struct state *start)
{
	int boots = 0;

	for (int i = 0; i < st->n; i++)
		boots += start->os[i][0] != '\0' && strcmp(st->os[i], start->os[i]) != 0;
	return boots;
}

static void state_init(struct state *st, const struct tb_mx_spec *sp, const struct tb_matrix_now *now)
{
	st->n = 0;
	for (int i = 0; i < sp->npairs; i++)
		for (int k = 0; k < 2; k++) {
			const char *n = k == 0 ? sp->pairs[i].client : sp->pairs[i].server;

			if (state_find(st, n) >= 0)
				continue;
			snprintf(st->machine[st->n], sizeof(st->machine[0]), "%s", n);
			snprintf(st->os[st->n], sizeof(st->os[0]), "%s", now_os(now, n));
			st->n++;
		}
}

static int cost_of(const struct tb_mx_spec *sp, const struct state *start, const int *order, int n)
{
	struct state st = *start;
	int boots = 0;

	for (int i = 0; i < n; i++)
		boots += step(&st, &sp->combos[order[i]]);
	return boots + (sp->leave_os ? 0 : back(&st, start));
}

/* Boots before the first combination's runs. */
static int first_cost(const struct tb_mx_spec *sp, const struct state *start, const int *order)
{
	struct state st = *start;

	return step(&st, &sp->combos[order[0]]);
}

/* Every permutation of perm[k..n), by plain recursion.  Of two orders with
 * as many boots, the one whose first combination needs fewer wins: the
 * first results come sooner (and booting back is what a cancel skips). */
static void search(const struct tb_mx_spec *sp, const struct state *start, int *perm, int k, int n, int *best,
		   int *best_cost)
{
	if (k == n) {
		int c = cost_of(sp, start, perm, n);

		if (c < *best_cost || (c == *best_cost && first_cost(sp, start, perm) < first_cost(sp, start, best))) {
			*best_cost = c;
			memcpy(best, perm, (size_t)n * sizeof(*perm));
		}
		return;
	}
	for (int i = k; i < n; i++) {
		int t = perm[k];

		perm[k] = perm[i];
		perm[i] = t;
		search(sp, start, perm, k + 1, n, best, best_cost);
		perm[i] = perm[k];
		perm[k] = t;
	}
}

int tb_mx_order_combos(const struct tb_mx_spec *sp, const struct tb_matrix_now *now, int order[])
{
	struct state start, st;
	int perm[TB_MX_COMBOS_MAX], best_cost = 1 << 30;

	state_init(&start, sp, now);
	for (int i = 0; i < sp->ncombos; i++)
		order[i] = perm[i] = i;
	if (sp->ncombos <= TB_MX_COMBOS_EXACT) {
		/* exact: first found wins ties, so the spec's order stays when it is as good */
		search(sp, &start, perm, 0, sp->ncombos, order, &best_cost);
		return best_cost;
	}
	/* more: the nearest combination next, ties in the spec's order */
	st = start;
	for (int i = 0; i < sp->ncombos; i++) {
		int pick = -1, pick_cost = 1 << 30;

		for (int k = i; k < sp->ncombos; k++) {
			struct state t = st;
			int c = step(&t, &sp->combos[order[k]]);

			if (c < pick_cost || (c == pick_cost && order[k] < order[pick])) {
				pick = k;
				pick_cost = c;
			}
		}
		int tmp = order[i];

		order[i] = order[pick];
		order[pick] = tmp;
		step(&st, &sp->combos[order[i]]);
	}
	return cost_of(sp, &start, order, sp->ncombos);
}

/* ---- the boots of a plan ---- */

static int64_t boot_ms(const struct tb_matrix_now *now, const char *name)
{
	for (int i = 0; now != NULL && i < now->n; i++)
		if (strcmp(now->hosts[i].machine, name) == 0 && now->hosts[i].boot_ms > 0)
			return now->hosts[i].boot_ms;
	return TB_MATRIX_BOOT_DEFAULT_MS;
}

static int add_boot(struct tb_matrix_plan *plan, int cap, int seq, int round, const char *m, const char *from,
		    const char *to, const struct tb_matrix_now *now)
{
	struct tb_planned_boot *b;

	if (plan->nboots >= cap)
		return -1;
	b = &plan->boots[plan->nboots++];
	b->seq = seq;
	b->round = round;
	snprintf(b->machine, sizeof(b->machine), "%s", m);
	snprintf(b->from, sizeof(b->from), "%s", from);
	snprintf(b->to, sizeof(b->to), "%s", to);
	b->estimated_ms = boot_ms(now, m);
	return 0;
}

int tb_mx_plan_boots(struct tb_matrix_plan *plan, const struct tb_mx_spec *sp, const struct tb_matrix_now *now)
{
	struct state start, st;
	int cap;

	plan->nboots = 0;
	if (sp->ncombos == 0)
		return 0;
	state_init(&start, sp, now);
	st = start;
	/* at most one boot per machine and combination, and one back each */
	cap = (sp->ncombos + 1) * start.n;
	if ((plan->boots = calloc((size_t)cap, sizeof(*plan->boots))) == NULL)
		return -1;
	for (int i = 0; i < plan->nruns; i++) {
		struct tb_planned_run run, *r = &run;

		tb_matrix_plan_run(plan, i, &run); /* a lean plan has no runs array */

		for (int k = 0; k < 2; k++) {
			const char *m = k == 0 ? r->client : r->server, *want = k == 0 ? r->client_os : r->server_os;
			int s = state_find(&st, m);

			if (want[0] == '\0' || s < 0 || strcmp(st.os[s], want) == 0)
				continue;
			if (add_boot(plan, cap, r->seq, r->round, m, st.os[s], want, now) != 0)
				return -1;
			snprintf(st.os[s], sizeof(st.os[0]), "%s", want);
		}
	}
	if (!sp->leave_os)
		for (int s = 0; s < st.n; s++)
			if (start.os[s][0] != '\0' && strcmp(st.os[s], start.os[s]) != 0 &&
			    add_boot(plan, cap, -1, -1, st.machine[s], st.os[s], start.os[s], now) != 0)
				return -1;
	return 0;
}
