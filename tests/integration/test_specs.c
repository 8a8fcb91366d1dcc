/*
 * test_specs.c - the spec library against the real testbedd on port 0
 * (loopback inventory; no machine needs to answer: nothing runs).
 *
 * Covered: POST /specs makes version 1 then 2 of a name (201, audited as
 * spec.push); a bad spec gets the matrix parser's 400 naming the field
 * (repeats, pairs[0].client) and stores nothing; a '/' in the name is a 400;
 * a viewer gets 403 on POST; GET /specs lists each name with its latest
 * version and count; GET /specs/{name} gives the latest and the versions;
 * GET /specs/{name}/versions/1 the first as pushed; a missing name or
 * version is 404; GET /specs/{name}/diff?a=1&b=2 lists exactly the keys
 * that changed (a JSON pointer, op, a, b); a bad a is 400 naming "a"; the
 * library survives a restart.  Schedules: each bad field of PUT
 * .../schedule is a 400 naming it, an unknown spec 404; a schedule is set,
 * listed with its next time (null for a time that never comes) and
 * deleted; a matrix no schedule started has no gate.  tbctl spec push (the
 * file's name replaced by NAME) | list | show NAME V | diff NAME A B.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon.h"
#include "datafile.h"

static struct tb_test_daemon D;

static const char v1[] = "{\"name\":\"nightly\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],"
			 "\"duration_s\":1,\"repeats\":1}";
static const char v2[] = "{\"name\":\"nightly\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],"
			 "\"duration_s\":5,\"repeats\":1,\"protocols\":[\"udp\"]}";

static int setup(void **state)
{
	(void)state;
	return tb_test_daemon_start(&D, NULL, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return tb_test_daemon_stop(&D);
}

static long long version_of(const struct tb_test_resp *r)
{
	return (long long)json_integer_value(json_object_get(json_object_get(r->json, "spec"), "version"));
}

static void test_push_and_refusals(void **state)
{
	struct tb_test_resp r;
	char viewer[128];

	(void)state;
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/specs", v1, 201, &r);
	assert_int_equal(version_of(&r), 1);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/specs", v2, 201, &r);
	assert_int_equal(version_of(&r), 2);
	tb_test_resp_free(&r);

	/* the matrix parser's own 400s, nothing stored */
	static const struct {
		const char *body, *field;
	} bad[] = {
		{"{\"name\":\"nightly\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"repeats\":0}",
		 "repeats"},
		{"{\"name\":\"nightly\",\"pairs\":[{\"client\":\"nope\",\"server\":\"left\"}]}", "pairs[0].client"},
		{"{\"name\":\"a/b\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}]}", "name"},
		{"{\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}]}", "name"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tb_test_api_expect(&D, NULL, "POST", "/api/v1/specs", bad[i].body, 400, &r);
		assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")),
				    bad[i].field);
		tb_test_resp_free(&r);
	}
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly", NULL, 200, &r);
	assert_int_equal(version_of(&r), 2);
	assert_int_equal(json_array_size(json_object_get(r.json, "versions")), 2);
	tb_test_resp_free(&r);

	assert_int_equal(tb_test_create_token(&D, "v", "viewer", viewer, sizeof(viewer)), 201);
	tb_test_api_expect(&D, viewer, "POST", "/api/v1/specs", v1, 403, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, viewer, "GET", "/api/v1/specs", NULL, 200, &r);
	tb_test_resp_free(&r);

	tb_test_api(&D, NULL, "GET", "/api/v1/audit", NULL, &r);
	assert_non_null(strstr(r.body, "spec.push"));
	assert_non_null(strstr(r.body, "spec nightly v2"));
	tb_test_resp_free(&r);
}

