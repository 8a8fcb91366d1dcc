/*
 * test_matrix.c - the matrix planner (matrix.h) and summary statistics
 * (stats.h): a table of bad specs -> (error code, field, message), good
 * specs -> run and cell counts, exact orders, the shuffle, a property test
 * over random valid specs, the params JSON round trip, a 10,000-run plan
 * (timed, printed, not asserted) and stats against hand-computed values.
 * Specs are written with ' for " so that a case fits on a line.
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
#include "stats.h"

/* ---- fixtures ---- */

#define MACHINE(name, role, addr) "  " name ":\n    role: " role "\n    os: {ubuntu: {address: " addr "}}\n"

/* The simulated testbed (deploy/sim): a dumbbell left -- router -- right, and a relay. */
static const char INV_SIM[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
	MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n"
	MACHINE("right", "host", "198.18.0.12") "    links:\n      lan20: {address: 198.19.20.2/24}\n"
	MACHINE("router", "router", "198.18.0.13")
	"    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n"
	MACHINE("relay", "relay", "198.18.0.14");

/* The same with right's links missing. */
static const char INV_NOLINKS[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
	MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n"
	MACHINE("right", "host", "198.18.0.12")
	MACHINE("router", "router", "198.18.0.13")
	"    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n";

static struct tb_inventory *inv_sim, *inv_nolinks;

static struct tb_inventory *load_inv(const char *text)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	if (tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err) != 0) {
		fprintf(stderr, "inventory: %s\n", err.message);
		return NULL;
	}
	return inv;
}

static int setup(void **state)
{
	(void)state;
	inv_sim = load_inv(INV_SIM);
	inv_nolinks = load_inv(INV_NOLINKS);
	return inv_sim != NULL && inv_nolinks != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tb_inventory_free(inv_sim);
	tb_inventory_free(inv_nolinks);
	return 0;
}

/* JSON with ' for ". */
static json_t *spec_of(const char *text)
{
	char *s = strdup(text);
	json_error_t je;
	json_t *j;

	assert_non_null(s);
	for (char *p = s; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, s);
	free(s);
	assert_non_null(j);
	return j;
}

static int plan_text(const char *text, const struct tb_inventory *inv, uint64_t seed, struct tb_matrix_plan **plan,
		     struct tb_error *err)
{
	json_t *spec = spec_of(text);
	int rc = tb_matrix_plan_make(spec, inv, seed, plan, err);

	json_decref(spec);
	return rc;
}

static struct tb_matrix_plan *plan_ok(const char *text, uint64_t seed)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	if (plan_text(text, inv_sim, seed, &plan, &err) != 0)
		fprintf(stderr, "unexpected error: %s: %s [%s]\n", err.field, err.message, text);
	assert_non_null(plan);
	return plan;
}

/* ---- bad specs ---- */

#define P "'pairs':[{'client':'left','server':'right'}]"
#define B "{'name':'t'," P
#define UDP ",'protocols':['udp']"
#define NAME65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct bad_case {
	int nolinks;          /* 1: INV_NOLINKS */
	const char *spec;
	const char *code;     /* tb_err_name */
	const char *field;
	const char *message;  /* a substring */
};

