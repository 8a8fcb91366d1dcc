/*
 * test_notify.c - notification rules and webhook sinks, end to end: the
 * real testbedd (port 0) sends to a real HTTP receiver on loopback
 * (tests/support/hookrx.h), allowed explicitly by each rule's
 * allow_private_host (without it loopback is refused, also through the name
 * localhost).  Checked: the rules API and its refusals, a signed generic
 * body (HMAC over "timestamp.body"), the templates' bodies, retries after a
 * 500 with the rule marked failing then cleared, the backlog kept in order
 * across a daemon restart, and a rule firing on a real event (a power action
 * whose command fails) with host filters, a schedule that cannot start
 * (schedule.failed).  Secrets never come back in a
 * reply or the log.  Retries are shortened with
 * TESTBEDD_TEST_NOTIFY_BACKOFF_MS; waits are bounds, not measurements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "crypto.h"
#include "daemon.h"
#include "datafile.h"
#include "hookrx.h"
#include "smtprx.h"

#define KEY "hmac-key-do-not-show-7f3a"
#define TOKEN "bearer-token-do-not-show-91c2"

static const char inventory[] = "version: 1\n"
				"ssh:\n"
				"  user: root\n"
				"  key_file: %s\n"
				"  connect_timeout_s: 2\n"
				"machines:\n"
				"  left:\n"
				"    role: host\n"
				"    power:\n"
				"      - driver: command\n"
				"        on: [\"false\"]\n"
				"        status: [echo, \"off\"]\n"
				"        off_pattern: \"^off$\"\n"
				"    os:\n"
				"      ubuntu: {address: 127.0.0.1, port: 9}\n"
				"  right:\n"
				"    role: host\n"
				"    os:\n"
				"      ubuntu: {address: 127.0.0.3, port: 9}\n";

static struct tb_test_daemon d;
static struct tb_hookrx *rx;
static unsigned int rx_port;
static char key_file[400], token_file[400], loose_file[400], outside_file[400], link_file[400], tmp_dir[64];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Create a rule; its id. */
static long long create(const char *fmt, ...)
{
	char body[2048];
	struct tb_test_resp r;
	long long id;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/notifications", body, 201, &r);
	id = (long long)json_integer_value(json_object_get(r.json, "id"));
	assert_null(strstr(r.body, KEY));
	tb_test_resp_free(&r);
	return id;
}

static long long send_test(long long rule)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/notifications/%lld/test", rule);
	return tb_test_api_int(&d, NULL, "POST", path, NULL, 202, "delivery");
}

/* The delivery log entry of delivery id once pred holds (30 s at most): a
 * new reference. */
static json_t *wait_delivery(long long rule, long long id, const char *state, int min_attempts)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/notifications/%lld/deliveries", rule);
	for (int i = 0; i < 300; i++) {
		struct tb_test_resp r;
		json_t *v, *hit = NULL;
		size_t k;

		tb_test_api_expect(&d, NULL, "GET", path, NULL, 200, &r);
		json_array_foreach(json_object_get(r.json, "deliveries"), k, v)
		{
			if (json_integer_value(json_object_get(v, "id")) == id &&
			    strcmp(json_string_value(json_object_get(v, "state")), state) == 0 &&
			    json_integer_value(json_object_get(v, "attempts")) >= min_attempts)
				hit = json_incref(v);
		}
		tb_test_resp_free(&r);
		if (hit != NULL)
			return hit;
		sleep_ms(100);
	}
	fail_msg("delivery %lld of rule %lld never reached %s with %d attempts", id, rule, state, min_attempts);
	return NULL;
}

static json_t *get_rule(long long rule)
{
	char path[128];
	struct tb_test_resp r;
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/notifications/%lld", rule);
	tb_test_api_expect(&d, NULL, "GET", path, NULL, 200, &r);
	j = json_incref(r.json);
	tb_test_resp_free(&r);
	return j;
}

/* The daemon's --public-url (its trailing slash is dropped). */
static const char *const public_url[] = {"--public-url", "https://tb.example.org/lab/", NULL};
#define PUBLIC "https://tb.example.org/lab"

