/*
 * matrix_spec.c - a matrix spec checked against the fixed grammar of
 * matrix.h and the inventory, normalised into struct tb_mx_spec, and the
 * spec as stored (defaults filled in, the seed set).  Expansion is matrix.c's;
 * single values (sizes, bitrates, affinity) are matrix_values.c's.
 *
 * Messages start with the JSON path of the value and name what is allowed:
 * "iperf.parallel[1] must be 1..128, got 0".
 */
#include "matrix_internal.h"
#include "matrix_profile.h"
#include "validate.h"

#include <stdio.h>
#include <string.h>

#define SEED_MAX 9007199254740992LL /* 2^53: the largest integer a JSON double keeps exactly */
#define TOTAL_CAP_MAX 31536000LL    /* caps.total_s: a year */
#define UDP_LENGTH_MAX 65507L       /* the largest UDP payload over IPv4 */

static const char *const top_keys[] = {"name",       "pairs",         "groups", "os",     "protocols", "directions",
				       "duration_s", "repeats",       "order",  "seed",   "pause_s",   "concurrency",
				       "os_after",   "caps",          "iperf",  "sample", "tunables",  "latency",
				       "tool",       "link_profiles", "idle",   "family", "profile",   NULL};
static const char *const pair_keys[] = {"client", "server", "link", NULL};
static const char *const cap_keys[] = {"total_s", "duration_s", "bitrate", NULL};
static const char *const axis_keys[TB_MX_NAXES + 1] = {"parallel",    "length",   "window",     "bitrate",
						       "udp_bitrate", "omit_s",   "congestion", "tos",
						       "zerocopy",    "affinity", NULL};
static const char *const proto_names[] = {"tcp", "udp", NULL};
static const char *const dir_names[] = {"forward", "reverse", "bidir", NULL};
static const char *const order_names[] = {"sequential", "interleaved", "shuffled", NULL};
static const char *const concurrency_names[] = {"disjoint", "none", "pairs", NULL};

/* ---- messages ---- */

static void join(char *buf, size_t len, const char *const *names, const char *sep)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; names[i] != NULL && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i > 0 ? sep : "", names[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int check_keys(const json_t *obj, const char *prefix, const char *const *allowed, struct tb_error *err)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		int known = 0;
		char k[48], field[TB_ERROR_FIELD_MAX], list[256];

		for (int i = 0; allowed[i] != NULL && !known; i++)
			known = strcmp(key, allowed[i]) == 0;
		if (known)
			continue;
		tb_mx_sanitize(k, sizeof(k), key, 40);
		snprintf(field, sizeof(field), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", k);
		join(list, sizeof(list), allowed, ", ");
		return tb_fail(err, TB_ERR_UNKNOWN_FIELD, field, "%s: unknown field; allowed here: %s", field, list);
	}
	return 0;
}

/* The value of key, or NULL when absent or null (both mean "the default"). */
static const json_t *opt(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return v != NULL && !json_is_null(v) ? v : NULL;
}

static int get_enum(const json_t *v, const char *field, const char *const *names, int *out, struct tb_error *err)
{
	char got[64], list[128];

	if (json_is_string(v))
		for (int i = 0; names[i] != NULL; i++)
			if (strcmp(json_string_value(v), names[i]) == 0) {
				*out = i;
				return 0;
			}
	tb_mx_describe(v, got, sizeof(got));
	join(list, sizeof(list), names, " | ");
	return tb_fail(err, TB_ERR_INVALID, field, "%s must be one of %s, got %s", field, list, got);
}

/* ---- sweeps ---- */

static int sweep_shape(const json_t *v, const char *field, const char *what, struct tb_error *err)
{
	char got[64];

	if (!json_is_array(v) || (json_array_size(v) >= 1 && json_array_size(v) <= TB_MX_SWEEP_MAX))
		return 0;
	if (json_array_size(v) == 0)
		snprintf(got, sizeof(got), "[] (an empty list)");
	else
		snprintf(got, sizeof(got), "a list of %zu", json_array_size(v));
	return tb_fail(err, TB_ERR_INVALID, field, "%s must be %s, or a list of 1..%d of them (a sweep), got %s", field,
		       what, TB_MX_SWEEP_MAX, got);
}

