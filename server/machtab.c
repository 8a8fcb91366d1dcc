/* machtab.c - per-machine slots: see machtab.h. */
#include "machtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_machtab_init(struct tb_machtab *t, size_t slot_size)
{
	memset(t, 0, sizeof(*t));
	t->slot_size = slot_size < TB_MACHTAB_NAME ? TB_MACHTAB_NAME : slot_size;
}

void *tb_machtab_at(const struct tb_machtab *t, size_t i)
{
	return t->v + i * t->slot_size;
}

void *tb_machtab_get(struct tb_machtab *t, const char *machine, int create)
{
	unsigned char *s;

	for (size_t i = 0; i < t->n; i++)
		if (strcmp((const char *)tb_machtab_at(t, i), machine) == 0)
			return tb_machtab_at(t, i);
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap != 0 ? t->cap * 2 : 8;
		unsigned char *grown = realloc(t->v, cap * t->slot_size);

		if (grown == NULL)
			return NULL;
		t->v = grown;
		t->cap = cap;
	}
	s = tb_machtab_at(t, t->n++);
	memset(s, 0, t->slot_size);
	snprintf((char *)s, TB_MACHTAB_NAME, "%s", machine);
	return s;
}

void tb_machtab_free(struct tb_machtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