static const struct bad_case bad[] = {
	/* shape, unknown keys, os */
	{0, "[]", "invalid_field", "", "a matrix spec must be a JSON object with name and pairs, got [] (an empty list)"},
	{0, "'baseline'", "invalid_field", "", "must be a JSON object"},
	{0, B ",'colour':'red'}", "unknown_field", "colour", "colour: unknown field; allowed here: name, pairs, groups, os"},
	{0, B ",'Duration_s':10}", "unknown_field", "Duration_s", "unknown field"},
	{0, B ",'os':[{'left':'freebsd','right':'freebsd'}]}", "invalid_field", "os[0].left",
	 "os[0].left: left has no OS \"freebsd\"; its OSes: ubuntu"},
	{0, B ",'os':{}}", "invalid_field", "os", "os must be a list of 1..16 OS combinations [{machine: OS}, ...], got an object"},
	/* name */
	{0, "{" P "}", "invalid_field", "name", "name is required: 1..64 printable characters"},
	{0, "{'name':''," P "}", "invalid_field", "name", "name must be 1..64 printable characters"},
	{0, "{'name':'" NAME65 "'," P "}", "invalid_field", "name", "at most 64 bytes of UTF-8, no control characters"},
	{0, "{'name':'a\\u0001b'," P "}", "invalid_field", "name", "no control characters), got \"a?b\""},
	{0, "{'name':'a\\nb'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u0000b'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u0085b'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u007fb'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':3," P "}", "invalid_field", "name", "got 3"},
	/* pairs */
	{0, "{'name':'t'}", "invalid_field", "pairs", "pairs is required: a list of 1..64"},
	{0, "{'name':'t','pairs':[]}", "invalid_field", "pairs", "pairs must be a list of 1..64 {\"client\": machine"},
	{0, "{'name':'t','pairs':{'client':'left'}}", "invalid_field", "pairs", "got an object"},
	{0, "{'name':'t','pairs':['left']}", "invalid_field", "pairs[0]", "pairs[0] must be an object"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'right','colour':1}]}", "unknown_field",
	 "pairs[0].colour", "pairs[0].colour: unknown field; allowed here: client, server, link"},
	{0, "{'name':'t','pairs':[{'server':'right'}]}", "invalid_field", "pairs[0].client",
	 "pairs[0].client is required: a machine with role host or router (left, right, router)"},
	{0, "{'name':'t','pairs':[{'client':'left'}]}", "invalid_field", "pairs[0].server", "is required"},
	{0, "{'name':'t','pairs':[{'client':'nope','server':'right'}]}", "invalid_field", "pairs[0].client",
	 "pairs[0].client: no machine \"nope\" in the inventory; hosts and routers: left, right, router"},
	{0, "{'name':'t','pairs':[{'client':5,'server':'right'}]}", "invalid_field", "pairs[0].client",
	 "pairs[0].client must be a machine name (left, right, router), got 5"},
	{0, "{'name':'t','pairs':[{'client':'relay','server':'right'}]}", "invalid_field", "pairs[0].client",
	 "relay has role relay and no links; a pair needs a machine with role host or router, or a relay with a link"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'relay'}]}", "invalid_field", "pairs[0].server",
	 "has role relay"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'left'}]}", "invalid_field", "pairs[0].server",
	 "pairs[0].server must differ from pairs[0].client (both left)"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'right','link':'lan10'}]}", "invalid_field",
	 "pairs[0].link", "pairs[0].link must be one of right's links (lan20), got \"lan10\""},
	{0, "{'name':'t','pairs':[{'client':'left','server':'router','link':7}]}", "invalid_field",
	 "pairs[0].link", "one of router's links (lan10, lan20), got 7"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'right'},{'client':'right','server':'nope'}]}",
	 "invalid_field", "pairs[1].server", "pairs[1].server: no machine \"nope\""},
	{1, B "}", "invalid_field", "pairs[0].server", "right has no links: add one under links in the inventory"},
	/* protocols, directions */
	{0, B ",'protocols':[]}", "invalid_field", "protocols", "protocols must be a non-empty list of tcp | udp, got []"},
	{0, B ",'protocols':'tcp'}", "invalid_field", "protocols", "non-empty list of tcp | udp, got \"tcp\""},
	{0, B ",'protocols':['tcp','sctp']}", "invalid_field", "protocols[1]",
	 "protocols[1] must be one of tcp | udp, got \"sctp\""},
	{0, B ",'protocols':['udp','udp']}", "invalid_field", "protocols[1]",
	 "protocols[1] repeats protocols[0] (\"udp\"); list each of tcp | udp at most once"},
	{0, B ",'protocols':['tcp','udp','tcp']}", "invalid_field", "protocols", "each of tcp | udp at most once"},
	{0, B ",'directions':[]}", "invalid_field", "directions", "non-empty list of forward | reverse | bidir"},
	{0, B ",'directions':['sideways']}", "invalid_field", "directions[0]",
	 "directions[0] must be one of forward | reverse | bidir, got \"sideways\""},
	{0, B ",'directions':['forward','reverse','forward']}", "invalid_field", "directions[2]",
	 "directions[2] repeats directions[0]"},
	/* duration_s */
	{0, B ",'duration_s':0}", "invalid_field", "duration_s", "duration_s must be 1..3600 seconds, got 0"},
	{0, B ",'duration_s':3601}", "invalid_field", "duration_s", "must be 1..3600 seconds, got 3601"},
	{0, B ",'duration_s':'10'}", "invalid_field", "duration_s", "must be a whole number 1..3600 seconds, got \"10\""},
	{0, B ",'duration_s':10.5}", "invalid_field", "duration_s", "whole number"},
	{0, B ",'duration_s':[10,0]}", "invalid_field", "duration_s[1]", "duration_s[1] must be 1..3600 seconds, got 0"},
	{0, B ",'duration_s':[10,5,10]}", "invalid_field", "duration_s[2]",
	 "duration_s[2] repeats duration_s[0] (10); a sweep lists each value once"},
	{0, B ",'duration_s':[]}", "invalid_field", "duration_s", "or a list of 1..64 of them (a sweep), got [] (an empty list)"},
	{0, B ",'duration_s':[null]}", "invalid_field", "duration_s[0]", "got null"},
	/* iperf: shape */
	{0, B ",'iperf':[]}", "invalid_field", "iperf", "iperf must be an object"},
	{0, B ",'iperf':{'colour':1}}", "unknown_field", "iperf.colour",
	 "iperf.colour: unknown field; allowed here: parallel, length, window, bitrate, udp_bitrate"},
	{0, B ",'iperf':{'parallel':[]}}", "invalid_field", "iperf.parallel", "a list of 1..64 of them (a sweep), got []"},
	{0, B ",'iperf':{'parallel':[[1]]}}", "invalid_field", "iperf.parallel[0]", "whole number 1..128, got a list"},
	{0, B ",'iperf':{'parallel':{}}}", "invalid_field", "iperf.parallel", "got an object"},
	/* parallel, omit_s, tos */
	{0, B ",'iperf':{'parallel':[1,0]}}", "invalid_field", "iperf.parallel[1]", "iperf.parallel[1] must be 1..128, got 0"},
	{0, B ",'iperf':{'parallel':129}}", "invalid_field", "iperf.parallel", "iperf.parallel must be 1..128, got 129"},
	{0, B ",'iperf':{'parallel':'2'}}", "invalid_field", "iperf.parallel", "must be a whole number 1..128, got \"2\""},
	{0, B ",'iperf':{'parallel':[2,4,2]}}", "invalid_field", "iperf.parallel[2]", "repeats iperf.parallel[0] (2)"},
	{0, B ",'iperf':{'parallel':[null,1]}}", "invalid_field", "iperf.parallel[1]", "repeats iperf.parallel[0]"},
	{0, B ",'iperf':{'omit_s':61}}", "invalid_field", "iperf.omit_s", "iperf.omit_s must be 0..60 seconds, got 61"},
	{0, B ",'iperf':{'omit_s':-1}}", "invalid_field", "iperf.omit_s", "must be 0..60 seconds, got -1"},
	{0, B ",'iperf':{'tos':256}}", "invalid_field", "iperf.tos", "iperf.tos must be 0..255, got 256"},
	{0, B ",'iperf':{'tos':[0,-1]}}", "invalid_field", "iperf.tos[1]", "must be 0..255, got -1"},
	/* length, window */
	{0, B ",'iperf':{'length':0}}", "invalid_field", "iperf.length", "iperf.length must be 1..1048576 bytes"},
	{0, B ",'iperf':{'length':1048577}}", "invalid_field", "iperf.length", "1..1048576 bytes: a whole number or a size like \"256K\""},
	{0, B ",'iperf':{'length':'2M'}}", "invalid_field", "iperf.length", "got \"2M\""},
	{0, B UDP ",'iperf':{'length':65508}}", "invalid_field", "iperf.length",
	 "iperf.length is 65508 bytes; UDP runs (protocols has udp) take at most 65507"},
	{0, B ",'protocols':['tcp','udp'],'iperf':{'length':[1400,'128K']}}", "invalid_field", "iperf.length[1]",
	 "iperf.length[1] is 131072 bytes; UDP runs"},
	{0, B ",'iperf':{'window':0}}", "invalid_field", "iperf.window", "iperf.window must be 1..536870912 bytes"},
	{0, B ",'iperf':{'window':'1G'}}", "invalid_field", "iperf.window", "K, M, G = 1024 bytes), got \"1G\""},
	{0, B ",'iperf':{'window':536870913}}", "invalid_field", "iperf.window", "got 536870913"},
	{0, B ",'iperf':{'window':'4X'}}", "invalid_field", "iperf.window", "got \"4X\""},
	{0, B ",'iperf':{'window':'4.5M'}}", "invalid_field", "iperf.window", "got \"4.5M\""},
	{0, B ",'iperf':{'window':'4m'}}", "invalid_field", "iperf.window", "got \"4m\""},
	{0, B ",'iperf':{'window':-1}}", "invalid_field", "iperf.window", "got -1"},
	{0, B ",'iperf':{'window':['1M',1048576]}}", "invalid_field", "iperf.window[1]", "repeats iperf.window[0]"},
	/* bitrates */
	{0, B ",'iperf':{'bitrate':'fast'}}", "invalid_field", "iperf.bitrate",
	 "iperf.bitrate must be a bitrate like \"100M\", \"1.5G\" or \"0\" (unlimited)"},
	{0, B ",'iperf':{'bitrate':'1.M'}}", "invalid_field", "iperf.bitrate", "got \"1.M\""},
	{0, B ",'iperf':{'bitrate':'.5M'}}", "invalid_field", "iperf.bitrate", "got \".5M\""},
	{0, B ",'iperf':{'bitrate':'100m'}}", "invalid_field", "iperf.bitrate", "K, M, G or T (1000-based)"},
	{0, B ",'iperf':{'bitrate':'1MM'}}", "invalid_field", "iperf.bitrate", "got \"1MM\""},
	{0, B ",'iperf':{'bitrate':1.5}}", "invalid_field", "iperf.bitrate", "or a whole number of bits/s, got 1.5"},
	{0, B ",'iperf':{'udp_bitrate':-5}}", "invalid_field", "iperf.udp_bitrate", "got -5"},
	{0, B ",'iperf':{'udp_bitrate':'123456789012345678901'}}", "invalid_field", "iperf.udp_bitrate", "at most 20 characters"},
	{0, B ",'iperf':{'bitrate':['1M','1000K']}}", "invalid_field", "iperf.bitrate[1]",
	 "iperf.bitrate[1] repeats iperf.bitrate[0] (\"1000K\")"},
	{0, B ",'iperf':{'udp_bitrate':['10M',10000000]}}", "invalid_field", "iperf.udp_bitrate[1]", "repeats"},
	/* congestion, zerocopy, affinity */
	{0, B ",'iperf':{'congestion':'Cubic'}}", "invalid_field", "iperf.congestion",
	 "iperf.congestion must be a congestion control name: 1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'congestion':'a_very_long_cc_name'}}", "invalid_field", "iperf.congestion", "1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'congestion':''}}", "invalid_field", "iperf.congestion", "got \"\""},
	{0, B ",'iperf':{'congestion':'cubic;reboot'}}", "invalid_field", "iperf.congestion", "1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'zerocopy':'yes'}}", "invalid_field", "iperf.zerocopy", "iperf.zerocopy must be true or false, got \"yes\""},
	{0, B ",'iperf':{'zerocopy':[true,true]}}", "invalid_field", "iperf.zerocopy[1]", "repeats iperf.zerocopy[0] (true)"},
	{0, B ",'iperf':{'affinity':'1024'}}", "invalid_field", "iperf.affinity",
	 "iperf.affinity must be \"n\" or \"n,m\" with n and m CPU numbers 0..1023, got \"1024\""},
	{0, B ",'iperf':{'affinity':'1,2,3'}}", "invalid_field", "iperf.affinity", "\"n\" or \"n,m\""},
	{0, B ",'iperf':{'affinity':'01'}}", "invalid_field", "iperf.affinity", "got \"01\""},
	{0, B ",'iperf':{'affinity':'1,'}}", "invalid_field", "iperf.affinity", "got \"1,\""},
	{0, B ",'iperf':{'affinity':'a'}}", "invalid_field", "iperf.affinity", "got \"a\""},
	{0, B ",'iperf':{'affinity':['2','0,1024']}}", "invalid_field", "iperf.affinity[1]", "got \"0,1024\""},
	{0, B ",'iperf':{'affinity':-1}}", "invalid_field", "iperf.affinity", "got -1"},
	/* repeats, order, seed, pause_s */
	{0, B ",'repeats':0}", "invalid_field", "repeats", "repeats must be 1..1000, got 0"},
	{0, B ",'repeats':1001}", "invalid_field", "repeats", "repeats must be 1..1000, got 1001"},
	{0, B ",'repeats':[3]}", "invalid_field", "repeats", "whole number 1..1000, got a list"},
	{0, B ",'order':'random'}", "invalid_field", "order",
	 "order must be one of sequential | interleaved | shuffled, got \"random\""},
	{0, B ",'seed':5}", "invalid_field", "seed", "seed is only used with order \"shuffled\" (order is \"sequential\")"},
	{0, B ",'order':'interleaved','seed':5}", "invalid_field", "seed", "(order is \"interleaved\")"},
	{0, B ",'order':'shuffled','seed':-1}", "invalid_field", "seed", "seed must be 0..9007199254740992, got -1"},
	{0, B ",'order':'shuffled','seed':9007199254740993}", "invalid_field", "seed", "0..9007199254740992"},
	{0, B ",'order':'shuffled','seed':'5'}", "invalid_field", "seed", "whole number 0..9007199254740992"},
	{0, B ",'pause_s':-0.5}", "invalid_field", "pause_s", "pause_s must be a number of seconds 0..3600 (ms resolution), got -0.5"},
	{0, B ",'pause_s':3601}", "invalid_field", "pause_s", "0..3600"},
	{0, B ",'pause_s':'1'}", "invalid_field", "pause_s", "got \"1\""},
	/* caps */
	{0, B ",'caps':[]}", "invalid_field", "caps", "caps must be an object"},
	{0, B ",'caps':{'colour':1}}", "unknown_field", "caps.colour", "allowed here: total_s, duration_s, bitrate"},
	{0, B ",'caps':{'total_s':0}}", "invalid_field", "caps.total_s", "caps.total_s must be 1..31536000 seconds, got 0"},
	{0, B ",'caps':{'duration_s':0}}", "invalid_field", "caps.duration_s", "caps.duration_s must be 1..3600"},
	{0, B ",'protocols':['tcp','udp'],'directions':['forward','reverse'],'repeats':3,'caps':{'total_s':100}}",
	 "invalid_field", "caps.total_s", "an estimated 127.2 s (12 runs in 12 rounds, each round its longest omit + duration + 0.6 s, plus pauses), more than caps.total_s 100"},
	{0, B ",'repeats':2,'pause_s':1,'iperf':{'omit_s':2},'caps':{'total_s':26}}", "invalid_field", "caps.total_s",
	 "estimated 26.2 s"},
	{0, B ",'caps':{'duration_s':5}}", "invalid_field", "duration_s", "duration_s is 10, more than caps.duration_s 5"},
	{0, B ",'duration_s':[10,120],'caps':{'duration_s':60}}", "invalid_field", "duration_s[1]",
	 "duration_s[1] is 120, more than caps.duration_s 60"},
	{0, B ",'iperf':{'bitrate':'10G'},'caps':{'bitrate':'1G'}}", "invalid_field", "iperf.bitrate",
	 "iperf.bitrate is \"10G\", more than caps.bitrate \"1G\""},
	{0, B ",'iperf':{'bitrate':['100M',2000000000]},'caps':{'bitrate':'1G'}}", "invalid_field", "iperf.bitrate[1]",
	 "is \"2000000000\", more than caps.bitrate"},
	{0, B UDP ",'iperf':{'udp_bitrate':'0'},'caps':{'bitrate':'1G'}}", "invalid_field", "iperf.udp_bitrate",
	 "iperf.udp_bitrate is \"0\" (unlimited), which caps.bitrate \"1G\" does not allow for UDP"},
	{0, B UDP ",'caps':{'bitrate':'500K'}}", "invalid_field", "iperf.udp_bitrate",
	 "iperf.udp_bitrate unset sends UDP at iperf3's default 1M, more than caps.bitrate \"500K\""},
	{0, B UDP ",'iperf':{'udp_bitrate':['100M','1.5G']},'caps':{'bitrate':'1G'}}", "invalid_field",
	 "iperf.udp_bitrate[1]", "iperf.udp_bitrate[1] is \"1.5G\", more than caps.bitrate \"1G\""},
	{0, B ",'caps':{'bitrate':'0'}}", "invalid_field", "caps.bitrate", "caps.bitrate must be more than 0"},
	{0, B ",'caps':{'bitrate':'lots'}}", "invalid_field", "caps.bitrate", "caps.bitrate must be a bitrate like"},
	/* the run count */
	{0, B ",'protocols':['tcp','udp'],'directions':['forward','reverse','bidir'],'repeats':1000,"
	    "'iperf':{'parallel':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}}",
	 "invalid_field", "", "the matrix expands to 120000 runs (120 cells x 1000 repeats); at most 100000"},
};

