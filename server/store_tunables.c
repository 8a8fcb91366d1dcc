/* store_tunables.c - the tunables journal's rows: see store_tunables.h. */
#include "store_internal.h"
#include "store_tunables.h"

#define COLS                                                                                             \
	"id, matrix_id, seq, host, os, family, kind, name, original, applied, state, error, created_at," \
	" COALESCE(restored_at, 0)"

int tb_store_tunable_insert(struct tb_store *st, const struct tb_tunable_row *r, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(
		     st,
		     "INSERT INTO tunable_journal (matrix_id, seq, host, os, family, kind, name, original, applied,"
		     " state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'applying', ?)",
		     &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->matrix_id);
	sqlite3_bind_int(s, 2, r->seq);
	st_bind_text(s, 3, r->host);
	st_bind_text(s, 4, r->os);
	st_bind_text(s, 5, r->family);
	st_bind_text(s, 6, r->kind);
	st_bind_text(s, 7, r->name);
	st_bind_text(s, 8, r->original);
	st_bind_text(s, 9, r->applied);
	sqlite3_bind_int64(s, 10, r->created_at);
	return st_finish_insert(st, s, "the tunables journal", id, err);
}

int tb_store_tunable_state(struct tb_store *st, int64_t id, const char *state, const char *error, int64_t at,
			   struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE tunable_journal SET state = ?, error = ?,"
			  " restored_at = CASE WHEN ? = 'restored' THEN ? ELSE restored_at END WHERE id = ?",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, state);
	st_bind_text(s, 2, error);
	st_bind_text(s, 3, state);
	sqlite3_bind_int64(s, 4, at);
	sqlite3_bind_int64(s, 5, id);
	return st_finish_write(st, s, err);
}

static int each(struct tb_store *st, sqlite3_stmt *s, void (*fn)(void *cls, const struct tb_tunable_row *r), void *cls,
		struct tb_error *err)
{
	int step, rc = 0;

	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct tb_tunable_row r = {
			.id = sqlite3_column_int64(s, 0),
			.matrix_id = sqlite3_column_int64(s, 1),
			.seq = sqlite3_column_int(s, 2),
			.host = st_col_text(s, 3),
			.os = st_col_text(s, 4),
			.family = st_col_text(s, 5),
			.kind = st_col_text(s, 6),
			.name = st_col_text(s, 7),
			.original = st_col_text(s, 8),
			.applied = st_col_text(s, 9),
			.state = st_col_text(s, 10),
			.error = st_col_text_or_null(s, 11),
			.created_at = sqlite3_column_int64(s, 12),
			.restored_at = sqlite3_column_int64(s, 13),
		};

		fn(cls, &r);
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "reading the tunables journal");
	st_finish(st, s);
	return rc;
}

int tb_store_tunable_open(struct tb_store *st, const char *host, void (*fn)(void *cls, const struct tb_tunable_row *r),
			  void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " COLS " FROM tunable_journal WHERE state <> 'restored' AND (? IS NULL OR host = ?)"
			  " ORDER BY id DESC",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, host);
	st_bind_text(s, 2, host);
	return each(st, s, fn, cls, err);
}

int tb_store_tunable_recent(struct tb_store *st, int limit, void (*fn)(void *cls, const struct tb_tunable_row *r),
			    void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT " COLS " FROM tunable_journal ORDER BY id DESC LIMIT ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int(s, 1, limit);
	return each(st, s, fn, cls, err);
}
