/* store_auth.c - tokens, sessions, the audit log and accepted host keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* ---- tokens ---- */

int tb_store_token_count(struct tb_store *st, int64_t *count, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT count(*) FROM tokens", &s, err)) != 0)
		return rc;
	*count = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	st_finish(st, s);
	return 0;
}

int tb_store_token_insert(struct tb_store *st, const char *name, const char *role, const uint8_t hash[TB_SHA256_LEN],
			  int64_t now, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT INTO tokens (name, role, hash, created_at) VALUES (?, ?, ?, ?)", &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	st_bind_text(s, 2, role);
	sqlite3_bind_blob(s, 3, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, now);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "creating a token");
		st_finish(st, s);
		return rc;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	return 0;
}

static void token_row(sqlite3_stmt *s, struct tb_token_row *r)
{
	const void *h = sqlite3_column_blob(s, 6);

	r->id = sqlite3_column_int64(s, 0);
	r->name = st_col_text(s, 1);
	r->role = st_col_text(s, 2);
	r->created_at = sqlite3_column_int64(s, 3);
	r->last_used_at = sqlite3_column_int64(s, 4);
	r->revoked = sqlite3_column_int(s, 5);
	memset(r->hash, 0, sizeof(r->hash));
	if (h != NULL && sqlite3_column_bytes(s, 6) == TB_SHA256_LEN)
		memcpy(r->hash, h, TB_SHA256_LEN);
}

#define TOKEN_COLS "id, name, role, created_at, last_used_at, revoked, hash"

int tb_store_token_get(struct tb_store *st, int64_t id, tb_token_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_token_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT " TOKEN_COLS " FROM tokens WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		token_row(s, &r);
		fn(cls, &r);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no token with id %lld", (long long)id);
	}
	st_finish(st, s);
	return rc;
}

int tb_store_token_list(struct tb_store *st, tb_token_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_token_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT " TOKEN_COLS " FROM tokens ORDER BY id", &s, err)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW) {
		token_row(s, &r);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_token_set_hash(struct tb_store *st, int64_t id, const uint8_t hash[TB_SHA256_LEN], struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE tokens SET hash = ? WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, id);
	return st_finish_write(st, s, err);
}

int tb_store_token_revoke(struct tb_store *st, int64_t id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE tokens SET revoked = 1 WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = st_db_fail(st, err, "revoking a token");
	else if (sqlite3_changes(st->db) == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no token with id %lld", (long long)id);
	st_finish(st, s);
	if (rc == 0 && (rc = st_prep(st, "DELETE FROM sessions WHERE token_id = ?", &s, err)) == 0) {
		sqlite3_bind_int64(s, 1, id);
		rc = st_finish_write(st, s, err);
	}
	return rc;
}

int tb_store_token_touch(struct tb_store *st, int64_t id, int64_t now)
{
	sqlite3_stmt *s;
	int rc;

	/* At most one write a minute per token: a busy CI token must not write per request. */
	if ((rc = st_prep(st, "UPDATE tokens SET last_used_at = ? WHERE id = ? AND last_used_at < ?", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int64(s, 2, id);
	sqlite3_bind_int64(s, 3, now - 60);
	return st_finish_write(st, s, NULL);
}

/* ---- sessions ---- */

int tb_store_session_insert(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], const struct tb_session_row *row,
			    struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO sessions (hash, token_id, csrf_hash, expires_at, created_at, remember,"
			  " last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, row->token_id);
	sqlite3_bind_blob(s, 3, row->csrf_hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, row->expires_at);
	sqlite3_bind_int64(s, 5, row->created_at);
	sqlite3_bind_int(s, 6, row->remember != 0);
	sqlite3_bind_int64(s, 7, row->created_at);
	return st_finish_write(st, s, err);
}

int tb_store_session_list(struct tb_store *st, int64_t token_id, int64_t now, tb_session_info_fn fn, void *cls,
			  struct tb_error *err)
{
	struct tb_session_info info;
	sqlite3_stmt *s;
	int rc, step;

	if ((rc = st_prep(
		     st,
		     "SELECT s.rowid, s.created_at, s.expires_at, s.remember, s.device, s.hash, s.token_id, t.name,"
		     " s.last_used_at, s.last_address FROM sessions s JOIN tokens t ON t.id = s.token_id"
		     " WHERE (?1 = 0 OR s.token_id = ?1) AND s.expires_at > ?2 AND t.revoked = 0"
		     " ORDER BY s.created_at, s.rowid",
		     &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, token_id);
	sqlite3_bind_int64(s, 2, now);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 5) != TB_SHA256_LEN)
			continue;
		info.id = sqlite3_column_int64(s, 0);
		info.created_at = sqlite3_column_int64(s, 1);
		info.expires_at = sqlite3_column_int64(s, 2);
		info.remember = sqlite3_column_int(s, 3) != 0;
		info.device = st_col_text_or_null(s, 4);
		info.hash = sqlite3_column_blob(s, 5);
		info.token_id = sqlite3_column_int64(s, 6);
		info.token_name = st_col_text(s, 7);
		info.last_used_at = sqlite3_column_int64(s, 8);
		info.last_address = st_col_text_or_null(s, 9);
		fn(cls, &info);
	}
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "listing sessions");
	st_finish(st, s);
	return rc;
}

int tb_store_session_find(struct tb_store *st, int64_t id, int64_t token_id, uint8_t hash[TB_SHA256_LEN],
			  int64_t *owner_id, char owner[64], struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT s.hash, s.token_id, t.name FROM sessions s JOIN tokens t ON t.id = s.token_id"
			  " WHERE s.rowid = ?1 AND (?2 = 0 OR s.token_id = ?2)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, token_id);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_bytes(s, 0) == TB_SHA256_LEN) {
		memcpy(hash, sqlite3_column_blob(s, 0), TB_SHA256_LEN);
		*owner_id = sqlite3_column_int64(s, 1);
		snprintf(owner, 64, "%s", st_col_text(s, 2));
	} else if (token_id == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no session with id %lld", (long long)id);
	else
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "you have no session with id %lld", (long long)id);
	st_finish(st, s);
	return rc;
}

int tb_store_session_set_client(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], const char *device,
				const char *address)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE sessions SET device = ?, last_address = ? WHERE hash = ?", &s, NULL)) != 0)
		return rc;
	st_bind_text(s, 1, device);
	st_bind_text(s, 2, address);
	sqlite3_bind_blob(s, 3, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	return st_finish_write(st, s, NULL);
}