static void test_bad_specs(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_matrix_plan *plan = (struct tb_matrix_plan *)1;
		struct tb_error err = {0};
		int rc = plan_text(bad[i].spec, bad[i].nolinks ? inv_nolinks : inv_sim, 7, &plan, &err);

		if (rc == 0 || plan != NULL || err.code != rc || strcmp(tb_err_name(rc), bad[i].code) != 0 ||
		    strcmp(err.field, bad[i].field) != 0 || strstr(err.message, bad[i].message) == NULL) {
			fprintf(stderr, "case %zu: %s\n  got      %s field \"%s\": %s\n  expected %s field \"%s\": ...%s...\n",
				i, bad[i].spec, tb_err_name(rc), err.field, err.message, bad[i].code, bad[i].field,
				bad[i].message);
			failures++;
		}
		if (rc == 0)
			tb_matrix_plan_free(plan);
	}
	printf("%zu bad specs\n", sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(failures, 0);
}

/* Limits that take too much text for a table line. */
static void test_bad_sizes(void **state)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	json_t *spec, *pairs, *iperf;
	static const char *const keys[] = {"parallel", "length", "window", "bitrate", "udp_bitrate",
					   "omit_s", "tos", "affinity", "congestion"};

	(void)state;
	/* 65 pairs */
	spec = spec_of(B "}");
	pairs = json_object_get(spec, "pairs");
	for (int i = 0; i < 64; i++)
		json_array_append_new(pairs, json_deep_copy(json_array_get(pairs, 0)));
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "pairs");
	assert_non_null(strstr(err.message, "pairs has 65 entries; at most 64"));
	assert_null(plan);
	/* 64 pairs are fine (the same pair twice is allowed) */
	json_array_remove(pairs, 0);
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), 0);
	assert_int_equal(plan->nruns, 64);
	tb_matrix_plan_free(plan);
	while (json_array_size(pairs) > 1)
		json_array_remove(pairs, 0);
	/* every sweep at its maximum: counted with overflow checks and refused
	 * before anything is allocated */
	iperf = json_object();
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		json_t *a = json_array();

		for (int i = 0; i < (k == 5 ? 61 : 64); i++) {   /* omit_s: 0..60 */
			char s[16];

			snprintf(s, sizeof(s), k == 8 ? "c%d" : "%d", i + 1);
			json_array_append_new(a, k >= 3 && k != 5 && k != 6 ? json_string(s) : json_integer(k == 5 ? i : i + 1));
		}
		json_object_set_new(iperf, keys[k], a);
	}
	json_object_set_new(iperf, "zerocopy", json_pack("[b,b]", 0, 1));
	json_object_set_new(spec, "iperf", iperf);
	json_object_set_new(spec, "protocols", json_pack("[s,s]", "tcp", "udp"));
	json_object_set_new(spec, "directions", json_pack("[s,s,s]", "forward", "reverse", "bidir"));
	json_object_set_new(spec, "repeats", json_integer(1000));
	/* 2 x 3 x 64^7 x 61 x 2 cells x 1000 repeats: fits 64 bits, said exactly */
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_null(plan);
	assert_string_equal(err.field, "");
	assert_non_null(strstr(err.message, "the matrix expands to 3219370046128128000 runs "
					    "(3219370046128128 cells x 1000 repeats); at most 100000"));
	/* and 64 pairs x 64 durations more: past 64 bits */
	{
		json_t *d = json_array();

		for (int i = 0; i < 64; i++)
			json_array_append_new(d, json_integer(i + 1));
		json_object_set_new(spec, "duration_s", d);
		for (int i = 0; i < 63; i++)
			json_array_append_new(pairs, json_deep_copy(json_array_get(pairs, 0)));
	}
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_null(plan);
	assert_non_null(strstr(err.message, "the matrix expands to more than 18446744073709551615 runs"));
	assert_non_null(strstr(err.message, "at most 100000"));
	/* 65 values in a sweep */
	{
		json_t *a = json_array();

		for (int i = 0; i < 65; i++)
			json_array_append_new(a, json_integer(i + 1));
		json_object_set_new(iperf, "parallel", a);
	}
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "iperf.parallel");
	assert_non_null(strstr(err.message, "or a list of 1..64 of them (a sweep), got a list of 65"));
	json_decref(spec);
}

/* ---- good specs ---- */

#define BASELINE "{'name':'baseline','pairs':[{'client':'left','server':'right'}],'protocols':['tcp','udp']," \
		 "'directions':['forward','reverse'],'duration_s':10,'repeats':3,'iperf':{'udp_bitrate':'0'}"

