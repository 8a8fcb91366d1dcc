/* store_actions.c - actions (power, boot) and their steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* ---- actions ---- */

int tb_store_action_insert(struct tb_store *st, const struct tb_action_row *r, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT INTO actions (host, kind, params, state, actor, created_at) VALUES (?,?,?,?,?,?)",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, r->host);
	st_bind_text(s, 2, r->kind);
	st_bind_text(s, 3, r->params);
	st_bind_text(s, 4, r->state);
	st_bind_text(s, 5, r->actor);
	sqlite3_bind_double(s, 6, (double)r->created_ms / 1000.0);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "recording an action");
		st_finish(st, s);
		return rc;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	return 0;
}

int tb_store_action_update(struct tb_store *st, int64_t id, const char *state, int64_t started_ms, int64_t finished_ms,
			   const char *error_code, const char *error_message, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE actions SET state = ?, started_at = coalesce(?, started_at),"
			  " finished_at = coalesce(?, finished_at), error_code = coalesce(?, error_code),"
			  " error_message = coalesce(?, error_message) WHERE id = ?",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, state);
	if (started_ms != 0)
		sqlite3_bind_double(s, 2, (double)started_ms / 1000.0);
	else
		sqlite3_bind_null(s, 2);
	if (finished_ms != 0)
		sqlite3_bind_double(s, 3, (double)finished_ms / 1000.0);
	else
		sqlite3_bind_null(s, 3);
	st_bind_text(s, 4, error_code);
	st_bind_text(s, 5, error_message);
	sqlite3_bind_int64(s, 6, id);
	return st_finish_write(st, s, err);
}

/* the times are seconds with the milliseconds as a fraction (store.h):
 * read back as ms (a row from before has whole seconds) */
#define ACTION_COLS                                                                        \
	"id, host, kind, params, state, actor, CAST(round(created_at * 1000) AS INTEGER)," \
	" CAST(round(coalesce(started_at, 0) * 1000) AS INTEGER),"                         \
	" CAST(round(coalesce(finished_at, 0) * 1000) AS INTEGER), error_code, error_message"

static void action_row(sqlite3_stmt *s, struct tb_action_row *r)
{
	r->id = sqlite3_column_int64(s, 0);
	r->host = st_col_text(s, 1);
	r->kind = st_col_text(s, 2);
	r->params = st_col_text(s, 3);
	r->state = st_col_text(s, 4);
	r->actor = st_col_text(s, 5);
	r->created_ms = sqlite3_column_int64(s, 6);
	r->started_ms = sqlite3_column_int64(s, 7);
	r->finished_ms = sqlite3_column_int64(s, 8);
	r->error_code = st_col_text_or_null(s, 9);
	r->error_message = st_col_text_or_null(s, 10);
}

int tb_store_action_get(struct tb_store *st, int64_t id, tb_action_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_action_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT " ACTION_COLS " FROM actions WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		action_row(s, &r);
		fn(cls, &r);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no action with id %lld", (long long)id);
	}
	st_finish(st, s);
	return rc;
}

int tb_store_action_list(struct tb_store *st, const char *host, int limit, tb_action_row_fn fn, void *cls,
			 struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_action_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " ACTION_COLS " FROM actions WHERE (?1 IS NULL OR host = ?1)"
			  " ORDER BY id DESC LIMIT ?2",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, host);
	sqlite3_bind_int(s, 2, limit);
	while (sqlite3_step(s) == SQLITE_ROW) {
		action_row(s, &r);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_action_interrupt(struct tb_store *st, const char *reason, int64_t now_ms, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE actions SET state = 'failed', finished_at = ?, error_code = 'interrupted',"
			  " error_message = ? WHERE state IN ('queued', 'running')",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_double(s, 1, (double)now_ms / 1000.0);
	st_bind_text(s, 2, reason);
	return st_finish_write(st, s, err);
}

int tb_store_step_insert(struct tb_store *st, const struct tb_step_row *r, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO action_steps (action_id, at, what, command, exit_status, output)"
			  " VALUES (?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->action_id);
	sqlite3_bind_int64(s, 2, r->at_ms);
	st_bind_text(s, 3, r->what);
	st_bind_text(s, 4, r->command);
	if (r->exit_status >= 0)
		sqlite3_bind_int(s, 5, r->exit_status);
	else
		sqlite3_bind_null(s, 5);
	st_bind_text(s, 6, r->output);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "recording a step");
		st_finish(st, s);
		return rc;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	return 0;
}

int tb_store_step_each(struct tb_store *st, int64_t action_id, tb_step_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_step_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, action_id, at, what, command, coalesce(exit_status, -1), output"
			  " FROM action_steps WHERE action_id = ? ORDER BY id",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, action_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.action_id = sqlite3_column_int64(s, 1);
		r.at_ms = sqlite3_column_int64(s, 2);
		r.what = st_col_text(s, 3);
		r.command = st_col_text_or_null(s, 4);
		r.exit_status = sqlite3_column_int(s, 5);
		r.output = st_col_text_or_null(s, 6);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_boot_times(struct tb_store *st, tb_boot_time_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	/* each succeeded boot: first step to last; the last ten per host */
	if ((rc = st_prep(st,
			  "SELECT host, avg(d), count(*) FROM (SELECT a.host AS host, max(s.at) - min(s.at) AS d,"
			  " row_number() OVER (PARTITION BY a.host ORDER BY a.id DESC) AS k FROM actions a"
			  " JOIN action_steps s ON s.action_id = a.id WHERE a.kind = 'boot' AND a.state = 'succeeded'"
			  " GROUP BY a.id) WHERE k <= 10 AND d > 0 GROUP BY host",
			  &s, err)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW)
		fn(cls, st_col_text(s, 0), (int64_t)sqlite3_column_double(s, 1), sqlite3_column_int(s, 2));
	st_finish(st, s);
	return 0;
}
