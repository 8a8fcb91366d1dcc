/*
 * inventory_internal.h - what the inventory loader's files (inventory.c,
 * inventory_power.c) share: the parse context and the helpers that read one
 * key and report a mistake as "FILE:LINE:COL: path.key: what was expected".
 * Private to inventory*.c; everyone else uses inventory.h.
 *
 * Every helper returns 0 or TB_ERR_CONFIG / TB_ERR_NOMEM with c->err
 * filled.  Strings stored through *out are malloc'd and owned by the
 * inventory being built (freed with it).
 */
#ifndef TB_INVENTORY_INTERNAL_H
#define TB_INVENTORY_INTERNAL_H

#include "inventory.h"
#include "yamltree.h"

struct inv_ctx {
	const char *file;
	unsigned int flags;
	struct tb_error *err;
	/* defaults from the top-level ssh: section */
	struct tb_persona ssh;
};

typedef int (*validator)(const char *s);

/* Report a mistake at node n about the key path; always returns TB_ERR_CONFIG. */
int inv_bad(struct inv_ctx *c, const struct tb_ynode *n, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Reject keys of map that are not in allowed (a NULL-terminated list). */
int inv_check_keys(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *const allowed[]);
int inv_want_kind(struct inv_ctx *c, const struct tb_ynode *n, const char *path, enum tb_ynode_kind kind);
/* A string under key (optional unless required) checked by v (may be NULL). */
int inv_get_str(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, int required,
		validator v, const char *expected, char **out);
/* Whole numbers lo..hi; *out is left alone when the key is absent. */
int inv_get_long(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		 long *out);
int inv_get_uint(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		 unsigned int *out);
int inv_get_int(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		int *out);
/* One of the words in choices (NULL-terminated); *out gets its index. */
int inv_get_enum(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, int required,
		 const char *const choices[], int *out);
/* With TB_INV_CHECK_FILES: file (may be NULL) must exist, be regular and mode 0600/0400. */
int inv_check_secret_file(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key,
			  const char *file);

/* One entry of a machine's power: list (inventory_power.c). */
int inv_parse_power(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_ynode *machines,
		    struct tb_power_method *pm);
/* Free what inv_parse_power stored in pm (not pm itself). */
void inv_power_clear(struct tb_power_method *pm);

#endif /* TB_INVENTORY_INTERNAL_H */
