/*
 * test_matrix_plan.c - the matrix planner (matrix.h) over many specs: a
 * property test over random valid specs (every run once, params round
 * trip), a 10,000-run plan (timed, printed, not asserted), rounds of
 * disjoint pairs and of every pair, OS combinations with the fewest boots
 * (against brute force), and mesh/disjoint groups.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "matrix.h"
#include "mxfix.h"

/* ---- property test ---- */

static const char *const pool_json[] = {
	/* parallel, length, window, bitrate, udp_bitrate, omit_s, congestion, tos, zerocopy, affinity */
	"[1,2,3,4,6,8]",
	"[1000,1400,8000,'16K']",
	"[null,'64K','128K',1048576]",
	"['0','10M','1G',5000000]",
	"[null,'1M','10.5M','0']",
	"[0,1,2]",
	"[null,'cubic','reno','bbr']",
	"[0,8,16,32]",
	"[false,true]",
	"['0','1','0,1','2,3']",
};
static const char *const axis_names[] = {"parallel", "length",     "window", "bitrate",  "udp_bitrate",
					 "omit_s",   "congestion", "tos",    "zerocopy", "affinity"};

static void test_property(void **state)
{
	static const char *const pair_pool[][2] = {
		{"left", "right"}, {"right", "left"}, {"left", "router"}, {"router", "right"}, {"right", "router"}};
	static const char *const protos[] = {"tcp", "udp"}, *const dirs[] = {"forward", "reverse", "bidir"};
	static const char *const orders[] = {"sequential", "interleaved", "shuffled"};
	json_t *pools[10];
	long total_runs = 0;

	(void)state;
	for (int a = 0; a < 10; a++)
		pools[a] = mx_spec_of(pool_json[a]);
	for (int iter = 0; iter < 300; iter++) {
		json_t *spec = json_pack("{s:s}", "name", "property"), *pairs = json_array(), *iperf = json_object();
		json_t *jp = json_array(), *jd = json_array();
		int idx[16], np = 1 + mx_rnd_int(3), npr = 1 + mx_rnd_int(2), nd = 1 + mx_rnd_int(3),
			     ndur = 1 + mx_rnd_int(3);
		int n[10], has_tcp = 0, has_udp = 0, swept = 0, repeats = 1 + mx_rnd_int(4), order = mx_rnd_int(3);
		long long expect_ms = 0;
		uint64_t common, cells = 0;
		struct tb_matrix_plan *plan = NULL, *again = NULL;
		struct tb_error err = {0};
		char *seen;

		mx_pick(5, np, idx);
		for (int i = 0; i < np; i++)
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", pair_pool[idx[i]][0], "server",
							       pair_pool[idx[i]][1]));
		mx_pick(2, npr, idx);
		for (int i = 0; i < npr; i++) {
			json_array_append_new(jp, json_string(protos[idx[i]]));
			has_tcp |= idx[i] == 0;
			has_udp |= idx[i] == 1;
		}
		mx_pick(3, nd, idx);
		for (int i = 0; i < nd; i++)
			json_array_append_new(jd, json_string(dirs[idx[i]]));
		json_object_set_new(spec, "pairs", pairs);
		json_object_set_new(spec, "protocols", jp);
		json_object_set_new(spec, "directions", jd);
		if (ndur == 1 && mx_rnd_int(2) == 0) {
			json_object_set_new(spec, "duration_s", json_integer(1 + mx_rnd_int(30)));
		} else {
			json_t *a = json_array();

			mx_pick(10, ndur, idx);
			for (int i = 0; i < ndur; i++)
				json_array_append_new(a, json_integer(idx[i] + 1));
			json_object_set_new(spec, "duration_s", a);
		}
		for (int a = 0; a < 10; a++) {
			int size = (int)json_array_size(pools[a]), mode = mx_rnd_int(4);

			n[a] = 1;
			if (mode == 0)
				continue; /* absent */
			if (mode == 1 || swept >= 3) {
				json_object_set(iperf, axis_names[a],
						json_array_get(pools[a], (size_t)mx_rnd_int(size)));
			} else {
				json_t *list = json_array();

				n[a] = 1 + mx_rnd_int(size < 3 ? size : 3);
				mx_pick(size, n[a], idx);
				for (int i = 0; i < n[a]; i++)
					json_array_append(list, json_array_get(pools[a], (size_t)idx[i]));
				json_object_set_new(iperf, axis_names[a], list);
				swept++;
			}
		}
		json_object_set_new(spec, "iperf", iperf);
		json_object_set_new(spec, "repeats", json_integer(repeats));
		json_object_set_new(spec, "order", json_string(orders[order]));
		if (order == 2 && mx_rnd_int(2) == 0)
			json_object_set_new(spec, "seed", json_integer((json_int_t)(mx_rnd() >> 11)));
		if (mx_rnd_int(3) == 0)
			json_object_set_new(spec, "pause_s", json_real(mx_rnd_int(2000) / 1000.0));

		if (tb_matrix_plan_make(spec, mx_inv_sim, mx_rnd(), &plan, &err) != 0) {
			char *t = json_dumps(spec, JSON_COMPACT);

			fprintf(stderr, "spec %d refused: %s: %s\n%s\n", iter, err.field, err.message, t);
			free(t);
		}
		assert_non_null(plan);

		/* cells = pairs x sum over protocols of (directions x durations x sweeps of that protocol) */
		common = (uint64_t)nd * (uint64_t)ndur;
		for (int a = 0; a < 10; a++)
			if (a != 3 && a != 4)
				common *= (uint64_t)n[a];
		cells = (uint64_t)np *
			((has_tcp ? common * (uint64_t)n[3] : 0) + (has_udp ? common * (uint64_t)n[4] : 0));
		assert_int_equal(plan->ncells, cells);
		assert_int_equal(plan->nruns, cells * (uint64_t)repeats);
		assert_int_equal(plan->repeats, repeats);

		/* every (cell, repeat) exactly once, seq = index; a cell's runs are equal */
		seen = calloc((size_t)plan->nruns, sizeof(*seen));
		assert_non_null(seen);
		{
			int *first = malloc((size_t)plan->ncells * sizeof(int));

			assert_non_null(first);
			for (int i = 0; i < plan->ncells; i++)
				first[i] = -1;
			for (int i = 0; i < plan->nruns; i++) {
				const struct tb_planned_run *r = &plan->runs[i];

				assert_int_equal(r->seq, i);
				assert_true(r->cell >= 0 && r->cell < plan->ncells);
				assert_true(r->repeat >= 0 && r->repeat < repeats);
				assert_int_equal(seen[r->cell * repeats + r->repeat], 0);
				seen[r->cell * repeats + r->repeat] = 1;
				if (order == 0) {
					assert_int_equal(r->cell, i / repeats);
					assert_int_equal(r->repeat, i % repeats);
				} else if (order == 1) {
					assert_int_equal(r->cell, i % plan->ncells);
					assert_int_equal(r->repeat, i / plan->ncells);
				}
				if (first[r->cell] < 0) {
					first[r->cell] = i;
					mx_roundtrip(&r->p);
				} else {
					assert_true(mx_same_run(r, &plan->runs[first[r->cell]]));
				}
				expect_ms += (r->p.omit_s + r->p.duration_s) * 1000 + TB_MATRIX_RUN_OVERHEAD_MS;
			}
			/* distinct cells are distinct runs */
			for (int x = 0; plan->ncells <= 200 && x < plan->ncells; x++)
				for (int y = x + 1; y < plan->ncells; y++)
					assert_false(mx_same_run(&plan->runs[first[x]], &plan->runs[first[y]]));
			free(first);
		}
		free(seen);
		expect_ms += (long long)plan->pause_ms * (plan->nruns - 1);
		assert_int_equal(plan->estimated_ms, expect_ms);

		/* the stored spec plans the same again, whatever seed_if_unset */
		assert_int_equal(tb_matrix_plan_make(plan->spec, mx_inv_sim, mx_rnd(), &again, &err), 0);
		assert_int_equal(again->nruns, plan->nruns);
		assert_int_equal(again->seed, plan->seed);
		for (int i = 0; i < plan->nruns; i++) {
			assert_int_equal(again->runs[i].cell, plan->runs[i].cell);
			assert_int_equal(again->runs[i].repeat, plan->runs[i].repeat);
			assert_true(mx_same_run(&again->runs[i], &plan->runs[i]));
		}
		assert_true(json_equal(again->spec, plan->spec));
		total_runs += plan->nruns;
		tb_matrix_plan_free(again);
		tb_matrix_plan_free(plan);
		json_decref(spec);
	}
	for (int a = 0; a < 10; a++)
		json_decref(pools[a]);
	printf("property: 300 specs, %ld runs\n", total_runs);
}

