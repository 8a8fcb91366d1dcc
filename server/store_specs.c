/* store_specs.c - the spec library's rows: see store_specs.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "store_specs.h"
#include "timeutil.h"

int tb_store_spec_insert(struct tb_store *st, const char *name, const char *spec, const char *author, int64_t *version,
			 struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	/* one statement: the number is taken, used and given back under the
	 * same lock */
	if ((rc = st_prep(st,
			  "INSERT INTO spec_versions (name, version, spec, author, created_at)"
			  " SELECT ?1, COALESCE(MAX(version), 0) + 1, ?2, ?3, ?4 FROM spec_versions WHERE name = ?1"
			  " RETURNING version",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	st_bind_text(s, 2, spec);
	st_bind_text(s, 3, author);
	sqlite3_bind_int64(s, 4, tb_now());
	if (sqlite3_step(s) == SQLITE_ROW) {
		*version = sqlite3_column_int64(s, 0);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : st_db_fail(st, err, "recording a spec version");
	} else {
		rc = st_db_fail(st, err, "recording a spec version");
	}
	st_finish(st, s);
	return rc;
}

static void row_of(sqlite3_stmt *s, struct tb_spec_row *r, int with_count)
{
	r->name = st_col_text(s, 0);
	r->version = sqlite3_column_int64(s, 1);
	r->spec = st_col_text(s, 2);
	r->author = st_col_text(s, 3);
	r->created_at = sqlite3_column_int64(s, 4);
	r->nversions = with_count ? sqlite3_column_int64(s, 5) : 0;
}

/* Step s calling fn per row; *n the rows seen (may be NULL). */
static int each_row(struct tb_store *st, sqlite3_stmt *s, int with_count, tb_spec_row_fn fn, void *cls, int *n,
		    struct tb_error *err)
{
	struct tb_spec_row r;
	int step, rows = 0, rc = 0;

	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		row_of(s, &r, with_count);
		fn(cls, &r);
		rows++;
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "reading specs");
	st_finish(st, s);
	if (n != NULL)
		*n = rows;
	return rc;
}

int tb_store_spec_each_latest(struct tb_store *st, tb_spec_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT v.name, v.version, v.spec, v.author, v.created_at, m.n FROM spec_versions v"
			  " JOIN (SELECT name, MAX(version) AS top, COUNT(*) AS n FROM spec_versions GROUP BY name) m"
			  " ON v.name = m.name AND v.version = m.top ORDER BY v.name",
			  &s, err)) != 0)
		return rc;
	return each_row(st, s, 1, fn, cls, NULL, err);
}

int tb_store_spec_each_version(struct tb_store *st, const char *name, tb_spec_row_fn fn, void *cls,
			       struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT name, version, spec, author, created_at FROM spec_versions WHERE name = ?"
			  " ORDER BY version",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	return each_row(st, s, 0, fn, cls, NULL, err);
}

int tb_store_spec_get(struct tb_store *st, const char *name, int64_t version, tb_spec_row_fn fn, void *cls,
		      struct tb_error *err)
{
	sqlite3_stmt *s;
	int n = 0, rc;