static int setup(void **state)
{
	char secrets[400];

	(void)state;
	setenv("TESTBEDD_TEST_NOTIFY_BACKOFF_MS", "100", 1);
	if (tb_hookrx_start(&rx, &rx_port) != 0 || tb_test_daemon_start(&d, inventory, public_url) != 0)
		return -1;
	/* a rule's secrets live in STATE_DIR/notify-secrets; a 0600 file
	 * elsewhere, or a link to one, is refused */
	snprintf(secrets, sizeof(secrets), "%s/notify-secrets", d.state_dir);
	assert_int_equal(mkdir(secrets, 0700), 0);
	snprintf(key_file, sizeof(key_file), "%s/hmac.key", secrets);
	snprintf(token_file, sizeof(token_file), "%s/bearer.token", secrets);
	snprintf(loose_file, sizeof(loose_file), "%s/loose.key", secrets);
	snprintf(link_file, sizeof(link_file), "%s/link.key", secrets);
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/tbnotifyXXXXXX");
	assert_non_null(mkdtemp(tmp_dir));
	snprintf(outside_file, sizeof(outside_file), "%s/outside.key", tmp_dir);
	assert_int_equal(tb_test_write_file(key_file, KEY "\n", 0600), 0);
	assert_int_equal(tb_test_write_file(token_file, TOKEN "\n", 0600), 0);
	assert_int_equal(tb_test_write_file(loose_file, KEY "\n", 0644), 0);
	assert_int_equal(tb_test_write_file(outside_file, KEY "\n", 0600), 0);
	assert_int_equal(symlink(outside_file, link_file), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_false(tb_test_daemon_log_contains(&d, KEY));
	assert_false(tb_test_daemon_log_contains(&d, TOKEN));
	assert_int_equal(tb_test_daemon_stop(&d), 0); /* a clean stop; under ASan, no leak; the state dir goes */
	tb_hookrx_stop(rx);
	unlink(outside_file);
	rmdir(tmp_dir);
	return 0;
}

/* A rule whose HMAC key is in the file %s. */
#define KEY_RULE \
	"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h.example/\",\"hmac_key_file\":\"%s\"}}"

/* A request to the API -> its status and error field. */
struct refusal {
	const char *body;
	const char *field;
};

static void test_rules_api(void **state)
{
	char body[1024], loose[1200], outside[1200], link[1200], dotdot[1200];
	struct tb_test_resp r;
	const struct refusal bad[] = {
		{"{\"name\":\"x\",\"triggers\":[\"matrix.ended\"]}", "sink"},
		{"{\"name\":\"x\",\"triggers\":[\"nope\"],\"sink\":{\"url\":\"https://h.example/\"}}", "triggers"},
		{"{\"name\":\"x\",\"triggers\":[],\"sink\":{\"url\":\"https://h.example/\"}}", "triggers"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"ftp://h.example/\"}}", "sink.url"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"file:///etc/passwd\"}}", "sink.url"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://u:p@h.example/\"}}",
		 "sink.url"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h.example/\","
		 "\"template\":\"irc\"}}",
		 "sink.template"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h.example/\","
		 "\"allow_private_host\":\"127.0.0.1\"}}",
		 "sink.allow_private_host"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h.example/x\","
		 "\"template\":\"matrix\"}}",
		 "sink.url"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"hosts\":[\"Bad Name\"],\"sink\":{\"url\":\"https://h/\"}}",
		 "hosts"},
		{"{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h/\"},\"extra\":1}",
		 "extra"},
		{loose, "sink.hmac_key_file"},
		{outside, "sink.hmac_key_file"},
		{link, "sink.hmac_key_file"},
		{dotdot, "sink.token_file"},
		{NULL, NULL},
	};
	long long id;
	json_t *j;

	(void)state;
	/* the same rule with each refused key file */
	snprintf(loose, sizeof(loose), KEY_RULE, loose_file);
	snprintf(outside, sizeof(outside), KEY_RULE, outside_file);
	snprintf(link, sizeof(link), KEY_RULE, link_file);
	/* admin.token is a 0600 one-line file testbedd can read: not a rule's */
	snprintf(dotdot, sizeof(dotdot),
		 "{\"name\":\"x\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":\"https://h.example/\","
		 "\"token_file\":\"%s/notify-secrets/../admin.token\"}}",
		 d.state_dir);
	for (const struct refusal *b = bad; b->body != NULL; b++) {
		tb_test_api_expect(&d, NULL, "POST", "/api/v1/notifications", b->body, 400, &r);
		if (strcmp(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")), b->field) !=
		    0)
			fail_msg("%s: %s", b->body, r.body);
		tb_test_resp_free(&r);
	}
	id = create("{\"name\":\"phone\",\"triggers\":[\"matrix.failed\",\"host.down\",\"matrix.failed\"],"
		    "\"hosts\":[\"left\"],\"sink\":{\"template\":\"ntfy\",\"url\":\"https://ntfy.example/tb\","
		    "\"token_file\":\"%s\"}}",
		    token_file);
	j = get_rule(id);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "phone");
	assert_int_equal(json_array_size(json_object_get(j, "triggers")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "sink"), "token_file")), token_file);
	assert_true(json_is_false(json_object_get(j, "failing")));
	json_decref(j);
	snprintf(body, sizeof(body),
		 "{\"name\":\"phone2\",\"enabled\":false,\"triggers\":[\"host.up\"],"
		 "\"sink\":{\"template\":\"slack\",\"url\":\"https://hooks.example/x\"}}");
	snprintf(loose, sizeof(loose), "/api/v1/notifications/%lld", id);
	tb_test_api_expect(&d, NULL, "PUT", loose, body, 200, &r);
	assert_string_equal(json_string_value(json_object_get(r.json, "name")), "phone2");
	assert_true(json_is_false(json_object_get(r.json, "enabled")));
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "GET", "/api/v1/notifications", NULL, 200, &r);
	assert_non_null(strstr(r.body, "phone2"));
	assert_null(strstr(r.body, TOKEN));
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "DELETE", loose, NULL, 204, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "GET", loose, NULL, 404, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "PUT", "/api/v1/notifications/999", body, 404, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/notifications/999/test", NULL, 404, &r);
	tb_test_resp_free(&r);
}

