/* http_reply.c - the edge's replies: JSON, errors in the one shape, text,
 * security headers; and the body helpers handlers use.  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include "wipe.h"

static const char *const security_headers[][2] = {
	{"Content-Security-Policy",
	 "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	 "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "no-referrer"},
};

void edge_add_headers(struct MHD_Response *r)
{
	for (size_t i = 0; i < sizeof(security_headers) / sizeof(security_headers[0]); i++)
		MHD_add_response_header(r, security_headers[i][0], security_headers[i][1]);
}

/* The console page (console.html) only: xterm.js, its terminal emulator,
 * writes the theme and the cell geometry into <style> elements it creates at
 * run time (xterm 6 has no nonce for them), which style-src 'self' blocks: the
 * terminal would draw without sizes or colours.  So that page, and no other,
 * may use inline styles; scripts stay 'self' (no inline script anywhere). */
void edge_allow_inline_styles(struct MHD_Response *r)
{
	MHD_del_response_header(r, security_headers[0][0], security_headers[0][1]);
	MHD_add_response_header(
		r, security_headers[0][0],
		"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "
		"data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
		"frame-ancestors 'none'");
}

unsigned int tb_http_status_of(int code)
{
	switch (code) {
	case TB_OK: return 200;
	case TB_ERR_INVALID:
	case TB_ERR_BAD_JSON:
	case TB_ERR_UNKNOWN_FIELD: return 400;
	case TB_ERR_UNAUTHORIZED: return 401;
	case TB_ERR_FORBIDDEN:
	case TB_ERR_CSRF: return 403;
	case TB_ERR_NOT_FOUND: return 404;
	case TB_ERR_METHOD: return 405;
	case TB_ERR_CONFLICT:
	case TB_ERR_CANCELED: return 409;
	case TB_ERR_TOO_LARGE: return 413;
	case TB_ERR_URI_TOO_LONG: return 414;
	case TB_ERR_MEDIA_TYPE: return 415;
	case TB_ERR_RATE_LIMITED: return 429;
	case TB_ERR_HOSTKEY:
	case TB_ERR_REMOTE:
	case TB_ERR_UNREACHABLE: return 502;
	case TB_ERR_NOMEM: return 503;
	case TB_ERR_TIMEOUT: return 504;
	default: /* TB_ERR_IO, TB_ERR_INTERNAL, TB_ERR_CONFIG, unknown codes */ return 500;
	}
}

/* A JSON reply's text, freed by MHD once sent: wiped first, since some carry
 * a secret (a new token, the login's CSRF token). */
static void free_wiped(void *text)
{
	tb_wipe(text, strlen(text));
	free(text);
}

/* Queue a JSON reply (steals body; NULL sends no body). */
enum MHD_Result edge_send_json(struct MHD_Connection *conn, unsigned int status, json_t *body,
			       const char *const extra[][2], size_t nextra)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text = NULL;
	size_t len = 0;

	if (body != NULL) {
		text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
		json_decref(body);
		if (text == NULL)
			return MHD_NO;
		len = strlen(text);
		{
			char *t = realloc(text, len + 2);

			if (t == NULL) {
				free_wiped(text);
				return MHD_NO;
			}
			text = t;
		}
		text[len++] = '\n';
		text[len] = '\0'; /* kept, for free_wiped's strlen */
	}
	r = text != NULL ? MHD_create_response_from_buffer_with_free_callback(len, text, free_wiped)
			 : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (r == NULL) {
		if (text != NULL)
			free_wiped(text);
		return MHD_NO;
	}
	edge_add_headers(r);
	if (body != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	for (size_t i = 0; i < nextra; i++)
		if (extra[i][1] != NULL && extra[i][1][0] != '\0')
			MHD_add_response_header(r, extra[i][0], extra[i][1]);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static json_t *error_body(const struct tb_error *e)
{
	return json_pack("{s:{s:s, s:s, s:s}}", "error", "code", tb_err_name(e->code), "message",
			 e->message[0] ? e->message : tb_err_name(e->code), "field", e->field);
}

enum MHD_Result edge_send_error(struct MHD_Connection *conn, const struct tb_error *e, const char *const extra[][2],
				size_t nextra)
{
	const char *www[4][2] = {{MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"testbedd\""}};

	if (e->code == TB_ERR_UNAUTHORIZED && nextra < 4) {
		for (size_t i = 0; i < nextra; i++)
			www[i + 1][0] = extra[i][0], www[i + 1][1] = extra[i][1];
		return edge_send_json(conn, 401, error_body(e), (const char *const(*)[2])www, nextra + 1);
	}
	return edge_send_json(conn, tb_http_status_of(e->code), error_body(e), extra, nextra);
}

enum MHD_Result edge_fail(struct MHD_Connection *conn, int code, const char *field, const char *fmt, ...)
{
	struct tb_error e;
	va_list ap;

	e.code = code;
	snprintf(e.field, sizeof(e.field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	return edge_send_error(conn, &e, NULL, 0);
}

/* A non-JSON reply (steals text), with its own CSP and disposition when given. */
enum MHD_Result edge_send_text(struct MHD_Connection *conn, unsigned int status, char *text, size_t len,
			       const char *type, const char *csp, const char *disposition)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	edge_add_headers(r);
	if (csp != NULL) {
		MHD_del_response_header(r, security_headers[0][0], security_headers[0][1]);
		MHD_add_response_header(r, security_headers[0][0], csp);
	}
	if (disposition != NULL && *disposition != '\0')
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

int tb_reply_json(struct tb_reply *rp, unsigned int status, json_t *body)
{
	rp->status = status;
	json_decref(rp->body);
	rp->body = body;
	if (body == NULL && status != 204)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}
