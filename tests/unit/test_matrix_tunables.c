/*
 * test_matrix_tunables.c - "tunables" of a matrix spec (matrix_tunables.c,
 * issue 20 item 3): sysctls named per OS and the MTU swept as a dimension,
 * outermost in a combination; the set each run is in, as the run stores it;
 * the plan's list of changes and restores; the spec as stored plans again to
 * the same runs; and bad specs, a line each, with the field they name.
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

#define CC                                                                                  \
	"{'linux':'net.ipv4.tcp_congestion_control','freebsd':'net.inet.tcp.cc.algorithm'," \
	"'values':['cubic',{'linux':'reno','freebsd':'newreno'}]}"
#define MTU "{'mtu':true,'values':[1500,1400]}"

static const char *const sweep = "{'name':'tun','pairs':[{'client':'left','server':'right'}],'repeats':2,"
				 "'tunables':[" CC "," MTU "]}";

static const char *str_at(const json_t *set, int i, const char *key, const char *fam)
{
	const json_t *x = json_array_get(json_object_get(set, "values"), (size_t)i);

	x = json_object_get(x, key);
	return json_string_value(fam != NULL ? json_object_get(x, fam) : x);
}

static void test_sets_are_cells(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok(sweep, 1);
	const char *want_cc[4] = {"cubic", "cubic", "reno", "reno"},
		   *want_bsd[4] = {"cubic", "cubic", "newreno", "newreno"};
	const char *want_mtu[4] = {"1500", "1400", "1500", "1400"};

	(void)state;
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->ncells, 4);
	mx_check_permutation(plan);
	for (int i = 0; i < plan->nruns; i++) {
		int set = i / 2;
		json_t *j = tb_matrix_tunables_set_json(plan, plan->runs[i].tset);

		/* sequential: a set's runs together, the first tunable turning slowest */
		assert_int_equal(plan->runs[i].tset, set);
		assert_non_null(j);
		assert_int_equal(json_integer_value(json_object_get(j, "set")), set);
		assert_string_equal(str_at(j, 0, "kind", NULL), "sysctl");
		assert_string_equal(str_at(j, 0, "linux", NULL), "net.ipv4.tcp_congestion_control");
		assert_string_equal(str_at(j, 0, "freebsd", NULL), "net.inet.tcp.cc.algorithm");
		assert_string_equal(str_at(j, 0, "value", "linux"), want_cc[set]);
		assert_string_equal(str_at(j, 0, "value", "freebsd"), want_bsd[set]);
		assert_string_equal(str_at(j, 1, "kind", NULL), "mtu");
		assert_string_equal(str_at(j, 1, "value", "linux"), want_mtu[set]);
		assert_string_equal(str_at(j, 1, "value", "freebsd"), want_mtu[set]);
		json_decref(j);
	}
	assert_null(tb_matrix_tunables_set_json(plan, 4));
	tb_matrix_plan_free(plan);
}

/* A run's params with its set in them are what the runner reads back. */
static void test_params_carry_the_set(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok(sweep, 1);
	json_t *pj = tb_matrix_params_json(&plan->runs[3].p);
	struct tb_iperf_params back;
	struct tb_error err = {0};

	(void)state;
	json_object_set_new(pj, "tunables", tb_matrix_tunables_set_json(plan, plan->runs[3].tset));
	assert_int_equal(tb_matrix_params_from_json(pj, &back, &err), 0);
	assert_true(mx_same_params(&back, &plan->runs[3].p));
	json_decref(pj);
	tb_matrix_plan_free(plan);
}

static void test_plan_lists_changes(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok(sweep, 1);
	json_t *j = tb_matrix_plan_json(plan), *t = json_object_get(j, "tunables"), *sets = json_object_get(t, "sets");
	json_t *r0 = json_array_get(json_object_get(j, "plan"), 2);

	(void)state;
	assert_int_equal(json_array_size(sets), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(sets, 1), "first_seq")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(sets, 1), "last_seq")), 3);
	assert_int_equal(json_array_size(json_object_get(t, "hosts")), 2);
	assert_non_null(strstr(json_string_value(json_object_get(t, "restore")), "crash"));
	assert_int_equal(json_integer_value(json_object_get(r0, "tunable_set")), 1);
	/* the spec as stored plans to the same runs (a rerun) */
	{
		char *text = json_dumps(plan->spec, JSON_COMPACT);
		struct tb_matrix_plan *again = NULL;
		struct tb_error err = {0};

		for (char *c = text; *c; c++)
			if (*c == '"')
				*c = '\'';
		assert_int_equal(mx_plan_text(text, mx_inv_sim, 1, &again, &err), 0);
		assert_int_equal(again->nruns, plan->nruns);
		for (int i = 0; i < plan->nruns; i++) {
			assert_true(mx_same_run(&again->runs[i], &plan->runs[i]));
			assert_int_equal(again->runs[i].tset, plan->runs[i].tset);
		}
		free(text);
		tb_matrix_plan_free(again);
	}
	json_decref(j);
	tb_matrix_plan_free(plan);
}