	if ((rc = st_prep(st,
			  "SELECT name, version, spec, author, created_at FROM spec_versions WHERE name = ?1"
			  " AND (version = ?2 OR (?2 = 0 AND version = (SELECT MAX(version) FROM spec_versions"
			  " WHERE name = ?1)))",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	sqlite3_bind_int64(s, 2, version);
	if ((rc = each_row(st, s, 0, fn, cls, &n, err)) != 0)
		return rc;
	if (n == 0)
		return version == 0 ? tb_fail(err, TB_ERR_NOT_FOUND, "name", "no spec named %.64s", name)
				    : tb_fail(err, TB_ERR_NOT_FOUND, "version", "spec %.64s has no version %lld", name,
					      (long long)version);
	return 0;
}

/* ---- schedules ---- */

int tb_store_schedule_put(struct tb_store *st, const struct tb_schedule_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO spec_schedules (name, cron, baseline, metric, max_drop, author,"
			  " next_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, r->name);
	st_bind_text(s, 2, r->cron);
	st_bind_text(s, 3, r->baseline);
	st_bind_text(s, 4, r->metric);
	sqlite3_bind_double(s, 5, r->max_drop);
	st_bind_text(s, 6, r->author);
	sqlite3_bind_int64(s, 7, r->next_at);
	sqlite3_bind_int64(s, 8, tb_now());
	return st_finish_write(st, s, err);
}

int tb_store_schedule_delete(struct tb_store *st, const char *name, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "DELETE FROM spec_schedules WHERE name = ?", &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = st_db_fail(st, err, "deleting a schedule");
	else if (sqlite3_changes(st->db) == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "name", "spec %.64s has no schedule", name);
	st_finish(st, s);
	return rc;
}

int tb_store_schedule_each(struct tb_store *st, const char *name, int64_t due_by, tb_schedule_row_fn fn, void *cls,
			   struct tb_error *err)
{
	struct tb_schedule_row r;
	sqlite3_stmt *s;
	int step, rc;

	if ((rc = st_prep(
		     st,
		     "SELECT name, cron, baseline, metric, max_drop, author, next_at, created_at, failed_at, failure"
		     " FROM spec_schedules WHERE (?1 IS NULL OR name = ?1) AND (?2 = 0 OR next_at <= ?2) ORDER BY name",
		     &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	sqlite3_bind_int64(s, 2, due_by);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		r = (struct tb_schedule_row){st_col_text(s, 0),           st_col_text(s, 1),
					     st_col_text(s, 2),           st_col_text(s, 3),
					     sqlite3_column_double(s, 4), st_col_text(s, 5),
					     sqlite3_column_int64(s, 6),  sqlite3_column_int64(s, 7),
					     sqlite3_column_int64(s, 8),  st_col_text(s, 9)};
		fn(cls, &r);
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "reading schedules");
	st_finish(st, s);
	return rc;
}

int tb_store_schedule_set_next(struct tb_store *st, const char *name, int64_t next_at, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE spec_schedules SET next_at = ? WHERE name = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, next_at);
	st_bind_text(s, 2, name);
	return st_finish_write(st, s, err);
}

int tb_store_schedule_set_failure(struct tb_store *st, const char *name, int64_t at, const char *why,
				  struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE spec_schedules SET failed_at = ?, failure = ? WHERE name = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, why != NULL ? at : 0);
	st_bind_text(s, 2, why);
	st_bind_text(s, 3, name);
	return st_finish_write(st, s, err);
}

/* ---- gates ---- */

int tb_store_gate_insert(struct tb_store *st, int64_t matrix_id, const char *spec, int64_t version, int64_t baseline_id,
			 struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT INTO matrix_gates (matrix_id, spec, version, baseline_id) VALUES (?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	st_bind_text(s, 2, spec);
	sqlite3_bind_int64(s, 3, version);
	if (baseline_id > 0)
		sqlite3_bind_int64(s, 4, baseline_id);
	else
		sqlite3_bind_null(s, 4);
	return st_finish_write(st, s, err);
}

int tb_store_gate_set(struct tb_store *st, int64_t matrix_id, int64_t baseline_id, const char *verdict,
		      const char *detail, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(
		     st, "UPDATE matrix_gates SET baseline_id = ?, verdict = ?, detail = ?, at = ? WHERE matrix_id = ?",
		     &s, err)) != 0)
		return rc;
	if (baseline_id > 0)
		sqlite3_bind_int64(s, 1, baseline_id);
	else
		sqlite3_bind_null(s, 1);
	st_bind_text(s, 2, verdict);
	st_bind_text(s, 3, detail);
	sqlite3_bind_int64(s, 4, tb_now());
	sqlite3_bind_int64(s, 5, matrix_id);
	return st_finish_write(st, s, err);
}

#define GATE_COLS                                                                                                    \
	"SELECT g.matrix_id, g.spec, g.version, COALESCE(g.baseline_id, 0), g.verdict, g.detail, COALESCE(g.at, 0)," \
	" m.state FROM matrix_gates g JOIN matrices m ON m.id = g.matrix_id"

static int gate_rows(struct tb_store *st, sqlite3_stmt *s, tb_gate_row_fn fn, void *cls, struct tb_error *err)
{
	struct tb_gate_row r;
	int step, rc = 0;

	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		r = (struct tb_gate_row){sqlite3_column_int64(s, 0), st_col_text(s, 1),
					 sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
					 st_col_text_or_null(s, 4),  st_col_text_or_null(s, 5),
					 sqlite3_column_int64(s, 6), st_col_text(s, 7)};
		fn(cls, &r);
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "reading gates");
	st_finish(st, s);
	return rc;
}

int tb_store_gate_each_ended(struct tb_store *st, tb_gate_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  GATE_COLS " WHERE g.verdict IS NULL AND m.state NOT IN ('queued', 'running')"
				    " ORDER BY g.matrix_id",
			  &s, err)) != 0)
		return rc;
	return gate_rows(st, s, fn, cls, err);
}

int tb_store_gate_get(struct tb_store *st, int64_t matrix_id, tb_gate_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, GATE_COLS " WHERE g.matrix_id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	return gate_rows(st, s, fn, cls, err);
}

int tb_store_gate_each_recent(struct tb_store *st, const char *spec, int limit, tb_gate_row_fn fn, void *cls,
			      struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, GATE_COLS " WHERE g.spec = ? ORDER BY g.matrix_id DESC LIMIT ?", &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, spec);
	sqlite3_bind_int(s, 2, limit);
	return gate_rows(st, s, fn, cls, err);
}

int tb_store_gate_latest_passing(struct tb_store *st, const char *spec, int64_t before, int64_t *id,
				 struct tb_error *err)
{
	sqlite3_stmt *s;
	int step, rc;

	if ((rc = st_prep(st,
			  "SELECT m.id FROM matrices m LEFT JOIN matrix_gates g ON g.matrix_id = m.id"
			  " WHERE m.name = ? AND m.id < ? AND m.state = 'succeeded'"
			  " AND (g.verdict IS NULL OR g.verdict IN ('pass', 'no_baseline'))"
			  " ORDER BY m.id DESC LIMIT 1",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, spec);
	sqlite3_bind_int64(s, 2, before);
	*id = 0;
	if ((step = sqlite3_step(s)) == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	else if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "finding the latest passing matrix");
	st_finish(st, s);
	return rc;
}
