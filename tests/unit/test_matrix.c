/*
 * test_matrix.c - the matrix spec (matrix.h) and summary statistics
 * (stats.h): a table of bad specs -> (error code, field, message), good
 * specs -> run and cell counts, exact orders, the shuffle, the params JSON
 * round trip and stats against hand-computed values.  The planner's
 * properties, rounds and OS combinations are in test_matrix_plan.c.
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
#include "mxfix.h"
#include "stats.h"

/* ---- bad specs ---- */

#define P "'pairs':[{'client':'left','server':'right'}]"
#define B "{'name':'t'," P
#define UDP ",'protocols':['udp']"
#define NAME65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct bad_case {
	int nolinks; /* 1: INV_NOLINKS */
	const char *spec;
	const char *code; /* tb_err_name */
	const char *field;
	const char *message; /* a substring */
};

static const struct bad_case bad[] = {
	/* shape, unknown keys, os */
	{0, "[]", "invalid_field", "",
	 "a matrix spec must be a JSON object with name and pairs, got [] (an empty list)"},
	{0, "'baseline'", "invalid_field", "", "must be a JSON object"},
	{0, B ",'colour':'red'}", "unknown_field", "colour",
	 "colour: unknown field; allowed here: name, pairs, groups, os"},
	{0, B ",'Duration_s':10}", "unknown_field", "Duration_s", "unknown field"},
	{0, B ",'os':[{'left':'freebsd','right':'freebsd'}]}", "invalid_field", "os[0].left",
	 "os[0].left: left has no OS \"freebsd\"; its OSes: ubuntu"},
	{0, B ",'os':{}}", "invalid_field", "os",
	 "os must be a list of 1..16 OS combinations [{machine: OS}, ...], got an object"},
	/* name */
	{0, "{" P "}", "invalid_field", "name", "name is required: 1..64 printable characters"},
	{0, "{'name':''," P "}", "invalid_field", "name", "name must be 1..64 printable characters"},
	{0, "{'name':'" NAME65 "'," P "}", "invalid_field", "name",
	 "at most 64 bytes of UTF-8, no control or format characters"},
	{0, "{'name':'a\\u0001b'," P "}", "invalid_field", "name", "no control or format characters), got \"a?b\""},
	{0, "{'name':'a\\nb'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u0000b'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u0085b'," P "}", "invalid_field", "name", "printable characters"},
	{0, "{'name':'a\\u007fb'," P "}", "invalid_field", "name", "printable characters"},
	/* Unicode format characters: named in the message, shown as '?' */
	{0, "{'name':'a\\u200bb'," P "}", "invalid_field", "name",
	 "U+200B is a control or format character (it hides or reorders text), got \"a?b\""},
	{0, "{'name':'a\\u200fb'," P "}", "invalid_field", "name", "U+200F is a control or format"},
	{0, "{'name':'evil\\u202egnp'," P "}", "invalid_field", "name", "U+202E is a control or format character"},
	{0, "{'name':'a\\u202ab'," P "}", "invalid_field", "name", "got \"a?b\""},
	{0, "{'name':'a\\u2066b'," P "}", "invalid_field", "name", "U+2066 is a control or format"},
	{0, "{'name':'a\\u2069b'," P "}", "invalid_field", "name", "U+2069 is a control or format"},
	{0, "{'name':'\\ufeffname'," P "}", "invalid_field", "name", "U+FEFF is a control or format"},
	{0, "{'name':3," P "}", "invalid_field", "name", "got 3"},
	/* pairs */
	{0, "{'name':'t'}", "invalid_field", "pairs", "pairs is required: a list of 1..64"},
	{0, "{'name':'t','pairs':[]}", "invalid_field", "pairs", "pairs must be a list of 1..64 {\"client\": machine"},
	{0, "{'name':'t','pairs':{'client':'left'}}", "invalid_field", "pairs", "got an object"},
	{0, "{'name':'t','pairs':['left']}", "invalid_field", "pairs[0]", "pairs[0] must be an object"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'right','colour':1}]}", "unknown_field", "pairs[0].colour",
	 "pairs[0].colour: unknown field; allowed here: client, server, link"},
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
	{0, "{'name':'t','pairs':[{'client':'left','server':'router','link':7}]}", "invalid_field", "pairs[0].link",
	 "one of router's links (lan10, lan20), got 7"},
	{0, "{'name':'t','pairs':[{'client':'left','server':'right'},{'client':'right','server':'nope'}]}",
	 "invalid_field", "pairs[1].server", "pairs[1].server: no machine \"nope\""},
	{1, B "}", "invalid_field", "pairs[0].server", "right has no links: add one under links in the inventory"},
	/* protocols, directions */
	{0, B ",'protocols':[]}", "invalid_field", "protocols",
	 "protocols must be a non-empty list of tcp | udp, got []"},
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
	{0, B ",'duration_s':'10'}", "invalid_field", "duration_s",
	 "must be a whole number 1..3600 seconds, got \"10\""},
	{0, B ",'duration_s':10.5}", "invalid_field", "duration_s", "whole number"},
	{0, B ",'duration_s':[10,0]}", "invalid_field", "duration_s[1]",
	 "duration_s[1] must be 1..3600 seconds, got 0"},
	{0, B ",'duration_s':[10,5,10]}", "invalid_field", "duration_s[2]",
	 "duration_s[2] repeats duration_s[0] (10); a sweep lists each value once"},
	{0, B ",'duration_s':[]}", "invalid_field", "duration_s",
	 "or a list of 1..64 of them (a sweep), got [] (an empty list)"},
	{0, B ",'duration_s':[null]}", "invalid_field", "duration_s[0]", "got null"},
	/* iperf: shape */
	{0, B ",'iperf':[]}", "invalid_field", "iperf", "iperf must be an object"},
	{0, B ",'iperf':{'colour':1}}", "unknown_field", "iperf.colour",
	 "iperf.colour: unknown field; allowed here: parallel, length, window, bitrate, udp_bitrate"},
	{0, B ",'iperf':{'parallel':[]}}", "invalid_field", "iperf.parallel",
	 "a list of 1..64 of them (a sweep), got []"},
	{0, B ",'iperf':{'parallel':[[1]]}}", "invalid_field", "iperf.parallel[0]", "whole number 1..128, got a list"},
	{0, B ",'iperf':{'parallel':{}}}", "invalid_field", "iperf.parallel", "got an object"},
	/* parallel, omit_s, tos */
	{0, B ",'iperf':{'parallel':[1,0]}}", "invalid_field", "iperf.parallel[1]",
	 "iperf.parallel[1] must be 1..128, got 0"},
	{0, B ",'iperf':{'parallel':129}}", "invalid_field", "iperf.parallel",
	 "iperf.parallel must be 1..128, got 129"},
	{0, B ",'iperf':{'parallel':'2'}}", "invalid_field", "iperf.parallel",
	 "must be a whole number 1..128, got \"2\""},
	{0, B ",'iperf':{'parallel':[2,4,2]}}", "invalid_field", "iperf.parallel[2]", "repeats iperf.parallel[0] (2)"},
	{0, B ",'iperf':{'parallel':[null,1]}}", "invalid_field", "iperf.parallel[1]", "repeats iperf.parallel[0]"},
	{0, B ",'iperf':{'omit_s':61}}", "invalid_field", "iperf.omit_s", "iperf.omit_s must be 0..60 seconds, got 61"},
	{0, B ",'iperf':{'omit_s':-1}}", "invalid_field", "iperf.omit_s", "must be 0..60 seconds, got -1"},
	{0, B ",'iperf':{'tos':256}}", "invalid_field", "iperf.tos", "iperf.tos must be 0..255, got 256"},
	{0, B ",'iperf':{'tos':[0,-1]}}", "invalid_field", "iperf.tos[1]", "must be 0..255, got -1"},
	/* length, window */
	{0, B ",'iperf':{'length':0}}", "invalid_field", "iperf.length", "iperf.length must be 1..1048576 bytes"},
	{0, B ",'iperf':{'length':1048577}}", "invalid_field", "iperf.length",
	 "1..1048576 bytes: a whole number or a size like \"256K\""},
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
	{0, B ",'iperf':{'udp_bitrate':'123456789012345678901'}}", "invalid_field", "iperf.udp_bitrate",
	 "at most 20 characters"},
	{0, B ",'iperf':{'bitrate':['1M','1000K']}}", "invalid_field", "iperf.bitrate[1]",
	 "iperf.bitrate[1] repeats iperf.bitrate[0] (\"1000K\")"},
	{0, B ",'iperf':{'udp_bitrate':['10M',10000000]}}", "invalid_field", "iperf.udp_bitrate[1]", "repeats"},
	/* congestion, zerocopy, affinity */
	{0, B ",'iperf':{'congestion':'Cubic'}}", "invalid_field", "iperf.congestion",
	 "iperf.congestion must be a congestion control name: 1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'congestion':'a_very_long_cc_name'}}", "invalid_field", "iperf.congestion",
	 "1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'congestion':''}}", "invalid_field", "iperf.congestion", "got \"\""},
	{0, B ",'iperf':{'congestion':'cubic;reboot'}}", "invalid_field", "iperf.congestion", "1..16 of a-z 0-9 _"},
	{0, B ",'iperf':{'zerocopy':'yes'}}", "invalid_field", "iperf.zerocopy",
	 "iperf.zerocopy must be true or false, got \"yes\""},
	{0, B ",'iperf':{'zerocopy':[true,true]}}", "invalid_field", "iperf.zerocopy[1]",
	 "repeats iperf.zerocopy[0] (true)"},
	{0, B ",'iperf':{'affinity':'1024'}}", "invalid_field", "iperf.affinity",
	 "iperf.affinity must be \"n\" or \"n,m\" with n and m CPU numbers 0..1023, got \"1024\""},
	{0, B ",'iperf':{'affinity':'1,2,3'}}", "invalid_field", "iperf.affinity", "\"n\" or \"n,m\""},
	{0, B ",'iperf':{'affinity':'01'}}", "invalid_field", "iperf.affinity", "got \"01\""},
	/* 20 digits: parsed without signed overflow (UBSan stopped here once) */
	{0, B ",'iperf':{'affinity':'99999999999999999999'}}", "invalid_field", "iperf.affinity",
	 "got \"99999999999999999999\""},
	{0, B ",'iperf':{'affinity':'1,99999999999999999999'}}", "invalid_field", "iperf.affinity",
	 "got \"1,99999999999999999999\""},
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
	{0, B ",'seed':5}", "invalid_field", "seed",
	 "seed is only used with order \"shuffled\" (order is \"sequential\")"},
	{0, B ",'order':'interleaved','seed':5}", "invalid_field", "seed", "(order is \"interleaved\")"},
	{0, B ",'order':'shuffled','seed':-1}", "invalid_field", "seed", "seed must be 0..9007199254740992, got -1"},
	{0, B ",'order':'shuffled','seed':9007199254740993}", "invalid_field", "seed", "0..9007199254740992"},
	{0, B ",'order':'shuffled','seed':'5'}", "invalid_field", "seed", "whole number 0..9007199254740992"},
	{0, B ",'pause_s':-0.5}", "invalid_field", "pause_s",
	 "pause_s must be a number of seconds 0..3600 (ms resolution), got -0.5"},
	{0, B ",'pause_s':3601}", "invalid_field", "pause_s", "0..3600"},
	{0, B ",'pause_s':'1'}", "invalid_field", "pause_s", "got \"1\""},
	/* caps */
	{0, B ",'caps':[]}", "invalid_field", "caps", "caps must be an object"},
	{0, B ",'caps':{'colour':1}}", "unknown_field", "caps.colour", "allowed here: total_s, duration_s, bitrate"},
	{0, B ",'caps':{'total_s':0}}", "invalid_field", "caps.total_s",
	 "caps.total_s must be 1..31536000 seconds, got 0"},
	{0, B ",'caps':{'duration_s':0}}", "invalid_field", "caps.duration_s", "caps.duration_s must be 1..3600"},
	{0, B ",'protocols':['tcp','udp'],'directions':['forward','reverse'],'repeats':3,'caps':{'total_s':100}}",
	 "invalid_field", "caps.total_s",
	 "an estimated 127.2 s (12 runs in 12 rounds, each round its longest omit + duration + 0.6 s, plus pauses), more than caps.total_s 100"},
	{0, B ",'repeats':2,'pause_s':1,'iperf':{'omit_s':2},'caps':{'total_s':26}}", "invalid_field", "caps.total_s",
	 "estimated 26.2 s"},
	{0, B ",'caps':{'duration_s':5}}", "invalid_field", "duration_s",
	 "duration_s is 10, more than caps.duration_s 5"},
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
	{0,
	 B ",'protocols':['tcp','udp'],'directions':['forward','reverse','bidir'],'repeats':1000,"
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
		int rc = mx_plan_text(bad[i].spec, bad[i].nolinks ? mx_inv_nolinks : mx_inv_sim, 7, &plan, &err);

		if (rc == 0 || plan != NULL || err.code != rc || strcmp(tb_err_name(rc), bad[i].code) != 0 ||
		    strcmp(err.field, bad[i].field) != 0 || strstr(err.message, bad[i].message) == NULL) {
			fprintf(stderr,
				"case %zu: %s\n  got      %s field \"%s\": %s\n  expected %s field \"%s\": ...%s...\n",
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
	static const char *const keys[] = {"parallel", "length", "window",   "bitrate",   "udp_bitrate",
					   "omit_s",   "tos",    "affinity", "congestion"};

	(void)state;
	/* 65 pairs */
	spec = mx_spec_of(B "}");
	pairs = json_object_get(spec, "pairs");
	for (int i = 0; i < 64; i++)
		json_array_append_new(pairs, json_deep_copy(json_array_get(pairs, 0)));
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "pairs");
	assert_non_null(strstr(err.message, "pairs has 65 entries; at most 64"));
	assert_null(plan);
	/* 64 pairs are fine (the same pair twice is allowed) */
	json_array_remove(pairs, 0);
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), 0);
	assert_int_equal(plan->nruns, 64);
	tb_matrix_plan_free(plan);
	while (json_array_size(pairs) > 1)
		json_array_remove(pairs, 0);
	/* every sweep at its maximum: counted with overflow checks and refused
	 * before anything is allocated */
	iperf = json_object();
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		json_t *a = json_array();

		for (int i = 0; i < (k == 5 ? 61 : 64); i++) { /* omit_s: 0..60 */
			char s[16];

			snprintf(s, sizeof(s), k == 8 ? "c%d" : "%d", i + 1);
			json_array_append_new(a, k >= 3 && k != 5 && k != 6 ? json_string(s)
									    : json_integer(k == 5 ? i : i + 1));
		}
		json_object_set_new(iperf, keys[k], a);
	}
	json_object_set_new(iperf, "zerocopy", json_pack("[b,b]", 0, 1));
	json_object_set_new(spec, "iperf", iperf);
	json_object_set_new(spec, "protocols", json_pack("[s,s]", "tcp", "udp"));
	json_object_set_new(spec, "directions", json_pack("[s,s,s]", "forward", "reverse", "bidir"));
	json_object_set_new(spec, "repeats", json_integer(1000));
	/* 2 x 3 x 64^7 x 61 x 2 cells x 1000 repeats: fits 64 bits, said exactly */
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), TB_ERR_INVALID);
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
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), TB_ERR_INVALID);
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
	assert_int_equal(tb_matrix_plan_make(spec, mx_inv_sim, 0, &plan, &err), TB_ERR_INVALID);
	assert_string_equal(err.field, "iperf.parallel");
	assert_non_null(strstr(err.message, "or a list of 1..64 of them (a sweep), got a list of 65"));
	json_decref(spec);
}

