/*
 * matrix_tunables.c - the "tunables" of a matrix spec (matrix.h): system-wide
 * sysctls named per OS family and the MTU of both ends' interfaces on the
 * pair's link, each swept as a dimension.  Their cross product is the
 * spec's tunable sets; a set is the outermost factor of a combination's cells
 * (matrix.c), so the runs of one set go together in sequential order.  Pure:
 * tunables.c applies, verifies and restores them on the hosts.
 *
 *  "tunables": [
 *    {"linux": "net.ipv4.tcp_congestion_control", "freebsd": "net.inet.tcp.cc.algorithm",
 *     "values": ["cubic", {"linux": "reno", "freebsd": "newreno"}]},
 *    {"mtu": true, "values": [1500, 9000]},
 *    {"offload": "tso", "values": ["on", "off"]}]
 *
 * A sysctl names at least one of "linux" and "freebsd" (a host of the other
 * family fails its cell, naming the field).  A value is a string or an
 * integer for both families, or an object giving it per family (each family
 * the tunable names).  MTU values are whole numbers 576..65535.  An offload
 * ("tso" or "lro") is the NIC's on both ends' interfaces on the pair's link
 * (ethtool -K IF tso off; ifconfig IF -tso), its values "on" and "off".
 * Interrupt placement ({"irq": true, "values": ["0", "2-3"]}) is the CPUs
 * both ends' link interfaces' interrupts may run on (cpulist.h): every IRQ
 * of the interface gets the value's list.
 */
#include "matrix_internal.h"

#include "cpulist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fam_names[2] = {"linux", "freebsd"};
static const char *const tun_keys[] = {"linux", "freebsd", "mtu", "offload", "irq", "values", NULL};
static const char *const offloads[] = {"tso", "lro", NULL};

/* A sysctl name: [A-Za-z0-9_] then [A-Za-z0-9_.-], with a dot, 3..63 bytes. */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 3 || n >= TB_MX_TUNABLE_TEXT || strchr(s, '.') == NULL || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* A sysctl value: 1..63 bytes of [A-Za-z0-9_.,:/+ -] (one argv word "name=value"). */
static int value_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n >= TB_MX_TUNABLE_TEXT)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr("_.,:/+ -", s[i]) != NULL))
			return 0;
	return 1;
}

/* One scalar value of tunable t into out (TB_MX_TUNABLE_TEXT bytes). */
static int scalar(const struct tb_mx_tunable *t, const json_t *v, const char *field, char *out, struct tb_error *err)
{
	char got[64];

	tb_mx_describe(v, got, sizeof(got));
	if (t->offload[0] != '\0') {
		if (!json_is_string(v) ||
		    (strcmp(json_string_value(v), "on") != 0 && strcmp(json_string_value(v), "off") != 0))
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be \"on\" or \"off\" (an offload), got %s",
				       field, got);
		snprintf(out, TB_MX_TUNABLE_TEXT, "%s", json_string_value(v));
		return 0;
	}
	if (t->irq) {
		struct tb_cpuset cpus;

		if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < TB_CPUS_MAX)
			snprintf(out, TB_MX_TUNABLE_TEXT, "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v) && json_string_length(v) < TB_MX_TUNABLE_TEXT &&
			 strspn(json_string_value(v), "0123456789,-") == json_string_length(v) &&
			 tb_cpulist_parse(json_string_value(v), &cpus) == 0)
			snprintf(out, TB_MX_TUNABLE_TEXT, "%s", json_string_value(v));
		else
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be a CPU list such as \"2\", \"0-3\" or \"0,2\" (CPUs 0..%d), got %s",
				       field, TB_CPUS_MAX - 1, got);
		return 0;
	}
	if (t->mtu) {
		if (!json_is_integer(v) || json_integer_value(v) < 576 || json_integer_value(v) > 65535)
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be an MTU 576..65535, got %s", field, got);
		snprintf(out, TB_MX_TUNABLE_TEXT, "%lld", (long long)json_integer_value(v));
		return 0;
	}
	if (json_is_integer(v))
		snprintf(out, TB_MX_TUNABLE_TEXT, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v) && json_string_length(v) < TB_MX_TUNABLE_TEXT && value_ok(json_string_value(v)))
		snprintf(out, TB_MX_TUNABLE_TEXT, "%s", json_string_value(v));
	else
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s must be a whole number or a string of 1..%d letters, digits, spaces and _.,:/+-, "
			       "got %s",
			       field, TB_MX_TUNABLE_TEXT - 1, got);
	return 0;
}

