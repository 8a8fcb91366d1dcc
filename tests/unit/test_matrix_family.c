/*
 * test_matrix_family.c - IPv6 (issue 20 item 8): a link's "address6" in the
 * inventory; a spec's "family" ("ipv4" default, "ipv6", or a list: a
 * dimension) in the plan (the server's address6, -6 / -V in the options,
 * params.family, the run's "family"), its params round trip and the stored
 * spec planning again; a pair without address6 refused naming the field and
 * the host; the command lines of iperf3 and iperf2 over IPv6; bad specs, a
 * line each, with the field they name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iperf2.h"
#include "matrix.h"
#include "mxfix.h"

/* The sim's dumbbell with IPv6 beside IPv4 on left and right; "far" has an IPv4 link only. */
static const char INV[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24, address6: 2001:2:0:10::2/64}\n" MACHINE(
	"right", "host",
	"198.18.0.12") "    links:\n      lan20: {address: 198.19.20.2/24, address6: 2001:2:0:20::2/64}\n" MACHINE("far",
														   "host",
														   "198.18.0.14") "    links:\n      lan30: {address: 198.19.30.2/24}\n";

static struct tb_inventory *inv;

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

static struct tb_matrix_plan *plan_ok(const char *text)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	if (mx_plan_text(text, inv, 1, &plan, &err) != 0)
		fail_msg("%s: %s (%s)", text, err.message, err.field);
	return plan;
}

static const char *str_of(const json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s != NULL ? s : "(none)";
}

/* address6 is read, shown, and must be an IPv6 address with its prefix length. */
static void test_inventory_address6(void **state)
{
	static const char bad[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE(
		"left", "host",
		"198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24, address6: 198.19.10.3/24}\n";
	struct tb_inventory *b = NULL;
	struct tb_error err = {0};
	const struct tb_machine *l = tb_inventory_find(inv, "left"), *f = tb_inventory_find(inv, "far");

	(void)state;
	assert_string_equal(l->links[0].address6, "2001:2:0:10::2/64");
	assert_null(f->links[0].address6);
	assert_int_equal(tb_inventory_load_buffer("b.yaml", bad, strlen(bad), 0, &b, &err), TB_ERR_CONFIG);
	assert_non_null(strstr(err.field, "links.lan10.address6"));
	assert_non_null(strstr(err.message, "IPv6"));
}

/* Without "family" every run is IPv4, as before: no -6, no params.family. */
static void test_default_ipv4(void **state)
{
	struct tb_matrix_plan *plan = plan_ok("{'name':'v4','pairs':[{'client':'left','server':'right'}]}");
	json_t *r = tb_matrix_run_json(&plan->runs[0]);

	(void)state;
	assert_int_equal(plan->nruns, 1);
	assert_string_equal(plan->runs[0].server_address, "198.19.20.2");
	assert_int_equal(plan->runs[0].p.family, 4);
	assert_string_equal(str_of(r, "family"), "ipv4");
	assert_string_equal(str_of(r, "iperf_args"), "-t 10");
	assert_null(json_object_get(json_object_get(r, "params"), "family"));
	assert_null(json_object_get(plan->spec, "family"));
	json_decref(r);
	tb_matrix_plan_free(plan);
}

/* family x tool: the IPv6 runs connect to the server's address6 with -6 (iperf3) or -V (iperf2). */
static void test_family_dimension(void **state)
{
	const char *spec = "{'name':'v6','pairs':[{'client':'left','server':'right'}],'protocols':['tcp','udp'],"
			   "'family':['ipv4','ipv6'],'tool':['iperf3','iperf2'],'duration_s':5}";
	static const char *const want_args[8] = {
		"-t 5",       "-t 5 -i 1 -e",
		"-t 5 -6",    "-t 5 -i 1 -e -V",
		"-t 5 -u",    "-t 5 -i 1 -e -u -l 1470",
		"-t 5 -u -6", "-t 5 -i 1 -e -u -l 1450 -V",
	};
	struct tb_matrix_plan *plan = plan_ok(spec), *again;
	char *stored;

	(void)state;
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->ncells, 8);
	mx_check_permutation(plan);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *x = &plan->runs[i];
		json_t *r = tb_matrix_run_json(x);
		int v6 = (i / 2) % 2 == 1; /* tool innermost, family next */

		assert_int_equal(x->p.family, v6 ? 6 : 4);
		assert_string_equal(x->server_address, v6 ? "2001:2:0:20::2" : "198.19.20.2");
		assert_string_equal(str_of(r, "family"), v6 ? "ipv6" : "ipv4");
		assert_string_equal(str_of(r, "iperf_args"), want_args[i]);
		if (v6)
			assert_string_equal(str_of(json_object_get(r, "params"), "family"), "ipv6");
		else
			assert_null(json_object_get(json_object_get(r, "params"), "family"));
		mx_roundtrip(&x->p);
		{ /* the stored params give the family back */
			struct tb_iperf_params q;
			struct tb_error err = {0};

			assert_int_equal(tb_matrix_params_from_json(json_object_get(r, "params"), &q, &err), 0);
			assert_int_equal(q.family, v6 ? 6 : 4);
		}
		json_decref(r);
	}
	/* the spec as stored keeps the dimension and plans the same runs */
	assert_non_null(json_object_get(plan->spec, "family"));
	stored = json_dumps(plan->spec, 0);
	assert_int_equal(tb_matrix_plan_make(plan->spec, inv, 1, &again, &(struct tb_error){0}), 0);
	assert_int_equal(again->nruns, plan->nruns);
	for (int i = 0; i < plan->nruns; i++) {
		assert_true(mx_same_run(&plan->runs[i], &again->runs[i]));
		assert_int_equal(plan->runs[i].p.family, again->runs[i].p.family);
	}
	free(stored);
	tb_matrix_plan_free(again);
	tb_matrix_plan_free(plan);
}