/* ---- params JSON ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_large_plan(void **state)
{
	char *inv_text = malloc(16384), *spec_text = malloc(4096);
	size_t used;
	struct tb_inventory *inv;
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	json_t *spec, *j;
	double t0, t1, t2;

	(void)state;
	assert_non_null(inv_text);
	assert_non_null(spec_text);
	used = (size_t)snprintf(inv_text, 16384, "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n");
	for (int i = 0; i < 20; i++)
		used += (size_t)snprintf(inv_text + used, 16384 - used,
					 "  m%02d:\n    role: host\n    os: {ubuntu: {address: 198.18.1.%d}}\n"
					 "    links:\n      net%02d: {address: 198.19.%d.%d/24}\n",
					 i, i + 10, i / 2, i / 2 + 100, i % 2 + 1);
	inv = mx_load_inv(inv_text);
	assert_non_null(inv);
	used = (size_t)snprintf(spec_text, 4096, "{'name':'large','pairs':[");
	for (int i = 0; i < 10; i++)
		used += (size_t)snprintf(spec_text + used, 4096 - used, "%s{'client':'m%02d','server':'m%02d'}",
					 i > 0 ? "," : "", 2 * i, 2 * i + 1);
	snprintf(spec_text + used, 4096 - used,
		 "],'protocols':['tcp','udp'],'directions':['forward','reverse'],'repeats':50,'order':'shuffled',"
		 "'seed':2024,'iperf':{'parallel':[1,2,4,8,16],'udp_bitrate':'1G'}}");
	spec = mx_spec_of(spec_text);
	/* one run at a time: the order is the seeded shuffle's */
	json_object_set_new(spec, "concurrency", json_string("none"));
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	mx_check_permutation(plan);
	assert_int_equal(plan->nrounds, 10000);
	tb_matrix_plan_free(plan);
	plan = NULL;
	/* the default: the 10 disjoint pairs in rounds */
	json_object_del(spec, "concurrency");
	t0 = now_s();
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	t1 = now_s();
	assert_int_equal(plan->nruns, 10000);
	assert_int_equal(plan->ncells, 200);
	assert_true(plan->nrounds >= 1000 && plan->nrounds < 1400);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int server = atoi(r->server + 1);
		char link[16], addr[32];

		snprintf(link, sizeof(link), "net%02d", server / 2); /* the pair's shared link */
		snprintf(addr, sizeof(addr), "198.19.%d.2", server / 2 + 100);
		assert_int_equal(atoi(r->client + 1), server - 1);
		assert_string_equal(r->link, link);
		assert_string_equal(r->server_address, addr);
	}
	j = tb_matrix_plan_json(plan);
	t2 = now_s();
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 10000);
	printf("plan of 10000 runs over 20 machines: planned in %.2f ms (%d rounds), as JSON in %.2f ms\n",
	       (t1 - t0) * 1e3, plan->nrounds, (t2 - t1) * 1e3);
	json_decref(j);
	tb_matrix_plan_free(plan);
	json_decref(spec);
	tb_inventory_free(inv);
	free(inv_text);
	free(spec_text);
}

