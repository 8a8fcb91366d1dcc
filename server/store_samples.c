/* store_samples.c - a run's samples in table run_samples: see store_samples.h. */
#include "store_samples.h"

#include "store_internal.h"

int tb_store_samples_add(struct tb_store *st, const struct tb_sample_row *rows, size_t n, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (n == 0)
		return 0;
	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO run_samples (run_id, host, side, n, at, sample)"
			  " VALUES (?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "starting to store samples");
		st_finish(st, s);
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		sqlite3_bind_int64(s, 1, rows[i].run_id);
		st_bind_text(s, 2, rows[i].host);
		st_bind_text(s, 3, rows[i].side);
		sqlite3_bind_int(s, 4, rows[i].n);
		sqlite3_bind_int64(s, 5, rows[i].at_ms);
		st_bind_text(s, 6, rows[i].json);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = st_db_fail(st, err, "storing samples");
	}
	sqlite3_reset(s);
	if (rc == 0 && sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = st_db_fail(st, err, "committing samples");
	if (rc != 0)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st_finish(st, s);
	return rc;
}

/* Each row of s (run_id, host, side, n, at, sample) to fn; finishes s. */
static void each_sample(struct tb_store *st, sqlite3_stmt *s, tb_sample_row_fn fn, void *cls)
{
	struct tb_sample_row r;

	while (sqlite3_step(s) == SQLITE_ROW) {
		r.run_id = sqlite3_column_int64(s, 0);
		r.host = st_col_text(s, 1);
		r.side = st_col_text(s, 2);
		r.n = sqlite3_column_int(s, 3);
		r.at_ms = sqlite3_column_int64(s, 4);
		r.json = st_col_text(s, 5);
		fn(cls, &r);
	}
	st_finish(st, s);
}

int tb_store_samples_of_run(struct tb_store *st, int64_t run_id, tb_sample_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT run_id, host, side, n, at, sample FROM run_samples WHERE run_id = ?"
			  " ORDER BY host, n",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, run_id);
	each_sample(st, s, fn, cls);
	return 0;
}

int tb_store_samples_of_matrix(struct tb_store *st, int64_t matrix_id, tb_sample_row_fn fn, void *cls,
			       struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT run_id, host, side, n, at, sample FROM run_samples"
			  " WHERE run_id IN (SELECT id FROM runs WHERE matrix_id = ?) ORDER BY run_id, host, n",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	each_sample(st, s, fn, cls);
	return 0;
}

int tb_store_samples_rtt_events(struct tb_store *st, int64_t matrix_id, tb_event_fn fn, void *cls, struct tb_error *err)
{
	struct tb_event_row r;
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, at, type, host, coalesce(matrix_id, 0), data FROM events"
			  " WHERE matrix_id = ? AND type = 'run.rtt' ORDER BY id",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
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
	return 0;
}
