/* api_console.c - a host's serial console: its stream (SSE of its own),
 * input, the writer lease and the kept boot logs.  See console.h. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "console.h"
#include "validate.h"

static struct tb_console_who who_of(const struct tb_request *rq)
{
	return (struct tb_console_who){rq->who->name, rq->who->token_id, rq->who->level >= TB_LEVEL_ADMIN};
}

int api_console_stream(struct tb_request *rq, struct tb_reply *rp)
{
	const char *from = tb_req_query(rq, "from"), *last = tb_req_header(rq, "Last-Event-ID");
	int64_t pos = -1;

	/* Last-Event-ID (a reconnecting EventSource: the offset after the last
	 * bytes it got) wins over ?from= */
	if (last != NULL && tb_parse_id(last, 0, &pos) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "Last-Event-ID", "Last-Event-ID must be a byte offset");
	if (last == NULL && from != NULL && tb_parse_id(from, 0, &pos) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "from", "from must be a byte offset (0: all kept)");
	if (tb_console_open_feed(rq->sv->consoles, rq->args[0], pos, &rp->feed, &rp->err) != 0)
		return rp->err.code;
	rp->status = 200;
	return 0;
}

/* The bytes of a named key; NULL when unknown ("break" is not bytes). */
static const char *key_bytes(const char *key)
{
	static const char *const keys[][2] = {
		{"ctrl-c", "\x03"}, {"ctrl-d", "\x04"},  {"ctrl-z", "\x1a"}, {"ctrl-x", "\x18"},    {"ctrl-]", "\x1d"},
		{"esc", "\x1b"},    {"tab", "\t"},       {"enter", "\r"},    {"backspace", "\x7f"}, {"up", "\x1b[A"},
		{"down", "\x1b[B"}, {"right", "\x1b[C"}, {"left", "\x1b[D"},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i][0]) == 0)
			return keys[i][1];
	return NULL;
}

int api_console_input(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"data", "text", "key", NULL};
	const char *data = NULL, *text = NULL, *key = NULL;
	struct tb_console_who who = who_of(rq);
	unsigned char *buf;
	long n;
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "data", 0, &data, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "text", 0, &text, &rp->err)) != 0 ||
	    (rc = tb_json_string(rq->body, "key", 0, &key, &rp->err)) != 0)
		return rc;
	if ((data != NULL) + (text != NULL) + (key != NULL) != 1)
		return tb_fail(&rp->err, TB_ERR_INVALID, "data",
			       "give one of data (base64 bytes), text (UTF-8) or key (a named key)");
	if (key != NULL && strcmp(key, "break") == 0) {
		rc = tb_console_break(rq->sv->consoles, rq->args[0], &who, &rp->err);
	} else if (key != NULL) {
		const char *b = key_bytes(key);

		if (b == NULL)
			return tb_fail(&rp->err, TB_ERR_INVALID, "key",
				       "key must be one of ctrl-c, ctrl-d, ctrl-z, ctrl-x, ctrl-], esc, tab, enter, "
				       "backspace, up, down, left, right, break; got \"%.32s\"",
				       key);
		rc = tb_console_input(rq->sv->consoles, rq->args[0], &who, b, strlen(b), &rp->err);
	} else if (text != NULL) {
		rc = tb_console_input(rq->sv->consoles, rq->args[0], &who, text, strlen(text), &rp->err);
	} else {
		size_t len = strlen(data);

		if (len > (TB_CONSOLE_INPUT_MAX / 3 + 1) * 4)
			return tb_fail(&rp->err, TB_ERR_TOO_LARGE, "data", "at most %d bytes of input a request",
				       TB_CONSOLE_INPUT_MAX);
		if ((buf = malloc(len / 4 * 3 + 3)) == NULL)
			return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
		if ((n = tb_b64_decode(data, buf)) < 0)
			rc = tb_fail(&rp->err, TB_ERR_INVALID, "data", "data must be base64");
		else
			rc = tb_console_input(rq->sv->consoles, rq->args[0], &who, buf, (size_t)n, &rp->err);
		free(buf);
	}
	if (rc != 0)
		return rc;
	rp->status = 204;
	return 0;
}

int api_console_lease_take(struct tb_request *rq, struct tb_reply *rp)
{
	static const char *const fields[] = {"takeover", NULL};
	struct tb_console_who who = who_of(rq);
	json_t *t = json_object_get(rq->body, "takeover");
	char from[64];
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_json_only(rq->body, fields, &rp->err)) != 0)
		return rc;
	if (t != NULL && !json_is_boolean(t))
		return tb_fail(&rp->err, TB_ERR_INVALID, "takeover", "takeover must be true or false");
	if ((rc = tb_console_lease_take(rq->sv->consoles, rq->args[0], &who, json_is_true(t), from, &rp->err)) != 0)
		return rc;
	if (from[0])
		snprintf(rp->audit_target, sizeof(rp->audit_target), "%.64s (taken over from %.48s)", rq->args[0],
			 from);
	return tb_reply_json(rp, 200,
			     json_pack("{s:o}", "lease", tb_console_lease_json(rq->sv->consoles, rq->args[0])));
}

int api_console_lease_drop(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_console_who who = who_of(rq);
	int rc;

	snprintf(rp->audit_target, sizeof(rp->audit_target), "%s", rq->args[0]);
	if ((rc = tb_console_lease_drop(rq->sv->consoles, rq->args[0], &who, &rp->err)) != 0)
		return rc;
	rp->status = 204;
	return 0;
}

int api_console_logs(struct tb_request *rq, struct tb_reply *rp)
{
	json_t *list;
	int rc;

	if ((rc = tb_console_logs_json(rq->sv->consoles, rq->args[0], &list, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "logs", list));
}

int api_console_log_get(struct tb_request *rq, struct tb_reply *rp)
{
	int rc;

	if ((rc = tb_console_log_read(rq->sv->consoles, rq->args[0], rq->args[1], &rp->text, &rp->text_len,
				      &rp->err)) != 0)
		return rc;
	rp->content_type = "application/octet-stream";
	rp->status = 200;
	return 0;
}
