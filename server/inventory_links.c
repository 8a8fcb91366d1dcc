/* inventory_links.c - a machine's data-plane interfaces by OS (inventory.h). */
#include <string.h>

#include "inventory.h"

const char *tb_link_ifname(const struct tb_link *l, const char *os)
{
	for (size_t k = 0; l != NULL && k < l->nifnames; k++)
		if (strcmp(l->ifnames[k].os, os) == 0)
			return l->ifnames[k].ifname;
	return NULL;
}

int tb_machine_ifnames(const struct tb_machine *m, const char *os, const char *out[], int max)
{
	int n = 0;

	for (size_t i = 0; i < m->nlinks && n < max; i++) {
		const char *ifn = tb_link_ifname(&m->links[i], os);

		if (ifn != NULL)
			out[n++] = ifn;
	}
	return n;
}
