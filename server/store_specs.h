/*
 * store_specs.h - the spec library: named matrix specs, each a list of
 * versions (1, 2, ...; a version never changes once written).  SQL in
 * store_specs.c.
 *
 * Same rules as store.h: thread-safe, every call blocks on disk I/O, rows
 * handed to callbacks are valid during the callback only and the callback
 * runs under the store's lock (it must not call the store).
 */
#ifndef TB_STORE_SPECS_H
#define TB_STORE_SPECS_H

#include <stdint.h>

#include "store.h"

struct tb_spec_row {
	const char *name;
	int64_t version;
	const char *spec; /* the JSON text as pushed */
	const char *author;
	int64_t created_at;
	int64_t nversions; /* in lists of names: how many versions it has; else 0 */
};
typedef void (*tb_spec_row_fn)(void *cls, const struct tb_spec_row *r);

/* Append a version of name (the next number, 1 for a new name) holding
 * spec; its number into *version. */
int tb_store_spec_insert(struct tb_store *st, const char *name, const char *spec, const char *author, int64_t *version,
			 struct tb_error *err);
/* Every name with its latest version (nversions set), by name. */
int tb_store_spec_each_latest(struct tb_store *st, tb_spec_row_fn fn, void *cls, struct tb_error *err);
/* The versions of name, oldest first (fn not called when there are none). */
int tb_store_spec_each_version(struct tb_store *st, const char *name, tb_spec_row_fn fn, void *cls,
			       struct tb_error *err);
/* One version (0: the latest) of name: TB_ERR_NOT_FOUND when there is none. */
int tb_store_spec_get(struct tb_store *st, const char *name, int64_t version, tb_spec_row_fn fn, void *cls,
		      struct tb_error *err);

#endif /* TB_STORE_SPECS_H */
