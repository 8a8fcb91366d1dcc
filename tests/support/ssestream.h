/*
 * ssestream.h - a raw HTTP/1.1 event-stream client for the tests: one
 * socket to the daemon on 127.0.0.1, the reply (headers, chunks, records)
 * kept whole as text so that a test can look for exactly what was sent.
 */
#ifndef TB_TEST_SSESTREAM_H
#define TB_TEST_SSESTREAM_H

#include <stddef.h>

struct tb_test_stream {
	int fd;
	char *buf; /* everything read so far, NUL-terminated (NULL: nothing) */
	size_t len;
};

/* GET path (with its query) on port with "Accept: text/event-stream" and
 * extra header lines ("Name: v\r\n"...; "" for none).  cmocka-fails when
 * the connection cannot be made. */
void tb_test_stream_open(struct tb_test_stream *s, unsigned int port, const char *path, const char *headers);
/* Read until needle appears in what was read, the daemon closes, or
 * timeout_ms passes (a bound, not a measure): 1 when needle is there. */
int tb_test_stream_read_until(struct tb_test_stream *s, const char *needle, long timeout_ms);
/* Read until the daemon closes the connection: 1, or 0 after timeout_ms. */
int tb_test_stream_read_to_eof(struct tb_test_stream *s, long timeout_ms);
void tb_test_stream_close(struct tb_test_stream *s);
/* A monotonic clock in ms, for the bounds above. */
long long tb_test_now_ms(void);

#endif
