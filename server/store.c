/* store.c - SQLite: open, migrate, check, and the helpers every store_*.c
 * file uses (store_internal.h).  See store.h. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* 2: Matrices I (the tables of 1 were never written: replaced whole) */
	"DROP TABLE raw_outputs; DROP TABLE intervals; DROP TABLE runs; DROP TABLE matrices;"
	"CREATE TABLE matrices (id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,"
	"  state TEXT NOT NULL, actor TEXT NOT NULL, created_at INTEGER NOT NULL, started_at INTEGER,"
	"  finished_at INTEGER, error_code TEXT, error_message TEXT, seed INTEGER NOT NULL DEFAULT 0,"
	"  estimated_ms INTEGER NOT NULL DEFAULT 0, rerun_of INTEGER);"
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, matrix_id INTEGER NOT NULL REFERENCES matrices(id),"
	"  seq INTEGER NOT NULL, cell INTEGER NOT NULL, rep INTEGER NOT NULL, client TEXT NOT NULL,"
	"  server TEXT NOT NULL, link TEXT NOT NULL, server_address TEXT NOT NULL, protocol TEXT NOT NULL,"
	"  direction TEXT NOT NULL, params TEXT NOT NULL, state TEXT NOT NULL, error_class TEXT,"
	"  error_message TEXT, client_os TEXT, server_os TEXT, client_version TEXT, server_version TEXT,"
	"  client_command TEXT, server_command TEXT, port INTEGER, client_pid INTEGER, server_pid INTEGER,"
	"  cookie TEXT, client_exit INTEGER, server_exit INTEGER, started_ms INTEGER, finished_ms INTEGER,"
	"  attempts INTEGER NOT NULL DEFAULT 0, summary TEXT, sender_bps REAL, receiver_bps REAL,"
	"  retransmits INTEGER, lost_percent REAL, UNIQUE (matrix_id, seq));"
	"CREATE TABLE intervals (run_id INTEGER NOT NULL REFERENCES runs(id), side TEXT NOT NULL,"
	"  seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, side, seq));"
	"CREATE TABLE raw_outputs (run_id INTEGER NOT NULL REFERENCES runs(id), side TEXT NOT NULL,"
	"  stream TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (run_id, side, stream));",
	/* 3: Matrices II: what each host was (per matrix, host and OS) */
	"CREATE TABLE host_snapshots (matrix_id INTEGER NOT NULL REFERENCES matrices(id), host TEXT NOT NULL,"
	"  os TEXT NOT NULL, taken_at INTEGER NOT NULL, interface TEXT, command TEXT NOT NULL,"
	"  data TEXT NOT NULL, raw BLOB NOT NULL, PRIMARY KEY (matrix_id, host, os));"
	/* rounds: runs of one round go at once; every earlier matrix ran one at a time */
	"ALTER TABLE runs ADD COLUMN round INTEGER NOT NULL DEFAULT 0;"
	"UPDATE runs SET round = seq;"
	/* OS combinations: what each run wants, and the boots a matrix did */
	"ALTER TABLE runs ADD COLUMN combo INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE runs ADD COLUMN want_client_os TEXT;"
	"ALTER TABLE runs ADD COLUMN want_server_os TEXT;"
	"CREATE TABLE matrix_boots (id INTEGER PRIMARY KEY, matrix_id INTEGER NOT NULL REFERENCES matrices(id),"
	"  host TEXT NOT NULL, from_os TEXT, to_os TEXT NOT NULL, action_id INTEGER, started_ms INTEGER NOT NULL,"
	"  finished_ms INTEGER, state TEXT NOT NULL, error TEXT, before_seq INTEGER NOT NULL);"
	/* a running run's intervals so far come from its events */
	"CREATE INDEX events_by_matrix ON events (matrix_id, type);",
	/* 4: Away from home: notification rules, their outbox and where the
	 * notifier stopped reading the bus (store_notify.c) */
	"CREATE TABLE notify_rules (id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, failing INTEGER NOT NULL DEFAULT 0,"
	"  last_error TEXT);"
	"CREATE TABLE notify_deliveries (id INTEGER PRIMARY KEY, rule_id INTEGER NOT NULL, event_id INTEGER,"
	"  trigger TEXT NOT NULL, message TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
	"  next_at_ms INTEGER NOT NULL, created_at INTEGER NOT NULL, finished_at INTEGER, last_status INTEGER,"
	"  last_error TEXT);"
	"CREATE INDEX notify_deliveries_rule ON notify_deliveries (rule_id, state, id);"
	"CREATE TABLE notify_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), last_event INTEGER NOT NULL);",
	/* 5: the spec library: named, versioned matrix specs, a schedule per
	 * spec and the CI gate's verdict per matrix (store_specs.c) */
	"CREATE TABLE spec_versions (name TEXT NOT NULL, version INTEGER NOT NULL, spec TEXT NOT NULL,"
	"  author TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (name, version));"
	"CREATE TABLE spec_schedules (name TEXT PRIMARY KEY, cron TEXT NOT NULL, baseline TEXT NOT NULL,"
	"  metric TEXT NOT NULL, max_drop REAL NOT NULL, author TEXT NOT NULL, next_at INTEGER NOT NULL,"
	"  created_at INTEGER NOT NULL);"
	"CREATE TABLE matrix_gates (matrix_id INTEGER PRIMARY KEY REFERENCES matrices(id), spec TEXT NOT NULL,"
	"  version INTEGER NOT NULL, baseline_id INTEGER, verdict TEXT, detail TEXT, at INTEGER);"
	"CREATE INDEX matrix_gates_spec ON matrix_gates (spec, matrix_id);",
	/* 6: reservations granted or queued (store_reserve.c, reserve.c) */
	"CREATE TABLE reservations (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, hosts TEXT NOT NULL,"
	"  owner TEXT NOT NULL, note TEXT NOT NULL, granted INTEGER NOT NULL, asked_at INTEGER NOT NULL,"
	"  granted_at INTEGER NOT NULL, until INTEGER NOT NULL, length_s INTEGER NOT NULL);",
	/* 7: a rule's failing mark is read from its outbox (store_notify.c), not kept */
	"ALTER TABLE notify_rules DROP COLUMN failing;"
	"ALTER TABLE notify_rules DROP COLUMN last_error;",
	/* 8: "Your devices": when a session began, remembered or not, its browser */
	"ALTER TABLE sessions ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN remember INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN device TEXT;",
	/* 9: when and from where a session was last used (a remembered one's
	 * expiry slides with its use: auth.c) */
	"ALTER TABLE sessions ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN last_address TEXT;",
	/* 10: the tunables journal: each host setting a matrix changed, with the
	 * value found before (store_tunables.c, tunables.c) */
	"CREATE TABLE tunable_journal (id INTEGER PRIMARY KEY, matrix_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	"  host TEXT NOT NULL, os TEXT NOT NULL, family TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,"
	"  original TEXT NOT NULL, applied TEXT NOT NULL, state TEXT NOT NULL, error TEXT, created_at INTEGER NOT NULL,"
	"  restored_at INTEGER);"
	"CREATE INDEX tunable_journal_open ON tunable_journal (state, host);",
	/* 11: the link profiles journal: each router pipe a matrix configured,
	 * written before it is, removed at the end or at start-up after a crash
	 * (store_linkprof.c, linkprof.c) */
	"CREATE TABLE linkprof_journal (id INTEGER PRIMARY KEY, matrix_id INTEGER NOT NULL, router TEXT NOT NULL,"
	"  pipe INTEGER NOT NULL, state TEXT NOT NULL, error TEXT, created_at INTEGER NOT NULL, removed_at INTEGER);"
	"CREATE INDEX linkprof_journal_open ON linkprof_journal (state);",
	/* 12: GRUB's saved default (grubenv's saved_entry) as last read per
	 * machine, so that a restart plans from it while the host runs an OS
	 * that cannot read grubenv (store_hosts.c, hosts.c) */
	"CREATE TABLE grub_saved (machine TEXT PRIMARY KEY, entry TEXT NOT NULL, read_at INTEGER NOT NULL);",
	/* 13: the boot path a matrix's boot was planned to take (store_snapshots.c, matrix_boot.c) */
	"ALTER TABLE matrix_boots ADD COLUMN path TEXT;",
	/* 14: a run's CPU and memory samples, apart from the events that the
	 * retention deletes (store_samples.c, run_sampler.c, run_load.c) */
	"CREATE TABLE IF NOT EXISTS run_samples (run_id INTEGER NOT NULL REFERENCES runs(id), host TEXT NOT NULL,"
	"  side TEXT NOT NULL, n INTEGER NOT NULL, at INTEGER NOT NULL, sample TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, host, n));",
	/* 15: why a schedule's last time did not start its matrix (cleared when
	 * one starts: store_specs.c, schedule.c) */
	"ALTER TABLE spec_schedules ADD COLUMN failed_at INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE spec_schedules ADD COLUMN failure TEXT;",
};

