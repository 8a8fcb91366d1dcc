/*
 * store_notify.h - the notification rules, their outbox (one row per
 * message to send, kept after it went out as the delivery log) and the id
 * of the last event the notifier read.  SQL in store_notify.c.
 *
 * Same rules as store.h: thread-safe, every call blocks on disk I/O, rows
 * handed to callbacks are valid during the callback only and the callback
 * runs under the store's lock (it must not call the store).
 */
#ifndef TB_STORE_NOTIFY_H
#define TB_STORE_NOTIFY_H

#include <stdint.h>

#include "store.h"

#define TB_NOTIFY_FAILING_AFTER 3 /* failed attempts of a message that mark its rule failing */

struct tb_notify_rule_row {
	int64_t id;
	const char *name;
	const char *spec; /* the rule's JSON (triggers, filters, sink) */
	int64_t created_at, updated_at;
	int failing;            /* its newest message given up on or failed TB_NOTIFY_FAILING_AFTER times, none
				 * delivered since: derived from the outbox, not kept */
	const char *last_error; /* that message's last error; NULL: none */
	int64_t pending;        /* messages not sent yet */
};
typedef void (*tb_notify_rule_fn)(void *cls, const struct tb_notify_rule_row *r);

int tb_store_notify_rule_insert(struct tb_store *st, const char *name, const char *spec, int64_t *id,
				struct tb_error *err);
/* TB_ERR_NOT_FOUND when there is no rule id. */
int tb_store_notify_rule_update(struct tb_store *st, int64_t id, const char *name, const char *spec,
				struct tb_error *err);
/* The rule and its deliveries.  TB_ERR_NOT_FOUND when there is none. */
int tb_store_notify_rule_delete(struct tb_store *st, int64_t id, struct tb_error *err);
/* Every rule by id (id 0), or one: fn is not called when there is none. */
int tb_store_notify_rule_each(struct tb_store *st, int64_t id, tb_notify_rule_fn fn, void *cls, struct tb_error *err);

struct tb_notify_delivery_row {
	int64_t id, rule_id;
	int64_t event_id; /* 0: a test message */
	const char *trigger;
	const char *message; /* the message's JSON (sink.h: what the sinks format) */
	const char *state;   /* pending, delivered, failed */
	int attempts;
	int64_t next_at_ms; /* a pending one's next attempt (unix ms) */
	int64_t created_at, finished_at;
	int last_status;        /* the receiver's HTTP status, 0: none */
	const char *last_error; /* NULL: none */
};
typedef void (*tb_notify_delivery_fn)(void *cls, const struct tb_notify_delivery_row *r);

/* Queue a message for rule_id, due now. */
int tb_store_notify_delivery_add(struct tb_store *st, int64_t rule_id, int64_t event_id, const char *trigger,
				 const char *message, int64_t *id, struct tb_error *err);
/* A rule's deliveries, newest first, at most limit. */
int tb_store_notify_delivery_each(struct tb_store *st, int64_t rule_id, int limit, tb_notify_delivery_fn fn, void *cls,
				  struct tb_error *err);
/* Every rule's deliveries, newest first, at most limit (the status page's recent notifications). */
int tb_store_notify_delivery_recent(struct tb_store *st, int limit, tb_notify_delivery_fn fn, void *cls,
				    struct tb_error *err);
/* The oldest pending message of each rule (what goes out next, in order). */
int tb_store_notify_delivery_heads(struct tb_store *st, tb_notify_delivery_fn fn, void *cls, struct tb_error *err);
/* Record an attempt: state pending (then next_at_ms), delivered or failed. */
int tb_store_notify_delivery_attempt(struct tb_store *st, int64_t id, const char *state, int attempts,
				     int64_t next_at_ms, int status, const char *error, struct tb_error *err);
/* Every pending message due at now_ms at the latest (after a restart). */
int tb_store_notify_delivery_due_now(struct tb_store *st, int64_t now_ms, struct tb_error *err);
/* Keep the newest keep finished deliveries of each rule. */
int tb_store_notify_delivery_prune(struct tb_store *st, int keep, struct tb_error *err);

/* The last event read (*found 0 when never set). */
int tb_store_notify_cursor_get(struct tb_store *st, int64_t *last, int *found, struct tb_error *err);
int tb_store_notify_cursor_set(struct tb_store *st, int64_t last, struct tb_error *err);

#endif /* TB_STORE_NOTIFY_H */
