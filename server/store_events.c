/* store_events.c - kept events, for resuming a stream across restarts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* ---- events ---- */

static const char insert_sql[] = "INSERT INTO events (id, at, type, host, matrix_id, data) VALUES (?, ?, ?, ?, ?, ?)";

static void bind_event(sqlite3_stmt *s, const struct tb_event_row *r)
{
	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->at);
	st_bind_text(s, 3, r->type);
	st_bind_text(s, 4, r->host);
	if (r->matrix != 0)
		sqlite3_bind_int64(s, 5, r->matrix);
	else
		sqlite3_bind_null(s, 5);
	st_bind_text(s, 6, r->json);
}

int tb_store_event_insert(struct tb_store *st, const struct tb_event_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, insert_sql, &s, err)) != 0)
		return rc;
	bind_event(s, r);
	return st_finish_write(st, s, err);
}

int tb_store_event_insert_many(struct tb_store *st, const struct tb_event_row *rows, size_t n, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (n == 0)
		return 0;
	if ((rc = st_prep(st, insert_sql, &s, err)) != 0)
		return rc;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "starting to store events");
		st_finish(st, s);
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		bind_event(s, &rows[i]);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = st_db_fail(st, err, "storing events");
	}
	sqlite3_reset(s);
	if (rc == 0 && sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = st_db_fail(st, err, "committing events");
	if (rc != 0)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st_finish(st, s);
	return rc;
}

int tb_store_event_last(struct tb_store *st, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT coalesce(max(id), 0) FROM events", &s, err)) != 0)
		return rc;
	*id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	st_finish(st, s);
	return 0;
}

/* Each row of s (id, at, type, host, matrix, data) to fn; finishes s. */
static void each_row(struct tb_store *st, sqlite3_stmt *s, tb_event_fn fn, void *cls)
{
	struct tb_event_row r;

	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.at = sqlite3_column_int64(s, 1);
		r.type = st_col_text(s, 2);
		r.host = st_col_text_or_null(s, 3);
		r.matrix = sqlite3_column_int64(s, 4);
		r.json = st_col_text(s, 5);
		fn(cls, &r);
	}
	st_finish(st, s);
}

int tb_store_event_each(struct tb_store *st, int64_t after, int limit, tb_event_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, at, type, host, coalesce(matrix_id, 0), data FROM events"
			  " WHERE id > ? ORDER BY id LIMIT ?",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, after);
	sqlite3_bind_int(s, 2, limit);
	each_row(st, s, fn, cls);
	return 0;
}

int tb_store_run_interval_events(struct tb_store *st, int64_t matrix_id, int64_t run_id, int64_t since, tb_event_fn fn,
				 void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, at, type, host, coalesce(matrix_id, 0), data FROM events"
			  " WHERE type = 'run.interval' AND matrix_id = ? AND at >= ?"
			  " AND json_extract(data, '$.data.run') = ? ORDER BY id",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int64(s, 3, run_id);
	each_row(st, s, fn, cls);
	return 0;
}

/* Through events_by_matrix (matrix_id, type): the run's matrix's events of
 * type, then the run's among them; not a scan of every event. */
int tb_store_run_events(struct tb_store *st, int64_t run_id, const char *type, tb_event_fn fn, void *cls,
			struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, at, type, host, coalesce(matrix_id, 0), data FROM events"
			  " WHERE matrix_id = (SELECT matrix_id FROM runs WHERE id = ?1) AND type = ?2"
			  " AND json_extract(data, '$.data.run') = ?1 ORDER BY id",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_text(s, 2, type, -1, SQLITE_STATIC);
	each_row(st, s, fn, cls);
	return 0;
}

int tb_store_event_prune(struct tb_store *st, int64_t below, int64_t before, int64_t *deleted)
{
	sqlite3_stmt *s;
	int rc;

	if (deleted != NULL)
		*deleted = 0;
	/* by count: every id below; by age: of the oldest 1,000 (by id, the
	 * primary key: no scan of the table), those older than before */
	if ((rc = st_prep(st,
			  "DELETE FROM events WHERE id < ?1 OR id IN (SELECT id FROM (SELECT id, at FROM events"
			  " ORDER BY id LIMIT 1000) WHERE at < ?2)",
			  &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, below);
	sqlite3_bind_int64(s, 2, before);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = st_db_fail(st, NULL, "pruning the events");
	else if (deleted != NULL)
		*deleted = sqlite3_changes(st->db);
	st_finish(st, s);
	return rc;
}
