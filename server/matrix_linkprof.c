/*
 * matrix_linkprof.c - the "link_profiles" of a matrix spec (matrix.h): named
 * shaping profiles of the routers on the pairs' links, swept as a dimension
 * inside a tunable set (matrix.c), so the runs of one profile go together in
 * sequential order.  Pure: linkprof.c applies, reads back and removes them.
 *
 *  "link_profiles": [{"name": "20M", "rate": "20M", "loss_percent": 0.5,
 *                     "delay_ms": 0, "queue": 50}, null]
 *
 * null is the unshaped cell (nothing shapes the router).  rate: a bitrate as
 * iperf's ("20M", 20000000; null or "0": unlimited); loss_percent 0..100;
 * delay_ms 0..10000; queue 2..100 slots (null: the shaper's default).  The
 * routers: every machine of role router with a link named like a pair's
 * link; a freebsd persona is shaped with dummynet (pipe 1), a Linux one with
 * tc on its link interfaces (shaper.h has the commands).  A delay on a
 * router whose inventory entry says `cannot_delay` (the sim's: its kernel
 * has no netem) is refused here, before anything runs, with its reason.
 */
#include "matrix_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

#define LP_PIPE 1

static const char *const lp_keys[] = {"name", "rate", "loss_percent", "delay_ms", "queue", NULL};

/* A profile name: 1..32 bytes of [A-Za-z0-9_.-]. */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > TB_MX_LPROF_NAME)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

static int check_keys(const json_t *obj, const char *lfield, struct tb_error *err)
{
	const char *key;
	const json_t *x;

	json_object_foreach((json_t *)obj, key, x)
	{
		int known = 0;

		for (int k = 0; lp_keys[k] != NULL && !known; k++)
			known = strcmp(key, lp_keys[k]) == 0;
		if (!known) {
			char k2[48], field[TB_ERROR_FIELD_MAX];

			tb_mx_sanitize(k2, sizeof(k2), key, 40);
			snprintf(field, sizeof(field), "%s.%s", lfield, k2);
			return tb_fail(err, TB_ERR_UNKNOWN_FIELD, field,
				       "%s: unknown field; allowed here: name, rate, loss_percent, delay_ms, queue",
				       field);
		}
	}
	return 0;
}

/* The numbers of one profile (rate, loss_percent, delay_ms, queue). */
static int parse_numbers(const json_t *obj, const char *lfield, struct tb_mx_lprof *l, struct tb_error *err)
{
	const json_t *v;
	char field[TB_ERROR_FIELD_MAX], got[64];
	long long n;
	int rc;

	snprintf(field, sizeof(field), "%s.rate", lfield);
	if ((v = json_object_get(obj, "rate")) != NULL && !json_is_null(v)) {
		struct tb_mx_value x;

		if ((rc = tb_mx_value_parse(TB_MX_BITRATE, v, field, &x, err)) != 0)
			return rc;
		l->bps = x.bps > 0 ? x.bps : 0;
	}
	snprintf(field, sizeof(field), "%s.loss_percent", lfield);
	if ((v = json_object_get(obj, "loss_percent")) != NULL && !json_is_null(v)) {
		tb_mx_describe(v, got, sizeof(got));
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 100)
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be a number 0..100 (percent), got %s",
				       field, got);
		l->loss = json_number_value(v);
	}
	snprintf(field, sizeof(field), "%s.queue", lfield);
	if ((v = json_object_get(obj, "queue")) != NULL && !json_is_null(v)) {
		if ((rc = tb_mx_get_int(v, field, 2, 100, "slots", &n, err)) != 0)
			return rc;
		l->queue = (int)n;
	}
	snprintf(field, sizeof(field), "%s.delay_ms", lfield);
	if ((v = json_object_get(obj, "delay_ms")) != NULL && !json_is_null(v)) {
		if ((rc = tb_mx_get_int(v, field, 0, 10000, "ms", &n, err)) != 0)
			return rc;
		l->delay_ms = (int)n;
	}
	return 0;
}