static const struct {
	const char *spec;
	int runs, cells;
} good[] = {
	{B "}", 1, 1},
	{BASELINE "}", 12, 4},
	{BASELINE ",'order':'interleaved'}", 12, 4},
	{BASELINE ",'order':'shuffled','seed':1}", 12, 4},
	/* udp_bitrate while protocols lacks udp: ignored */
	{B ",'iperf':{'udp_bitrate':['1M','2M','3M']}}", 1, 1},
	/* each protocol its own bitrate axis: 3 TCP cells + 2 UDP cells */
	{B ",'protocols':['tcp','udp'],'iperf':{'bitrate':['1M','2M','3M'],'udp_bitrate':['10M','20M']}}", 5, 5},
	{"{'name':'t','pairs':[{'client':'left','server':'right'},{'client':'right','server':'left'}],"
	 "'directions':['forward','reverse','bidir'],'duration_s':[5,10],'repeats':2}", 24, 12},
	{B ",'iperf':{'parallel':[1,2,4],'window':[null,'4M'],'tos':[0,16]}}", 12, 12},
	{B ",'protocols':['udp'],'directions':['bidir'],'iperf':{'udp_bitrate':'100M','length':65507}}", 1, 1},
	/* TCP unset or unlimited bitrate under a bitrate cap: allowed (congestion-controlled) */
	{B ",'iperf':{'bitrate':[null,'0','1G']},'caps':{'bitrate':'1G','total_s':33,'duration_s':10}}", 3, 3},
	{B ",'protocols':['udp'],'caps':{'bitrate':'1M'}}", 1, 1},
	/* null: the default */
	{B ",'order':null,'seed':null,'repeats':null,'caps':null,'iperf':{'window':null,'parallel':null}}", 1, 1},
	{B ",'iperf':{'length':'128K','window':[262144,'1M'],'bitrate':125000000,'affinity':[3,'0,1'],"
	   "'congestion':['cubic','bbr'],'zerocopy':[false,true],'omit_s':[0,2]}}", 32, 32},
	{B ",'os':null}", 1, 1},
	{"{'name':'bulk','pairs':[{'client':'left','server':'right'}],'repeats':1000,'protocols':['tcp','udp'],"
	 "'directions':['forward','reverse','bidir'],'duration_s':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}", 96000, 96},
};

static void test_good_specs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct tb_matrix_plan *plan = plan_ok(good[i].spec, 5);

		if (plan->nruns != good[i].runs || plan->ncells != good[i].cells)
			fprintf(stderr, "good %zu: %d runs %d cells, expected %d %d\n", i, plan->nruns, plan->ncells,
				good[i].runs, good[i].cells);
		assert_int_equal(plan->nruns, good[i].runs);
		assert_int_equal(plan->ncells, good[i].cells);
		tb_matrix_plan_free(plan);
	}
}

static void test_baseline(void **state)
{
	struct tb_matrix_plan *plan, *again;
	struct tb_error err = {0};
	json_t *j;
	char *text;

	(void)state;
	plan = plan_ok(BASELINE "}", 99);
	assert_string_equal(plan->name, "baseline");
	assert_int_equal(plan->order, TB_ORDER_SEQUENTIAL);
	assert_int_equal(plan->seed, 0);
	assert_int_equal(plan->repeats, 3);
	assert_int_equal(plan->nruns, 12);
	assert_int_equal(plan->ncells, 4);
	assert_int_equal(plan->estimated_ms, 12 * (10000 + TB_MATRIX_RUN_OVERHEAD_MS));
	for (int i = 0; i < 12; i++) {
		const struct tb_planned_run *r = &plan->runs[i];

		assert_int_equal(r->seq, i);
		assert_int_equal(r->cell, i / 3);
		assert_int_equal(r->repeat, i % 3);
		assert_string_equal(r->client, "left");
		assert_string_equal(r->server, "right");
		assert_string_equal(r->link, "lan20");   /* no shared link: the server's first */
		assert_string_equal(r->server_address, "198.19.20.2");
		assert_int_equal(r->p.proto, r->cell < 2 ? TB_IPERF_TCP : TB_IPERF_UDP);
		assert_int_equal(r->p.dir, r->cell % 2 == 0 ? TB_IPERF_FORWARD : TB_IPERF_REVERSE);
		assert_int_equal(r->p.duration_s, 10);
		assert_string_equal(r->p.bitrate, r->cell < 2 ? "" : "0");
		assert_int_equal(r->p.parallel, 1);
		assert_int_equal(r->p.omit_s, 0);
		assert_int_equal(r->p.length, 0);
		assert_int_equal(r->p.window, 0);
		assert_int_equal(r->p.tos, -1);
		assert_false(r->p.zerocopy);
		assert_string_equal(r->p.congestion, "");
		assert_string_equal(r->p.affinity, "");
		assert_int_equal(r->p.interval_s, 1);
	}
	/* the stored spec: defaults filled in */
	text = json_dumps(plan->spec, JSON_COMPACT);
	assert_string_equal(text,
			    "{\"name\":\"baseline\",\"pairs\":[{\"client\":\"left\",\"server\":\"right\",\"link\":\"lan20\"}],"
			    "\"protocols\":[\"tcp\",\"udp\"],\"directions\":[\"forward\",\"reverse\"],\"duration_s\":10,"
			    "\"repeats\":3,\"order\":\"sequential\",\"pause_s\":0,\"concurrency\":\"disjoint\",\"iperf\":{\"parallel\":1,\"length\":null,"
			    "\"window\":null,\"bitrate\":null,\"udp_bitrate\":\"0\",\"omit_s\":0,\"congestion\":null,"
			    "\"tos\":null,\"zerocopy\":false,\"affinity\":null}}");
	free(text);
	assert_int_equal(tb_matrix_plan_make(plan->spec, inv_sim, 1, &again, &err), 0);
	assert_int_equal(again->nruns, 12);
	assert_memory_equal(again->runs, plan->runs, 12 * sizeof(*plan->runs));
	tb_matrix_plan_free(again);

	/* a run as JSON */
	j = tb_matrix_run_json(&plan->runs[7]);   /* cell 2: udp forward, repeat 1 */
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "seq")), 7);
	assert_int_equal(json_integer_value(json_object_get(j, "cell")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "repeat")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "server_address")), "198.19.20.2");
	assert_string_equal(json_string_value(json_object_get(j, "link")), "lan20");
	assert_string_equal(json_string_value(json_object_get(j, "protocol")), "udp");
	assert_string_equal(json_string_value(json_object_get(j, "direction")), "forward");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "params"), "bitrate")), "0");
	assert_true(json_is_null(json_object_get(json_object_get(j, "params"), "window")));
	assert_non_null(strstr(json_string_value(json_object_get(j, "iperf_args")), "-t 10"));
	assert_non_null(strstr(json_string_value(json_object_get(j, "iperf_args")), "-u"));
	assert_non_null(strstr(json_string_value(json_object_get(j, "iperf_args")), "-b 0"));
	json_decref(j);

	/* the plan as JSON */
	j = tb_matrix_plan_json(plan);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "baseline");
	assert_string_equal(json_string_value(json_object_get(j, "order")), "sequential");
	assert_true(json_is_null(json_object_get(j, "seed")));
	assert_int_equal(json_integer_value(json_object_get(j, "runs")), 12);
	assert_int_equal(json_integer_value(json_object_get(j, "cells")), 4);
	assert_true(fabs(json_real_value(json_object_get(j, "estimated_s")) - 127.2) < 1e-9);
	assert_true(json_equal(json_object_get(j, "spec"), plan->spec));
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 12);
	json_decref(j);
	tb_matrix_plan_free(plan);

	/* links: a shared link wins; an explicit one is used as given */
	plan = plan_ok("{'name':'t','pairs':[{'client':'left','server':'router'},"
		       "{'client':'right','server':'router'},{'client':'left','server':'router','link':'lan20'}]}", 0);
	assert_string_equal(plan->runs[0].link, "lan10");
	assert_string_equal(plan->runs[0].server_address, "198.19.10.1");
	assert_string_equal(plan->runs[1].link, "lan20");
	assert_string_equal(plan->runs[1].server_address, "198.19.20.1");
	assert_string_equal(plan->runs[2].link, "lan20");
	tb_matrix_plan_free(plan);

	/* the estimate with omit and pauses: 2 x (2 + 10 + 0.6) + 1 pause of 1.5 */
	plan = plan_ok(B ",'repeats':2,'pause_s':1.5,'iperf':{'omit_s':2}}", 0);
	assert_int_equal(plan->pause_ms, 1500);
	assert_int_equal(plan->estimated_ms, 2 * 12600 + 1500);
	tb_matrix_plan_free(plan);
}

static void test_interleaved(void **state)
{
	struct tb_matrix_plan *plan;

	(void)state;
	plan = plan_ok(BASELINE ",'order':'interleaved'}", 0);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(plan->runs[i].seq, i);
		assert_int_equal(plan->runs[i].cell, i % 4);
		assert_int_equal(plan->runs[i].repeat, i / 4);
		assert_int_equal(plan->runs[i].p.proto, i % 4 < 2 ? TB_IPERF_TCP : TB_IPERF_UDP);
		assert_int_equal(plan->runs[i].p.dir, i % 2 == 0 ? TB_IPERF_FORWARD : TB_IPERF_REVERSE);
	}
	tb_matrix_plan_free(plan);
}

