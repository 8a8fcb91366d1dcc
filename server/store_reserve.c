/* store_reserve.c - the reservations' rows: see store_reserve.h. */
#include "store_internal.h"
#include "store_reserve.h"

int tb_store_reserve_put(struct tb_store *st, const struct tb_reserve_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO reservations (id, seq, hosts, owner, note, granted, asked_at,"
			  " granted_at, until, length_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->seq);
	st_bind_text(s, 3, r->hosts);
	st_bind_text(s, 4, r->owner);
	st_bind_text(s, 5, r->note);
	sqlite3_bind_int(s, 6, r->granted);
	sqlite3_bind_int64(s, 7, r->asked_at);
	sqlite3_bind_int64(s, 8, r->granted_at);
	sqlite3_bind_int64(s, 9, r->until);
	sqlite3_bind_int64(s, 10, r->length_s);
	return st_finish_write(st, s, err);
}

int tb_store_reserve_delete(struct tb_store *st, int64_t id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "DELETE FROM reservations WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	return st_finish_write(st, s, err);
}

int tb_store_reserve_each(struct tb_store *st, void (*fn)(void *cls, const struct tb_reserve_row *r), void *cls,
			  struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc, step;

	if ((rc = st_prep(st,
			  "SELECT id, seq, hosts, owner, note, granted, asked_at, granted_at, until, length_s"
			  " FROM reservations ORDER BY seq",
			  &s, err)) != 0)
		return rc;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct tb_reserve_row r = {
			.id = sqlite3_column_int64(s, 0),
			.seq = sqlite3_column_int64(s, 1),
			.hosts = st_col_text(s, 2),
			.owner = st_col_text(s, 3),
			.note = st_col_text(s, 4),
			.granted = sqlite3_column_int(s, 5),
			.asked_at = sqlite3_column_int64(s, 6),
			.granted_at = sqlite3_column_int64(s, 7),
			.until = sqlite3_column_int64(s, 8),
			.length_s = sqlite3_column_int64(s, 9),
		};

		fn(cls, &r);
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "reading the reservations");
	st_finish(st, s);
	return rc;
}