/* ---- good specs ---- */

#define BASELINE                                                                                     \
	"{'name':'baseline','pairs':[{'client':'left','server':'right'}],'protocols':['tcp','udp']," \
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
	 "'directions':['forward','reverse','bidir'],'duration_s':[5,10],'repeats':2}",
	 24, 12},
	{B ",'iperf':{'parallel':[1,2,4],'window':[null,'4M'],'tos':[0,16]}}", 12, 12},
	{B ",'protocols':['udp'],'directions':['bidir'],'iperf':{'udp_bitrate':'100M','length':65507}}", 1, 1},
	/* TCP unset or unlimited bitrate under a bitrate cap: allowed (congestion-controlled) */
	{B ",'iperf':{'bitrate':[null,'0','1G']},'caps':{'bitrate':'1G','total_s':33,'duration_s':10}}", 3, 3},
	{B ",'protocols':['udp'],'caps':{'bitrate':'1M'}}", 1, 1},
	/* null: the default */
	{B ",'order':null,'seed':null,'repeats':null,'caps':null,'iperf':{'window':null,'parallel':null}}", 1, 1},
	{B ",'iperf':{'length':'128K','window':[262144,'1M'],'bitrate':125000000,'affinity':[3,'0,1'],"
	   "'congestion':['cubic','bbr'],'zerocopy':[false,true],'omit_s':[0,2]}}",
	 32, 32},
	{B ",'os':null}", 1, 1},
	{"{'name':'bulk','pairs':[{'client':'left','server':'right'}],'repeats':1000,'protocols':['tcp','udp'],"
	 "'directions':['forward','reverse','bidir'],'duration_s':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}",
	 96000, 96},
};