/* A pair without IPv6 is refused before anything runs, naming the field and the host. */
static void test_refused_without_address6(void **state)
{
	static const struct {
		const char *spec, *field, *host, *inv_field;
	} cases[] = {
		{"{'name':'x','pairs':[{'client':'left','server':'far'}],'family':['ipv4','ipv6']}", "family[1]", "far",
		 "machines.far.links.lan30.address6"},
		{"{'name':'x','pairs':[{'client':'far','server':'right'}],'family':'ipv6'}", "family", "far",
		 "machines.far.links"},
		{"{'name':'x','pairs':[{'client':'left','server':'right'},{'client':'right','server':'far'}],"
		 "'family':['ipv6']}",
		 "family[0]", "far", "machines.far.links.lan30.address6"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};

		assert_int_equal(mx_plan_text(cases[i].spec, inv, 1, &plan, &err), TB_ERR_INVALID);
		assert_null(plan);
		assert_string_equal(err.field, cases[i].field);
		if (strstr(err.message, cases[i].host) == NULL || strstr(err.message, cases[i].inv_field) == NULL)
			fail_msg("%s: %s", cases[i].spec, err.message);
	}
	/* the same pair over IPv4 only plans */
	tb_matrix_plan_free(plan_ok("{'name':'x','pairs':[{'client':'left','server':'far'}],'family':'ipv4'}"));
}

/* An address6 that cannot carry an IPv6 run is refused when the inventory
 * is loaded (so also by --check-config and POST /inventory/check), naming
 * the field, the address and why: an IPv4-mapped or -compatible one
 * (iperf3 -6 to ::ffff:198.19.40.2 connects over IPv4: an "ipv6" result
 * measured over IPv4), a link-local one (no zone), :: and a multicast
 * group.  A prefix with a sign or a blank is no prefix.  Before, such an
 * inventory loaded and the plan used the address. */
