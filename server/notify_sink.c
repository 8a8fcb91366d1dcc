/* notify_sink.c - a sink: its settings, and a message as the HTTP request
 * its template wants (generic JSON, ntfy, Slack, Matrix), signed when the
 * sink has an HMAC key.  See notify_internal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "crypto.h"
#include "notify_internal.h"
#include "timeutil.h"
#include "validate.h"
#include "wipe.h"

static const char *const templates[] = {"json", "ntfy", "slack", "matrix", NULL};

static int known_template(const char *t)
{
	for (int i = 0; templates[i] != NULL; i++)
		if (strcmp(templates[i], t) == 0)
			return 1;
	return 0;
}

/* An optional absolute path field holding a secret file (checked now). */
static int path_field(const json_t *sink, const char *dir, const char *key, json_t *out, struct tb_error *err)
{
	const json_t *v = json_object_get(sink, key);
	int rc;

	if (v == NULL || json_is_null(v)) {
		json_object_set_new(out, key, json_null());
		return 0;
	}
	if (!json_is_string(v) || strlen(json_string_value(v)) == 0 || strlen(json_string_value(v)) > 1000 ||
	    tb_text_refused(json_string_value(v), strlen(json_string_value(v))) >= 0)
		return tb_fail(err, TB_ERR_INVALID, key, "%s must name a file in the secrets directory", key);
	if ((rc = nf_secret_check(json_string_value(v), dir, key, err)) != 0) {
		err->code = TB_ERR_INVALID;
		return TB_ERR_INVALID;
	}
	json_object_set(out, key, (json_t *)v);
	return 0;
}

int nf_sink_parse(const json_t *sink, const char *dir, json_t **out, struct tb_error *err)
{
	static const char *const fields[] = {"type",       "template",           "url", "url_file", "hmac_key_file",
					     "token_file", "allow_private_host", NULL};
	const char *type = "webhook", *tmpl = "json", *url = NULL, *allow = NULL;
	char host[256];
	json_t *o;
	int rc;

	*out = NULL;
	if (!json_is_object(sink))
		return tb_fail(err, TB_ERR_INVALID, "sink", "sink must be an object: {type, template, url, ...}");
	if (json_is_string(json_object_get(sink, "type")) &&
	    strcmp(json_string_value(json_object_get(sink, "type")), "email") == 0)
		return nf_email_parse(sink, dir, out, err);
	if ((rc = tb_json_only(sink, fields, err)) != 0 || (rc = tb_json_string(sink, "type", 0, &type, err)) != 0 ||
	    (rc = tb_json_string(sink, "template", 0, &tmpl, err)) != 0 ||
	    (rc = tb_json_string(sink, "url", 0, &url, err)) != 0 ||
	    (rc = tb_json_string(sink, "allow_private_host", 0, &allow, err)) != 0)
		return rc;
	if (type == NULL)
		type = "webhook";
	if (tmpl == NULL)
		tmpl = "json";
	if (strcmp(type, "webhook") != 0)
		return tb_fail(err, TB_ERR_INVALID, "sink.type", "sink type must be webhook or email, got \"%.32s\"",
			       type);
	if (!known_template(tmpl))
		return tb_fail(err, TB_ERR_INVALID, "sink.template",
			       "template must be json, ntfy, slack or matrix, got \"%.32s\"", tmpl);
	if ((url != NULL) ==
	    (json_object_get(sink, "url_file") != NULL && !json_is_null(json_object_get(sink, "url_file"))))
		return tb_fail(err, TB_ERR_INVALID, "sink.url",
			       "a sink needs url or url_file (a 0600 file holding a secret URL), not both");
	if (url != NULL && (rc = nf_url_check(url, 0, "sink.url", host, sizeof(host), err)) != 0)
		return rc;
	if (url != NULL && strcmp(tmpl, "matrix") == 0 &&
	    (strlen(url) < 20 || strcmp(url + strlen(url) - 20, "/send/m.room.message") != 0))
		return tb_fail(err, TB_ERR_INVALID, "sink.url",
			       "a matrix sink's url ends in /_matrix/client/v3/rooms/ROOM/send/m.room.message");
	if (allow != NULL && (strlen(allow) == 0 || strlen(allow) > 253 || !tb_valid_address(allow)))
		return tb_fail(err, TB_ERR_INVALID, "sink.allow_private_host",
			       "allow_private_host must be the URL's host name or address");
	if (allow != NULL && url != NULL && strcasecmp(allow, host) != 0)
		return tb_fail(err, TB_ERR_INVALID, "sink.allow_private_host",
			       "allow_private_host (%.64s) must name the URL's host (%.64s)", allow, host);
	o = json_pack("{s:s, s:s, s:s?}", "type", type, "template", tmpl, "url", url);
	if (o == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = path_field(sink, dir, "url_file", o, err)) != 0 ||
	    (rc = path_field(sink, dir, "hmac_key_file", o, err)) != 0 ||
	    (rc = path_field(sink, dir, "token_file", o, err)) != 0) {
		if (err->field[0] != '\0' && strncmp(err->field, "sink.", 5) != 0) {
			char f[sizeof(err->field)];

			snprintf(f, sizeof(f), "sink.%s", err->field);
			snprintf(err->field, sizeof(err->field), "%s", f);
		}
		json_decref(o);
		return rc;
	}
	json_object_set_new(o, "allow_private_host", allow != NULL ? json_string(allow) : json_null());
	*out = o;
	return 0;
}

