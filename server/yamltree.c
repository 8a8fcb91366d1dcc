/* yamltree.c - YAML to a positioned node tree with libyaml: see yamltree.h. */
#include "yamltree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 32

struct parser {
	yaml_parser_t yp;
	const char *name;
	struct tb_error *err;
};

static struct tb_ynode *node_new(enum tb_ynode_kind kind, const yaml_mark_t *mark)
{
	struct tb_ynode *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->kind = kind;
	n->line = (unsigned int)mark->line + 1;
	n->col = (unsigned int)mark->column + 1;
	return n;
}

void tb_ynode_free(struct tb_ynode *node)
{
	if (node == NULL)
		return;
	free(node->scalar);
	for (size_t i = 0; i < node->n; i++) {
		if (node->keys != NULL)
			free(node->keys[i]);
		if (node->key_nodes != NULL)
			tb_ynode_free(node->key_nodes[i]);
		tb_ynode_free(node->items[i]);
	}
	free(node->keys);
	free(node->key_nodes);
	free(node->items);
	free(node);
}

static int fail_at(struct parser *p, const yaml_mark_t *m, const char *what)
{
	return tb_fail(p->err, TB_ERR_CONFIG, "", "%s:%zu:%zu: %s", p->name, (size_t)m->line + 1, (size_t)m->column + 1,
		       what);
}

static int next_event(struct parser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yp, ev)) {
		const char *problem = p->yp.problem != NULL ? p->yp.problem : "syntax error";
		char msg[256];

		if (p->yp.context != NULL)
			snprintf(msg, sizeof(msg), "%s %s", problem, p->yp.context);
		else
			snprintf(msg, sizeof(msg), "%s", problem);
		return fail_at(p, &p->yp.problem_mark, msg);
	}
	return 0;
}

static int push_item(struct tb_ynode *parent, struct tb_ynode *item, char *key, struct tb_ynode *key_node)
{
	struct tb_ynode **items = realloc(parent->items, (parent->n + 1) * sizeof(*items));

	if (items == NULL)
		return TB_ERR_NOMEM;
	parent->items = items;
	if (parent->kind == TB_Y_MAP) {
		char **keys = realloc(parent->keys, (parent->n + 1) * sizeof(*keys));
		struct tb_ynode **kn;

		if (keys == NULL)
			return TB_ERR_NOMEM;
		parent->keys = keys;
		kn = realloc(parent->key_nodes, (parent->n + 1) * sizeof(*kn));
		if (kn == NULL)
			return TB_ERR_NOMEM;
		parent->key_nodes = kn;
		parent->keys[parent->n] = key;
		parent->key_nodes[parent->n] = key_node;
	}
	parent->items[parent->n++] = item;
	return 0;
}

static int parse_node(struct parser *p, yaml_event_t *ev, int depth, struct tb_ynode **out);

/* Parse the children of a mapping or sequence until its end event. */
static int parse_children(struct parser *p, struct tb_ynode *parent, int depth)
{
	for (;;) {
		yaml_event_t ev;
		struct tb_ynode *key = NULL, *val = NULL;
		int rc;

		if ((rc = next_event(p, &ev)) != 0)
			return rc;
		if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (parent->kind == TB_Y_MAP) {
			if (ev.type != YAML_SCALAR_EVENT) {
				rc = fail_at(p, &ev.start_mark, "expected a plain key (a name), found a structure");
				yaml_event_delete(&ev);
				return rc;
			}
			rc = parse_node(p, &ev, depth + 1, &key);
			yaml_event_delete(&ev);
			if (rc != 0)
				return rc;
			for (size_t i = 0; i < parent->n; i++) {
				if (strcmp(parent->keys[i], key->scalar) == 0) {
					yaml_mark_t m = {0, key->line - 1, key->col - 1};
					char msg[200];

					snprintf(msg, sizeof(msg), "duplicate key \"%.80s\" (first at line %u)",
						 key->scalar, parent->key_nodes[i]->line);
					tb_ynode_free(key);
					return fail_at(p, &m, msg);
				}
			}
			if ((rc = next_event(p, &ev)) != 0) {
				tb_ynode_free(key);
				return rc;
			}
		}
		rc = parse_node(p, &ev, depth + 1, &val);
		yaml_event_delete(&ev);
		if (rc == 0) {
			char *k = key != NULL ? strdup(key->scalar) : NULL;

			if (key != NULL && k == NULL)
				rc = TB_ERR_NOMEM;
			else
				rc = push_item(parent, val, k, key);
			if (rc != 0)
				free(k);
		}
		if (rc != 0) {
			tb_ynode_free(key);
			tb_ynode_free(val);
			return rc == TB_ERR_NOMEM ? tb_fail(p->err, rc, "", "out of memory") : rc;
		}
	}
}

