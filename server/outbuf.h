/*
 * outbuf.h - a growable byte buffer: what a command prints, a command line
 * being built, a CSV reply.  With max set, bytes past it are dropped and
 * truncated set; a failed allocation sets nomem and later adds do nothing.
 * Neither is an error by itself: the owner decides.  The text is always
 * NUL-terminated once anything was added.
 */
#ifndef TB_OUTBUF_H
#define TB_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct tb_outbuf {
	char *p;
	size_t len, cap;
	size_t max;     /* bytes kept at most; 0: no limit (set before the first add) */
	bool truncated; /* bytes past max were dropped */
	bool nomem;     /* an allocation failed: the text is incomplete */
};

void tb_outbuf_add(struct tb_outbuf *b, const char *data, size_t len);
void tb_outbuf_puts(struct tb_outbuf *b, const char *s);
/* printf onto the end (bytes past max dropped as by add). */
void tb_outbuf_printf(struct tb_outbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/* The text so far ("" when empty). */
const char *tb_outbuf_str(const struct tb_outbuf *b);
/* Hand the text over (the caller frees it): "" when empty, NULL only when out
 * of memory; b is left empty. */
char *tb_outbuf_take(struct tb_outbuf *b);
/* Empty the text, keeping the memory and max (the next line of a stream). */
void tb_outbuf_clear(struct tb_outbuf *b);
/* Free and zero (max too). */
void tb_outbuf_free(struct tb_outbuf *b);

#endif /* TB_OUTBUF_H */
