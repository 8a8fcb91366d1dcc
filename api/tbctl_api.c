/*
 * tbctl_api.c - the token file, and one API call turned into an exit code.
 */
#include "tbctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tbctl_table.h"

#define TOKEN_MAX 4096

void tbctl_token_free(char *token)
{
	volatile char *v = token;

	if (token == NULL)
		return;
	while (*v)
		*v++ = 0;
	free(token);
}

int tbctl_token_load(const char **path_out, char **token)
{
	const char *path = getenv("TESTBEDD_TOKEN_FILE");
	struct stat st;
	char buf[TOKEN_MAX + 1];
	size_t len = 0, i;
	ssize_t n;
	int fd;

	*token = NULL;
	*path_out = path;
	if (path == NULL || *path == '\0') {
		fprintf(stderr, "tbctl: no token: set TESTBEDD_TOKEN_FILE to a file (mode 0600) "
				"that holds an API token, e.g. the daemon's STATE_DIR/admin.token "
				"or the secret printed by 'tbctl token create'; tokens are never "
				"read from the command line\n");
		return TBCTL_EXIT_USAGE;
	}
	fd = open(path, O_RDONLY | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "tbctl: cannot open token file %s (TESTBEDD_TOKEN_FILE): %s\n", path, strerror(errno));
		return TBCTL_EXIT_USAGE;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr,
			"tbctl: token file %s is not a regular file; point "
			"TESTBEDD_TOKEN_FILE at the file that holds the token\n",
			path);
		close(fd);
		return TBCTL_EXIT_USAGE;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		fprintf(stderr,
			"tbctl: token file %s has mode %04o: group or others "
			"may use it; refusing it. Run: chmod 600 %s\n",
			path, (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return TBCTL_EXIT_USAGE;
	}
	while (len < sizeof buf - 1) {
		n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "tbctl: cannot read token file %s: %s\n", path, strerror(errno));
			close(fd);
			return TBCTL_EXIT_USAGE;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	/* One token, optionally followed by a newline (as `echo` or the daemon
	 * write it); anything else means the file is not what we think. */
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	if (len == 0 || len >= TOKEN_MAX) {
		fprintf(stderr,
			"tbctl: token file %s is %s; it must hold one API "
			"token on one line\n",
			path, len == 0 ? "empty" : "too large");
		memset(buf, 0, sizeof buf);
		return TBCTL_EXIT_USAGE;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c <= 0x20 || c >= 0x7F) {
			fprintf(stderr,
				"tbctl: token file %s holds a character that "
				"cannot be in a token (byte %zu); it must hold one API "
				"token on one line\n",
				path, i + 1);
			memset(buf, 0, sizeof buf);
			return TBCTL_EXIT_USAGE;
		}
	}
	*token = malloc(len + 1);
	if (*token == NULL) {
		fprintf(stderr, "tbctl: out of memory\n");
		memset(buf, 0, sizeof buf);
		return TBCTL_EXIT_SERVER;
	}
	memcpy(*token, buf, len + 1);
	memset(buf, 0, sizeof buf);
	return TBCTL_EXIT_OK;
}

const char *tbctl_jstr(const json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

long long tbctl_jint(const json_t *obj, const char *key, long long dflt)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

void tbctl_print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2));

	if (s != NULL) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
}

static void print_raw_body(const struct tbctl_reply *r)
{
	if (r->body_len == 0)
		return;
	fwrite(r->body, 1, r->body_len, stdout);
	if (r->body[r->body_len - 1] != '\n')
		fputc('\n', stdout);
}

/* A hint that names what to do, by status; "" when the message says enough. */
static const char *hint(const struct tbctl_ctx *ctx, long status)
{
	switch (status) {
	case 401:
		return ctx->token_file != NULL ? "the token in TESTBEDD_TOKEN_FILE was refused (revoked, expired "
						 "or mistyped); ask an admin for a new one"
					       : "this call needs a token: set TESTBEDD_TOKEN_FILE";
	case 403:
		return "your token's role is too low for this; 'tbctl whoami' shows "
		       "it, an admin can create a token with a higher role";
	default: return "";
	}
}