/* Value k of tunable t: a scalar for both families or {"linux": v, "freebsd": v}. */
static int parse_value(struct tb_mx_tunable *t, const json_t *v, const char *vfield, int k, struct tb_error *err)
{
	char field[TB_ERROR_FIELD_MAX];
	int rc;

	if (!json_is_object(v)) {
		if ((rc = scalar(t, v, vfield, t->value[k][0], err)) != 0)
			return rc;
		memcpy(t->value[k][1], t->value[k][0], TB_MX_TUNABLE_TEXT);
		return 0;
	}
	{
		const char *key;
		const json_t *x;

		json_object_foreach((json_t *)v, key, x)
		{
			if (strcmp(key, "linux") != 0 && strcmp(key, "freebsd") != 0) {
				char k2[48];

				tb_mx_sanitize(k2, sizeof(k2), key, 40);
				snprintf(field, sizeof(field), "%s.%s", vfield, k2);
				return tb_fail(err, TB_ERR_UNKNOWN_FIELD, field,
					       "%s: unknown field; a value per OS has linux and freebsd", field);
			}
		}
	}
	for (int f = 0; f < 2; f++) {
		const json_t *x = json_object_get(v, fam_names[f]);

		snprintf(field, sizeof(field), "%s.%s", vfield, fam_names[f]);
		t->value[k][f][0] = '\0';
		if (x == NULL || json_is_null(x)) {
			if (t->mtu || t->irq || t->name[f][0] != '\0')
				return tb_fail(err, TB_ERR_INVALID, field, "%s is required: the tunable is set on %s",
					       field, fam_names[f]);
			continue;
		}
		if ((rc = scalar(t, x, field, t->value[k][f], err)) != 0)
			return rc;
	}
	return 0;
}

static int parse_values(const json_t *obj, const char *tfield, struct tb_mx_tunable *t, struct tb_error *err)
{
	const json_t *v = json_object_get(obj, "values");
	char field[TB_ERROR_FIELD_MAX], got[64];
	int rc;

	snprintf(field, sizeof(field), "%s.values", tfield);
	if (v != NULL)
		tb_mx_describe(v, got, sizeof(got));
	if (v == NULL || !json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > TB_MX_TUNABLE_VALUES_MAX)
		return tb_fail(err, TB_ERR_INVALID, field, "%s is required: a list of 1..%d values, got %s", field,
			       TB_MX_TUNABLE_VALUES_MAX, v == NULL ? "nothing" : got);
	t->n = (int)json_array_size(v);
	for (int k = 0; k < t->n; k++) {
		char vfield[TB_ERROR_FIELD_MAX];

		snprintf(vfield, sizeof(vfield), "%s[%d]", field, k);
		if ((rc = parse_value(t, json_array_get(v, (size_t)k), vfield, k, err)) != 0)
			return rc;
		for (int i = 0; i < k; i++)
			if (strcmp(t->value[i][0], t->value[k][0]) == 0 && strcmp(t->value[i][1], t->value[k][1]) == 0)
				return tb_fail(err, TB_ERR_INVALID, vfield,
					       "%s repeats %s[%d]; a sweep lists each value once", vfield, field, i);
	}
	return 0;
}