/* ---- rounds ---- */

/* 20 machines m00..m19, each with a link of its own. */
static struct tb_inventory *inv_20(void)
{
	char text[16384];
	size_t used = (size_t)snprintf(text, sizeof(text), "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n");

	for (int i = 0; i < 20; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "  m%02d:\n    role: host\n    os: {ubuntu: {address: 198.18.1.%d}}\n"
					 "    links:\n      l%02d: {address: 198.19.%d.2/24}\n",
					 i, i + 10, i, i + 100);
	return mx_load_inv(text);
}

/* The checks every plan in rounds must pass, against the same spec planned
 * one run at a time (seq order = the order before rounds). */
static void check_rounds(const struct tb_matrix_plan *plan, const struct tb_matrix_plan *flat)
{
	int round_start = 0;
	char *taken = calloc((size_t)flat->nruns, 1);

	assert_non_null(taken);
	assert_int_equal(plan->nruns, flat->nruns);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int k;

		assert_int_equal(r->seq, i);
		if (i > 0) {
			assert_true(r->round == plan->runs[i - 1].round || r->round == plan->runs[i - 1].round + 1);
			if (r->round != plan->runs[i - 1].round)
				round_start = i;
		} else {
			assert_int_equal(r->round, 0);
		}
		/* no machine in two runs of one round */
		for (k = round_start; k < i; k++) {
			const struct tb_planned_run *o = &plan->runs[k];

			assert_true(strcmp(o->client, r->client) != 0 && strcmp(o->client, r->server) != 0 &&
				    strcmp(o->server, r->client) != 0 && strcmp(o->server, r->server) != 0);
		}
		/* every run exactly once: the same (cell, repeat) as one of the flat plan's */
		for (k = 0; k < flat->nruns; k++)
			if (!taken[k] && flat->runs[k].cell == r->cell && flat->runs[k].repeat == r->repeat)
				break;
		assert_true(k < flat->nruns);
		taken[k] = 1;
		assert_true(mx_same_run(&flat->runs[k], r));
	}
	assert_int_equal(plan->nrounds, plan->nruns ? plan->runs[plan->nruns - 1].round + 1 : 0);
	/* each machine's runs keep their order */
	for (int m = 0; m < 20; m++) {
		char name[8];
		int a = 0, b = 0;

		snprintf(name, sizeof(name), "m%02d", m);
		for (;;) {
			while (a < plan->nruns && strcmp(plan->runs[a].client, name) != 0 &&
			       strcmp(plan->runs[a].server, name) != 0)
				a++;
			while (b < flat->nruns && strcmp(flat->runs[b].client, name) != 0 &&
			       strcmp(flat->runs[b].server, name) != 0)
				b++;
			assert_int_equal(a < plan->nruns, b < flat->nruns);
			if (a >= plan->nruns)
				break;
			assert_int_equal(plan->runs[a].cell, flat->runs[b].cell);
			assert_int_equal(plan->runs[a].repeat, flat->runs[b].repeat);
			a++;
			b++;
		}
	}
	free(taken);
}

/* concurrency "pairs": a round takes the next run of each pair, machines may be
 * shared; every run once, each pair at most once a round, in its own order. */
static void check_pair_rounds(const struct tb_matrix_plan *plan, const struct tb_matrix_plan *flat)
{
	char *taken = calloc((size_t)flat->nruns, 1);
	int round_start = 0;

	assert_non_null(taken);
	assert_int_equal(plan->nruns, flat->nruns);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int k;

		assert_int_equal(r->seq, i);
		if (i > 0 && r->round != plan->runs[i - 1].round) {
			assert_int_equal(r->round, plan->runs[i - 1].round + 1);
			round_start = i;
		}
		for (k = round_start; k < i; k++) {
			const struct tb_planned_run *o = &plan->runs[k];

			assert_false(strcmp(o->client, r->client) == 0 && strcmp(o->server, r->server) == 0 &&
				     strcmp(o->link, r->link) == 0); /* a pair once a round */
			assert_int_equal(o->combo, r->combo);        /* one OS combination a round */
		}
		for (k = 0; k < flat->nruns; k++)
			if (!taken[k] && flat->runs[k].cell == r->cell && flat->runs[k].repeat == r->repeat)
				break;
		assert_true(k < flat->nruns);
		taken[k] = 1;
		assert_true(mx_same_run(&flat->runs[k], r));
		/* its pair's earlier runs (in the flat order) all came before it */
		for (int m = 0; m < k; m++) {
			const struct tb_planned_run *f = &flat->runs[m];

			if (strcmp(f->client, r->client) == 0 && strcmp(f->server, r->server) == 0 &&
			    strcmp(f->link, r->link) == 0)
				assert_true(taken[m]);
		}
	}
	free(taken);
}