/* The generic body, signed; then a 500 twice: retried, marked failing on
 * the way, delivered on the third attempt and the mark cleared. */
static void test_signed_and_retried(void **state)
{
	char hv[256], sig[128], ts[32], hex[2 * TB_SHA256_LEN + 1];
	const struct tb_hookrx_req *q;
	uint8_t mac[TB_SHA256_LEN];
	size_t base = tb_hookrx_count(rx);
	long long rule, id;
	json_t *body, *dl, *j;
	char *data;

	(void)state;
	rule = create("{\"name\":\"hook\",\"triggers\":[\"matrix.ended\"],\"sink\":{\"url\":\"http://127.0.0.1:%u/"
		      "hook\",\"hmac_key_file\":\"%s\",\"token_file\":\"%s\",\"allow_private_host\":\"127.0.0.1\"}}",
		      rx_port, key_file, token_file);
	id = send_test(rule);
	assert_int_equal(tb_hookrx_wait(rx, base + 1, 30000), 0);
	q = tb_hookrx_get(rx, base);
	assert_string_equal(q->method, "POST");
	assert_string_equal(q->path, "/hook");
	assert_string_equal(tb_hookrx_header(q, "Content-Type", hv, sizeof(hv)), "application/json");
	assert_string_equal(tb_hookrx_header(q, "Authorization", hv, sizeof(hv)), "Bearer " TOKEN);
	body = json_loads(q->body, 0, NULL);
	assert_non_null(body);
	assert_int_equal(json_integer_value(json_object_get(body, "delivery")), id);
	assert_string_equal(json_string_value(json_object_get(body, "trigger")), "test");
	assert_true(json_is_true(json_object_get(body, "test")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(body, "rule"), "id")), rule);
	json_decref(body);
	/* X-Testbedd-Signature: sha256=HMAC(key, timestamp "." body) */
	assert_non_null(tb_hookrx_header(q, "X-Testbedd-Timestamp", ts, sizeof(ts)));
	assert_true(llabs(atoll(ts) - (long long)time(NULL)) < 300);
	data = malloc(strlen(ts) + 1 + q->len + 1);
	sprintf(data, "%s.%s", ts, q->body);
	assert_int_equal(tb_hmac_sha256(KEY, strlen(KEY), data, strlen(data), mac), 0);
	free(data);
	tb_hex(mac, sizeof(mac), hex);
	snprintf(sig, sizeof(sig), "sha256=%s", hex);
	assert_string_equal(tb_hookrx_header(q, "X-Testbedd-Signature", hv, sizeof(hv)), sig);
	dl = wait_delivery(rule, id, "delivered", 1);
	assert_int_equal(json_integer_value(json_object_get(dl, "last_status")), 200);
	json_decref(dl);

	/* three 500s: the third failed attempt marks the rule failing */
	tb_hookrx_fail_next(rx, 3, 500);
	id = send_test(rule);
	dl = wait_delivery(rule, id, "pending", 3);
	assert_int_equal(json_integer_value(json_object_get(dl, "last_status")), 500);
	assert_non_null(strstr(json_string_value(json_object_get(dl, "last_error")), "500"));
	json_decref(dl);
	j = get_rule(rule);
	assert_true(json_is_true(json_object_get(j, "failing")));
	json_decref(j);
	dl = wait_delivery(rule, id, "delivered", 4);
	assert_int_equal(json_integer_value(json_object_get(dl, "attempts")), 4);
	json_decref(dl);
	j = get_rule(rule);
	assert_true(json_is_false(json_object_get(j, "failing")));
	json_decref(j);
}

