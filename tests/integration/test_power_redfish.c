/*
 * test_power_redfish.c - the redfish power driver against
 * tests/redfish/redfish_mock.py over TLS on 127.0.0.1.
 *
 * A mock because no Redfish BMC emulator is packaged for Debian (DMTF's
 * Redfish-Mockup-Server and sushy-tools are pip-only); the mock follows the
 * DMTF shapes (service root, Systems collection, ComputerSystem with
 * PowerState, Reset action with its allowable values, ETag / If-Match,
 * SessionService) and logs every request to a JSON-lines file that these
 * tests read to see exactly what the driver sent.
 *
 * tests/support/rfmock.c makes a CA and a server certificate for IP
 * 127.0.0.1 with openssl, plus a self-signed one, and runs two mocks
 * (CA-signed and self-signed); their pids are kept and they are stopped by
 * pid at the end.  Skipped when python3 or openssl is missing.  The same
 * through the whole daemon: test_power_redfish_daemon.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "inventory.h"
#include "power.h"
#include "proc.h"
#include "rfmock.h"
#include "timeutil.h"

static struct tb_rfmock mk;
static int skip_all;
static int leaked; /* a step held the password or a token */

/* ---- steps ---- */

#define MAX_STEPS 32
struct steps {
	int n;
	char what[MAX_STEPS][256];
	char command[MAX_STEPS][512];
	char output[MAX_STEPS][256];
};

static void record(void *cls, const char *what, const char *command, int status, const char *output)
{
	struct steps *s = cls;
	char all[2048];

	snprintf(all, sizeof(all), "%s\n%s\n%s", what, command != NULL ? command : "", output != NULL ? output : "");
	if (strstr(all, mk.password) != NULL)
		leaked = 1;
	for (int i = 0; i < mk.ntokens; i++)
		if (strstr(all, mk.tokens[i]) != NULL)
			leaked = 1;
	if (s == NULL || s->n >= MAX_STEPS)
		return;
	snprintf(s->what[s->n], sizeof(s->what[0]), "%s", what);
	snprintf(s->command[s->n], sizeof(s->command[0]), "%s", command != NULL ? command : "");
	snprintf(s->output[s->n], sizeof(s->output[0]), "%s", output != NULL ? output : "");
	(void)status;
	s->n++;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* ---- the mock (tests/support/rfmock.h) ---- */

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

static json_t *mock_call(const char *body)
{
	json_t *j = tb_rfmock_control(&mk, body);

	assert_non_null(j);
	return j;
}

static void mock_set(const char *body)
{
	json_decref(mock_call(body));
}

static void reset_mock(void)
{
	assert_int_equal(tb_rfmock_reset(&mk), 0);
}

/* ---- the driver ---- */

static struct tb_machine machine = {.name = "left"};

static struct tb_power_method method(void)
{
	struct tb_power_method pm = {0};

	pm.driver = TB_POWER_REDFISH;
	pm.url = mk.base;
	pm.user = "admin";
	pm.password_file = mk.pwfile;
	pm.ca_file = mk.ca;
	pm.auth = TB_REDFISH_BASIC;
	return pm;
}

static int rf(const struct tb_power_method *pm, enum tb_power_op op, int *is_on, struct steps *s, long timeout_ms,
	      const volatile int *cancel, struct tb_error *e)
{
	struct tb_power_call c = {
		.m = &machine, .pm = pm, .step = record, .step_cls = s, .cancel = cancel, .timeout_ms = timeout_ms};

	memset(e, 0, sizeof(*e));
	return tb_power_redfish.run(&c, op, is_on, e);
}

static void test_status_and_steps(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char want[256];
	json_t *log;
	int on = -1;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	mock_set("{\"power\":\"On\"}");
	assert_ptr_equal(tb_power_driver_for(&pm), &tb_power_redfish);
	assert_int_equal(tb_power_method_ops(&pm), tb_power_redfish.ops);
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 1);
	/* service root, Systems, the system */
	assert_int_equal(s.n, 3);
	snprintf(want, sizeof(want), "GET %s/redfish/v1/", mk.base);
	assert_string_equal(s.command[0], want);
	snprintf(want, sizeof(want), "GET %s/redfish/v1/Systems", mk.base);
	assert_string_equal(s.command[1], want);
	snprintf(want, sizeof(want), "GET %s/redfish/v1/Systems/sys1", mk.base);
	assert_string_equal(s.command[2], want);
	assert_string_equal(s.output[2], "HTTP 200");
	assert_non_null(strstr(s.what[2], "left"));
	log = tb_rfmock_log(&mk, mk.log);
	assert_int_equal(json_array_size(log), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 2), "auth")), "basic");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_array_get(log, 2), "headers"), "OData-Version")),
		"4.0");
	json_decref(log);

	mock_set("{\"power\":\"Off\"}");
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 0);

	/* system: given, the discovery is skipped */
	pm.system = "sys1";
	s.n = 0;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(s.n, 1);
	pm.system = "nosuch";
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "HTTP 404"));
}

