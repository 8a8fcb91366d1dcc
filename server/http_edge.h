/*
 * http_edge.h - what the files of the HTTP edge share (private to http*.c):
 * the server, the per-request state, and the helpers that reply.  The
 * public side is http.h.
 *
 * Ownership: the edge_send_* functions steal the body they are given and
 * queue exactly one response; strings kept with edge_keep live until the
 * request ends (on_completed frees them).
 */
#ifndef TB_HTTP_EDGE_H
#define TB_HTTP_EDGE_H

#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

#include "http.h"
#include "ticker.h"
#include "ratelimit.h"
#include "proxy.h"

struct sse_client;
struct tb_tls;

struct tb_http {
	struct MHD_Daemon *d;
	struct tb_services *sv;
	struct tb_http_config cfg;
	char static_root[PATH_MAX];
	int have_static;
	struct tb_tls *tls;           /* our own certificate (http_tls.c), NULL: plain HTTP */
	struct tb_ticker heartbeat;   /* wakes the streams every few seconds */
	pthread_mutex_t streams_mu;   /* guards streams */
	struct sse_client *streams;   /* every stream being served (http_sse.c) */
	struct tb_ratelimit *limiter; /* failed authentications per address */
	struct tb_proxies proxies;    /* peers whose X-Forwarded-* are believed */
};

#define MAX_DECODED 16

/* A body over the limit is read and discarded up to this many bytes (then
 * answered 413: a client still writing would see a broken pipe instead);
 * one declared larger is answered at once, and past it the connection is
 * closed without an answer. */
#define TB_HTTP_DISCARD_MAX (4 * 1024 * 1024)

/* Per-request state, from the first call of the access handler until
 * NOTIFY_COMPLETED. */
struct conn_state {
	char *buf;
	size_t len, cap;
	int too_large;
	int replied;      /* refused when the headers came: the rest is ignored */
	size_t discarded; /* bytes of a chunked body past the limit */
	struct MHD_Connection *conn;
	char remote[64];            /* the client: the peer, or its client behind a trusted proxy */
	int https;                  /* TLS ends here or at a trusted proxy */
	char *decoded[MAX_DECODED]; /* strings handed to handlers, freed at the end */
	size_t ndecoded;
	int bad_query;
	int64_t start_ms;
};

/* http_reply.c */
void edge_add_headers(struct MHD_Response *r);
void edge_allow_inline_styles(struct MHD_Response *r); /* console.html only */
enum MHD_Result edge_send_json(struct MHD_Connection *conn, unsigned int status, json_t *body,
			       const char *const extra[][2], size_t nextra);
enum MHD_Result edge_send_error(struct MHD_Connection *conn, const struct tb_error *e, const char *const extra[][2],
				size_t nextra);
enum MHD_Result edge_fail(struct MHD_Connection *conn, int code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
/* A text reply (steals text); csp replaces the API's Content-Security-Policy
 * and disposition adds a Content-Disposition, each when not NULL or "". */
enum MHD_Result edge_send_text(struct MHD_Connection *conn, unsigned int status, char *text, size_t len,
			       const char *type, const char *csp, const char *disposition);

/* http_path.c */
size_t edge_no_unescape(void *cls, struct MHD_Connection *c, char *s);
char *edge_pct_decode(const char *s, size_t len, int plus);
int edge_keep(struct conn_state *cs, char *s);
int edge_split_path(struct conn_state *cs, const char *raw, char *seg[], size_t max, size_t *nseg,
		    struct tb_error *err);
enum MHD_Result edge_check_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value);

/* http_api.c */
int edge_is_mutation(const char *method);
enum MHD_Result edge_serve_api(struct tb_http *h, struct conn_state *cs, const char *method, const char *raw_path,
			       char *seg[], size_t nseg);

/* http_sse.c: the streams.  A module's own feed (it is the edge's from here
 * on, also when this fails; opened by who, with a session: it ends with it),
 * or the bus's events from rp's since and filter; both served the same way
 * (suspend while idle, heartbeat). */
struct tb_feed;
enum MHD_Result edge_start_feed(struct tb_http *h, struct conn_state *cs, struct tb_feed *feed,
				const struct tb_principal *who);
enum MHD_Result edge_start_stream(struct tb_http *h, struct conn_state *cs, struct tb_reply *rp);
int edge_sse_start(struct tb_http *h); /* the heartbeat thread; 0 or -1 */
void edge_sse_stop(struct tb_http *h); /* before MHD_stop_daemon */

/* TLS (http_tls.c).  Open: read and check the PEM certificate (chain) and
 * key (mode 0600, no passphrase; the key belongs to the certificate), and
 * make them the pair every handshake gets; one per process.  The paths are
 * borrowed and must outlive t.  Option: the MHD option that hands out that
 * pair (with MHD_USE_TLS).  Reload: read both files again; a pair that
 * passes the same checks serves the connections opened from now on (the
 * open ones keep theirs), else the old pair stays and the refusal is
 * logged (never the key).  Close after MHD_stop_daemon. */
int edge_tls_open(const char *cert_path, const char *key_path, struct tb_tls **out, struct tb_error *err);
void edge_tls_option(struct MHD_OptionItem *opt);
int edge_tls_reload(struct tb_tls *t, struct tb_error *err);
void edge_tls_close(struct tb_tls *t);

/* http_static.c */
enum MHD_Result edge_serve_static(struct tb_http *h, struct conn_state *cs, const char *method, char *seg[],
				  size_t nseg);

#endif /* TB_HTTP_EDGE_H */