/* The templates' bodies: ntfy (text, Title), Slack, Matrix (PUT with a txn id). */
static void test_templates(void **state)
{
	const char *tmpl[] = {"ntfy", "slack", "matrix"};
	char hv[256];

	(void)state;
	for (int i = 0; i < 3; i++) {
		size_t base = tb_hookrx_count(rx);
		const struct tb_hookrx_req *q;
		long long rule, id;
		json_t *b;

		rule = create("{\"name\":\"t%d\",\"triggers\":[\"host.down\"],\"sink\":{\"template\":\"%s\","
			      "\"url\":\"http://127.0.0.1:%u/%s\",\"allow_private_host\":\"127.0.0.1\"}}",
			      i, tmpl[i], rx_port,
			      i == 2 ? "_matrix/client/v3/rooms/!r:example/send/m.room.message" : "x");
		id = send_test(rule);
		assert_int_equal(tb_hookrx_wait(rx, base + 1, 30000), 0);
		q = tb_hookrx_get(rx, base);
		b = json_loads(q->body, 0, NULL);
		if (i == 0) {
			assert_string_equal(tb_hookrx_header(q, "Title", hv, sizeof(hv)),
					    "testbedd: test notification");
			assert_non_null(strstr(q->body, "A test message of rule"));
			/* --public-url: tapping the notification opens testbedd */
			assert_string_equal(tb_hookrx_header(q, "Click", hv, sizeof(hv)), PUBLIC "/");
			assert_non_null(strstr(q->body, "\n" PUBLIC "/"));
		} else if (i == 1) {
			assert_non_null(strstr(json_string_value(json_object_get(b, "text")), "*testbedd: test"));
			assert_non_null(strstr(json_string_value(json_object_get(b, "text")), "\n" PUBLIC "/"));
		} else {
			char want[128];

			snprintf(want, sizeof(want),
				 "/_matrix/client/v3/rooms/!r:example/send/m.room.message/testbedd-%lld", id);
			assert_string_equal(q->method, "PUT");
			assert_string_equal(q->path, want);
			assert_string_equal(json_string_value(json_object_get(b, "msgtype")), "m.text");
		}
		json_decref(b);
	}
}

/* Loopback without the allowance: refused at connect time, by address and
 * by a name resolving to it; nothing reaches the receiver. */