static void test_off_on(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char want[256], resets[256];
	int on = -1;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	mock_set("{\"power\":\"On\"}");
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), 0);
	assert_string_equal(tb_rfmock_power(&mk), "Off");
	snprintf(want, sizeof(want),
		 "POST %s/redfish/v1/Systems/sys1/Actions/ComputerSystem.Reset "
		 "{\"ResetType\":\"ForceOff\"}",
		 mk.base);
	assert_string_equal(s.command[s.n - 1], want);
	assert_string_equal(s.output[s.n - 1], "HTTP 204");
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 0);
	assert_int_equal(rf(&pm, TB_POWER_ON, NULL, &s, 5000, NULL, &e), 0);
	assert_string_equal(tb_rfmock_power(&mk), "On");
	tb_rfmock_resets(&mk, resets, sizeof(resets));
	assert_string_equal(resets, "ForceOff,On");
}

/* 409 / 400 "already in that state": read PowerState again, succeed. */
static void test_already_in_state(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char resets[256];

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	mock_set("{\"power\":\"On\"}");
	assert_int_equal(rf(&pm, TB_POWER_ON, NULL, &s, 5000, NULL, &e), 0);
	assert_string_equal(s.output[s.n - 2], "HTTP 409: The system is already on");
	assert_non_null(strstr(s.command[s.n - 1], "GET ")); /* re-read */
	mock_set("{\"power\":\"Off\"}");
	s.n = 0;
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), 0);
	assert_string_equal(s.output[s.n - 2], "HTTP 400: The system is already off");
	assert_int_equal(rf(&pm, TB_POWER_SOFT, NULL, &s, 5000, NULL, &e), 0);
	tb_rfmock_resets(&mk, resets, sizeof(resets));
	assert_string_equal(resets, "On,ForceOff,GracefulShutdown");
	/* a refusal that is not about the state fails, with the BMC's words */
	mock_set("{\"allowed\":[\"On\"]}");
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "does not allow ResetType ForceOff for off (it allows On)"));
	/* a list longer than the message's room: cut with "...", never written (or pointed) past its buffer */
	mock_set("{\"allowed\":[\"On\",\"VendorResetType01\",\"VendorResetType02\",\"VendorResetType03\","
		 "\"VendorResetType04\",\"VendorResetType05\",\"VendorResetType06\",\"VendorResetType07\","
		 "\"VendorResetType08\",\"VendorResetType09\",\"VendorResetType10\",\"VendorResetType11\","
		 "\"VendorResetType12\",\"VendorResetType13\",\"VendorResetType14\",\"VendorResetType15\","
		 "\"VendorResetType16\",\"VendorResetType17\",\"VendorResetType18\",\"VendorResetType19\","
		 "\"VendorResetType20\",\"VendorResetType21\",\"VendorResetType22\",\"VendorResetType23\"]}");
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "(it allows On, VendorResetType01, VendorResetType02, "));
	assert_null(strstr(e.message, "VendorResetType23"));
	assert_non_null(strstr(e.message, "...); use another power method"));
}

