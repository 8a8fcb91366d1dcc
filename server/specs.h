/*
 * specs.h - the spec library: a matrix spec pushed under its name becomes
 * that name's next version, checked first with the matrix spec's own parser
 * (matrix.h) so a version that is stored would start.  Versions never change;
 * two of them can be compared key by key.
 *
 * Blocking: every call reads or writes the store (disk I/O); none waits on a
 * host.  JSON returned is new (the caller's); JSON passed in stays the
 * caller's.
 */
#ifndef TB_SPECS_H
#define TB_SPECS_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_store;
struct tb_inventory;

/* Check spec (a MatrixSpec; its "name" names the library entry) against inv
 * and store it as the next version of its name; the number into *version.
 * The errors are the matrix parser's (field named), plus "name" holding a
 * '/', which could not be addressed in a path. */
int tb_spec_push(struct tb_store *st, const struct tb_inventory *inv, const json_t *spec, const char *author,
		 int64_t *version, struct tb_error *err);
/* [{name, version (the latest), versions (count), author, created_at}] by name. */
int tb_spec_list_json(struct tb_store *st, json_t **out, struct tb_error *err);
/* {name, version, author, created_at, spec} of one version (0: the latest);
 * TB_ERR_NOT_FOUND naming "name" or "version". */
int tb_spec_get_json(struct tb_store *st, const char *name, int64_t version, json_t **out, struct tb_error *err);
/* [{name, version, author, created_at}] oldest first; TB_ERR_NOT_FOUND when none. */
int tb_spec_versions_json(struct tb_store *st, const char *name, json_t **out, struct tb_error *err);
/* The differences from a to b: [{path, op, a?, b?}], path a JSON pointer
 * ("/duration_s", "/pairs/0/client"), op "added" (only b has it), "removed"
 * (only a) or "changed"; objects compared key by key, arrays of the same
 * length index by index, anything else as a whole.  NULL on out of memory. */
json_t *tb_spec_diff(const json_t *a, const json_t *b);

#endif /* TB_SPECS_H */