static void test_pair_rounds(void **state)
{
	struct tb_inventory *inv = inv_20();
	struct tb_matrix_plan *plan = NULL, *flat = NULL;
	struct tb_error err = {0};
	json_t *spec, *j;

	(void)state;
	assert_non_null(inv);
	/* fan-in: two clients of one server at once, 4 rounds of 2 */
	spec = mx_spec_of("{'name':'fanin','pairs':[{'client':'m00','server':'m02'},{'client':'m01','server':'m02'}],"
			  "'directions':['forward','reverse'],'duration_s':3,'repeats':2,'concurrency':'pairs'}");
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->nrounds, 4);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(plan->runs[i].round, i / 2);
		assert_string_equal(plan->runs[i].server, "m02");
	}
	assert_string_not_equal(plan->runs[0].client, plan->runs[1].client);
	assert_int_equal(plan->estimated_ms, 4 * (3000 + TB_MATRIX_RUN_OVERHEAD_MS));
	j = tb_matrix_plan_json(plan);
	assert_string_equal(json_string_value(json_object_get(j, "concurrency")), "pairs");
	json_decref(j);
	assert_string_equal(json_string_value(json_object_get(plan->spec, "concurrency")), "pairs");
	json_object_set_new(spec, "concurrency", json_string("none"));
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &flat, &err), 0);
	check_pair_rounds(plan, flat);
	tb_matrix_plan_free(plan);
	tb_matrix_plan_free(flat);
	json_decref(spec);

	/* random specs: pairs sharing machines, repeated pairs over two links */
	for (int iter = 0; iter < 200; iter++) {
		json_t *pairs = json_array();
		int np = 1 + mx_rnd_int(6), most = 0, per[8] = {0};

		for (int i = 0; i < np; i++) {
			char c[8], sv[8];
			int a = mx_rnd_int(4), b;

			do
				b = mx_rnd_int(4);
			while (b == a);
			snprintf(c, sizeof(c), "m%02d", a);
			snprintf(sv, sizeof(sv), "m%02d", b);
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", c, "server", sv));
		}
		spec = json_pack("{s:s, s:o, s:[s,s], s:i, s:s, s:i, s:s}", "name", "pr", "pairs", pairs, "protocols",
				 "tcp", "udp", "repeats", 1 + mx_rnd_int(3), "order",
				 mx_rnd_int(2) ? "interleaved" : "sequential", "duration_s", 1 + mx_rnd_int(5),
				 "concurrency", "pairs");
		if (tb_matrix_plan_make(spec, inv, 7, &plan, &err) != 0) {
			/* the same pair twice is refused: fine, try another */
			json_decref(spec);
			continue;
		}
		json_object_set_new(spec, "concurrency", json_string("none"));
		assert_int_equal(tb_matrix_plan_make(spec, inv, 7, &flat, &err), 0);
		check_pair_rounds(plan, flat);
		/* without OS combinations: as many rounds as the busiest pair has runs */
		for (int i = 0; i < plan->nruns; i++) {
			int k = 0;

			for (; k < np; k++) {
				const json_t *pk = json_array_get(json_object_get(plan->spec, "pairs"), (size_t)k);

				if (strcmp(json_string_value(json_object_get(pk, "client")), plan->runs[i].client) ==
					    0 &&
				    strcmp(json_string_value(json_object_get(pk, "server")), plan->runs[i].server) == 0)
					break;
			}
			if (k < 8 && ++per[k] > most)
				most = per[k];
		}
		assert_int_equal(plan->nrounds, most);
		tb_matrix_plan_free(plan);
		tb_matrix_plan_free(flat);
		json_decref(spec);
	}
	tb_inventory_free(inv);
}