static void test_cycle_reset_soft(void **state)
{
	static const struct {
		const char *allowed; /* NULL: all */
		enum tb_power_op op;
		const char *power; /* before */
		int rc;
		const char *posted;
	} cases[] = {
		{NULL, TB_POWER_CYCLE, "On", 0, "PowerCycle"},
		{NULL, TB_POWER_RESET, "On", 0, "ForceRestart"},
		{NULL, TB_POWER_SOFT, "On", 0, "GracefulShutdown"},
		{NULL, TB_POWER_CYCLE, "Off", 0, "PowerCycle,On"}, /* refused while off: turned on */
		{NULL, TB_POWER_RESET, "Off", 0, "ForceRestart,On"},
		{"[\"On\",\"ForceOff\",\"ForceRestart\"]", TB_POWER_CYCLE, "On", 0, "ForceOff,On"},
		{"[\"On\",\"ForceOff\"]", TB_POWER_CYCLE, "Off", 0, "ForceOff,On"},
		{"[\"On\",\"ForceRestart\"]", TB_POWER_CYCLE, "On", 0, "ForceRestart"},
		{"[\"ForceOn\",\"ForceOff\"]", TB_POWER_ON, "Off", 0, "ForceOn"},
		{"[\"On\",\"ForceOff\"]", TB_POWER_SOFT, "On", TB_ERR_CONFIG, ""},
		{"[\"On\"]", TB_POWER_RESET, "On", TB_ERR_CONFIG, ""},
	};

	(void)state;
	if (skip_all)
		skip();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_power_method pm = method();
		struct steps s = {0};
		struct tb_error e;
		char cfg[256], resets[256];
		int rc;

		reset_mock();
		snprintf(cfg, sizeof(cfg), "{\"power\":\"%s\"%s%s}", cases[i].power,
			 cases[i].allowed != NULL ? ",\"allowed\":" : "",
			 cases[i].allowed != NULL ? cases[i].allowed : "");
		mock_set(cfg);
		rc = rf(&pm, cases[i].op, NULL, &s, 5000, NULL, &e);
		tb_rfmock_resets(&mk, resets, sizeof(resets));
		if (rc != cases[i].rc || strcmp(resets, cases[i].posted) != 0)
			fail_msg("case %zu: rc %d (%s), posted \"%s\"; wanted %d, \"%s\"", i, rc, e.message, resets,
				 cases[i].rc, cases[i].posted);
		if (rc == TB_ERR_CONFIG)
			assert_non_null(strstr(e.message, "(it allows On"));
		else
			assert_string_equal(tb_rfmock_power(&mk), cases[i].op == TB_POWER_SOFT ? "Off" : "On");
	}
}

static void *cancel_later(void *arg)
{
	volatile int *flag = arg;

	sleep_ms(300);
	*flag = 1;
	return NULL;
}

static void test_timeout_and_cancel(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	volatile int cancel = 0;
	int64_t t0, dt;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	mock_set("{\"slow_ms\":3000,\"slow_match\":\"Systems/sys1\"}");
	t0 = tb_monotonic_ms();
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 800, NULL, &e), TB_ERR_TIMEOUT);
	dt = tb_monotonic_ms() - t0;
	assert_true(dt >= 700 && dt < 1500);
	assert_non_null(strstr(e.message, "within 800 ms"));

	/* cancel: another thread sets the flag while the BMC is slow */
	{
		pthread_t th;

		cancel = 0;
		assert_int_equal(pthread_create(&th, NULL, cancel_later, (void *)&cancel), 0);
		t0 = tb_monotonic_ms();
		assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 10000, &cancel, &e), TB_ERR_CANCELED);
		dt = tb_monotonic_ms() - t0;
		pthread_join(th, NULL);
		assert_true(dt >= 250 && dt < 1500);
	}
	mock_set("{\"slow_ms\":0}");
}