static const char *const axis_what[TB_MX_NAXES] = {
	"1..128",
	"1..1048576 bytes",
	"1..536870912 bytes",
	"a bitrate such as \"100M\"",
	"a bitrate such as \"100M\"",
	"0..60 seconds",
	"a congestion control name",
	"0..255",
	"true or false",
	"\"n\" or \"n,m\" (CPUs 0..1023)",
	"\"ipv4\" or \"ipv6\"",
	"\"iperf3\" or \"iperf2\"",
};

/* An iperf key (or the top-level "tool" or "family"): absent/null (unset), a
 * scalar, or a list of 1..64 distinct scalars (null in a list: unset). */
static int parse_axis(const json_t *spec, const json_t *iperf, enum tb_mx_axis axis, struct tb_mx_sweep *sw,
		      struct tb_error *err)
{
	const char *top = axis == TB_MX_TOOL ? "tool" : axis == TB_MX_FAMILY ? "family" : NULL;
	const json_t *v = top != NULL ? opt(spec, top) : iperf != NULL ? opt(iperf, axis_keys[axis]) : NULL;
	char field[TB_ERROR_FIELD_MAX];
	int rc;

	if (top != NULL)
		snprintf(field, sizeof(field), "%s", top);
	else
		snprintf(field, sizeof(field), "iperf.%s", axis_keys[axis]);
	sw->n = 1;
	sw->listed = false;
	tb_mx_value_unset(axis, &sw->v[0]);
	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return tb_mx_value_parse(axis, v, field, &sw->v[0], err);
	if ((rc = sweep_shape(v, field, axis_what[axis], err)) != 0)
		return rc;
	sw->listed = true;
	sw->n = (int)json_array_size(v);
	for (int i = 0; i < sw->n; i++) {
		const json_t *e = json_array_get(v, (size_t)i);
		char efield[TB_ERROR_FIELD_MAX], got[64];

		snprintf(efield, sizeof(efield), "%s[%d]", field, i);
		if (json_is_null(e))
			tb_mx_value_unset(axis, &sw->v[i]);
		else if ((rc = tb_mx_value_parse(axis, e, efield, &sw->v[i], err)) != 0)
			return rc;
		for (int k = 0; k < i; k++)
			if (tb_mx_value_same(axis, &sw->v[k], &sw->v[i])) {
				tb_mx_describe(e, got, sizeof(got));
				return tb_fail(err, TB_ERR_INVALID, efield,
					       "%s repeats %s[%d] (%s); a sweep lists each value once", efield, field,
					       k, got);
			}
	}
	return 0;
}

static int parse_durations(const json_t *spec, struct tb_mx_spec *out, struct tb_error *err)
{
	const json_t *v = opt(spec, "duration_s");
	long long n;
	int rc;

	out->ndurations = 1;
	out->durations[0] = 10;
	if (v == NULL)
		return 0;
	if (!json_is_array(v)) {
		if ((rc = tb_mx_get_int(v, "duration_s", 1, 3600, " seconds", &n, err)) != 0)
			return rc;
		out->durations[0] = (int)n;
		return 0;
	}
	if ((rc = sweep_shape(v, "duration_s", "1..3600 seconds", err)) != 0)
		return rc;
	out->ndurations = (int)json_array_size(v);
	for (int i = 0; i < out->ndurations; i++) {
		char field[32];

		snprintf(field, sizeof(field), "duration_s[%d]", i);
		if ((rc = tb_mx_get_int(json_array_get(v, (size_t)i), field, 1, 3600, " seconds", &n, err)) != 0)
			return rc;
		out->durations[i] = (int)n;
		for (int k = 0; k < i; k++)
			if (out->durations[k] == out->durations[i])
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s repeats duration_s[%d] (%d); a sweep lists each value once", field,
					       k, out->durations[i]);
	}
	return 0;
}

/* protocols, directions: a non-empty set of names, in the order given. */
static int parse_set(const json_t *spec, const char *key, const char *const *names, int *values, int *n,
		     struct tb_error *err)
{
	const json_t *v = opt(spec, key);
	char got[64], list[64];
	int rc, max = 0;

	while (names[max] != NULL)
		max++;
	if (v == NULL) {
		values[0] = 0;
		*n = 1;
		return 0;
	}
	join(list, sizeof(list), names, " | ");
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) == 0)
		return tb_fail(err, TB_ERR_INVALID, key, "%s must be a non-empty list of %s, got %s", key, list, got);
	if (json_array_size(v) > (size_t)max)
		return tb_fail(err, TB_ERR_INVALID, key, "%s lists %zu values; each of %s at most once", key,
			       json_array_size(v), list);
	*n = (int)json_array_size(v);
	for (int i = 0; i < *n; i++) {
		char field[32];

		snprintf(field, sizeof(field), "%s[%d]", key, i);
		if ((rc = get_enum(json_array_get(v, (size_t)i), field, names, &values[i], err)) != 0)
			return rc;
		for (int k = 0; k < i; k++)
			if (values[k] == values[i])
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s repeats %s[%d] (\"%s\"); list each of %s at most once", field, key,
					       k, names[values[i]], list);
	}
	return 0;
}

