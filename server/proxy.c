/* proxy.c - who the client is behind a trusted reverse proxy: see proxy.h. */
#include "proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* A numeric address (an IPv6 zone "%eth0" dropped; IPv4-mapped IPv6 made
 * IPv4) into n with a full prefix.  0, or -1 when s is not an address. */
static int parse_addr(const char *s, size_t len, struct tb_proxy_net *n)
{
	char buf[TB_PROXY_ADDR_MAX];
	char *pct;
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(n, 0, sizeof(*n));
	if (inet_pton(AF_INET, buf, n->addr) == 1) {
		n->family = AF_INET;
		n->prefix = 32;
		return 0;
	}
	if ((pct = strchr(buf, '%')) != NULL)
		*pct = '\0';
	if (inet_pton(AF_INET6, buf, n->addr) != 1)
		return -1;
	if (memcmp(n->addr, mapped, sizeof(mapped)) == 0) {
		memmove(n->addr, n->addr + 12, 4);
		memset(n->addr + 4, 0, 12);
		n->family = AF_INET;
		n->prefix = 32;
		return 0;
	}
	n->family = AF_INET6;
	n->prefix = 128;
	return 0;
}

/* 1 when a (a full address) lies in net. */
static int in_net(const struct tb_proxy_net *net, const struct tb_proxy_net *a)
{
	unsigned int bytes = net->prefix / 8, bits = net->prefix % 8;

	if (net->family != a->family)
		return 0;
	if (memcmp(net->addr, a->addr, bytes) != 0)
		return 0;
	if (bits == 0)
		return 1;
	return ((net->addr[bytes] ^ a->addr[bytes]) & (0xffu << (8 - bits)) & 0xffu) == 0;
}

static int trusted(const struct tb_proxies *p, const struct tb_proxy_net *a)
{
	for (size_t i = 0; i < p->n; i++)
		if (in_net(&p->net[i], a))
			return 1;
	return 0;
}

static void trim(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

int tb_proxy_parse(const char *list, struct tb_proxies *out, struct tb_error *err)
{
	const char *s = list;

	memset(out, 0, sizeof(*out));
	if (list == NULL)
		return 0;
	while (*s != '\0') {
		const char *comma = strchr(s, ','), *slash;
		size_t len = comma != NULL ? (size_t)(comma - s) : strlen(s);
		const char *e = s;
		struct tb_proxy_net n;

		trim(&e, &len);
		slash = memchr(e, '/', len);
		if (len > 0) {
			if (out->n == TB_PROXY_MAX)
				return tb_fail(err, TB_ERR_CONFIG, "--trusted-proxy", "at most %d addresses",
					       TB_PROXY_MAX);
			if (parse_addr(e, slash != NULL ? (size_t)(slash - e) : len, &n) != 0)
				return tb_fail(err, TB_ERR_CONFIG, "--trusted-proxy",
					       "\"%.*s\" is not an IP address or ADDRESS/PREFIX", (int)len, e);
			if (slash != NULL) {
				char num[8] = "", *end;
				size_t nl = len - (size_t)(slash - e) - 1;
				unsigned long pfx;

				if (nl > 0 && nl < sizeof(num))
					memcpy(num, slash + 1, nl);
				pfx = strtoul(num, &end, 10);
				if (num[0] < '0' || num[0] > '9' || *end != '\0' || pfx > n.prefix)
					return tb_fail(err, TB_ERR_CONFIG, "--trusted-proxy",
						       "\"%.*s\": the prefix must be 0..%u", (int)len, e, n.prefix);
				n.prefix = (unsigned int)pfx;
			}
			out->net[out->n++] = n;
		}
		if (comma == NULL)
			break;
		s = comma + 1;
	}
	return 0;
}

int tb_proxy_trusted(const struct tb_proxies *p, const char *addr)
{
	struct tb_proxy_net a;

	return addr != NULL && parse_addr(addr, strlen(addr), &a) == 0 && trusted(p, &a);
}

/* One X-Forwarded-For element: "addr", "[v6]", "[v6]:port" or
 * "v4:port".  0, or -1 when it is not an address. */
static int parse_element(const char *s, size_t len, struct tb_proxy_net *a)
{
	const char *colon;

	trim(&s, &len);
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (close == NULL || (close + 1 != s + len && close[1] != ':'))
			return -1;
		return parse_addr(s + 1, (size_t)(close - s - 1), a);
	}
	colon = memchr(s, ':', len);
	if (colon != NULL && memchr(colon + 1, ':', len - (size_t)(colon - s) - 1) == NULL)
		len = (size_t)(colon - s); /* IPv4 with a port: one colon only */
	return parse_addr(s, len, a);
}

static void format(const struct tb_proxy_net *a, char *out, size_t len)
{
	char buf[INET6_ADDRSTRLEN];

	if (inet_ntop(a->family, a->addr, buf, sizeof(buf)) == NULL)
		snprintf(buf, sizeof(buf), "unknown");
	snprintf(out, len, "%s", buf);
}

void tb_proxy_client(const struct tb_proxies *p, const char *peer, const char *xff, const char *xfp, char *out,
		     size_t len, int *https)
{
	struct tb_proxy_net hop, a;
	const char *end;

	*https = 0;
	snprintf(out, len, "%s", peer != NULL ? peer : "unknown");
	if (p == NULL || p->n == 0 || peer == NULL || parse_addr(peer, strlen(peer), &hop) != 0 || !trusted(p, &hop))
		return;
	if (xfp != NULL) {
		size_t pl = strlen(xfp);

		trim(&xfp, &pl);
		*https = pl == 5 && strncasecmp(xfp, "https", 5) == 0;
	}
	if (xff == NULL)
		return;
	/* from the right: skip our own proxies, stop at the first stranger */
	end = xff + strlen(xff);
	for (;;) {
		const char *start = end;

		while (start > xff && start[-1] != ',')
			start--;
		if (parse_element(start, (size_t)(end - start), &a) != 0) {
			const char *s = start;
			size_t l = (size_t)(end - start);

			trim(&s, &l);
			if (l == 0 && start > xff) { /* "a,,b" or a trailing comma: skip */
				end = start - 1;
				continue;
			}
			break; /* garbage: the last hop believed is the client */
		}
		hop = a;
		if (!trusted(p, &a) || start == xff)
			break;
		end = start - 1;
	}
	format(&hop, out, len);
}