static int parse_node(struct parser *p, yaml_event_t *ev, int depth, struct tb_ynode **out)
{
	struct tb_ynode *n;
	int rc;

	*out = NULL;
	if (depth > MAX_DEPTH)
		return fail_at(p, &ev->start_mark, "nesting too deep");
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return fail_at(p, &ev->start_mark, "aliases (*name) are not supported: write the value out");
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor != NULL)
			return fail_at(p, &ev->start_mark, "anchors (&name) are not supported");
		n = node_new(TB_Y_SCALAR, &ev->start_mark);
		if (n == NULL)
			return tb_fail(p->err, TB_ERR_NOMEM, "", "out of memory");
		n->scalar = malloc(ev->data.scalar.length + 1);
		if (n->scalar == NULL) {
			free(n);
			return tb_fail(p->err, TB_ERR_NOMEM, "", "out of memory");
		}
		memcpy(n->scalar, ev->data.scalar.value, ev->data.scalar.length);
		n->scalar[ev->data.scalar.length] = '\0';
		if (strlen(n->scalar) != ev->data.scalar.length) {
			tb_ynode_free(n);
			return fail_at(p, &ev->start_mark, "a value contains a NUL character");
		}
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		*out = n;
		return 0;
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if ((ev->type == YAML_MAPPING_START_EVENT ? ev->data.mapping_start.anchor
							  : ev->data.sequence_start.anchor) != NULL)
			return fail_at(p, &ev->start_mark, "anchors (&name) are not supported");
		n = node_new(ev->type == YAML_MAPPING_START_EVENT ? TB_Y_MAP : TB_Y_SEQ, &ev->start_mark);
		if (n == NULL)
			return tb_fail(p->err, TB_ERR_NOMEM, "", "out of memory");
		if ((rc = parse_children(p, n, depth)) != 0) {
			tb_ynode_free(n);
			return rc;
		}
		*out = n;
		return 0;
	default: return fail_at(p, &ev->start_mark, "unexpected YAML structure");
	}
}

static int parse_stream(struct parser *p, struct tb_ynode **out)
{
	yaml_event_t ev;
	int rc;

	*out = NULL;
	for (;;) {
		if ((rc = next_event(p, &ev)) != 0)
			return rc;
		if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (ev.type == YAML_STREAM_END_EVENT || ev.type == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (*out != NULL) {
			rc = fail_at(p, &ev.start_mark, "more than one document in the file");
			yaml_event_delete(&ev);
			return rc;
		}
		rc = parse_node(p, &ev, 0, out);
		yaml_event_delete(&ev);
		if (rc != 0)
			return rc;
	}
	if (*out == NULL) {
		yaml_mark_t m = {0, 0, 0};

		return fail_at(p, &m, "the file is empty");
	}
	return 0;
}

int tb_yaml_load_buffer(const char *name, const char *text, size_t len, struct tb_ynode **out, struct tb_error *err)
{
	struct parser p = {.name = name, .err = err};
	int rc;

	*out = NULL;
	if (!yaml_parser_initialize(&p.yp))
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)text, len);
	rc = parse_stream(&p, out);
	yaml_parser_delete(&p.yp);
	if (rc != 0) {
		tb_ynode_free(*out);
		*out = NULL;
	}
	return rc;
}

int tb_yaml_load_file(const char *path, struct tb_ynode **out, struct tb_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	if (f == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "", "%s: cannot open: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (cap - len < 4096) {
			char *nb;

			if (cap > (size_t)16 << 20) {
				free(buf);
				fclose(f);
				return tb_fail(err, TB_ERR_CONFIG, "", "%s: larger than 16 MiB", path);
			}
			nb = realloc(buf, cap + 65536);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
			}
			buf = nb;
			cap += 65536;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return tb_fail(err, TB_ERR_CONFIG, "", "%s: read error", path);
	}
	fclose(f);
	rc = tb_yaml_load_buffer(path, buf != NULL ? buf : "", len, out, err);
	free(buf);
	return rc;
}

const struct tb_ynode *tb_ynode_get(const struct tb_ynode *map, const char *key)
{
	if (map == NULL || map->kind != TB_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return map->items[i];
	return NULL;
}