/* ---- name and pairs ---- */

static int parse_name(const json_t *spec, struct tb_mx_spec *out, struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "name");
	const unsigned char *s;
	char got[64];
	size_t len;
	long bad;

	if (v == NULL)
		return tb_fail(err, TB_ERR_INVALID, "name",
			       "name is required: 1..%d printable characters that say what the matrix measures",
			       TB_MATRIX_NAME_MAX);
	tb_mx_describe(v, got, sizeof(got));
	len = json_is_string(v) ? json_string_length(v) : 0;
	s = (const unsigned char *)(json_is_string(v) ? json_string_value(v) : "");
	/* C0, DEL, NUL inside the string, C1, and the format characters that hide or reorder text */
	if ((bad = tb_text_refused((const char *)s, len)) >= 0x80)
		return tb_fail(err, TB_ERR_INVALID, "name",
			       "name must be 1..%d printable characters: U+%04lX is a control or format character "
			       "(it hides or reorders text), got %s",
			       TB_MATRIX_NAME_MAX, (unsigned long)bad, got);
	if (bad >= 0)
		len = 0;
	if (len < 1 || len > TB_MATRIX_NAME_MAX)
		return tb_fail(err, TB_ERR_INVALID, "name",
			       "name must be 1..%d printable characters (at most %d bytes of UTF-8, no control or "
			       "format characters), got %s",
			       TB_MATRIX_NAME_MAX, TB_MATRIX_NAME_MAX, got);
	memcpy(out->name, s, len);
	out->name[len] = '\0';
	return 0;
}

/* "left, right, router": the machines a pair may name. */
static void pair_machines(const struct tb_inventory *inv, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < inv->nmachines && used + 1 < len; i++) {
		int w;

		if (inv->machines[i].role == TB_ROLE_RELAY && inv->machines[i].nlinks == 0)
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used > 0 ? ", " : "", inv->machines[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (used == 0)
		snprintf(buf, len, "none: the inventory has no host or router");
}

static int pair_machine(const json_t *pair, const char *pfield, const char *key, const struct tb_inventory *inv,
			const struct tb_machine **out, struct tb_error *err)
{
	const json_t *v = json_object_get(pair, key);
	const struct tb_machine *m;
	char field[TB_ERROR_FIELD_MAX], list[256], got[64];

	snprintf(field, sizeof(field), "%s.%s", pfield, key);
	pair_machines(inv, list, sizeof(list));
	if (v == NULL)
		return tb_fail(err, TB_ERR_INVALID, field, "%s is required: a machine with role host or router (%s)",
			       field, list);
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_string(v))
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be a machine name (%s), got %s", field, list, got);
	m = tb_inventory_find(inv, json_string_value(v));
	if (m == NULL)
		return tb_fail(err, TB_ERR_INVALID, field, "%s: no machine %s in the inventory; hosts and routers: %s",
			       field, got, list);
	/* a relay runs iperf3 only when someone wired it into the data plane */
	if (m->role == TB_ROLE_RELAY && m->nlinks == 0)
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s: %s has role relay and no links; a pair needs a machine with role host or router, "
			       "or a relay with a link (%s)",
			       field, m->name, list);
	*out = m;
	return 0;
}

static int parse_pair(const json_t *pair, int i, const struct tb_inventory *inv, struct tb_mx_pair *out,
		      struct tb_error *err)
{
	const struct tb_machine *c = NULL, *s = NULL;
	const struct tb_link *link = NULL;
	const json_t *lv;
	char pfield[32], field[TB_ERROR_FIELD_MAX], got[64];
	int rc;

