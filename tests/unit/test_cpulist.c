/*
 * test_cpulist.c - CPU lists as Linux's smp_affinity_list and FreeBSD's
 * cpuset print them, and an interface's interrupts "N=LIST ..." against a
 * wanted list (cpulist.c, the interrupt placement tunable of issue 20 item
 * 3).  The formats are the kernels' documented ones (proc(5)'s
 * smp_affinity_list, cpuset(1)'s "irq N mask: 0, 1"): this machine's veths
 * have no interrupts to read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpulist.h"

static void test_parse(void **state)
{
	struct tb_cpuset a, b;

	(void)state;
	assert_int_equal(tb_cpulist_parse("0-3,8", &a), 0);
	assert_int_equal(tb_cpulist_parse("0, 1, 2, 3, 8", &b), 0); /* cpuset -g's */
	assert_true(tb_cpuset_equal(&a, &b));
	assert_int_equal(tb_cpulist_parse("0,1,2,3,8", &b), 0);
	assert_true(tb_cpuset_equal(&a, &b));
	assert_int_equal(tb_cpulist_parse("0-3", &b), 0);
	assert_false(tb_cpuset_equal(&a, &b));
	assert_int_equal(tb_cpulist_parse("1023", &b), 0);
	assert_int_equal(tb_cpulist_parse("1024", &b), -1);
	assert_int_equal(tb_cpulist_parse("3-1", &b), -1);
	assert_int_equal(tb_cpulist_parse("", &b), -1);
	assert_int_equal(tb_cpulist_parse("1,", &b), -1);
	assert_int_equal(tb_cpulist_parse("a", &b), -1);
	assert_int_equal(tb_cpulist_parse(NULL, &b), -1);
}

static void test_irqs(void **state)
{
	(void)state;
	/* one list for every IRQ of the interface */
	assert_true(tb_cpulist_irqs_match("120=2 121=2 122=2", "2"));
	assert_true(tb_cpulist_irqs_match("264=0,1 265=0,1", "0-1"));
	assert_false(tb_cpulist_irqs_match("120=2 121=0-3", "2"));
	assert_false(tb_cpulist_irqs_match("", "2"));
	assert_false(tb_cpulist_irqs_match("none", "2"));
	/* a restore: each IRQ as it was */
	assert_true(tb_cpulist_irqs_match("120=0-3 121=4-7", "120=0,1,2,3 121=4-7"));
	assert_false(tb_cpulist_irqs_match("120=0-3 121=0-3", "120=0-3 121=4-7"));
	assert_false(tb_cpulist_irqs_match("120=0-3 122=4-7", "120=0-3 121=4-7"));
	assert_true(tb_cpulist_irqs_match("12=1 120=2", "120=2 12=1")); /* 12 is not 120's prefix */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_irqs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
