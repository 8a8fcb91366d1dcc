/* specs.c - the spec library: see specs.h. */
#include "specs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "store_specs.h"
#include "timeutil.h"

int tb_spec_push(struct tb_store *st, const struct tb_inventory *inv, const json_t *spec, const char *author,
		 int64_t *version, struct tb_error *err)
{
	struct tb_matrix_plan *plan = NULL;
	const char *name;
	char *text;
	int rc;

	if (!json_is_object(spec))
		return tb_fail(err, TB_ERR_INVALID, "", "a spec is a JSON object (MatrixSpec)");
	/* the matrix parser's errors, the same 400s as POST /matrices/plan */
	if ((rc = tb_matrix_plan_make_lean(spec, inv, 1, NULL, &plan, err)) != 0)
		return rc;
	tb_matrix_plan_free(plan);
	name = json_string_value(json_object_get(spec, "name"));
	if (name == NULL || strchr(name, '/') != NULL)
		return tb_fail(err, TB_ERR_INVALID, "name", "a library spec's name must not hold '/'");
	if ((text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	rc = tb_store_spec_insert(st, name, text, author, version, err);
	free(text);
	return rc;
}

struct collect {
	json_t *arr;
	int full; /* with the spec itself */
	int bad;
};

static void collect_row(void *cls, const struct tb_spec_row *r)
{
	struct collect *c = cls;
	json_t *o = json_pack("{s:s, s:I, s:s, s:o}", "name", r->name, "version", (json_int_t)r->version, "author",
			      r->author, "created_at", tb_time_json(r->created_at));

	if (o == NULL) {
		c->bad = 1;
		return;
	}
	if (r->nversions > 0)
		c->bad |= json_object_set_new(o, "versions", json_integer((json_int_t)r->nversions)) != 0;
	if (c->full) {
		json_t *spec = json_loads(r->spec, 0, NULL);

		c->bad |= spec == NULL || json_object_set_new(o, "spec", spec) != 0;
	}
	c->bad |= json_array_append_new(c->arr, o) != 0;
}

/* Run a store walk into a fresh array. */
static int walk(struct collect *c, int rc, json_t **out, struct tb_error *err)
{
	if (rc == 0 && c->bad)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (rc != 0) {
		json_decref(c->arr);
		return rc;
	}
	*out = c->arr;
	return 0;
}

int tb_spec_list_json(struct tb_store *st, json_t **out, struct tb_error *err)
{
	struct collect c = {json_array(), 0, 0};

	if (c.arr == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	return walk(&c, tb_store_spec_each_latest(st, collect_row, &c, err), out, err);
}

int tb_spec_get_json(struct tb_store *st, const char *name, int64_t version, json_t **out, struct tb_error *err)
{
	struct collect c = {json_array(), 1, 0};
	json_t *arr;
	int rc;

	if (c.arr == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = walk(&c, tb_store_spec_get(st, name, version, collect_row, &c, err), &arr, err)) != 0)
		return rc;
	*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return 0;
}

int tb_spec_versions_json(struct tb_store *st, const char *name, json_t **out, struct tb_error *err)
{
	struct collect c = {json_array(), 0, 0};
	int rc;

	if (c.arr == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = walk(&c, tb_store_spec_each_version(st, name, collect_row, &c, err), out, err)) != 0)
		return rc;
	if (json_array_size(*out) == 0) {
		json_decref(*out);
		*out = NULL;
		return tb_fail(err, TB_ERR_NOT_FOUND, "name", "no spec named %.64s", name);
	}
	return 0;
}

/* ---- diff ---- */

/* path + "/" + key escaped as a JSON pointer token (~ -> ~0, / -> ~1). */
static char *path_join(const char *path, const char *key)
{
	size_t n = strlen(path) + 2 * strlen(key) + 2, k;
	char *p = malloc(n);

	if (p == NULL)
		return NULL;
	k = (size_t)snprintf(p, n, "%s/", path);
	for (; *key != '\0'; key++) {
		if (*key == '~' || *key == '/') {
			p[k++] = '~';
			p[k++] = *key == '~' ? '0' : '1';
		} else {
			p[k++] = *key;
		}
	}
	p[k] = '\0';
	return p;
}

static int add(json_t *out, const char *path, const json_t *a, const json_t *b)
{
	const char *op = a == NULL ? "added" : b == NULL ? "removed" : "changed";
	json_t *o = json_pack("{s:s, s:s}", "path", path, "op", op);

	if (o == NULL)
		return -1;
	if (a != NULL && json_object_set(o, "a", (json_t *)a) != 0)
		goto fail;
	if (b != NULL && json_object_set(o, "b", (json_t *)b) != 0)
		goto fail;
	return json_array_append_new(out, o);
fail:
	json_decref(o);
	return -1;
}

static int diff_at(json_t *out, const char *path, const json_t *a, const json_t *b);

static int diff_child(json_t *out, const char *path, const char *key, const json_t *a, const json_t *b)
{
	char *p = path_join(path, key);
	int rc;

	if (p == NULL)
		return -1;
	rc = a == NULL || b == NULL ? add(out, p, a, b) : diff_at(out, p, a, b);
	free(p);
	return rc;
}

static int diff_at(json_t *out, const char *path, const json_t *a, const json_t *b)
{
	const char *key;
	json_t *v;

	if (json_is_object(a) && json_is_object(b)) {
		json_object_foreach((json_t *)a, key,
				    v) if (diff_child(out, path, key, v, json_object_get(b, key)) != 0) return -1;
		json_object_foreach((json_t *)b, key, v) if (json_object_get(a, key) == NULL &&
							     diff_child(out, path, key, NULL, v) != 0) return -1;
		return 0;
	}
	if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
		for (size_t i = 0; i < json_array_size(a); i++) {
			char idx[24];

			snprintf(idx, sizeof(idx), "%zu", i);
			if (diff_child(out, path, idx, json_array_get(a, i), json_array_get(b, i)) != 0)
				return -1;
		}
		return 0;
	}
	return json_equal((json_t *)a, (json_t *)b) ? 0 : add(out, path, a, b);
}

json_t *tb_spec_diff(const json_t *a, const json_t *b)
{
	json_t *out = json_array();

	if (out != NULL && diff_at(out, "", a, b) != 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}