	snprintf(pfield, sizeof(pfield), "pairs[%d]", i);
	tb_mx_describe(pair, got, sizeof(got));
	if (!json_is_object(pair))
		return tb_fail(err, TB_ERR_INVALID, pfield,
			       "%s must be an object {\"client\": machine, \"server\": machine, \"link\": optional}, "
			       "got %s",
			       pfield, got);
	if ((rc = check_keys(pair, pfield, pair_keys, err)) != 0 ||
	    (rc = pair_machine(pair, pfield, "client", inv, &c, err)) != 0 ||
	    (rc = pair_machine(pair, pfield, "server", inv, &s, err)) != 0)
		return rc;
	snprintf(field, sizeof(field), "%s.server", pfield);
	if (c == s)
		return tb_fail(err, TB_ERR_INVALID, field, "%s must differ from %s.client (both %s)", field, pfield,
			       c->name);
	if (s->nlinks == 0)
		return tb_fail(err, TB_ERR_INVALID, field, "%s: %s has no links: add one under links in the inventory",
			       field, s->name);
	snprintf(field, sizeof(field), "%s.link", pfield);
	lv = opt(pair, "link");
	if (lv != NULL) {
		char list[256];
		size_t used = 0;

		for (size_t k = 0; k < s->nlinks && link == NULL; k++)
			if (json_is_string(lv) && strcmp(json_string_value(lv), s->links[k].name) == 0)
				link = &s->links[k];
		if (link == NULL) {
			list[0] = '\0';
			for (size_t k = 0; k < s->nlinks && used + 1 < sizeof(list); k++) {
				int w = snprintf(list + used, sizeof(list) - used, "%s%s", k > 0 ? ", " : "",
						 s->links[k].name);

				if (w < 0)
					break;
				used += (size_t)w;
			}
			tb_mx_describe(lv, got, sizeof(got));
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be one of %s's links (%s), got %s", field,
				       s->name, list, got);
		}
	}
	/* Default: the first of the server's links the client has too, else its first. */
	for (size_t k = 0; k < s->nlinks && link == NULL; k++)
		for (size_t m = 0; m < c->nlinks && link == NULL; m++)
			if (strcmp(s->links[k].name, c->links[m].name) == 0)
				link = &s->links[k];
	if (link == NULL)
		link = &s->links[0];
	snprintf(out->client, sizeof(out->client), "%s", c->name);
	snprintf(out->server, sizeof(out->server), "%s", s->name);
	snprintf(out->link, sizeof(out->link), "%s", link->name);
	snprintf(out->address, sizeof(out->address), "%.*s", (int)strcspn(link->address, "/"), link->address);
	if (link->address6 != NULL)
		snprintf(out->address6, sizeof(out->address6), "%.*s", (int)strcspn(link->address6, "/"),
			 link->address6);
	return 0;
}

/* The runner holds every machine the pairs name while the matrix runs: at
 * most TB_MATRIX_HOSTS_MAX of them. */
static int check_hosts(const struct tb_mx_spec *sp, struct tb_error *err)
{
	const char *seen[2 * TB_MX_PAIRS_MAX];
	int n = 0;

	for (int i = 0; i < sp->npairs; i++) {
		const char *two[2] = {sp->pairs[i].client, sp->pairs[i].server};

		for (int k = 0; k < 2; k++) {
			int j = 0;

			while (j < n && strcmp(seen[j], two[k]) != 0)
				j++;
			if (j == n)
				seen[n++] = two[k];
		}
	}
	if (n > TB_MATRIX_HOSTS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "pairs",
			       "pairs name %d machines; a matrix may use at most %d (it holds each of them while it "
			       "runs): split it into matrices of fewer machines",
			       n, TB_MATRIX_HOSTS_MAX);
	return 0;
}

static int parse_pairs(const json_t *spec, const struct tb_inventory *inv, struct tb_mx_spec *out, struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "pairs");
	char got[64];
	int rc;

	if (v == NULL)
		return tb_fail(err, TB_ERR_INVALID, "pairs",
			       "pairs is required: a list of 1..%d {\"client\": machine, \"server\": machine}",
			       TB_MX_PAIRS_MAX);
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) == 0)
		return tb_fail(err, TB_ERR_INVALID, "pairs",
			       "pairs must be a list of 1..%d {\"client\": machine, \"server\": machine}, got %s",
			       TB_MX_PAIRS_MAX, got);
	if (json_array_size(v) > TB_MX_PAIRS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "pairs", "pairs has %zu entries; at most %d", json_array_size(v),
			       TB_MX_PAIRS_MAX);
	out->npairs = (int)json_array_size(v);
	for (int i = 0; i < out->npairs; i++)
		if ((rc = parse_pair(json_array_get(v, (size_t)i), i, inv, &out->pairs[i], err)) != 0)
			return rc;
	return check_hosts(out, err);
}