static void test_good_specs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct tb_matrix_plan *plan = mx_plan_ok(good[i].spec, 5);

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
	plan = mx_plan_ok(BASELINE "}", 99);
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
		assert_string_equal(r->link, "lan20"); /* no shared link: the server's first */
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
	assert_string_equal(
		text,
		"{\"name\":\"baseline\",\"pairs\":[{\"client\":\"left\",\"server\":\"right\",\"link\":\"lan20\"}],"
		"\"protocols\":[\"tcp\",\"udp\"],\"directions\":[\"forward\",\"reverse\"],\"duration_s\":10,"
		"\"repeats\":3,\"order\":\"sequential\",\"pause_s\":0,\"concurrency\":\"disjoint\",\"iperf\":{\"parallel\":1,\"length\":null,"
		"\"window\":null,\"bitrate\":null,\"udp_bitrate\":\"0\",\"omit_s\":0,\"congestion\":null,"
		"\"tos\":null,\"zerocopy\":false,\"affinity\":null}}");
	free(text);
	assert_int_equal(tb_matrix_plan_make(plan->spec, mx_inv_sim, 1, &again, &err), 0);
	assert_int_equal(again->nruns, 12);
	assert_memory_equal(again->runs, plan->runs, 12 * sizeof(*plan->runs));
	tb_matrix_plan_free(again);

	/* a run as JSON */
	j = tb_matrix_run_json(&plan->runs[7]); /* cell 2: udp forward, repeat 1 */
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
	plan = mx_plan_ok("{'name':'t','pairs':[{'client':'left','server':'router'},"
			  "{'client':'right','server':'router'},{'client':'left','server':'router','link':'lan20'}]}",
			  0);
	assert_string_equal(plan->runs[0].link, "lan10");
	assert_string_equal(plan->runs[0].server_address, "198.19.10.1");
	assert_string_equal(plan->runs[1].link, "lan20");
	assert_string_equal(plan->runs[1].server_address, "198.19.20.1");
	assert_string_equal(plan->runs[2].link, "lan20");
	tb_matrix_plan_free(plan);

	/* the estimate with omit and pauses: 2 x (2 + 10 + 0.6) + 1 pause of 1.5 */
	plan = mx_plan_ok(B ",'repeats':2,'pause_s':1.5,'iperf':{'omit_s':2}}", 0);
	assert_int_equal(plan->pause_ms, 1500);
	assert_int_equal(plan->estimated_ms, 2 * 12600 + 1500);
	tb_matrix_plan_free(plan);
}

