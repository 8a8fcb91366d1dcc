/* store.c - SQLite: migrations and every query testbedd makes: see store.h. */
#include "store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tb_store {
	sqlite3 *db;
	pthread_mutex_t lock;
	int version;
};

/* Numbered migrations: append, never edit one that has shipped. */
static const char *const migrations[] = {
	/* 1: Foundation I */
	"CREATE TABLE tokens (id INTEGER PRIMARY KEY, name TEXT NOT NULL, role TEXT NOT NULL"
	"  CHECK (role IN ('viewer','operator','admin')), hash BLOB NOT NULL UNIQUE,"
	"  created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL DEFAULT 0,"
	"  revoked INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE sessions (hash BLOB PRIMARY KEY, token_id INTEGER NOT NULL REFERENCES tokens(id),"
	"  csrf_hash BLOB NOT NULL, expires_at INTEGER NOT NULL);"
	"CREATE TABLE audit (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, actor TEXT NOT NULL,"
	"  remote TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, action TEXT NOT NULL,"
	"  target TEXT NOT NULL, status INTEGER NOT NULL, result TEXT NOT NULL);"
	"CREATE INDEX audit_target ON audit(target, id);"
	"CREATE TABLE host_keys (machine TEXT NOT NULL, os TEXT NOT NULL, fingerprint TEXT NOT NULL,"
	"  accepted_by TEXT NOT NULL, accepted_at INTEGER NOT NULL, PRIMARY KEY (machine, os));"
	"CREATE TABLE host_state (machine TEXT PRIMARY KEY, reachability TEXT NOT NULL, os TEXT,"
	"  since INTEGER NOT NULL, checked_at INTEGER NOT NULL, error_code TEXT, error_message TEXT,"
	"  presented_os TEXT, presented_fp TEXT);"
	"CREATE TABLE actions (id INTEGER PRIMARY KEY, host TEXT NOT NULL, kind TEXT NOT NULL,"
	"  params TEXT NOT NULL, state TEXT NOT NULL, actor TEXT NOT NULL, created_at INTEGER NOT NULL,"
	"  started_at INTEGER, finished_at INTEGER, error_code TEXT, error_message TEXT);"
	"CREATE TABLE action_steps (id INTEGER PRIMARY KEY, action_id INTEGER NOT NULL REFERENCES actions(id),"
	"  at INTEGER NOT NULL, what TEXT NOT NULL, command TEXT, exit_status INTEGER, output TEXT);"
	"CREATE TABLE matrices (id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,"
	"  state TEXT NOT NULL, actor TEXT NOT NULL, created_at INTEGER NOT NULL, started_at INTEGER,"
	"  finished_at INTEGER);"
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, matrix_id INTEGER NOT NULL REFERENCES matrices(id),"
	"  seq INTEGER NOT NULL, params TEXT NOT NULL, state TEXT NOT NULL, client_command TEXT,"
	"  server_command TEXT, summary TEXT, error_code TEXT, error_message TEXT,"
	"  started_at INTEGER, finished_at INTEGER);"
	"CREATE TABLE intervals (run_id INTEGER NOT NULL REFERENCES runs(id), side TEXT NOT NULL,"
	"  seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, side, seq));"
	"CREATE TABLE raw_outputs (run_id INTEGER NOT NULL REFERENCES runs(id), side TEXT NOT NULL,"
	"  stream TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (run_id, side, stream));"
	"CREATE TABLE events (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL,"
	"  host TEXT, matrix_id INTEGER, data TEXT NOT NULL);",
};

#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static int db_fail(struct tb_store *st, struct tb_error *err, const char *what)
{
	return tb_fail(err, TB_ERR_IO, "", "database: %s: %s", what, sqlite3_errmsg(st->db));
}

static int exec_sql(struct tb_store *st, const char *sql, struct tb_error *err)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = tb_fail(err, TB_ERR_IO, "", "database: %s", msg != NULL ? msg : "error");

		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

