/* http_path.c - paths and query strings decoded by the edge itself, so that
 * %2f, %2e%2e and %00 cannot change what a path means.  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include "validate.h"

/* Percent-decode len bytes of s (and '+' as space when plus); NULL on a bad
 * escape or an encoded NUL. */
char *edge_pct_decode(const char *s, size_t len, int plus)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			hi = tb_hexval(s[i + 1]);
			lo = tb_hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plus && s[i] == '+') {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* MHD must not decode: we decode each path segment and query value ourselves
 * so that %2f, %2e%2e and %00 cannot change the meaning of a path. */
size_t edge_no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

int edge_keep(struct conn_state *cs, char *s)
{
	if (s == NULL || cs->ndecoded >= MAX_DECODED) {
		free(s);
		return -1;
	}
	cs->decoded[cs->ndecoded++] = s;
	return 0;
}

/* Split a raw path into decoded segments; refuse escapes that change the
 * path's shape ('/', NUL), "." and ".." segments and control characters. */
int edge_split_path(struct conn_state *cs, const char *raw, char *seg[], size_t max, size_t *nseg, struct tb_error *err)
{
	const char *p = raw;

	*nseg = 0;
	if (*p != '/')
		return tb_fail(err, TB_ERR_INVALID, "path", "a path starts with /");
	while (*p == '/') {
		const char *start = ++p;
		char *d;

		while (*p != '\0' && *p != '/')
			p++;
		if (p == start) {
			if (*p == '\0')
				break; /* trailing slash */
			return tb_fail(err, TB_ERR_INVALID, "path", "empty path segment (//)");
		}
		if ((size_t)(p - start) > 3 * TB_PATH_SEGMENT_MAX)
			return tb_fail(err, TB_ERR_URI_TOO_LONG, "path", "a path segment is longer than %d bytes",
				       TB_PATH_SEGMENT_MAX);
		d = edge_pct_decode(start, (size_t)(p - start), 0);
		if (d == NULL)
			return tb_fail(err, TB_ERR_INVALID, "path", "bad or NUL percent-escape in the path");
		if (strlen(d) > TB_PATH_SEGMENT_MAX) {
			free(d);
			return tb_fail(err, TB_ERR_URI_TOO_LONG, "path", "a path segment is longer than %d bytes",
				       TB_PATH_SEGMENT_MAX);
		}
		if (strcmp(d, ".") == 0 || strcmp(d, "..") == 0 || strchr(d, '/') != NULL || strchr(d, '\\') != NULL) {
			free(d);
			return tb_fail(err, TB_ERR_INVALID, "path",
				       "the path may not contain . or .. segments or an encoded slash");
		}
		for (const char *q = d; *q; q++) {
			if ((unsigned char)*q < 0x20 || *q == 0x7f) {
				free(d);
				return tb_fail(err, TB_ERR_INVALID, "path", "control character in the path");
			}
		}
		if (*nseg >= max || edge_keep(cs, d) != 0)
			return tb_fail(err, TB_ERR_NOT_FOUND, "path", "no such path");
		seg[(*nseg)++] = d;
	}
	return 0;
}

enum MHD_Result edge_check_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct conn_state *cs = cls;
	char *k, *v;

	(void)kind;
	k = edge_pct_decode(key, strlen(key), 1);
	v = value != NULL ? edge_pct_decode(value, strlen(value), 1) : strdup("");
	if (k == NULL || v == NULL)
		cs->bad_query = 1;
	free(k);
	free(v);
	return cs->bad_query ? MHD_NO : MHD_YES;
}

const char *tb_req_query(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;
	const char *raw = MHD_lookup_connection_value(cs->conn, MHD_GET_ARGUMENT_KIND, name);
	char *d;

	if (raw == NULL)
		return NULL;
	d = edge_pct_decode(raw, strlen(raw), 1);
	if (edge_keep(cs, d) != 0)
		return NULL;
	return d;
}

const char *tb_req_header(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;

	return MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND, name);
}

const char *tb_req_cookie(struct tb_request *rq, const char *name)
{
	struct conn_state *cs = rq->edge;

	return MHD_lookup_connection_value(cs->conn, MHD_COOKIE_KIND, name);
}
