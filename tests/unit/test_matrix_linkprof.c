/*
 * test_matrix_linkprof.c - "link_profiles" of a matrix spec
 * (matrix_linkprof.c, issue 20 item 4): named router profiles swept as a
 * dimension inside a tunable set; the profile each run is in, as the run
 * stores it (params.link_profile); the plan's routers, commands and removal;
 * the spec as stored plans again to the same runs; and bad specs, a line
 * each, with the field they name (a delay among them: refused in the plan).
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

/* The sim's dumbbell with the router's FreeBSD persona (mxfix's router has only ubuntu). */
static const char INV[] =
	"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n" MACHINE(
		"right", "host",
		"198.18.0.12") "    links:\n      lan20: {address: 198.19.20.2/24}\n"
			       "  router:\n    role: router\n    os: {freebsd: {address: 198.18.0.13}}\n"
			       "    cannot_delay: \"no netem here\"\n"
			       "    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n";

static struct tb_inventory *inv;

#define PAIR "'pairs':[{'client':'left','server':'right'}]"
#define LP "'link_profiles':[{'name':'20M','rate':'20M','loss_percent':0.5,'queue':50},null]"

static struct tb_matrix_plan *plan_ok(const char *text)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	if (mx_plan_text(text, inv, 1, &plan, &err) != 0)
		fail_msg("%s: %s (%s)", text, err.message, err.field);
	return plan;
}

static int setup(void **state)
{
	(void)state;
	return (inv = mx_load_inv(INV)) != NULL ? mx_setup(state) : -1;
}

static int teardown(void **state)
{
	tb_inventory_free(inv);
	return mx_teardown(state);
}

/* A profile's runs go together inside a tunable set; each run's profile as it stores it. */
static void test_profiles_are_cells(void **state)
{
	struct tb_matrix_plan *plan = plan_ok("{'name':'lp'," PAIR ",'repeats':2," LP
					      ",'tunables':[{'mtu':true,'values':[1500,1400]}]}");
	const int want_tset[8] = {0, 0, 0, 0, 1, 1, 1, 1}, want_lp[8] = {0, 0, 1, 1, 0, 0, 1, 1};
	json_t *a = tb_matrix_linkprof_json(plan, 0), *b = tb_matrix_linkprof_json(plan, 1);

	(void)state;
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->ncells, 4);
	mx_check_permutation(plan);
	for (int i = 0; i < plan->nruns; i++) {
		assert_int_equal(plan->runs[i].tset, want_tset[i]);
		assert_int_equal(plan->runs[i].lprof, want_lp[i]);
	}
	assert_string_equal(json_string_value(json_object_get(a, "name")), "20M");
	assert_true(json_number_value(json_object_get(a, "rate_bps")) == 20e6);
	assert_true(json_number_value(json_object_get(a, "loss_percent")) == 0.5);
	assert_int_equal(json_integer_value(json_object_get(a, "queue")), 50);
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "routers"), 0)), "router");
	assert_int_equal(json_array_size(json_object_get(a, "routers")), 1);
	assert_true(json_is_null(json_object_get(b, "name")));
	assert_int_equal(json_integer_value(json_object_get(b, "index")), 1);
	assert_null(tb_matrix_linkprof_json(plan, 2));
	json_decref(a);
	json_decref(b);
	tb_matrix_plan_free(plan);
}

/* The plan lists the router, each profile's commands and runs, the removal; the stored spec plans again. */
static void test_plan_and_stored(void **state)
{
	struct tb_matrix_plan *plan = plan_ok("{'name':'lp'," PAIR ",'repeats':2," LP "}"), *again = NULL;
	json_t *j = tb_matrix_plan_json(plan), *l = json_object_get(j, "link_profiles");
	const json_t *p0 = json_array_get(json_object_get(l, "profiles"), 0),
		     *p1 = json_array_get(json_object_get(l, "profiles"), 1);
	char *text = json_dumps(plan->spec, JSON_COMPACT);
	struct tb_error err = {0};
	json_t *pj = tb_matrix_params_json(&plan->runs[0].p);
	struct tb_iperf_params back;

	(void)state;
	assert_string_equal(json_string_value(json_array_get(json_object_get(l, "routers"), 0)), "router");
	assert_string_equal(json_string_value(json_array_get(json_object_get(p0, "commands"), 0)),
			    "ipfw -q pipe 1 config bw 20000000bit/s plr 0.005000 queue 50");
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(p1, "commands"), 0)), "delete"));
	assert_int_equal(json_integer_value(json_object_get(p0, "first_seq")), 0);
	assert_int_equal(json_integer_value(json_object_get(p0, "last_seq")), 1);
	assert_int_equal(json_integer_value(json_object_get(p1, "first_seq")), 2);
	assert_non_null(strstr(json_string_value(json_object_get(l, "remove")), "crash"));
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(json_object_get(j, "plan"), 2), "link_profile")), 1);
	for (char *c = text; *c; c++)
		if (*c == '"')
			*c = '\'';
	assert_int_equal(mx_plan_text(text, inv, 1, &again, &err), 0);
	assert_int_equal(again->nruns, plan->nruns);
	for (int i = 0; i < plan->nruns; i++) {
		assert_true(mx_same_run(&again->runs[i], &plan->runs[i]));
		assert_int_equal(again->runs[i].lprof, plan->runs[i].lprof);
	}
	/* a run's params with its profile are what the runner reads back */
	json_object_set_new(pj, "link_profile", tb_matrix_linkprof_json(plan, 0));
	assert_int_equal(tb_matrix_params_from_json(pj, &back, &err), 0);
	json_decref(pj);
	free(text);
	json_decref(j);
	tb_matrix_plan_free(again);
	tb_matrix_plan_free(plan);
}

