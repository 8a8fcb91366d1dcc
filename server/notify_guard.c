/* notify_guard.c - a sink's call through libcurl (HTTP here, SMTP in
 * notify_email.c), with the connect
 * guard: every address curl is about to connect to (after DNS, so a name
 * that resolves, or re-resolves, to 127.0.0.1 is caught) passes
 * CURLOPT_OPENSOCKETFUNCTION, which refuses loopback, link-local (the
 * metadata range 169.254.0.0/16) and the other addresses a webhook has no
 * business with, unless the rule allows its host.  See notify_internal.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "notify_internal.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init_once(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static int v4_refused(uint32_t a, char *why, size_t len)
{
	const char *w = NULL;

	if ((a >> 24) == 127)
		w = "loopback";
	else if ((a >> 24) == 0)
		w = "\"this host\" (0.0.0.0/8)";
	else if ((a >> 16) == 0xa9fe)
		w = a == 0xa9fea9fe ? "the cloud metadata address" : "link-local (169.254.0.0/16)";
	else if ((a >> 28) == 0xe || a == 0xffffffff)
		w = "multicast or broadcast";
	else if (a == 0x646464c8)
		w = "a cloud metadata address (100.100.100.200)";
	if (w != NULL)
		snprintf(why, len, "%s", w);
	return w != NULL;
}

int nf_addr_refused(const struct sockaddr *sa, char *why, size_t len)
{
	static const uint8_t aws6[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;

		return v4_refused(ntohl(s4->sin_addr.s_addr), why, len);
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *b = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		static const uint8_t zero[16];
		static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		if (memcmp(b, mapped, 12) == 0 || (memcmp(b, zero, 12) == 0 && b[12] != 0))
			/* ::ffff:a.b.c.d and ::a.b.c.d reach the IPv4 address */
			return v4_refused((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15],
					  why, len);
		if (memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1)) {
			snprintf(why, len, "%s", b[15] == 1 ? "loopback (::1)" : "the unspecified address (::)");
			return 1;
		}
		if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
			snprintf(why, len, "link-local (fe80::/10)");
			return 1;
		}
		if (b[0] == 0xff) {
			snprintf(why, len, "multicast");
			return 1;
		}
		if (memcmp(b, aws6, 16) == 0) {
			snprintf(why, len, "the cloud metadata address");
			return 1;
		}
		return 0;
	}
	snprintf(why, len, "not an IP address");
	return 1;
}

int nf_url_check(const char *url, int email, const char *field, char *host, size_t hostlen, struct tb_error *err)
{
	CURLU *u;
	char *scheme = NULL, *h = NULL, *user = NULL;
	int rc = 0;

	pthread_once(&curl_once, curl_init_once);
	host[0] = '\0';
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x21 || *p == 0x7f)
			return tb_fail(err, TB_ERR_INVALID, field, "a URL holds no spaces or control characters");
	if (strlen(url) > 2048)
		return tb_fail(err, TB_ERR_INVALID, field, "a URL is at most 2048 characters");
	if ((u = curl_url()) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || h[0] == '\0')
		rc = tb_fail(err, TB_ERR_INVALID, field, "not a URL with a host: \"%.100s\"", url);
	else if (!email && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
		rc = tb_fail(err, TB_ERR_INVALID, field, "a sink's URL is http:// or https://, got %.16s://", scheme);
	else if (email && strcmp(scheme, "smtp") != 0 && strcmp(scheme, "smtps") != 0)
		rc = tb_fail(err, TB_ERR_INVALID, field, "an email sink's URL is smtp:// or smtps://, got %.16s://",
			     scheme);
	else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK)
		rc = tb_fail(err, TB_ERR_INVALID, field,
			     "a URL with a user or password would show it: put the secret in token_file or the "
			     "whole URL in url_file");
	else {
		size_t n = strlen(h);

		/* [::1] -> ::1 */
		if (h[0] == '[' && n > 2)
			snprintf(host, hostlen, "%.*s", (int)(n - 2), h + 1);
		else
			snprintf(host, hostlen, "%s", h);
	}
	curl_free(scheme);
	curl_free(h);
	curl_free(user);
	curl_url_cleanup(u);
	return rc;
}

static curl_socket_t open_guarded(void *cls, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct nf_guard *g = cls;
	char why[64], addr[INET6_ADDRSTRLEN] = "?";
	curl_socket_t fd;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKET_BAD;
	if (!g->allow && nf_addr_refused(&a->addr, why, sizeof(why))) {
		if (a->family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)&a->addr)->sin_addr, addr, sizeof(addr));
		else if (a->family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)&a->addr)->sin6_addr, addr, sizeof(addr));
		snprintf(g->refused, sizeof(g->refused), "%s is %s", addr, why);
		return CURL_SOCKET_BAD;
	}
	fd = socket(a->family, a->socktype, a->protocol);
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static size_t discard(char *data, size_t size, size_t n, void *cls)
{
	(void)data;
	(void)cls;
	return size * n;
}

static int progress(void *cls, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct nf_guard *g = cls;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return g->abort_fn != NULL && g->abort_fn(g->cls) ? 1 : 0;
}

CURL *nf_guarded_handle(struct nf_guard *g, const char *protocols, char ebuf[CURL_ERROR_SIZE])
{
	CURL *h;

	pthread_once(&curl_once, curl_init_once);
	if (!curl_ok || (h = curl_easy_init()) == NULL)
		return NULL;
	ebuf[0] = '\0';
	g->refused[0] = '\0';
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protocols);
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS,
			 strcmp(protocols, "http,https") == 0 ? (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)
							      : (long)(CURLPROTO_SMTP | CURLPROTO_SMTPS));
#endif
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROXY, ""); /* an environment's proxy would bypass the guard */
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 15000L);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_guarded);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, g);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, g);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	return h;
}

int nf_guarded_result(const struct nf_guard *g, CURLcode cc, const char *ebuf, struct tb_error *err)
{
	if (g->refused[0] != '\0' && cc != CURLE_OK)
		return tb_fail(err, TB_ERR_FORBIDDEN, "sink.url",
			       "refused to connect: %s (allow_private_host names a host that may be)", g->refused);
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return tb_fail(err, TB_ERR_CANCELED, "", "testbedd is stopping");
	if (cc != CURLE_OK)
		return tb_fail(err, TB_ERR_UNREACHABLE, "", "%s", ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc));
	return 0;
}

int nf_http_send(const struct nf_request *rq, int (*abort_fn)(void *cls), void *cls, int *status, struct tb_error *err)
{
	struct nf_guard g = {.allow = rq->allow[0] != '\0', .abort_fn = abort_fn, .cls = cls};
	char ebuf[CURL_ERROR_SIZE];
	CURLcode cc;
	long code = 0;
	CURL *h;
	int rc;

	*status = 0;
	if ((h = nf_guarded_handle(&g, "http,https", ebuf)) == NULL)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start libcurl");
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)rq->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	*status = (int)code;
	if ((rc = nf_guarded_result(&g, cc, ebuf, err)) != 0)
		return rc;
	if (code < 200 || code > 299)
		return tb_fail(err, TB_ERR_REMOTE, "", "the receiver answered HTTP %ld", code);
	return 0;
}
