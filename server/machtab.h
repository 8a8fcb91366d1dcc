/*
 * machtab.h - a table of per-machine slots found by the machine's name: the
 * one shape of the state that hosts, the BMC watcher, idle power-off and the
 * wake schedule keep for each machine.
 *
 * Each slot is slot_size bytes and begins with the machine's name
 * (char[TB_MACHTAB_NAME], checked at compile time with TB_MACHTAB_SLOT); a new
 * slot is zeroed with its name set.  The table grows by doubling; a slot
 * pointer stays valid until the next tb_machtab_get that creates one.
 *
 * Not thread-safe: its owner's lock guards it (that lock guards more than
 * the table).  No I/O; allocation only when a slot is created.
 */
#ifndef TB_MACHTAB_H
#define TB_MACHTAB_H

#include <stddef.h>

#include "validate.h"

/* A machine name with its NUL (validate.h). */
#define TB_MACHTAB_NAME TB_NAME_MAX

/* The slot type must begin with its name: use after its definition. */
#define TB_MACHTAB_SLOT(type, field)                                                                \
	_Static_assert(offsetof(type, field) == 0 && sizeof(((type *)0)->field) == TB_MACHTAB_NAME, \
		       #type " must begin with char " #field "[TB_MACHTAB_NAME]")

struct tb_machtab {
	unsigned char *v;
	size_t n, cap, slot_size;
};

void tb_machtab_init(struct tb_machtab *t, size_t slot_size);
/* machine's slot; created (zeroed, name set) when missing and create is set.
 * NULL: missing, or out of memory. */
void *tb_machtab_get(struct tb_machtab *t, const char *machine, int create);
/* The i-th slot, 0 <= i < t->n. */
void *tb_machtab_at(const struct tb_machtab *t, size_t i);
void tb_machtab_free(struct tb_machtab *t);

#endif /* TB_MACHTAB_H */