/* "offload": "tso" | "lro" (alone: no sysctl names, no mtu) into t. */
static int parse_offload(const json_t *obj, const char *tfield, struct tb_mx_tunable *t, struct tb_error *err)
{
	const json_t *v = json_object_get(obj, "offload");
	char field[TB_ERROR_FIELD_MAX], got[64];

	if (v == NULL)
		return 0;
	snprintf(field, sizeof(field), "%s.offload", tfield);
	tb_mx_describe(v, got, sizeof(got));
	for (int k = 0; json_is_string(v) && offloads[k] != NULL; k++)
		if (strcmp(json_string_value(v), offloads[k]) == 0)
			snprintf(t->offload, sizeof(t->offload), "%s", offloads[k]);
	if (t->offload[0] == '\0')
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s must be \"tso\" or \"lro\" (the NIC offload of both ends' interfaces), got %s",
			       field, got);
	if (t->mtu || json_object_get(obj, "linux") != NULL || json_object_get(obj, "freebsd") != NULL)
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s stands alone: an offload names no sysctl and no mtu (ethtool -K / ifconfig "
			       "set it on the link's interface)",
			       field);
	snprintf(t->name[0], TB_MX_TUNABLE_TEXT, "%s", t->offload);
	snprintf(t->name[1], TB_MX_TUNABLE_TEXT, "%s", t->offload);
	return 0;
}

static int parse_one(const json_t *obj, int i, struct tb_mx_spec *sp, struct tb_error *err)
{
	struct tb_mx_tunable *t = &sp->tunables[i];
	const json_t *mtu = json_object_get(obj, "mtu"), *irq = json_object_get(obj, "irq");
	char tfield[32], field[TB_ERROR_FIELD_MAX], got[64];
	const char *key;
	const json_t *x;
	int rc;

	snprintf(tfield, sizeof(tfield), "tunables[%d]", i);
	tb_mx_describe(obj, got, sizeof(got));
	if (!json_is_object(obj))
		return tb_fail(err, TB_ERR_INVALID, tfield,
			       "%s must be an object {\"linux\": sysctl, \"freebsd\": sysctl, \"values\": [...]}, "
			       "{\"mtu\": true, \"values\": [...]}, {\"offload\": \"tso\", \"values\": [...]} or "
			       "{\"irq\": true, \"values\": [...]}, got %s",
			       tfield, got);
	json_object_foreach((json_t *)obj, key, x)
	{
		int known = 0;

		for (int k = 0; tun_keys[k] != NULL && !known; k++)
			known = strcmp(key, tun_keys[k]) == 0;
		if (!known) {
			char k2[48];

			tb_mx_sanitize(k2, sizeof(k2), key, 40);
			snprintf(field, sizeof(field), "%s.%s", tfield, k2);
			return tb_fail(err, TB_ERR_UNKNOWN_FIELD, field,
				       "%s: unknown field; allowed here: linux, freebsd, mtu, offload, irq, values",
				       field);
		}
	}
	if (mtu != NULL && !json_is_true(mtu)) {
		snprintf(field, sizeof(field), "%s.mtu", tfield);
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be true (or left out for a sysctl)", field);
	}
	t->mtu = mtu != NULL;
	if (irq != NULL) {
		snprintf(field, sizeof(field), "%s.irq", tfield);
		if (!json_is_true(irq))
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be true (or left out)", field);
		if (t->mtu || json_object_get(obj, "offload") != NULL || json_object_get(obj, "linux") != NULL ||
		    json_object_get(obj, "freebsd") != NULL)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s stands alone: interrupt placement names no sysctl, mtu or offload (it sets "
				       "the CPUs of both ends' link interfaces' interrupts)",
				       field);
	}
	t->irq = irq != NULL;
	t->offload[0] = '\0';
	if ((rc = parse_offload(obj, tfield, t, err)) != 0)
		return rc;
	for (int f = 0; f < 2 && t->offload[0] == '\0' && !t->irq; f++) {
		const json_t *n = json_object_get(obj, fam_names[f]);

		snprintf(field, sizeof(field), "%s.%s", tfield, fam_names[f]);
		t->name[f][0] = '\0';
		if (n == NULL || json_is_null(n))
			continue;
		tb_mx_describe(n, got, sizeof(got));
		if (t->mtu)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s: an MTU tunable names no sysctl (it sets the link's interface on both ends)",
				       field);
		if (!json_is_string(n) || !name_ok(json_string_value(n)))
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be a %s sysctl name such as \"%s\" (letters, digits, _ . -), got %s",
				       field, fam_names[f], f == 0 ? "net.core.rmem_max" : "kern.ipc.maxsockbuf", got);
		snprintf(t->name[f], TB_MX_TUNABLE_TEXT, "%s", json_string_value(n));
	}
	if (t->irq)
		memset(t->name, 0, sizeof(t->name));
	if (!t->mtu && !t->irq && t->name[0][0] == '\0' && t->name[1][0] == '\0')
		return tb_fail(err, TB_ERR_INVALID, tfield,
			       "%s names no sysctl: give \"linux\", \"freebsd\" or both (or \"mtu\": true)", tfield);
	for (int k = 0; k < i; k++) {
		const struct tb_mx_tunable *o = &sp->tunables[k];
		int f = t->name[0][0] != '\0' ? 0 : 1;

		if ((t->mtu && o->mtu) || (t->irq && o->irq) ||
		    (!t->mtu && !t->irq && !o->irq && strcmp(o->name[f], t->name[f]) == 0))
			return tb_fail(err, TB_ERR_INVALID, tfield, "%s sets what tunables[%d] sets already", tfield,
				       k);
	}
	return parse_values(obj, tfield, t, err);
}

