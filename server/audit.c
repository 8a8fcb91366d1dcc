/* audit.c - the audit log.  See audit.h. */
#include "audit.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "services.h"
#include "store.h"
#include "events.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"

/* Copy at most max - 1 bytes of s into buf, cut at a UTF-8 character
 * boundary (jansson refuses a cut character); NULL reads as "". */
static const char *cap(const char *s, char *buf, size_t max)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n < max)
		return s != NULL ? s : "";
	n = max - 1;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/* Every TB_AUDIT_PRUNE_EVERY records (and at the first of a process), apply
 * the retention and count what went. */
static void retain(struct tb_services *sv, int64_t now)
{
	static atomic_uint records;
	struct tb_error err = {0};
	int64_t deleted = 0;

	if (atomic_fetch_add(&records, 1u) % TB_AUDIT_PRUNE_EVERY != 0)
		return;
	if (tb_store_audit_prune(sv->store, TB_AUDIT_KEEP_ROWS, now - (int64_t)TB_AUDIT_KEEP_DAYS * 86400, &deleted,
				 &err) != 0)
		tb_warn("audit", "cannot prune the audit log: %s", err.message);
	else if (deleted > 0)
		tb_metrics_pruned(sv->metrics, "audit", (unsigned long long)deleted);
}

void tb_audit_record(struct tb_services *sv, const struct tb_audit_row *in, const char *host)
{
	struct tb_error err = {0};
	char at[TB_TIME_MAX];
	char actor[TB_AUDIT_SHORT_MAX], remote[TB_AUDIT_SHORT_MAX], method[TB_AUDIT_SHORT_MAX],
		action[TB_AUDIT_SHORT_MAX], result[TB_AUDIT_SHORT_MAX], path[TB_AUDIT_PATH_MAX],
		target[TB_AUDIT_TARGET_MAX], hostbuf[TB_AUDIT_TARGET_MAX];
	struct tb_audit_row row = *in;

	row.actor = cap(in->actor, actor, sizeof(actor));
	row.remote = cap(in->remote, remote, sizeof(remote));
	row.method = cap(in->method, method, sizeof(method));
	row.path = cap(in->path, path, sizeof(path));
	row.action = cap(in->action, action, sizeof(action));
	row.target = cap(in->target, target, sizeof(target));
	row.result = cap(in->result, result, sizeof(result));
	if (host != NULL)
		host = cap(host, hostbuf, sizeof(hostbuf));
	if (tb_store_audit_append(sv->store, &row, &err) != 0)
		tb_error("audit", "cannot record %s %s: %s", row.method, row.path, err.message);
	retain(sv, row.at);
	tb_time_format(row.at, at);
	tb_events_publish(sv->events, "audit", host, 0,
			  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "at", at, "actor", row.actor,
				    "remote", row.remote, "method", row.method, "path", row.path, "action", row.action,
				    "target", row.target, "status", row.status, "result", row.result));
}

void tb_audit_self(struct tb_services *sv, const char *actor, const char *action, const char *host, const char *result)
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

	tb_audit_record(sv, &row, host);
}