/* ---- order, caps ---- */

static int parse_order(const json_t *spec, uint64_t seed_if_unset, struct tb_mx_spec *out, struct tb_error *err)
{
	const json_t *v;
	long long n;
	int rc, order = TB_ORDER_SEQUENTIAL;

	if ((v = opt(spec, "repeats")) == NULL)
		out->repeats = 1;
	else if ((rc = tb_mx_get_int(v, "repeats", 1, 1000, "", &n, err)) != 0)
		return rc;
	else
		out->repeats = (int)n;
	if ((v = opt(spec, "order")) != NULL && (rc = get_enum(v, "order", order_names, &order, err)) != 0)
		return rc;
	out->order = (enum tb_matrix_order)order;
	if ((v = opt(spec, "seed")) != NULL) {
		if (out->order != TB_ORDER_SHUFFLED)
			return tb_fail(
				err, TB_ERR_INVALID, "seed",
				"seed is only used with order \"shuffled\" (order is \"%s\"); leave it out or set "
				"order to \"shuffled\"",
				order_names[order]);
		if ((rc = tb_mx_get_int(v, "seed", 0, SEED_MAX, "", &n, err)) != 0)
			return rc;
		out->seed = (uint64_t)n;
	} else if (out->order == TB_ORDER_SHUFFLED) {
		out->seed = seed_if_unset & (uint64_t)(SEED_MAX - 1);
	}
	if ((v = opt(spec, "concurrency")) != NULL) {
		int c = 0;

		if ((rc = get_enum(v, "concurrency", concurrency_names, &c, err)) != 0)
			return rc;
		out->one_at_a_time = c == 1;
		out->by_pair = c == 2;
	}
	if ((v = opt(spec, "pause_s")) != NULL) {
		char got[64];

		tb_mx_describe(v, got, sizeof(got));
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 3600)
			return tb_fail(err, TB_ERR_INVALID, "pause_s",
				       "pause_s must be a number of seconds 0..3600 (ms resolution), got %s", got);
		out->pause_ms = (int)(json_number_value(v) * 1000.0 + 0.5);
	}
	return 0;
}

static void field_of(const struct tb_mx_sweep *sw, const char *key, int i, char *buf, size_t len)
{
	if (sw->listed)
		snprintf(buf, len, "%s[%d]", key, i);
	else
		snprintf(buf, len, "%s", key);
}

static int has_proto(const struct tb_mx_spec *sp, enum tb_iperf_proto p)
{
	for (int i = 0; i < sp->nprotos; i++)
		if (sp->protos[i] == p)
			return 1;
	return 0;
}

