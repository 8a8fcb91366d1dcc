/* inventory_current.c - the inventory in force and its swap on reload: see
 * inventory.h ("The inventory in force"). */
#include "inventory.h"

#include <pthread.h>
#include <stdlib.h>

struct tb_inv_current {
	pthread_mutex_t lock;
	struct tb_inventory *inv; /* in force; holds one reference of its own */
};

struct tb_inv_current *tb_inv_current_new(struct tb_inventory *inv)
{
	struct tb_inv_current *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	inv->refs = 1;
	c->inv = inv;
	return c;
}

void tb_inv_current_free(struct tb_inv_current *c)
{
	if (c == NULL)
		return;
	tb_inv_current_put(c, c->inv);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct tb_inventory *tb_inv_current_get(struct tb_inv_current *c)
{
	struct tb_inventory *inv;

	pthread_mutex_lock(&c->lock);
	inv = c->inv;
	inv->refs++;
	pthread_mutex_unlock(&c->lock);
	return inv;
}

void tb_inv_current_put(struct tb_inv_current *c, struct tb_inventory *inv)
{
	int last;

	if (inv == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	last = --inv->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (last)
		tb_inventory_free(inv);
}

void tb_inv_current_swap(struct tb_inv_current *c, struct tb_inventory *inv)
{
	struct tb_inventory *old;

	pthread_mutex_lock(&c->lock);
	inv->refs = 1;
	old = c->inv;
	c->inv = inv;
	pthread_mutex_unlock(&c->lock);
	tb_inv_current_put(c, old);
}
