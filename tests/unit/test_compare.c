/*
 * test_compare.c - tb_compare_cells (server/compare.c), which matches a
 * matrix's cells to a baseline's by a hash of the cell key, against the
 * linear scan it replaced (kept here as the reference: key = the JSON dump
 * of the key fields with sorted keys; each cell takes the first unused
 * baseline cell with an equal key).  A table of cases (duplicate keys,
 * nulls, absent fields, key order in params, new and missing cells), then
 * random tables with many duplicates, and random tables that share a
 * prefix (the same cells at the same places, then not).  Adding a case is
 * adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"

/* ---- the reference: the O(n^2) matching of compare.c before the hash ---- */

static char *ref_key(const json_t *cell)
{
	json_t *k = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "client", json_object_get(cell, "client"),
			      "client_os", json_object_get(cell, "client_os"), "server",
			      json_object_get(cell, "server"), "server_os", json_object_get(cell, "server_os"),
			      "protocol", json_object_get(cell, "protocol"), "direction",
			      json_object_get(cell, "direction"), "params", json_object_get(cell, "params"));
	char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(k);
	return s;
}

/* "cell:baseline_cell" per row, in row order (null as -), as the scan gives them. */
static json_t *ref_pairs(const json_t *cells, const json_t *base)
{
	size_t na = json_array_size(cells), nb = json_array_size(base);
	char **ka = calloc(na + 1, sizeof(*ka)), **kb = calloc(nb + 1, sizeof(*kb));
	int *used = calloc(nb + 1, sizeof(*used));
	json_t *out = json_array();

	for (size_t j = 0; j < nb; j++)
		kb[j] = json_is_null(json_array_get(base, j)) ? NULL : ref_key(json_array_get(base, j));
	for (size_t i = 0; i < na; i++) {
		const json_t *c = json_array_get(cells, i);
		long match = -1;
		char buf[64];

		if (json_is_null(c))
			continue;
		ka[i] = ref_key(c);
		for (size_t j = 0; j < nb && match < 0; j++)
			if (kb[j] != NULL && !used[j] && strcmp(ka[i], kb[j]) == 0) {
				used[j] = 1;
				match = (long)j;
			}
		if (match < 0)
			snprintf(buf, sizeof(buf), "%lld:-", json_integer_value(json_object_get(c, "cell")));
		else
			snprintf(buf, sizeof(buf), "%lld:%lld", json_integer_value(json_object_get(c, "cell")),
				 json_integer_value(json_object_get(json_array_get(base, (size_t)match), "cell")));
		json_array_append_new(out, json_string(buf));
	}
	for (size_t j = 0; j < nb; j++)
		if (kb[j] != NULL && !used[j]) {
			char buf[64];

			snprintf(buf, sizeof(buf), "-:%lld",
				 json_integer_value(json_object_get(json_array_get(base, j), "cell")));
			json_array_append_new(out, json_string(buf));
		}
	for (size_t i = 0; i < na; i++)
		free(ka[i]);
	for (size_t j = 0; j < nb; j++)
		free(kb[j]);
	free(ka);
	free(kb);
	free(used);
	return out;
}

/* The same pairs from tb_compare_cells' rows. */
static json_t *hash_pairs(const json_t *cells, const json_t *base, json_t **result)
{
	json_t *o = json_object(), *out = json_array(), *r;
	size_t i;

	assert_int_equal(tb_compare_cells(cells, base, "receiver_bps", 5.0, o), 0);
	json_array_foreach(json_object_get(o, "cells"), i, r)
	{
		const json_t *c = json_object_get(r, "cell"), *b = json_object_get(r, "baseline_cell");
		char x[32] = "-", y[32] = "-", buf[64];

		if (json_is_integer(c))
			snprintf(x, sizeof(x), "%lld", json_integer_value(c));
		if (json_is_integer(b))
			snprintf(y, sizeof(y), "%lld", json_integer_value(b));
		snprintf(buf, sizeof(buf), "%s:%s", x, y);
		json_array_append_new(out, json_string(buf));
	}
	*result = o;
	return out;
}

