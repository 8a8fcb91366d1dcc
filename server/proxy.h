/*
 * proxy.h - who the client is behind a trusted reverse proxy.
 *
 * testbedd --trusted-proxy ADDR[,ADDR...] names the peers (an address, or
 * an address/prefix) whose X-Forwarded-For and X-Forwarded-Proto headers
 * are believed.  From any other peer both headers are ignored: the client
 * is the socket's peer.  From a trusted peer, X-Forwarded-For is read from
 * its right end: trusted addresses are skipped (a chain of our own
 * proxies) and the first untrusted address is the client; a list of
 * trusted addresses only gives its leftmost.  An element that is not an
 * address ends the walk: the client is then the last hop believed (the
 * proxy itself), so garbage can never pick the address the limiter and
 * the audit see.  The address returned is always numeric, as inet_ntop
 * writes it (IPv4-mapped IPv6 as IPv4).
 *
 * Pure functions, no state beyond the parsed list; thread-safe.
 */
#ifndef TB_PROXY_H
#define TB_PROXY_H

#include <stddef.h>

#include "error.h"

#define TB_PROXY_MAX 16
#define TB_PROXY_ADDR_MAX 64 /* a buffer that holds any numeric address */

struct tb_proxy_net {
	int family;             /* AF_INET or AF_INET6 */
	unsigned char addr[16]; /* network order; IPv4 in the first 4 bytes */
	unsigned int prefix;    /* bits that must match */
};

struct tb_proxies {
	size_t n; /* 0: trust no peer (the default) */
	struct tb_proxy_net net[TB_PROXY_MAX];
};

/* "ADDR[,ADDR...]" (each an IPv4 or IPv6 address, optionally /PREFIX;
 * spaces around commas allowed) into out.  0, or TB_ERR_CONFIG saying
 * which element is wrong; NULL or "" gives an empty list. */
int tb_proxy_parse(const char *list, struct tb_proxies *out, struct tb_error *err);

/* 1 when the numeric address addr is in the list, else 0. */
int tb_proxy_trusted(const struct tb_proxies *p, const char *addr);

/* The client of a request from peer (numeric) carrying xff (all its
 * X-Forwarded-For values joined by commas, or NULL) and xfp (its
 * X-Forwarded-Proto, or NULL), into out (len >= TB_PROXY_ADDR_MAX is
 * enough).  *https becomes 1 when the peer is trusted and xfp says
 * "https", else 0.  Never fails: at worst out is the peer. */
void tb_proxy_client(const struct tb_proxies *p, const char *peer, const char *xff, const char *xfp, char *out,
		     size_t len, int *https);

#endif /* TB_PROXY_H */
