/*
 * matrix_family.c - a spec's "family" (the address family of each run,
 * "ipv4" default, "ipv6") against the pairs: an IPv6 run connects to the
 * server link's address6, from a client that has one, and a pair without
 * them is refused before anything runs, naming the host and the inventory
 * field to add.
 */
#include "matrix_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/* Why an address6 (with or without its "/len") cannot carry an IPv6 run, or
 * NULL when it can: an IPv4-mapped or -compatible address connects over
 * IPv4 (iperf3 -6 to ::ffff:198.19.20.2 runs IPv4 on the wire), a
 * link-local one needs a zone the inventory cannot give, and :: or a
 * multicast group is no host. */
static const char *unusable6(const char *cidr)
{
	char a[64];
	struct in6_addr x;

	snprintf(a, sizeof(a), "%.*s", (int)strcspn(cidr, "/"), cidr);
	if (inet_pton(AF_INET6, a, &x) != 1)
		return "not an IPv6 address";
	if (IN6_IS_ADDR_V4MAPPED(&x) || IN6_IS_ADDR_V4COMPAT(&x))
		return "an IPv4-mapped address: the run would go over IPv4";
	if (IN6_IS_ADDR_LINKLOCAL(&x))
		return "link-local (fe80::/10): it needs an interface zone, which the inventory cannot give";
	if (IN6_IS_ADDR_UNSPECIFIED(&x))
		return "the unspecified address";
	if (IN6_IS_ADDR_MULTICAST(&x))
		return "a multicast address";
	return NULL;
}

/* The client's link that gives it an IPv6 address: the one named like the
 * server's link, else any with a usable address6 (a routed dumbbell); NULL:
 * none. */
static const struct tb_link *client_link6(const struct tb_machine *c, const char *link)
{
	for (size_t k = 0; k < c->nlinks; k++)
		if (strcmp(c->links[k].name, link) == 0 && c->links[k].address6 != NULL &&
		    unusable6(c->links[k].address6) == NULL)
			return &c->links[k];
	for (size_t k = 0; k < c->nlinks; k++)
		if (c->links[k].address6 != NULL && unusable6(c->links[k].address6) == NULL)
			return &c->links[k];
	return NULL;
}

int tb_mx_check_family(const struct tb_mx_spec *sp, const struct tb_inventory *inv, struct tb_error *err)
{
	const struct tb_mx_sweep *fam = &sp->axes[TB_MX_FAMILY];
	char field[TB_ERROR_FIELD_MAX];
	const char *why;
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
		if ((why = unusable6(p->address6)) != NULL)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is ipv6, but pairs[%d]'s server %s has address6 %s on link %s, %s: give "
				       "machines.%s.links.%s.address6 a global or unique-local IPv6 address (such as "
				       "2001:2:0:10::2/64) or take ipv6 out of family",
				       field, i, p->server, p->address6, p->link, why, p->server, p->link);
		if (c != NULL && client_link6(c, p->link) == NULL)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is ipv6, but pairs[%d]'s client %s has no link with an IPv6 address "
				       "(not link-local, IPv4-mapped, multicast or ::): add address6 to one of "
				       "machines.%s.links in the inventory or take ipv6 out of family",
				       field, i, p->client, p->client);
	}
	return 0;
}
