/*
 * cpulist.h - CPU lists as Linux and FreeBSD print and take them, for the
 * interrupt placement tunable (issue 20 item 3): Linux's
 * /proc/irq/N/smp_affinity_list ("0-3,8"), FreeBSD's `cpuset -g -x N`
 * ("irq 264 mask: 0, 1, 2, 3", its mask part with the blanks taken out:
 * "0,1,2,3"), and a spec's value ("2", "0-1").  Two lists are the same when
 * they name the same CPUs, however written.
 *
 * An interface's interrupts as tunables.c reads them back: "N=LIST N=LIST"
 * (each of its IRQs and the CPUs it may run on), the form its journal row
 * keeps as the original and gives back, one IRQ at a time.
 *
 * Pure: no I/O, no allocation.
 */
#ifndef TB_CPULIST_H
#define TB_CPULIST_H

#include <stdbool.h>
#include <stdint.h>

#define TB_CPUS_MAX 1024

struct tb_cpuset {
	uint64_t bits[TB_CPUS_MAX / 64];
};

/* s ("0-3,8", "0, 1, 2", "5") into *out: 0, or -1 when it is not a list of
 * CPUs below TB_CPUS_MAX (a range's end not below its start, at least one). */
int tb_cpulist_parse(const char *s, struct tb_cpuset *out);
bool tb_cpuset_equal(const struct tb_cpuset *a, const struct tb_cpuset *b);

/* Whether read ("N=LIST N=LIST ...", what an interface's IRQs allow now)
 * is want: a single list for every IRQ ("2"), or "N=LIST ..." IRQ by IRQ
 * (a restore: the same IRQs, each as it was).  False for an empty read. */
bool tb_cpulist_irqs_match(const char *read, const char *want);

#endif /* TB_CPULIST_H */
