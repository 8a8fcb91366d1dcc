/*
 * test_matrix_page.c - the lean plan (tb_matrix_plan_make_lean: no runs
 * array) and its pages (tb_matrix_plan_page_json), against the full plan of
 * the same spec: every run decoded from a lean plan is the full plan's, the
 * pages put together are the whole plan's runs, each page's timeline is the
 * whole timeline's rounds that hold its runs, "page" says where the next
 * starts; and a plan of TB_MATRIX_MAX_RUNS runs pages with bounded pages.
 * Specs are a list: adding a case is adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "mxfix.h"

static const char *const specs[] = {
	"{'name':'one','pairs':[{'client':'left','server':'right'}]}",
	"{'name':'rounds','pairs':[{'client':'left','server':'right'},{'client':'router','server':'left'},"
	"{'client':'right','server':'router'}],'protocols':['tcp','udp'],'directions':['forward','reverse'],"
	"'repeats':3,'order':'interleaved','duration_s':[5,10],'iperf':{'parallel':[1,4],'omit_s':[0,2]}}",
	"{'name':'shuffled','pairs':[{'client':'left','server':'right'},{'client':'router','server':'left'}],"
	"'repeats':5,'order':'shuffled','seed':7,'protocols':['udp','tcp'],'iperf':{'udp_bitrate':['1M','0'],"
	"'bitrate':['5G'],'congestion':[null,'bbr']}}",
	"{'name':'pairs','pairs':[{'client':'left','server':'right'},{'client':'router','server':'right'},"
	"{'client':'left','server':'right'}],'concurrency':'pairs','repeats':4,'protocols':['tcp','udp']}",
	"{'name':'none','pairs':[{'client':'left','server':'right'},{'client':'router','server':'left'}],"
	"'concurrency':'none','repeats':3,'pause_s':1.5}",
	"{'name':'os','pairs':[{'client':'left','server':'right'},{'client':'router','server':'left'}],"
	"'os':[{'left':'freebsd','right':'ubuntu'},{'left':'ubuntu'},{'right':'freebsd'}],'repeats':2,"
	"'order':'shuffled','seed':3,'protocols':['tcp','udp']}",
};

/* The sim's testbed with left and right dual-boot (for the "os" case). */
static const char INV_DUAL[] =
	"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
	"  left:\n    role: host\n    boot: {loader: grub, default: ubuntu, entries: {freebsd: '4'}}\n"
	"    os: {ubuntu: {address: 198.18.0.11}, freebsd: {address: 198.18.0.11}}\n"
	"    links:\n      lan10: {address: 198.19.10.2/24}\n"
	"  right:\n    role: host\n    boot: {loader: grub, default: ubuntu, entries: {freebsd: '4'}}\n"
	"    os: {ubuntu: {address: 198.18.0.12}, freebsd: {address: 198.18.0.12}}\n"
	"    links:\n      lan20: {address: 198.19.20.2/24}\n" MACHINE(
		"router", "router",
		"198.18.0.13") "    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n";

static json_t *plan_of(const char *text, int lean, struct tb_matrix_plan **plan)
{
	static const struct tb_matrix_host_now hosts[] = {{"left", "ubuntu", 50000}, {"right", "freebsd", 0}};
	static const struct tb_matrix_now now = {2, hosts};
	struct tb_inventory *inv = mx_load_inv(INV_DUAL);
	json_t *spec = mx_spec_of(text);
	struct tb_error err = {0};
	int rc;

	assert_non_null(inv);
	rc = lean ? tb_matrix_plan_make_lean(spec, inv, 11, &now, plan, &err)
		  : tb_matrix_plan_make_now(spec, inv, 11, &now, plan, &err);
	tb_inventory_free(inv);

	if (rc != 0)
		fail_msg("%s: %s: %s", text, err.field, err.message);
	return spec;
}

/* The round numbers of a timeline. */
static int has_round(const json_t *tl, json_int_t round)
{
	size_t i;
	json_t *e;

	json_array_foreach(tl, i, e) if (json_integer_value(json_object_get(e, "round")) == round) return 1;
	return 0;
}

