/*
 * matrix_family.c - a spec's "family" (the address family of each run,
 * "ipv4" default, "ipv6") against the pairs: an IPv6 run connects to the
 * server link's address6, from a client that has one, and a pair without
 * them is refused before anything runs, naming the host and the inventory
 * field to add.
 */
#include "matrix_internal.h"

#include <stdio.h>
#include <string.h>

/* The client's link that gives it an IPv6 address: the one named like the
 * server's link, else any with an address6 (a routed dumbbell); NULL: none.
 * The inventory takes no address6 that cannot carry a run (link-local,
 * IPv4-mapped, multicast, ::: tb_ipv6_unusable). */
static const struct tb_link *client_link6(const struct tb_machine *c, const char *link)
{
	for (size_t k = 0; k < c->nlinks; k++)
		if (strcmp(c->links[k].name, link) == 0 && c->links[k].address6 != NULL)
			return &c->links[k];
	for (size_t k = 0; k < c->nlinks; k++)
		if (c->links[k].address6 != NULL)
			return &c->links[k];
	return NULL;
}

int tb_mx_check_family(const struct tb_mx_spec *sp, const struct tb_inventory *inv, struct tb_error *err)
{
	const struct tb_mx_sweep *fam = &sp->axes[TB_MX_FAMILY];
	char field[TB_ERROR_FIELD_MAX];
	int i6 = -1;

	for (int i = 0; i < fam->n && i6 < 0; i++)
		if (fam->v[i].num == 6)
			i6 = i;
	if (i6 < 0)
		return 0;
	if (fam->listed)
		snprintf(field, sizeof(field), "family[%d]", i6);
	else
		snprintf(field, sizeof(field), "family");
	for (int i = 0; i < sp->npairs; i++) {
		const struct tb_mx_pair *p = &sp->pairs[i];
		const struct tb_machine *c = tb_inventory_find(inv, p->client);

		if (p->address6[0] == '\0')
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is ipv6, but pairs[%d]'s server %s has no IPv6 address on link %s: add "
				       "machines.%s.links.%s.address6 to the inventory (such as 2001:2:0:10::2/64) "
				       "or take ipv6 out of family",
				       field, i, p->server, p->link, p->server, p->link);
		if (c != NULL && client_link6(c, p->link) == NULL)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is ipv6, but pairs[%d]'s client %s has no link with an IPv6 address: "
				       "add address6 to one of "
				       "machines.%s.links in the inventory or take ipv6 out of family",
				       field, i, p->client, p->client);
	}
	return 0;
}