static void test_wrong_password(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char want[256];
	int64_t t0;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	pm.password_file = mk.badpw;
	t0 = tb_monotonic_ms();
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), TB_ERR_UNAUTHORIZED);
	assert_true(tb_monotonic_ms() - t0 < 1500);
	snprintf(want, sizeof(want), "check the BMC credentials of left (user admin, password file %s)", mk.badpw);
	assert_non_null(strstr(e.message, want));
	assert_non_null(strstr(e.message, "HTTP 401"));
	assert_null(strstr(e.message, "not-the-password"));
	for (int i = 0; i < s.n; i++)
		assert_null(strstr(s.command[i], "not-the-password"));

	/* a user that may only read: 403, a credential problem too, said so */
	pm.password_file = mk.pwfile;
	mock_set("{\"read_only\":true}");
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), TB_ERR_UNAUTHORIZED);
	assert_non_null(strstr(e.message, "refused the request (HTTP 403)"));
	assert_non_null(strstr(e.message, "may control power"));
	mock_set("{\"read_only\":false}");
	pm.password_file = mk.badpw;

	/* session auth: the login itself is refused */
	pm.auth = TB_REDFISH_SESSION;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), TB_ERR_UNAUTHORIZED);

	/* the password from the environment; unset is a configuration error */
	pm = method();
	pm.password_file = NULL;
	pm.password_env = "TBRF_BMC_PASSWORD";
	unsetenv("TBRF_BMC_PASSWORD");
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "TBRF_BMC_PASSWORD"));
	setenv("TBRF_BMC_PASSWORD", mk.password, 1);
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), 0);
	unsetenv("TBRF_BMC_PASSWORD");

	/* an unreadable password file names itself */
	pm = method();
	pm.password_file = "/nonexistent/tbrf.pass";
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "/nonexistent/tbrf.pass"));
}

static void test_unreachable(void **state)
{
	struct tb_power_method busy = method();
	struct steps bs = {0};
	struct tb_error be;
	int on = -1, rc;

	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char url[64];
	int port;

	(void)state;
	if (skip_all)
		skip();
	/* the mock's port + 1 is almost surely closed; find one that is */
	port = atoi(strrchr(mk.base, ':') + 1);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", port == 65535 ? 1 : port + 1);
	pm.url = url;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, NULL, &s, 5000, NULL, &e), TB_ERR_UNREACHABLE);
	assert_non_null(strstr(e.message, "does not answer"));
	assert_non_null(strstr(e.message, url));

	/* a busy BMC (503) is transient too (power.c retries); the next call works */
	reset_mock();
	mock_set("{\"busy\":1}");
	assert_int_equal(rf(&busy, TB_POWER_STATUS, &on, &bs, 5000, NULL, &be), TB_ERR_UNREACHABLE);
	assert_non_null(strstr(be.message, "is busy (HTTP 503: busy, try later)"));
	if ((rc = rf(&busy, TB_POWER_STATUS, &on, &bs, 5000, NULL, &be)) != 0)
		fail_msg("after one busy reply the next status call failed (%d): %s", rc, be.message);
	assert_true(on == 0 || on == 1);
}

/* TLS: verified by default; ca_file or insecure: true for a private certificate. */
static void test_tls(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	int on = -1;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	/* our CA-signed mock: refused with the system's CAs only */
	pm.ca_file = NULL;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_string_equal(e.field, "ca_file");
	assert_non_null(strstr(e.message, "does not trust"));
	assert_non_null(strstr(e.message, "give its CA as ca_file"));
	pm.ca_file = mk.ca;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);

	/* the self-signed mock */
	pm.url = mk.ssbase;
	pm.ca_file = NULL;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	pm.ca_file = mk.ca; /* the wrong CA */
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "the one given did not verify it"));
	pm.ca_file = mk.ss_cert;
	on = -1;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 1);
	pm.ca_file = NULL;
	pm.insecure = 1;
	on = -1;
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 1);
	/* a CA file that is not there */
	pm.insecure = 0;
	pm.ca_file = "/nonexistent/ca.pem";
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	assert_string_equal(e.field, "ca_file");
}

