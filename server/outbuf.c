/* outbuf.c - a growable byte buffer.  See outbuf.h. */
#include "outbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_outbuf_add(struct tb_outbuf *b, const char *data, size_t len)
{
	if (b->max > 0 && len > b->max - b->len) {
		b->truncated = true;
		len = b->max - b->len;
	}
	if (b->nomem || (len == 0 && b->p != NULL))
		return;
	if (len >= b->cap - b->len || b->p == NULL) {
		size_t cap = b->cap != 0 ? b->cap : 1024;
		char *p;

		while (cap - b->len <= len) {
			if (cap > (size_t)-1 / 2) {
				b->nomem = true;
				return;
			}
			cap *= 2;
		}
		if (b->max > 0 && cap > b->max + 1)
			cap = b->max + 1;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->nomem = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void tb_outbuf_puts(struct tb_outbuf *b, const char *s)
{
	tb_outbuf_add(b, s, strlen(s));
}

void tb_outbuf_printf(struct tb_outbuf *b, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		tb_outbuf_add(b, small, (size_t)n);
		return;
	}
	if ((big = malloc((size_t)n + 1)) == NULL) {
		b->nomem = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	tb_outbuf_add(b, big, (size_t)n);
	free(big);
}

const char *tb_outbuf_str(const struct tb_outbuf *b)
{
	return b->p != NULL ? b->p : "";
}

char *tb_outbuf_take(struct tb_outbuf *b)
{
	char *p = b->nomem ? NULL : b->p;

	if (b->nomem)
		free(b->p);
	else if (p == NULL)
		p = calloc(1, 1);
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void tb_outbuf_clear(struct tb_outbuf *b)
{
	b->len = 0;
	b->truncated = false;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void tb_outbuf_free(struct tb_outbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
