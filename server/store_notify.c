/* store_notify.c - notification rules, their outbox and the notifier's
 * place on the bus: see store_notify.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "store_notify.h"
#include "timeutil.h"

/* ---- rules ---- */

int tb_store_notify_rule_insert(struct tb_store *st, const char *name, const char *spec, int64_t *id,
				struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT INTO notify_rules (name, spec, created_at, updated_at) VALUES (?, ?, ?, ?)", &s,
			  err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	st_bind_text(s, 2, spec);
	sqlite3_bind_int64(s, 3, tb_now());
	sqlite3_bind_int64(s, 4, tb_now());
	return st_finish_insert(st, s, "recording a notification rule", id, err);
}

/* Step a write of one row by id: TB_ERR_NOT_FOUND when none changed. */
static int write_one(struct tb_store *st, sqlite3_stmt *s, const char *what, struct tb_error *err)
{
	int rc = 0;

	if (sqlite3_step(s) != SQLITE_DONE)
		rc = st_db_fail(st, err, what);
	else if (sqlite3_changes(st->db) == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no such notification rule");
	st_finish(st, s);
	return rc;
}

int tb_store_notify_rule_update(struct tb_store *st, int64_t id, const char *name, const char *spec,
				struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE notify_rules SET name = ?, spec = ?, updated_at = ? WHERE id = ?", &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, name);
	st_bind_text(s, 2, spec);
	sqlite3_bind_int64(s, 3, tb_now());
	sqlite3_bind_int64(s, 4, id);
	return write_one(st, s, "changing a notification rule", err);
}

int tb_store_notify_rule_delete(struct tb_store *st, int64_t id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "DELETE FROM notify_deliveries WHERE rule_id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = st_finish_write(st, s, err)) != 0)
		return rc;
	if ((rc = st_prep(st, "DELETE FROM notify_rules WHERE id = ?", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	return write_one(st, s, "deleting a notification rule", err);
}

int tb_store_notify_rule_each(struct tb_store *st, int64_t id, tb_notify_rule_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	struct tb_notify_rule_row r;
	int rc;

	/* failing, from the outbox (sent in order per rule: every finished
	 * message is older than the pending ones): the newest message that was
	 * given up on, delivered, or is pending after ?2 failed attempts, is not
	 * a delivered one; its error (NULL: not failing, '': none said) */
	if ((rc = st_prep(
		     st,
		     "SELECT id, name, spec, created_at, updated_at,"
		     " (SELECT CASE WHEN d.state = 'delivered' THEN NULL ELSE coalesce(d.last_error, '') END"
		     " FROM notify_deliveries d WHERE d.rule_id = r.id AND (d.state != 'pending' OR d.attempts >= ?2)"
		     " ORDER BY d.id DESC LIMIT 1),"
		     " (SELECT count(*) FROM notify_deliveries d WHERE d.rule_id = r.id AND d.state = 'pending')"
		     " FROM notify_rules r WHERE ?1 = 0 OR id = ?1 ORDER BY id",
		     &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, TB_NOTIFY_FAILING_AFTER);
	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.name = st_col_text(s, 1);
		r.spec = st_col_text(s, 2);
		r.created_at = sqlite3_column_int64(s, 3);
		r.updated_at = sqlite3_column_int64(s, 4);
		r.failing = sqlite3_column_type(s, 5) != SQLITE_NULL;
		r.last_error = r.failing && *st_col_text(s, 5) != '\0' ? st_col_text(s, 5) : NULL;
		r.pending = sqlite3_column_int64(s, 6);
		fn(cls, &r);
	}
	st_finish(st, s);
	return 0;
}

/* ---- deliveries ---- */

int tb_store_notify_delivery_add(struct tb_store *st, int64_t rule_id, int64_t event_id, const char *trigger,
				 const char *message, int64_t *id, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "INSERT INTO notify_deliveries (rule_id, event_id, trigger, message, state, next_at_ms,"
			  " created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, rule_id);
	if (event_id != 0)
		sqlite3_bind_int64(s, 2, event_id);
	else
		sqlite3_bind_null(s, 2);
	st_bind_text(s, 3, trigger);
	st_bind_text(s, 4, message);
	sqlite3_bind_int64(s, 5, tb_now_ms());
	sqlite3_bind_int64(s, 6, tb_now());
	return st_finish_insert(st, s, "queueing a notification", id, err);
}

#define DELIVERY_COLS                                                                                    \
	"id, rule_id, coalesce(event_id, 0), trigger, message, state, attempts, next_at_ms, created_at," \
	" coalesce(finished_at, 0), coalesce(last_status, 0), last_error"

static void each_delivery(struct tb_store *st, sqlite3_stmt *s, tb_notify_delivery_fn fn, void *cls)
{
	struct tb_notify_delivery_row r;

	while (sqlite3_step(s) == SQLITE_ROW) {
		r.id = sqlite3_column_int64(s, 0);
		r.rule_id = sqlite3_column_int64(s, 1);
		r.event_id = sqlite3_column_int64(s, 2);
		r.trigger = st_col_text(s, 3);
		r.message = st_col_text(s, 4);
		r.state = st_col_text(s, 5);
		r.attempts = sqlite3_column_int(s, 6);
		r.next_at_ms = sqlite3_column_int64(s, 7);
		r.created_at = sqlite3_column_int64(s, 8);
		r.finished_at = sqlite3_column_int64(s, 9);
		r.last_status = sqlite3_column_int(s, 10);
		r.last_error = st_col_text_or_null(s, 11);
		fn(cls, &r);
	}
	st_finish(st, s);
}

int tb_store_notify_delivery_each(struct tb_store *st, int64_t rule_id, int limit, tb_notify_delivery_fn fn, void *cls,
				  struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " DELIVERY_COLS " FROM notify_deliveries WHERE rule_id = ? ORDER BY id DESC LIMIT ?",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, rule_id);
	sqlite3_bind_int(s, 2, limit);
	each_delivery(st, s, fn, cls);
	return 0;
}

int tb_store_notify_delivery_recent(struct tb_store *st, int limit, tb_notify_delivery_fn fn, void *cls,
				    struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT " DELIVERY_COLS " FROM notify_deliveries ORDER BY id DESC LIMIT ?", &s, err)) !=
	    0)
		return rc;
	sqlite3_bind_int(s, 1, limit);
	each_delivery(st, s, fn, cls);
	return 0;
}

int tb_store_notify_delivery_heads(struct tb_store *st, tb_notify_delivery_fn fn, void *cls, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "SELECT " DELIVERY_COLS " FROM notify_deliveries WHERE id IN (SELECT min(id) FROM"
			  " notify_deliveries WHERE state = 'pending' GROUP BY rule_id) ORDER BY id",
			  &s, err)) != 0)
		return rc;
	each_delivery(st, s, fn, cls);
	return 0;
}

int tb_store_notify_delivery_attempt(struct tb_store *st, int64_t id, const char *state, int attempts,
				     int64_t next_at_ms, int status, const char *error, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st,
			  "UPDATE notify_deliveries SET state = ?, attempts = ?, next_at_ms = ?, last_status = ?,"
			  " last_error = ?, finished_at = CASE WHEN ?1 = 'pending' THEN NULL ELSE ? END WHERE id = ?",
			  &s, err)) != 0)
		return rc;
	st_bind_text(s, 1, state);
	sqlite3_bind_int(s, 2, attempts);
	sqlite3_bind_int64(s, 3, next_at_ms);
	if (status != 0)
		sqlite3_bind_int(s, 4, status);
	else
		sqlite3_bind_null(s, 4);
	st_bind_text(s, 5, error);
	sqlite3_bind_int64(s, 6, tb_now());
	sqlite3_bind_int64(s, 7, id);
	return st_finish_write(st, s, err);
}

