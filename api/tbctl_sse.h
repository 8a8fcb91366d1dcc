/*
 * tbctl_sse.h - tbctl's one reader of testbedd's server-sent-event streams:
 * `tbctl events` and `tbctl matrix watch` follow GET /api/v1/events through
 * it, `tbctl console` a console's stream (GET /api/v1/hosts/NAME/console).
 *
 * It parses records (id, event, data; heartbeats skipped; lines over 64 KiB
 * dropped), keeps where to resume (the last id delivered, or the id a
 * live-only stream starts after: its first "stream" record), never delivers
 * a record twice across reconnects (one without an id, such as "reset",
 * which says events were missed, or a console's "state", always), and keeps
 * the body of an error reply to say why the server refused.  The caller owns the connection: tbctl_sse_begin() gives a CURL
 * easy handle with every option set, which it performs (easy or multi) and
 * hands back to tbctl_sse_end().
 *
 * Not thread-safe: one reader per stream, used from one thread.
 */
#ifndef TBCTL_SSE_H
#define TBCTL_SSE_H

#include <curl/curl.h>

#include "tbctl.h"

struct tbctl_sse;

/* A record to act on: type ("run.state"), id (0 when it had none), data
 * (the record's JSON text). */
typedef void (*tbctl_sse_fn)(void *cls, const char *type, long long id, const char *data);

/* last_id: where to resume (-1: from now, 0: every kept event). */
struct tbctl_sse *tbctl_sse_new(tbctl_sse_fn on_event, void *cls, long long last_id);
void tbctl_sse_free(struct tbctl_sse *s);

/* A handle for one connection to the events of query ("matrix=12",
 * "type=host.state&host=left", "" for all): the bearer token, Accept,
 * Last-Event-ID, TLS, no proxy (it would see the token), no redirect, and
 * 40 s of silence as a dead stream (a heartbeat comes every 15 s).  NULL when
 * out of memory. */
CURL *tbctl_sse_begin(struct tbctl_sse *s, const struct tbctl_ctx *ctx, const char *query);
/* The same for any stream at path under the base URL
 * ("/api/v1/hosts/left/console"). */
CURL *tbctl_sse_begin_path(struct tbctl_sse *s, const struct tbctl_ctx *ctx, const char *path);
/* What the messages call the stream ("event stream" unless set; what must
 * outlive s). */
void tbctl_sse_set_what(struct tbctl_sse *s, const char *what);
/* Free what begin made (the handle too). */
void tbctl_sse_end(struct tbctl_sse *s, CURL *c);

long tbctl_sse_status(const struct tbctl_sse *s);    /* of the last connection; 0: none */
int tbctl_sse_subscribed(const struct tbctl_sse *s); /* 200 and every header read */
long long tbctl_sse_last_id(const struct tbctl_sse *s);

/* After a connection ended: when the server refused the stream for good
 * (400, 401, 403, 404) print why on stderr and return tbctl's exit code;
 * else TBCTL_EXIT_OK (lost or unavailable: the caller retries). */
int tbctl_sse_refused(const struct tbctl_sse *s);

/* The reason of an error reply that is worth retrying (429, 503), "" if
 * none: for the line that says the stream will be resumed. */
const char *tbctl_sse_why(struct tbctl_sse *s);

#endif /* TBCTL_SSE_H */
