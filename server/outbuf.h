/*
 * outbuf.h - a growable byte buffer with a cap, for what a remote command
 * prints: past max bytes the rest is dropped and truncated set, never an
 * error.  The text is always NUL-terminated.
 */
#ifndef TB_OUTBUF_H
#define TB_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct tb_outbuf {
	char *p;
	size_t len, cap;
	size_t max;                /* set before the first add */
	bool truncated;            /* something was dropped (cap reached or out of memory) */
};

void tb_outbuf_add(struct tb_outbuf *b, const char *data, size_t len);
/* The text so far ("" when empty). */
const char *tb_outbuf_str(const struct tb_outbuf *b);
/* Free and zero (max too). */
void tb_outbuf_free(struct tb_outbuf *b);

#endif /* TB_OUTBUF_H */