static void test_rounds(void **state)
{
	struct tb_inventory *inv = inv_20();
	struct tb_matrix_plan *plan = NULL, *flat = NULL;
	struct tb_error err = {0};
	json_t *spec, *j, *tl;

	(void)state;
	assert_non_null(inv);
	/* two disjoint pairs: 12 runs in 6 rounds of 2, in half the time */
	spec = mx_spec_of("{'name':'two','pairs':[{'client':'m00','server':'m01'},{'client':'m02','server':'m03'}],"
			  "'directions':['forward','reverse'],'duration_s':3,'repeats':3,'pause_s':1}");
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	assert_int_equal(plan->nruns, 12);
	assert_int_equal(plan->nrounds, 6);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(plan->runs[i].round, i / 2);
		assert_string_equal(plan->runs[i].client, i % 2 == 0 ? "m00" : "m02");
	}
	assert_int_equal(plan->estimated_ms, 6 * (3000 + TB_MATRIX_RUN_OVERHEAD_MS) + 5 * 1000);
	j = tb_matrix_plan_json(plan);
	assert_string_equal(json_string_value(json_object_get(j, "concurrency")), "disjoint");
	assert_int_equal(json_integer_value(json_object_get(j, "rounds")), 6);
	tl = json_object_get(j, "timeline");
	assert_int_equal(json_array_size(tl), 6);
	assert_true(fabs(json_real_value(json_object_get(json_array_get(tl, 1), "start_s")) - 4.6) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(json_array_get(tl, 5), "end_s")) - 26.6) < 1e-9);
	assert_int_equal(json_array_size(json_object_get(json_array_get(tl, 2), "runs")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "plan"), 3), "round")),
			 1);
	json_decref(j);
	json_object_set_new(spec, "concurrency", json_string("none"));
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &flat, &err), 0);
	assert_int_equal(flat->nrounds, 12);
	assert_int_equal(flat->estimated_ms, 12 * (3000 + TB_MATRIX_RUN_OVERHEAD_MS) + 11 * 1000);
	check_rounds(plan, flat);
	assert_string_equal(json_string_value(json_object_get(flat->spec, "concurrency")), "none");
	tb_matrix_plan_free(plan);
	tb_matrix_plan_free(flat);
	json_decref(spec);
	/* a bad value names the field and the values allowed */
	spec = mx_spec_of("{'name':'x','pairs':[{'client':'m00','server':'m01'}],'concurrency':'all'}");
	assert_int_not_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	assert_string_equal(err.field, "concurrency");
	assert_non_null(strstr(err.message, "disjoint | none"));
	json_decref(spec);

	/* random specs over 20 machines: pairs that share machines or not */
	for (int iter = 0; iter < 300; iter++) {
		static const char *const orders[] = {"sequential", "interleaved", "shuffled"};
		json_t *pairs = json_array();
		int np = 1 + mx_rnd_int(8);

		for (int i = 0; i < np; i++) {
			char c[8], sv[8];
			int a = mx_rnd_int(iter % 3 == 0 ? 5 : 20), b;

			do
				b = mx_rnd_int(iter % 3 == 0 ? 5 : 20);
			while (b == a);
			snprintf(c, sizeof(c), "m%02d", a);
			snprintf(sv, sizeof(sv), "m%02d", b);
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", c, "server", sv));
		}
		spec = json_pack("{s:s, s:o, s:[s,s], s:i, s:s, s:i}", "name", "rounds", "pairs", pairs, "protocols",
				 "tcp", "udp", "repeats", 1 + mx_rnd_int(3), "order", orders[mx_rnd_int(3)],
				 "duration_s", 1 + mx_rnd_int(5));
		if (mx_rnd_int(2))
			json_object_set_new(spec, "seed", json_integer(mx_rnd_int(1000)));
		if (strcmp(json_string_value(json_object_get(spec, "order")), "shuffled") != 0)
			json_object_del(spec, "seed");
		assert_int_equal(tb_matrix_plan_make(spec, inv, 7, &plan, &err), 0);
		json_object_set_new(spec, "concurrency", json_string("none"));
		assert_int_equal(tb_matrix_plan_make(spec, inv, 7, &flat, &err), 0);
		check_rounds(plan, flat);
		assert_true(plan->estimated_ms <= flat->estimated_ms);
		tb_matrix_plan_free(plan);
		tb_matrix_plan_free(flat);
		plan = flat = NULL;
		json_decref(spec);
	}
	tb_inventory_free(inv);
}

/* ---- OS combinations ---- */

/* m0..m5, each dual-booting ubuntu and freebsd; m6 only ubuntu; all on one link. */
static struct tb_inventory *inv_dual(void)
{
	char text[8192];
	size_t used = (size_t)snprintf(text, sizeof(text), "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n");

	for (int i = 0; i < 7; i++) {
		char bsd[64] = "";

		if (i < 6)
			snprintf(bsd, sizeof(bsd), "      freebsd: {address: 198.18.2.%d}\n", 10 + i);
		used += (size_t)snprintf(
			text + used, sizeof(text) - used,
			"  m%d:\n    role: host\n%s"
			"    os:\n      ubuntu: {address: 198.18.1.%d}\n%s"
			"    links:\n      lan: {address: 198.19.1.%d/24}\n",
			i,
			i < 6 ? "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\", freebsd: \"4\"}}\n"
			      : "",
			10 + i, bsd, 10 + i);
	}
	return mx_load_inv(text);
}

/* Brute force: the fewest boots over every order of the combinations, from
 * start (names[k] in start[k], "" unknown), back to start at the end. */
static int brute(int n, char combos[][6][8], int nm, char start[][8])
{
	int perm[6], best = 1 << 30, count = 1;

	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int i = 2; i <= n; i++)
		count *= i;
	for (int p = 0; p < count; p++) {
		char st[6][8];
		int boots = 0, x = p, used[6] = {0}, order[6];

		/* the p-th permutation (factorial number system) */
		for (int i = 0; i < n; i++) {
			int k = x % (n - i), j = 0;

			x /= n - i;
			for (int c = 0; c < n; c++)
				if (!used[c] && k-- == 0) {
					j = c;
					break;
				}
			used[j] = 1;
			order[i] = perm[j];
		}
		memcpy(st, start, sizeof(st));
		for (int i = 0; i < n; i++)
			for (int m = 0; m < nm; m++)
				if (combos[order[i]][m][0] && strcmp(st[m], combos[order[i]][m]) != 0) {
					snprintf(st[m], sizeof(st[m]), "%s", combos[order[i]][m]);
					boots++;
				}
		for (int m = 0; m < nm; m++)
			boots += start[m][0] && strcmp(st[m], start[m]) != 0;
		if (boots < best)
			best = boots;
	}
	return best;
}