#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int st_db_fail(struct tb_store *st, struct tb_error *err, const char *what)
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
		return st_db_fail(st, err, "reading the schema version");
	st->version = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	if (st->version > NMIGRATIONS)
		return tb_fail(err, TB_ERR_IO, "",
			       "database schema version %d is newer than this testbedd knows (%d): "
			       "run the newer testbedd or restore a backup",
			       st->version, NMIGRATIONS);
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
		return st_db_fail(st, err, "integrity check");
	if (sqlite3_step(s) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(s, 0), "ok") != 0)
		rc = tb_fail(err, TB_ERR_IO, "", "database failed its integrity check (%s): restore a backup",
			     sqlite3_column_text(s, 0) != NULL ? (const char *)sqlite3_column_text(s, 0) : "?");
	sqlite3_finalize(s);
	return rc;
}

/*
 * path, if it exists, gets mode 0600; with create, a missing path is created
 * empty with mode 0600 whatever the umask (SQLite takes an empty file for a
 * new database, and gives its -wal, -shm and -journal files the database's
 * mode).  An existing file is chmod'ed, never opened: closing a descriptor
 * of it would drop this process's POSIX locks, SQLite's among them.
 */
static int st_private_file(const char *path, int create, struct tb_error *err)
{
	struct stat sb;
	int fd;

	if (lstat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode))
			return tb_fail(err, TB_ERR_IO, "", "%s is not a regular file", path);
		if ((sb.st_mode & 0777) != 0600 && chmod(path, 0600) != 0)
			return tb_fail(err, TB_ERR_IO, "", "cannot make %s private (mode 0600): %s", path,
				       strerror(errno));
		return 0;
	}
	if (errno != ENOENT)
		return tb_fail(err, TB_ERR_IO, "", "cannot read %s: %s", path, strerror(errno));
	if (!create)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return st_private_file(path, 0, err);
	if (fd < 0 || fchmod(fd, 0600) != 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return tb_fail(err, TB_ERR_IO, "", "cannot create database %s: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}

/* The database and its side files private to testbedd's user (a file path only). */
static int st_private(const char *path, struct tb_error *err)
{
	static const char *const sides[] = {"-wal", "-shm", "-journal"};
	char side[1100];
	int rc;

	if (path[0] == '\0' || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 0;
	if ((rc = st_private_file(path, 1, err)) != 0)
		return rc;
	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		if ((rc = st_private_file(side, 0, err)) != 0)
			return rc;
	}
	return 0;
}

int tb_store_open(const char *path, struct tb_store **out, struct tb_error *err)
{
	struct tb_store *st;
	int rc;

	*out = NULL;
	if ((rc = st_private(path, err)) != 0)
		return rc;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	pthread_mutex_init(&st->lock, NULL);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = tb_fail(err, TB_ERR_IO, "", "cannot open database %s: %s", path,
			     st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
		tb_store_close(st);
		return rc;
	}
	sqlite3_busy_timeout(st->db, 5000);
	if ((rc = integrity_check(st, err)) != 0 ||
	    (rc = exec_sql(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", err)) !=
		    0 ||
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
	for (size_t i = 0; i < st->ncache; i++)
		sqlite3_finalize(st->cache[i].stmt);
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

int tb_store_schema_version(struct tb_store *st)
{
	return st->version;
}

/* Prepare sql under the lock; on failure the lock is released. */
int st_prep(struct tb_store *st, const char *sql, sqlite3_stmt **s, struct tb_error *err)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->ncache; i++) {
		if (st->cache[i].sql == sql || strcmp(st->cache[i].sql, sql) == 0) {
			*s = st->cache[i].stmt;
			sqlite3_clear_bindings(*s);
			return 0;
		}
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK) {
		int rc = st_db_fail(st, err, "preparing a query");

		pthread_mutex_unlock(&st->lock);
		return rc;
	}
	if (st->ncache < ST_CACHE) {
		st->cache[st->ncache].sql = sql;
		st->cache[st->ncache].stmt = *s;
		st->ncache++;
	}
	return 0;
}

/* Done with s: reset a kept statement, finalize another one. */
static void release(struct tb_store *st, sqlite3_stmt *s)
{
	for (size_t i = 0; i < st->ncache; i++) {
		if (st->cache[i].stmt == s) {
			sqlite3_reset(s);
			return;
		}
	}
	sqlite3_finalize(s);
}

int st_finish_write(struct tb_store *st, sqlite3_stmt *s, struct tb_error *err)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : st_db_fail(st, err, "writing");

	release(st, s);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int st_finish_insert(struct tb_store *st, sqlite3_stmt *s, const char *what, int64_t *id, struct tb_error *err)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : st_db_fail(st, err, what);

	if (rc == 0 && id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	st_finish(st, s);
	return rc;
}

void st_finish(struct tb_store *st, sqlite3_stmt *s)
{
	release(st, s);
	pthread_mutex_unlock(&st->lock);
}

const char *st_col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t != NULL ? (const char *)t : "";
}

const char *st_col_text_or_null(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NULL : st_col_text(s, i);
}

void st_bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t != NULL)
		sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}
