/*
 * store_reserve.h - the reservations kept across restarts (reserve.c owns
 * their meaning; this is their SQL).  One row per reservation granted or
 * queued; an ended one is deleted.  Blocking (SQLite), thread-safe as the
 * store.  Strings in a row given to each's callback are valid during the
 * call only.
 */
#ifndef TB_STORE_RESERVE_H
#define TB_STORE_RESERVE_H

#include <stdint.h>

#include "error.h"
#include "store.h"

struct tb_reserve_row {
	int64_t id, seq;
	const char *hosts; /* names separated by one space */
	const char *owner, *note;
	int granted;
	int64_t asked_at, granted_at, until, length_s;
};

/* Insert or replace the row of r->id. */
int tb_store_reserve_put(struct tb_store *st, const struct tb_reserve_row *r, struct tb_error *err);
/* Delete the row of id (none: fine). */
int tb_store_reserve_delete(struct tb_store *st, int64_t id, struct tb_error *err);
/* fn for every row in the order of asking (seq). */
int tb_store_reserve_each(struct tb_store *st, void (*fn)(void *cls, const struct tb_reserve_row *r), void *cls,
			  struct tb_error *err);

#endif /* TB_STORE_RESERVE_H */