static void test_os_combinations(void **state)
{
	static const char *const oses[] = {"ubuntu", "freebsd"};
	struct tb_inventory *inv = inv_dual();
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	struct tb_matrix_host_now hosts[6];
	struct tb_matrix_now now = {2, hosts};
	json_t *spec, *j;
	static const struct {
		const char *os, *field, *message;
	} bad_os[] = {
		{"'os':'ubuntu'", "os", "os must be a list of 1..16 OS combinations"},
		{"'os':[]", "os", "os must be a list of 1..16"},
		{"'os':[{}]", "os[0]", "os[0] must be an object {machine: OS} naming machines of the pairs (m0, m1)"},
		{"'os':['x']", "os[0]", "got \"x\""},
		{"'os':[{'m2':'ubuntu'}]", "os[0].m2", "m2 is not a machine of the pairs (m0, m1)"},
		{"'os':[{'nosuch':'ubuntu'}]", "os[0].nosuch", "is not a machine of the pairs"},
		{"'os':[{'m0':'windows'}]", "os[0].m0", "m0 has no OS \"windows\"; its OSes: ubuntu, freebsd"},
		{"'os':[{'m0':1}]", "os[0].m0", "must be the name of one of m0's OSes, got 1"},
		{"'os':[{'m0':'ubuntu','m1':'freebsd'},{'m1':'freebsd','m0':'ubuntu'}]", "os",
		 "os[1] is the same combination as os[0]"},
		{"'os':[{'m0':'ubuntu'}],'os_after':'keep'", "os_after", "os_after must be one of restore | leave"},
	};

	(void)state;
	assert_non_null(inv);
	for (size_t i = 0; i < sizeof(bad_os) / sizeof(bad_os[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text), "{'name':'x','pairs':[{'client':'m0','server':'m1'}],%s}", bad_os[i].os);
		spec = mx_spec_of(text);
		memset(&err, 0, sizeof(err));
		assert_int_not_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
		if (strcmp(err.field, bad_os[i].field) != 0 || strstr(err.message, bad_os[i].message) == NULL)
			fail_msg("%s: got field \"%s\": %s; expected \"%s\": ...%s...", bad_os[i].os, err.field,
				 err.message, bad_os[i].field, bad_os[i].message);
		json_decref(spec);
	}
	/* a machine with one OS may be named in it; the stored spec keeps the list and os_after */
	spec = mx_spec_of("{'name':'x','pairs':[{'client':'m0','server':'m6'}],'os':[{'m0':'freebsd','m6':'ubuntu'}]}");
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	assert_string_equal(json_string_value(json_object_get(plan->spec, "os_after")), "restore");
	assert_int_equal(json_array_size(json_object_get(plan->spec, "os")), 1);
	assert_string_equal(plan->runs[0].client_os, "freebsd");
	assert_string_equal(plan->runs[0].server_os, "ubuntu");
	tb_matrix_plan_free(plan);
	json_decref(spec);

	/* the reference question: both ubuntu now; 4 combinations; the order
	 * needs one boot a step: ubuntu/ubuntu first (none), and one back */
	snprintf(hosts[0].machine, sizeof(hosts[0].machine), "m0");
	snprintf(hosts[0].os, sizeof(hosts[0].os), "ubuntu");
	hosts[0].boot_ms = 30000;
	snprintf(hosts[1].machine, sizeof(hosts[1].machine), "m1");
	snprintf(hosts[1].os, sizeof(hosts[1].os), "ubuntu");
	hosts[1].boot_ms = 0;
	spec = mx_spec_of(
		"{'name':'ref','pairs':[{'client':'m0','server':'m1'}],'protocols':['tcp','udp'],'duration_s':5,"
		"'os':[{'m0':'freebsd','m1':'freebsd'},{'m0':'ubuntu','m1':'ubuntu'},{'m0':'freebsd','m1':'ubuntu'},"
		"{'m0':'ubuntu','m1':'freebsd'}]}");
	assert_int_equal(tb_matrix_plan_make_now(spec, inv, 0, &now, &plan, &err), 0);
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->ncells, 8);
	assert_int_equal(plan->ncombos, 4);
	/* ubuntu/ubuntu needs no boot: it goes first; then one boot per step, and one back */
	assert_string_equal(plan->runs[0].client_os, "ubuntu");
	assert_string_equal(plan->runs[0].server_os, "ubuntu");
	assert_int_equal(plan->nboots, 4); /* UU, FU, FF, UF, then m1 back: one boot a step */
	assert_int_equal(plan->boots[plan->nboots - 1].seq, -1);
	for (int i = 0; i < plan->nruns; i++) {
		assert_int_equal(plan->runs[i].cell, i); /* cells combination by combination */
		assert_int_equal(plan->runs[i].combo, plan->runs[i - i % 2].combo);
	}
	{
		int64_t boots = 0;

		for (int i = 0; i < plan->nboots; i++) {
			assert_int_equal(plan->boots[i].estimated_ms,
					 strcmp(plan->boots[i].machine, "m0") == 0 ? 30000 : TB_MATRIX_BOOT_DEFAULT_MS);
			boots += plan->boots[i].estimated_ms;
		}
		assert_int_equal(plan->estimated_ms, 8 * (5000 + TB_MATRIX_RUN_OVERHEAD_MS) + boots);
	}
	j = tb_matrix_plan_json(plan);
	assert_int_equal(json_integer_value(json_object_get(j, "combinations")), 4);
	assert_int_equal(json_array_size(json_object_get(j, "boots")), 4);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "boots"), 3), "seq")));
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(j, "plan"), 0), "client_os")),
		"ubuntu");
	/* the timeline: a round's boots come before it, and push its start */
	{
		json_t *tl = json_object_get(j, "timeline");
		size_t nb = 0;

		for (size_t i = 0; i < json_array_size(tl); i++)
			nb += json_array_size(json_object_get(json_array_get(tl, i), "boots"));
		assert_int_equal(nb, 3); /* the one back comes after the last round */
		assert_int_equal(json_array_size(json_object_get(json_array_get(tl, 0), "boots")), 0);
		assert_true(json_real_value(json_object_get(json_array_get(tl, 2), "start_s")) >=
			    json_real_value(json_object_get(json_array_get(tl, 1), "end_s")) + 30.0);
	}
	json_decref(j);
	tb_matrix_plan_free(plan);
	{
		/* both hosts boot before the same run, and both back: at once, so
		 * each step takes the longer of the two (m1's default), not the sum */
		json_t *both = mx_spec_of(
			"{'name':'both','pairs':[{'client':'m0','server':'m1'}],'protocols':['tcp'],"
			"'directions':['forward'],'duration_s':5,'os':[{'m0':'freebsd','m1':'freebsd'}]}");
		struct tb_matrix_plan *p2 = NULL;
		json_t *j2, *round0;

		assert_int_equal(tb_matrix_plan_make_now(both, inv, 0, &now, &p2, &err), 0);
		assert_int_equal(p2->nruns, 1);
		assert_int_equal(p2->nboots, 4);
		assert_true(p2->boots[0].seq == 0 && p2->boots[1].seq == 0 && p2->boots[2].seq == -1 &&
			    p2->boots[3].seq == -1);
		assert_int_equal(p2->estimated_ms, 5000 + TB_MATRIX_RUN_OVERHEAD_MS + 2 * TB_MATRIX_BOOT_DEFAULT_MS);
		j2 = tb_matrix_plan_json(p2);
		round0 = json_array_get(json_object_get(j2, "timeline"), 0);
		assert_int_equal(json_array_size(json_object_get(round0, "boots")), 2);
		assert_true(fabs(json_real_value(json_object_get(round0, "start_s")) -
				 TB_MATRIX_BOOT_DEFAULT_MS / 1000.0) < 1e-9);
		json_decref(j2);
		json_decref(both);
		tb_matrix_plan_free(p2);
	}
	/* os_after leave: no boot back, and the order may end elsewhere */
	json_object_set_new(spec, "os_after", json_string("leave"));
	assert_int_equal(tb_matrix_plan_make_now(spec, inv, 0, &now, &plan, &err), 0);
	assert_int_equal(plan->nboots, 3);
	for (int i = 0; i < plan->nboots; i++)
		assert_int_not_equal(plan->boots[i].seq, -1);
	assert_false(plan->restore_os);
	assert_string_equal(json_string_value(json_object_get(plan->spec, "os_after")), "leave");
	tb_matrix_plan_free(plan);
	json_decref(spec);

	/* random small cases: the boots of the plan are the fewest (brute force) */
	for (int iter = 0; iter < 400; iter++) {
		char combos[6][6][8], start[6][8], text[2048];
		int nm = 2 + mx_rnd_int(3), nc = 1 + mx_rnd_int(5), used = 0, ncomb = 0;

		memset(combos, 0, sizeof(combos));
		memset(start, 0, sizeof(start));
		used += snprintf(text + used, sizeof(text) - (size_t)used, "{'name':'r','pairs':[");
		for (int m = 0; m + 1 < nm; m++)
			used += snprintf(text + used, sizeof(text) - (size_t)used, "%s{'client':'m%d','server':'m%d'}",
					 m ? "," : "", m, m + 1);
		used += snprintf(text + used, sizeof(text) - (size_t)used, "],%s'os':[",
				 mx_rnd_int(2) ? "'os_after':'restore'," : "");
		for (int c = 0; c < nc; c++) {
			char one[256];
			int u = 0, any = 0, dup = 0;

			for (int m = 0; m < nm; m++)
				if (mx_rnd_int(4) != 0) {
					snprintf(combos[ncomb][m], sizeof(combos[0][0]), "%s", oses[mx_rnd_int(2)]);
					u += snprintf(one + u, sizeof(one) - (size_t)u, "%s'm%d':'%s'",
						      any++ ? "," : "", m, combos[ncomb][m]);
				}
			for (int k = 0; k < ncomb && any; k++)
				dup |= memcmp(combos[k], combos[ncomb], sizeof(combos[0])) == 0;
			if (!any || dup) {
				memset(combos[ncomb], 0, sizeof(combos[0]));
				continue;
			}
			used += snprintf(text + used, sizeof(text) - (size_t)used, "%s{%s}", ncomb ? "," : "", one);
			ncomb++;
		}
		if (ncomb == 0)
			continue;
		snprintf(text + used, sizeof(text) - (size_t)used, "]}");
		for (int m = 0; m < nm; m++) {
			int r = mx_rnd_int(3);

			snprintf(hosts[m].machine, sizeof(hosts[m].machine), "m%d", m);
			snprintf(hosts[m].os, sizeof(hosts[m].os), "%s", r == 2 ? "" : oses[r]);
			snprintf(start[m], sizeof(start[m]), "%s", hosts[m].os);
			hosts[m].boot_ms = 0;
		}
		now.n = nm;
		spec = mx_spec_of(text);
		if (tb_matrix_plan_make_now(spec, inv, 0, &now, &plan, &err) != 0)
			fail_msg("%s: %s", text, err.message);
		if (plan->nboots != brute(ncomb, combos, nm, start))
			fail_msg("%s: %d boots, brute force %d", text, plan->nboots, brute(ncomb, combos, nm, start));
		/* the boots replay the runs: each run's hosts are in the OS it wants */
		{
			char st[6][8];
			int b = 0;

			memcpy(st, start, sizeof(st));
			for (int i = 0; i < plan->nruns; i++) {
				for (; b < plan->nboots && plan->boots[b].seq == i; b++) {
					int m = atoi(plan->boots[b].machine + 1);

					assert_string_equal(plan->boots[b].from, st[m]);
					snprintf(st[m], sizeof(st[m]), "%s", plan->boots[b].to);
				}
				if (plan->runs[i].client_os[0])
					assert_string_equal(st[atoi(plan->runs[i].client + 1)],
							    plan->runs[i].client_os);
				if (plan->runs[i].server_os[0])
					assert_string_equal(st[atoi(plan->runs[i].server + 1)],
							    plan->runs[i].server_os);
			}
		}
		tb_matrix_plan_free(plan);
		plan = NULL;
		json_decref(spec);
	}
	tb_inventory_free(inv);
}

