/*
 * test_notify_rules.c - the notifier's pure parts, as tables: which triggers an
 * event fires (nf_classify, with the reachability it had before and who
 * holds the host), which addresses the connect guard refuses
 * (nf_addr_refused), which URLs a sink takes (nf_url_check), and which rule
 * bodies are refused naming which field (tb_notify_rule_parse).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <jansson.h>

#include "notify.h"
#include "notify_internal.h"

/* ---- nf_classify ---- */

struct fake {
	char before[16]; /* what swap_reach answers */
	int held;
};

static const char *swap_reach(void *cls, const char *host, const char *now)
{
	(void)host;
	(void)now;
	return ((struct fake *)cls)->before;
}

static int held(void *cls, const char *host)
{
	(void)host;
	return ((struct fake *)cls)->held;
}

struct ev_case {
	const char *event; /* the bus's JSON */
	const char *before;
	int held;
	const char *want; /* triggers fired, "a,b" or "" */
};

static const struct ev_case events[] = {
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"succeeded\"}}", "", 0, "matrix.ended"},
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"failed\"}}", "", 0, "matrix.failed"},
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"canceled\"}}", "", 0, "matrix.canceled"},
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"interrupted\"}}", "", 0, "matrix.interrupted"},
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"running\"}}", "", 0, ""},
	{"{\"type\":\"matrix.state\",\"matrix\":3,\"data\":{\"state\":\"queued\"}}", "", 0, ""},
	{"{\"type\":\"run.state\",\"matrix\":3,\"host\":\"left\",\"data\":{\"state\":\"failed\"}}", "", 0,
	 "run.failed"},
	{"{\"type\":\"run.state\",\"matrix\":3,\"host\":\"left\",\"data\":{\"state\":\"ok\"}}", "", 0, ""},
	{"{\"type\":\"matrix.gate\",\"matrix\":3,\"data\":{\"passed\":false}}", "", 0, "gate.failed"},
	{"{\"type\":\"matrix.gate\",\"matrix\":3,\"data\":{\"passed\":true}}", "", 0, ""},
	/* what schedule.c publishes */
	{"{\"type\":\"matrix.gate\",\"matrix\":4,\"data\":{\"verdict\":\"fail\",\"dropped\":[1,3]}}", "", 0,
	 "gate.failed"},
	{"{\"type\":\"matrix.gate\",\"matrix\":4,\"data\":{\"verdict\":\"pass\",\"dropped\":[]}}", "", 0, ""},
	{"{\"type\":\"matrix.gate\",\"matrix\":4,\"data\":{\"verdict\":\"no_baseline\"}}", "", 0, ""},
	/* host.state: a change of reachability, with no holder */
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\"}}", "up", 0, "host.down"},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"up\"}}", "down", 0, "host.up"},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\"}}", "down", 0, ""},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\"}}", "", 0, ""},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"up\"}}", "", 0, ""},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\"}}", "up", 1, ""},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\",\"held_by\":{\"kind\":"
	 "\"action\"}}}",
	 "up", 0, ""},
	{"{\"type\":\"host.state\",\"host\":\"left\",\"data\":{\"reachability\":\"down\",\"held_by\":null}}", "up", 1,
	 "host.down"},
	{"{\"type\":\"host.bmc\",\"host\":\"left\",\"data\":{\"change\":\"mismatch\",\"mismatch\":{\"message\":\"m\"}}}",
	 "", 0, "bmc.mismatch"},
	{"{\"type\":\"host.bmc\",\"host\":\"left\",\"data\":{\"change\":\"mismatch\",\"mismatch\":null}}", "", 0, ""},
	{"{\"type\":\"host.bmc\",\"host\":\"left\",\"data\":{\"change\":\"power\",\"mismatch\":null}}", "", 0, ""},
	{"{\"type\":\"action.state\",\"host\":\"left\",\"data\":{\"state\":\"failed\",\"actor\":\"admin\"}}", "", 0,
	 "action.failed"},
	{"{\"type\":\"action.state\",\"host\":\"left\",\"data\":{\"state\":\"failed\",\"actor\":\"schedule\"}}", "", 0,
	 "action.failed,wake.failed"},
	{"{\"type\":\"action.state\",\"host\":\"left\",\"data\":{\"state\":\"succeeded\",\"actor\":\"idle\"}}", "", 0,
	 "idle.poweroff"},
	{"{\"type\":\"action.state\",\"host\":\"left\",\"data\":{\"state\":\"succeeded\",\"actor\":\"admin\"}}", "", 0,
	 ""},
	/* a schedule that could not start its matrix (schedule.c) */
	{"{\"type\":\"schedule.failed\",\"data\":{\"spec\":\"nightly\",\"error\":{\"message\":\"m\"}}}", "", 0,
	 "schedule.failed"},
	{"{\"type\":\"audit\",\"data\":{}}", "", 0, ""},
	{NULL, NULL, 0, NULL},
};

