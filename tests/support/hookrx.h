/*
 * hookrx.h - a small HTTP receiver on 127.0.0.1 for webhook tests: it
 * records every request (method, path, headers, body) and answers 200, or
 * a chosen status to the next n requests (retries after a 500).  One
 * request per connection.  Runs in its own thread; stop it with
 * tb_hookrx_stop.
 */
#ifndef TB_TEST_HOOKRX_H
#define TB_TEST_HOOKRX_H

#include <stddef.h>

#define TB_HOOKRX_MAX 128

struct tb_hookrx_req {
	char method[16];
	char path[512];
	char *headers; /* raw, "Name: value\r\n" each */
	char *body;    /* NUL-terminated */
	size_t len;
	int answered; /* the status it got */
};

struct tb_hookrx;

/* Listen on 127.0.0.1, a free port (into *port).  0 or -1. */
int tb_hookrx_start(struct tb_hookrx **out, unsigned int *port);
/* Answer the next n requests with status (then 200 again). */
void tb_hookrx_fail_next(struct tb_hookrx *rx, int n, int status);
/* Requests recorded so far. */
size_t tb_hookrx_count(struct tb_hookrx *rx);
/* Wait until at least n were recorded, for at most ms.  0 or -1. */
int tb_hookrx_wait(struct tb_hookrx *rx, size_t n, long ms);
/* Request i (valid until stop). */
const struct tb_hookrx_req *tb_hookrx_get(struct tb_hookrx *rx, size_t i);
/* A header's value (case-insensitive name) into buf, or NULL. */
const char *tb_hookrx_header(const struct tb_hookrx_req *r, const char *name, char *buf, size_t len);
void tb_hookrx_stop(struct tb_hookrx *rx);

#endif /* TB_TEST_HOOKRX_H */
