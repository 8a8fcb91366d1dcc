/* audit.c - the audit log.  See audit.h. */
#include "audit.h"

#include <time.h>

#include "app.h"
#include "events.h"
#include "log.h"
#include "timeutil.h"

void tb_audit_record(struct tb_app *app, const struct tb_audit_row *row, const char *host)
{
	struct tb_error err = {0};
	char at[TB_TIME_MAX];

	if (tb_store_audit_append(app->store, row, &err) != 0)
		tb_error("audit", "cannot record %s %s: %s", row->method, row->path, err.message);
	tb_time_format(row->at, at);
	tb_events_publish(app->events, "audit", host, 0,
			  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "at", at, "actor", row->actor,
				    "remote", row->remote, "method", row->method, "path", row->path, "action", row->action,
				    "target", row->target, "status", row->status, "result", row->result));
}

void tb_audit_self(struct tb_app *app, const char *actor, const char *action, const char *host, const char *result)
{
	struct tb_audit_row row = {
		.at = (int64_t)time(NULL),
		.actor = actor,
		.remote = "testbedd",
		.method = "-",
		.path = "-",
		.action = action,
		.target = host != NULL ? host : "",
		.status = 0,
		.result = result,
	};

	tb_audit_record(app, &row, host);
}