static void test_guard(void **state)
{
	const char *hosts[] = {"127.0.0.1", "localhost"};
	size_t base = tb_hookrx_count(rx);

	(void)state;
	for (int i = 0; i < 2; i++) {
		long long rule = create("{\"name\":\"g%d\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":"
					"\"http://%s:%u/guard\"}}",
					i, hosts[i], rx_port);
		long long id = send_test(rule);
		json_t *dl = wait_delivery(rule, id, "pending", 1);
		const char *e = json_string_value(json_object_get(dl, "last_error"));

		assert_non_null(e);
		if (strstr(e, "refused to connect") == NULL || strstr(e, "loopback") == NULL)
			fail_msg("%s: %s", hosts[i], e);
		json_decref(dl);
	}
	assert_int_equal(tb_hookrx_count(rx), base);
}

/* A real event: a power action on left whose command fails -> the rule for
 * left sends action.failed; the rule for right sends nothing. */
static void test_event_fires(void **state)
{
	size_t base = tb_hookrx_count(rx);
	long long left, right;
	struct tb_test_resp r;
	const struct tb_hookrx_req *q;
	char path[128];
	const char *text;
	json_t *b;

	(void)state;
	right = create("{\"name\":\"right\",\"triggers\":[\"action.failed\"],\"hosts\":[\"right\"],\"sink\":{\"url\":"
		       "\"http://127.0.0.1:%u/right\",\"allow_private_host\":\"127.0.0.1\"}}",
		       rx_port);
	left = create("{\"name\":\"left\",\"triggers\":[\"action.failed\"],\"hosts\":[\"left\"],\"sink\":{\"url\":"
		      "\"http://127.0.0.1:%u/left\",\"allow_private_host\":\"127.0.0.1\"}}",
		      rx_port);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/hosts/left/power", "{\"action\":\"on\"}", 202, &r);
	tb_test_resp_free(&r);
	assert_int_equal(tb_hookrx_wait(rx, base + 1, 60000), 0);
	q = tb_hookrx_get(rx, base);
	assert_string_equal(q->path, "/left");
	b = json_loads(q->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(b, "trigger")), "action.failed");
	assert_string_equal(json_string_value(json_object_get(b, "host")), "left");
	assert_string_equal(json_string_value(json_object_get(json_object_get(b, "event"), "type")), "action.state");
	/* the link to the hosts page, in "url" and at the end of the text */
	assert_string_equal(json_string_value(json_object_get(b, "url")), PUBLIC "/#/hosts");
	text = json_string_value(json_object_get(b, "text"));
	assert_true(strlen(text) > strlen(PUBLIC "/#/hosts"));
	assert_string_equal(text + strlen(text) - strlen("\n" PUBLIC "/#/hosts"), "\n" PUBLIC "/#/hosts");
	json_decref(b);
	/* both rules saw the event in the same pass: right queued nothing */
	snprintf(path, sizeof(path), "/api/v1/notifications/%lld/deliveries", right);
	tb_test_api_expect(&d, NULL, "GET", path, NULL, 200, &r);
	assert_int_equal(json_array_size(json_object_get(r.json, "deliveries")), 0);
	tb_test_resp_free(&r);
	(void)left;
}

/* Messages that could not go out wait in the store across a restart and
 * go out afterwards, in order, each once. */
static void test_backlog_across_restart(void **state)
{
	long long rule, ids[3];
	size_t base, seen = 0;
	long long last = 0;

	(void)state;
	rule = create("{\"name\":\"backlog\",\"triggers\":[\"host.down\"],\"sink\":{\"url\":"
		      "\"http://127.0.0.1:%u/backlog\",\"allow_private_host\":\"127.0.0.1\"}}",
		      rx_port);
	tb_hookrx_fail_next(rx, 1000, 503);
	for (int i = 0; i < 3; i++)
		ids[i] = send_test(rule);
	json_decref(wait_delivery(rule, ids[0], "pending", 2));
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	tb_hookrx_fail_next(rx, 0, 200);
	base = tb_hookrx_count(rx);
	assert_int_equal(tb_test_daemon_launch(&d, public_url, 0), 0);
	json_decref(wait_delivery(rule, ids[2], "delivered", 1));
	for (size_t i = base; i < tb_hookrx_count(rx); i++) {
		const struct tb_hookrx_req *q = tb_hookrx_get(rx, i);
		json_t *b = json_loads(q->body, 0, NULL);
		long long id = (long long)json_integer_value(json_object_get(b, "delivery"));

		json_decref(b);
		if (strcmp(q->path, "/backlog") != 0)
			continue;
		assert_true(id > last); /* in order, none twice */
		assert_int_equal(id, ids[seen]);
		last = id;
		seen++;
	}
	assert_int_equal(seen, 3);
}

