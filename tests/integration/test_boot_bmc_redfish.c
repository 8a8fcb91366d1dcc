/*
 * test_boot_bmc_redfish.c - the bmc-bootdev boot path's Redfish side
 * (boot_path_bmc.c, tb_boot_bmc_set) against tests/redfish/redfish_mock.py
 * over TLS on 127.0.0.1: boot.bmc's device becomes the one-shot override
 * (BootSourceOverrideEnabled Once, the device's BootSourceOverrideTarget).
 *
 * A mock because no Redfish BMC can run here (no emulator is packaged for
 * Debian; DMTF's Redfish-Mockup-Server and sushy-tools are pip-only).  The
 * IPMI side runs against a real ipmi_sim on the sim (tests/sim/
 * test_boot_bmc.sh).  Skipped when python3 or openssl is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "boot_internal.h"
#include "inventory.h"
#include "power.h"
#include "rfmock.h"

static struct tb_rfmock mk;
static int skip_all;
static int steps;

static void record(void *cls, const char *what, const char *command, int status, const char *output)
{
	(void)cls;
	(void)what;
	(void)command;
	(void)status;
	(void)output;
	steps++;
}

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

static struct tb_machine machine = {.name = "left"};

/* The override the mock holds now: "Enabled/Target". */
static void override(char *out, size_t len)
{
	json_t *st = tb_rfmock_control(&mk, NULL), *boot;

	assert_non_null(st);
	boot = json_object_get(st, "boot");
	snprintf(out, len, "%s/%s", json_string_value(json_object_get(boot, "BootSourceOverrideEnabled")),
		 json_string_value(json_object_get(boot, "BootSourceOverrideTarget")));
	json_decref(st);
}

static int patches(void)
{
	json_t *log = tb_rfmock_log(&mk, mk.log), *r;
	size_t i;
	int n = 0;

	json_array_foreach(log, i, r) n += strcmp(json_string_value(json_object_get(r, "method")), "PATCH") == 0;
	json_decref(log);
	return n;
}

static void test_redfish_devices(void **state)
{
	static const char *const dev[][2] = {{"pxe", "Pxe"}, {"disk", "Hdd"}, {"cdrom", "Cd"}, {"bios", "BiosSetup"}};
	struct tb_power_method pm = {0};
	struct tb_power_call c = {.m = &machine, .pm = &pm, .step = record, .timeout_ms = 5000};
	struct tb_error e = {0};
	char got[64], want[64];

	(void)state;
	if (skip_all)
		skip();
	pm.driver = TB_POWER_REDFISH;
	pm.url = mk.base;
	pm.user = "admin";
	pm.password_file = mk.pwfile;
	pm.ca_file = mk.ca;
	pm.auth = TB_REDFISH_BASIC;
	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
		assert_int_equal(tb_rfmock_reset(&mk), 0);
		assert_int_equal(tb_boot_bmc_set(&c, dev[i][0], &e), 0);
		override(got, sizeof(got));
		snprintf(want, sizeof(want), "Once/%s", dev[i][1]);
		assert_string_equal(got, want);
	}
	assert_true(steps > 0);
	/* a device testbedd does not know: refused before any request */
	assert_int_equal(tb_rfmock_reset(&mk), 0);
	assert_int_equal(tb_boot_bmc_set(&c, "floppy", &e), TB_ERR_CONFIG);
	assert_int_equal(patches(), 0);
	/* a method that is no BMC: refused */
	pm.driver = TB_POWER_WOL;
	assert_int_equal(tb_boot_bmc_set(&c, "pxe", &e), TB_ERR_CONFIG);
	assert_int_equal(patches(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redfish_devices),
	};
	return cmocka_run_group_tests_name("boot_bmc_redfish", tests, group_setup, group_teardown);
}