/* The caps, and the checks that compare one key with another. */
static int check_caps(const json_t *spec, struct tb_mx_spec *sp, struct tb_error *err)
{
	const json_t *caps = opt(spec, "caps"), *v;
	char field[TB_ERROR_FIELD_MAX], got[64];
	long long n;
	int rc;

	if (has_proto(sp, TB_IPERF_UDP)) {
		const struct tb_mx_sweep *sw = &sp->axes[TB_MX_LENGTH];

		for (int i = 0; i < sw->n; i++)
			if (sw->v[i].num > UDP_LENGTH_MAX) {
				field_of(sw, "iperf.length", i, field, sizeof(field));
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is %ld bytes; UDP runs (protocols has udp) take at most %ld", field,
					       sw->v[i].num, UDP_LENGTH_MAX);
			}
	}
	if (caps == NULL)
		return 0;
	tb_mx_describe(caps, got, sizeof(got));
	if (!json_is_object(caps))
		return tb_fail(err, TB_ERR_INVALID, "caps",
			       "caps must be an object {\"total_s\", \"duration_s\", \"bitrate\"}, got %s", got);
	if ((rc = check_keys(caps, "caps", cap_keys, err)) != 0)
		return rc;
	if ((v = opt(caps, "total_s")) != NULL) {
		if ((rc = tb_mx_get_int(v, "caps.total_s", 1, TOTAL_CAP_MAX, " seconds", &n, err)) != 0)
			return rc;
		sp->cap_total_s = n;
	}
	if ((v = opt(caps, "duration_s")) != NULL) {
		if ((rc = tb_mx_get_int(v, "caps.duration_s", 1, 3600, " seconds", &n, err)) != 0)
			return rc;
		for (int i = 0; i < sp->ndurations; i++)
			if (sp->durations[i] > n) {
				if (json_is_array(json_object_get(spec, "duration_s")))
					snprintf(field, sizeof(field), "duration_s[%d]", i);
				else
					snprintf(field, sizeof(field), "duration_s");
				return tb_fail(err, TB_ERR_INVALID, field, "%s is %d, more than caps.duration_s %lld",
					       field, sp->durations[i], n);
			}
	}
	if ((v = opt(caps, "bitrate")) != NULL) {
		struct tb_mx_value cap;
		const struct tb_mx_sweep *sw;

		if ((rc = tb_mx_value_parse(TB_MX_BITRATE, v, "caps.bitrate", &cap, err)) != 0)
			return rc;
		if (cap.bps <= 0)
			return tb_fail(err, TB_ERR_INVALID, "caps.bitrate",
				       "caps.bitrate must be more than 0 (a bitrate such as \"1G\"), got %s", cap.str);
		/* TCP: "0" and unset are unlimited but congestion-controlled, so allowed. */
		sw = &sp->axes[TB_MX_BITRATE];
		for (int i = 0; has_proto(sp, TB_IPERF_TCP) && i < sw->n; i++)
			if (sw->v[i].bps > cap.bps) {
				field_of(sw, "iperf.bitrate", i, field, sizeof(field));
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is \"%s\", more than caps.bitrate \"%s\"", field, sw->v[i].str,
					       cap.str);
			}
		sw = &sp->axes[TB_MX_UDP_BITRATE];
		for (int i = 0; has_proto(sp, TB_IPERF_UDP) && i < sw->n; i++) {
			field_of(sw, "iperf.udp_bitrate", i, field, sizeof(field));
			if (sw->v[i].bps < 0 && 1e6 > cap.bps)
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s unset sends UDP at iperf3's default 1M, more than caps.bitrate "
					       "\"%s\"; set %s",
					       field, cap.str, field);
			if (sw->v[i].bps == 0)
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is \"%s\" (unlimited), which caps.bitrate \"%s\" does not allow for "
					       "UDP; give a bitrate up to \"%s\"",
					       field, sw->v[i].str, cap.str, cap.str);
			if (sw->v[i].bps > cap.bps)
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is \"%s\", more than caps.bitrate \"%s\"", field, sw->v[i].str,
					       cap.str);
		}
	}
	return 0;
}

/* ---- the spec as stored ---- */

static json_t *copy_or(const json_t *spec, const char *key, json_t *dflt)
{
	const json_t *v = opt(spec, key);

	if (v == NULL)
		return dflt;
	json_decref(dflt);
	return json_deep_copy(v);
}

