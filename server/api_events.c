/* api_events.c - GET /events (server-sent events) and GET /metrics. */
#include "api.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "outbuf.h"
#include "hosts.h"
#include "auth.h"
#include "events.h"
#include "validate.h"
#include "metrics.h"
#include "ssh.h"
#include "notify.h"

static int valid_types(const char *s)
{
	if (*s == '\0' || strlen(s) > 200)
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && *s != '.' && *s != ',' && *s != '_')
			return 0;
	return 1;
}

int api_events_stream(struct tb_request *rq, struct tb_reply *rp)
{
	const char *since = tb_req_query(rq, "since"), *last = tb_req_header(rq, "Last-Event-ID");
	const char *matrix = tb_req_query(rq, "matrix");
	int rc;

	rp->stream_since = -1;
	/* Last-Event-ID (a reconnecting EventSource) wins over ?since= */
	if (last != NULL && tb_parse_id(last, 0, &rp->stream_since) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "Last-Event-ID", "Last-Event-ID must be an event id");
	if (last == NULL && since != NULL && tb_parse_id(since, 0, &rp->stream_since) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "since", "since must be an event id (0 replays all kept)");
	rp->stream_filter.host = tb_req_query(rq, "host");
	rp->stream_filter.types = tb_req_query(rq, "type");
	if (rp->stream_filter.types != NULL && !valid_types(rp->stream_filter.types))
		return tb_fail(&rp->err, TB_ERR_INVALID, "type",
			       "type is a comma list of event types, a trailing . for a prefix: host.state,audit");
	if (matrix != NULL && tb_parse_id(matrix, 1, &rp->stream_filter.matrix) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "matrix", "matrix must be a matrix id");
	/* the audit log is the admin's: others do not get its entries live either */
	rp->stream_filter.hide_audit = rq->who->level < TB_LEVEL_ADMIN;
	/* the stream ends with its token, and with the session it was opened in */
	rp->stream_filter.owner = rq->who->token_id;
	rp->stream_filter.session = rq->who->session_id;
	rp->stream_filter.ends_at = rq->who->expires_at;
	/* refused here, the 429 is counted and logged as one (the subscription
	 * checks again, atomically) */
	if ((rc = tb_events_check_cap(rq->sv->events, rq->who->token_id, &rp->err)) != 0)
		return rc;
	rp->stream = 1;
	rp->status = 200;
	return 0;
}

static void host_gauge(void *cls, const char *machine, const char *reachability, const char *os)
{
	struct tb_outbuf *b = cls;

	/* Names and OS names are [a-z0-9_-] (inventory.c): nothing to escape. */
	tb_outbuf_printf(b, "testbedd_host_up{host=\"%s\",os=\"%s\"} %d\n", machine, os != NULL ? os : "",
			 strcmp(reachability, "up") == 0 ? 1 : 0);
}

/* The ssh session pool's counters (ssh.h): how the hosts' commands got their sessions. */
static void ssh_metrics(struct tb_ssh_pool *pool, struct tb_outbuf *b)
{
	struct tb_ssh_pool_stats st;

	tb_ssh_pool_stats(pool, &st);
	tb_outbuf_printf(
		b,
		"# HELP testbedd_ssh_sessions_opened_total SSH sessions made (connect, key exchange, login).\n"
		"# TYPE testbedd_ssh_sessions_opened_total counter\ntestbedd_ssh_sessions_opened_total %lu\n"
		"# HELP testbedd_ssh_session_reuses_total Commands that ran on a pooled session.\n"
		"# TYPE testbedd_ssh_session_reuses_total counter\ntestbedd_ssh_session_reuses_total %lu\n"
		"# HELP testbedd_ssh_standby_commands_total Commands that started in a standby shell (no "
		"channel open, no shell start: a matrix's next run).\n"
		"# TYPE testbedd_ssh_standby_commands_total counter\ntestbedd_ssh_standby_commands_total %lu\n"
		"# HELP testbedd_ssh_sessions_discarded_total Sessions closed as broken, expired or surplus.\n"
		"# TYPE testbedd_ssh_sessions_discarded_total counter\ntestbedd_ssh_sessions_discarded_total %lu\n"
		"# HELP testbedd_ssh_sessions_idle Sessions idle in the pool now.\n"
		"# TYPE testbedd_ssh_sessions_idle gauge\ntestbedd_ssh_sessions_idle %u\n",
		st.connects, st.reuses, st.standbys, st.discards, st.idle);
}

int api_metrics(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_outbuf b = {0};

	tb_metrics_render(rq->sv->metrics, rq->sv->events, &b);
	tb_outbuf_printf(&b, "# HELP testbedd_host_up 1 when an OS persona of the host answers ssh, else 0.\n"
			     "# TYPE testbedd_host_up gauge\n");
	tb_hosts_each_state(rq->sv->hosts, host_gauge, &b);
	ssh_metrics(tb_hosts_pool(rq->sv->hosts), &b);
	tb_notify_metrics(rq->sv->notify, &b);
	rp->text_len = b.len;
	rp->text = b.nomem ? NULL : tb_outbuf_take(&b);
	tb_outbuf_free(&b);
	if (rp->text == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	rp->status = 200;
	return 0;
}
