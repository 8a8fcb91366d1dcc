/* store_snapshots.c - what each host was during a matrix (host metadata) and
 * the boots the matrix did to put it there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

int tb_store_snapshot_put(struct tb_store *st, const struct tb_snapshot_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO host_snapshots (matrix_id, host, os, taken_at, interface,"
			  " command, data, raw) VALUES (?,?,?,?,?,?,?,?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->matrix_id);
	st_bind_text(s, 2, r->host);
	st_bind_text(s, 3, r->os);
	sqlite3_bind_int64(s, 4, r->taken_at);
	st_bind_text(s, 5, r->interface);
	st_bind_text(s, 6, r->command);
	st_bind_text(s, 7, r->data);
	sqlite3_bind_blob64(s, 8, r->raw != NULL ? r->raw : "", r->raw != NULL ? r->raw_len : 0, SQLITE_TRANSIENT);
	return st_finish_write(st, s, err);
}

int tb_store_snapshot_has(struct tb_store *st, int64_t matrix_id, const char *host, const char *os, int *has,
			  struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*has = 0;
	if ((rc = st_prep(st, "SELECT 1 FROM host_snapshots WHERE matrix_id = ? AND host = ? AND os = ?", &s, err)) !=
	    0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	st_bind_text(s, 2, host);
	st_bind_text(s, 3, os);
	rc = sqlite3_step(s);
	*has = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = st_db_fail(st, err, "reading the host snapshots");
		st_finish(st, s);
		return rc;
	}
	st_finish(st, s);
	return 0;
}

int tb_store_snapshot_each(struct tb_store *st, int64_t matrix_id, int with_raw, tb_snapshot_fn fn, void *cls,
			   struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_snapshot_row r;
	int rc;

	if ((rc = st_prep(st,
			  with_raw ? "SELECT host, os, taken_at, interface, command, data, raw FROM host_snapshots"
				     " WHERE matrix_id = ? ORDER BY host, os"
				   : "SELECT host, os, taken_at, interface, command, data, NULL FROM host_snapshots"
				     " WHERE matrix_id = ? ORDER BY host, os",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&r, 0, sizeof(r));
		r.matrix_id = matrix_id;
		r.host = st_col_text(s, 0);
		r.os = st_col_text(s, 1);
		r.taken_at = sqlite3_column_int64(s, 2);
		r.interface = st_col_text_or_null(s, 3);
		r.command = st_col_text(s, 4);
		r.data = st_col_text(s, 5);
		r.raw = (const char *)sqlite3_column_blob(s, 6);
		r.raw_len = (size_t)sqlite3_column_bytes(s, 6);
		fn(cls, &r);
	}
	if (rc != SQLITE_DONE) {
		rc = st_db_fail(st, err, "reading the host snapshots");
		st_finish(st, s);
		return rc;
	}
	st_finish(st, s);
	return 0;
}

/* ---- boots ---- */

int tb_store_matrix_boot_add(struct tb_store *st, const struct tb_matrix_boot_row *r, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO matrix_boots (matrix_id, host, from_os, to_os, action_id, started_ms, state,"
			  " before_seq, path) VALUES (?,?,?,?,NULL,?,'running',?,?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->matrix_id);
	st_bind_text(s, 2, r->host);
	st_bind_text(s, 3, r->from_os);
	st_bind_text(s, 4, r->to_os);
	sqlite3_bind_int64(s, 5, r->started_ms);
	sqlite3_bind_int(s, 6, r->before_seq);
	st_bind_text(s, 7, r->path);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "recording a boot");
		st_finish(st, s);
		return rc;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	return 0;
}

int tb_store_matrix_boot_finish(struct tb_store *st, int64_t id, int64_t action_id, const char *state,
				const char *error, int64_t finished_ms, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE matrix_boots SET action_id = ?, state = ?, error = ?, finished_ms = ? WHERE id = ?",
			  &s, err)) != 0)
		return rc;
	if (action_id > 0)
		sqlite3_bind_int64(s, 1, action_id);
	else
		sqlite3_bind_null(s, 1);
	st_bind_text(s, 2, state);
	st_bind_text(s, 3, error);
	sqlite3_bind_int64(s, 4, finished_ms);
	sqlite3_bind_int64(s, 5, id);
	return st_finish_write(st, s, err);
}

int tb_store_matrix_boot_each(struct tb_store *st, int64_t matrix_id, tb_matrix_boot_fn fn, void *cls,
			      struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_matrix_boot_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, host, from_os, to_os, coalesce(action_id, 0), started_ms,"
			  " coalesce(finished_ms, 0), state, error, before_seq, path FROM matrix_boots"
			  " WHERE matrix_id = ?"
			  " ORDER BY id",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.matrix_id = matrix_id;
		r.host = st_col_text(s, 1);
		r.from_os = st_col_text_or_null(s, 2);
		r.to_os = st_col_text(s, 3);
		r.action_id = sqlite3_column_int64(s, 4);
		r.started_ms = sqlite3_column_int64(s, 5);
		r.finished_ms = sqlite3_column_int64(s, 6);
		r.state = st_col_text(s, 7);
		r.error = st_col_text_or_null(s, 8);
		r.before_seq = sqlite3_column_int(s, 9);
		r.path = st_col_text_or_null(s, 10);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}
