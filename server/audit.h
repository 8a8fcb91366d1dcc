/*
 * audit.h - the audit log: a record for every mutating request (the HTTP
 * edge) and for every change testbedd makes by itself (idle power-off, the
 * wake schedule), kept in the store and published as an "audit" event
 * (which only admins' streams carry).
 */
#ifndef TB_AUDIT_H
#define TB_AUDIT_H

#include "store.h"

struct tb_app;

/* Store row (a failure is logged) and publish it; host: the machine it is
 * about, for the event's host, or NULL. */
void tb_audit_record(struct tb_app *app, const struct tb_audit_row *row, const char *host);

/* A change testbedd made by itself: actor such as "idle" or "schedule",
 * action such as "host.power", on machine host; remote "testbedd", method
 * and path "-", status 0; result "ok" or an error code. */
void tb_audit_self(struct tb_app *app, const char *actor, const char *action, const char *host, const char *result);

#endif /* TB_AUDIT_H */