static void test_refused_unusable_address6(void **state)
{
	static const struct {
		const char *a6, *why;
	} cases[] = {
		{"::ffff:198.19.40.2/64", "over IPv4"},
		{"::198.19.41.2/96", "over IPv4"},
		{"fe80::2/64", "link-local"},
		{"::/64", "unspecified"},
		{"ff02::1/64", "multicast"},
		{"2001:2::2/+64", "prefix length"},
		{"2001:2::2/ 64", "prefix length"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		struct tb_inventory *u = NULL;
		struct tb_error err = {0};

		snprintf(text, sizeof(text),
			 "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE(
				 "left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24, "
								"address6: '%s'}\n",
			 cases[i].a6);
		if (tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &u, &err) == 0) {
			tb_inventory_free(u);
			fail_msg("address6 %s was taken", cases[i].a6);
		}
		assert_string_equal(err.field, "machines.left.links.lan10.address6");
		if (strstr(err.message, cases[i].why) == NULL)
			fail_msg("%s: %s", cases[i].a6, err.message);
	}
}

/* Bad values of "family", a line each, with the field they name. */
static void test_bad_family(void **state)
{
	static const struct {
		const char *family, *field;
	} cases[] = {
		{"'ipv5'", "family"},           {"6", "family"},  {"['ipv4','ipv4']", "family[1]"},
		{"['ipv4',null]", "family[1]"}, {"[]", "family"}, {"['ipv6',{}]", "family[1]"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[256];
		struct tb_matrix_plan *plan = NULL;
		struct tb_error err = {0};

		snprintf(spec, sizeof(spec), "{'name':'x','pairs':[{'client':'left','server':'right'}],'family':%s}",
			 cases[i].family);
		assert_int_equal(mx_plan_text(spec, inv, 1, &plan, &err), TB_ERR_INVALID);
		if (strcmp(err.field, cases[i].field) != 0)
			fail_msg("%s: field %s, want %s (%s)", cases[i].family, err.field, cases[i].field, err.message);
	}
}

static void joined(const struct tb_argv *a, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 0 ? " " : "", a->v[i]);
}

/* The command lines as they run: iperf3 -c V6 ... -6; iperf 2 -V on both ends. */
static void test_command_lines(void **state)
{
	struct tb_iperf_caps caps;
	struct tb_iperf_params p;
	struct tb_argv a;
	struct tb_error err = {0};
	char s[512];

	(void)state;
	assert_int_equal(tb_iperf_caps_parse("Linux\niperf 3.12 (cJSON 1.7.15)\n", &caps, &err), 0);
	memset(&p, 0, sizeof(p));
	p.duration_s = 5;
	p.parallel = 1;
	p.tos = -1;
	p.interval_s = 1;
	p.family = 6;
	assert_int_equal(tb_iperf_client_argv(&caps, "2001:2:0:20::2", 5201, &p, &a, &err), 0);
	joined(&a, s, sizeof(s));
	assert_string_equal(s, "iperf3 -c 2001:2:0:20::2 -p 5201 -t 5 -6 --connect-timeout 5000 --snd-timeout "
			       "10000 -J");
	p.proto = TB_IPERF_UDP;
	assert_int_equal(tb_iperf2_client_argv("2001:2:0:20::2", 5001, &p, &a, &err), 0);
	joined(&a, s, sizeof(s));
	assert_string_equal(s, "iperf -c 2001:2:0:20::2 -p 5001 -t 5 -i 1 -e -u -l 1450 -V");
	assert_int_equal(tb_iperf2_server_argv(&p, 5001, &a, &err), 0);
	joined(&a, s, sizeof(s));
	assert_string_equal(s, "iperf -s -u -l 1450 -i 1 -e -p 5001 -V");
	p.family = 4; /* IPv4 as before */
	assert_int_equal(tb_iperf2_server_argv(&p, 5001, &a, &err), 0);
	joined(&a, s, sizeof(s));
	assert_string_equal(s, "iperf -s -u -l 1470 -i 1 -e -p 5001");
	p.family = 5;
	assert_int_equal(tb_iperf_params_args(&p, &a, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "family");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inventory_address6),
		cmocka_unit_test(test_default_ipv4),
		cmocka_unit_test(test_family_dimension),
		cmocka_unit_test(test_refused_without_address6),
		cmocka_unit_test(test_bad_family),
		cmocka_unit_test(test_command_lines),
		cmocka_unit_test(test_refused_unusable_address6),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