int tb_store_session_touch(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], int64_t now, const char *address,
			   int64_t expires_at, int *written)
{
	sqlite3_stmt *s;
	int rc;

	*written = 0;
	/* the WHERE keeps it to one write a minute (racing requests write once)
	 * and never revives an expired session */
	if ((rc = st_prep(st,
			  "UPDATE sessions SET last_used_at = ?1, last_address = ?2,"
			  " expires_at = CASE WHEN ?3 > 0 THEN ?3 ELSE expires_at END"
			  " WHERE hash = ?4 AND last_used_at <= ?1 - 60 AND expires_at > ?1",
			  &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now);
	st_bind_text(s, 2, address);
	sqlite3_bind_int64(s, 3, expires_at);
	sqlite3_bind_blob(s, 4, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = st_db_fail(st, NULL, "noting a session's use");
	else
		*written = sqlite3_changes(st->db) > 0;
	st_finish(st, s);
	return rc;
}

int tb_store_session_get(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN], struct tb_session_row *row,
			 struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT token_id, csrf_hash, expires_at, created_at, remember, last_used_at FROM sessions"
			  " WHERE hash = ?",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_bytes(s, 1) == TB_SHA256_LEN) {
		row->token_id = sqlite3_column_int64(s, 0);
		memcpy(row->csrf_hash, sqlite3_column_blob(s, 1), TB_SHA256_LEN);
		row->expires_at = sqlite3_column_int64(s, 2);
		row->created_at = sqlite3_column_int64(s, 3);
		row->remember = sqlite3_column_int(s, 4) != 0;
		row->last_used_at = sqlite3_column_int64(s, 5);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_UNAUTHORIZED, "", "no such session: log in again");
	}
	st_finish(st, s);
	return rc;
}

int tb_store_session_delete(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN])
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "DELETE FROM sessions WHERE hash = ?", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	return st_finish_write(st, s, NULL);
}