static void test_classify(void **state)
{
	(void)state;
	for (const struct ev_case *c = events; c->event != NULL; c++) {
		struct fake f = {.held = c->held};
		struct nf_context ctx = {swap_reach, held, &f};
		json_t *ev = json_loads(c->event, 0, NULL);
		char got[256] = "";
		unsigned bits;

		assert_non_null(ev);
		snprintf(f.before, sizeof(f.before), "%s", c->before);
		bits = nf_classify(ev, &ctx);
		for (unsigned i = 0; nf_trigger_names[i] != NULL; i++)
			if (bits & (1u << i))
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", got[0] ? "," : "",
					 nf_trigger_names[i]);
		if (strcmp(got, c->want) != 0)
			fail_msg("%s (before %s, held %d): got \"%s\", want \"%s\"", c->event, c->before, c->held, got,
				 c->want);
		json_decref(ev);
	}
}

/* The message of a schedule that could not start names the spec and why. */
static void test_schedule_failed_message(void **state)
{
	struct nf_rule r = {.id = 7, .name = "ops", .enabled = 1, .triggers = nf_trigger_bit("schedule.failed")};
	json_t *ev = json_loads("{\"id\":9,\"type\":\"schedule.failed\",\"data\":{\"spec\":\"nightly\","
				"\"cron\":\"0 3 * * *\",\"error\":{\"code\":\"invalid\",\"message\":\"pairs[0]."
				"client: no machine right\"}}}",
				0, NULL),
	       *m;
	char *text;

	(void)state;
	assert_non_null(ev);
	assert_int_not_equal(r.triggers, 0);
	text = nf_message(&r, nf_classify(ev, &(struct nf_context){NULL, NULL, NULL}), ev, NULL, NULL);
	assert_non_null(text);
	m = json_loads(text, 0, NULL);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "trigger")), "schedule.failed");
	assert_string_equal(json_string_value(json_object_get(m, "title")),
			    "testbedd: the schedule of spec nightly did not start its matrix");
	assert_string_equal(json_string_value(json_object_get(m, "text")),
			    "the schedule of spec nightly did not start its matrix: pairs[0].client: no machine right");
	json_decref(m);
	free(text);
	json_decref(ev);
}

/* With a public URL a message links to its page: a failed run to the run
 * page, a matrix to the matrix page, a host to the hosts page. */