int tb_mx_parse_tunables(const json_t *spec, struct tb_mx_spec *sp, struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "tunables");
	long long sets = 1;
	char got[64];
	int rc;

	sp->ntunables = 0;
	sp->ntsets = 1;
	if (v == NULL || json_is_null(v))
		return 0;
	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > TB_MX_TUNABLES_MAX)
		return tb_fail(err, TB_ERR_INVALID, "tunables", "tunables must be a list of 1..%d tunables, got %s",
			       TB_MX_TUNABLES_MAX, got);
	if (sp->by_pair)
		return tb_fail(err, TB_ERR_INVALID, "tunables",
			       "tunables change whole hosts, and concurrency \"pairs\" runs two cells on one host at "
			       "once: use concurrency \"disjoint\" or \"none\"");
	for (int i = 0; i < (int)json_array_size(v); i++) {
		if ((rc = parse_one(json_array_get(v, (size_t)i), i, sp, err)) != 0)
			return rc;
		sp->ntunables = i + 1;
		sets *= sp->tunables[i].n;
		if (sets > TB_MX_TUNABLE_SETS_MAX)
			return tb_fail(
				err, TB_ERR_INVALID, "tunables",
				"tunables make more than %d sets (the product of their values, with tunables[%d]): "
				"sweep fewer values at once",
				TB_MX_TUNABLE_SETS_MAX, i);
	}
	sp->ntsets = (int)sets;
	return 0;
}