/* The cells come out in the documented nesting: the test walks it with loops. */
static void test_expansion_order(void **state)
{
	static const char *const tbr[] = {"1M", "2M"}, *const ubr[] = {"5M"};
	struct tb_matrix_plan *plan;
	int c = 0;

	(void)state;
	plan = plan_ok("{'name':'t','pairs':[{'client':'left','server':'right'},{'client':'right','server':'router'}],"
		       "'protocols':['udp','tcp'],'directions':['reverse','forward'],'duration_s':[5,10],"
		       "'iperf':{'tos':[0,8],'parallel':[1,2],'bitrate':['1M','2M'],'udp_bitrate':'5M'}}",
		       0);
	assert_int_equal(plan->ncells, 2 * (2 * 2 * 2 * 1 * 2 + 2 * 2 * 2 * 2 * 2));
	for (int pair = 0; pair < 2; pair++)
		for (int pr = 0; pr < 2; pr++)
			for (int d = 0; d < 2; d++)
				for (int t = 0; t < 2; t++)
					for (int par = 0; par < 2; par++)
						for (int br = 0; br < (pr == 0 ? 1 : 2); br++)
							for (int tos = 0; tos < 2; tos++) {
								const struct tb_planned_run *r = &plan->runs[c];

								assert_int_equal(r->cell, c);
								assert_string_equal(r->client, pair == 0 ? "left" : "right");
								assert_int_equal(r->p.proto, pr == 0 ? TB_IPERF_UDP : TB_IPERF_TCP);
								assert_int_equal(r->p.dir, d == 0 ? TB_IPERF_REVERSE : TB_IPERF_FORWARD);
								assert_int_equal(r->p.duration_s, t == 0 ? 5 : 10);
								assert_int_equal(r->p.parallel, par + 1);
								assert_string_equal(r->p.bitrate, pr == 0 ? ubr[br] : tbr[br]);
								assert_int_equal(r->p.tos, tos * 8);
								c++;
							}
	assert_int_equal(c, plan->nruns);
	tb_matrix_plan_free(plan);
}

/* The documented shuffle, written again here. */
static void reference_shuffle(int *v, int n, uint64_t seed)
{
	uint64_t s = seed != 0 ? seed : UINT64_C(0x9E3779B97F4A7C15);

	for (int i = n - 1; i > 0; i--) {
		int j, t;

		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		j = (int)((s * UINT64_C(0x2545F4914F6CDD1D)) % (uint64_t)(i + 1));
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static void check_permutation(const struct tb_matrix_plan *plan)
{
	char *seen = calloc((size_t)plan->nruns, 1);

	assert_non_null(seen);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int k = r->cell * plan->repeats + r->repeat;

		assert_int_equal(r->seq, i);
		assert_true(r->cell >= 0 && r->cell < plan->ncells && r->repeat >= 0 && r->repeat < plan->repeats);
		assert_int_equal(seen[k], 0);
		seen[k] = 1;
	}
	free(seen);
}

static void test_shuffled(void **state)
{
	/* seed 42 over the baseline's 12 runs, as cell*3 + repeat: pinned, so that
	 * a stored seed gives this order on every machine */
	static const int pinned42[12] = {2, 8, 4, 5, 3, 11, 7, 10, 1, 6, 9, 0};
	struct tb_matrix_plan *a, *b, *c, *d;
	struct tb_error err = {0};
	int expect[12], differ = 0;

	(void)state;
	a = plan_ok(BASELINE ",'order':'shuffled','seed':42}", 0);
	b = plan_ok(BASELINE ",'order':'shuffled','seed':42}", 777);
	c = plan_ok(BASELINE ",'order':'shuffled','seed':43}", 0);
	assert_int_equal(a->seed, 42);
	check_permutation(a);
	check_permutation(c);
	assert_memory_equal(a->runs, b->runs, 12 * sizeof(*a->runs));
	for (int i = 0; i < 12; i++) {
		expect[i] = i;
		differ |= a->runs[i].cell != c->runs[i].cell || a->runs[i].repeat != c->runs[i].repeat;
	}
	assert_true(differ);
	reference_shuffle(expect, 12, 42);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(a->runs[i].cell * 3 + a->runs[i].repeat, expect[i]);
		assert_int_equal(expect[i], pinned42[i]);
	}
	/* seed 0 is a seed too (a fixed non-zero state) */
	d = plan_ok(BASELINE ",'order':'shuffled','seed':0}", 0);
	check_permutation(d);
	for (int i = 0; i < 12; i++)
		expect[i] = i;
	reference_shuffle(expect, 12, 0);
	for (int i = 0; i < 12; i++)
		assert_int_equal(d->runs[i].cell * 3 + d->runs[i].repeat, expect[i]);
	tb_matrix_plan_free(d);
	tb_matrix_plan_free(a);
	tb_matrix_plan_free(b);
	tb_matrix_plan_free(c);

	/* no seed: seed_if_unset (to 53 bits), stored, and planning the stored spec again gives the same */
	a = plan_ok(BASELINE ",'order':'shuffled'}", UINT64_C(0xFFFF000000012345));
	assert_int_equal(a->seed, UINT64_C(0xFFFF000000012345) & ((UINT64_C(1) << 53) - 1));
	assert_int_equal((uint64_t)json_integer_value(json_object_get(a->spec, "seed")), a->seed);
	assert_int_equal(tb_matrix_plan_make(a->spec, inv_sim, 1, &b, &err), 0);
	assert_int_equal(b->seed, a->seed);
	assert_memory_equal(a->runs, b->runs, 12 * sizeof(*a->runs));
	tb_matrix_plan_free(a);
	tb_matrix_plan_free(b);
}