static int exit_for_status(long status)
{
	if (status == 401 || status == 403)
		return TBCTL_EXIT_AUTH;
	if (status >= 400 && status < 500)
		return TBCTL_EXIT_REFUSED;
	return TBCTL_EXIT_SERVER;
}

static int report_error(const struct tbctl_ctx *ctx, const struct tbctl_reply *r)
{
	json_t *err = json_is_object(r->json) ? json_object_get(r->json, "error") : NULL;
	const char *code = tbctl_jstr(err, "code");
	const char *msg = tbctl_jstr(err, "message");
	const char *field = tbctl_jstr(err, "field");
	const char *h = hint(ctx, r->status);

	fputs("tbctl: ", stderr);
	if (msg != NULL) {
		tbctl_print_safe(stderr, msg);
	} else {
		fprintf(stderr, "testbedd answered HTTP %ld without an error message", r->status);
	}
	fprintf(stderr, " (HTTP %ld", r->status);
	if (code != NULL) {
		fputs(", ", stderr);
		tbctl_print_safe(stderr, code);
	}
	if (field != NULL && *field != '\0') {
		fputs(", field ", stderr);
		tbctl_print_safe(stderr, field);
	}
	fputs(")\n", stderr);
	if (r->status == 429 && r->retry_after[0] != '\0')
		fprintf(stderr, "tbctl: retry after %s seconds\n", r->retry_after);
	if (r->status == 405 && r->allow[0] != '\0')
		fprintf(stderr,
			"tbctl: the server allows %s here; is tbctl newer than "
			"testbedd?\n",
			r->allow);
	if (*h != '\0')
		fprintf(stderr, "tbctl: %s\n", h);
	if (ctx->args->json && r->json != NULL)
		print_raw_body(r);
	return exit_for_status(r->status);
}

/* Send the request.  On a 2xx reply leave it in *r (the caller frees it);
 * otherwise say why on stderr and return the exit code. */
static int request(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body,
		   struct tbctl_reply *r)
{
	int rc;

	if (tbctl_http_request(&ctx->http, method, path, body, r) != 0) {
		fprintf(stderr, "tbctl: no reply from testbedd at %s: %s\n", ctx->http.base_url, r->transport_error);
		fprintf(stderr, r->timed_out ? "tbctl: it did not answer in time; check that testbedd runs and "
					       "is not overloaded, or raise --timeout\n"
					     : "tbctl: check that testbedd runs there, or set --url or "
					       "TESTBEDD_URL\n");
		return TBCTL_EXIT_SERVER;
	}
	if (r->status < 200 || r->status >= 300) {
		rc = report_error(ctx, r);
		tbctl_reply_free(r);
		return rc;
	}
	return TBCTL_EXIT_OK;
}

static int call(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body, json_t **out,
		int print)
{
	struct tbctl_reply r;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = request(ctx, method, path, body, &r)) != TBCTL_EXIT_OK)
		return rc;
	if (r.status != 204 && r.json == NULL) {
		fprintf(stderr,
			"tbctl: testbedd at %s answered HTTP %ld with a body "
			"that is not JSON; is --url pointing at testbedd?\n",
			ctx->http.base_url, r.status);
		tbctl_reply_free(&r);
		return TBCTL_EXIT_SERVER;
	}
	if (print && ctx->args->json)
		print_raw_body(&r);
	if (out != NULL) {
		*out = r.json;
		r.json = NULL;
	}
	tbctl_reply_free(&r);
	return TBCTL_EXIT_OK;
}

int tbctl_api_get_text(const struct tbctl_ctx *ctx, const char *path, char **text, size_t *len)
{
	struct tbctl_reply r;
	int rc;

	*text = NULL;
	*len = 0;
	if ((rc = request(ctx, "GET", path, NULL, &r)) != TBCTL_EXIT_OK)
		return rc;
	*text = r.body;
	*len = r.body_len;
	r.body = NULL;
	tbctl_reply_free(&r);
	return TBCTL_EXIT_OK;
}

int tbctl_api_call(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body, json_t **out)
{
	return call(ctx, method, path, body, out, 1);
}

int tbctl_api_call_quiet(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body,
			 json_t **out)
{
	return call(ctx, method, path, body, out, 0);
}