/* JSON with ' for ". */
static json_t *J(const char *text)
{
	char *s = strdup(text);
	json_error_t e;
	json_t *j;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = json_loads(s, 0, &e);
	if (j == NULL)
		fail_msg("bad JSON in the test: %s: %s", text, e.text);
	free(s);
	return j;
}

#define L "'client':'left','server':'right','protocol':'tcp'"
#define R(m) "'receiver_bps':{'median':" #m "}"

struct ccase {
	const char *name;
	const char *cells, *base;
	const char *pairs; /* the expected "cell:baseline" list */
	int compared, pass;
};

static const struct ccase cases[] = {
	{"one to one", "[{'cell':0," L ",'direction':'forward'," R(100) "}]",
	 "[{'cell':7," L ",'direction':'forward'," R(100) "}]", "['0:7']", 1, 1},
	{"a drop", "[{'cell':0," L ",'direction':'forward'," R(90) "}]",
	 "[{'cell':0," L ",'direction':'forward'," R(100) "}]", "['0:0']", 1, 0},
	{"new and missing", "[{'cell':0," L ",'direction':'forward'}]", "[{'cell':1," L ",'direction':'reverse'}]",
	 "['0:-','-:1']", 0, 0},
	{"duplicate keys pair up in order", "[{'cell':0," L "},{'cell':1," L "},{'cell':2," L "}]",
	 "[{'cell':10," L "},{'cell':11," L "}]", "['0:10','1:11','2:-']", 0, 0},
	{"more duplicates in the baseline", "[{'cell':0," L "}]",
	 "[{'cell':10," L "},{'cell':11," L "},{'cell':12," L "}]", "['0:10','-:11','-:12']", 0, 0},
	{"duplicates interleaved with other keys",
	 "[{'cell':0," L ",'direction':'a'},{'cell':1," L ",'direction':'b'},{'cell':2," L ",'direction':'a'}]",
	 "[{'cell':5," L ",'direction':'b'},{'cell':6," L ",'direction':'a'},{'cell':7," L ",'direction':'a'},"
	 "{'cell':8," L ",'direction':'b'}]",
	 "['0:6','1:5','2:7','-:8']", 0, 0},
	{"params key order does not count", "[{'cell':0," L ",'params':{'parallel':2,'duration_s':10}," R(5) "}]",
	 "[{'cell':3," L ",'params':{'duration_s':10,'parallel':2}," R(5) "}]", "['0:3']", 1, 1},
	{"params values count", "[{'cell':0," L ",'params':{'parallel':2}}]",
	 "[{'cell':3," L ",'params':{'parallel':4}}]", "['0:-','-:3']", 0, 0},
	{"an absent field is null", "[{'cell':0,'client':'left','server_os':null}]", "[{'cell':1,'client':'left'}]",
	 "['0:1']", 0, 0},
	{"null and a value differ", "[{'cell':0,'client':'left','client_os':null}]",
	 "[{'cell':1,'client':'left','client_os':'ubuntu'}]", "['0:-','-:1']", 0, 0},
	{"an integer is not a string", "[{'cell':0,'client':'left','params':{'tos':1}}]",
	 "[{'cell':1,'client':'left','params':{'tos':'1'}}]", "['0:-','-:1']", 0, 0},
	{"fields outside the key do not count", "[{'cell':0," L ",'link':'lan10','n':3}]",
	 "[{'cell':1," L ",'link':'lan20','n':1}]", "['0:1']", 0, 0},
	{"null cells are skipped", "[null,{'cell':1," L "},null]", "[null,{'cell':4," L "}]", "['1:4']", 0, 0},
	{"both empty", "[]", "[]", "[]", 0, 0},
	{"empty baseline", "[{'cell':0," L "},{'cell':1," L "}]", "[]", "['0:-','1:-']", 0, 0},
	{"no_baseline is not compared", "[{'cell':0," L "," R(5) "}]", "[{'cell':0," L "}]", "['0:0']", 0, 0},
	{"failed counts and fails", "[{'cell':0," L "}]", "[{'cell':0," L "," R(5) "}]", "['0:0']", 1, 0},
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		json_t *a = J(cases[c].cells), *b = J(cases[c].base), *want = J(cases[c].pairs), *o = NULL;
		json_t *got = hash_pairs(a, b, &o), *ref = ref_pairs(a, b);

		if (!json_equal(got, want) || !json_equal(ref, want)) {
			char *g = json_dumps(got, JSON_COMPACT), *r = json_dumps(ref, JSON_COMPACT);

			fail_msg("%s: hash gives %s, the scan %s, want %s", cases[c].name, g, r, cases[c].pairs);
		}
		assert_int_equal(json_integer_value(json_object_get(o, "compared")), cases[c].compared);
		assert_int_equal(json_is_true(json_object_get(o, "pass")), cases[c].pass);
		json_decref(a);
		json_decref(b);
		json_decref(want);
		json_decref(o);
		json_decref(got);
		json_decref(ref);
	}
}