/* ---- property test ---- */

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int rnd_int(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

/* k distinct indices of 0..n-1 in random order */
static void pick(int n, int k, int *out)
{
	int v[16];

	for (int i = 0; i < n; i++)
		v[i] = i;
	for (int i = 0; i < k; i++) {
		int j = i + rnd_int(n - i), t = v[i];

		v[i] = v[j];
		v[j] = t;
		out[i] = v[i];
	}
}

static int same_params(const struct tb_iperf_params *a, const struct tb_iperf_params *b)
{
	return a->proto == b->proto && a->dir == b->dir && a->duration_s == b->duration_s && a->omit_s == b->omit_s &&
	       a->parallel == b->parallel && a->length == b->length && a->window == b->window &&
	       strcmp(a->bitrate, b->bitrate) == 0 && strcmp(a->congestion, b->congestion) == 0 && a->tos == b->tos &&
	       a->zerocopy == b->zerocopy && strcmp(a->affinity, b->affinity) == 0 && a->interval_s == b->interval_s;
}

static int same_run(const struct tb_planned_run *a, const struct tb_planned_run *b)
{
	return strcmp(a->client, b->client) == 0 && strcmp(a->server, b->server) == 0 &&
	       strcmp(a->link, b->link) == 0 && strcmp(a->server_address, b->server_address) == 0 &&
	       same_params(&a->p, &b->p);
}

static void roundtrip(const struct tb_iperf_params *p)
{
	struct tb_iperf_params q;
	struct tb_error err = {0};
	json_t *j = tb_matrix_params_json(p);

	assert_non_null(j);
	memset(&q, 0x5a, sizeof(q));
	if (tb_matrix_params_from_json(j, &q, &err) != 0) {
		char *t = json_dumps(j, 0);

		fprintf(stderr, "round trip: %s: %s\n", t, err.message);
		free(t);
	}
	assert_int_equal(err.code, 0);
	assert_true(same_params(p, &q));
	json_decref(j);
}

static const char *const pool_json[] = {
	/* parallel, length, window, bitrate, udp_bitrate, omit_s, congestion, tos, zerocopy, affinity */
	"[1,2,3,4,6,8]", "[1000,1400,8000,'16K']", "[null,'64K','128K',1048576]", "['0','10M','1G',5000000]",
	"[null,'1M','10.5M','0']", "[0,1,2]", "[null,'cubic','reno','bbr']", "[0,8,16,32]", "[false,true]",
	"['0','1','0,1','2,3']",
};
static const char *const axis_names[] = {"parallel", "length", "window", "bitrate", "udp_bitrate",
					 "omit_s", "congestion", "tos", "zerocopy", "affinity"};

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
		pools[a] = spec_of(pool_json[a]);
	for (int iter = 0; iter < 300; iter++) {
		json_t *spec = json_pack("{s:s}", "name", "property"), *pairs = json_array(), *iperf = json_object();
		json_t *jp = json_array(), *jd = json_array();
		int idx[16], np = 1 + rnd_int(3), npr = 1 + rnd_int(2), nd = 1 + rnd_int(3), ndur = 1 + rnd_int(3);
		int n[10], has_tcp = 0, has_udp = 0, swept = 0, repeats = 1 + rnd_int(4), order = rnd_int(3);
		long long expect_ms = 0;
		uint64_t common, cells = 0;
		struct tb_matrix_plan *plan = NULL, *again = NULL;
		struct tb_error err = {0};
		char *seen;

		pick(5, np, idx);
		for (int i = 0; i < np; i++)
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", pair_pool[idx[i]][0], "server",
							       pair_pool[idx[i]][1]));
		pick(2, npr, idx);
		for (int i = 0; i < npr; i++) {
			json_array_append_new(jp, json_string(protos[idx[i]]));
			has_tcp |= idx[i] == 0;
			has_udp |= idx[i] == 1;
		}
		pick(3, nd, idx);
		for (int i = 0; i < nd; i++)
			json_array_append_new(jd, json_string(dirs[idx[i]]));
		json_object_set_new(spec, "pairs", pairs);
		json_object_set_new(spec, "protocols", jp);
		json_object_set_new(spec, "directions", jd);
		if (ndur == 1 && rnd_int(2) == 0) {
			json_object_set_new(spec, "duration_s", json_integer(1 + rnd_int(30)));
		} else {
			json_t *a = json_array();

			pick(10, ndur, idx);
			for (int i = 0; i < ndur; i++)
				json_array_append_new(a, json_integer(idx[i] + 1));
			json_object_set_new(spec, "duration_s", a);
		}
		for (int a = 0; a < 10; a++) {
			int size = (int)json_array_size(pools[a]), mode = rnd_int(4);

			n[a] = 1;
			if (mode == 0)
				continue;   /* absent */
			if (mode == 1 || swept >= 3) {
				json_object_set(iperf, axis_names[a], json_array_get(pools[a], (size_t)rnd_int(size)));
			} else {
				json_t *list = json_array();

				n[a] = 1 + rnd_int(size < 3 ? size : 3);
				pick(size, n[a], idx);
				for (int i = 0; i < n[a]; i++)
					json_array_append(list, json_array_get(pools[a], (size_t)idx[i]));
				json_object_set_new(iperf, axis_names[a], list);
				swept++;
			}
		}
		json_object_set_new(spec, "iperf", iperf);
		json_object_set_new(spec, "repeats", json_integer(repeats));
		json_object_set_new(spec, "order", json_string(orders[order]));
		if (order == 2 && rnd_int(2) == 0)
			json_object_set_new(spec, "seed", json_integer((json_int_t)(rnd() >> 11)));
		if (rnd_int(3) == 0)
			json_object_set_new(spec, "pause_s", json_real(rnd_int(2000) / 1000.0));

		if (tb_matrix_plan_make(spec, inv_sim, rnd(), &plan, &err) != 0) {
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
		cells = (uint64_t)np * ((has_tcp ? common * (uint64_t)n[3] : 0) + (has_udp ? common * (uint64_t)n[4] : 0));
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
					roundtrip(&r->p);
				} else {
					assert_true(same_run(r, &plan->runs[first[r->cell]]));
				}
				expect_ms += (r->p.omit_s + r->p.duration_s) * 1000 + TB_MATRIX_RUN_OVERHEAD_MS;
			}
			/* distinct cells are distinct runs */
			for (int x = 0; plan->ncells <= 200 && x < plan->ncells; x++)
				for (int y = x + 1; y < plan->ncells; y++)
					assert_false(same_run(&plan->runs[first[x]], &plan->runs[first[y]]));
			free(first);
		}
		free(seen);
		expect_ms += (long long)plan->pause_ms * (plan->nruns - 1);
		assert_int_equal(plan->estimated_ms, expect_ms);

		/* the stored spec plans the same again, whatever seed_if_unset */
		assert_int_equal(tb_matrix_plan_make(plan->spec, inv_sim, rnd(), &again, &err), 0);
		assert_int_equal(again->nruns, plan->nruns);
		assert_int_equal(again->seed, plan->seed);
		for (int i = 0; i < plan->nruns; i++) {
			assert_int_equal(again->runs[i].cell, plan->runs[i].cell);
			assert_int_equal(again->runs[i].repeat, plan->runs[i].repeat);
			assert_true(same_run(&again->runs[i], &plan->runs[i]));
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

static void test_params_json(void **state)
{
	struct tb_iperf_params p, q;
	struct tb_error err = {0};
	json_t *j;
	char *text;
	static const struct {
		const char *json;
		const char *code, *field, *message;
	} badp[] = {
		{"[]", "invalid_field", "", "run params must be a JSON object"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'colour':1}", "unknown_field", "colour",
		 "unknown field"},
		{"{'direction':'forward','duration_s':10}", "invalid_field", "protocol", "protocol must be one of tcp | udp"},
		{"{'protocol':'tcp','direction':'up','duration_s':10}", "invalid_field", "direction", "forward | reverse | bidir"},
		{"{'protocol':'tcp','direction':'forward'}", "invalid_field", "duration_s", "duration_s is required"},
		{"{'protocol':'tcp','direction':'forward','duration_s':0}", "invalid_field", "duration_s", "1..86400"},
		{"{'protocol':'udp','direction':'forward','duration_s':10,'length':70000}", "invalid_field", "length",
		 "UDP runs take at most 65507"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'tos':'x'}", "invalid_field", "tos", "0..255"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'bitrate':'fast'}", "invalid_field", "bitrate",
		 "bitrate must be a bitrate like"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'affinity':'x'}", "invalid_field", "affinity",
		 "\"n\" or \"n,m\""},
	};

	(void)state;
	memset(&p, 0, sizeof(p));
	p.proto = TB_IPERF_UDP;
	p.dir = TB_IPERF_BIDIR;
	p.duration_s = 30;
	p.omit_s = 2;
	p.parallel = 4;
	p.length = 1400;
	p.window = 4194304;
	snprintf(p.bitrate, sizeof(p.bitrate), "1.5G");
	snprintf(p.congestion, sizeof(p.congestion), "bbr");
	p.tos = 16;
	p.zerocopy = true;
	snprintf(p.affinity, sizeof(p.affinity), "2,3");
	p.interval_s = 1;
	j = tb_matrix_params_json(&p);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "{\"protocol\":\"udp\",\"direction\":\"bidir\",\"duration_s\":30,\"omit_s\":2,"
				  "\"parallel\":4,\"length\":1400,\"window\":4194304,\"bitrate\":\"1.5G\","
				  "\"congestion\":\"bbr\",\"tos\":16,\"zerocopy\":true,\"affinity\":\"2,3\","
				  "\"interval_s\":1}");
	free(text);
	assert_int_equal(tb_matrix_params_from_json(j, &q, &err), 0);
	assert_true(same_params(&p, &q));
	json_decref(j);
	roundtrip(&p);

	/* unset values as null, and back */
	memset(&p, 0, sizeof(p));
	p.duration_s = 10;
	p.parallel = 1;
	p.tos = -1;
	p.interval_s = 1;
	j = tb_matrix_params_json(&p);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "{\"protocol\":\"tcp\",\"direction\":\"forward\",\"duration_s\":10,\"omit_s\":0,"
				  "\"parallel\":1,\"length\":null,\"window\":null,\"bitrate\":null,\"congestion\":null,"
				  "\"tos\":null,\"zerocopy\":false,\"affinity\":null,\"interval_s\":1}");
	free(text);
	json_decref(j);
	roundtrip(&p);
	/* missing optional keys are the unset values */
	j = spec_of("{'protocol':'tcp','direction':'reverse','duration_s':5}");
	assert_int_equal(tb_matrix_params_from_json(j, &q, &err), 0);
	assert_int_equal(q.dir, TB_IPERF_REVERSE);
	assert_int_equal(q.parallel, 1);
	assert_int_equal(q.tos, -1);
	assert_int_equal(q.interval_s, 1);
	json_decref(j);

	for (size_t i = 0; i < sizeof(badp) / sizeof(badp[0]); i++) {
		struct tb_error e = {0};
		int rc;

		memset(&q, 0x5a, sizeof(q));
		memcpy(&p, &q, sizeof(p));
		j = spec_of(badp[i].json);
		rc = tb_matrix_params_from_json(j, &q, &e);
		if (rc == 0 || strcmp(tb_err_name(rc), badp[i].code) != 0 || strcmp(e.field, badp[i].field) != 0 ||
		    strstr(e.message, badp[i].message) == NULL)
			fprintf(stderr, "params case %zu: %s field \"%s\": %s\n", i, tb_err_name(rc), e.field, e.message);
		assert_int_not_equal(rc, 0);
		assert_string_equal(tb_err_name(rc), badp[i].code);
		assert_string_equal(e.field, badp[i].field);
		assert_non_null(strstr(e.message, badp[i].message));
		assert_memory_equal(&p, &q, sizeof(p));   /* untouched on error */
		json_decref(j);
	}
	assert_string_equal(tb_iperf_proto_name(TB_IPERF_TCP), "tcp");
	assert_string_equal(tb_iperf_proto_name(TB_IPERF_UDP), "udp");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_FORWARD), "forward");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_REVERSE), "reverse");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_BIDIR), "bidir");
}