static int parse_one(const json_t *obj, int i, struct tb_mx_spec *sp, struct tb_error *err)
{
	struct tb_mx_lprof *l = &sp->lprofs[i];
	const json_t *name = json_object_get(obj, "name");
	char lfield[32], field[TB_ERROR_FIELD_MAX], got[64];
	int rc;

	memset(l, 0, sizeof(*l));
	snprintf(lfield, sizeof(lfield), "link_profiles[%d]", i);
	if (json_is_null(obj)) {
		l->none = true;
	} else {
		tb_mx_describe(obj, got, sizeof(got));
		if (!json_is_object(obj))
			return tb_fail(err, TB_ERR_INVALID, lfield,
				       "%s must be null (unshaped) or {\"name\", \"rate\", \"loss_percent\", "
				       "\"delay_ms\", \"queue\"}, got %s",
				       lfield, got);
		if ((rc = check_keys(obj, lfield, err)) != 0)
			return rc;
		snprintf(field, sizeof(field), "%s.name", lfield);
		if (name != NULL)
			tb_mx_describe(name, got, sizeof(got));
		if (!json_is_string(name) || !name_ok(json_string_value(name)))
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is required: 1..%d letters, digits and _ . -, got %s", field,
				       TB_MX_LPROF_NAME, name == NULL ? "nothing" : got);
		snprintf(l->name, sizeof(l->name), "%s", json_string_value(name));
		if ((rc = parse_numbers(obj, lfield, l, err)) != 0)
			return rc;
	}
	for (int k = 0; k < i; k++) {
		const struct tb_mx_lprof *o = &sp->lprofs[k];

		if (o->none != l->none || (!l->none && strcmp(o->name, l->name) != 0))
			continue; /* a duplicate: both null, or the same name */
		return tb_fail(err, TB_ERR_INVALID, lfield, "%s repeats link_profiles[%d]; list each profile once",
			       lfield, k);
	}
	return 0;
}

/* The shapers router m has (TB_MX_SHAPE_*) and, for tc, the interfaces of
 * its links in its first Linux persona, into router slot r of sp. */
static unsigned router_shapers(const struct tb_machine *m, struct tb_mx_spec *sp, int r)
{
	const char *ifs[TB_MX_LPROF_IFS];
	unsigned k = 0;

	sp->lprouter_nifs[r] = 0;
	for (size_t o = 0; o < m->nos; o++) {
		if (strcmp(m->os[o].os, "freebsd") == 0) {
			k |= TB_MX_SHAPE_IPFW;
			continue;
		}
		if (k & TB_MX_SHAPE_TC)
			continue;
		k |= TB_MX_SHAPE_TC;
		sp->lprouter_nifs[r] = tb_machine_ifnames(m, m->os[o].os, ifs, TB_MX_LPROF_IFS);
		for (int i = 0; i < sp->lprouter_nifs[r]; i++)
			snprintf(sp->lprouter_ifs[r][i], TB_NAME_MAX, "%s", ifs[i]);
	}
	return k;
}

/* A delay where router m cannot delay: 400 naming the first such profile. */
static int delay_possible(const struct tb_machine *m, const struct tb_mx_spec *sp, struct tb_error *err)
{
	for (int i = 0; m->cannot_delay != NULL && i < sp->nlprofs; i++) {
		char field[48];

		if (sp->lprofs[i].none || sp->lprofs[i].delay_ms <= 0)
			continue;
		snprintf(field, sizeof(field), "link_profiles[%d].delay_ms", i);
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s: router %s cannot delay packets (its inventory entry says: %s); give 0 or another "
			       "router",
			       field, m->name, m->cannot_delay);
	}
	return 0;
}

/* The routers on the pairs' links into sp: each pair needs one. */
static int find_routers(const struct tb_inventory *inv, struct tb_mx_spec *sp, struct tb_error *err)
{
	int rc;

	sp->nlprouters = 0;
	for (int p = 0; p < sp->npairs; p++) {
		int found = 0;

		for (size_t i = 0; i < inv->nmachines; i++) {
			const struct tb_machine *m = &inv->machines[i];
			int on = 0, seen = 0;

			for (size_t k = 0; m->role == TB_ROLE_ROUTER && k < m->nlinks; k++)
				on |= strcmp(m->links[k].name, sp->pairs[p].link) == 0;
			if (!on)
				continue;
			found = 1;
			for (int r = 0; r < sp->nlprouters; r++)
				seen |= strcmp(sp->lprouters[r], m->name) == 0;
			if (seen)
				continue;
			if (sp->nlprouters == TB_MX_LPROF_ROUTERS)
				return tb_fail(err, TB_ERR_INVALID, "link_profiles",
					       "link_profiles: the pairs' links pass more than %d routers",
					       TB_MX_LPROF_ROUTERS);
			if ((rc = delay_possible(m, sp, err)) != 0)
				return rc;
			sp->lprouter_shapers[sp->nlprouters] = router_shapers(m, sp, sp->nlprouters);
			if ((sp->lprouter_shapers[sp->nlprouters] & TB_MX_SHAPE_TC) &&
			    sp->lprouter_nifs[sp->nlprouters] == 0)
				return tb_fail(err, TB_ERR_INVALID, "link_profiles",
					       "link_profiles: router %s (Linux: tc) names no interface for its links "
					       "(links.NAME.ifname in the inventory)",
					       m->name);
			snprintf(sp->lprouters[sp->nlprouters++], TB_NAME_MAX, "%s", m->name);
		}
		if (!found)
			return tb_fail(err, TB_ERR_INVALID, "link_profiles",
				       "link_profiles: pairs[%d] (link %s) passes no router: no machine of role "
				       "router has a link named %s",
				       p, sp->pairs[p].link, sp->pairs[p].link);
	}
	return 0;
}