static json_t *names_json(const int *values, int n, const char *const *names)
{
	json_t *a = json_array();

	for (int i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_string(names[values[i]])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *stored_spec(const json_t *spec, const struct tb_mx_spec *sp)
{
	const json_t *iperf_in = opt(spec, "iperf");
	json_t *st = json_object(), *pairs = json_array(), *iperf = json_object();
	int bad = st == NULL || pairs == NULL || iperf == NULL;
	int protos[2], dirs[3];

	for (int i = 0; i < sp->nprotos; i++)
		protos[i] = (int)sp->protos[i];
	for (int i = 0; i < sp->ndirs; i++)
		dirs[i] = (int)sp->dirs[i];
	for (int i = 0; !bad && i < sp->npairs; i++)
		bad |= json_array_append_new(pairs,
					     json_pack("{s:s, s:s, s:s}", "client", sp->pairs[i].client, "server",
						       sp->pairs[i].server, "link", sp->pairs[i].link)) != 0;
	for (int a = 0; !bad && a < TB_MX_NAXES; a++) {
		const json_t *v = iperf_in != NULL && axis_keys[a] != NULL ? json_object_get(iperf_in, axis_keys[a])
									   : NULL;
		json_t *x;

		if (a == TB_MX_TOOL || a == TB_MX_FAMILY) /* top-level, below */
			continue;

		if (v != NULL)
			x = json_deep_copy(v);
		else if (a == TB_MX_PARALLEL)
			x = json_integer(1);
		else if (a == TB_MX_OMIT)
			x = json_integer(0);
		else if (a == TB_MX_ZEROCOPY)
			x = json_false();
		else
			x = json_null();
		bad |= json_object_set_new(iperf, axis_keys[a], x) != 0;
	}
	if (bad) {
		json_decref(pairs);
		json_decref(iperf);
		json_decref(st);
		return NULL;
	}
	bad |= json_object_set_new(st, "name", json_string(sp->name)) != 0;
	bad |= json_object_set_new(st, "pairs", pairs) != 0;
	if (sp->ncombos > 0) {
		json_t *os = tb_mx_os_stored(sp);

		bad |= os == NULL || json_object_set_new(st, "os", os) != 0;
		bad |= json_object_set_new(st, "os_after", json_string(sp->leave_os ? "leave" : "restore")) != 0;
	}
	bad |= json_object_set_new(st, "protocols", names_json(protos, sp->nprotos, proto_names)) != 0;
	bad |= json_object_set_new(st, "directions", names_json(dirs, sp->ndirs, dir_names)) != 0;
	bad |= json_object_set_new(st, "duration_s", copy_or(spec, "duration_s", json_integer(10))) != 0;
	bad |= json_object_set_new(st, "repeats", json_integer(sp->repeats)) != 0;
	bad |= json_object_set_new(st, "order", json_string(order_names[sp->order])) != 0;
	if (sp->order == TB_ORDER_SHUFFLED)
		bad |= json_object_set_new(st, "seed", json_integer((json_int_t)sp->seed)) != 0;
	bad |= json_object_set_new(st, "pause_s", copy_or(spec, "pause_s", json_integer(0))) != 0;
	bad |= json_object_set_new(st, "concurrency",
				   json_string(concurrency_names[sp->one_at_a_time ? 1
								 : sp->by_pair     ? 2
										   : 0])) != 0;
	if (opt(spec, "caps") != NULL)
		bad |= json_object_set_new(st, "caps", json_deep_copy(opt(spec, "caps"))) != 0;
	if (json_array_size(opt(spec, "sample")) > 0)
		bad |= json_object_set_new(st, "sample", json_deep_copy(opt(spec, "sample"))) != 0;
	if (opt(spec, "latency") != NULL)
		bad |= json_object_set_new(st, "latency", json_deep_copy(opt(spec, "latency"))) != 0;
	if (opt(spec, "idle") != NULL)
		bad |= json_object_set_new(st, "idle", json_deep_copy(opt(spec, "idle"))) != 0;
	if (opt(spec, "profile") != NULL)
		bad |= json_object_set_new(st, "profile", json_deep_copy(opt(spec, "profile"))) != 0;
	bad |= json_object_set_new(st, "iperf", iperf) != 0;
	if (opt(spec, "tool") != NULL)
		bad |= json_object_set_new(st, "tool", json_deep_copy(opt(spec, "tool"))) != 0;
	if (opt(spec, "family") != NULL)
		bad |= json_object_set_new(st, "family", json_deep_copy(opt(spec, "family"))) != 0;
	if (sp->ntunables > 0)
		bad |= json_object_set_new(st, "tunables", tb_mx_tunables_stored(sp)) != 0;
	if (sp->nlprofs > 0)
		bad |= json_object_set_new(st, "link_profiles", tb_mx_linkprof_stored(sp)) != 0;
	if (bad) {
		json_decref(st);
		return NULL;
	}
	return st;
}

/* "sample": what to sample on both ends during each run (issue 20), a
 * list of "cpu" and "mem" (run_sampler.c reads both either way). */
static int check_sample(const json_t *spec, struct tb_error *err)
{
	static const char *const names[] = {"cpu", "mem", NULL};
	const json_t *v = opt(spec, "sample"), *x;
	size_t i;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return tb_fail(err, TB_ERR_INVALID, "sample", "sample must be a list of \"cpu\" and \"mem\"");
	json_array_foreach(v, i, x)
	{
		int known = 0;

		for (int k = 0; names[k] != NULL && json_is_string(x); k++)
			known |= strcmp(json_string_value(x), names[k]) == 0;
		if (!known) {
			char field[32];

			snprintf(field, sizeof(field), "sample[%zu]", i);
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be \"cpu\" or \"mem\"", field);
		}
	}
	return 0;
}

/* "latency": an RTT stream beside each run (issue 20 item 7), "irtt" (ping
 * where a host lacks irtt) or "ping"; run_latency.c runs it. */
static int check_latency(const json_t *spec, struct tb_error *err)
{
	const json_t *v = opt(spec, "latency");

	if (v == NULL || (json_is_string(v) &&
			  (strcmp(json_string_value(v), "irtt") == 0 || strcmp(json_string_value(v), "ping") == 0)))
		return 0;
	return tb_fail(err, TB_ERR_INVALID, "latency", "latency must be \"irtt\" or \"ping\"");
}

/* "idle": the idle check before each run (issue 20 item 5; run_idle.c
 * does it): false skips it; an object of max_load (>= 0),
 * max_softirq_percent (0..100) and wait_s (0..3600). */
static int check_idle(const json_t *spec, struct tb_error *err)
{
	static const char *const keys[] = {"max_load", "max_softirq_percent", "wait_s", NULL};
	const json_t *v = opt(spec, "idle"), *x;
	int rc;

	if (v == NULL || json_is_false(v))
		return 0;
	if (!json_is_object(v))
		return tb_fail(err, TB_ERR_INVALID, "idle",
			       "idle must be false or an object of max_load, max_softirq_percent and wait_s");
	if ((rc = check_keys(v, "idle", keys, err)) != 0)
		return rc;
	x = json_object_get(v, "max_load");
	if (x != NULL && (!json_is_number(x) || json_number_value(x) < 0 || json_number_value(x) > 10000))
		return tb_fail(err, TB_ERR_INVALID, "idle.max_load", "idle.max_load must be a number 0..10000");
	x = json_object_get(v, "max_softirq_percent");
	if (x != NULL && (!json_is_number(x) || json_number_value(x) < 0 || json_number_value(x) > 100))
		return tb_fail(err, TB_ERR_INVALID, "idle.max_softirq_percent",
			       "idle.max_softirq_percent must be a number 0..100");
	x = json_object_get(v, "wait_s");
	if (x != NULL && (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 3600))
		return tb_fail(err, TB_ERR_INVALID, "idle.wait_s", "idle.wait_s must be an integer 0..3600");
	return 0;
}

/* ---- the whole spec ---- */

int tb_mx_spec_parse(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset, struct tb_mx_spec *out,
		     struct tb_error *err)
{
	const json_t *iperf;
	int rc, v[3];
	char got[64];

	memset(out, 0, sizeof(*out));
	if (!json_is_object(spec)) {
		tb_mx_describe(spec, got, sizeof(got));
		return tb_fail(err, TB_ERR_INVALID, "",
			       "a matrix spec must be a JSON object with name and pairs, got %s", got);
	}
	if ((rc = check_keys(spec, "", top_keys, err)) != 0)
		return rc;
	if ((rc = parse_name(spec, out, err)) != 0 || (rc = parse_pairs(spec, inv, out, err)) != 0 ||
	    (rc = tb_mx_parse_os(spec, inv, out, err)) != 0)
		return rc;
	if ((rc = parse_set(spec, "protocols", proto_names, v, &out->nprotos, err)) != 0)
		return rc;
	for (int i = 0; i < out->nprotos; i++)
		out->protos[i] = (enum tb_iperf_proto)v[i];
	if ((rc = parse_set(spec, "directions", dir_names, v, &out->ndirs, err)) != 0)
		return rc;
	for (int i = 0; i < out->ndirs; i++)
		out->dirs[i] = (enum tb_iperf_dir)v[i];
	if ((rc = parse_durations(spec, out, err)) != 0 || (rc = parse_order(spec, seed_if_unset, out, err)) != 0)
		return rc;
	iperf = opt(spec, "iperf");
	if (iperf != NULL && !json_is_object(iperf)) {
		tb_mx_describe(iperf, got, sizeof(got));
		return tb_fail(err, TB_ERR_INVALID, "iperf", "iperf must be an object of iperf3 parameters, got %s",
			       got);
	}
	if (iperf != NULL && (rc = check_keys(iperf, "iperf", axis_keys, err)) != 0)
		return rc;
	for (int a = 0; a < TB_MX_NAXES; a++)
		if ((rc = parse_axis(spec, iperf, (enum tb_mx_axis)a, &out->axes[a], err)) != 0)
			return rc;
	if ((rc = tb_mx_check_tool(out, err)) != 0 || (rc = tb_mx_check_family(out, inv, err)) != 0)
		return rc;
	if ((rc = check_caps(spec, out, err)) != 0 || (rc = check_sample(spec, err)) != 0 ||
	    (rc = check_latency(spec, err)) != 0 || (rc = check_idle(spec, err)) != 0 ||
	    (rc = tb_mx_profile_check(spec, err)) != 0 || (rc = tb_mx_parse_tunables(spec, out, err)) != 0 ||
	    (rc = tb_mx_parse_linkprof(spec, inv, out, err)) != 0)
		return rc;
	if ((out->stored = stored_spec(spec, out)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}
