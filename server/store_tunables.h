/*
 * store_tunables.h - the tunables journal (tunables.c owns its meaning; this
 * is its SQL): one row per tunable changed on a host, written with the value
 * found BEFORE the change is made, so that nothing changed on a host is
 * forgotten across a crash.  state: "applying" (recorded, being set),
 * "applied" (set and read back), "restored" (the original is back).  A row
 * not restored is restored when its matrix moves on, ends, or at start-up.
 * Blocking (SQLite), thread-safe as the store.  Strings of a row given to a
 * callback are valid during the call only.
 */
#ifndef TB_STORE_TUNABLES_H
#define TB_STORE_TUNABLES_H

#include <stdint.h>

#include "error.h"
#include "store.h"

struct tb_tunable_row {
	int64_t id;
	int64_t matrix_id;
	int seq;            /* the run it was applied for */
	const char *host;   /* machine name */
	const char *os;     /* the persona it was changed in ("ubuntu", "freebsd") */
	const char *family; /* "linux" or "freebsd": which commands set it */
	const char *kind;   /* "sysctl" or "mtu" */
	const char *name;   /* the sysctl's name, or the interface's */
	const char *original, *applied, *state;
	const char *error; /* the last failure to restore, or NULL */
	int64_t created_at, restored_at;
};

/* Insert r (state "applying"); *id gets its id. */
int tb_store_tunable_insert(struct tb_store *st, const struct tb_tunable_row *r, int64_t *id, struct tb_error *err);
/* Set the state of row id ("applied", "restored"; restored_at set then) and its error (NULL clears). */
int tb_store_tunable_state(struct tb_store *st, int64_t id, const char *state, const char *error, int64_t at,
			   struct tb_error *err);
/* fn for every row not restored, newest first; host NULL: every host, else its rows only. */
int tb_store_tunable_open(struct tb_store *st, const char *host, void (*fn)(void *cls, const struct tb_tunable_row *r),
			  void *cls, struct tb_error *err);
/* fn for the last limit rows of every state, newest first. */
int tb_store_tunable_recent(struct tb_store *st, int limit, void (*fn)(void *cls, const struct tb_tunable_row *r),
			    void *cls, struct tb_error *err);

#endif /* TB_STORE_TUNABLES_H */