static void check_pages(const char *text, int limit)
{
	struct tb_matrix_plan *full = NULL, *lean = NULL;
	json_t *s1 = plan_of(text, 0, &full), *s2 = plan_of(text, 1, &lean), *whole, *runs, *tl;
	int offset = 0, pages = 0;

	assert_null(lean->runs);
	assert_int_equal(lean->nruns, full->nruns);
	assert_int_equal(lean->nrounds, full->nrounds);
	assert_int_equal(lean->nboots, full->nboots);
	assert_true(lean->estimated_ms == full->estimated_ms);
	for (int i = 0; i < full->nruns; i++) {
		struct tb_planned_run r;

		tb_matrix_plan_run(lean, i, &r);
		if (!mx_same_run(&r, &full->runs[i]) || r.seq != full->runs[i].seq || r.round != full->runs[i].round ||
		    r.combo != full->runs[i].combo || strcmp(r.client_os, full->runs[i].client_os) != 0 ||
		    strcmp(r.server_os, full->runs[i].server_os) != 0)
			fail_msg("%s: run %d of the lean plan is not the full plan's", text, i);
	}
	whole = tb_matrix_plan_json(full);
	assert_non_null(whole);
	runs = json_array();
	tl = json_object_get(whole, "timeline");
	for (;;) {
		json_t *page = tb_matrix_plan_page_json(lean, offset, limit), *pg = json_object_get(page, "page"), *e;
		json_t *next = json_object_get(pg, "next_offset");
		size_t i;

		assert_non_null(page);
		pages++;
		assert_int_equal(json_integer_value(json_object_get(page, "runs")), full->nruns);
		assert_int_equal(json_integer_value(json_object_get(pg, "offset")), offset);
		assert_int_equal(json_integer_value(json_object_get(pg, "limit")), limit);
		assert_true(json_array_size(json_object_get(page, "plan")) <= (size_t)limit);
		assert_int_equal(json_integer_value(json_object_get(pg, "returned")),
				 json_array_size(json_object_get(page, "plan")));
		assert_true(json_equal(json_object_get(page, "boots"), json_object_get(whole, "boots")));
		assert_true(json_equal(json_object_get(page, "spec"), json_object_get(whole, "spec")));
		assert_true(json_equal(json_object_get(page, "estimated_s"), json_object_get(whole, "estimated_s")));
		json_array_extend(runs, json_object_get(page, "plan"));
		/* its timeline: exactly the whole timeline's rounds of its runs, with the same times */
		json_array_foreach(json_object_get(page, "timeline"), i, e)
		{
			json_int_t round = json_integer_value(json_object_get(e, "round"));

			assert_true(json_equal(e, json_array_get(tl, (size_t)round)));
		}
		json_array_foreach(json_object_get(page, "plan"), i, e) assert_true(
			has_round(json_object_get(page, "timeline"), json_integer_value(json_object_get(e, "round"))));
		if (json_is_null(next)) {
			assert_int_equal(offset + (int)json_array_size(json_object_get(page, "plan")), full->nruns);
			json_decref(page);
			break;
		}
		assert_int_equal(json_integer_value(next), offset + limit);
		offset += limit;
		json_decref(page);
	}
	assert_true(json_equal(runs, json_object_get(whole, "plan")));
	assert_int_equal(pages, full->nruns / limit + (full->nruns % limit != 0 || full->nruns == 0));
	json_decref(runs);
	json_decref(whole);
	json_decref(s1);
	json_decref(s2);
	tb_matrix_plan_free(full);
	tb_matrix_plan_free(lean);
}

static void test_pages_are_the_plan(void **state)
{
	static const int limits[] = {1, 2, 7, 50, 1000};

	(void)state;
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
		for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++)
			check_pages(specs[s], limits[l]);
}

static void test_page_edges(void **state)
{
	struct tb_matrix_plan *plan = NULL;
	json_t *spec = plan_of(specs[1], 1, &plan), *j;

	(void)state;
	/* past the end: an empty page, no next */
	j = tb_matrix_plan_page_json(plan, plan->nruns + 5, 10);
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "timeline")), 0);
	assert_true(json_is_null(json_object_get(json_object_get(j, "page"), "next_offset")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "page"), "offset")), plan->nruns);
	json_decref(j);
	/* limit 0: the summary alone, the next page from the start */
	j = tb_matrix_plan_page_json(plan, 0, 0);
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "page"), "next_offset")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "runs")), plan->nruns);
	json_decref(j);
	json_decref(spec);
	tb_matrix_plan_free(plan);
}

/* A plan of TB_MATRIX_MAX_RUNS runs: lean, and its first and last pages are bounded. */
static void test_capped_plan(void **state)
{
	struct tb_matrix_plan *plan = NULL;
	json_t *spec = plan_of("{'name':'cap','pairs':[{'client':'left','server':'right'},"
			       "{'client':'router','server':'left'}],'repeats':1000,'duration_s':[1,2,3,4,5],"
			       "'iperf':{'parallel':[1,2,3,4,5,6,7,8,9,10]}}",
			       1, &plan),
	       *j;
	char *text;

	(void)state;
	assert_int_equal(plan->nruns, TB_MATRIX_MAX_RUNS);
	assert_null(plan->runs);
	j = tb_matrix_plan_page_json(plan, 0, TB_MATRIX_PAGE_MAX);
	assert_int_equal(json_array_size(json_object_get(j, "plan")), TB_MATRIX_PAGE_MAX);
	text = json_dumps(j, JSON_COMPACT);
	assert_true(strlen(text) < 2u * 1024 * 1024);
	free(text);
	json_decref(j);
	j = tb_matrix_plan_page_json(plan, TB_MATRIX_MAX_RUNS - 3, TB_MATRIX_PAGE_MAX);
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "plan"), 2), "seq")),
			 TB_MATRIX_MAX_RUNS - 1);
	json_decref(j);
	json_decref(spec);
	tb_matrix_plan_free(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages_are_the_plan),
		cmocka_unit_test(test_page_edges),
		cmocka_unit_test(test_capped_plan),
	};

	return cmocka_run_group_tests(tests, mx_setup, mx_teardown);
}