int tb_store_notify_delivery_due_now(struct tb_store *st, int64_t now_ms, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "UPDATE notify_deliveries SET next_at_ms = ? WHERE state = 'pending' AND next_at_ms > ?",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, now_ms);
	sqlite3_bind_int64(s, 2, now_ms);
	return st_finish_write(st, s, err);
}

int tb_store_notify_delivery_prune(struct tb_store *st, int keep, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	/* per rule, what is older than its keep-th newest finished delivery */
	if ((rc = st_prep(st,
			  "DELETE FROM notify_deliveries WHERE state != 'pending' AND id < (SELECT coalesce(("
			  "SELECT d.id FROM notify_deliveries d WHERE d.rule_id = notify_deliveries.rule_id"
			  " AND d.state != 'pending' ORDER BY d.id DESC LIMIT 1 OFFSET ?), 0))",
			  &s, err)) != 0)
		return rc;
	sqlite3_bind_int(s, 1, keep - 1);
	return st_finish_write(st, s, err);
}

/* ---- cursor ---- */

int tb_store_notify_cursor_get(struct tb_store *st, int64_t *last, int *found, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "SELECT last_event FROM notify_cursor WHERE id = 1", &s, err)) != 0)
		return rc;
	*found = sqlite3_step(s) == SQLITE_ROW;
	*last = *found ? sqlite3_column_int64(s, 0) : 0;
	st_finish(st, s);
	return 0;
}

int tb_store_notify_cursor_set(struct tb_store *st, int64_t last, struct tb_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = st_prep(st, "INSERT OR REPLACE INTO notify_cursor (id, last_event) VALUES (1, ?)", &s, err)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, last);
	return st_finish_write(st, s, err);
}
