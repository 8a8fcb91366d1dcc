/*
 * test_bmc_idle.c - the pure parts of the BMC watcher and idle power-off,
 * as tables: which power method answers "is it on?", the interval and its
 * floor, when to read a BMC next, when a difference is a mismatch, when a
 * machine is to be switched off, and what the countdown shows.  Adding a
 * case is adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bmcwatch.h"
#include "idle.h"
#include "inventory.h"
#include "power.h"

static void test_bmc_method(void **state)
{
	struct tb_power_method wol = {.driver = TB_POWER_WOL}, ipmi = {.driver = TB_POWER_IPMI};
	struct tb_power_method both[2], only_wol[1];
	struct tb_machine m = {.name = "left"};

	(void)state;
	both[0] = wol, both[1] = ipmi;
	only_wol[0] = wol;
	m.power = both, m.npower = 2;
	assert_ptr_equal(tb_bmc_method(&m), &both[1]); /* wol cannot tell; ipmi can */
	m.power = only_wol, m.npower = 1;
	assert_null(tb_bmc_method(&m));
	m.power = NULL, m.npower = 0;
	assert_null(tb_bmc_method(&m));
	{
		/* a command method (a PDU) tells only when it has a status template */
		static char *on_argv[] = {"pdu", "on", NULL}, *status_argv[] = {"pdu", "status", NULL};
		struct tb_power_method cmd[1] = {{.driver = TB_POWER_COMMAND}};

		cmd[0].argv[TB_POWER_ON] = on_argv;
		m.power = cmd, m.npower = 1;
		assert_null(tb_bmc_method(&m));
		cmd[0].argv[TB_POWER_STATUS] = status_argv;
		assert_ptr_equal(tb_bmc_method(&m), &cmd[0]);
	}
}

static void test_interval(void **state)
{
	static const struct {
		unsigned int requested, floor, want;
	} cases[] = {
		{30, 0, 30},            /* the default */
		{1, 0, TB_BMC_FLOOR_S}, /* never below 5 s outside tests */
		{5, 0, 5},
		{1, 1, 1}, /* a test lowered the floor */
		{3, 2, 3},
		{1, 2, 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(tb_bmc_interval(cases[i].requested, cases[i].floor), cases[i].want);
}

static void test_next_check(void **state)
{
	(void)state;
	assert_int_equal(tb_bmc_next_check_ms(0, 30), 0); /* never read: now */
	assert_int_equal(tb_bmc_next_check_ms(1000, 30), 31000);
	assert_int_equal(tb_bmc_next_check_ms(1000, 5), 6000);
}

static void test_mismatch(void **state)
{
	const int64_t M = TB_BMC_MISMATCH_MARGIN_MS;
	static const int64_t T = 1000000;
	const struct {
		struct tb_bmc_sides s;
		int want;
		const char *why;
	} cases[] = {
		{{1, T, T + M, 0, T, T + M}, 1, "BMC on, OS down, both confirmed after the other's change"},
		{{0, T, T + M, 1, T, T + M}, 1, "BMC off, OS answers"},
		{{1, T, T + M, 1, T, T + M}, 0, "both on"},
		{{0, T, T + M, 0, T, T + M}, 0, "both off"},
		{{-1, T, T + M, 0, T, T + M}, 0, "BMC unknown"},
		{{1, T, T + M, -1, T, T + M}, 0, "reachability unknown"},
		{{0, T, T + M, 1, T, T + M - 1}, 0, "the probe ended too soon after the BMC changed"},
		{{0, T, T + M - 1, 1, T, T + M}, 0, "the BMC was read too soon after the OS came up"},
		{{1, T, T + 60000, 0, T + 60000, T + 60000},
		 0,
		 "the BMC reading is older than the OS change (held host)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (tb_bmc_mismatch(&cases[i].s) != cases[i].want)
			fail_msg("case %zu (%s): want %d", i, cases[i].why, cases[i].want);
	}
}

static void test_off_at(void **state)
{
	(void)state;
	assert_int_equal(tb_idle_off_at_ms(1000, 60, 60), 1000 + 3600000);
	assert_int_equal(tb_idle_off_at_ms(1000, 10, 1), 1000 + 10000); /* test minutes */
	assert_int_equal(tb_idle_off_at_ms(1000, 2, 0), 1000 + 120000); /* 0: 60 s */
	assert_int_equal(tb_idle_off_at_ms(1000, 10080, 60), 1000 + (int64_t)10080 * 60000);
	assert_int_equal(tb_idle_off_at_ms(1000, 0, 60), -1);
	assert_int_equal(tb_idle_off_at_ms(1000, -1, 60), -1);
}

static void test_decide(void **state)
{
	static const struct {
		int after_min, on, held;
		int64_t off_at, now;
		enum tb_idle_state want;
	} cases[] = {
		{-1, 1, 0, -1, 5000, TB_IDLE_NONE},       {0, 1, 0, -1, 5000, TB_IDLE_NONE},
		{10, 0, 0, 1000, 5000, TB_IDLE_OFF}, /* already off: nothing fires */
		{10, 0, 1, 1000, 5000, TB_IDLE_OFF},      {10, 1, 1, 1000, 5000, TB_IDLE_HELD}, /* held: never fires */
		{10, 1, 0, 6000, 5000, TB_IDLE_COUNTING}, {10, 1, 0, 5000, 5000, TB_IDLE_DUE},
		{10, 1, 0, 1000, 5000, TB_IDLE_DUE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum tb_idle_state got = tb_idle_decide(cases[i].after_min, cases[i].on, cases[i].held, cases[i].off_at,
							cases[i].now);

		if (got != cases[i].want)
			fail_msg("case %zu: got %d, want %d", i, (int)got, (int)cases[i].want);
	}
}

static void test_seconds_left(void **state)
{
	(void)state;
	assert_int_equal(tb_idle_seconds_left(2000, 1000), 1);
	assert_int_equal(tb_idle_seconds_left(2001, 1000), 2); /* rounded up */
	assert_int_equal(tb_idle_seconds_left(1500, 1000), 1);
	assert_int_equal(tb_idle_seconds_left(1000, 1000), 0);
	assert_int_equal(tb_idle_seconds_left(500, 1000), 0); /* never negative */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bmc_method),   cmocka_unit_test(test_interval), cmocka_unit_test(test_next_check),
		cmocka_unit_test(test_mismatch),     cmocka_unit_test(test_off_at),   cmocka_unit_test(test_decide),
		cmocka_unit_test(test_seconds_left),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