static const char *header(json_t *rec, const char *name)
{
	return json_string_value(json_object_get(json_object_get(rec, "headers"), name));
}

static void test_boot_override(void **state)
{
	struct tb_power_method pm = method();
	struct tb_power_call c = {.m = &machine, .pm = &pm, .step = record, .timeout_ms = 5000};
	struct tb_error e = {0};
	json_t *st, *log, *patch = NULL, *r;
	char etag[64];
	size_t i;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	st = mock_call(NULL);
	snprintf(etag, sizeof(etag), "%s", json_string_value(json_object_get(st, "etag")));
	json_decref(st);
	assert_int_equal(tb_redfish_boot_once(&c, "Pxe", &e), 0);
	st = mock_call(NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(st, "boot"), "BootSourceOverrideEnabled")), "Once");
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "boot"), "BootSourceOverrideTarget")),
			    "Pxe");
	json_decref(st);
	log = tb_rfmock_log(&mk, mk.log);
	json_array_foreach(log, i, r) if (strcmp(json_string_value(json_object_get(r, "method")), "PATCH") == 0)
		patch = r;
	assert_non_null(patch);
	assert_string_equal(header(patch, "If-Match"), etag);
	assert_string_equal(json_string_value(json_object_get(patch, "body")),
			    "{\"Boot\":{\"BootSourceOverrideEnabled\":\"Once\",\"BootSourceOverrideTarget\":\"Pxe\"}}");
	assert_int_equal(json_integer_value(json_object_get(patch, "status")), 204);
	json_decref(log);

	/* someone changed the system between our GET and PATCH: 412, nothing changed */
	reset_mock();
	mock_set("{\"stale_etag\":true}");
	assert_int_equal(tb_redfish_boot_once(&c, "Hdd", &e), TB_ERR_CONFLICT);
	assert_non_null(strstr(e.message, "HTTP 412"));
	st = mock_call(NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "boot"), "BootSourceOverrideTarget")),
			    "Pxe");
	json_decref(st);

	/* a target the system does not offer: refused before any PATCH */
	reset_mock();
	assert_int_equal(tb_redfish_boot_once(&c, "Floppy", &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "(it allows None, Pxe, Hdd, Cd, BiosSetup, UefiBootNext)"));
	log = tb_rfmock_log(&mk, mk.log);
	json_array_foreach(log, i, r) assert_string_not_equal(json_string_value(json_object_get(r, "method")), "PATCH");
	json_decref(log);
}