static void test_tbctl(void **state)
{
	char out[8192], rule[400], cmd[600], ids[32];
	size_t base = tb_hookrx_count(rx);
	long long id;

	(void)state;
	snprintf(rule, sizeof(rule), "%s.rule.json", key_file);
	snprintf(cmd, sizeof(cmd),
		 "{\"name\":\"cli\",\"triggers\":[\"run.failed\"],\"sink\":{\"url\":\"http://127.0.0.1:%u/cli\","
		 "\"allow_private_host\":\"127.0.0.1\"}}",
		 rx_port);
	assert_int_equal(tb_test_write_file(rule, cmd, 0600), 0);
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "add", rule, NULL}, out, sizeof(out)),
			 0);
	assert_int_equal(sscanf(out, "created notification rule %lld", &id), 1);
	snprintf(ids, sizeof(ids), "%lld", id);
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "list", NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "cli"));
	assert_non_null(strstr(out, "run.failed"));
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "test", ids, NULL}, out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "queued test message"));
	assert_int_equal(tb_hookrx_wait(rx, base + 1, 30000), 0);
	assert_string_equal(tb_hookrx_get(rx, base)->path, "/cli");
	json_decref(wait_delivery(id, atoll(strstr(out, "message ") + 8), "delivered", 1));
	assert_int_equal(
		tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "deliveries", ids, NULL}, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "delivered"));
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "rm", ids, NULL}, out, sizeof(out)),
			 0);
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "rm", ids, NULL}, out, sizeof(out)),
			 2);
	assert_int_equal(tb_test_tbctl(&d, NULL, (const char *const[]){"notify", "rm", "x", NULL}, out, sizeof(out)),
			 1);
	unlink(rule);
}

/* The email sink: its refusals; a mail through a plain SMTP server on
 * loopback (tls "none", allowed host) with envelope, headers and text; on
 * smtp:// STARTTLS is required by default: a server that does not offer it
 * gets no mail and no password; loopback by name without the allowance is
 * refused before connecting. */
