/*
 * notify_internal.h - what notify_*.c share (see notify.h).  Ownership:
 * json_t arguments are borrowed; what a function returns is the caller's.
 */
#ifndef TB_NOTIFY_INTERNAL_H
#define TB_NOTIFY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "error.h"

/* ---- triggers (notify_rules.c) ---- */

/* One bit per trigger, in the order of nf_trigger_names. */
extern const char *const nf_trigger_names[];
unsigned nf_trigger_bit(const char *name); /* 0: unknown */

/* What a host.state event needs from the notifier: the reachability it
 * had before (updated to now; "" when not seen) and whether an action or a
 * matrix holds the host. */
struct nf_context {
	const char *(*swap_reach)(void *cls, const char *host, const char *now);
	int (*held)(void *cls, const char *host);
	void *cls;
};

/* The triggers an event (the bus's JSON: id, at, type, host, matrix, data)
 * fires, as bits. */
unsigned nf_classify(const json_t *event, const struct nf_context *ctx);

/* A rule as the worker uses it. */
struct nf_rule {
	int64_t id;
	char name[64];
	int enabled;
	unsigned triggers;
	json_t *spec; /* owned: hosts, matrices, sink */
};
/* 1 when the rule wants an event that fired bits. */
int nf_rule_wants(const struct nf_rule *r, const json_t *event, unsigned bits);
/* The message (a JSON text, malloc'd) for the first trigger of bits the
 * rule has, with the event (NULL for a test message from actor).  base:
 * testbedd's public URL (no trailing slash) or NULL; when given, the message
 * has "url" (the page of the run, matrix or hosts) and the text ends with it. */
char *nf_message(const struct nf_rule *r, unsigned bits, const json_t *event, const char *actor, const char *base);
/* The name of the first trigger of bits ("test" for 0). */
const char *nf_first_trigger(unsigned bits);

/* ---- secrets (notify_secret.c) ---- */

#define NF_SECRET_MAX 4096
/* Check a secret file as nf_secret_read does, the secret itself wiped at
 * once: inside dir (the secrets directory, by name or DIR/NAME, no symbolic
 * link: a rule cannot name any other file testbedd can read), a regular
 * file owned by testbedd's user, not readable or writable by group or
 * others, one non-empty line. */
int nf_secret_check(const char *path, const char *dir, const char *field, struct tb_error *err);
/* Read a secret file (the same checks, on the open file: crypto_secret.h)
 * into buf, one line without its newline.  The caller wipes buf. */
int nf_secret_read(const char *path, const char *dir, const char *field, char *buf, size_t sz, struct tb_error *err);

/* ---- a message as a request (notify_sink.c) ---- */

struct nf_request {
	char *url;                  /* malloc'd; may hold a secret (url_file) */
	const char *method;         /* "POST", "PUT" */
	struct curl_slist *headers; /* may hold a secret (wiped when freed) */
	char *body;                 /* malloc'd */
	size_t len;
	char host[256];  /* the URL's host, for the guard */
	char allow[256]; /* allow_private_host, or "" */
};
/* Build the request the sink's template wants for delivery id of message
 * (reads the sink's secret files). */
int nf_request_build(const json_t *sink, const char *dir, int64_t delivery, const char *message, struct nf_request *rq,
		     struct tb_error *err);
void nf_request_free(struct nf_request *rq);
/* Check a sink object (the rule's "sink"), into the canonical copy *out. */
int nf_sink_parse(const json_t *sink, const char *dir, json_t **out, struct tb_error *err);

/* ---- the HTTP call (notify_guard.c) ---- */

/* 1 when an address may not be reached without an allowance (loopback,
 * link-local, unspecified, multicast, the metadata addresses); what it is
 * into why. */
struct sockaddr;
int nf_addr_refused(const struct sockaddr *sa, char *why, size_t len);
/* Scheme and host of an http(s) URL, or with email of an smtp(s) one
 * (host into host); 0 or TB_ERR_INVALID. */
int nf_url_check(const char *url, int email, const char *field, char *host, size_t hostlen, struct tb_error *err);

/* The guard of one call: allow (the rule's allow_private_host matched the
 * URL's host), why an address was refused, and what stops a call. */
struct nf_guard {
	int allow;
	char refused[160];
	int (*abort_fn)(void *cls);
	void *cls;
};
/* A curl handle set up behind the guard g (which must outlive it): the
 * protocols ("http,https" or "smtp,smtps"), no proxy, no redirects, 5 s to
 * connect, 15 s in all, errors into ebuf.  NULL when libcurl cannot start. */
CURL *nf_guarded_handle(struct nf_guard *g, const char *protocols, char ebuf[CURL_ERROR_SIZE]);
/* The outcome of curl_easy_perform on such a handle: 0, or TB_ERR_FORBIDDEN
 * (the guard refused), TB_ERR_CANCELED (stopping), TB_ERR_UNREACHABLE. */
int nf_guarded_result(const struct nf_guard *g, CURLcode cc, const char *ebuf, struct tb_error *err);
/* Send rq: its HTTP status into *status (0: none).  0 on a 2xx reply, else
 * TB_ERR_REMOTE or as nf_guarded_result, with a message.  Blocks up to 15 s. */
int nf_http_send(const struct nf_request *rq, int (*abort_fn)(void *cls), void *cls, int *status, struct tb_error *err);

/* ---- email (notify_email.c) ---- */

/* Check an email sink (type "email") into the canonical copy *out. */
int nf_email_parse(const json_t *sink, const char *dir, json_t **out, struct tb_error *err);
/* Send message (delivery id) as a mail through the sink's SMTP server
 * (STARTTLS required on smtp:// unless the sink says tls "none"; smtps://
 * is TLS from the start); reads the password file.  As nf_http_send, with
 * the server's last SMTP reply code in *status. */
int nf_email_send(const json_t *sink, const char *dir, int64_t delivery, const char *message,
		  int (*abort_fn)(void *cls), void *cls, int *status, struct tb_error *err);

#endif /* TB_NOTIFY_INTERNAL_H */