static void test_list_show_diff(void **state)
{
	struct tb_test_resp r;
	json_t *spec, *changes, *c;
	size_t i;
	int seen_dur = 0, seen_proto = 0;

	(void)state;
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs", NULL, 200, &r);
	assert_int_equal(json_array_size(json_object_get(r.json, "specs")), 1);
	spec = json_array_get(json_object_get(r.json, "specs"), 0);
	assert_string_equal(json_string_value(json_object_get(spec, "name")), "nightly");
	assert_int_equal(json_integer_value(json_object_get(spec, "version")), 2);
	assert_int_equal(json_integer_value(json_object_get(spec, "versions")), 2);
	tb_test_resp_free(&r);

	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly/versions/1", NULL, 200, &r);
	spec = json_object_get(json_object_get(r.json, "spec"), "spec");
	assert_int_equal(json_integer_value(json_object_get(spec, "duration_s")), 1);
	assert_null(json_object_get(spec, "protocols"));
	tb_test_resp_free(&r);

	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly/versions/3", NULL, 404, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nobody", NULL, 404, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly/diff?a=x&b=2", NULL, 400, &r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")), "a");
	tb_test_resp_free(&r);

	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly/diff?a=1&b=2", NULL, 200, &r);
	changes = json_object_get(r.json, "changes");
	assert_int_equal(json_array_size(changes), 2);
	json_array_foreach(changes, i, c)
	{
		const char *path = json_string_value(json_object_get(c, "path"));
		const char *op = json_string_value(json_object_get(c, "op"));

		if (strcmp(path, "/duration_s") == 0) {
			assert_string_equal(op, "changed");
			assert_int_equal(json_integer_value(json_object_get(c, "a")), 1);
			assert_int_equal(json_integer_value(json_object_get(c, "b")), 5);
			seen_dur = 1;
		} else if (strcmp(path, "/protocols") == 0) {
			assert_string_equal(op, "added");
			assert_null(json_object_get(c, "a"));
			seen_proto = 1;
		}
	}
	assert_true(seen_dur && seen_proto);
	tb_test_resp_free(&r);
}

static void test_survives_restart(void **state)
{
	struct tb_test_resp r;

	(void)state;
	assert_int_equal(tb_test_daemon_kill(&D), 0);
	assert_int_equal(tb_test_daemon_launch(&D, NULL, 0), 0);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/specs/nightly", NULL, 200, &r);
	assert_int_equal(version_of(&r), 2);
	tb_test_resp_free(&r);
}

/* The schedule API (the sim test test_schedule.sh shows one firing). */
static void test_schedule_api(void **state)
{
	static const struct {
		const char *path, *body, *field;
		long status;
	} bad[] = {
		{"/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * *\"}", "cron", 400},
		{"/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\",\"baseline\":\"first\"}", "baseline", 400},
		{"/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\",\"metric\":\"speed\"}", "metric", 400},
		{"/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\",\"max_drop\":101}", "max_drop", 400},
		{"/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\",\"colour\":1}", "colour", 400},
		{"/api/v1/specs/nobody/schedule", "{\"cron\":\"* * * * *\"}", "name", 404},
	};
	struct tb_test_resp r;
	json_t *sc;
	long long id;
	char path[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tb_test_api_expect(&D, NULL, "PUT", bad[i].path, bad[i].body, bad[i].status, &r);
		assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")),
				    bad[i].field);
		tb_test_resp_free(&r);
	}
	/* 3 a.m. on 31 February never comes: no next time, nothing starts */
	tb_test_api_expect(&D, NULL, "PUT", "/api/v1/specs/nightly/schedule",
			   "{\"cron\":\"0 3 31 2 *\",\"baseline\":7,\"max_drop\":10}", 200, &r);
	sc = json_object_get(r.json, "schedule");
	assert_string_equal(json_string_value(json_object_get(sc, "baseline")), "7");
	assert_true(json_is_null(json_object_get(sc, "next_at")));
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "PUT", "/api/v1/specs/nightly/schedule", "{\"cron\":\"0 3 * * *\"}", 200, &r);
	sc = json_object_get(r.json, "schedule");
	assert_string_equal(json_string_value(json_object_get(sc, "baseline")), "latest-passing");
	assert_true(json_is_string(json_object_get(sc, "next_at")));
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/schedules", NULL, 200, &r);
	assert_int_equal(json_array_size(json_object_get(r.json, "schedules")), 1);
	sc = json_array_get(json_object_get(r.json, "schedules"), 0);
	assert_int_equal(json_array_size(json_object_get(sc, "last")), 0);
	assert_true(json_is_null(json_object_get(sc, "last_failure"))); /* no time came yet */
	tb_test_resp_free(&r);
	/* a matrix started by hand: no gate, and null as the matrix's gate */
	tb_test_api_expect(&D, NULL, "POST", "/api/v1/matrices", v1, 201, &r);
	id = json_integer_value(json_object_get(json_object_get(r.json, "matrix"), "id"));
	assert_true(id > 0);
	tb_test_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/gate", id);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 404, &r);
	tb_test_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld", id);
	tb_test_api_expect(&D, NULL, "GET", path, NULL, 200, &r);
	assert_true(json_is_null(json_object_get(json_object_get(r.json, "matrix"), "gate")));
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "DELETE", "/api/v1/specs/nightly/schedule", NULL, 204, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&D, NULL, "DELETE", "/api/v1/specs/nightly/schedule", NULL, 404, &r);
	tb_test_resp_free(&r);
}