/* A random table of n cells over few distinct keys (so many duplicates). */
static json_t *random_cells(size_t n, unsigned int *seed, int keys)
{
	static const char *const os[] = {"ubuntu", "freebsd"};
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		int k = rand_r(seed) % keys;

		if (rand_r(seed) % 50 == 0) {
			json_array_append_new(a, json_null());
			continue;
		}
		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:{s:i, s:i}, s:{s:f}}", "cell",
						   (json_int_t)i, "client", k % 3 ? "left" : "right", "client_os",
						   os[k % 2], "server", "router", "protocol", k % 5 ? "tcp" : "udp",
						   "direction", k % 7 ? "forward" : "reverse", "params", "parallel",
						   k / 4, "duration_s", 10, "receiver_bps", "median",
						   1e9 + (double)(rand_r(seed) % 1000) * 1e6));
	}
	return a;
}

static void test_random_against_scan(void **state)
{
	unsigned int seed = 12345;

	(void)state;
	for (int round = 0; round < 40; round++) {
		size_t n = (size_t)(rand_r(&seed) % 300), m = (size_t)(rand_r(&seed) % 300);
		int keys = 1 + rand_r(&seed) % 60;
		json_t *a = random_cells(n, &seed, keys), *b = random_cells(m, &seed, keys), *o = NULL;
		json_t *got = hash_pairs(a, b, &o), *ref = ref_pairs(a, b);

		if (!json_equal(got, ref))
			fail_msg("round %d (%zu x %zu cells, %d keys): the hash and the scan disagree", round, n, m,
				 keys);
		json_decref(a);
		json_decref(b);
		json_decref(o);
		json_decref(got);
		json_decref(ref);
	}
}

/* The same cells at the same places for a while (the matching's fast path),
 * then not: a random prefix of a copied to b, then random cells, with
 * duplicates and nulls on both sides. */
static void test_shared_prefix_against_scan(void **state)
{
	unsigned int seed = 777;

	(void)state;
	for (int round = 0; round < 60; round++) {
		size_t n = (size_t)(rand_r(&seed) % 200), prefix = n > 0 ? (size_t)rand_r(&seed) % (n + 1) : 0;
		int keys = 1 + rand_r(&seed) % 40;
		json_t *a = random_cells(n, &seed, keys), *b = json_array(), *rest, *o = NULL, *got, *ref;

		for (size_t i = 0; i < prefix; i++) {
			json_t *c = json_deep_copy(json_array_get(a, i));

			if (json_is_object(c))
				json_object_set_new(c, "cell", json_integer(1000 + (json_int_t)i));
			json_array_append_new(b, c);
		}
		rest = random_cells((size_t)(rand_r(&seed) % 100), &seed, keys);
		json_array_extend(b, rest);
		got = hash_pairs(a, b, &o);
		ref = ref_pairs(a, b);
		if (!json_equal(got, ref))
			fail_msg("round %d (%zu cells, prefix %zu, %d keys): the hash and the scan disagree", round, n,
				 prefix, keys);
		json_decref(rest);
		json_decref(a);
		json_decref(b);
		json_decref(o);
		json_decref(got);
		json_decref(ref);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_random_against_scan),
		cmocka_unit_test(test_shared_prefix_against_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