static void test_email(void **state)
{
	struct tb_smtprx *mx;
	unsigned int mport;
	char body[1600], path[128];
	const struct tb_smtprx_mail *m;
	struct tb_test_resp r;
	const struct refusal bad[] = {
		{"{\"name\":\"m\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\",\"url\":\"https://m/\","
		 "\"from\":\"a@b.example\",\"to\":[\"c@d.example\"]}}",
		 "sink.url"},
		{"{\"name\":\"m\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\",\"url\":\"smtp://m:587\","
		 "\"from\":\"a b@b.example\",\"to\":[\"c@d.example\"]}}",
		 "sink.from"},
		{"{\"name\":\"m\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\",\"url\":\"smtp://m:587\","
		 "\"from\":\"a@b.example\",\"to\":[]}}",
		 "sink.to"},
		{"{\"name\":\"m\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\",\"url\":\"smtp://m:587\","
		 "\"from\":\"a@b.example\",\"to\":[\"c@d.example\\r\\nBcc: x@y.example\"]}}",
		 "sink.to"},
		{body, "sink.tls"},
		{NULL, NULL},
	};
	long long rule, id;
	json_t *dl;

	(void)state;
	snprintf(body, sizeof(body),
		 "{\"name\":\"m\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\",\"url\":\"smtp://m:25\","
		 "\"from\":\"a@b.example\",\"to\":[\"c@d.example\"],\"tls\":\"none\",\"user\":\"u\","
		 "\"password_file\":\"%s\"}}",
		 token_file);
	for (const struct refusal *b = bad; b->body != NULL; b++) {
		tb_test_api_expect(&d, NULL, "POST", "/api/v1/notifications", b->body, 400, &r);
		if (strcmp(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")), b->field) !=
		    0)
			fail_msg("%s: %s", b->body, r.body);
		tb_test_resp_free(&r);
	}
	assert_int_equal(tb_smtprx_start(&mx, &mport), 0);
	rule = create("{\"name\":\"mail\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\","
		      "\"url\":\"smtp://127.0.0.1:%u\",\"tls\":\"none\",\"from\":\"testbedd@lab.example\","
		      "\"to\":[\"ops@lab.example\",\"two@lab.example\"],\"allow_private_host\":\"127.0.0.1\"}}",
		      mport);
	id = send_test(rule);
	assert_int_equal(tb_smtprx_wait(mx, 1, 30000), 0);
	m = tb_smtprx_get(mx, 0);
	assert_string_equal(m->from, "<testbedd@lab.example>");
	assert_string_equal(m->rcpt, "<ops@lab.example> <two@lab.example>");
	assert_non_null(strstr(m->data, "Subject: testbedd: test notification\n"));
	assert_non_null(strstr(m->data, "To: <ops@lab.example>, <two@lab.example>\n"));
	snprintf(path, sizeof(path), "X-Testbedd-Delivery: %lld\n", id);
	assert_non_null(strstr(m->data, path));
	assert_non_null(strstr(m->data, "\n\nA test message of rule"));
	dl = wait_delivery(rule, id, "delivered", 1);
	assert_int_equal(json_integer_value(json_object_get(dl, "last_status")), 250);
	json_decref(dl);

	/* STARTTLS by default: this server offers none, so nothing is sent */
	rule = create("{\"name\":\"mailtls\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\","
		      "\"url\":\"smtp://127.0.0.1:%u\",\"from\":\"testbedd@lab.example\",\"to\":[\"ops@lab.example\"],"
		      "\"user\":\"tb\",\"password_file\":\"%s\",\"allow_private_host\":\"127.0.0.1\"}}",
		      mport, token_file);
	id = send_test(rule);
	dl = wait_delivery(rule, id, "pending", 1);
	if (strstr(json_string_value(json_object_get(dl, "last_error")), "STARTTLS") == NULL)
		fail_msg("%s", json_string_value(json_object_get(dl, "last_error")));
	json_decref(dl);
	assert_int_equal(tb_smtprx_count(mx), 1);

	/* loopback by name, no allowance: refused before any SMTP */
	rule = create("{\"name\":\"mailguard\",\"triggers\":[\"host.down\"],\"sink\":{\"type\":\"email\","
		      "\"url\":\"smtp://localhost:%u\",\"tls\":\"none\",\"from\":\"t@lab.example\","
		      "\"to\":[\"ops@lab.example\"]}}",
		      mport);
	id = send_test(rule);
	dl = wait_delivery(rule, id, "pending", 1);
	assert_non_null(strstr(json_string_value(json_object_get(dl, "last_error")), "refused to connect"));
	json_decref(dl);
	assert_int_equal(tb_smtprx_count(mx), 1);
	tb_smtprx_stop(mx);
}

/* A schedule that cannot start its matrix (its spec, pushed while the
 * inventory gave left a link, no longer plans on this one) publishes
 * schedule.failed, and a rule for that trigger sends it, naming the spec
 * and the reason.  The cron's first time is the next whole minute: the
 * wait is a bound of 90 s, not a measure. */
static void test_schedule_failed(void **state)
{
	static const char spec[] = "{\"name\":\"nightly\",\"pairs\":[{\"client\":\"right\",\"server\":\"left\"}],"
				   "\"duration_s\":1,\"repeats\":1}";
	const struct tb_hookrx_req *q = NULL;
	struct tb_test_resp r;
	char path[128];
	size_t seen;
	long long rule;
	json_t *b, *data;

	(void)state;
	rule = create("{\"name\":\"sched\",\"triggers\":[\"schedule.failed\"],\"sink\":{\"url\":"
		      "\"http://127.0.0.1:%u/sched\",\"allow_private_host\":\"127.0.0.1\"}}",
		      rx_port);
	/* the default inventory gives left a link: the spec plans */
	assert_int_equal(tb_test_daemon_write_inventory(&d, NULL), 0);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/inventory/reload", NULL, 200, &r);
	tb_test_resp_free(&r);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/specs", spec, 201, &r);
	tb_test_resp_free(&r);
	/* back to this test's (left without links) before the schedule is set:
	 * nothing ever starts */
	assert_int_equal(tb_test_daemon_write_inventory(&d, inventory), 0);
	tb_test_api_expect(&d, NULL, "POST", "/api/v1/inventory/reload", NULL, 200, &r);
	tb_test_resp_free(&r);
	seen = tb_hookrx_count(rx);
	tb_test_api_expect(&d, NULL, "PUT", "/api/v1/specs/nightly/schedule", "{\"cron\":\"* * * * *\"}", 200, &r);
	tb_test_resp_free(&r);
	/* other rules' retries may arrive meanwhile: the first to /sched */
	while (q == NULL) {
		assert_int_equal(tb_hookrx_wait(rx, seen + 1, 90000), 0);
		if (strcmp(tb_hookrx_get(rx, seen)->path, "/sched") == 0)
			q = tb_hookrx_get(rx, seen);
		seen++;
	}
	b = json_loads(q->body, 0, NULL);
	assert_non_null(b);
	assert_string_equal(json_string_value(json_object_get(b, "trigger")), "schedule.failed");
	assert_string_equal(json_string_value(json_object_get(b, "title")),
			    "testbedd: the schedule of spec nightly did not start its matrix");
	data = json_object_get(json_object_get(b, "event"), "data");
	assert_string_equal(json_string_value(json_object_get(data, "spec")), "nightly");
	assert_string_equal(json_string_value(json_object_get(data, "cron")), "* * * * *");
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(data, "error"), "message")),
			       "left has no links"));
	assert_true(json_is_string(json_object_get(data, "next_at")));
	json_decref(b);
	/* gone: nothing fires after this test */
	tb_test_api_expect(&d, NULL, "DELETE", "/api/v1/specs/nightly/schedule", NULL, 204, &r);
	tb_test_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/notifications/%lld", rule);
	tb_test_api_expect(&d, NULL, "DELETE", path, NULL, 204, &r);
	tb_test_resp_free(&r);
}

