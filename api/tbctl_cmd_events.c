/*
 * tbctl_cmd_events.c - `tbctl events`: follow GET /api/v1/events, print one
 * line per event, and resume by itself after a disconnect (Last-Event-ID),
 * so that nothing is missed and nothing is printed twice.
 *
 * Blocks until interrupted (SIGINT/SIGTERM: exit 0), or until the server
 * refuses the stream (401/403: exit 4; 400: exit 2).  Reconnects after 1 s,
 * doubling up to 10 s while the server stays away.
 */
#include "tbctl.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct stream {
	const struct tbctl_ctx *ctx;
	char line[65536];
	size_t len;
	long long id;              /* the current record's id */
	char type[64];
	char *data;                /* the current record's data */
	long long last_id;         /* last printed: where to resume */
	long status;
	char err_body[1024];
	size_t err_len;
	int overflow;
};

static void print_event(struct stream *s)
{
	json_t *j;
	const json_t *d;

	if (s->ctx->args->json) {
		printf("%s\n", s->data);
		fflush(stdout);
		return;
	}
	j = json_loads(s->data, 0, NULL);
	d = json_object_get(j, "data");
	if (strcmp(s->type, "reset") == 0) {
		printf("-- events up to %lld are no longer kept: some were missed\n",
		       tbctl_jint(j, "oldest", 0) - 1);
	} else if (strcmp(s->type, "host.state") == 0) {
		const char *os = tbctl_jstr(d, "os");
		const json_t *e = json_object_get(d, "last_error");

		printf("%lld %s host.state %s %s%s%s%s%s\n", s->id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-",
		       tbctl_jstr(j, "host") ? tbctl_jstr(j, "host") : "-", tbctl_jstr(d, "reachability") ? tbctl_jstr(d, "reachability") : "?",
		       os ? " as " : "", os ? os : "", e && json_is_object(e) ? ": " : "",
		       e && json_is_object(e) && tbctl_jstr(e, "message") ? tbctl_jstr(e, "message") : "");
	} else if (strcmp(s->type, "audit") == 0) {
		printf("%lld %s audit %s %s %s -> %lld %s\n", s->id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-",
		       tbctl_jstr(d, "actor") ? tbctl_jstr(d, "actor") : "-", tbctl_jstr(d, "action") ? tbctl_jstr(d, "action") : "-",
		       tbctl_jstr(d, "target") ? tbctl_jstr(d, "target") : "", tbctl_jint(d, "status", 0),
		       tbctl_jstr(d, "result") ? tbctl_jstr(d, "result") : "");
	} else {
		char *text = json_dumps(d, JSON_COMPACT);

		printf("%lld %s %s %s %s\n", s->id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-", s->type,
		       tbctl_jstr(j, "host") ? tbctl_jstr(j, "host") : "-", text ? text : "");
		free(text);
	}
	fflush(stdout);
	json_decref(j);
}

/* One line of the stream (without its newline). */
static void on_line(struct stream *s, char *line)
{
	if (line[0] == '\0') {          /* end of a record */
		if (strcmp(s->type, "stream") == 0) {
			/* where a live stream starts: resume from there, print nothing */
			if (s->id > s->last_id)
				s->last_id = s->id;
		} else if (s->data != NULL && (s->id > s->last_id || strcmp(s->type, "reset") == 0)) {
			print_event(s);
			if (s->id > 0)
				s->last_id = s->id;
		}
		free(s->data);
		s->data = NULL;
		s->id = 0;
		s->type[0] = '\0';
		return;
	}
	if (line[0] == ':')
		return;                 /* heartbeat */
	if (strncmp(line, "id: ", 4) == 0)
		s->id = strtoll(line + 4, NULL, 10);
	else if (strncmp(line, "event: ", 7) == 0)
		snprintf(s->type, sizeof(s->type), "%s", line + 7);
	else if (strncmp(line, "data: ", 6) == 0) {
		free(s->data);
		s->data = strdup(line + 6);
	}
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *cls)
{
	struct stream *s = cls;
	size_t n = size * nmemb;

	if (stop)
		return 0;
	if (s->status != 200) {         /* an error reply: keep its body */
		size_t k = n < sizeof(s->err_body) - 1 - s->err_len ? n : sizeof(s->err_body) - 1 - s->err_len;

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
			s->overflow = 1;   /* a line longer than 64 KiB: dropped */
		}
	}
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *cls)
{
	struct stream *s = cls;

	if (strncmp(data, "HTTP/", 5) == 0) {
		const char *sp = strchr(data, ' ');

		s->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
	}
	return size * nmemb;
}