static void test_interleaved(void **state)
{
	struct tb_matrix_plan *plan;

	(void)state;
	plan = mx_plan_ok(BASELINE ",'order':'interleaved'}", 0);
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
	plan = mx_plan_ok(
		"{'name':'t','pairs':[{'client':'left','server':'right'},{'client':'right','server':'router'}],"
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
								assert_string_equal(r->client,
										    pair == 0 ? "left" : "right");
								assert_int_equal(r->p.proto,
										 pr == 0 ? TB_IPERF_UDP : TB_IPERF_TCP);
								assert_int_equal(r->p.dir, d == 0 ? TB_IPERF_REVERSE
												  : TB_IPERF_FORWARD);
								assert_int_equal(r->p.duration_s, t == 0 ? 5 : 10);
								assert_int_equal(r->p.parallel, par + 1);
								assert_string_equal(r->p.bitrate,
										    pr == 0 ? ubr[br] : tbr[br]);
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

static void test_shuffled(void **state)
{
	/* seed 42 over the baseline's 12 runs, as cell*3 + repeat: pinned, so that
	 * a stored seed gives this order on every machine */
	static const int pinned42[12] = {2, 8, 4, 5, 3, 11, 7, 10, 1, 6, 9, 0};
	struct tb_matrix_plan *a, *b, *c, *d;
	struct tb_error err = {0};
	int expect[12], differ = 0;

	(void)state;
	a = mx_plan_ok(BASELINE ",'order':'shuffled','seed':42}", 0);
	b = mx_plan_ok(BASELINE ",'order':'shuffled','seed':42}", 777);
	c = mx_plan_ok(BASELINE ",'order':'shuffled','seed':43}", 0);
	assert_int_equal(a->seed, 42);
	mx_check_permutation(a);
	mx_check_permutation(c);
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
	d = mx_plan_ok(BASELINE ",'order':'shuffled','seed':0}", 0);
	mx_check_permutation(d);
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
	a = mx_plan_ok(BASELINE ",'order':'shuffled'}", UINT64_C(0xFFFF000000012345));
	assert_int_equal(a->seed, UINT64_C(0xFFFF000000012345) & ((UINT64_C(1) << 53) - 1));
	assert_int_equal((uint64_t)json_integer_value(json_object_get(a->spec, "seed")), a->seed);
	assert_int_equal(tb_matrix_plan_make(a->spec, mx_inv_sim, 1, &b, &err), 0);
	assert_int_equal(b->seed, a->seed);
	assert_memory_equal(a->runs, b->runs, 12 * sizeof(*a->runs));
	tb_matrix_plan_free(a);
	tb_matrix_plan_free(b);
}

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
		{"{'direction':'forward','duration_s':10}", "invalid_field", "protocol",
		 "protocol must be one of tcp | udp"},
		{"{'protocol':'tcp','direction':'up','duration_s':10}", "invalid_field", "direction",
		 "forward | reverse | bidir"},
		{"{'protocol':'tcp','direction':'forward'}", "invalid_field", "duration_s", "duration_s is required"},
		{"{'protocol':'tcp','direction':'forward','duration_s':0}", "invalid_field", "duration_s", "1..86400"},
		{"{'protocol':'udp','direction':'forward','duration_s':10,'length':70000}", "invalid_field", "length",
		 "UDP runs take at most 65507"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'tos':'x'}", "invalid_field", "tos",
		 "0..255"},
		{"{'protocol':'tcp','direction':'forward','duration_s':10,'bitrate':'fast'}", "invalid_field",
		 "bitrate", "bitrate must be a bitrate like"},
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
	assert_true(mx_same_params(&p, &q));
	json_decref(j);
	mx_roundtrip(&p);

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
	mx_roundtrip(&p);
	/* missing optional keys are the unset values */
	j = mx_spec_of("{'protocol':'tcp','direction':'reverse','duration_s':5}");
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
		j = mx_spec_of(badp[i].json);
		rc = tb_matrix_params_from_json(j, &q, &e);
		if (rc == 0 || strcmp(tb_err_name(rc), badp[i].code) != 0 || strcmp(e.field, badp[i].field) != 0 ||
		    strstr(e.message, badp[i].message) == NULL)
			fprintf(stderr, "params case %zu: %s field \"%s\": %s\n", i, tb_err_name(rc), e.field,
				e.message);
		assert_int_not_equal(rc, 0);
		assert_string_equal(tb_err_name(rc), badp[i].code);
		assert_string_equal(e.field, badp[i].field);
		assert_non_null(strstr(e.message, badp[i].message));
		assert_memory_equal(&p, &q, sizeof(p)); /* untouched on error */
		json_decref(j);
	}
	assert_string_equal(tb_iperf_proto_name(TB_IPERF_TCP), "tcp");
	assert_string_equal(tb_iperf_proto_name(TB_IPERF_UDP), "udp");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_FORWARD), "forward");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_REVERSE), "reverse");
	assert_string_equal(tb_iperf_dir_name(TB_IPERF_BIDIR), "bidir");
}

