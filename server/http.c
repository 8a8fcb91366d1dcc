/* http.c - the HTTP edge on libmicrohttpd: see http.h. */
#include "http_edge.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "services.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"
#include "wipe.h"

struct framing {
	unsigned int content_length, transfer_encoding;
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct framing *f = cls;

	(void)kind;
	(void)value;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		f->content_length++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
		f->transfer_encoding++;
	return MHD_YES;
}

/* What the edge refuses as soon as the headers are in, before any body is
 * read: ambiguous framing (more than one Content-Length, or Content-Length
 * with Transfer-Encoding: a smuggled request hides there) and a declared
 * body over the limit (*too_large set when it is to be read and discarded
 * first).  0, or an error in e.  Replying now makes MHD close the connection
 * after the reply, unread body and all. */
static int check_head(struct tb_http *h, struct MHD_Connection *conn, int *too_large, struct tb_error *e)
{
	struct framing f = {0, 0};
	const char *clen, *expect;
	unsigned long long n;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &f);
	if (f.content_length > 1)
		return tb_fail(e, TB_ERR_INVALID, "Content-Length", "more than one Content-Length header");
	if (f.content_length > 0 && f.transfer_encoding > 0)
		return tb_fail(e, TB_ERR_INVALID, "Content-Length",
			       "Content-Length and Transfer-Encoding together: send one");
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (clen == NULL)
		return 0;
	/* MHD itself refused a Content-Length that is not a number (400) */
	n = strtoull(clen, NULL, 10);
	if (n <= h->cfg.body_limit)
		return 0;
	/* Over the limit.  A client that waits for "100 Continue" sends nothing
	 * more, and one that declared more than TB_HTTP_DISCARD_MAX is not worth
	 * reading: both are answered now.  A smaller one is read and discarded,
	 * and answered 413 at its end: a client still writing its body when the
	 * connection closes sees a broken pipe, not the 413 (node's http does). */
	expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
	if ((expect != NULL && strcasecmp(expect, "100-continue") == 0) || n > TB_HTTP_DISCARD_MAX)
		return tb_fail(e, TB_ERR_TOO_LARGE, "", "the body is larger than %zu bytes", h->cfg.body_limit);
	*too_large = 1;
	return 0;
}

struct forwarded {
	char list[1024]; /* every X-Forwarded-For value, joined by commas */
	int over;        /* more than fits: believe none of it */
};

static enum MHD_Result join_forwarded(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct forwarded *f = cls;
	size_t have = strlen(f->list), add = strlen(value);

	(void)kind;
	if (strcasecmp(key, "X-Forwarded-For") != 0)
		return MHD_YES;
	if (have + add + 2 > sizeof(f->list)) {
		f->over = 1;
		return MHD_NO;
	}
	if (have > 0)
		f->list[have++] = ',';
	memcpy(f->list + have, value, add + 1);
	return MHD_YES;
}

/* cs->remote (the socket's peer, numeric) becomes the client the peer
 * forwards for when the peer is a trusted proxy (proxy.h), and cs->https
 * is set when TLS ends here or at that proxy.  A list of X-Forwarded-For
 * too long to hold is read as garbage: the client is the proxy. */
static void find_client(struct tb_http *h, struct conn_state *cs)
{
	struct forwarded f;
	char peer[sizeof(cs->remote)];
	const char *xff;
	int proxied_https = 0;

	cs->https = h->tls != NULL;
	if (h->proxies.n == 0)
		return;
	memset(&f, 0, sizeof(f));
	MHD_get_connection_values(cs->conn, MHD_HEADER_KIND, join_forwarded, &f);
	snprintf(peer, sizeof(peer), "%s", cs->remote);
	/* "-" is garbage: the client is then the proxy itself */
	xff = f.over ? "-" : (f.list[0] != '\0' ? f.list : NULL);
	tb_proxy_client(&h->proxies, peer, xff,
			MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND, "X-Forwarded-Proto"), cs->remote,
			sizeof(cs->remote), &proxied_https);
	cs->https = cs->https || proxied_https;
}

