/* cpulist.c - CPU lists parsed and compared (cpulist.h). */
#include "cpulist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CPU number at *s (blanks before it skipped): 0 and *cpu, else -1. */
static int number(const char **s, long *cpu)
{
	char *end;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (**s < '0' || **s > '9')
		return -1;
	*cpu = strtol(*s, &end, 10);
	*s = end;
	return *cpu >= 0 && *cpu < TB_CPUS_MAX ? 0 : -1;
}

int tb_cpulist_parse(const char *s, struct tb_cpuset *out)
{
	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return -1;
	for (;;) {
		long lo, hi;

		if (number(&s, &lo) != 0)
			return -1;
		hi = lo;
		if (*s == '-' && (s++, number(&s, &hi) != 0 || hi < lo))
			return -1;
		for (long c = lo; c <= hi; c++)
			out->bits[c / 64] |= UINT64_C(1) << (c % 64);
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

bool tb_cpuset_equal(const struct tb_cpuset *a, const struct tb_cpuset *b)
{
	return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

/* The list of irq in "N=LIST N=LIST" (NULL: none) into out. */
static bool list_of(const char *pairs, const char *irq, size_t irqlen, char *out, size_t len)
{
	for (const char *p = pairs; p != NULL && *p != '\0';) {
		size_t w;

		while (*p == ' ')
			p++;
		w = strcspn(p, " ");
		if (w > irqlen && strncmp(p, irq, irqlen) == 0 && p[irqlen] == '=') {
			snprintf(out, len, "%.*s", (int)(w - irqlen - 1), p + irqlen + 1);
			return true;
		}
		p += w;
	}
	return false;
}

bool tb_cpulist_irqs_match(const char *read, const char *want)
{
	bool per_irq = strchr(want, '=') != NULL, any = false;
	struct tb_cpuset single, got, w;
	const char *p = read;

	if (!per_irq && tb_cpulist_parse(want, &single) != 0)
		return false;
	while (p != NULL && *p != '\0') {
		char list[256], irq[32];
		const char *eq;
		size_t n;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		n = strcspn(p, " ");
		eq = memchr(p, '=', n);
		if (eq == NULL || (size_t)(eq - p) >= sizeof(irq))
			return false;
		snprintf(irq, sizeof(irq), "%.*s", (int)(eq - p), p);
		snprintf(list, sizeof(list), "%.*s", (int)(n - (size_t)(eq - p) - 1), eq + 1);
		if (tb_cpulist_parse(list, &got) != 0)
			return false;
		if (per_irq) {
			char wl[256];

			if (!list_of(want, irq, strlen(irq), wl, sizeof(wl)) || tb_cpulist_parse(wl, &w) != 0 ||
			    !tb_cpuset_equal(&got, &w))
				return false;
		} else if (!tb_cpuset_equal(&got, &single)) {
			return false;
		}
		any = true;
		p += n;
	}
	return any;
}
