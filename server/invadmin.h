/*
 * invadmin.h - the inventory as an admin sees it over the API: which file is
 * loaded and since when, and the last reload's result (by SIGHUP or by
 * POST /inventory/reload), and the one way to reload.
 *
 * The reload itself is the composition root's (app.c sets it with
 * tb_invadmin_set_reload); this module only serializes reloads, so that a
 * SIGHUP and an API call never load at once, and remembers what happened.
 * testbedd never writes the inventory file: it stays the source of truth.
 *
 * Thread-safe: one mutex; tb_invadmin_reload holds it while the reload
 * callback runs (file I/O: reading the inventory, stat of its key files).
 */
#ifndef TB_INVADMIN_H
#define TB_INVADMIN_H

#include <jansson.h>

#include "error.h"

struct tb_invadmin;

/* Loads the file anew and swaps it in; on a mistake keeps the old one and
 * fills err (FILE:LINE:COL). */
typedef int (*tb_invadmin_reload_fn)(void *cls, struct tb_error *err);

/* path is copied; the load time is now.  NULL when out of memory. */
struct tb_invadmin *tb_invadmin_new(const char *path);
void tb_invadmin_free(struct tb_invadmin *ia);

/* Set once by app.c before the HTTP edge starts. */
void tb_invadmin_set_reload(struct tb_invadmin *ia, tb_invadmin_reload_fn fn, void *cls);

/* Reload through the callback, one at a time; who ("SIGHUP", a token's
 * name) is remembered with the result.  0, or the callback's error. */
int tb_invadmin_reload(struct tb_invadmin *ia, const char *who, struct tb_error *err);

/* The file name the loaded inventory came from (valid while ia lives). */
const char *tb_invadmin_path(const struct tb_invadmin *ia);

/* {"file", "loaded_at", "last_reload": null | {"at", "by", "ok", "error"}}:
 * a new reference, NULL when out of memory. */
json_t *tb_invadmin_json(struct tb_invadmin *ia);

/* A --check-config message "NAME:LINE:COL: what" split: line and column
 * into *line, *col (0 when the message has none).  No I/O. */
void tb_invadmin_where(const char *name, const char *message, long *line, long *col);

#endif /* TB_INVADMIN_H */
