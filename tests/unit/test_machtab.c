/*
 * test_machtab.c - the per-machine slot table (machtab.h): a slot is found
 * by name, created zeroed with its name, kept across growth, and a missing
 * one is NULL unless asked to be made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "machtab.h"

struct slot {
	char machine[TB_MACHTAB_NAME];
	int64_t value;
	char note[100];
};
TB_MACHTAB_SLOT(struct slot, machine);

static void test_slots(void **state)
{
	struct tb_machtab t;
	struct slot *s;
	char name[TB_MACHTAB_NAME];

	(void)state;
	tb_machtab_init(&t, sizeof(struct slot));
	assert_null(tb_machtab_get(&t, "left", 0));
	s = tb_machtab_get(&t, "left", 1);
	assert_non_null(s);
	assert_string_equal(s->machine, "left");
	assert_int_equal(s->value, 0);
	assert_string_equal(s->note, "");
	s->value = 42;
	/* 100 more: the table grows several times; every slot keeps its own */
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "host-%d", i);
		s = tb_machtab_get(&t, name, 1);
		assert_non_null(s);
		s->value = i;
		snprintf(s->note, sizeof(s->note), "note %d", i);
	}
	assert_int_equal(t.n, 101);
	s = tb_machtab_get(&t, "left", 0);
	assert_int_equal(s->value, 42);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "host-%d", i);
		s = tb_machtab_get(&t, name, 1); /* found, not made again */
		assert_int_equal(s->value, i);
	}
	assert_int_equal(t.n, 101);
	s = tb_machtab_at(&t, 50);
	assert_string_equal(s->machine, "host-49");
	assert_string_equal(s->note, "note 49");
	/* the longest name a slot holds */
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	s = tb_machtab_get(&t, name, 1);
	assert_int_equal(strlen(s->machine), TB_MACHTAB_NAME - 1);
	tb_machtab_free(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
