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
} table[] = {
	{TB_OK, "ok"},
	{TB_ERR_INVALID, "invalid_field"},
	{TB_ERR_NOT_FOUND, "not_found"},
	{TB_ERR_CONFLICT, "conflict"},
	{TB_ERR_IO, "io_error"},
	{TB_ERR_TIMEOUT, "timeout"},
	{TB_ERR_NOMEM, "out_of_memory"},
	{TB_ERR_UNAUTHORIZED, "unauthorized"},
	{TB_ERR_FORBIDDEN, "forbidden"},
	{TB_ERR_HOSTKEY, "host_key_mismatch"},
	{TB_ERR_REMOTE, "remote_error"},
	{TB_ERR_UNREACHABLE, "unreachable"},
	{TB_ERR_INTERNAL, "internal_error"},
	{TB_ERR_TOO_LARGE, "too_large"},
	{TB_ERR_RATE_LIMITED, "rate_limited"},
	{TB_ERR_METHOD, "method_not_allowed"},
	{TB_ERR_CONFIG, "config_error"},
	{TB_ERR_CANCELED, "canceled"},
	{TB_ERR_BAD_JSON, "invalid_json"},
	{TB_ERR_UNKNOWN_FIELD, "unknown_field"},
	{TB_ERR_CSRF, "csrf_required"},
	{TB_ERR_MEDIA_TYPE, "unsupported_media_type"},
	{TB_ERR_URI_TOO_LONG, "uri_too_long"},
};

const char *tb_err_name(int code)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return table[i].name;
	return "internal_error";
}