/* ---- the request ---- */

/* "Name: value" ("Name:" for an empty value: curl then sends no such header) */
static int add_header(struct nf_request *rq, const char *name, const char *value)
{
	char line[NF_SECRET_MAX + 64];
	struct curl_slist *h;

	snprintf(line, sizeof(line), "%s:%s%s", name, value[0] != '\0' ? " " : "", value);
	h = curl_slist_append(rq->headers, line);
	tb_wipe(line, sizeof(line));
	if (h == NULL)
		return TB_ERR_NOMEM;
	rq->headers = h;
	return 0;
}

/* A header value from free text: control characters become spaces. */
static void header_text(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < len; i++)
		out[i] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? ' ' : in[i];
	out[i] = '\0';
}

static int is_bad(const char *trigger)
{
	return strcmp(trigger, "matrix.ended") != 0 && strcmp(trigger, "host.up") != 0 &&
	       strcmp(trigger, "idle.poweroff") != 0 && strcmp(trigger, "test") != 0;
}

/* The body (and its headers) for the template. */
static int format_body(const char *tmpl, int64_t delivery, json_t *msg, struct nf_request *rq)
{
	const char *title = json_string_value(json_object_get(msg, "title"));
	const char *text = json_string_value(json_object_get(msg, "text"));
	const char *trigger = json_string_value(json_object_get(msg, "trigger"));
	const char *url = json_string_value(json_object_get(msg, "url"));
	char both[1400], hv[1100];
	json_t *b = NULL;

	title = title != NULL ? title : "testbedd";
	text = text != NULL ? text : "";
	trigger = trigger != NULL ? trigger : "test";
	rq->method = "POST";
	if (strcmp(tmpl, "ntfy") == 0) {
		header_text(title, hv, sizeof(hv));
		rq->body = strdup(text);
		if (rq->body == NULL || add_header(rq, "Title", hv) != 0 ||
		    add_header(rq, "Priority", is_bad(trigger) ? "high" : "default") != 0 ||
		    add_header(rq, "Tags", is_bad(trigger) ? "warning,testbedd" : "white_check_mark,testbedd") != 0 ||
		    add_header(rq, "Content-Type", "text/plain; charset=utf-8") != 0)
			return TB_ERR_NOMEM;
		/* ntfy opens Click when the notification is tapped */
		if (url != NULL) {
			header_text(url, hv, sizeof(hv));
			if (add_header(rq, "Click", hv) != 0)
				return TB_ERR_NOMEM;
		}
		rq->len = strlen(rq->body);
		return 0;
	}
	snprintf(both, sizeof(both), strcmp(tmpl, "slack") == 0 ? "*%s*\n%s" : "%s\n%s", title, text);
	if (strcmp(tmpl, "slack") == 0)
		b = json_pack("{s:s}", "text", both);
	else if (strcmp(tmpl, "matrix") == 0)
		b = json_pack("{s:s, s:s}", "msgtype", "m.text", "body", both);
	else if ((b = json_deep_copy(msg)) != NULL)
		json_object_set_new(b, "delivery", json_integer(delivery));
	if (strcmp(tmpl, "matrix") == 0) {
		/* PUT .../send/m.room.message/{txnId}: the delivery id makes a
		 * retry of a message that did arrive a no-op */
		char *u = malloc(strlen(rq->url) + 40);

		if (u == NULL) {
			json_decref(b);
			return TB_ERR_NOMEM;
		}
		sprintf(u, "%s/testbedd-%lld", rq->url, (long long)delivery);
		tb_wipe(rq->url, strlen(rq->url));
		free(rq->url);
		rq->url = u;
		rq->method = "PUT";
	}
	rq->body = b != NULL ? json_dumps(b, JSON_COMPACT) : NULL;
	json_decref(b);
	if (rq->body == NULL || add_header(rq, "Content-Type", "application/json") != 0)
		return TB_ERR_NOMEM;
	rq->len = strlen(rq->body);
	return 0;
}

