/* store_hosts.c - host state as the prober last saw it, and GRUB's saved
 * default as last read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* ---- host state ---- */

int tb_store_host_state_put(struct tb_store *st, const struct tb_host_state_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO host_state (machine, reachability, os, since, checked_at,"
			  " error_code, error_message, presented_os, presented_fp) VALUES (?,?,?,?,?,?,?,?,?)",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, r->machine);
	st_bind_text(s, 2, r->reachability);
	st_bind_text(s, 3, r->os);
	sqlite3_bind_int64(s, 4, r->since);
	sqlite3_bind_int64(s, 5, r->checked_at);
	st_bind_text(s, 6, r->error_code);
	st_bind_text(s, 7, r->error_message);
	st_bind_text(s, 8, r->presented_os);
	st_bind_text(s, 9, r->presented_fp);
	return st_finish_write(st, s, err);
}

int tb_store_host_state_each(struct tb_store *st, tb_host_state_fn fn, void *cls)
{
	sqlite3_stmt *s;
	struct tb_host_state_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT machine, reachability, os, since, checked_at, error_code, error_message,"
			  " presented_os, presented_fp FROM host_state",
			  &s, NULL)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.machine = st_col_text(s, 0);
		r.reachability = st_col_text(s, 1);
		r.os = st_col_text_or_null(s, 2);
		r.since = sqlite3_column_int64(s, 3);
		r.checked_at = sqlite3_column_int64(s, 4);
		r.error_code = st_col_text_or_null(s, 5);
		r.error_message = st_col_text_or_null(s, 6);
		r.presented_os = st_col_text_or_null(s, 7);
		r.presented_fp = st_col_text_or_null(s, 8);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

/* ---- GRUB's saved default ---- */

int tb_store_grub_saved_put(struct tb_store *st, const char *machine, const char *entry, int64_t read_at,
			    struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT OR REPLACE INTO grub_saved (machine, entry, read_at) VALUES (?,?,?)", &s, err)) !=
	    0)
		return rc;
	st_bind_text(s, 1, machine);
	st_bind_text(s, 2, entry);
	sqlite3_bind_int64(s, 3, read_at);
	return st_finish_write(st, s, err);
}

int tb_store_grub_saved_each(struct tb_store *st, tb_grub_saved_fn fn, void *cls)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT machine, entry, read_at FROM grub_saved", &s, NULL)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW)
		fn(cls, st_col_text(s, 0), st_col_text(s, 1), sqlite3_column_int64(s, 2));
	st_finish(st, s);
	return 0;
}
