/*
 * error.h - testbedd's one error convention.
 *
 * Every function that can fail returns 0 (TB_OK) or a negative enum tb_err
 * value.  Where a person will read the reason, the caller passes a
 * struct tb_error that the failing function fills through tb_fail(): a code,
 * the field or host the message is about (may be empty) and a sentence that
 * says what to do.  The HTTP edge turns it into
 *   {"error":{"code":"<tb_err_name>","message":"...","field":"..."}}
 * in one place (http_reply.c, which also maps each code to an HTTP status:
 * this layer knows no HTTP); tbctl and the daemon's log print the message.
 * A NULL struct tb_error pointer is allowed everywhere: the code still returns.
 */
#ifndef TB_ERROR_H
#define TB_ERROR_H

#include <stddef.h>

enum tb_err {
	TB_OK = 0,
	TB_ERR_INVALID = -1,        /* bad input: a field, a value, a file */
	TB_ERR_NOT_FOUND = -2,      /* no such host, action, route */
	TB_ERR_CONFLICT = -3,       /* busy or already exists */
	TB_ERR_IO = -4,             /* local I/O, files, sockets */
	TB_ERR_TIMEOUT = -5,        /* a remote operation took too long */
	TB_ERR_NOMEM = -6,          /* out of memory */
	TB_ERR_UNAUTHORIZED = -7,   /* no or bad credentials */
	TB_ERR_FORBIDDEN = -8,      /* role too low, CSRF missing */
	TB_ERR_HOSTKEY = -9,        /* unknown or changed ssh host key */
	TB_ERR_REMOTE = -10,        /* a remote host or tool failed */
	TB_ERR_UNREACHABLE = -11,   /* a host does not answer */
	TB_ERR_INTERNAL = -12,      /* a bug or a library failure */
	TB_ERR_TOO_LARGE = -13,     /* body or header over its limit */
	TB_ERR_RATE_LIMITED = -14,  /* too many attempts */
	TB_ERR_METHOD = -15,        /* method not allowed on a route */
	TB_ERR_CONFIG = -16,        /* configuration mistake (file:line:col) */
	TB_ERR_CANCELED = -17,      /* stopped on request */
	TB_ERR_BAD_JSON = -18,      /* a body that is not JSON */
	TB_ERR_UNKNOWN_FIELD = -19, /* a body field nobody asked for */
	TB_ERR_CSRF = -20,          /* cookie mutation without CSRF header */
	TB_ERR_MEDIA_TYPE = -21,    /* body not application/json */
	TB_ERR_URI_TOO_LONG = -22,  /* a path segment over its limit */
};

#define TB_ERROR_FIELD_MAX 96
#define TB_ERROR_MSG_MAX 512

struct tb_error {
	int code;                       /* enum tb_err, 0 when unset */
	char field[TB_ERROR_FIELD_MAX]; /* "" when not about one field */
	char message[TB_ERROR_MSG_MAX]; /* a sentence for a person */
};

/* Fill *e (if non-NULL) and return code, so that callers can write
 * `return tb_fail(e, TB_ERR_INVALID, "duration_s", "must be 1..3600, got %d", d);`.
 * field may be NULL.  The message is truncated to fit; never allocates. */
int tb_fail(struct tb_error *e, int code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Reset *e to "no error". */
void tb_error_clear(struct tb_error *e);

/* Stable machine name of a code ("invalid_field", "not_found", ...). */
const char *tb_err_name(int code);

#endif /* TB_ERROR_H */
