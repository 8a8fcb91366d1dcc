/*
 * test_power_redfish_daemon.c - the redfish power method through the real
 * testbedd: inventory -> power action -> state machine -> driver -> the
 * Redfish mock (tests/support/rfmock.h; a mock because no Redfish BMC
 * emulator is packaged for Debian).  The API shows the method without its
 * secrets and with insecure, the action's steps show each request, and the
 * password and the session tokens are in no reply, step, audit record or
 * log line.  Skipped when python3 or openssl is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon.h"
#include "rfmock.h"

static struct tb_rfmock mk;
static int skip_all;

static int group_setup(void **state)
{
	int rc = tb_rfmock_start(&mk);

	(void)state;
	skip_all = rc == 1;
	return rc < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tb_rfmock_stop(&mk);
	return 0;
}

/* The whole daemon: inventory -> state machine -> driver -> mock. */
static void test_through_the_daemon(void **state)
{
	static const char inv_fmt[] =
		"version: 1\n"
		"ssh: {user: root, key_file: %%s, connect_timeout_s: 1}\n"
		"machines:\n"
		"  left:\n"
		"    role: host\n"
		"    shutdown_timeout_s: 5\n"
		"    power:\n"
		"      - {driver: redfish, url: \"%s\", user: admin, password_file: %s, ca_file: %s, auth: session}\n"
		"      - {driver: redfish, url: \"%s\", user: admin, password_file: %s, insecure: true}\n"
		"    os:\n"
		"      ubuntu: {address: 127.0.0.1, port: 9}\n";
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char inv[2048], url[256], auth[200], resets[256], logtext[65536];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	char st[32];
	long long id;
	FILE *f;
	size_t n;

	(void)state;
	if (skip_all)
		skip();
	assert_int_equal(tb_rfmock_reset(&mk), 0);
	json_decref(tb_rfmock_control(&mk, "{\"power\":\"On\"}"));
	snprintf(inv, sizeof(inv), inv_fmt, mk.base, mk.pwfile, mk.ca, mk.ssbase, mk.pwfile);
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);

	/* the public view: no password file, insecure shown */
	snprintf(url, sizeof(url), "%s/api/v1/hosts/left", d.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, "bmc.pass"));
	assert_null(strstr(r.body, mk.password));
	{
		json_t *pw = json_object_get(json_object_get(r.json, "host"), "power");

		assert_int_equal(json_array_size(pw), 2);
		assert_true(json_is_false(json_object_get(json_array_get(pw, 0), "insecure")));
		assert_string_equal(json_string_value(json_object_get(json_array_get(pw, 0), "auth")), "session");
		assert_true(json_is_true(json_object_get(json_array_get(pw, 1), "insecure")));
	}
	tb_test_resp_free(&r);

	/* off: nothing answers ssh, the BMC says on: ForceOff through the first method */
	snprintf(url, sizeof(url), "%s/api/v1/hosts/left/power", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{\"action\":\"off\"}", 16, &r), 0);
	assert_int_equal(r.status, 202);
	id = json_integer_value(json_object_get(json_object_get(r.json, "action"), "id"));
	tb_test_resp_free(&r);
	if (tb_test_wait_action(&d, id, 15000, st, sizeof(st), &r) != 0)
		fail_msg("action %lld still %s after 15 s", id, st);
	if (strcmp(st, "succeeded") != 0)
		fail_msg("action %s: %s", st, r.body);
	assert_non_null(strstr(r.body, "Actions/ComputerSystem.Reset {\\\"ResetType\\\":\\\"ForceOff\\\"}"));
	assert_non_null(strstr(r.body, "\\\"Password\\\":\\\"***\\\""));
	assert_null(strstr(r.body, mk.password));
	tb_test_resp_free(&r);
	tb_rfmock_resets(&mk, resets, sizeof(resets));
	assert_string_equal(resets, "ForceOff");
	assert_string_equal(tb_rfmock_power(&mk), "Off");

	/* the audit record and the daemon's log hold no password either (the
	 * steps above are what the action.step events carry) */
	snprintf(url, sizeof(url), "%s/api/v1/audit", d.url);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_null(strstr(r.body != NULL ? r.body : "", mk.password));
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	f = fopen(d.log, "r");
	assert_non_null(f);
	n = fread(logtext, 1, sizeof(logtext) - 1, f);
	fclose(f);
	logtext[n] = '\0';
	assert_null(strstr(logtext, mk.password));
	json_decref(tb_rfmock_log(&mk, mk.log));
	assert_true(mk.ntokens > 0);
	for (int i = 0; i < mk.ntokens; i++)
		assert_null(strstr(logtext, mk.tokens[i]));
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_through_the_daemon),
	};

	return cmocka_run_group_tests_name("power_redfish_daemon", tests, group_setup, group_teardown);
}
