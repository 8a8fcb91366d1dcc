/* tbctl_cmd_console.c - `tbctl console HOST`: a machine's serial console in
 * the terminal.  The scrollback, then live (GET /api/v1/hosts/HOST/console,
 * server-sent events: bytes in base64); unless --watch, the console's lease is
 * taken (POST .../console/lease) and what is typed goes to the console
 * (POST .../console/input) with the terminal in raw mode, as cu and ssh do:
 * after Enter, "~." leaves, "~B" sends Break, "~~" a "~".  The lease is given
 * back on the way out.  --log ID prints a kept boot log, --log list the logs.
 *
 * One thread: curl's multi interface waits on the stream (read by
 * tbctl_sse.c, tbctl's one SSE reader) and on stdin.  When testbedd ends the
 * stream with an "end" event (an inventory reload changed or removed the
 * console), it says why and opens the stream again from where it was (a
 * changed console's reader kept the scrollback's offsets and the lease; a
 * removed one answers 404, and tbctl leaves). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <curl/curl.h>

#include "tbctl.h"
#include "tbctl_sse.h"

struct con {
	const struct tbctl_ctx *ctx;
	const char *host;
	int connected; /* -1: not known yet */
	int raw;       /* the terminal is in raw mode */
	int ended;     /* the stream's "end" event came */
};

static struct termios saved;

static void restore_terminal(void)
{
	tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

static int raw_terminal(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) != 0)
		return 0;
	t = saved;
	t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	t.c_oflag &= ~(tcflag_t)OPOST;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
	t.c_cflag |= CS8;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) != 0)
		return 0;
	atexit(restore_terminal);
	return 1;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_decode(const char *s, size_t n, unsigned char *out)
{
	unsigned v = 0;
	int bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		const char *c = s[i] ? strchr(B64, s[i]) : NULL;

		if (c == NULL)
			continue; /* '=' and anything else */
		v = (v << 6) | (unsigned)(c - B64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)((v >> bits) & 0xff);
		}
	}
	return o;
}

static void b64_encode(const unsigned char *in, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < len ? in[i + 2] : 0);

		out[o++] = B64[(v >> 18) & 63];
		out[o++] = B64[(v >> 12) & 63];
		out[o++] = i + 1 < len ? B64[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? B64[v & 63] : '=';
	}
	out[o] = '\0';
}

/* A message of tbctl's own between the console's bytes. */
static void note(const struct con *c, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static void note(const struct con *c, const char *fmt, ...)
{
	va_list ap;

	fputs(c->raw ? "\r\n[tbctl: " : "[tbctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(c->raw ? "]\r\n" : "]\n", stderr);
}

/* A record of the console's stream (tbctl_sse.c): output to the terminal,
 * a change of the reader's state or the end as a note. */
static void on_event(void *cls, const char *type, long long id, const char *data)
{
	struct con *c = cls;

	(void)id;
	if (strcmp(type, "output") == 0) {
		size_t n = strlen(data);
		unsigned char *b = malloc(n / 4 * 3 + 3);

		if (b != NULL) {
			fwrite(b, 1, b64_decode(data, n, b), stdout);
			fflush(stdout);
			free(b);
		}
	} else if (strcmp(type, "state") == 0) {
		json_t *j = json_loads(data, 0, NULL);
		int up = json_is_true(json_object_get(j, "connected"));

		if (j != NULL && up != c->connected) {
			if (!up)
				note(c, "the console is not connected: %s; testbedd retries",
				     tbctl_jstr(j, "last_error") ? tbctl_jstr(j, "last_error") : "not yet");
			else if (c->connected == 0)
				note(c, "%s", "the console is connected again");
			c->connected = up;
		}
		json_decref(j);
	} else if (strcmp(type, "end") == 0) {
		json_t *j = json_loads(data, 0, NULL);

		note(c, "testbedd ended the console stream: %s",
		     tbctl_jstr(j, "reason") ? tbctl_jstr(j, "reason") : "no reason given");
		c->ended = 1;
		json_decref(j);
	}
}

