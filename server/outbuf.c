/* outbuf.c - a capped growable byte buffer.  See outbuf.h. */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

void tb_outbuf_add(struct tb_outbuf *b, const char *data, size_t len)
{
	if (b->len + len > b->max) {
		b->truncated = true;
		len = b->max > b->len ? b->max - b->len : 0;
	}
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + len + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->truncated = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
}

const char *tb_outbuf_str(const struct tb_outbuf *b)
{
	return b->p != NULL ? b->p : "";
}

void tb_outbuf_free(struct tb_outbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