/* ---- a large plan ---- */

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
	inv = load_inv(inv_text);
	assert_non_null(inv);
	used = (size_t)snprintf(spec_text, 4096, "{'name':'large','pairs':[");
	for (int i = 0; i < 10; i++)
		used += (size_t)snprintf(spec_text + used, 4096 - used, "%s{'client':'m%02d','server':'m%02d'}",
					 i > 0 ? "," : "", 2 * i, 2 * i + 1);
	snprintf(spec_text + used, 4096 - used,
		 "],'protocols':['tcp','udp'],'directions':['forward','reverse'],'repeats':50,'order':'shuffled',"
		 "'seed':2024,'iperf':{'parallel':[1,2,4,8,16],'udp_bitrate':'1G'}}");
	spec = spec_of(spec_text);
	/* one run at a time: the order is the seeded shuffle's */
	json_object_set_new(spec, "concurrency", json_string("none"));
	assert_int_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	check_permutation(plan);
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

		snprintf(link, sizeof(link), "net%02d", server / 2);   /* the pair's shared link */
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
					 "    links:\n      l%02d: {address: 198.19.%d.2/24}\n", i, i + 10, i, i + 100);
	return load_inv(text);
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
		assert_true(same_run(&flat->runs[k], r));
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
				     strcmp(o->link, r->link) == 0);   /* a pair once a round */
			assert_int_equal(o->combo, r->combo);          /* one OS combination a round */
		}
		for (k = 0; k < flat->nruns; k++)
			if (!taken[k] && flat->runs[k].cell == r->cell && flat->runs[k].repeat == r->repeat)
				break;
		assert_true(k < flat->nruns);
		taken[k] = 1;
		assert_true(same_run(&flat->runs[k], r));
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
	spec = spec_of("{'name':'fanin','pairs':[{'client':'m00','server':'m02'},{'client':'m01','server':'m02'}],"
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
		int np = 1 + rnd_int(6), most = 0, per[8] = {0};

		for (int i = 0; i < np; i++) {
			char c[8], sv[8];
			int a = rnd_int(4), b;

			do
				b = rnd_int(4);
			while (b == a);
			snprintf(c, sizeof(c), "m%02d", a);
			snprintf(sv, sizeof(sv), "m%02d", b);
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", c, "server", sv));
		}
		spec = json_pack("{s:s, s:o, s:[s,s], s:i, s:s, s:i, s:s}", "name", "pr", "pairs", pairs, "protocols", "tcp",
				 "udp", "repeats", 1 + rnd_int(3), "order", rnd_int(2) ? "interleaved" : "sequential",
				 "duration_s", 1 + rnd_int(5), "concurrency", "pairs");
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

				if (strcmp(json_string_value(json_object_get(pk, "client")), plan->runs[i].client) == 0 &&
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
	spec = spec_of("{'name':'two','pairs':[{'client':'m00','server':'m01'},{'client':'m02','server':'m03'}],"
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
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "plan"), 3), "round")), 1);
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
	spec = spec_of("{'name':'x','pairs':[{'client':'m00','server':'m01'}],'concurrency':'all'}");
	assert_int_not_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
	assert_string_equal(err.field, "concurrency");
	assert_non_null(strstr(err.message, "disjoint | none"));
	json_decref(spec);

	/* random specs over 20 machines: pairs that share machines or not */
	for (int iter = 0; iter < 300; iter++) {
		static const char *const orders[] = {"sequential", "interleaved", "shuffled"};
		json_t *pairs = json_array();
		int np = 1 + rnd_int(8);

		for (int i = 0; i < np; i++) {
			char c[8], sv[8];
			int a = rnd_int(iter % 3 == 0 ? 5 : 20), b;

			do
				b = rnd_int(iter % 3 == 0 ? 5 : 20);
			while (b == a);
			snprintf(c, sizeof(c), "m%02d", a);
			snprintf(sv, sizeof(sv), "m%02d", b);
			json_array_append_new(pairs, json_pack("{s:s, s:s}", "client", c, "server", sv));
		}
		spec = json_pack("{s:s, s:o, s:[s,s], s:i, s:s, s:i}", "name", "rounds", "pairs", pairs, "protocols", "tcp",
				 "udp", "repeats", 1 + rnd_int(3), "order", orders[rnd_int(3)], "duration_s", 1 + rnd_int(5));
		if (rnd_int(2))
			json_object_set_new(spec, "seed", json_integer(rnd_int(1000)));
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
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "  m%d:\n    role: host\n%s"
					 "    os:\n      ubuntu: {address: 198.18.1.%d}\n%s"
					 "    links:\n      lan: {address: 198.19.1.%d/24}\n",
					 i, i < 6 ? "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\", freebsd: \"4\"}}\n" : "",
					 10 + i, bsd, 10 + i);
	}
	return load_inv(text);
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
		{"'os':[{'m0':'ubuntu','m1':'freebsd'},{'m1':'freebsd','m0':'ubuntu'}]", "os", "os[1] is the same combination as os[0]"},
		{"'os':[{'m0':'ubuntu'}],'os_after':'keep'", "os_after", "os_after must be one of restore | leave"},
	};

	(void)state;
	assert_non_null(inv);
	for (size_t i = 0; i < sizeof(bad_os) / sizeof(bad_os[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text), "{'name':'x','pairs':[{'client':'m0','server':'m1'}],%s}", bad_os[i].os);
		spec = spec_of(text);
		memset(&err, 0, sizeof(err));
		assert_int_not_equal(tb_matrix_plan_make(spec, inv, 0, &plan, &err), 0);
		if (strcmp(err.field, bad_os[i].field) != 0 || strstr(err.message, bad_os[i].message) == NULL)
			fail_msg("%s: got field \"%s\": %s; expected \"%s\": ...%s...", bad_os[i].os, err.field, err.message,
				 bad_os[i].field, bad_os[i].message);
		json_decref(spec);
	}
	/* a machine with one OS may be named in it; the stored spec keeps the list and os_after */
	spec = spec_of("{'name':'x','pairs':[{'client':'m0','server':'m6'}],'os':[{'m0':'freebsd','m6':'ubuntu'}]}");
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
	spec = spec_of("{'name':'ref','pairs':[{'client':'m0','server':'m1'}],'protocols':['tcp','udp'],'duration_s':5,"
		       "'os':[{'m0':'freebsd','m1':'freebsd'},{'m0':'ubuntu','m1':'ubuntu'},{'m0':'freebsd','m1':'ubuntu'},"
		       "{'m0':'ubuntu','m1':'freebsd'}]}");
	assert_int_equal(tb_matrix_plan_make_now(spec, inv, 0, &now, &plan, &err), 0);
	assert_int_equal(plan->nruns, 8);
	assert_int_equal(plan->ncells, 8);
	assert_int_equal(plan->ncombos, 4);
	/* ubuntu/ubuntu needs no boot: it goes first; then one boot per step, and one back */
	assert_string_equal(plan->runs[0].client_os, "ubuntu");
	assert_string_equal(plan->runs[0].server_os, "ubuntu");
	assert_int_equal(plan->nboots, 4);     /* UU, FU, FF, UF, then m1 back: one boot a step */
	assert_int_equal(plan->boots[plan->nboots - 1].seq, -1);
	for (int i = 0; i < plan->nruns; i++) {
		assert_int_equal(plan->runs[i].cell, i);        /* cells combination by combination */
		assert_int_equal(plan->runs[i].combo, plan->runs[i - i % 2].combo);
	}
	{
		int64_t boots = 0;

		for (int i = 0; i < plan->nboots; i++) {
			assert_int_equal(plan->boots[i].estimated_ms, strcmp(plan->boots[i].machine, "m0") == 0 ? 30000
												   : TB_MATRIX_BOOT_DEFAULT_MS);
			boots += plan->boots[i].estimated_ms;
		}
		assert_int_equal(plan->estimated_ms, 8 * (5000 + TB_MATRIX_RUN_OVERHEAD_MS) + boots);
	}
	j = tb_matrix_plan_json(plan);
	assert_int_equal(json_integer_value(json_object_get(j, "combinations")), 4);
	assert_int_equal(json_array_size(json_object_get(j, "boots")), 4);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "boots"), 3), "seq")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "plan"), 0), "client_os")),
			    "ubuntu");
	/* the timeline: a round's boots come before it, and push its start */
	{
		json_t *tl = json_object_get(j, "timeline");
		size_t nb = 0;

		for (size_t i = 0; i < json_array_size(tl); i++)
			nb += json_array_size(json_object_get(json_array_get(tl, i), "boots"));
		assert_int_equal(nb, 3);   /* the one back comes after the last round */
		assert_int_equal(json_array_size(json_object_get(json_array_get(tl, 0), "boots")), 0);
		assert_true(json_real_value(json_object_get(json_array_get(tl, 2), "start_s")) >=
			    json_real_value(json_object_get(json_array_get(tl, 1), "end_s")) + 30.0);
	}
	json_decref(j);
	tb_matrix_plan_free(plan);
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
		int nm = 2 + rnd_int(3), nc = 1 + rnd_int(5), used = 0, ncomb = 0;

		memset(combos, 0, sizeof(combos));
		memset(start, 0, sizeof(start));
		used += snprintf(text + used, sizeof(text) - (size_t)used, "{'name':'r','pairs':[");
		for (int m = 0; m + 1 < nm; m++)
			used += snprintf(text + used, sizeof(text) - (size_t)used, "%s{'client':'m%d','server':'m%d'}",
					 m ? "," : "", m, m + 1);
		used += snprintf(text + used, sizeof(text) - (size_t)used, "],%s'os':[",
				 rnd_int(2) ? "'os_after':'restore'," : "");
		for (int c = 0; c < nc; c++) {
			char one[256];
			int u = 0, any = 0, dup = 0;

			for (int m = 0; m < nm; m++)
				if (rnd_int(4) != 0) {
					snprintf(combos[ncomb][m], sizeof(combos[0][0]), "%s", oses[rnd_int(2)]);
					u += snprintf(one + u, sizeof(one) - (size_t)u, "%s'm%d':'%s'", any++ ? "," : "", m,
						      combos[ncomb][m]);
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
			int r = rnd_int(3);

			snprintf(hosts[m].machine, sizeof(hosts[m].machine), "m%d", m);
			snprintf(hosts[m].os, sizeof(hosts[m].os), "%s", r == 2 ? "" : oses[r]);
			snprintf(start[m], sizeof(start[m]), "%s", hosts[m].os);
			hosts[m].boot_ms = 0;
		}
		now.n = nm;
		spec = spec_of(text);
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
					assert_string_equal(st[atoi(plan->runs[i].client + 1)], plan->runs[i].client_os);
				if (plan->runs[i].server_os[0])
					assert_string_equal(st[atoi(plan->runs[i].server + 1)], plan->runs[i].server_os);
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
		{"'groups':[{'members':['left','right']}]", "groups[0].type", "must be one of mesh | disjoint, got nothing"},
		{"'groups':[{'type':'star','members':['left']}]", "groups[0].type", "got \"star\""},
		{"'groups':[{'type':'mesh','members':['left','nosuch']}]", "groups[0].members[1]", "no machine \"nosuch\""},
		{"'groups':[{'type':'mesh','members':['left','left']}]", "groups[0].members[1]", "left is listed twice"},
		{"'groups':[{'type':'mesh','members':['left']}]", "groups[0]", "a mesh needs at least 2 machines"},
		{"'groups':[{'type':'mesh','members':['left','relay']}]", "groups[0].members[1]", "relay has role relay and no links"},
		{"'groups':[{'type':'disjoint','a':['left']}]", "groups[0].b", "must be a list of 1..16 machine names, got nothing"},
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
		spec = spec_of(text);
		memset(&err, 0, sizeof(err));
		assert_int_not_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), 0);
		if (strcmp(err.field, bad_groups[i].field) != 0 || strstr(err.message, bad_groups[i].message) == NULL)
			fail_msg("%s: got field \"%s\": %s", bad_groups[i].spec, err.field, err.message);
		json_decref(spec);
	}
	/* a mesh of 3: 6 ordered pairs, after the spec's own pair, which is not repeated */
	spec = spec_of("{'name':'g','pairs':[{'client':'left','server':'right'}],"
		       "'groups':[{'type':'mesh','members':['left','right','router']}]}");
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), 0);
	pairs = json_object_get(plan->spec, "pairs");
	assert_int_equal(json_array_size(pairs), 6);
	assert_null(json_object_get(plan->spec, "groups"));
	assert_int_equal(plan->nruns, 6);
	{
		static const char *const want[6][2] = {{"left", "right"}, {"right", "left"}, {"left", "router"},
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

		assert_int_equal(tb_matrix_plan_make(plan->spec, inv_sim, 0, &again, &err), 0);
		assert_int_equal(again->nruns, plan->nruns);
		for (int i = 0; i < plan->nruns; i++)
			assert_true(same_run(&plan->runs[i], &again->runs[i]));
		tb_matrix_plan_free(again);
	}
	tb_matrix_plan_free(plan);
	json_decref(spec);
	/* disjoint without pairs: a x b both ways */
	spec = spec_of("{'name':'g','groups':[{'type':'disjoint','a':['left'],'b':['right','router']}]}");
	assert_int_equal(tb_matrix_plan_make(spec, inv_sim, 0, &plan, &err), 0);
	assert_int_equal(json_array_size(json_object_get(plan->spec, "pairs")), 4);
	assert_int_equal(plan->nruns, 4);
	tb_matrix_plan_free(plan);
	json_decref(spec);
}