/* Without tunables nothing changes: every run's set is -1, no "tunables" in the plan. */
static void test_none(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok(
		"{'name':'n','pairs':[{'client':'left','server':'right'}],'repeats':3}", 1);
	json_t *j = tb_matrix_plan_json(plan);

	(void)state;
	for (int i = 0; i < plan->nruns; i++)
		assert_int_equal(plan->runs[i].tset, -1);
	assert_null(json_object_get(j, "tunables"));
	assert_null(json_object_get(json_array_get(json_object_get(j, "plan"), 0), "tunable_set"));
	json_decref(j);
	tb_matrix_plan_free(plan);
}

/* Sets with several pairs at once: rounds still keep each host in one run. */
static void test_rounds(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok("{'name':'r','pairs':[{'client':'left','server':'right'},"
						 "{'client':'router','server':'left'}],'tunables':[" MTU "]}",
						 1);

	(void)state;
	assert_int_equal(plan->nruns, 4);
	mx_check_permutation(plan);
	for (int i = 0; i < plan->nruns; i++)
		assert_int_equal(plan->runs[i].tset, i / 2);
	tb_matrix_plan_free(plan);
}

static const struct {
	const char *tunables; /* the value of "tunables" */
	const char *field;
} bad[] = {
	{"5", "tunables"},
	{"[]", "tunables"},
	{"[{}]", "tunables[0]"},
	{"[3]", "tunables[0]"},
	{"[{'linux':'net.core.rmem_max','values':[1]},{'linux':'x','freebsd':'kern.ipc.maxsockbuf','values':[1]}]",
	 "tunables[1].linux"},
	{"[{'linux':'a.b','freebsd':'bad;name','values':[1]}]", "tunables[0].freebsd"},
	{"[{'linux':'-w.x','values':[1]}]", "tunables[0].linux"},
	{"[{'linux':'a.b','values':[1],'x':1}]", "tunables[0].x"},
	{"[{'mtu':false,'values':[1500]}]", "tunables[0].mtu"},
	{"[{'mtu':true,'linux':'a.b','values':[1500]}]", "tunables[0].linux"},
	{"[{'mtu':true,'values':[1500,70000]}]", "tunables[0].values[1]"},
	{"[{'mtu':true,'values':['1500']}]", "tunables[0].values[0]"},
	{"[{'linux':'a.b','values':['x$y']}]", "tunables[0].values[0]"},
	{"[{'linux':'a.b','values':['x=y']}]", "tunables[0].values[0]"},
	{"[{'linux':'a.b','freebsd':'c.d','values':[{'linux':'1'}]}]", "tunables[0].values[0].freebsd"},
	{"[{'linux':'a.b','values':[{'linux':'1','windows':'2'}]}]", "tunables[0].values[0].windows"},
	{"[{'linux':'a.b','values':[1,1]}]", "tunables[0].values[1]"},
	{"[{'linux':'a.b','values':[]}]", "tunables[0].values"},
	{"[{'linux':'a.b'}]", "tunables[0].values"},
	{"[{'mtu':true,'values':[1500]},{'mtu':true,'values':[1400]}]", "tunables[1]"},
	{"[{'linux':'a.b','values':[1]},{'linux':'a.b','values':[2]}]", "tunables[1]"},
	/* 16 x 16 sets is the most; a third tunable of two values makes 512 */
	{"[{'linux':'a.b','values':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},{'linux':'c.d','values':[1,2,3,4,5,6,7,8,9,10,"
	 "11,12,13,14,15,16]},{'mtu':true,'values':[1500,1400]}]",
	 "tunables"},
	/* an offload: tso or lro alone, its values on and off */
	{"[{'offload':'gso','values':['on']}]", "tunables[0].offload"},
	{"[{'offload':'tso','linux':'a.b','values':['on']}]", "tunables[0].offload"},
	{"[{'offload':'tso','mtu':true,'values':['on']}]", "tunables[0].offload"},
	{"[{'offload':'tso','values':['maybe']}]", "tunables[0].values[0]"},
	{"[{'offload':'lro','values':[1]}]", "tunables[0].values[0]"},
	{"[{'offload':'tso','values':['on']},{'offload':'tso','values':['off']}]", "tunables[1]"},
	/* interrupt placement: irq alone, its values CPU lists */
	{"[{'irq':false,'values':['0']}]", "tunables[0].irq"},
	{"[{'irq':true,'linux':'a.b','values':['0']}]", "tunables[0].irq"},
	{"[{'irq':true,'mtu':true,'values':['0']}]", "tunables[0].irq"},
	{"[{'irq':true,'values':['3-1']}]", "tunables[0].values[0]"},
	{"[{'irq':true,'values':['0;reboot']}]", "tunables[0].values[0]"},
	{"[{'irq':true,'values':[4096]}]", "tunables[0].values[0]"},
	{"[{'irq':true,'values':['0']},{'irq':true,'values':['1']}]", "tunables[1]"},
};

