/* store_matrices.c - matrices, their runs, intervals and raw outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static void bind_i64_or_null(sqlite3_stmt *s, int i, int64_t v, int64_t none)
{
	if (v != none)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static void bind_real_or_null(sqlite3_stmt *s, int i, double v)
{
	if (v >= 0)
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

/* A one-off statement on a connection whose lock the caller holds. */
static int raw_exec(struct tb_store *st, const char *sql, struct tb_error *err)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return st_db_fail(st, err, sql);
	return 0;
}

/* ---- matrices ---- */

static const char insert_run_sql[] =
	"INSERT INTO runs (matrix_id, seq, cell, rep, client, server, link, server_address, protocol, direction,"
	" params, state, round, combo, want_client_os, want_server_os) VALUES (?,?,?,?,?,?,?,?,?,?,?,'pending',?,?,?,?)";

int tb_store_matrix_insert(struct tb_store *st, const struct tb_matrix_row *m, const struct tb_run_row *runs, int nruns,
			   int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	pthread_mutex_lock(&st->lock);
	if ((rc = raw_exec(st, "BEGIN IMMEDIATE", err)) != 0)
		goto out;
	if (sqlite3_prepare_v2(
		    st->db,
		    "INSERT INTO matrices (name, spec, state, actor, created_at, seed, estimated_ms, rerun_of)"
		    " VALUES (?,?,?,?,?,?,?,?)",
		    -1, &s, NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "preparing a matrix");
		goto rollback;
	}
	st_bind_text(s, 1, m->name);
	st_bind_text(s, 2, m->spec);
	st_bind_text(s, 3, m->state);
	st_bind_text(s, 4, m->actor);
	sqlite3_bind_int64(s, 5, m->created_at);
	sqlite3_bind_int64(s, 6, m->seed);
	sqlite3_bind_int64(s, 7, m->estimated_ms);
	bind_i64_or_null(s, 8, m->rerun_of, 0);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "recording a matrix");
		goto rollback;
	}
	*id = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(st->db, insert_run_sql, -1, &s, NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "preparing a run");
		goto rollback;
	}
	for (int i = 0; i < nruns; i++) {
		const struct tb_run_row *r = &runs[i];

		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, *id);
		sqlite3_bind_int(s, 2, r->seq);
		sqlite3_bind_int(s, 3, r->cell);
		sqlite3_bind_int(s, 4, r->repeat);
		st_bind_text(s, 5, r->client);
		st_bind_text(s, 6, r->server);
		st_bind_text(s, 7, r->link);
		st_bind_text(s, 8, r->server_address);
		st_bind_text(s, 9, r->protocol);
		st_bind_text(s, 10, r->direction);
		st_bind_text(s, 11, r->params);
		sqlite3_bind_int(s, 12, r->round);
		sqlite3_bind_int(s, 13, r->combo);
		st_bind_text(s, 14, r->want_client_os);
		st_bind_text(s, 15, r->want_server_os);
		if (sqlite3_step(s) != SQLITE_DONE) {
			rc = st_db_fail(st, err, "recording a run");
			goto rollback;
		}
	}
	sqlite3_finalize(s);
	s = NULL;
	rc = raw_exec(st, "COMMIT", err);
	if (rc == 0)
		goto out;
rollback:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
out:
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tb_store_matrix_update(struct tb_store *st, int64_t id, const char *state, int64_t started_at, int64_t finished_at,
			   const char *error_code, const char *error_message, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE matrices SET state = ?, started_at = coalesce(?, started_at),"
			  " finished_at = coalesce(?, finished_at), error_code = coalesce(?, error_code),"
			  " error_message = coalesce(?, error_message) WHERE id = ?",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, state);
	bind_i64_or_null(s, 2, started_at, 0);
	bind_i64_or_null(s, 3, finished_at, 0);
	st_bind_text(s, 4, error_code);
	st_bind_text(s, 5, error_code != NULL ? error_message : NULL);
	sqlite3_bind_int64(s, 6, id);
	return st_finish_write(st, s, err);
}