static void test_session(void **state)
{
	struct tb_power_method pm = method();
	struct steps s = {0};
	struct tb_error e;
	char want[256];
	json_t *log, *st;
	size_t n;
	int on = -1;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	mock_set("{\"power\":\"On\"}");
	pm.auth = TB_REDFISH_SESSION;
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), 0);
	log = tb_rfmock_log(&mk, mk.log);
	n = json_array_size(log);
	assert_true(n >= 5);
	/* login: POST with the credentials and no Authorization */
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "method")), "POST");
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "path")),
			    "/redfish/v1/SessionService/Sessions");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(log, 0), "status")), 201);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(log, 0), "body")), mk.password));
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "auth")), "none");
	/* then the token, never basic */
	for (size_t i = 1; i < n; i++)
		assert_string_equal(json_string_value(json_object_get(json_array_get(log, i), "auth")), "token");
	/* and the session is deleted at the end */
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, n - 1), "method")), "DELETE");
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, n - 1), "path")),
			    "/redfish/v1/SessionService/Sessions/1");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(log, n - 1), "status")), 204);
	json_decref(log);
	st = mock_call(NULL);
	assert_int_equal(json_integer_value(json_object_get(st, "sessions")), 0);
	assert_string_equal(json_string_value(json_object_get(st, "power")), "Off");
	json_decref(st);
	/* the step shows the login with the password as *** */
	snprintf(want, sizeof(want),
		 "POST %s/redfish/v1/SessionService/Sessions {\"UserName\":\"admin\",\"Password\":\"***\"}", mk.base);
	assert_string_equal(s.command[0], want);
	assert_string_equal(s.output[0], "HTTP 201");

	/* also when the action fails, the session is closed */
	reset_mock();
	mock_set("{\"allowed\":[\"On\"]}");
	assert_int_equal(rf(&pm, TB_POWER_OFF, NULL, &s, 5000, NULL, &e), TB_ERR_CONFIG);
	st = mock_call(NULL);
	assert_int_equal(json_integer_value(json_object_get(st, "sessions")), 0);
	json_decref(st);
	assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
	assert_int_equal(on, 0);
	json_decref(tb_rfmock_log(&mk, mk.log)); /* collect the tokens issued */

	/* Location as an absolute URL naming the BMC otherwise, or absent (then
	 * the reply's @odata.id): the session is deleted all the same */
	for (int k = 0; k < 2; k++) {
		reset_mock();
		mock_set(k == 0 ? "{\"session_location\":\"absolute\"}" : "{\"session_location\":\"none\"}");
		assert_int_equal(rf(&pm, TB_POWER_STATUS, &on, &s, 5000, NULL, &e), 0);
		st = mock_call(NULL);
		assert_int_equal(json_integer_value(json_object_get(st, "sessions")), 0);
		json_decref(st);
		log = tb_rfmock_log(&mk, mk.log);
		n = json_array_size(log);
		assert_string_equal(json_string_value(json_object_get(json_array_get(log, n - 1), "method")), "DELETE");
		assert_int_equal(json_integer_value(json_object_get(json_array_get(log, n - 1), "status")), 204);
		json_decref(log);
	}
}

/* The password (and every token the mock issued) in no step and on no command line. */
static void *status_loop(void *arg)
{
	volatile int *done = arg;
	struct tb_power_method pm = method();

	for (int i = 0; i < 20; i++) {
		struct tb_error e;
		int on;

		pm.auth = i % 2 ? TB_REDFISH_SESSION : TB_REDFISH_BASIC;
		rf(&pm, TB_POWER_STATUS, &on, NULL, 5000, NULL, &e);
	}
	*done = 1;
	return NULL;
}

static int cmdline_has(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	while (d != NULL && !found && (de = readdir(d)) != NULL) {
		char path[300], buf[32768];
		size_t n;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = '\n';
		buf[n] = '\0';
		found = strstr(buf, needle) != NULL;
	}
	if (d != NULL)
		closedir(d);
	return found;
}

static void test_password_nowhere(void **state)
{
	volatile int done = 0;
	pthread_t th;
	int scans = 0;

	(void)state;
	if (skip_all)
		skip();
	reset_mock();
	assert_int_equal(pthread_create(&th, NULL, status_loop, (void *)&done), 0);
	while (!done) {
		assert_false(cmdline_has(mk.password));
		scans++;
	}
	pthread_join(th, NULL);
	json_decref(tb_rfmock_log(&mk, mk.log));
	assert_true(mk.ntokens > 0);
	print_message("%d scans of /proc/*/cmdline, %d session tokens checked\n", scans, mk.ntokens);
	assert_false(cmdline_has(mk.password));
	/* every step of every test so far went through record() */
	assert_false(leaked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_and_steps),   cmocka_unit_test(test_off_on),
		cmocka_unit_test(test_already_in_state),   cmocka_unit_test(test_cycle_reset_soft),
		cmocka_unit_test(test_timeout_and_cancel), cmocka_unit_test(test_wrong_password),
		cmocka_unit_test(test_unreachable),        cmocka_unit_test(test_tls),
		cmocka_unit_test(test_boot_override),      cmocka_unit_test(test_session),
		cmocka_unit_test(test_password_nowhere),
	};

	return cmocka_run_group_tests_name("power_redfish", tests, group_setup, group_teardown);
}
