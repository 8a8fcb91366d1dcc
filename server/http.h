/*
 * http.h - the HTTP edge: libmicrohttpd, the routing table, authentication
 * and roles, body limits, JSON in and out, static files, security headers,
 * and the audit of every mutating request.
 *
 * Handlers (api_*.c) never see libmicrohttpd: they get a struct tb_request
 * with the path arguments, the parsed JSON body and the caller, and fill a
 * struct tb_reply.  A handler returns 0 with rp->status/rp->body set, or a
 * negative tb_err with rp->err filled; the edge turns that error into
 * {"error":{"code","message","field"}} in one place.
 */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <stddef.h>

#include <jansson.h>

#include "auth.h"
#include "error.h"
#include "events.h"

struct tb_services;
struct tb_http;
struct tb_feed;

#define TB_ROUTE_MAX_ARGS 3

struct tb_request {
	struct tb_services *sv;
	const char *method;
	const char *path;                    /* decoded path, "/api/v1/hosts/left" */
	const char *args[TB_ROUTE_MAX_ARGS]; /* the {name} parts, decoded */
	json_t *body;                        /* parsed body (borrowed) or NULL */
	const struct tb_principal *who;      /* NULL on public routes */
	const char *remote;                  /* client address (behind a trusted proxy: its client) */
	int https;                           /* the client reached us over TLS (ours or a trusted proxy's) */
	void *edge;                          /* the edge's private state */
};

struct tb_reply {
	unsigned int status;
	json_t *body; /* owned by the reply; NULL: no body (204) */
	char *text;   /* or a non-JSON body (malloc'd, owned) ... */
	size_t text_len;
	const char *content_type;              /* ... of this type (static string) */
	const char *csp;                       /* a text reply's own CSP (static); NULL: the API's */
	char disposition[128];                 /* "" or a text reply's Content-Disposition */
	int stream;                            /* or an event stream (SSE) from stream_since */
	int64_t stream_since;                  /* -1: live only */
	struct tb_events_filter stream_filter; /* strings valid until the handler's request ends */
	struct tb_feed *feed;                  /* or a stream of its own (feed.h; the edge's once set) */
	char set_cookie[512];                  /* "" or a Set-Cookie value */
	char audit_target[128];                /* what the audit log names as target */
	struct tb_error err;
};

typedef int (*tb_handler)(struct tb_request *rq, struct tb_reply *rp);

#define TB_ROUTE_PUBLIC 1u /* no authentication */
#define TB_ROUTE_BODY 2u   /* expects a JSON object body */
#define TB_ROUTE_LOGIN 4u  /* counts failures against the address */

struct tb_route {
	const char *method;
	const char *pattern; /* "/api/v1/hosts/{name}" */
	enum tb_level level; /* lowest role allowed */
	unsigned int flags;
	const char *action; /* audit name of a mutation, "token.create" */
	tb_handler handler;
};

/* The routing table (routes.c), ended by a NULL method. */
extern const struct tb_route tb_routes[];

struct tb_http_config {
	const char *bind_address; /* "127.0.0.1" */
	unsigned int port;        /* 0: any free port */
	const char *static_dir;   /* NULL: no static files */
	unsigned int connection_limit;
	unsigned int per_ip_limit;
	unsigned int timeout_s;
	size_t body_limit;
	const char *tls_cert; /* PEM files; both NULL: plain HTTP */
	const char *tls_key;
	unsigned int threads;      /* MHD's thread pool; 0: tb_http_threads(0) */
	const char *trusted_proxy; /* "ADDR[,ADDR]" (proxy.h) or NULL: trust no peer's X-Forwarded-* */
};

/* Limits of the edge (README, security): a decoded path segment longer than
 * TB_PATH_SEGMENT_MAX bytes is refused with 414 before routing. */
#define TB_PATH_SEGMENT_MAX 256
#define TB_HTTP_MIN_THREADS 4

/* The thread pool's size: asked when non-zero, else the online cores, at
 * least TB_HTTP_MIN_THREADS (handlers may block on the store: a pool of a
 * few threads must not stall on one slow request), at most 64. */
unsigned int tb_http_threads(unsigned int asked);

/* Start serving in libmicrohttpd's internal threads (poll/epoll, never
 * select).  The services must outlive the server. */
int tb_http_start(struct tb_services *sv, const struct tb_http_config *cfg, struct tb_http **out, struct tb_error *err);
unsigned int tb_http_port(const struct tb_http *h);
/* Read the TLS certificate and key files again (renewal, SIGHUP): new
 * connections get the new pair, open ones keep theirs; a pair that does not
 * pass is refused (logged) and the old one kept.  0 without TLS. */
int tb_http_reload_tls(struct tb_http *h, struct tb_error *err);
void tb_http_stop(struct tb_http *h);

/* A query argument, percent-decoded; NULL when absent.  Valid until the
 * request ends.  A value with an encoded NUL reads as absent and makes the
 * request fail with 400. */
const char *tb_req_query(struct tb_request *rq, const char *name);

/* A request header, or NULL.  Valid until the request ends. */
const char *tb_req_header(struct tb_request *rq, const char *name);

/* A cookie of the request, or NULL.  Valid until the request ends. */
const char *tb_req_cookie(struct tb_request *rq, const char *name);

/* The HTTP status of an error code (error.h): 400, 404, ...; 500 for
 * unknown codes.  The one mapping of the tree. */
unsigned int tb_http_status_of(int code);

/* Set the reply: status and a JSON body (the reference is stolen). */
int tb_reply_json(struct tb_reply *rp, unsigned int status, json_t *body);

#endif /* TB_HTTP_H */