int tb_store_matrix_requeue(struct tb_store *st, int64_t id, int *reset, struct tb_error *err)
{
	char sql[512];
	int rc;

	pthread_mutex_lock(&st->lock);
	if ((rc = raw_exec(st, "BEGIN IMMEDIATE", err)) != 0)
		goto out;
	/* ids are numbers: formatting them in is safe */
	snprintf(sql, sizeof(sql),
		 "DELETE FROM intervals WHERE run_id IN (SELECT id FROM runs WHERE matrix_id = %lld AND state IN"
		 " ('running','interrupted','canceled'));"
		 "DELETE FROM raw_outputs WHERE run_id IN (SELECT id FROM runs WHERE matrix_id = %lld AND state IN"
		 " ('running','interrupted','canceled'));",
		 (long long)id, (long long)id);
	if ((rc = raw_exec(st, sql, err)) != 0)
		goto rollback;
	snprintf(sql, sizeof(sql),
		 "UPDATE runs SET state = 'pending', error_class = NULL, error_message = NULL, client_pid = NULL,"
		 " server_pid = NULL, cookie = NULL, client_exit = NULL, server_exit = NULL, started_ms = NULL,"
		 " finished_ms = NULL, summary = NULL, sender_bps = NULL, receiver_bps = NULL, retransmits = NULL,"
		 " lost_percent = NULL WHERE matrix_id = %lld AND state IN ('running','interrupted','canceled')",
		 (long long)id);
	if ((rc = raw_exec(st, sql, err)) != 0)
		goto rollback;
	*reset = sqlite3_changes(st->db);
	snprintf(sql, sizeof(sql),
		 "UPDATE matrices SET state = 'queued', finished_at = NULL, error_code = NULL, error_message = NULL"
		 " WHERE id = %lld",
		 (long long)id);
	if ((rc = raw_exec(st, sql, err)) != 0 || (rc = raw_exec(st, "COMMIT", err)) != 0)
		goto rollback;
	goto out;
rollback:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
out:
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* Per round with runs still to go, its longest run (rounds run one after another). */
#define LEFT_BY_ROUND                                                             \
	"(SELECT max(1000 * (coalesce(json_extract(x.params, '$.duration_s'), 0)" \
	" + coalesce(json_extract(x.params, '$.omit_s'), 0))) AS ms FROM runs x"  \
	" WHERE x.matrix_id = m.id AND x.state IN ('pending', 'running') GROUP BY x.round)"

#define MATRIX_COLS                                                                           \
	"m.id, m.name, m.spec, m.state, m.actor, m.created_at, coalesce(m.started_at, 0),"    \
	" coalesce(m.finished_at, 0), m.error_code, m.error_message, m.seed, m.estimated_ms," \
	" coalesce(m.rerun_of, 0), count(r.id), coalesce(sum(r.state = 'pending'), 0),"       \
	" coalesce(sum(r.state = 'running'), 0), coalesce(sum(r.state = 'ok'), 0),"           \
	" coalesce(sum(r.state = 'failed'), 0), coalesce(sum(r.state = 'canceled'), 0),"      \
	" coalesce(sum(r.state = 'interrupted'), 0),"                                         \
	" (SELECT coalesce(sum(ms), 0) FROM " LEFT_BY_ROUND "),"                              \
	" (SELECT count(*) FROM " LEFT_BY_ROUND ")"                                           \
	" FROM matrices m LEFT JOIN runs r ON r.matrix_id = m.id"

static void matrix_row(sqlite3_stmt *s, struct tb_matrix_row *m)
{
	m->id = sqlite3_column_int64(s, 0);
	m->name = st_col_text(s, 1);
	m->spec = st_col_text(s, 2);
	m->state = st_col_text(s, 3);
	m->actor = st_col_text(s, 4);
	m->created_at = sqlite3_column_int64(s, 5);
	m->started_at = sqlite3_column_int64(s, 6);
	m->finished_at = sqlite3_column_int64(s, 7);
	m->error_code = st_col_text_or_null(s, 8);
	m->error_message = st_col_text_or_null(s, 9);
	m->seed = sqlite3_column_int64(s, 10);
	m->estimated_ms = sqlite3_column_int64(s, 11);
	m->rerun_of = sqlite3_column_int64(s, 12);
	m->nruns = sqlite3_column_int(s, 13);
	m->npending = sqlite3_column_int(s, 14);
	m->nrunning = sqlite3_column_int(s, 15);
	m->nok = sqlite3_column_int(s, 16);
	m->nfailed = sqlite3_column_int(s, 17);
	m->ncanceled = sqlite3_column_int(s, 18);
	m->ninterrupted = sqlite3_column_int(s, 19);
	m->pending_ms = sqlite3_column_int64(s, 20);
	m->pending_rounds = sqlite3_column_int(s, 21);
}

int tb_store_matrix_get(struct tb_store *st, int64_t id, tb_matrix_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_matrix_row m;
	int rc;

	if ((rc = st_prep(st, "SELECT " MATRIX_COLS " WHERE m.id = ? GROUP BY m.id", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		matrix_row(s, &m);
		fn(cls, &m);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no matrix with id %lld", (long long)id);
	}
	st_finish(st, s);
	return rc;
}

int tb_store_matrix_exists(struct tb_store *st, int64_t id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT 1 FROM matrices WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s) == SQLITE_ROW
		     ? 0
		     : tb_fail(err, TB_ERR_NOT_FOUND, "id", "no matrix with id %lld", (long long)id);
	st_finish(st, s);
	return rc;
}

/* The filter's WHERE: ?1 name part, ?2 state, ?3 since (matrices m). */
#define FILTER_WHERE \
	" (?1 IS NULL OR instr(m.name, ?1) > 0) AND (?2 IS NULL OR m.state = ?2) AND (?3 IS NULL OR m.created_at >= ?3)"

static void bind_filter(sqlite3_stmt *s, const struct tb_matrix_filter *f)
{
	st_bind_text(s, 1, f->name);
	st_bind_text(s, 2, f->state);
	bind_i64_or_null(s, 3, f->since, 0);
}

static void brief_rows(sqlite3_stmt *s, tb_matrix_brief_fn fn, void *cls)
{
	struct tb_matrix_brief b;

	while (sqlite3_step(s) == SQLITE_ROW) {
		b.id = sqlite3_column_int64(s, 0);
		b.name = st_col_text(s, 1);
		b.state = st_col_text(s, 2);
		b.created_at = sqlite3_column_int64(s, 3);
		fn(cls, &b);
	}
}

int tb_store_matrix_brief_get(struct tb_store *st, int64_t id, tb_matrix_brief_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc, found = 0;

	if ((rc = st_prep(st, "SELECT id, name, state, created_at FROM matrices WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		struct tb_matrix_brief b = {sqlite3_column_int64(s, 0), st_col_text(s, 1), st_col_text(s, 2),
					    sqlite3_column_int64(s, 3)};

		fn(cls, &b);
		found = 1;
	}
	st_finish(st, s);
	return found ? 0 : tb_fail(err, TB_ERR_NOT_FOUND, "id", "no matrix with id %lld", (long long)id);
}

int tb_store_matrix_find(struct tb_store *st, const struct tb_matrix_filter *f, tb_matrix_row_fn fn, void *cls,
			 int *total, struct tb_error *err)
{
	struct tb_matrix_row m;
	sqlite3_stmt *s;
	int rc;

	if (total != NULL) {
		if ((rc = st_prep(st, "SELECT count(*) FROM matrices m WHERE" FILTER_WHERE, &s, err)) != 0)
			return rc;
		bind_filter(s, f);
		*total = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
		st_finish(st, s);
	}
	if ((rc = st_prep(st,
			  "SELECT " MATRIX_COLS " WHERE m.id IN (SELECT m.id FROM matrices m WHERE" FILTER_WHERE
			  " ORDER BY m.id DESC LIMIT ?4 OFFSET ?5) GROUP BY m.id ORDER BY m.id DESC",
			  &s, err)) != 0)
		return rc;
	bind_filter(s, f);
	sqlite3_bind_int(s, 4, f->limit);
	sqlite3_bind_int(s, 5, f->offset);
	while (sqlite3_step(s) == SQLITE_ROW) {
		matrix_row(s, &m);
		fn(cls, &m);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_matrix_find_pair(struct tb_store *st, const struct tb_matrix_filter *f, const char *client,
			      const char *server, const char *protocol, const char *direction, tb_matrix_brief_fn fn,
			      void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT m.id, m.name, m.state, m.created_at FROM matrices m WHERE" FILTER_WHERE
			  " AND m.id IN (SELECT matrix_id FROM runs WHERE client = ?4 AND server = ?5"
			  " AND protocol = ?6 AND direction = ?7) ORDER BY m.id DESC LIMIT ?8",
			  &s, err)) != 0)
		return rc;
	bind_filter(s, f);
	st_bind_text(s, 4, client);
	st_bind_text(s, 5, server);
	st_bind_text(s, 6, protocol);
	st_bind_text(s, 7, direction);
	sqlite3_bind_int(s, 8, f->limit);
	brief_rows(s, fn, cls);
	st_finish(st, s);
	return 0;
}

/* ---- runs ---- */

#define RUN_COLS                                                                                                       \
	"id, matrix_id, seq, cell, rep, client, server, link, server_address, protocol, direction,"                    \
	" params, state, error_class, error_message, client_os, server_os, client_version, server_version,"            \
	" client_command, server_command, coalesce(port, 0), coalesce(client_pid, 0), coalesce(server_pid, 0),"        \
	" cookie, coalesce(client_exit, -1), coalesce(server_exit, -1), coalesce(started_ms, 0),"                      \
	" coalesce(finished_ms, 0), attempts, summary, coalesce(sender_bps, -1), coalesce(receiver_bps, -1),"          \
	" coalesce(retransmits, -1), coalesce(lost_percent, -1),"                                                      \
	" 1000 * (coalesce(json_extract(params, '$.duration_s'), 0) + coalesce(json_extract(params, '$.omit_s'), 0))," \
	" round, combo, want_client_os, want_server_os"

static void run_row(sqlite3_stmt *s, struct tb_run_row *r)
{
	r->id = sqlite3_column_int64(s, 0);
	r->matrix_id = sqlite3_column_int64(s, 1);
	r->seq = sqlite3_column_int(s, 2);
	r->cell = sqlite3_column_int(s, 3);
	r->repeat = sqlite3_column_int(s, 4);
	r->client = st_col_text(s, 5);
	r->server = st_col_text(s, 6);
	r->link = st_col_text(s, 7);
	r->server_address = st_col_text(s, 8);
	r->protocol = st_col_text(s, 9);
	r->direction = st_col_text(s, 10);
	r->params = st_col_text(s, 11);
	r->state = st_col_text(s, 12);
	r->error_class = st_col_text_or_null(s, 13);
	r->error_message = st_col_text_or_null(s, 14);
	r->client_os = st_col_text_or_null(s, 15);
	r->server_os = st_col_text_or_null(s, 16);
	r->client_version = st_col_text_or_null(s, 17);
	r->server_version = st_col_text_or_null(s, 18);
	r->client_command = st_col_text_or_null(s, 19);
	r->server_command = st_col_text_or_null(s, 20);
	r->port = sqlite3_column_int(s, 21);
	r->client_pid = (long)sqlite3_column_int64(s, 22);
	r->server_pid = (long)sqlite3_column_int64(s, 23);
	r->cookie = st_col_text_or_null(s, 24);
	r->client_exit = sqlite3_column_int(s, 25);
	r->server_exit = sqlite3_column_int(s, 26);
	r->started_ms = sqlite3_column_int64(s, 27);
	r->finished_ms = sqlite3_column_int64(s, 28);
	r->attempts = sqlite3_column_int(s, 29);
	r->summary = st_col_text_or_null(s, 30);
	r->sender_bps = sqlite3_column_double(s, 31);
	r->receiver_bps = sqlite3_column_double(s, 32);
	r->retransmits = sqlite3_column_int64(s, 33);
	r->lost_percent = sqlite3_column_double(s, 34);
	r->duration_ms = sqlite3_column_int(s, 35);
	r->round = sqlite3_column_int(s, 36);
	r->combo = sqlite3_column_int(s, 37);
	r->want_client_os = st_col_text_or_null(s, 38);
	r->want_server_os = st_col_text_or_null(s, 39);
}

int tb_store_run_each(struct tb_store *st, int64_t matrix_id, const char *state, tb_run_row_fn fn, void *cls,
		      struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_run_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " RUN_COLS " FROM runs WHERE matrix_id = ?1 AND (?2 IS NULL OR state = ?2)"
			  " ORDER BY seq",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	st_bind_text(s, 2, state);
	while (sqlite3_step(s) == SQLITE_ROW) {
		run_row(s, &r);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_run_recent_pids(struct tb_store *st, int64_t matrix_id, const char *host, long *pids, int max, int *n,
			     struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	if ((rc = st_prep(st,
			  "SELECT CASE WHEN client = ?2 THEN coalesce(client_pid, 0) ELSE 0 END,"
			  " CASE WHEN server = ?2 THEN coalesce(server_pid, 0) ELSE 0 END FROM runs"
			  " WHERE matrix_id = ?1 AND (client = ?2 OR server = ?2) AND started_ms IS NOT NULL"
			  " ORDER BY started_ms DESC LIMIT ?3",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	st_bind_text(s, 2, host);
	sqlite3_bind_int(s, 3, max);
	while (sqlite3_step(s) == SQLITE_ROW)
		for (int c = 0; c < 2 && *n < max; c++)
			if (sqlite3_column_int64(s, c) > 0)
				pids[(*n)++] = (long)sqlite3_column_int64(s, c);
	st_finish(st, s);
	return 0;
}

int tb_store_run_get(struct tb_store *st, int64_t run_id, tb_run_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_run_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT " RUN_COLS " FROM runs WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, run_id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		run_row(s, &r);
		fn(cls, &r);
		rc = 0;
	} else {
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no run with id %lld", (long long)run_id);
	}
	st_finish(st, s);
	return rc;
}

int tb_store_run_first_commands(struct tb_store *st, int64_t matrix_id, tb_run_commands_fn fn, void *cls,
				struct tb_error *err)
{
	struct tb_run_commands c;
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT r.cell, r.id, r.client_command, r.server_command FROM runs r WHERE r.matrix_id = ?1"
			  " AND r.seq = (SELECT min(x.seq) FROM runs x WHERE x.matrix_id = ?1 AND x.cell = r.cell)"
			  " ORDER BY r.cell",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, matrix_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		c.cell = sqlite3_column_int(s, 0);
		c.run_id = sqlite3_column_int64(s, 1);
		c.client_command = st_col_text_or_null(s, 2);
		c.server_command = st_col_text_or_null(s, 3);
		fn(cls, &c);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_run_each_pair(struct tb_store *st, const struct tb_matrix_filter *f, const char *client,
			   const char *server, const char *protocol, const char *direction, int64_t lo, int64_t hi,
			   tb_run_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_run_row r;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " RUN_COLS " FROM runs WHERE client = ?4 AND server = ?5 AND protocol = ?6"
			  " AND direction = ?7 AND matrix_id BETWEEN ?8 AND ?9 AND matrix_id IN"
			  " (SELECT m.id FROM matrices m WHERE" FILTER_WHERE " AND m.id BETWEEN ?8 AND ?9)"
			  " ORDER BY matrix_id DESC, seq",
			  &s, err)) != 0)
		return rc;
	bind_filter(s, f);
	st_bind_text(s, 4, client);
	st_bind_text(s, 5, server);
	st_bind_text(s, 6, protocol);
	st_bind_text(s, 7, direction);
	sqlite3_bind_int64(s, 8, lo);
	sqlite3_bind_int64(s, 9, hi);
	while (sqlite3_step(s) == SQLITE_ROW) {
		run_row(s, &r);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

static const char update_run_sql[] =
	"UPDATE runs SET state = ?, error_class = ?, error_message = ?, client_os = ?, server_os = ?,"
	" client_version = ?, server_version = ?, client_command = ?, server_command = ?, port = ?,"
	" client_pid = ?, server_pid = ?, cookie = ?, client_exit = ?, server_exit = ?, started_ms = ?,"
	" finished_ms = ?, attempts = ?, summary = ?, sender_bps = ?, receiver_bps = ?, retransmits = ?,"
	" lost_percent = ? WHERE id = ?";

static void bind_run_update(sqlite3_stmt *s, const struct tb_run_row *r)
{
	st_bind_text(s, 1, r->state);
	st_bind_text(s, 2, r->error_class);
	st_bind_text(s, 3, r->error_message);
	st_bind_text(s, 4, r->client_os);
	st_bind_text(s, 5, r->server_os);
	st_bind_text(s, 6, r->client_version);
	st_bind_text(s, 7, r->server_version);
	st_bind_text(s, 8, r->client_command);
	st_bind_text(s, 9, r->server_command);
	bind_i64_or_null(s, 10, r->port, 0);
	bind_i64_or_null(s, 11, r->client_pid, 0);
	bind_i64_or_null(s, 12, r->server_pid, 0);
	st_bind_text(s, 13, r->cookie);
	bind_i64_or_null(s, 14, r->client_exit, -1);
	bind_i64_or_null(s, 15, r->server_exit, -1);
	bind_i64_or_null(s, 16, r->started_ms, 0);
	bind_i64_or_null(s, 17, r->finished_ms, 0);
	sqlite3_bind_int(s, 18, r->attempts);
	st_bind_text(s, 19, r->summary);
	bind_real_or_null(s, 20, r->sender_bps);
	bind_real_or_null(s, 21, r->receiver_bps);
	bind_i64_or_null(s, 22, r->retransmits < 0 ? -1 : r->retransmits, -1);
	bind_real_or_null(s, 23, r->lost_percent);
	sqlite3_bind_int64(s, 24, r->id);
}

int tb_store_run_update(struct tb_store *st, const struct tb_run_row *r, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, update_run_sql, &s, err)) != 0)
		return rc;
	bind_run_update(s, r);
	return st_finish_write(st, s, err);
}

int tb_store_run_finish(struct tb_store *st, const struct tb_run_row *r, const struct tb_interval_row *iv, size_t niv,
			const struct tb_raw_row *raw, size_t nraw, struct tb_error *err)
{
	sqlite3_stmt *s = NULL;
	char sql[256];
	int rc;

	pthread_mutex_lock(&st->lock);
	if ((rc = raw_exec(st, "BEGIN IMMEDIATE", err)) != 0)
		goto out;
	snprintf(sql, sizeof(sql),
		 "DELETE FROM intervals WHERE run_id = %lld; DELETE FROM raw_outputs WHERE run_id = %lld",
		 (long long)r->id, (long long)r->id);
	if ((rc = raw_exec(st, sql, err)) != 0)
		goto rollback;
	if (sqlite3_prepare_v2(st->db, "INSERT INTO intervals (run_id, side, seq, data) VALUES (?,?,?,?)", -1, &s,
			       NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "preparing intervals");
		goto rollback;
	}
	for (size_t i = 0; i < niv; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, r->id);
		st_bind_text(s, 2, iv[i].side);
		sqlite3_bind_int(s, 3, iv[i].seq);
		st_bind_text(s, 4, iv[i].data);
		if (sqlite3_step(s) != SQLITE_DONE) {
			rc = st_db_fail(st, err, "storing an interval");
			goto rollback;
		}
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(st->db, "INSERT INTO raw_outputs (run_id, side, stream, data) VALUES (?,?,?,?)", -1, &s,
			       NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "preparing raw outputs");
		goto rollback;
	}
	for (size_t i = 0; i < nraw; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, r->id);
		st_bind_text(s, 2, raw[i].side);
		st_bind_text(s, 3, raw[i].stream);
		sqlite3_bind_blob64(s, 4, raw[i].data != NULL ? raw[i].data : "", raw[i].len, SQLITE_TRANSIENT);
		if (sqlite3_step(s) != SQLITE_DONE) {
			rc = st_db_fail(st, err, "storing raw output");
			goto rollback;
		}
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(st->db, update_run_sql, -1, &s, NULL) != SQLITE_OK) {
		rc = st_db_fail(st, err, "preparing a run update");
		goto rollback;
	}
	bind_run_update(s, r);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = st_db_fail(st, err, "storing a run");
		goto rollback;
	}
	sqlite3_finalize(s);
	s = NULL;
	if ((rc = raw_exec(st, "COMMIT", err)) == 0)
		goto out;
rollback:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
out:
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tb_store_matrix_interrupt(struct tb_store *st, const char *reason, int64_t now, tb_run_row_fn fn, void *cls,
			      struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_run_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT " RUN_COLS " FROM runs WHERE state = 'running' ORDER BY id", &s, err)) != 0)
		return rc;
	while (sqlite3_step(s) == SQLITE_ROW) {
		run_row(s, &r);
		if (fn != NULL)
			fn(cls, &r);
	}
	st_finish(st, s);
	if ((rc = st_prep(st,
			  "UPDATE runs SET state = 'interrupted', error_class = 'interrupted', error_message = ?,"
			  " finished_ms = ? WHERE state = 'running'",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, reason);
	sqlite3_bind_int64(s, 2, now * 1000);
	if ((rc = st_finish_write(st, s, err)) != 0)
		return rc;
	if ((rc = st_prep(st,
			  "UPDATE matrices SET state = 'interrupted', error_code = 'interrupted', error_message = ?"
			  " WHERE state IN ('queued', 'running')",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, reason);
	return st_finish_write(st, s, err);
}

/* ---- intervals and raw output ---- */

int tb_store_interval_each(struct tb_store *st, int64_t run_id, tb_interval_row_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_interval_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT side, seq, data FROM intervals WHERE run_id = ? ORDER BY side, seq", &s, err)) !=
	    0)
		return rc;
	sqlite3_bind_int64(s, 1, run_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.side = st_col_text(s, 0);
		r.seq = sqlite3_column_int(s, 1);
		r.data = st_col_text(s, 2);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

int tb_store_raw_get(struct tb_store *st, int64_t run_id, const char *side, const char *stream, tb_raw_row_fn fn,
		     void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_raw_row r;
	int rc;

	if ((rc = st_prep(st, "SELECT data FROM raw_outputs WHERE run_id = ? AND side = ? AND stream = ?", &s, err)) !=
	    0)
		return rc;
	sqlite3_bind_int64(s, 1, run_id);
	st_bind_text(s, 2, side);
	st_bind_text(s, 3, stream);
	if (sqlite3_step(s) == SQLITE_ROW) {
		r.side = side;
		r.stream = stream;
		r.data = sqlite3_column_blob(s, 0);
		r.len = (size_t)sqlite3_column_bytes(s, 0);
		fn(cls, &r);
		rc = 0;
	} else {
		rc = TB_ERR_NOT_FOUND;
	}
	st_finish(st, s);
	if (rc == TB_ERR_NOT_FOUND) {
		int known;

		if ((rc = st_prep(st, "SELECT 1 FROM runs WHERE id = ?", &s, err)) != 0)
			return rc;
		sqlite3_bind_int64(s, 1, run_id);
		known = sqlite3_step(s) == SQLITE_ROW;
		st_finish(st, s);
		if (!known)
			return tb_fail(err, TB_ERR_NOT_FOUND, "id", "no run with id %lld", (long long)run_id);
		return tb_fail(err, TB_ERR_NOT_FOUND, "side", "run %lld has no %s %s stored (it has not run yet?)",
			       (long long)run_id, side, stream);
	}
	return rc;
}