static void test_message_links(void **state)
{
	static const struct {
		const char *trigger, *event, *url;
	} cases[] = {
		{"run.failed",
		 "{\"id\":1,\"type\":\"run.state\",\"matrix\":4,\"data\":{\"run\":17,\"state\":\"failed\"}}",
		 "https://tb.example/#/runs/17"},
		{"matrix.failed", "{\"id\":2,\"type\":\"matrix.state\",\"matrix\":4,\"data\":{\"state\":\"failed\"}}",
		 "https://tb.example/#/matrices/4"},
		{"host.down", "{\"id\":3,\"type\":\"host.state\",\"host\":\"a\",\"data\":{}}",
		 "https://tb.example/#/hosts"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nf_rule r = {.id = 1, .name = "x", .enabled = 1, .triggers = nf_trigger_bit(cases[i].trigger)};
		json_t *ev = json_loads(cases[i].event, 0, NULL), *m;
		const char *text;
		char *s;

		assert_non_null(ev);
		s = nf_message(&r, nf_trigger_bit(cases[i].trigger), ev, NULL, "https://tb.example");
		m = json_loads(s, 0, NULL);
		assert_non_null(m);
		assert_string_equal(json_string_value(json_object_get(m, "url")), cases[i].url);
		text = json_string_value(json_object_get(m, "text"));
		assert_string_equal(text + strlen(text) - strlen(cases[i].url), cases[i].url);
		json_decref(m);
		free(s);
		s = nf_message(&r, nf_trigger_bit(cases[i].trigger), ev, NULL, NULL);
		m = json_loads(s, 0, NULL);
		assert_null(json_object_get(m, "url"));
		assert_null(strstr(json_string_value(json_object_get(m, "text")), "https://"));
		json_decref(m);
		free(s);
		json_decref(ev);
	}
}

/* ---- nf_addr_refused ---- */

struct addr_case {
	const char *addr;
	int refused;
};

static const struct addr_case addrs[] = {
	{"127.0.0.1", 1},
	{"127.255.255.254", 1},
	{"0.0.0.0", 1},
	{"169.254.169.254", 1},
	{"169.254.1.1", 1},
	{"100.100.100.200", 1},
	{"224.0.0.1", 1},
	{"255.255.255.255", 1},
	{"::1", 1},
	{"::", 1},
	{"::ffff:127.0.0.1", 1},
	{"::ffff:169.254.169.254", 1},
	{"::127.0.0.1", 1},
	{"fe80::1", 1},
	{"febf::1", 1},
	{"ff02::1", 1},
	{"fd00:ec2::254", 1},
	{"10.1.2.3", 0},
	{"192.168.1.10", 0},
	{"172.16.0.1", 0},
	{"198.18.208.1", 0},
	{"8.8.8.8", 0},
	{"100.100.100.201", 0},
	{"2001:db8::1", 0},
	{"fd00::1", 0},
	{"fec0::1", 0},
	{"::ffff:10.0.0.1", 0},
	{NULL, 0},
};

static void test_addr_refused(void **state)
{
	(void)state;
	for (const struct addr_case *c = addrs; c->addr != NULL; c++) {
		struct sockaddr_in s4 = {.sin_family = AF_INET};
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
		const struct sockaddr *sa = NULL;
		char why[64] = "";
		int got;

		if (inet_pton(AF_INET, c->addr, &s4.sin_addr) == 1)
			sa = (const struct sockaddr *)&s4;
		else if (inet_pton(AF_INET6, c->addr, &s6.sin6_addr) == 1)
			sa = (const struct sockaddr *)&s6;
		else
			fail_msg("bad case %s", c->addr);
		got = nf_addr_refused(sa, why, sizeof(why));
		if (got != c->refused)
			fail_msg("%s: refused %d, want %d (%s)", c->addr, got, c->refused, why);
		if (got)
			assert_true(why[0] != '\0');
	}
}

/* ---- nf_url_check ---- */

struct url_case {
	const char *url;
	int email;
	const char *host; /* NULL: refused */
};

static const struct url_case urls[] = {
	{"https://ntfy.sh/topic", 0, "ntfy.sh"},
	{"http://127.0.0.1:8080/x", 0, "127.0.0.1"},
	{"http://[::1]:80/", 0, "::1"},
	{"HTTPS://Example.ORG/", 0, "Example.ORG"},
	{"ftp://h/", 0, NULL},
	{"file:///etc/passwd", 0, NULL},
	{"gopher://h/", 0, NULL},
	{"https://user:pw@h/", 0, NULL},
	{"https://user@h/", 0, NULL},
	{"https://h/a b", 0, NULL},
	{"https://h/\r\nX: y", 0, NULL},
	{"smtp://mail:587", 0, NULL},
	{"smtp://mail.example.org:587", 1, "mail.example.org"},
	{"smtps://mail.example.org", 1, "mail.example.org"},
	{"https://mail.example.org", 1, NULL},
	{NULL, 0, NULL},
};

static void test_url_check(void **state)
{
	(void)state;
	for (const struct url_case *c = urls; c->url != NULL; c++) {
		struct tb_error e = {0};
		char host[256];
		int rc = nf_url_check(c->url, c->email, "sink.url", host, sizeof(host), &e);

		if (c->host == NULL && rc == 0)
			fail_msg("%s: taken", c->url);
		if (c->host != NULL && (rc != 0 || strcmp(host, c->host) != 0))
			fail_msg("%s: %s (host \"%s\")", c->url, e.message, host);
	}
}

/* ---- rule bodies: refused, naming the field ---- */

struct body_case {
	const char *body;
	const char *field; /* NULL: taken */
};

static const struct body_case bodies[] = {
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"}}", NULL},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"},\"matrices\":[1,2],"
	 "\"hosts\":[\"left\"],\"enabled\":false}",
	 NULL},
	{"{\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"}}", "name"},
	{"{\"name\":\"\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"}}", "name"},
	{"{\"name\":\"a\\u202eb\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"}}", "name"},
	{"{\"name\":\"n\",\"triggers\":\"host.down\",\"sink\":{\"url\":\"https://h/\"}}", "triggers"},
	{"{\"name\":\"n\",\"triggers\":[1],\"sink\":{\"url\":\"https://h/\"}}", "triggers"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"matrices\":[0],\"sink\":{\"url\":\"https://h/\"}}",
	 "matrices"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"matrices\":\"1\",\"sink\":{\"url\":\"https://h/\"}}",
	 "matrices"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"enabled\":1,\"sink\":{\"url\":\"https://h/\"}}", "enabled"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":\"https://h/\"}", "sink"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"irc\",\"url\":\"https://h/\"}}",
	 "sink.type"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\",\"url_file\":\"/x\"}}",
	 "sink.url"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\",\"hmac_key_file\":\"\"}}",
	 "sink.hmac_key_file"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\",\"hmac_key_file\":\"a/b\"}}",
	 "sink.hmac_key_file"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\",\"hmac_key_file\":\"..\"}}",
	 "sink.hmac_key_file"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\","
	 "\"token_file\":\"/nonexistent/tb-token\"}}",
	 "sink.token_file"},
	{"{\"name\":\"n\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\",\"secret\":\"x\"}}", "secret"},
	{NULL, NULL},
};

static void test_rule_bodies(void **state)
{
	(void)state;
	for (const struct body_case *c = bodies; c->body != NULL; c++) {
		struct tb_error e = {0};
		json_t *b = json_loads(c->body, 0, NULL), *spec = NULL;
		const char *name;
		int rc;

		assert_non_null(b);
		rc = tb_notify_rule_parse(b, "/nonexistent/notify-secrets", &spec, &name, &e);
		if (c->field == NULL && rc != 0)
			fail_msg("%s: refused: %s", c->body, e.message);
		if (c->field != NULL && (rc == 0 || strcmp(e.field, c->field) != 0))
			fail_msg("%s: want field %s, got rc %d field \"%s\" (%s)", c->body, c->field, rc, e.field,
				 e.message);
		json_decref(spec);
		json_decref(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),      cmocka_unit_test(test_schedule_failed_message),
		cmocka_unit_test(test_message_links), cmocka_unit_test(test_addr_refused),
		cmocka_unit_test(test_url_check),     cmocka_unit_test(test_rule_bodies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
