/*
 * yamltree.h - a YAML file as a small tree of nodes that remember where they
 * stand (line and column, 1-based), so that every later mistake can be
 * reported as file:line:column.
 *
 * Only what an inventory needs: mappings, sequences and plain or quoted
 * scalars.  Anchors, aliases, tags and duplicate keys are refused (an alias
 * would make a reported position ambiguous; a duplicate key is always a
 * mistake).  Parsing reads the whole file; no I/O afterwards.
 */
#ifndef TB_YAMLTREE_H
#define TB_YAMLTREE_H

#include <stddef.h>

#include "error.h"

enum tb_ynode_kind { TB_Y_SCALAR, TB_Y_MAP, TB_Y_SEQ };

struct tb_ynode {
	enum tb_ynode_kind kind;
	unsigned int line, col;      /* 1-based position of the node's start */
	char *scalar;                /* TB_Y_SCALAR: the text, NUL-terminated */
	int quoted;                  /* TB_Y_SCALAR: was written in quotes */
	size_t n;                    /* TB_Y_MAP: pairs; TB_Y_SEQ: items */
	char **keys;                 /* TB_Y_MAP: key texts */
	struct tb_ynode **key_nodes; /* TB_Y_MAP: key positions */
	struct tb_ynode **items;     /* TB_Y_MAP: values; TB_Y_SEQ: items */
};

/* Parse a YAML file.  On success *out owns the whole tree (free it with
 * tb_ynode_free).  A syntax error fills err with "PATH:LINE:COL: problem". */
int tb_yaml_load_file(const char *path, struct tb_ynode **out, struct tb_error *err);

/* Parse YAML text of len bytes; name is used in messages in place of a path. */
int tb_yaml_load_buffer(const char *name, const char *text, size_t len, struct tb_ynode **out, struct tb_error *err);

void tb_ynode_free(struct tb_ynode *node);

/* The value of key in a mapping, or NULL. */
const struct tb_ynode *tb_ynode_get(const struct tb_ynode *map, const char *key);

#endif /* TB_YAMLTREE_H */
