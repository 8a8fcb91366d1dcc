/*
 * tbctl_http.h - tbctl's HTTP client: one blocking JSON request to testbedd.
 *
 * Ownership: struct tbctl_http only borrows its strings (the caller keeps them
 * alive for as long as it makes requests).  A struct tbctl_reply owns its body
 * and its parsed JSON; tbctl_reply_free() releases both and may be called on a
 * zeroed or already freed reply.
 *
 * Every request has a connect timeout and a total timeout, follows no
 * redirect, speaks only http and https, and reads at most TBCTL_BODY_MAX
 * bytes of reply.  The caller calls curl_global_init() once before the first
 * request (main.c does).
 */
#ifndef TBCTL_HTTP_H
#define TBCTL_HTTP_H

#include <stddef.h>

#include <jansson.h>

#define TBCTL_BODY_MAX (16u * 1024u * 1024u)
#define TBCTL_ERRBUF_MAX 256

struct tbctl_http {
	const char *base_url; /* "http://127.0.0.1:8080", no trailing '/' */
	const char *token;    /* bearer token, NULL for unauthenticated calls */
	long connect_timeout_ms;
	long timeout_ms;
};

struct tbctl_reply {
	long status; /* HTTP status; 0 when no reply arrived */
	char *body;  /* NUL-terminated, may be NULL */
	size_t body_len;
	json_t *json;                           /* parsed body, NULL when empty or not JSON */
	char retry_after[32];                   /* the Retry-After header, "" if none */
	char allow[128];                        /* the Allow header, "" if none */
	char transport_error[TBCTL_ERRBUF_MAX]; /* why no reply came, "" if one did */
	int timed_out;                          /* the request hit a timeout */
};

/*
 * Send METHOD base_url+path with body (NULL: no body) as JSON and fill *reply.
 * path starts with '/' and is already escaped (see tbctl_http_escape).
 * Returns 0 when an HTTP reply arrived (whatever its status), -1 when none did
 * (reply->transport_error says why) or on out of memory.  Blocks for at most
 * the configured timeouts.
 */
int tbctl_http_request(const struct tbctl_http *h, const char *method, const char *path, const json_t *body,
		       struct tbctl_reply *reply);

void tbctl_reply_free(struct tbctl_reply *reply);

/* Apply TESTBEDD_CA_FILE (a PEM file of CAs to trust for https) to a CURL
 * handle (void * so that this header needs no curl.h). */
void tbctl_http_tls(void *curl);

/* Percent-encode s for use as one path segment or query value.  Returns a
 * malloc'ed string the caller frees, NULL on out of memory. */
char *tbctl_http_escape(const char *s);

#endif /* TBCTL_HTTP_H */