int tb_store_session_hashes(struct tb_store *st, int64_t token_id, tb_session_hash_fn fn, void *cls,
			    struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc, step;

	if ((rc = st_prep(st, "SELECT hash FROM sessions WHERE token_id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, token_id);
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		if (sqlite3_column_bytes(s, 0) == TB_SHA256_LEN)
			fn(cls, sqlite3_column_blob(s, 0));
	if (step != SQLITE_DONE)
		rc = st_db_fail(st, err, "listing sessions");
	st_finish(st, s);
	return rc;
}

int tb_store_session_purge(struct tb_store *st, int64_t now)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "DELETE FROM sessions WHERE expires_at < ? OR token_id IN "
			  "(SELECT id FROM tokens WHERE revoked = 1)",
			  &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now);
	return st_finish_write(st, s, NULL);
}

/* ---- audit ---- */

int tb_store_audit_append(struct tb_store *st, const struct tb_audit_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO audit (at, actor, remote, method, path, action, target, status, result)"
			  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->at);
	st_bind_text(s, 2, r->actor);
	st_bind_text(s, 3, r->remote);
	st_bind_text(s, 4, r->method);
	st_bind_text(s, 5, r->path);
	st_bind_text(s, 6, r->action);
	st_bind_text(s, 7, r->target != NULL ? r->target : "");
	sqlite3_bind_int(s, 8, r->status);
	st_bind_text(s, 9, r->result);
	return st_finish_write(st, s, err);
}

int tb_store_audit_prune(struct tb_store *st, int64_t keep, int64_t before, int64_t *deleted, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (deleted != NULL)
		*deleted = 0;
	/* ids only grow (INTEGER PRIMARY KEY, rows deleted from the old end):
	 * by count, every id below; by age, of the oldest 1,000 (by id: no scan
	 * of the table, whose at has no index) those older than before, as the
	 * events' retention does */
	if ((rc = st_prep(
		     st,
		     "DELETE FROM audit WHERE id <= (SELECT coalesce(max(id), 0) FROM audit) - ?2 OR id IN (SELECT id "
		     "FROM (SELECT id, at FROM audit ORDER BY id LIMIT 1000) WHERE at < ?1)",
		     &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, before);
	sqlite3_bind_int64(s, 2, keep);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "pruning the audit log");
	} else if (deleted != NULL) {
		*deleted = sqlite3_changes(st->db);
	}
	st_finish(st, s);
	return rc;
}

int tb_store_audit_list(struct tb_store *st, const struct tb_audit_filter *f, tb_audit_fn fn, void *cls,
			struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_audit_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT id, at, actor, remote, method, path, action, target, status, result"
			  " FROM audit WHERE (?1 IS NULL OR target = ?1) AND (?2 IS NULL OR actor = ?2)"
			  " AND at >= ?3 AND (?5 = 0 OR id < ?5) AND (?6 IS NULL OR action = ?6)"
			  " ORDER BY id DESC LIMIT ?4",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, f->target);
	st_bind_text(s, 2, f->actor);
	sqlite3_bind_int64(s, 3, f->since);
	sqlite3_bind_int(s, 4, f->limit);
	sqlite3_bind_int64(s, 5, f->before);
	st_bind_text(s, 6, f->action);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.at = sqlite3_column_int64(s, 1);
		r.actor = st_col_text(s, 2);
		r.remote = st_col_text(s, 3);
		r.method = st_col_text(s, 4);
		r.path = st_col_text(s, 5);
		r.action = st_col_text(s, 6);
		r.target = st_col_text(s, 7);
		r.status = sqlite3_column_int(s, 8);
		r.result = st_col_text(s, 9);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

/* ---- host keys ---- */

int tb_store_hostkey_set(struct tb_store *st, const char *machine, const char *os, const char *fp, const char *by,
			 int64_t now, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT OR REPLACE INTO host_keys (machine, os, fingerprint, accepted_by, accepted_at)"
			  " VALUES (?, ?, ?, ?, ?)",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, machine);
	st_bind_text(s, 2, os);
	st_bind_text(s, 3, fp);
	st_bind_text(s, 4, by);
	sqlite3_bind_int64(s, 5, now);
	return st_finish_write(st, s, err);
}

int tb_store_hostkey_get(struct tb_store *st, const char *machine, const char *os, char *fp, size_t fplen)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT fingerprint FROM host_keys WHERE machine = ? AND os = ?", &s, NULL)) != 0)
		return rc;
	st_bind_text(s, 1, machine);
	st_bind_text(s, 2, os);
	if (sqlite3_step(s) == SQLITE_ROW) {
		snprintf(fp, fplen, "%s", st_col_text(s, 0));
		rc = 0;
	} else {
		rc = TB_ERR_NOT_FOUND;
	}
	st_finish(st, s);
	return rc;
}

int tb_store_hostkey_each(struct tb_store *st, tb_hostkey_fn fn, void *cls)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT machine, os, fingerprint FROM host_keys", &s, NULL)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW)
		fn(cls, st_col_text(s, 0), st_col_text(s, 1), st_col_text(s, 2));
	st_finish(st, s);
	return 0;
}
