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
	int64_t rowid;
	int rc;

	/* one statement: the number is taken and used under the same lock */
	if ((rc = st_prep(st,
			  "INSERT INTO spec_versions (name, version, spec, author, created_at)"
			  " SELECT ?1, COALESCE(MAX(version), 0) + 1, ?2, ?3, ?4 FROM spec_versions WHERE name = ?1",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	st_bind_text(s, 2, spec);
	st_bind_text(s, 3, author);
	sqlite3_bind_int64(s, 4, tb_now());
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "recording a spec version");
		st_finish(st, s);
		return rc;
	}
	rowid = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	if ((rc = st_prep(st, "SELECT version FROM spec_versions WHERE rowid = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, rowid);
	if (sqlite3_step(s) == SQLITE_ROW)
		*version = sqlite3_column_int64(s, 0);
	else
		rc = st_db_fail(st, err, "reading a spec version back");
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
