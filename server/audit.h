/*
 * audit.h - the audit log: a record for every mutating request whose caller
 * was authenticated, or that a public route carried out (the HTTP edge), and
 * for every change testbedd makes by itself (idle power-off, the wake
 * schedule), kept in the store and published as an "audit" event
 * (which only admins' streams carry).
 */
#ifndef TB_AUDIT_H
#define TB_AUDIT_H

#include "store.h"

struct tb_services;

/* Every string of a row is capped (cut at a character boundary): a stranger's
 * long path cannot make a large row. */
#define TB_AUDIT_SHORT_MAX 65 /* actor, remote, method, action, result (bytes + NUL) */
#define TB_AUDIT_PATH_MAX 513
#define TB_AUDIT_TARGET_MAX 257

/* Retention: rows older than TB_AUDIT_KEEP_DAYS and all but the newest
 * TB_AUDIT_KEEP_ROWS are deleted, checked at the first record of a process
 * and every TB_AUDIT_PRUNE_EVERY records after (counted in /metrics as
 * testbedd_store_pruned_rows_total{table="audit"}). */
#define TB_AUDIT_KEEP_ROWS 100000
#define TB_AUDIT_KEEP_DAYS 180
#define TB_AUDIT_PRUNE_EVERY 100u

/* Store row (its strings capped; a failure is logged), apply the retention
 * now and then, and publish it; host: the machine it is about, for the
 * event's host, or NULL.  Blocks on the store. */
void tb_audit_record(struct tb_services *sv, const struct tb_audit_row *row, const char *host);

/* A change testbedd made by itself: actor such as "idle" or "schedule",
 * action such as "host.power", on machine host; remote "testbedd", method
 * and path "-", status 0; result "ok" or an error code. */
void tb_audit_self(struct tb_services *sv, const char *actor, const char *action, const char *host, const char *result);

#endif /* TB_AUDIT_H */