static int migrate(struct tb_store *st, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = exec_sql(st, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);", err)) != 0)
		return rc;
	if (sqlite3_prepare_v2(st->db, "SELECT max(version) FROM schema_version", -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, err, "reading the schema version");
	st->version = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	if (st->version > NMIGRATIONS)
		return tb_fail(err, TB_ERR_IO, "",
			       "database schema version %d is newer than this testbedd knows (%d): "
			       "run the newer testbedd or restore a backup", st->version, NMIGRATIONS);
	for (int v = st->version; v < NMIGRATIONS; v++) {
		char bump[96];

		snprintf(bump, sizeof(bump), "INSERT INTO schema_version VALUES (%d);", v + 1);
		if ((rc = exec_sql(st, "BEGIN IMMEDIATE;", err)) != 0)
			return rc;
		if ((rc = exec_sql(st, migrations[v], err)) != 0 || (rc = exec_sql(st, bump, err)) != 0) {
			exec_sql(st, "ROLLBACK;", NULL);
			return rc;
		}
		if ((rc = exec_sql(st, "COMMIT;", err)) != 0)
			return rc;
		st->version = v + 1;
	}
	return 0;
}

static int integrity_check(struct tb_store *st, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc = 0;

	if (sqlite3_prepare_v2(st->db, "PRAGMA quick_check", -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, err, "integrity check");
	if (sqlite3_step(s) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(s, 0), "ok") != 0)
		rc = tb_fail(err, TB_ERR_IO, "", "database failed its integrity check (%s): restore a backup",
			     sqlite3_column_text(s, 0) != NULL ? (const char *)sqlite3_column_text(s, 0) : "?");
	sqlite3_finalize(s);
	return rc;
}

int tb_store_open(const char *path, struct tb_store **out, struct tb_error *err)
{
	struct tb_store *st = calloc(1, sizeof(*st));
	int rc;

	*out = NULL;
	if (st == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	pthread_mutex_init(&st->lock, NULL);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		rc = tb_fail(err, TB_ERR_IO, "", "cannot open database %s: %s", path,
			     st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
		tb_store_close(st);
		return rc;
	}
	sqlite3_busy_timeout(st->db, 5000);
	if ((rc = integrity_check(st, err)) != 0 ||
	    (rc = exec_sql(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
			   err)) != 0 ||
	    (rc = migrate(st, err)) != 0) {
		tb_store_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

void tb_store_close(struct tb_store *st)
{
	if (st == NULL)
		return;
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

int tb_store_schema_version(struct tb_store *st)
{
	return st->version;
}

/* Prepare sql under the lock; on failure the lock is released. */
static int prep(struct tb_store *st, const char *sql, sqlite3_stmt **s, struct tb_error *err)
{
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK) {
		int rc = db_fail(st, err, "preparing a query");

		pthread_mutex_unlock(&st->lock);
		return rc;
	}
	return 0;
}

/* Step a write statement to completion, finalize, unlock. */
static int finish_write(struct tb_store *st, sqlite3_stmt *s, struct tb_error *err)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : db_fail(st, err, "writing");

	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

static void finish(struct tb_store *st, sqlite3_stmt *s)
{
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t != NULL ? (const char *)t : "";
}

static const char *col_text_or_null(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NULL : col_text(s, i);
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t != NULL)
		sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* ---- tokens ---- */

int tb_store_token_count(struct tb_store *st, int64_t *count, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "SELECT count(*) FROM tokens", &s, err)) != 0)
		return rc;
	*count = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	finish(st, s);
	return 0;
}

int tb_store_token_insert(struct tb_store *st, const char *name, const char *role,
			  const uint8_t hash[TB_SHA256_LEN], int64_t now, int64_t *id,
			  struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT INTO tokens (name, role, hash, created_at) VALUES (?, ?, ?, ?)", &s, err)) != 0)
		return rc;
	bind_text(s, 1, name);
	bind_text(s, 2, role);
	sqlite3_bind_blob(s, 3, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, now);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = db_fail(st, err, "creating a token");
		finish(st, s);
		return rc;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	finish(st, s);
	return 0;
}

static void token_row(sqlite3_stmt *s, struct tb_token_row *r)
{
	const void *h = sqlite3_column_blob(s, 6);

	r->id = sqlite3_column_int64(s, 0);
	r->name = col_text(s, 1);
	r->role = col_text(s, 2);
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

	if ((rc = prep(st, "SELECT " TOKEN_COLS " FROM tokens WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		token_row(s, &r);
		fn(cls, &r);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no token with id %lld", (long long)id);
	}
	finish(st, s);
	return rc;
}

int tb_store_token_list(struct tb_store *st, tb_token_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_token_row r;
	int rc;

	if ((rc = prep(st, "SELECT " TOKEN_COLS " FROM tokens ORDER BY id", &s, err)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW) {
		token_row(s, &r);
		fn(cls, &r);
	}
	finish(st, s);
	return 0;
}

int tb_store_token_set_hash(struct tb_store *st, int64_t id, const uint8_t hash[TB_SHA256_LEN],
			    struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "UPDATE tokens SET hash = ? WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, id);
	return finish_write(st, s, err);
}

int tb_store_token_revoke(struct tb_store *st, int64_t id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "UPDATE tokens SET revoked = 1 WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = db_fail(st, err, "revoking a token");
	else if (sqlite3_changes(st->db) == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no token with id %lld", (long long)id);
	finish(st, s);
	if (rc == 0 && (rc = prep(st, "DELETE FROM sessions WHERE token_id = ?", &s, err)) == 0) {
		sqlite3_bind_int64(s, 1, id);
		rc = finish_write(st, s, err);
	}
	return rc;
}

int tb_store_token_touch(struct tb_store *st, int64_t id, int64_t now)
{
	sqlite3_stmt *s;
	int rc;

	/* At most one write a minute per token: a busy CI token must not write per request. */
	if ((rc = prep(st, "UPDATE tokens SET last_used_at = ? WHERE id = ? AND last_used_at < ?", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int64(s, 2, id);
	sqlite3_bind_int64(s, 3, now - 60);
	return finish_write(st, s, NULL);
}

/* ---- sessions ---- */

int tb_store_session_insert(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN],
			    const struct tb_session_row *row, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT INTO sessions (hash, token_id, csrf_hash, expires_at) VALUES (?, ?, ?, ?)",
		       &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, row->token_id);
	sqlite3_bind_blob(s, 3, row->csrf_hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, row->expires_at);
	return finish_write(st, s, err);
}

int tb_store_session_get(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN],
			 struct tb_session_row *row, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "SELECT token_id, csrf_hash, expires_at FROM sessions WHERE hash = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_bytes(s, 1) == TB_SHA256_LEN) {
		row->token_id = sqlite3_column_int64(s, 0);
		memcpy(row->csrf_hash, sqlite3_column_blob(s, 1), TB_SHA256_LEN);
		row->expires_at = sqlite3_column_int64(s, 2);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_UNAUTHORIZED, "", "no such session: log in again");
	}
	finish(st, s);
	return rc;
}

int tb_store_session_delete(struct tb_store *st, const uint8_t hash[TB_SHA256_LEN])
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "DELETE FROM sessions WHERE hash = ?", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_blob(s, 1, hash, TB_SHA256_LEN, SQLITE_TRANSIENT);
	return finish_write(st, s, NULL);
}

int tb_store_session_purge(struct tb_store *st, int64_t now)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "DELETE FROM sessions WHERE expires_at < ? OR token_id IN "
			   "(SELECT id FROM tokens WHERE revoked = 1)", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now);
	return finish_write(st, s, NULL);
}