/* Without --public-url testbedd does not know its address: no "url", no
 * link in the text, no Click header. */
static void test_no_public_url(void **state)
{
	long long rule[2];
	char hv[256];

	(void)state;
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	for (int i = 0; i < 2; i++) {
		size_t base = tb_hookrx_count(rx);
		const struct tb_hookrx_req *q;
		json_t *b;

		rule[i] = create("{\"name\":\"nourl%d\",\"triggers\":[\"host.down\"],\"sink\":{\"template\":\"%s\","
				 "\"url\":\"http://127.0.0.1:%u/nourl\",\"allow_private_host\":\"127.0.0.1\"}}",
				 i, i == 0 ? "json" : "ntfy", rx_port);
		send_test(rule[i]);
		assert_int_equal(tb_hookrx_wait(rx, base + 1, 30000), 0);
		q = tb_hookrx_get(rx, base);
		assert_null(strstr(q->body, "tb.example.org"));
		if (i == 0) {
			b = json_loads(q->body, 0, NULL);
			assert_non_null(b);
			assert_null(json_object_get(b, "url"));
			json_decref(b);
		} else {
			assert_null(tb_hookrx_header(q, "Click", hv, sizeof(hv)));
		}
	}
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	assert_int_equal(tb_test_daemon_launch(&d, public_url, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_api),       cmocka_unit_test(test_signed_and_retried),
		cmocka_unit_test(test_templates),       cmocka_unit_test(test_guard),
		cmocka_unit_test(test_event_fires),     cmocka_unit_test(test_tbctl),
		cmocka_unit_test(test_email),           cmocka_unit_test(test_backlog_across_restart),
		cmocka_unit_test(test_schedule_failed), cmocka_unit_test(test_no_public_url),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