int tb_mx_parse_linkprof(const json_t *spec, const struct tb_inventory *inv, struct tb_mx_spec *sp,
			 struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "link_profiles");
	char got[64];
	int rc;

	sp->nlprofs = 0;
	sp->nlprouters = 0;
	if (v == NULL || json_is_null(v))
		return 0;
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > TB_MX_LPROFS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "link_profiles",
			       "link_profiles must be a list of 1..%d profiles (null: unshaped), got %s",
			       TB_MX_LPROFS_MAX, got);
	if (!sp->one_at_a_time && sp->npairs > 1)
		return tb_fail(err, TB_ERR_INVALID, "link_profiles",
			       "a link profile shapes the whole router, and two pairs' runs at once could want two "
			       "profiles: with more than one pair use concurrency \"none\"");
	for (int i = 0; i < (int)json_array_size(v); i++) {
		if ((rc = parse_one(json_array_get(v, (size_t)i), i, sp, err)) != 0)
			return rc;
		sp->nlprofs = i + 1;
	}
	if ((long long)sp->ntsets * sp->nlprofs > TB_MX_TUNABLE_SETS_MAX) {
		sp->nlprofs = 0;
		return tb_fail(err, TB_ERR_INVALID, "link_profiles",
			       "link_profiles times the tunable sets make more than %d: sweep fewer at once",
			       TB_MX_TUNABLE_SETS_MAX);
	}
	if ((rc = find_routers(inv, sp, err)) != 0) {
		sp->nlprofs = 0;
		return rc;
	}
	return 0;
}

static json_t *profile_json(const struct tb_mx_lprof *l)
{
	if (l->none)
		return json_null();
	return json_pack("{s:s, s:I, s:f, s:i, s:o}", "name", l->name, "rate", (json_int_t)l->bps, "loss_percent",
			 l->loss, "delay_ms", l->delay_ms, "queue",
			 l->queue > 0 ? json_integer(l->queue) : json_null());
}