static int xferinfo(void *cls, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)cls, (void)a, (void)b, (void)c, (void)d;
	return stop ? 1 : 0;
}

int tbctl_cmd_events(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	struct stream *s = calloc(1, sizeof(*s));
	char url[2048], auth[256], last[64];
	long wait_s = 1;
	int rc = TBCTL_EXIT_OK;
	struct sigaction sa;

	if (s == NULL)
		return TBCTL_EXIT_SERVER;
	s->ctx = ctx;
	s->last_id = a->since != NULL ? strtoll(a->since, NULL, 10) : -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", ctx->http.token);
	while (!stop) {
		CURL *c = curl_easy_init();
		struct curl_slist *h = NULL;
		char *type = a->type != NULL ? tbctl_http_escape(a->type) : NULL;
		char *host = a->host != NULL ? tbctl_http_escape(a->host) : NULL;
		CURLcode cr;

		if (c == NULL) {
			rc = TBCTL_EXIT_SERVER;
			break;
		}
		snprintf(url, sizeof(url), "%s/api/v1/events?x=1%s%s%s%s", ctx->http.base_url, type ? "&type=" : "",
			 type ? type : "", host ? "&host=" : "", host ? host : "");
		free(type);
		free(host);
		h = curl_slist_append(h, auth);
		h = curl_slist_append(h, "Accept: text/event-stream");
		if (s->last_id >= 0) {
			snprintf(last, sizeof(last), "Last-Event-ID: %lld", s->last_id);
			h = curl_slist_append(h, last);
		}
		s->status = 0;
		s->len = 0;
		s->err_len = 0;
		curl_easy_setopt(c, CURLOPT_URL, url);
		tbctl_http_tls(c);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ctx->http.connect_timeout_ms);
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo);
		/* an idle stream carries a heartbeat every 15 s: 40 s of silence is a dead one */
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 40L);
		cr = curl_easy_perform(c);
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		if (stop)
			break;
		if (s->status == 401 || s->status == 403 || s->status == 400 || s->status == 404) {
			json_t *e = json_loads(s->err_body, 0, NULL);
			const char *msg = tbctl_jstr(json_object_get(e, "error"), "message");

			fprintf(stderr, "tbctl: the server refused the event stream (HTTP %ld): %s\n", s->status,
				msg != NULL ? msg : s->err_body);
			json_decref(e);
			rc = s->status == 400 || s->status == 404 ? TBCTL_EXIT_REFUSED : TBCTL_EXIT_AUTH;
			break;
		}
		if (s->status == 200)
			wait_s = 1;   /* it was up: retry soon */
		fprintf(stderr, "tbctl: event stream %s (%s); resuming after event %lld in %ld s\n",
			s->status == 200 ? "lost" : "unavailable", cr != CURLE_OK ? curl_easy_strerror(cr) : "closed",
			s->last_id, wait_s);
		for (long i = 0; i < wait_s * 10 && !stop; i++) {
			struct timespec ts = {0, 100000000L};

			nanosleep(&ts, NULL);
		}
		wait_s = wait_s * 2 > 10 ? 10 : wait_s * 2;
	}
	free(s->data);
	free(s);
	return rc;
}