/* ---- audit ---- */

int tb_store_audit_append(struct tb_store *st, const struct tb_audit_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT INTO audit (at, actor, remote, method, path, action, target, status, result)"
			   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->at);
	bind_text(s, 2, r->actor);
	bind_text(s, 3, r->remote);
	bind_text(s, 4, r->method);
	bind_text(s, 5, r->path);
	bind_text(s, 6, r->action);
	bind_text(s, 7, r->target != NULL ? r->target : "");
	sqlite3_bind_int(s, 8, r->status);
	bind_text(s, 9, r->result);
	return finish_write(st, s, err);
}

int tb_store_audit_list(struct tb_store *st, const struct tb_audit_filter *f, tb_audit_fn fn,
			void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_audit_row r;
	int rc;

	if ((rc = prep(st, "SELECT id, at, actor, remote, method, path, action, target, status, result"
			   " FROM audit WHERE (?1 IS NULL OR target = ?1) AND (?2 IS NULL OR actor = ?2)"
			   " AND at >= ?3 ORDER BY id DESC LIMIT ?4", &s, err)) != 0)
		return rc;
	bind_text(s, 1, f->target);
	bind_text(s, 2, f->actor);
	sqlite3_bind_int64(s, 3, f->since);
	sqlite3_bind_int(s, 4, f->limit);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.at = sqlite3_column_int64(s, 1);
		r.actor = col_text(s, 2);
		r.remote = col_text(s, 3);
		r.method = col_text(s, 4);
		r.path = col_text(s, 5);
		r.action = col_text(s, 6);
		r.target = col_text(s, 7);
		r.status = sqlite3_column_int(s, 8);
		r.result = col_text(s, 9);
		fn(cls, &r);
	}
	finish(st, s);
	return 0;
}

/* ---- host keys ---- */