/* ---- stats ---- */

static void test_stats(void **state)
{
	static const double v8[] = {2, 4, 4, 4, 5, 5, 7, 9}, v3[] = {3, 1, 2}, v1[] = {7.5};
	struct tb_stats s;
	double *big;
	json_t *j;

	(void)state;
	tb_stats_compute(v8, 8, &s);
	assert_int_equal(s.n, 8);
	assert_true(fabs(s.mean - 5.0) < 1e-12);
	assert_true(fabs(s.median - 4.5) < 1e-12);
	assert_true(fabs(s.stdev - sqrt(32.0 / 7.0)) < 1e-12);   /* sum of squares 32, n - 1 = 7 */
	assert_true(fabs(s.stdev - 2.1380899352993952) < 1e-12);
	assert_true(s.min == 2 && s.max == 9);
	j = tb_stats_json(&s);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "n")), 8);
	assert_true(fabs(json_real_value(json_object_get(j, "median")) - 4.5) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(j, "min")) - 2) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(j, "max")) - 9) < 1e-12);
	assert_non_null(json_object_get(j, "mean"));
	assert_non_null(json_object_get(j, "stdev"));
	assert_int_equal(json_object_size(j), 6);
	json_decref(j);

	tb_stats_compute(v3, 3, &s);
	assert_true(s.mean == 2 && s.median == 2 && fabs(s.stdev - 1) < 1e-12 && s.min == 1 && s.max == 3);

	tb_stats_compute(v1, 1, &s);
	assert_true(s.n == 1 && s.mean == 7.5 && s.median == 7.5 && s.stdev == 0 && s.min == 7.5 && s.max == 7.5);

	memset(&s, 0x7f, sizeof(s));
	tb_stats_compute(v1, 0, &s);
	assert_true(s.n == 0 && s.mean == 0 && s.median == 0 && s.stdev == 0 && s.min == 0 && s.max == 0);
	j = tb_stats_json(&s);
	assert_true(json_is_null(j));
	json_decref(j);

	/* large values close together: the two-pass stdev keeps them */
	{
		static const double close[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};

		tb_stats_compute(close, 3, &s);
		assert_true(fabs(s.stdev - 1) < 1e-6);
		assert_true(fabs(s.median - (1e9 + 2)) < 1e-6);
	}
	/* over the stack buffer (1024): 2000, 1999, ..., 1; sample variance of 1..n is n(n+1)/12 */
	big = malloc(2000 * sizeof(*big));
	assert_non_null(big);
	for (int i = 0; i < 2000; i++)
		big[i] = 2000 - i;
	tb_stats_compute(big, 2000, &s);
	assert_true(fabs(s.mean - 1000.5) < 1e-9);
	assert_true(fabs(s.median - 1000.5) < 1e-9);
	assert_true(fabs(s.stdev - sqrt(2000.0 * 2001.0 / 12.0)) < 1e-9);
	assert_true(s.min == 1 && s.max == 2000);
	assert_true(big[0] == 2000);   /* the input is not sorted in place */
	tb_stats_compute(big, 1025, &s);
	assert_true(fabs(s.median - (2000 - 512)) < 1e-9);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_specs),    cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_good_specs),   cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_interleaved),  cmocka_unit_test(test_expansion_order),
		cmocka_unit_test(test_shuffled),     cmocka_unit_test(test_property),
		cmocka_unit_test(test_params_json),  cmocka_unit_test(test_large_plan),
		cmocka_unit_test(test_stats),        cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_pair_rounds),
		cmocka_unit_test(test_os_combinations), cmocka_unit_test(test_groups),
	};

	return cmocka_run_group_tests_name("matrix", tests, setup, teardown);
}