static enum MHD_Result dispatch(struct tb_http *h, struct conn_state *cs, const char *url, const char *method)
{
	char *seg[32];
	size_t nseg = 0;
	struct tb_error e = {0};

	MHD_get_connection_values(cs->conn, MHD_GET_ARGUMENT_KIND, edge_check_query, cs);
	if (edge_split_path(cs, url, seg, sizeof(seg) / sizeof(seg[0]), &nseg, &e) != 0) {
		/* refused before routing: counted under the route "edge" */
		tb_metrics_request(h->sv->metrics, "edge", method, tb_http_status_of(e.code),
				   (double)(tb_monotonic_ms() - cs->start_ms) / 1000.0);
		return edge_send_error(cs->conn, &e, NULL, 0);
	}
	if ((nseg >= 1 && strcmp(seg[0], "api") == 0) || (nseg == 1 && strcmp(seg[0], "metrics") == 0))
		return edge_serve_api(h, cs, method, url, seg, nseg);
	if (cs->too_large)
		return edge_fail(cs->conn, TB_ERR_TOO_LARGE, "", "the body is larger than %zu bytes",
				 h->cfg.body_limit);
	return edge_serve_static(h, cs, method, seg, nseg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct tb_http *h = cls;
	struct conn_state *cs = *con_cls;

	(void)version;
	if (cs == NULL) {
		const union MHD_ConnectionInfo *ci;
		struct tb_error e = {0};

		cs = calloc(1, sizeof(*cs));
		if (cs == NULL)
			return MHD_NO;
		cs->conn = conn;
		cs->start_ms = tb_monotonic_ms();
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci == NULL || ci->client_addr == NULL ||
		    getnameinfo(ci->client_addr,
				ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								       : sizeof(struct sockaddr_in),
				cs->remote, sizeof(cs->remote), NULL, 0, NI_NUMERICHOST) != 0)
			snprintf(cs->remote, sizeof(cs->remote), "unknown");
		find_client(h, cs);
		*con_cls = cs;
		if (check_head(h, conn, &cs->too_large, &e) != 0) {
			enum MHD_Result ret = edge_send_error(conn, &e, NULL, 0);

			cs->replied = 1;
			tb_metrics_request(h->sv->metrics, "edge", method, tb_http_status_of(e.code),
					   (double)(tb_monotonic_ms() - cs->start_ms) / 1000.0);
			return ret;
		}
		return MHD_YES;
	}
	if (cs->replied) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (cs->too_large || cs->len + n > h->cfg.body_limit) {
			/* only a chunked body gets here (a declared one was refused at
			 * once): MHD 0.9.75 cannot reply in the middle of a body, so it
			 * is discarded and answered 413 at its end, or the connection
			 * closed when it goes on past TB_HTTP_DISCARD_MAX */
			cs->too_large = 1;
			cs->discarded += n;
			return cs->discarded > TB_HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (cs->len + n + 1 > cs->cap) {
			size_t cap = (cs->len + n + 1) * 2;
			char *b = malloc(cap);

			if (b == NULL)
				return MHD_NO;
			/* not realloc: the old copy may hold a secret and is wiped */
			if (cs->len > 0)
				memcpy(b, cs->buf, cs->len);
			tb_wipe(cs->buf, cs->cap);
			free(cs->buf);
			cs->buf = b;
			cs->cap = cap;
		}
		memcpy(cs->buf + cs->len, upload_data, n);
		cs->len += n;
		return MHD_YES;
	}
	return dispatch(h, cs, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (cs == NULL)
		return;
	for (size_t i = 0; i < cs->ndecoded; i++)
		free(cs->decoded[i]);
	/* a body may hold a secret (the token of a login): wipe it, not just free */
	tb_wipe(cs->buf, cs->cap);
	free(cs->buf);
	free(cs);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	tb_warn("http", "%s", msg);
}

int tb_http_start(struct tb_services *sv, const struct tb_http_config *cfg, struct tb_http **out, struct tb_error *err)
{
	struct tb_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls_opts[2] = {{MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL}};

	*out = NULL;
	if (h == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	h->sv = sv;
	h->cfg = *cfg;
	if (tb_proxy_parse(cfg->trusted_proxy, &h->proxies, err) != 0) {
		free(h);
		return TB_ERR_CONFIG;
	}
	memset(&ss, 0, sizeof(ss));
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		if (inet_pton(AF_INET, cfg->bind_address, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			s4->sin_port = htons((uint16_t)cfg->port);
		} else if (inet_pton(AF_INET6, cfg->bind_address, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)cfg->port);
			flags |= MHD_USE_IPv6;
		} else {
			free(h);
			return tb_fail(err, TB_ERR_INVALID, "listen", "not an IP address to listen on: %s",
				       cfg->bind_address);
		}
	}
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		free(h);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "TLS needs both a certificate and a key");
	}
	if (cfg->tls_cert != NULL) {
		int rc;

		if ((rc = edge_tls_open(cfg->tls_cert, cfg->tls_key, &h->tls, err)) != 0) {
			free(h);
			return rc;
		}
		flags |= MHD_USE_TLS;
	}
	if (cfg->static_dir != NULL) {
		struct stat st;

		if (stat(cfg->static_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			tb_warn("http", "no static files: %s is not a directory", cfg->static_dir);
		} else {
			snprintf(h->static_root, sizeof(h->static_root), "%s", cfg->static_dir);
			h->have_static = 1;
		}
	}
	if (h->tls != NULL)
		edge_tls_option(&tls_opts[0]); /* the certificate, renewable (http_tls.c) */
	h->limiter = tb_ratelimit_new(TB_RATE_MAX_FAILURES, TB_RATE_WINDOW_S);
	pthread_mutex_init(&h->streams_mu, NULL); /* streams start with the daemon */
	h->d = h->limiter == NULL ? NULL
				  : MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, h,
						     /* first, so that MHD's own start-up messages use it too */
						     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
						     (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE,
						     tb_http_threads(cfg->threads), MHD_OPTION_CONNECTION_LIMIT,
						     cfg->connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
						     cfg->per_ip_limit, MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s,
						     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
						     MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
						     MHD_OPTION_UNESCAPE_CALLBACK, edge_no_unescape, NULL,
						     MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_ARRAY,
						     tls_opts, MHD_OPTION_END);
	if (h->d == NULL) {
		pthread_mutex_destroy(&h->streams_mu);
		tb_ratelimit_free(h->limiter);
		edge_tls_close(h->tls);
		free(h);
		return tb_fail(err, TB_ERR_IO, "listen",
			       "cannot listen on %s port %u (in use, or not an address of this machine?)",
			       cfg->bind_address, cfg->port);
	}
	if (edge_sse_start(h) != 0) {
		tb_http_stop(h);
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the event-stream heartbeat thread");
	}
	*out = h;
	return 0;
}

unsigned int tb_http_threads(unsigned int asked)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	if (asked > 0)
		return asked;
	if (cores < TB_HTTP_MIN_THREADS)
		return TB_HTTP_MIN_THREADS;
	return cores > 64 ? 64u : (unsigned int)cores;
}

unsigned int tb_http_port(const struct tb_http *h)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return info != NULL ? info->port : 0;
}

int tb_http_reload_tls(struct tb_http *h, struct tb_error *err)
{
	return h != NULL && h->tls != NULL ? edge_tls_reload(h->tls, err) : 0;
}

void tb_http_stop(struct tb_http *h)
{
	if (h == NULL)
		return;
	edge_sse_stop(h); /* a ticker never started is fine */
	/* app.c closed the bus first: every stream was woken and ends. */
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->streams_mu); /* no stream left */
	edge_tls_close(h->tls);                /* no handshake left */
	tb_ratelimit_free(h->limiter);
	free(h);
}