/* tbctl spec push|list|show|diff (after the two versions pushed above). */
static void test_tbctl_spec(void **state)
{
	char out[8192], file[400];

	(void)state;
	snprintf(file, sizeof(file), "%s/spec.json", D.dir);
	assert_int_equal(
		tb_test_write_file(
			file,
			"{\"name\":\"other\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],\"duration_s\":2}",
			0600),
		0);
	assert_int_equal(
		tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "push", "nightly", file, NULL}, out, sizeof(out)),
		0);
	assert_non_null(strstr(out, "nightly version 3"));
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "list", NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "nightly"));
	assert_int_equal(
		tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "show", "nightly", "1", NULL}, out, sizeof(out)),
		0);
	assert_non_null(strstr(out, "nightly version 1"));
	assert_non_null(strstr(out, "\"duration_s\": 1"));
	assert_int_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "diff", "nightly", "1", "3", NULL}, out,
				       sizeof(out)),
			 0);
	assert_non_null(strstr(out, "changed  /duration_s: 1 -> 2"));
	assert_int_not_equal(tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "diff", "nightly", "1", "x", NULL},
					   out, sizeof(out)),
			     0);
	assert_int_not_equal(
		tb_test_tbctl(&D, NULL, (const char *const[]){"spec", "show", "nobody", NULL}, out, sizeof(out)), 0);
}

/* GET /schedules lists every schedule: more than the 64 the ticker starts
 * in one second (they were cut there). */
static void test_many_schedules(void **state)
{
	char body[256], path[128];
	struct tb_test_resp r;
	json_t *sc;
	size_t i, many = 0;

	(void)state;
	for (int k = 0; k < 70; k++) {
		snprintf(body, sizeof(body),
			 "{\"name\":\"many%02d\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],"
			 "\"duration_s\":1,\"repeats\":1}",
			 k);
		tb_test_api_expect(&D, NULL, "POST", "/api/v1/specs", body, 201, &r);
		tb_test_resp_free(&r);
		snprintf(path, sizeof(path), "/api/v1/specs/many%02d/schedule", k);
		tb_test_api_expect(&D, NULL, "PUT", path, "{\"cron\":\"0 3 31 2 *\"}", 200, &r); /* never due */
		tb_test_resp_free(&r);
	}
	tb_test_api_expect(&D, NULL, "GET", "/api/v1/schedules", NULL, 200, &r);
	json_array_foreach(json_object_get(r.json, "schedules"), i, sc)
	{
		if (strncmp(json_string_value(json_object_get(sc, "name")), "many", 4) == 0)
			many++;
	}
	tb_test_resp_free(&r);
	assert_int_equal(many, 70);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_and_refusals), cmocka_unit_test(test_list_show_diff),
		cmocka_unit_test(test_survives_restart),  cmocka_unit_test(test_schedule_api),
		cmocka_unit_test(test_tbctl_spec),        cmocka_unit_test(test_many_schedules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