/* ---- a large plan ---- */

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
	assert_true(fabs(s.stdev - sqrt(32.0 / 7.0)) < 1e-12); /* sum of squares 32, n - 1 = 7 */
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
	assert_true(big[0] == 2000); /* the input is not sorted in place */
	tb_stats_compute(big, 1025, &s);
	assert_true(fabs(s.median - (2000 - 512)) < 1e-9);
	free(big);
}

/* The runner holds every machine a matrix's pairs name, at most
 * TB_MATRIX_HOSTS_MAX: 64 machines plan, 66 are refused with the count (the
 * runner used to drop the 65th silently, and then did not hold it). */
static void test_hosts_limit(void **state)
{
	char *inv_text = malloc(66 * 160 + 128), *spec = malloc(33 * 64 + 128);
	struct tb_inventory *inv;
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};
	size_t o = 0;

	(void)state;
	assert_non_null(inv_text);
	assert_non_null(spec);
	o += (size_t)sprintf(inv_text, "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n");
	for (int i = 0; i < 66; i++)
		o += (size_t)sprintf(inv_text + o,
				     "  h%02d:\n    role: host\n    os: {ubuntu: {address: 198.18.1.%d}}\n"
				     "    links:\n      lan: {address: 198.19.1.%d/24}\n",
				     i, i + 1, i + 1);
	assert_non_null(inv = mx_load_inv(inv_text));
	for (int npairs = 32; npairs <= 33; npairs++) {
		o = (size_t)sprintf(spec, "{'name':'wide','pairs':[");
		for (int i = 0; i < npairs; i++)
			o += (size_t)sprintf(spec + o, "%s{'client':'h%02d','server':'h%02d'}", i ? "," : "", 2 * i,
					     2 * i + 1);
		sprintf(spec + o, "]}");
		if (npairs == 32) {
			assert_int_equal(mx_plan_text(spec, inv, 7, &plan, &err), 0);
			tb_matrix_plan_free(plan);
			plan = NULL;
		} else {
			assert_int_equal(mx_plan_text(spec, inv, 7, &plan, &err), TB_ERR_INVALID);
			assert_null(plan);
			assert_string_equal(err.field, "pairs");
			assert_non_null(strstr(err.message, "pairs name 66 machines; a matrix may use at most 64"));
		}
	}
	tb_inventory_free(inv);
	free(inv_text);
	free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts_limit),     cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_bad_sizes),       cmocka_unit_test(test_good_specs),
		cmocka_unit_test(test_baseline),        cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_expansion_order), cmocka_unit_test(test_shuffled),
		cmocka_unit_test(test_params_json),     cmocka_unit_test(test_stats),
	};

	return cmocka_run_group_tests_name("matrix", tests, mx_setup, mx_teardown);
}
