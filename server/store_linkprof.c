/* store_linkprof.c - the link profiles journal's rows: see store.h. */
#include "store_internal.h"

int tb_store_linkprof_open(struct tb_store *st, int64_t matrix_id, const char *router, int pipe, int64_t at,
			   int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO linkprof_journal (matrix_id, router, pipe, state, created_at)"
			  " VALUES (?, ?, ?, 'open', ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	st_bind_text(s, 2, router);
	sqlite3_bind_int(s, 3, pipe);
	sqlite3_bind_int64(s, 4, at);
	return st_finish_insert(st, s, "the link profiles journal", id, err);
}

int tb_store_linkprof_done(struct tb_store *st, int64_t id, const char *error, int64_t at, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE linkprof_journal SET error = ?1,"
			  " state = CASE WHEN ?1 IS NULL THEN 'removed' ELSE state END,"
			  " removed_at = CASE WHEN ?1 IS NULL THEN ?2 ELSE removed_at END WHERE id = ?3",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, error);
	sqlite3_bind_int64(s, 2, at);
	sqlite3_bind_int64(s, 3, id);
	return st_finish_write(st, s, err);
}

int tb_store_linkprof_each_open(struct tb_store *st,
				void (*fn)(void *cls, int64_t id, int64_t matrix_id, const char *router, int pipe),
				void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int step, rc;

	if ((rc = st_prep(st,
			  "SELECT id, matrix_id, router, pipe FROM linkprof_journal WHERE state = 'open' ORDER BY id",
			  &s, err)) != 0)
		return rc;
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		fn(cls, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), st_col_text(s, 2),
		   sqlite3_column_int(s, 3));
	rc = step != SQLITE_DONE ? st_db_fail(st, err, "reading the link profiles journal") : 0;
	st_finish(st, s);
	return rc;
}
