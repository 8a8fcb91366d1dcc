/* error.c - the one error convention: see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tb_fail(struct tb_error *e, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return code;
	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field != NULL ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return code;
}

void tb_error_clear(struct tb_error *e)
{
	if (e == NULL)
		return;
	e->code = 0;
	e->field[0] = '\0';
	e->message[0] = '\0';
}

static const struct {
	int code;
	const char *name;
	unsigned int status;
} table[] = {
	{TB_OK, "ok", 200},
	{TB_ERR_INVALID, "invalid_field", 400},
	{TB_ERR_NOT_FOUND, "not_found", 404},
	{TB_ERR_CONFLICT, "conflict", 409},
	{TB_ERR_IO, "io_error", 500},
	{TB_ERR_TIMEOUT, "timeout", 504},
	{TB_ERR_NOMEM, "out_of_memory", 503},
	{TB_ERR_UNAUTHORIZED, "unauthorized", 401},
	{TB_ERR_FORBIDDEN, "forbidden", 403},
	{TB_ERR_HOSTKEY, "host_key_mismatch", 502},
	{TB_ERR_REMOTE, "remote_error", 502},
	{TB_ERR_UNREACHABLE, "unreachable", 502},
	{TB_ERR_INTERNAL, "internal_error", 500},
	{TB_ERR_TOO_LARGE, "too_large", 413},
	{TB_ERR_RATE_LIMITED, "rate_limited", 429},
	{TB_ERR_METHOD, "method_not_allowed", 405},
	{TB_ERR_CONFIG, "config_error", 500},
	{TB_ERR_CANCELED, "canceled", 409},
	{TB_ERR_BAD_JSON, "invalid_json", 400},
	{TB_ERR_UNKNOWN_FIELD, "unknown_field", 400},
	{TB_ERR_CSRF, "csrf_required", 403},
	{TB_ERR_MEDIA_TYPE, "unsupported_media_type", 415},
	{TB_ERR_URI_TOO_LONG, "uri_too_long", 414},
};

const char *tb_err_name(int code)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return table[i].name;
	return "internal_error";
}

unsigned int tb_err_http_status(int code)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return table[i].status;
	return 500;
}
