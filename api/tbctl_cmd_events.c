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

#include "tbctl_http.h"
#include "tbctl_sse.h"
#include "tbctl_table.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct printer {
	const struct tbctl_ctx *ctx;
};

static void print_event(void *cls, const char *type, long long id, const char *data)
{
	struct printer *p = cls;
	json_t *j;
	const json_t *d;

	if (p->ctx->args->json) {
		printf("%s\n", data);
		fflush(stdout);
		return;
	}
	j = json_loads(data, 0, NULL);
	d = json_object_get(j, "data");
	if (strcmp(type, "reset") == 0) {
		printf("-- events up to %lld are no longer kept: some were missed\n", tbctl_jint(j, "oldest", 0) - 1);
	} else if (strcmp(type, "host.state") == 0) {
		const char *os = tbctl_jstr(d, "os");
		const json_t *e = json_object_get(d, "last_error");

		printf("%lld %s host.state %s %s%s%s%s%s\n", id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-",
		       tbctl_jstr(j, "host") ? tbctl_jstr(j, "host") : "-",
		       tbctl_jstr(d, "reachability") ? tbctl_jstr(d, "reachability") : "?", os ? " as " : "",
		       os ? os : "", e && json_is_object(e) ? ": " : "",
		       e && json_is_object(e) && tbctl_jstr(e, "message") ? tbctl_jstr(e, "message") : "");
	} else if (strcmp(type, "audit") == 0) {
		printf("%lld %s audit %s %s %s -> %lld %s\n", id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-",
		       tbctl_jstr(d, "actor") ? tbctl_jstr(d, "actor") : "-",
		       tbctl_jstr(d, "action") ? tbctl_jstr(d, "action") : "-",
		       tbctl_jstr(d, "target") ? tbctl_jstr(d, "target") : "", tbctl_jint(d, "status", 0),
		       tbctl_jstr(d, "result") ? tbctl_jstr(d, "result") : "");
	} else {
		char *text = json_dumps(d, JSON_COMPACT);

		printf("%lld %s %s %s %s\n", id, tbctl_jstr(j, "at") ? tbctl_jstr(j, "at") : "-", type,
		       tbctl_jstr(j, "host") ? tbctl_jstr(j, "host") : "-", text ? text : "");
		free(text);
	}
	fflush(stdout);
	json_decref(j);
}

static int xferinfo(void *cls, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)cls, (void)a, (void)b, (void)c, (void)d;
	return stop ? 1 : 0;
}

int tbctl_cmd_events(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	struct printer p = {ctx};
	struct tbctl_sse *s = tbctl_sse_new(print_event, &p, a->since != NULL ? strtoll(a->since, NULL, 10) : -1);
	char *type = a->type != NULL ? tbctl_http_escape(a->type) : NULL;
	char *host = a->host != NULL ? tbctl_http_escape(a->host) : NULL;
	char query[1024];
	long wait_s = 1;
	int rc = TBCTL_EXIT_OK;
	struct sigaction sa;

	if (s == NULL || (a->type != NULL && type == NULL) || (a->host != NULL && host == NULL)) {
		tbctl_sse_free(s);
		free(type);
		free(host);
		return TBCTL_EXIT_SERVER;
	}
	snprintf(query, sizeof(query), "%s%s%s%s%s", type ? "type=" : "", type ? type : "", type && host ? "&" : "",
		 host ? "host=" : "", host ? host : "");
	free(type);
	free(host);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		CURL *c = tbctl_sse_begin(s, ctx, query);
		CURLcode cr;

		if (c == NULL) {
			rc = TBCTL_EXIT_SERVER;
			break;
		}
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo);
		cr = curl_easy_perform(c);
		tbctl_sse_end(s, c);
		if (stop)
			break;
		if ((rc = tbctl_sse_refused(s)) != TBCTL_EXIT_OK)
			break;
		if (tbctl_sse_status(s) == 200)
			wait_s = 1; /* it was up: retry soon */
		fprintf(stderr, "tbctl: event stream %s (%s)", tbctl_sse_status(s) == 200 ? "lost" : "unavailable",
			cr != CURLE_OK ? curl_easy_strerror(cr) : "closed");
		if (tbctl_sse_why(s)[0] != '\0') {
			fputs(": ", stderr);
			tbctl_print_safe(stderr, tbctl_sse_why(s));
		}
		fprintf(stderr, "; resuming after event %lld in %ld s\n", tbctl_sse_last_id(s), wait_s);
		for (long i = 0; i < wait_s * 10 && !stop; i++) {
			struct timespec ts = {0, 100000000L};

			nanosleep(&ts, NULL);
		}
		wait_s = wait_s * 2 > 10 ? 10 : wait_s * 2;
	}
	tbctl_sse_free(s);
	return rc;
}
