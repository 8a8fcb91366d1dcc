/*
 * tbctl_cmd_power.c - tbctl power, boot, boot-entries, actions, action,
 * action cancel.  With --wait, follows an action by polling GET
 * /api/v1/actions/{id} twice a second, printing each new step (with the
 * exact command it ran) as it appears, and exits 0, 5 (failed) or 6
 * (canceled).  Ctrl-C stops waiting, not the action.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "tbctl_table.h"

static int nomem(void)
{
	fprintf(stderr, "tbctl: out of memory\n");
	return TBCTL_EXIT_SERVER;
}

/* "HH:MM:SS.mmm" (UTC) of a time in ms since the epoch. */
static void clock_ms(long long ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%02d:%02d:%02d.%03lld", tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

/* One step: its time to the ms, what, and how long it took when that is
 * known (until the next step; the last until the action's end). */
static void print_step(const json_t *st)
{
	const char *cmd = tbctl_jstr(st, "command"), *out = tbctl_jstr(st, "output");
	const char *at = tbctl_jstr(st, "at");
	json_t *ex = json_object_get(st, "exit_status"), *dur = json_object_get(st, "duration_ms");
	char when[32], took[48] = "";

	if (json_is_integer(json_object_get(st, "at_ms")))
		clock_ms(tbctl_jint(st, "at_ms", 0), when, sizeof(when));
	else
		snprintf(when, sizeof(when), "%s", at != NULL && strlen(at) > 11 ? at + 11 : "");
	if (json_is_integer(dur))
		snprintf(took, sizeof(took), "   (%.1f s)", (double)json_integer_value(dur) / 1000.0);
	printf("%s  %s%s\n", when, tbctl_jstr(st, "what") ? tbctl_jstr(st, "what") : "", took);
	if (cmd != NULL) {
		if (json_is_integer(ex))
			printf("          $ %s   (exit %lld)\n", cmd, (long long)json_integer_value(ex));
		else
			printf("          $ %s\n", cmd);
	}
	if (out != NULL && out[0] != '\0') {
		char line[256];
		const char *p = out;
		int n = 0;

		while (*p && n < 6) {
			size_t l = strcspn(p, "\n");

			snprintf(line, sizeof(line), "%.*s", (int)(l < 200 ? l : 200), p);
			printf("          | %s\n", line);
			p += l;
			if (*p == '\n')
				p++;
			n++;
		}
	}
}

static void print_action_head(const json_t *act)
{
	const json_t *params = json_object_get(act, "params");
	char *p = json_dumps(params, JSON_COMPACT);

	printf("action %lld: %s %s on %s by %s: %s\n", tbctl_jint(act, "id", 0), tbctl_jstr(act, "kind"),
	       p != NULL ? p : "", tbctl_jstr(act, "host"), tbctl_jstr(act, "actor"), tbctl_jstr(act, "state"));
	free(p);
}

static int end_code(const json_t *act)
{
	const char *state = tbctl_jstr(act, "state");
	const json_t *e = json_object_get(act, "error");

	if (state != NULL && strcmp(state, "succeeded") == 0)
		return TBCTL_EXIT_OK;
	if (json_is_object(e))
		fprintf(stderr, "tbctl: action %lld %s: %s\n", tbctl_jint(act, "id", 0), state != NULL ? state : "?",
			tbctl_jstr(e, "message") ? tbctl_jstr(e, "message") : "");
	return state != NULL && strcmp(state, "canceled") == 0 ? TBCTL_EXIT_CANCELED : TBCTL_EXIT_FAILED;
}

static int finished(const char *state)
{
	return state != NULL &&
	       (strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0 || strcmp(state, "canceled") == 0);
}

/* Follow action id to its end, printing steps as they come. */
static int follow(const struct tbctl_ctx *ctx, long long id)
{
	char path[64];
	size_t shown = 0;
	int first = 1;

	snprintf(path, sizeof(path), "/api/v1/actions/%lld", id);
	for (;;) {
		json_t *reply = NULL, *act, *steps;
		int rc = tbctl_api_call_quiet(ctx, "GET", path, NULL, &reply);
		const char *state;

		if (rc != TBCTL_EXIT_OK)
			return rc;
		act = json_object_get(reply, "action");
		if (first) {
			print_action_head(act);
			first = 0;
		}
		steps = json_object_get(act, "steps");
		for (; shown < json_array_size(steps); shown++)
			print_step(json_array_get(steps, shown));
		fflush(stdout);
		state = tbctl_jstr(act, "state");
		if (finished(state)) {
			if (json_is_integer(json_object_get(act, "duration_ms")))
				printf("action %lld %s after %.1f s\n", id, state,
				       (double)tbctl_jint(act, "duration_ms", 0) / 1000.0);
			else
				printf("action %lld %s\n", id, state);
			if (ctx->args->json)
				tbctl_print_json(reply);
			rc = end_code(act);
			json_decref(reply);
			return rc;
		}
		json_decref(reply);
		{
			struct timespec ts = {0, 500000000L};

			nanosleep(&ts, NULL);
		}
	}
}

/* POST body to path; print or follow the action it started. */
static int start_action(const struct tbctl_ctx *ctx, const char *path, json_t *body)
{
	json_t *reply = NULL;
	long long id;
	int rc;

	if (body == NULL)
		return nomem();
	rc = ctx->args->wait ? tbctl_api_call_quiet(ctx, "POST", path, body, &reply)
			     : tbctl_api_call(ctx, "POST", path, body, &reply);
	json_decref(body);
	if (rc != TBCTL_EXIT_OK) {
		json_decref(reply);
		return rc;
	}
	id = tbctl_jint(json_object_get(reply, "action"), "id", 0);
	if (!ctx->args->wait) {
		if (!ctx->args->json)
			printf("action %lld started; follow it with: tbctl action %lld --wait\n", id, id);
		json_decref(reply);
		return TBCTL_EXIT_OK;
	}
	json_decref(reply);
	return follow(ctx, id);
}

static char *host_path(const char *host, const char *tail)
{
	char *h = tbctl_http_escape(host), *p;
	size_t n;

	if (h == NULL)
		return NULL;
	n = strlen("/api/v1/hosts/") + strlen(h) + strlen(tail) + 1;
	p = malloc(n);
	if (p != NULL)
		snprintf(p, n, "/api/v1/hosts/%s%s", h, tail);
	free(h);
	return p;
}

/* Before asking testbedd to act on a held host, say who holds it (a silent
 * GET: when it fails, the POST that follows says why). */
static void say_holder(const struct tbctl_ctx *ctx, const char *host)
{
	char *path = host_path(host, "");
	struct tbctl_reply r;
	char held[256] = "";

	memset(&r, 0, sizeof(r));
	if (path != NULL && tbctl_http_request(&ctx->http, "GET", path, NULL, &r) == 0 && r.status == 200)
		tbctl_held_by_text(
			json_object_get(json_object_get(json_object_get(r.json, "host"), "state"), "held_by"), held,
			sizeof(held));
	tbctl_reply_free(&r);
	free(path);
	if (held[0] != '\0') {
		fputs("tbctl: ", stderr);
		tbctl_print_safe(stderr, host);
		fputs(" is held by ", stderr);
		tbctl_print_safe(stderr, held);
		fputs("\n", stderr);
	}
}

int tbctl_cmd_power(const struct tbctl_ctx *ctx)
{
	static const char *const ok[] = {"on", "off", "cycle", "reset", "soft", NULL};
	const char *what = ctx->args->pos[2];
	char *path;
	int rc, valid = 0;

	for (size_t i = 0; ok[i] != NULL; i++)
		valid |= strcmp(ok[i], what) == 0;
	if (!valid) {
		fprintf(stderr, "tbctl: power needs on, off, cycle, reset or soft, got \"%s\"\n", what);
		return TBCTL_EXIT_USAGE;
	}
	if ((path = host_path(ctx->args->pos[1], "/power")) == NULL)
		return nomem();
	say_holder(ctx, ctx->args->pos[1]);
	rc = start_action(ctx, path, json_pack("{s:s}", "action", what));
	free(path);
	return rc;
}

int tbctl_cmd_boot(const struct tbctl_ctx *ctx)
{
	char *path = host_path(ctx->args->pos[1], "/boot");
	int rc;

	if (path == NULL)
		return nomem();
	say_holder(ctx, ctx->args->pos[1]);
	rc = start_action(ctx, path,
			  json_pack("{s:s, s:b}", "os", ctx->args->pos[2], "make_default", ctx->args->make_default));
	free(path);
	return rc;
}

int tbctl_cmd_boot_entries(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"INDEX", "ID", "TITLE", "OS"};
	char *path = host_path(ctx->args->pos[1], "/boot-entries");
	json_t *reply = NULL, *e, *map;
	struct tbctl_table *t;
	size_t i;
	int rc;

	if (path == NULL)
		return nomem();
	/* testbedd answers from the menu its prober read; when none was read
	 * yet it asks for one and answers 202 "reading": ask again, up to 60 s */
	for (int waited = 0;; waited++) {
		const char *state;

		rc = tbctl_api_call_quiet(ctx, "GET", path, NULL, &reply);
		state = rc == TBCTL_EXIT_OK ? tbctl_jstr(reply, "state") : NULL;
		if (state == NULL || strcmp(state, "reading") != 0 || waited >= 30)
			break;
		if (waited == 0 && !ctx->args->json) {
			fputs("tbctl: ", stderr);
			tbctl_print_safe(stderr,
					 tbctl_jstr(reply, "message") ? tbctl_jstr(reply, "message") : "reading");
			fputc('\n', stderr);
		}
		json_decref(reply);
		reply = NULL;
		sleep(2);
	}
	free(path);
	if (rc == TBCTL_EXIT_OK && tbctl_jstr(reply, "state") != NULL) {
		fprintf(stderr, "tbctl: the GRUB menu was still not read after 60 s: try again later\n");
		rc = TBCTL_EXIT_SERVER;
	}
	if (rc == TBCTL_EXIT_OK && ctx->args->json)
		tbctl_print_json(reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	map = json_object_get(reply, "map");
	if ((t = tbctl_table_new(4, header)) == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(json_object_get(reply, "entries"), i, e)
	{
		const char *cells[4], *os = "", *k;
		json_t *v;

		json_object_foreach(map, k, v)
		{
			const char *idx = tbctl_jstr(v, "index");

			if (idx != NULL && strcmp(idx, tbctl_jstr(e, "index")) == 0)
				os = k;
		}
		cells[0] = tbctl_jstr(e, "index");
		cells[1] = tbctl_jstr(e, "id") ? tbctl_jstr(e, "id") : "-";
		cells[2] = tbctl_jstr(e, "title");
		cells[3] = os;
		tbctl_table_add(t, cells);
	}
	printf("GRUB menu of %s, read from its %s %lld s ago%s (GRUB's default: %s)\n", tbctl_jstr(reply, "host"),
	       tbctl_jstr(reply, "read_from"), tbctl_jint(reply, "age_s", 0),
	       json_is_true(json_object_get(reply, "refreshing")) ? ", being read again" : "",
	       tbctl_jstr(reply, "default"));
	if (json_is_object(json_object_get(reply, "last_error"))) {
		fputs("the last read failed: ", stdout);
		tbctl_print_safe(stdout, tbctl_jstr(json_object_get(reply, "last_error"), "message"));
		fputc('\n', stdout);
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_actions(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"ID", "HOST", "KIND", "WHAT", "STATE", "BY", "CREATED", "ERROR"};
	char path[512];
	char *h = ctx->args->host != NULL ? tbctl_http_escape(ctx->args->host) : NULL;
	json_t *reply = NULL, *a;
	struct tbctl_table *t;
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/actions?limit=%s%s%s", ctx->args->limit ? ctx->args->limit : "50",
		 h ? "&host=" : "", h ? h : "");
	free(h);
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	if ((t = tbctl_table_new(8, header)) == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(json_object_get(reply, "actions"), i, a)
	{
		char id[32], *what = json_dumps(json_object_get(a, "params"), JSON_COMPACT);
		const char *cells[8];

		snprintf(id, sizeof(id), "%lld", tbctl_jint(a, "id", 0));
		cells[0] = id;
		cells[1] = tbctl_jstr(a, "host");
		cells[2] = tbctl_jstr(a, "kind");
		cells[3] = what != NULL ? what : "";
		cells[4] = tbctl_jstr(a, "state");
		cells[5] = tbctl_jstr(a, "actor");
		cells[6] = tbctl_jstr(a, "created_at");
		cells[7] = json_is_object(json_object_get(a, "error"))
				   ? tbctl_jstr(json_object_get(a, "error"), "message")
				   : "-";
		tbctl_table_add(t, cells);
		free(what);
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

static int parse_id(const char *s, long long *id)
{
	char *end;

	*id = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || *id <= 0) {
		fprintf(stderr, "tbctl: an action id is a positive whole number, got \"%s\"\n", s);
		return -1;
	}
	return 0;
}

int tbctl_cmd_action(const struct tbctl_ctx *ctx)
{
	char path[64];
	json_t *reply = NULL, *act, *st;
	long long id;
	size_t i;
	int rc;

	if (parse_id(ctx->args->pos[1], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if (ctx->args->wait)
		return follow(ctx, id);
	snprintf(path, sizeof(path), "/api/v1/actions/%lld", id);
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	act = json_object_get(reply, "action");
	print_action_head(act);
	json_array_foreach(json_object_get(act, "steps"), i, st) print_step(st);
	if (json_is_integer(json_object_get(act, "duration_ms"))) {
		char t0[32], t1[32];

		clock_ms(tbctl_jint(act, "started_ms", 0), t0, sizeof(t0));
		clock_ms(tbctl_jint(act, "finished_ms", 0), t1, sizeof(t1));
		printf("ran %s to %s: %.1f s\n", t0, t1, (double)tbctl_jint(act, "duration_ms", 0) / 1000.0);
	}
	if (json_is_object(json_object_get(act, "error")))
		printf("error: %s\n", tbctl_jstr(json_object_get(act, "error"), "message"));
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_action_cancel(const struct tbctl_ctx *ctx)
{
	char path[96];
	long long id;
	int rc;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/actions/%lld/cancel", id);
	rc = tbctl_api_call(ctx, "POST", path, NULL, NULL);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("action %lld: cancel requested\n", id);
	return rc;
}