json_t *tb_mx_tunables_stored(const struct tb_mx_spec *sp)
{
	json_t *a = json_array();

	for (int i = 0; a != NULL && i < sp->ntunables; i++) {
		const struct tb_mx_tunable *t = &sp->tunables[i];
		json_t *o = json_object(), *vals = json_array();
		int bad = o == NULL || vals == NULL;

		for (int k = 0; !bad && k < t->n; k++) {
			json_t *x;

			if (t->mtu)
				x = json_integer(strtoll(t->value[k][0], NULL, 10));
			else if (t->offload[0] != '\0' || t->irq)
				x = json_string(t->value[k][0]);
			else
				x = json_pack("{s:s?, s:s?}", "linux", t->name[0][0] ? t->value[k][0] : NULL, "freebsd",
					      t->name[1][0] ? t->value[k][1] : NULL);
			bad |= json_array_append_new(vals, x) != 0;
		}
		if (t->mtu)
			bad |= json_object_set_new(o, "mtu", json_true()) != 0;
		if (t->irq)
			bad |= json_object_set_new(o, "irq", json_true()) != 0;
		if (t->offload[0] != '\0')
			bad |= json_object_set_new(o, "offload", json_string(t->offload)) != 0;
		for (int f = 0; f < 2 && !bad && t->offload[0] == '\0'; f++)
			if (t->name[f][0] != '\0')
				bad |= json_object_set_new(o, fam_names[f], json_string(t->name[f])) != 0;
		bad |= json_object_set_new(o, "values", vals) != 0;
		vals = NULL;
		if (bad || json_array_append_new(a, o) != 0) {
			json_decref(vals);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The value index of each tunable in set `set` (the first tunable turns slowest). */
static void set_indexes(const struct tb_mx_spec *sp, int set, int idx[TB_MX_TUNABLES_MAX])
{
	for (int t = sp->ntunables - 1; t >= 0; t--) {
		idx[t] = set % sp->tunables[t].n;
		set /= sp->tunables[t].n;
	}
}

static json_t *set_values(const struct tb_mx_spec *sp, int set)
{
	int idx[TB_MX_TUNABLES_MAX];
	json_t *a = json_array();

	set_indexes(sp, set, idx);
	for (int i = 0; a != NULL && i < sp->ntunables; i++) {
		const struct tb_mx_tunable *t = &sp->tunables[i];
		json_t *o = json_pack("{s:i, s:s, s:s?, s:s?, s:{s:s, s:s}}", "tunable", i, "kind",
				      t->mtu                  ? "mtu"
				      : t->irq                ? "irq"
				      : t->offload[0] != '\0' ? "offload"
							      : "sysctl",
				      "linux", t->name[0][0] ? t->name[0] : NULL, "freebsd",
				      t->name[1][0] ? t->name[1] : NULL, "value", "linux", t->value[idx[i]][0],
				      "freebsd", t->value[idx[i]][1]);

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *tb_matrix_tunables_set_json(const struct tb_matrix_plan *plan, int set)
{
	if (plan->sp == NULL || plan->sp->ntunables == 0 || set < 0 || set >= plan->sp->ntsets)
		return NULL;
	return json_pack("{s:i, s:o}", "set", set, "values", set_values(plan->sp, set));
}

json_t *tb_mx_tunables_plan_json(const struct tb_matrix_plan *plan)
{
	const struct tb_mx_spec *sp = plan->sp;
	int per_set = plan->base_cells / sp->ntsets;
	int first[TB_MX_TUNABLE_SETS_MAX], last[TB_MX_TUNABLE_SETS_MAX];
	json_t *sets = json_array(), *hosts = json_array();

	for (int s = 0; s < sp->ntsets; s++)
		first[s] = last[s] = -1;
	for (int i = 0; i < plan->nruns; i++) {
		int s = plan->slots[i].cell % plan->base_cells / per_set;

		if (first[s] < 0)
			first[s] = i;
		last[s] = i;
	}

	for (int p = 0; hosts != NULL && p < sp->npairs; p++) {
		const char *two[2] = {sp->pairs[p].client, sp->pairs[p].server};

		for (int k = 0; k < 2; k++) {
			size_t i;
			json_t *h;
			int seen = 0;

			json_array_foreach(hosts, i, h) seen |= strcmp(json_string_value(h), two[k]) == 0;
			if (!seen)
				json_array_append_new(hosts, json_string(two[k]));
		}
	}
	for (int s = 0; sets != NULL && s < sp->ntsets; s++) {
		if (json_array_append_new(sets, json_pack("{s:i, s:o, s:i, s:i}", "set", s, "values", set_values(sp, s),
							  "first_seq", first[s], "last_seq", last[s])) != 0) {
			json_decref(sets);
			sets = NULL;
		}
	}
	return json_pack(
		"{s:o, s:o, s:s, s:s}", "hosts", hosts, "sets", sets, "change",
		"before the first run of a set on a host (both ends), each tunable of the set: the value found is "
		"recorded in the journal first, then set (sysctl -w / sysctl name=value; ip link set dev IF mtu "
		"N / ifconfig IF mtu N; ethtool -K IF tso off / ifconfig IF -tso; each IRQ of the interface: "
		"echo LIST > /proc/irq/N/smp_affinity_list / cpuset -l LIST -x N), then read back (a mismatch "
		"fails the run as tunable_error)",
		"restore",
		"the recorded original values are set again when a host's next run wants another set or none, "
		"before a boot, at the end of the matrix (also canceled or failed), and at start-up after a "
		"crash (from the journal, once the host answers)");
}
