/*
 * store_internal.h - what the store's files share (store.c opens and
 * migrates; store_auth.c, store_hosts.c, store_events.c, store_actions.c hold
 * the queries of one concern each).  Only these files include sqlite3.h.
 *
 * Locking: st_prep takes the store's mutex and st_finish / st_finish_write
 * release it, so a statement is prepared, stepped and finalized under it.
 */
#ifndef TB_STORE_INTERNAL_H
#define TB_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>

#include "store.h"

#define ST_CACHE 128

struct tb_store {
	sqlite3 *db;
	pthread_mutex_t lock;
	int version;
	/* prepared statements kept across calls (the SQL texts are literals) */
	struct {
		const char *sql;
		sqlite3_stmt *stmt;
	} cache[ST_CACHE];
	size_t ncache;
};

/* A database error as a sentence, with SQLite's reason (lock held or not). */
int st_db_fail(struct tb_store *st, struct tb_error *err, const char *what);
/* Prepare sql under the lock (reusing the statement prepared for the same
 * text before: parsing SQL was a sixth of a request's time); on failure the
 * lock is released. */
int st_prep(struct tb_store *st, const char *sql, sqlite3_stmt **s, struct tb_error *err);
/* Step a write statement to completion, reset it, unlock. */
int st_finish_write(struct tb_store *st, sqlite3_stmt *s, struct tb_error *err);
/* Step an INSERT to completion, the new row's id into *id (NULL: not
 * wanted), reset, unlock; what names it in an error. */
int st_finish_insert(struct tb_store *st, sqlite3_stmt *s, const char *what, int64_t *id, struct tb_error *err);
/* Reset (or finalize, if not kept) and unlock. */
void st_finish(struct tb_store *st, sqlite3_stmt *s);
/* A text column ("" for NULL), or NULL for NULL; valid until the next step. */
const char *st_col_text(sqlite3_stmt *s, int i);
const char *st_col_text_or_null(sqlite3_stmt *s, int i);
/* Bind text (copied) or NULL. */
void st_bind_text(sqlite3_stmt *s, int i, const char *t);

#endif /* TB_STORE_INTERNAL_H */