/* Without link_profiles nothing changes. */
static void test_none(void **state)
{
	struct tb_matrix_plan *plan = plan_ok("{'name':'n'," PAIR ",'repeats':2}");
	json_t *j = tb_matrix_plan_json(plan);

	(void)state;
	for (int i = 0; i < plan->nruns; i++)
		assert_int_equal(plan->runs[i].lprof, -1);
	assert_null(json_object_get(j, "link_profiles"));
	assert_null(tb_matrix_linkprof_json(plan, 0));
	json_decref(j);
	tb_matrix_plan_free(plan);
}

static const struct {
	const char *spec;
	const char *field;
	const char *says;
} bad[] = {
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'geo','rate':'50M','loss_percent':0.5,'delay_ms':600}]}",
	 "link_profiles[0].delay_ms", "router router cannot delay packets (its inventory entry says: no netem here)"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a','bogus':1}]}", "link_profiles[0].bogus", "unknown"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'rate':'1M'}]}", "link_profiles[0].name", "required"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a;b'}]}", "link_profiles[0].name", "letters"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a'},{'name':'a'}]}", "link_profiles[1]", "repeats"},
	{"{'name':'x'," PAIR ",'link_profiles':[null,null]}", "link_profiles[1]", "repeats"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a','loss_percent':101}]}", "link_profiles[0].loss_percent",
	 "0..100"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a','queue':1}]}", "link_profiles[0].queue", "2..100"},
	{"{'name':'x'," PAIR ",'link_profiles':[{'name':'a','rate':'fast'}]}", "link_profiles[0].rate", ""},
	{"{'name':'x'," PAIR ",'link_profiles':[]}", "link_profiles", "1..8"},
	{"{'name':'x'," PAIR ",'link_profiles':{'name':'a'}}", "link_profiles", "list"},
	{"{'name':'x','pairs':[{'client':'left','server':'right'},{'client':'right','server':'left'}],"
	 "'link_profiles':[null]}",
	 "link_profiles", "concurrency"},
	{"{'name':'x','pairs':[{'client':'left','server':'right','link':'lan20'}],'link_profiles':[{'name':'a'}]}",
	 NULL, NULL}, /* accepted: the router is on lan20 */
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};
		int rc = mx_plan_text(bad[i].spec, inv, 1, &plan, &err);

		if (bad[i].field == NULL) {
			if (rc != 0)
				fail_msg("refused: %s: %s", bad[i].spec, err.message);
			tb_matrix_plan_free(plan);
			continue;
		}
		if (rc == 0)
			fail_msg("accepted: %s", bad[i].spec);
		if (strcmp(err.field, bad[i].field) != 0 || strstr(err.message, bad[i].says) == NULL)
			fail_msg("%s: field %s, message %s; wanted %s, \"%s\"", bad[i].spec, err.field, err.message,
				 bad[i].field, bad[i].says);
	}
}

/* A Linux router without interfaces for its links (mxfix's sim inventory) is refused, naming it. */
static void test_linux_router_without_ifnames(void **state)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_not_equal(mx_plan_text("{'name':'x'," PAIR "," LP "}", mx_inv_sim, 1, &plan, &err), 0);
	assert_string_equal(err.field, "link_profiles");
	assert_non_null(strstr(err.message, "router router (Linux: tc) names no interface"));
}

/* A Linux router: tc on each link interface in the plan; a delay is planned (no cannot_delay). */
static void test_linux_router(void **state)
{
	static const char linv[] =
		"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n" MACHINE(
			"right", "host",
			"198.18.0.12") "    links:\n      lan20: {address: 198.19.20.2/24}\n"
				       "  router:\n    role: router\n    os: {debian: {address: 198.18.0.13}}\n"
				       "    links:\n      lan10: {address: 198.19.10.1/24, ifname: {debian: eth1}}\n"
				       "      lan20: {address: 198.19.20.1/24, ifname: {debian: eth2}}\n";
	struct tb_inventory *li = mx_load_inv(linv);
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	json_t *j, *p0, *p1;

	(void)state;
	assert_non_null(li);
	if (mx_plan_text("{'name':'x'," PAIR ",'link_profiles':[{'name':'20M','rate':'20M','queue':20},"
			 "{'name':'geo','rate':'50M','loss_percent':0.5,'delay_ms':600},null]}",
			 li, 1, &plan, &err) != 0)
		fail_msg("%s (%s)", err.message, err.field);
	j = tb_matrix_plan_json(plan);
	p0 = json_object_get(json_array_get(json_object_get(json_object_get(j, "link_profiles"), "profiles"), 0),
			     "commands");
	p1 = json_object_get(json_array_get(json_object_get(json_object_get(j, "link_profiles"), "profiles"), 1),
			     "commands");
	assert_int_equal(json_array_size(p0), 3);
	assert_string_equal(
		json_string_value(json_array_get(p0, 0)),
		"router: tc qdisc replace dev eth1 root handle 1: tbf rate 20000000bit burst 32768 limit 63048");
	assert_string_equal(
		json_string_value(json_array_get(p0, 1)),
		"router: tc qdisc replace dev eth2 root handle 1: tbf rate 20000000bit burst 32768 limit 63048");
	assert_string_equal(
		json_string_value(json_array_get(p1, 0)),
		"router: tc qdisc replace dev eth1 root handle 1: netem delay 600ms loss 0.5% rate 50000000bit");
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(j, "link_profiles"), "remove")),
			       "tc qdisc del"));
	json_decref(j);
	tb_matrix_plan_free(plan);
	tb_inventory_free(li);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles_are_cells),
		cmocka_unit_test(test_plan_and_stored),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_linux_router_without_ifnames),
		cmocka_unit_test(test_linux_router),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