int tb_store_hostkey_set(struct tb_store *st, const char *machine, const char *os, const char *fp,
			 const char *by, int64_t now, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT OR REPLACE INTO host_keys (machine, os, fingerprint, accepted_by, accepted_at)"
			   " VALUES (?, ?, ?, ?, ?)", &s, err)) != 0)
		return rc;
	bind_text(s, 1, machine);
	bind_text(s, 2, os);
	bind_text(s, 3, fp);
	bind_text(s, 4, by);
	sqlite3_bind_int64(s, 5, now);
	return finish_write(st, s, err);
}

int tb_store_hostkey_get(struct tb_store *st, const char *machine, const char *os, char *fp, size_t fplen)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "SELECT fingerprint FROM host_keys WHERE machine = ? AND os = ?", &s, NULL)) != 0)
		return rc;
	bind_text(s, 1, machine);
	bind_text(s, 2, os);
	if (sqlite3_step(s) == SQLITE_ROW) {
		snprintf(fp, fplen, "%s", col_text(s, 0));
		rc = 0;
	} else {
		rc = TB_ERR_NOT_FOUND;
	}
	finish(st, s);
	return rc;
}

/* ---- host state ---- */

int tb_store_host_state_put(struct tb_store *st, const struct tb_host_state_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT OR REPLACE INTO host_state (machine, reachability, os, since, checked_at,"
			   " error_code, error_message, presented_os, presented_fp) VALUES (?,?,?,?,?,?,?,?,?)",
		       &s, err)) != 0)
		return rc;
	bind_text(s, 1, r->machine);
	bind_text(s, 2, r->reachability);
	bind_text(s, 3, r->os);
	sqlite3_bind_int64(s, 4, r->since);
	sqlite3_bind_int64(s, 5, r->checked_at);
	bind_text(s, 6, r->error_code);
	bind_text(s, 7, r->error_message);
	bind_text(s, 8, r->presented_os);
	bind_text(s, 9, r->presented_fp);
	return finish_write(st, s, err);
}

int tb_store_host_state_each(struct tb_store *st, tb_host_state_fn fn, void *cls)
{
	sqlite3_stmt *s;
	struct tb_host_state_row r;
	int rc;

	if ((rc = prep(st, "SELECT machine, reachability, os, since, checked_at, error_code, error_message,"
			   " presented_os, presented_fp FROM host_state", &s, NULL)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.machine = col_text(s, 0);
		r.reachability = col_text(s, 1);
		r.os = col_text_or_null(s, 2);
		r.since = sqlite3_column_int64(s, 3);
		r.checked_at = sqlite3_column_int64(s, 4);
		r.error_code = col_text_or_null(s, 5);
		r.error_message = col_text_or_null(s, 6);
		r.presented_os = col_text_or_null(s, 7);
		r.presented_fp = col_text_or_null(s, 8);
		fn(cls, &r);
	}
	finish(st, s);
	return 0;
}

/* ---- events ---- */

int tb_store_event_insert(struct tb_store *st, const struct tb_event_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "INSERT INTO events (id, at, type, host, matrix_id, data) VALUES (?, ?, ?, ?, ?, ?)",
		       &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->at);
	bind_text(s, 3, r->type);
	bind_text(s, 4, r->host);
	if (r->matrix != 0)
		sqlite3_bind_int64(s, 5, r->matrix);
	else
		sqlite3_bind_null(s, 5);
	bind_text(s, 6, r->json);
	return finish_write(st, s, err);
}

int tb_store_event_last(struct tb_store *st, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = prep(st, "SELECT coalesce(max(id), 0) FROM events", &s, err)) != 0)
		return rc;
	*id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	finish(st, s);
	return 0;
}

int tb_store_event_each(struct tb_store *st, int64_t after, int limit, tb_event_fn fn, void *cls,
			struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_event_row r;
	int rc;

	if ((rc = prep(st, "SELECT id, at, type, host, coalesce(matrix_id, 0), data FROM events"
			   " WHERE id > ? ORDER BY id LIMIT ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, after);
	sqlite3_bind_int(s, 2, limit);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.at = sqlite3_column_int64(s, 1);
		r.type = col_text(s, 2);
		r.host = col_text_or_null(s, 3);
		r.matrix = sqlite3_column_int64(s, 4);
		r.json = col_text(s, 5);
		fn(cls, &r);
	}
	finish(st, s);
	return 0;
}

int tb_store_event_prune(struct tb_store *st, int64_t below)
{
	sqlite3_stmt *s;
	int rc;

	if (below <= 0)
		return 0;
	if ((rc = prep(st, "DELETE FROM events WHERE id < ?", &s, NULL)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, below);
	return finish_write(st, s, NULL);
}