json_t *tb_mx_linkprof_stored(const struct tb_mx_spec *sp)
{
	json_t *a = json_array();

	for (int i = 0; a != NULL && i < sp->nlprofs; i++)
		if (json_array_append_new(a, profile_json(&sp->lprofs[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static struct tb_shape shape_of(const struct tb_mx_lprof *l)
{
	return (struct tb_shape){
		.none = l->none, .bps = l->bps, .loss = l->loss, .delay_ms = l->delay_ms, .queue = l->queue};
}

/* argv as one line onto a, with prefix; -1 when it won't fit.  Its words
 * need no quoting: fixed words, numbers and inventory interface names
 * (tb_valid_ifname). */
static int add_line(json_t *a, const char *prefix, const struct tb_argv *v)
{
	char line[512];
	size_t n = (size_t)snprintf(line, sizeof(line), "%s", prefix);

	for (int i = 0; i < v->n && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i > 0 ? " " : "", v->v[i]);
	return n < sizeof(line) ? json_array_append_new(a, json_string(line)) : -1;
}

/* The commands that make profile l the one in force on the routers (one
 * line each): dummynet's, then each Linux router's tc lines named by it. */
static json_t *commands(const struct tb_mx_spec *sp, const struct tb_mx_lprof *l)
{
	const struct tb_shape s = shape_of(l);
	json_t *a = json_array();
	struct tb_argv v;
	unsigned all = 0;
	int rc = a != NULL ? 0 : -1;

	for (int r = 0; r < sp->nlprouters; r++)
		all |= sp->lprouter_shapers[r];
	if ((all & TB_MX_SHAPE_IPFW) && rc == 0) {
		rc = tb_shape_ipfw_argv(&s, &v) != 0 ? -1 : add_line(a, "", &v);
		if (rc == 0)
			rc = json_array_append_new(a,
						   json_string(l->none ? "ipfw pipe 1 show (read back: no pipe 1)"
								       : "ipfw pipe 1 show (read back: bw, delay and "
									 "plr as set)"));
		if (rc == 0 && !l->none)
			rc = json_array_append_new(
				a, json_string("ipfw list (a rule of the router's must send packets into pipe 1)"));
	}
	for (int r = 0; r < sp->nlprouters && rc == 0; r++) {
		char prefix[TB_NAME_MAX + 8];

		if (!(sp->lprouter_shapers[r] & TB_MX_SHAPE_TC))
			continue;
		snprintf(prefix, sizeof(prefix), "%s: ", sp->lprouters[r]);
		for (int i = 0; i < sp->lprouter_nifs[r] && rc == 0; i++)
			rc = tb_shape_tc_argv(&s, sp->lprouter_ifs[r][i], &v) != 0 ? -1 : add_line(a, prefix, &v);
		if (rc == 0)
			rc = json_array_append_new(a, json_sprintf("%stc qdisc show (read back: %s)", prefix,
								   tb_shape_tc_empty(&s)
									   ? "no root qdisc of ours"
									   : "kind, rate, delay and loss as set"));
	}
	if (rc != 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

json_t *tb_matrix_linkprof_json(const struct tb_matrix_plan *plan, int i)
{
	const struct tb_mx_spec *sp = plan->sp;
	const struct tb_mx_lprof *l;
	json_t *routers, *o;

	if (sp == NULL || i < 0 || i >= sp->nlprofs)
		return NULL;
	l = &sp->lprofs[i];
	routers = json_array();
	for (int r = 0; routers != NULL && r < sp->nlprouters; r++)
		if (json_array_append_new(routers, json_string(sp->lprouters[r])) != 0) {
			json_decref(routers);
			routers = NULL;
		}
	o = json_pack("{s:i, s:s?, s:f, s:f, s:i, s:o, s:o, s:i}", "index", i, "name", l->none ? NULL : l->name,
		      "rate_bps", l->bps, "loss_percent", l->loss, "delay_ms", l->delay_ms, "queue",
		      l->queue > 0 ? json_integer(l->queue) : json_null(), "routers", routers, "pipe", LP_PIPE);
	return o;
}

int tb_matrix_plan_routers(const struct tb_matrix_plan *plan, const char *out[TB_MATRIX_ROUTERS_MAX])
{
	const struct tb_mx_spec *sp = plan->sp;
	int n = 0;

	for (int r = 0; sp != NULL && sp->nlprofs > 0 && r < sp->nlprouters && n < TB_MATRIX_ROUTERS_MAX; r++)
		out[n++] = sp->lprouters[r];
	return n;
}

json_t *tb_mx_linkprof_plan_json(const struct tb_matrix_plan *plan)
{
	const struct tb_mx_spec *sp = plan->sp;
	int first[TB_MX_LPROFS_MAX], last[TB_MX_LPROFS_MAX];
	int per = plan->base_cells / (sp->ntsets * sp->nlprofs);
	json_t *profiles = json_array(), *routers = json_array();

	for (int k = 0; k < sp->nlprofs; k++)
		first[k] = last[k] = -1;
	for (int i = 0; per > 0 && i < plan->nruns; i++) {
		int k = plan->slots[i].cell % plan->base_cells / per % sp->nlprofs;

		if (first[k] < 0)
			first[k] = i;
		last[k] = i;
	}
	for (int r = 0; routers != NULL && r < sp->nlprouters; r++)
		json_array_append_new(routers, json_string(sp->lprouters[r]));
	for (int k = 0; profiles != NULL && k < sp->nlprofs; k++) {
		if (json_array_append_new(profiles, json_pack("{s:i, s:o, s:o, s:i, s:i}", "index", k, "profile",
							      profile_json(&sp->lprofs[k]), "commands",
							      commands(sp, &sp->lprofs[k]), "first_seq", first[k],
							      "last_seq", last[k])) != 0) {
			json_decref(profiles);
			profiles = NULL;
		}
	}
	return json_pack(
		"{s:o, s:o, s:s, s:s}", "routers", routers, "profiles", profiles, "apply",
		"before the first run of a profile, on each router as root: on FreeBSD dummynet pipe 1 configured with "
		"the profile's bw, delay, plr and queue (null: pipe 1 deleted), read back with ipfw pipe 1 show; on "
		"Linux the root qdisc of each of its link interfaces (tbf for a rate alone, netem with a loss or a "
		"delay; null: deleted), read back with tc qdisc show; a mismatch fails the run as link_profile_error; "
		"each run records its profile",
		"remove",
		"on each router at the end of the matrix, however it ends (succeeded, failed, canceled, testbedd "
		"stopped), and at start-up after a crash (a journal row is written before a router is first shaped): "
		"ipfw -q pipe 1 delete on FreeBSD, tc qdisc del dev IF root on each link interface on Linux");
}