/* ---- groups (mesh, disjoint) ---- */

static void test_groups(void **state)
{
	static const struct {
		const char *spec, *field, *message;
	} bad_groups[] = {
		{"'groups':{}", "groups", "groups must be a list of 1..16 groups of machines (mesh or disjoint)"},
		{"'groups':[]", "groups", "1..16"},
		{"'groups':['x']", "groups[0]", "groups[0] must be {\"type\": \"mesh\""},
		{"'groups':[{'members':['left','right']}]", "groups[0].type",
		 "must be one of mesh | disjoint, got nothing"},
		{"'groups':[{'type':'star','members':['left']}]", "groups[0].type", "got \"star\""},
		{"'groups':[{'type':'mesh','members':['left','nosuch']}]", "groups[0].members[1]",
		 "no machine \"nosuch\""},
		{"'groups':[{'type':'mesh','members':['left','left']}]", "groups[0].members[1]",
		 "left is listed twice"},
		{"'groups':[{'type':'mesh','members':['left']}]", "groups[0]", "a mesh needs at least 2 machines"},
		{"'groups':[{'type':'mesh','members':['left','relay']}]", "groups[0].members[1]",
		 "relay has role relay and no links"},
		{"'groups':[{'type':'disjoint','a':['left']}]", "groups[0].b",
		 "must be a list of 1..16 machine names, got nothing"},
		{"'groups':[{'type':'disjoint','a':['left'],'b':['right'],'members':['x']}]", "groups[0].members",
		 "unknown field; a disjoint group has type, a and b"},
	};
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	json_t *spec, *pairs;
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_groups) / sizeof(bad_groups[0]); i++) {
		snprintf(text, sizeof(text), "{'name':'g',%s}", bad_groups[i].spec);
		spec = mx_spec_of(text);
		memset(&err, 0, sizeof(err));
		assert_int_not_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), 0);
		if (strcmp(err.field, bad_groups[i].field) != 0 || strstr(err.message, bad_groups[i].message) == NULL)
			fail_msg("%s: got field \"%s\": %s", bad_groups[i].spec, err.field, err.message);
		json_decref(spec);
	}
	/* a mesh of 3: 6 ordered pairs, after the spec's own pair, which is not repeated */
	spec = mx_spec_of("{'name':'g','pairs':[{'client':'left','server':'right'}],"
			  "'groups':[{'type':'mesh','members':['left','right','router']}]}");
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), 0);
	pairs = json_object_get(plan->spec, "pairs");
	assert_int_equal(json_array_size(pairs), 6);
	assert_null(json_object_get(plan->spec, "groups"));
	assert_int_equal(plan->nruns, 6);
	{
		static const char *const want[6][2] = {{"left", "right"},  {"right", "left"},   {"left", "router"},
						       {"router", "left"}, {"right", "router"}, {"router", "right"}};

		for (int i = 0; i < 6; i++) {
			int found = 0;

			for (int k = 0; k < plan->nruns; k++)
				found += strcmp(plan->runs[k].client, want[i][0]) == 0 &&
					 strcmp(plan->runs[k].server, want[i][1]) == 0;
			assert_int_equal(found, 1);
		}
		assert_string_equal(json_string_value(json_object_get(json_array_get(pairs, 0), "client")), "left");
		assert_string_equal(json_string_value(json_object_get(json_array_get(pairs, 0), "server")), "right");
	}
	/* the stored spec plans the same runs again */
	{
		struct tb_matrix_plan *again = NULL;

		assert_int_equal(tb_matrix_plan_make(plan->spec, mx_inv_sim, 0, &again, &err), 0);
		assert_int_equal(again->nruns, plan->nruns);
		for (int i = 0; i < plan->nruns; i++)
			assert_true(mx_same_run(&plan->runs[i], &again->runs[i]));
		tb_matrix_plan_free(again);
	}
	tb_matrix_plan_free(plan);
	json_decref(spec);
	/* disjoint without pairs: a x b both ways */
	spec = mx_spec_of("{'name':'g','groups':[{'type':'disjoint','a':['left'],'b':['right','router']}]}");
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), 0);
	assert_int_equal(json_array_size(json_object_get(plan->spec, "pairs")), 4);
	assert_int_equal(plan->nruns, 4);
	tb_matrix_plan_free(plan);
	json_decref(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_property),        cmocka_unit_test(test_large_plan),
		cmocka_unit_test(test_rounds),          cmocka_unit_test(test_pair_rounds),
		cmocka_unit_test(test_os_combinations), cmocka_unit_test(test_groups),
	};

	return cmocka_run_group_tests_name("matrix_plan", tests, mx_setup, mx_teardown);
}