/* Interrupt placement: kind irq, a CPU list for both families, stored as given. */
static void test_irq(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok("{'name':'i','pairs':[{'client':'left','server':'right'}],"
						 "'tunables':[{'irq':true,'values':['0','2-3',1]}]}",
						 1);
	json_t *set = tb_matrix_tunables_set_json(plan, 1), *v0 = json_array_get(json_object_get(set, "values"), 0);
	const json_t *stored = json_array_get(json_object_get(plan->spec, "tunables"), 0);

	(void)state;
	assert_int_equal(plan->nruns, 3);
	assert_string_equal(json_string_value(json_object_get(v0, "kind")), "irq");
	assert_true(json_is_null(json_object_get(v0, "linux")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(v0, "value"), "linux")), "2-3");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v0, "value"), "freebsd")), "2-3");
	assert_true(json_is_true(json_object_get(stored, "irq")));
	assert_string_equal(json_string_value(json_array_get(json_object_get(stored, "values"), 2)), "1");
	json_decref(set);
	tb_matrix_plan_free(plan);
}

/* An offload sweep: its sets, the run's params (kind offload, the feature for
 * both families) and the spec as stored. */
static void test_offload(void **state)
{
	struct tb_matrix_plan *plan = mx_plan_ok("{'name':'o','pairs':[{'client':'left','server':'right'}],"
						 "'tunables':[{'offload':'tso','values':['off','on']},"
						 "{'offload':'lro','values':[{'linux':'off','freebsd':'on'}]}]}",
						 1);
	json_t *set = tb_matrix_tunables_set_json(plan, 0), *v0 = json_array_get(json_object_get(set, "values"), 0);
	json_t *v1 = json_array_get(json_object_get(set, "values"), 1);
	const json_t *stored = json_object_get(plan->spec, "tunables");

	(void)state;
	assert_int_equal(plan->nruns, 2);
	assert_string_equal(json_string_value(json_object_get(v0, "kind")), "offload");
	assert_string_equal(json_string_value(json_object_get(v0, "linux")), "tso");
	assert_string_equal(json_string_value(json_object_get(v0, "freebsd")), "tso");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v0, "value"), "linux")), "off");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v1, "value"), "freebsd")), "on");
	assert_string_equal(json_string_value(json_object_get(json_array_get(stored, 0), "offload")), "tso");
	assert_null(json_object_get(json_array_get(stored, 0), "linux"));
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(stored, 0), "values"), 1)),
			    "on");
	json_decref(set);
	tb_matrix_plan_free(plan);
}

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};

		snprintf(text, sizeof(text), "{'name':'b','pairs':[{'client':'left','server':'right'}],'tunables':%s}",
			 bad[i].tunables);
		if (mx_plan_text(text, mx_inv_sim, 1, &plan, &err) == 0)
			fail_msg("accepted: %s", bad[i].tunables);
		if (strcmp(err.field, bad[i].field) != 0 ||
		    strncmp(err.message, bad[i].field, strlen(bad[i].field)) != 0)
			fail_msg("%s: field %s, message %s; wanted %s", bad[i].tunables, err.field, err.message,
				 bad[i].field);
	}
}

/* concurrency "pairs" puts two runs on one host at once: refused with tunables. */
static void test_pairs_refused(void **state)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_not_equal(
		mx_plan_text("{'name':'p','pairs':[{'client':'left','server':'right'}],'concurrency':'pairs',"
			     "'tunables':[" MTU "]}",
			     mx_inv_sim, 1, &plan, &err),
		0);
	assert_string_equal(err.field, "tunables");
	assert_non_null(strstr(err.message, "concurrency"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets_are_cells),
		cmocka_unit_test(test_params_carry_the_set),
		cmocka_unit_test(test_plan_lists_changes),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_offload),
		cmocka_unit_test(test_irq),
		cmocka_unit_test(test_pairs_refused),
	};

	return cmocka_run_group_tests(tests, mx_setup, mx_teardown);
}
