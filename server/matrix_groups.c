/*
 * matrix_groups.c - groups of machines in a matrix spec, as psconfig defines
 * them, expanded to pairs before the spec is read:
 *
 *	"groups": [{"type": "mesh", "members": ["a", "b", "c"]},
 *	           {"type": "disjoint", "a": ["left"], "b": ["right", "router"]}]
 *
 * mesh: every ordered pair of two different members (a->b and b->a);
 * disjoint: every a member with every b member, both ways.  The pairs come
 * after the spec's own "pairs" (which may then be left out), in that order,
 * a pair already there not repeated.  The stored spec lists the pairs.
 */
#include <stdio.h>
#include <string.h>

#include "matrix_internal.h"

#define GROUPS_MAX 16
#define MEMBERS_MAX 16

/* tb_mx_describe, "nothing" for a missing value. */
static void describe(const json_t *v, char *buf, size_t len)
{
	if (v == NULL)
		snprintf(buf, len, "nothing");
	else
		tb_mx_describe(v, buf, len);
}

static const char *const group_keys_mesh[] = {"type", "members", NULL};
static const char *const group_keys_disjoint[] = {"type", "a", "b", NULL};

/* A list of 1..MEMBERS_MAX distinct machine names of role host or router (or a relay with a link). */
static int members(const json_t *v, const char *field, const struct tb_inventory *inv, struct tb_error *err)
{
	char got[64], f[TB_ERROR_FIELD_MAX];
	size_t i, k;
	json_t *m;

	describe(v, got, sizeof(got));
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > MEMBERS_MAX)
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be a list of 1..%d machine names, got %s", field,
			       MEMBERS_MAX, got);
	json_array_foreach(v, i, m)
	{
		const struct tb_machine *mc = json_is_string(m) ? tb_inventory_find(inv, json_string_value(m)) : NULL;

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		describe(m, got, sizeof(got));
		if (mc == NULL)
			return tb_fail(err, TB_ERR_INVALID, f, "%s: no machine %s in the inventory", f, got);
		if (mc->role == TB_ROLE_RELAY && mc->nlinks == 0)
			return tb_fail(err, TB_ERR_INVALID, f, "%s: %s has role relay and no links: it runs no tests",
				       f, mc->name);
		for (k = 0; k < i; k++)
			if (json_equal(json_array_get(v, k), m))
				return tb_fail(err, TB_ERR_INVALID, f, "%s: %s is listed twice", f, mc->name);
	}
	return 0;
}

static int has_pair(const json_t *pairs, const char *c, const char *s)
{
	size_t i;
	json_t *p;

	json_array_foreach(pairs, i, p)
	{
		const char *pc = json_string_value(json_object_get(p, "client"));
		const char *ps = json_string_value(json_object_get(p, "server"));

		if (pc != NULL && ps != NULL && strcmp(pc, c) == 0 && strcmp(ps, s) == 0)
			return 1;
	}
	return 0;
}

static int add_pair(json_t *pairs, const json_t *c, const json_t *s)
{
	if (json_equal(c, s) || has_pair(pairs, json_string_value(c), json_string_value(s)))
		return 0;
	return json_array_append_new(pairs, json_pack("{s:O, s:O}", "client", c, "server", s));
}

/* Both ways between every member of a and every member of b. */
static int cross(json_t *pairs, const json_t *a, const json_t *b)
{
	size_t i, k;
	json_t *x, *y;
	int rc = 0;

	json_array_foreach(a, i, x) json_array_foreach(b, k, y) rc |= add_pair(pairs, x, y) | add_pair(pairs, y, x);
	return rc;
}

static int one_group(const json_t *g, size_t gi, const struct tb_inventory *inv, json_t *pairs, struct tb_error *err)
{
	char field[TB_ERROR_FIELD_MAX], f2[TB_ERROR_FIELD_MAX], got[64];
	const json_t *type = json_object_get(g, "type");
	const char *const *keys;
	const char *k;
	json_t *v;
	int mesh, rc;

	snprintf(field, sizeof(field), "groups[%zu]", gi);
	describe(g, got, sizeof(got));
	if (!json_is_object(g))
		return tb_fail(
			err, TB_ERR_INVALID, field,
			"%s must be {\"type\": \"mesh\", \"members\": [...]} or {\"type\": \"disjoint\", \"a\": [...], "
			"\"b\": [...]}, got %s",
			field, got);
	snprintf(f2, sizeof(f2), "%s.type", field);
	describe(type, got, sizeof(got));
	if (!json_is_string(type) ||
	    (strcmp(json_string_value(type), "mesh") != 0 && strcmp(json_string_value(type), "disjoint") != 0))
		return tb_fail(err, TB_ERR_INVALID, f2, "%s must be one of mesh | disjoint, got %s", f2, got);
	mesh = strcmp(json_string_value(type), "mesh") == 0;
	keys = mesh ? group_keys_mesh : group_keys_disjoint;
	json_object_foreach((json_t *)g, k, v)
	{
		int known = 0;

		for (int i = 0; keys[i] != NULL; i++)
			known |= strcmp(keys[i], k) == 0;
		if (!known) {
			snprintf(f2, sizeof(f2), "%s.%.40s", field, k);
			return tb_fail(err, TB_ERR_UNKNOWN_FIELD, f2, "%s: unknown field; a %s group has %s", f2,
				       mesh ? "mesh" : "disjoint", mesh ? "type and members" : "type, a and b");
		}
	}
	for (int i = 1; keys[i] != NULL; i++) {
		snprintf(f2, sizeof(f2), "%s.%s", field, keys[i]);
		if ((rc = members(json_object_get(g, keys[i]), f2, inv, err)) != 0)
			return rc;
	}
	if (mesh) {
		if (json_array_size(json_object_get(g, "members")) < 2)
			return tb_fail(err, TB_ERR_INVALID, field, "%s.members: a mesh needs at least 2 machines",
				       field);
		return cross(pairs, json_object_get(g, "members"), json_object_get(g, "members")) != 0
			       ? tb_fail(err, TB_ERR_NOMEM, "", "out of memory")
			       : 0;
	}
	return cross(pairs, json_object_get(g, "a"), json_object_get(g, "b")) != 0
		       ? tb_fail(err, TB_ERR_NOMEM, "", "out of memory")
		       : 0;
}

int tb_mx_expand_groups(const json_t *spec, const struct tb_inventory *inv, json_t **out, struct tb_error *err)
{
	const json_t *groups = json_is_object(spec) ? json_object_get(spec, "groups") : NULL;
	json_t *copy, *pairs;
	char got[64];
	size_t i;
	int rc;

	*out = NULL;
	if (groups == NULL || json_is_null(groups)) {
		*out = json_incref((json_t *)spec);
		return 0;
	}
	describe(groups, got, sizeof(got));
	if (!json_is_array(groups) || json_array_size(groups) == 0 || json_array_size(groups) > GROUPS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "groups",
			       "groups must be a list of 1..%d groups of machines (mesh or disjoint), got %s",
			       GROUPS_MAX, got);
	if ((copy = json_deep_copy(spec)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	pairs = json_object_get(copy, "pairs");
	if (pairs == NULL || json_is_null(pairs)) {
		pairs = json_array();
		json_object_set_new(copy, "pairs", pairs);
	}
	/* a pairs that is not a list: the spec's reader says so */
	for (i = 0; json_is_array(pairs) && i < json_array_size(groups); i++)
		if ((rc = one_group(json_array_get(groups, i), i, inv, pairs, err)) != 0) {
			json_decref(copy);
			return rc;
		}
	json_object_del(copy, "groups");
	*out = copy;
	return 0;
}