/* X-Testbedd-Timestamp and X-Testbedd-Signature: sha256=HMAC(key, "TS.BODY"). */
static int sign(struct nf_request *rq, const char *key, struct tb_error *err)
{
	char ts[32], hex[2 * TB_SHA256_LEN + 1], sig[2 * TB_SHA256_LEN + 8];
	uint8_t mac[TB_SHA256_LEN];
	size_t tl;
	char *data;
	int rc;

	snprintf(ts, sizeof(ts), "%lld", (long long)tb_now());
	tl = strlen(ts);
	if ((data = malloc(tl + 1 + rq->len)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	memcpy(data, ts, tl);
	data[tl] = '.';
	memcpy(data + tl + 1, rq->body, rq->len);
	rc = tb_hmac_sha256(key, strlen(key), data, tl + 1 + rq->len, mac);
	free(data);
	if (rc != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot compute the HMAC");
	tb_hex(mac, sizeof(mac), hex);
	snprintf(sig, sizeof(sig), "sha256=%s", hex);
	if (add_header(rq, "X-Testbedd-Timestamp", ts) != 0 || add_header(rq, "X-Testbedd-Signature", sig) != 0)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

/* The URL (from url, or read from url_file) and the guard's allowance. */
static int resolve_url(const json_t *sink, const char *dir, struct nf_request *rq, struct tb_error *err)
{
	const char *url = json_string_value(json_object_get(sink, "url"));
	const char *file = json_string_value(json_object_get(sink, "url_file"));
	const char *allow = json_string_value(json_object_get(sink, "allow_private_host"));
	char buf[NF_SECRET_MAX];
	int rc;

	if (url == NULL && file == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "sink.url", "the sink has no url");
	if (url == NULL && (rc = nf_secret_read(file, dir, "sink.url_file", buf, sizeof(buf), err)) != 0)
		return rc;
	rq->url = strdup(url != NULL ? url : buf);
	tb_wipe(buf, sizeof(buf));
	if (rq->url == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	/* a URL from a file is not shown in messages: it may be the secret */
	if ((rc = nf_url_check(rq->url, 0, url != NULL ? "sink.url" : "sink.url_file", rq->host, sizeof(rq->host),
			       url != NULL ? err : NULL)) != 0)
		return url != NULL ? rc
				   : tb_fail(err, TB_ERR_CONFIG, "sink.url_file",
					     "the URL in %s is not an http(s) URL with a host", file);
	if (allow != NULL && strcasecmp(allow, rq->host) == 0)
		snprintf(rq->allow, sizeof(rq->allow), "%s", allow);
	return 0;
}

int nf_request_build(const json_t *sink, const char *dir, int64_t delivery, const char *message, struct nf_request *rq,
		     struct tb_error *err)
{
	const char *tmpl = json_string_value(json_object_get(sink, "template"));
	const char *hkey = json_string_value(json_object_get(sink, "hmac_key_file"));
	const char *tok = json_string_value(json_object_get(sink, "token_file"));
	char secret[NF_SECRET_MAX], bearer[NF_SECRET_MAX + 8], id[32];
	json_t *msg;
	int rc;

	memset(rq, 0, sizeof(*rq));
	if ((rc = resolve_url(sink, dir, rq, err)) != 0)
		return rc;
	if ((msg = json_loads(message, 0, NULL)) == NULL)
		return tb_fail(err, TB_ERR_INTERNAL, "", "a stored message is not JSON");
	rc = format_body(tmpl != NULL ? tmpl : "json", delivery, msg, rq);
	json_decref(msg);
	snprintf(id, sizeof(id), "%lld", (long long)delivery);
	if (rc != 0 || add_header(rq, "User-Agent", "testbedd/" TB_VERSION) != 0 ||
	    add_header(rq, "X-Testbedd-Delivery", id) != 0 || add_header(rq, "Expect", "") != 0)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (hkey != NULL) {
		if ((rc = nf_secret_read(hkey, dir, "sink.hmac_key_file", secret, sizeof(secret), err)) == 0)
			rc = sign(rq, secret, err);
		tb_wipe(secret, sizeof(secret));
		if (rc != 0)
			return rc;
	}
	if (tok != NULL) {
		if ((rc = nf_secret_read(tok, dir, "sink.token_file", secret, sizeof(secret), err)) == 0) {
			snprintf(bearer, sizeof(bearer), "Bearer %s", secret);
			if (add_header(rq, "Authorization", bearer) != 0)
				rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		}
		tb_wipe(secret, sizeof(secret));
		tb_wipe(bearer, sizeof(bearer));
		if (rc != 0)
			return rc;
	}
	return 0;
}

void nf_request_free(struct nf_request *rq)
{
	for (struct curl_slist *h = rq->headers; h != NULL; h = h->next)
		tb_wipe(h->data, strlen(h->data));
	curl_slist_free_all(rq->headers);
	if (rq->url != NULL)
		tb_wipe(rq->url, strlen(rq->url));
	free(rq->url);
	free(rq->body);
	memset(rq, 0, sizeof(*rq));
}