static char *host_path(const char *host, const char *rest)
{
	char *e = tbctl_http_escape(host), *p = NULL;

	if (e != NULL && (p = malloc(strlen(e) + strlen(rest) + 32)) != NULL)
		sprintf(p, "/api/v1/hosts/%s/console%s", e, rest);
	free(e);
	return p;
}

/* POST body to .../console/SUB; quietly: a refusal is printed as a note. */
static int post(struct con *c, const char *sub, json_t *body)
{
	char *path = host_path(c->host, sub);
	struct tbctl_reply r = {0};
	int rc = -1;

	if (path != NULL && tbctl_http_request(&c->ctx->http, "POST", path, body, &r) == 0 && r.status / 100 == 2)
		rc = 0;
	else if (r.status != 0)
		note(c, "%s",
		     tbctl_jstr(json_object_get(r.json, "error"), "message")
			     ? tbctl_jstr(json_object_get(r.json, "error"), "message")
			     : "refused");
	else
		note(c, "%s", r.transport_error);
	tbctl_reply_free(&r);
	free(path);
	json_decref(body);
	return rc;
}

static int send_bytes(struct con *c, const unsigned char *b, size_t n)
{
	char enc[4 * 1400 / 3 + 8];

	if (n == 0)
		return 0;
	b64_encode(b, n, enc);
	return post(c, "/input", json_pack("{s:s}", "data", enc));
}

/* What was typed: the ~ escapes at a line's start, the rest sent.  1: leave. */
static int typed(struct con *c, const unsigned char *in, size_t n, int *bol, int *tilde)
{
	unsigned char out[1024];
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = in[i];

		if (*tilde) {
			*tilde = 0;
			if (ch == '.')
				return send_bytes(c, out, o), 1;
			if (ch == 'B') {
				send_bytes(c, out, o);
				o = 0;
				post(c, "/input", json_pack("{s:s}", "key", "break"));
				continue;
			}
			if (ch != '~')
				out[o++] = '~';
		} else if (*bol && ch == '~') {
			*tilde = 1;
			continue;
		}
		out[o++] = ch;
		*bol = ch == '\r' || ch == '\n';
		if (o >= sizeof(out) - 2) {
			send_bytes(c, out, o);
			o = 0;
		}
	}
	send_bytes(c, out, o);
	return 0;
}

static int print_log(const struct tbctl_ctx *ctx, const char *host, const char *id)
{
	char *esc = tbctl_http_escape(id), *path = NULL, *text = NULL;
	size_t len = 0;
	int rc = TBCTL_EXIT_USAGE;

	if (strcmp(id, "list") == 0) {
		json_t *j = NULL;

		path = host_path(host, "/logs");
		if (path == NULL || (rc = tbctl_api_call(ctx, "GET", path, NULL, &j)) != 0)
			goto out;
		if (!ctx->args->json) {
			size_t i;
			json_t *l;

			json_array_foreach(json_object_get(j, "logs"), i, l)
				printf("%-20s %-22s %-6s %lld bytes\n", tbctl_jstr(l, "id"), tbctl_jstr(l, "started"),
				       tbctl_jstr(l, "reason"), tbctl_jint(l, "bytes", 0));
		}
		json_decref(j);
		goto out;
	}
	if (esc == NULL || (path = malloc(strlen(esc) + 8)) == NULL)
		goto out;
	sprintf(path, "/logs/%s", esc);
	free(esc);
	esc = path;
	if ((path = host_path(host, esc)) == NULL)
		goto out;
	if ((rc = tbctl_api_get_text(ctx, path, &text, &len)) == 0 && text != NULL)
		fwrite(text, 1, len, stdout);
out:
	free(text);
	free(path);
	free(esc);
	return rc;
}

/* One connection of the stream s: follow it (and stdin unless watching)
 * until ~. (*left set), its end, or an error.  *typing goes 0 at the end of
 * stdin.  Returns the curl result of the transfer (CURLE_OK when it ended
 * or was left). */
