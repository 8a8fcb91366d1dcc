/* tbctl_sse.c - the event stream reader: see tbctl_sse.h. */
#include "tbctl_sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_http.h"
#include "tbctl_table.h"

struct tbctl_sse {
	tbctl_sse_fn on_event;
	void *cls;
	char line[65536];
	size_t len;
	int overflow; /* the current line is over 64 KiB: dropped */
	long long id; /* the current record's */
	int had_id;   /* it had an id line */
	char type[64];
	char *data;
	long long last_id; /* where to resume; -1: from now */
	long status;
	int headers_done;
	char err_body[1024];
	size_t err_len;
	char why[256];
	struct curl_slist *headers;
	const char *what; /* "event stream", "console stream": for messages */
};

struct tbctl_sse *tbctl_sse_new(tbctl_sse_fn on_event, void *cls, long long last_id)
{
	struct tbctl_sse *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->on_event = on_event;
	s->cls = cls;
	s->last_id = last_id;
	s->what = "event stream";
	return s;
}

void tbctl_sse_free(struct tbctl_sse *s)
{
	if (s == NULL)
		return;
	curl_slist_free_all(s->headers);
	free(s->data);
	free(s);
}

/* The end of a record: deliver it unless it was delivered before. */
static void end_record(struct tbctl_sse *s)
{
	if (strcmp(s->type, "stream") == 0) {
		/* where a live-only stream starts: resume from there */
		if (s->id > s->last_id)
			s->last_id = s->id;
	} else if (s->data != NULL && (!s->had_id || s->id > s->last_id)) {
		/* a record without an id (the bus's "reset", a console's "state")
		 * is never one seen before */
		s->on_event(s->cls, s->type, s->id, s->data);
		if (s->id > 0)
			s->last_id = s->id;
	}
	free(s->data);
	s->data = NULL;
	s->id = 0;
	s->had_id = 0;
	s->type[0] = '\0';
}

/* One line of the stream, without its newline. */
static void on_line(struct tbctl_sse *s, const char *line)
{
	if (line[0] == '\0')
		end_record(s);
	else if (line[0] == ':')
		return; /* heartbeat */
	else if (strncmp(line, "id: ", 4) == 0) {
		s->id = strtoll(line + 4, NULL, 10);
		s->had_id = 1;
	} else if (strncmp(line, "event: ", 7) == 0)
		snprintf(s->type, sizeof(s->type), "%s", line + 7);
	else if (strncmp(line, "data: ", 6) == 0) {
		free(s->data);
		s->data = strdup(line + 6);
	}
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *cls)
{
	struct tbctl_sse *s = cls;
	size_t n = size * nmemb;

	if (s->status != 200) { /* an error reply: keep its body */
		size_t room = sizeof(s->err_body) - 1 - s->err_len, k = n < room ? n : room;

		memcpy(s->err_body + s->err_len, data, k);
		s->err_len += k;
		s->err_body[s->err_len] = '\0';
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			s->line[s->len] = '\0';
			if (!s->overflow)
				on_line(s, s->line);
			s->len = 0;
			s->overflow = 0;
		} else if (s->len < sizeof(s->line) - 1) {
			s->line[s->len++] = data[i];
		} else {
			s->overflow = 1;
		}
	}
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *cls)
{
	struct tbctl_sse *s = cls;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		const char *sp = memchr(data, ' ', n);

		s->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
		s->headers_done = 0;
	} else if ((n == 2 && data[0] == '\r') || (n == 1 && data[0] == '\n')) {
		s->headers_done = 1;
	}
	return n;
}

CURL *tbctl_sse_begin(struct tbctl_sse *s, const struct tbctl_ctx *ctx, const char *query)
{
	char path[1536];

	snprintf(path, sizeof(path), "/api/v1/events%s%s", query[0] ? "?" : "", query);
	return tbctl_sse_begin_path(s, ctx, path);
}

CURL *tbctl_sse_begin_path(struct tbctl_sse *s, const struct tbctl_ctx *ctx, const char *path)
{
	CURL *c = curl_easy_init();
	char url[2048], auth[256], last[64];

	curl_slist_free_all(s->headers);
	s->headers = NULL;
	if (c == NULL)
		return NULL;
	snprintf(url, sizeof(url), "%s%s", ctx->http.base_url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", ctx->http.token ? ctx->http.token : "");
	s->headers = curl_slist_append(s->headers, auth);
	if (s->headers != NULL)
		s->headers = curl_slist_append(s->headers, "Accept: text/event-stream");
	if (s->headers != NULL && s->last_id >= 0) {
		snprintf(last, sizeof(last), "Last-Event-ID: %lld", s->last_id);
		s->headers = curl_slist_append(s->headers, last);
	}
	if (s->headers == NULL) {
		curl_easy_cleanup(c);
		return NULL;
	}
	s->status = 0;
	s->headers_done = 0;
	s->len = 0;
	s->id = 0;
	s->had_id = 0;
	s->type[0] = '\0';
	s->overflow = 0;
	s->err_len = 0;
	s->err_body[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	tbctl_http_tls(c);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ctx->http.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 40L);
	return c;
}

void tbctl_sse_end(struct tbctl_sse *s, CURL *c)
{
	if (c != NULL)
		curl_easy_cleanup(c);
	curl_slist_free_all(s->headers);
	s->headers = NULL;
}

long tbctl_sse_status(const struct tbctl_sse *s)
{
	return s->status;
}

int tbctl_sse_subscribed(const struct tbctl_sse *s)
{
	return s->status == 200 && s->headers_done;
}

long long tbctl_sse_last_id(const struct tbctl_sse *s)
{
	return s->last_id;
}

/* The message of the JSON error in the body kept, into buf. */
static void error_message(const struct tbctl_sse *s, char *buf, size_t len)
{
	json_t *e = json_loads(s->err_body, 0, NULL);
	const char *msg = tbctl_jstr(json_object_get(e, "error"), "message");

	snprintf(buf, len, "%s", msg != NULL ? msg : s->err_body);
	json_decref(e);
}

int tbctl_sse_refused(const struct tbctl_sse *s)
{
	char msg[1024];

	if (s->status != 400 && s->status != 401 && s->status != 403 && s->status != 404)
		return TBCTL_EXIT_OK;
	error_message(s, msg, sizeof(msg));
	fprintf(stderr, "tbctl: the server refused the %s (HTTP %ld): ", s->what, s->status);
	tbctl_print_safe(stderr, msg);
	fputc('\n', stderr);
	return s->status == 400 || s->status == 404 ? TBCTL_EXIT_REFUSED : TBCTL_EXIT_AUTH;
}

const char *tbctl_sse_why(struct tbctl_sse *s)
{
	s->why[0] = '\0';
	if (s->status >= 400 && s->err_len > 0)
		error_message(s, s->why, sizeof(s->why));
	return s->why;
}

void tbctl_sse_set_what(struct tbctl_sse *s, const char *what)
{
	s->what = what;
}