static CURLcode follow_once(struct con *c, struct tbctl_sse *s, const char *path, int *typing, int *bol, int *tilde,
			    int *left)
{
	CURLM *m = curl_multi_init();
	CURL *h = tbctl_sse_begin_path(s, c->ctx, path);
	CURLcode res = CURLE_OK;
	int running = 1;

	if (m == NULL || h == NULL) {
		curl_multi_cleanup(m);
		tbctl_sse_end(s, h);
		return CURLE_OUT_OF_MEMORY;
	}
	curl_multi_add_handle(m, h);
	while (running) {
		struct curl_waitfd in = {.fd = STDIN_FILENO, .events = CURL_WAIT_POLLIN};
		int nfds = 0;

		curl_multi_perform(m, &running);
		if (!running)
			break;
		curl_multi_wait(m, *typing ? &in : NULL, *typing ? 1 : 0, 1000, &nfds);
		if (*typing && (in.revents & CURL_WAIT_POLLIN)) {
			unsigned char b[512];
			ssize_t n = read(STDIN_FILENO, b, sizeof(b));

			if (n <= 0) {
				*typing = 0; /* end of input: keep watching */
				continue;
			}
			if (typed(c, b, (size_t)n, bol, tilde)) {
				*left = 1;
				break;
			}
		}
	}
	if (!running) {
		CURLMsg *msg;
		int n;

		while ((msg = curl_multi_info_read(m, &n)) != NULL)
			if (msg->msg == CURLMSG_DONE)
				res = msg->data.result;
	}
	curl_multi_remove_handle(m, h);
	curl_multi_cleanup(m);
	tbctl_sse_end(s, h);
	return res;
}

/* Follow the console's stream until ~., its end, or an error; after an
 * "end" event, once more from where it was. */
static int follow(struct con *c, int typing)
{
	struct tbctl_sse *s = tbctl_sse_new(on_event, c, -1);
	char *path = host_path(c->host, "");
	int bol = 1, tilde = 0, left = 0, rc = TBCTL_EXIT_OK;

	if (s == NULL || path == NULL) {
		tbctl_sse_free(s);
		free(path);
		return TBCTL_EXIT_SERVER;
	}
	tbctl_sse_set_what(s, "console stream");
	for (;;) {
		CURLcode res;

		c->ended = 0;
		res = follow_once(c, s, path, &typing, &bol, &tilde, &left);
		if (left)
			break;
		if ((rc = tbctl_sse_refused(s)) != TBCTL_EXIT_OK)
			break;
		if (tbctl_sse_status(s) != 200 && tbctl_sse_status(s) != 0) { /* 429: its viewers; 503 */
			note(c, "the console stream was refused (%s%sHTTP %ld)", tbctl_sse_why(s),
			     tbctl_sse_why(s)[0] ? "; " : "", tbctl_sse_status(s));
			rc = TBCTL_EXIT_REFUSED;
			break;
		}
		if (res != CURLE_OK) {
			note(c, "the console stream ended: %s", curl_easy_strerror(res));
			rc = TBCTL_EXIT_SERVER;
			break;
		}
		if (!c->ended)
			break; /* testbedd stopped */
	}
	tbctl_sse_free(s);
	free(path);
	return rc;
}

int tbctl_cmd_console(const struct tbctl_ctx *ctx)
{
	struct con *c = calloc(1, sizeof(*c));
	int typing = !(ctx->args->seen & TBCTL_OPT_WATCH), rc;

	if (c == NULL)
		return TBCTL_EXIT_SERVER;
	c->ctx = ctx;
	c->host = ctx->args->pos[1];
	c->connected = -1;
	if (ctx->args->log != NULL) {
		rc = print_log(ctx, c->host, ctx->args->log);
		free(c);
		return rc;
	}
	if (typing && post(c, "/lease", json_object()) != 0) {
		note(c, "%s", "watching only (no lease)");
		typing = 0;
	}
	if (typing) {
		c->raw = raw_terminal();
		fprintf(stderr, "[tbctl: %s's console; ~. leaves, ~B sends Break]%s", c->host, c->raw ? "\r\n" : "\n");
	}
	rc = follow(c, typing);
	if (typing) {
		char *path = host_path(c->host, "/lease");
		struct tbctl_reply r = {0};

		if (path != NULL)
			tbctl_http_request(&ctx->http, "DELETE", path, NULL, &r);
		tbctl_reply_free(&r);
		free(path);
	}
	if (c->raw) {
		restore_terminal();
		fputs("\n", stderr);
	}
	free(c);
	return rc;
}
