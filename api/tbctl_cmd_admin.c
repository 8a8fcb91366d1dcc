/*
 * tbctl_cmd_admin.c - tbctl token create|list|revoke, audit, whoami, health.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_table.h"

static int nomem(void)
{
	fprintf(stderr, "tbctl: out of memory\n");
	return TBCTL_EXIT_SERVER;
}

/* Parse a decimal integer in [min, max]; 0 or -1. */
static int parse_num(const char *s, long long min, long long max, long long *out)
{
	long long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < min)
		return -1;
	*out = v;
	return 0;
}

static void token_row(struct tbctl_table *t, const json_t *tok, int *oom)
{
	char id[32];
	json_t *revoked = json_object_get(tok, "revoked");
	const char *cells[6];

	snprintf(id, sizeof id, "%lld", tbctl_jint(tok, "id", 0));
	cells[0] = id;
	cells[1] = tbctl_jstr(tok, "name");
	cells[2] = tbctl_jstr(tok, "role");
	cells[3] = tbctl_jstr(tok, "created_at");
	cells[4] = tbctl_jstr(tok, "last_used_at");
	cells[5] = json_is_true(revoked) ? "revoked" : "active";
	if (tbctl_table_add(t, cells) != 0)
		*oom = 1;
}

static const char *const token_header[] = {"ID", "NAME", "ROLE", "CREATED", "LAST-USED", "STATE"};

int tbctl_cmd_token_create(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	const char *name = a->pos[2];
	json_t *body, *reply = NULL, *tok;
	const char *secret;
	int rc;

	if (a->role == NULL) {
		fprintf(stderr, "tbctl: token create needs --role viewer|operator|admin\n");
		return TBCTL_EXIT_USAGE;
	}
	if (strcmp(a->role, "viewer") != 0 && strcmp(a->role, "operator") != 0 && strcmp(a->role, "admin") != 0) {
		fprintf(stderr, "tbctl: --role must be viewer, operator or admin, got \"%s\"\n", a->role);
		return TBCTL_EXIT_USAGE;
	}
	body = json_pack("{s:s, s:s}", "name", name, "role", a->role);
	if (body == NULL)
		return nomem();
	rc = tbctl_api_call(ctx, "POST", "/api/v1/tokens", body, &reply);
	json_decref(body);
	if (rc != TBCTL_EXIT_OK || a->json) {
		json_decref(reply);
		return rc;
	}
	tok = json_object_get(reply, "token");
	secret = tbctl_jstr(reply, "secret");
	if (secret == NULL) {
		fprintf(stderr, "tbctl: testbedd created the token but sent no secret; "
				"revoke it and try again (tbctl token list)\n");
		json_decref(reply);
		return TBCTL_EXIT_SERVER;
	}
	/* The secret alone on stdout, so that
	 *   (umask 077; tbctl token create ci --role operator > ci.token)
	 * stores exactly the token; the words go to stderr. */
	fprintf(stderr,
		"tbctl: created token %lld \"%s\" with role %s; its secret "
		"follows and is shown only this once: store it in a file of mode 0600 "
		"and point TESTBEDD_TOKEN_FILE at it\n",
		tbctl_jint(tok, "id", 0), tbctl_jstr(tok, "name") ? tbctl_jstr(tok, "name") : name,
		tbctl_jstr(tok, "role") ? tbctl_jstr(tok, "role") : a->role);
	tbctl_print_safe(stdout, secret);
	fputc('\n', stdout);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_token_list(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL, *tokens, *tok;
	struct tbctl_table *t;
	size_t i;
	int oom = 0;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/tokens", NULL, &reply);

	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	tokens = json_object_get(reply, "tokens");
	t = tbctl_table_new(6, token_header);
	if (t == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(tokens, i, tok) token_row(t, tok, &oom);
	if (!oom)
		tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return oom ? nomem() : TBCTL_EXIT_OK;
}

int tbctl_cmd_token_revoke(const struct tbctl_ctx *ctx)
{
	const char *id = ctx->args->pos[2];
	long long v;
	char path[64];
	int rc;

	if (parse_num(id, 1, 1LL << 53, &v) != 0) {
		fprintf(stderr,
			"tbctl: token revoke takes the token's numeric ID "
			"(see tbctl token list), got \"%s\"\n",
			id);
		return TBCTL_EXIT_USAGE;
	}
	snprintf(path, sizeof path, "/api/v1/tokens/%lld", v);
	rc = tbctl_api_call(ctx, "DELETE", path, NULL, NULL);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("revoked token %lld\n", v);
	return rc;
}

/* Append "&key=escaped(value)" (or "?key=...") to the query in q. */
static int add_query(char **q, const char *key, const char *value)
{
	char *esc, *nq;
	size_t len;

	if (value == NULL)
		return 0;
	esc = tbctl_http_escape(value);
	if (esc == NULL)
		return -1;
	len = strlen(*q) + strlen(key) + strlen(esc) + 3;
	nq = malloc(len);
	if (nq == NULL) {
		free(esc);
		return -1;
	}
	snprintf(nq, len, "%s%c%s=%s", *q, strchr(*q, '?') ? '&' : '?', key, esc);
	free(esc);
	free(*q);
	*q = nq;
	return 0;
}

static const char *const audit_header[] = {"ID",     "AT",     "ACTOR",  "METHOD", "PATH",
					   "ACTION", "TARGET", "STATUS", "RESULT"};

int tbctl_cmd_audit(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	json_t *reply = NULL, *rows, *row;
	struct tbctl_table *t = NULL;
	char *path;
	long long lim;
	size_t i;
	int rc;

	if (a->limit != NULL && parse_num(a->limit, 1, 1000, &lim) != 0) {
		fprintf(stderr, "tbctl: --limit must be a whole number 1..1000, got \"%s\"\n", a->limit);
		return TBCTL_EXIT_USAGE;
	}
	path = malloc(sizeof "/api/v1/audit");
	if (path == NULL)
		return nomem();
	memcpy(path, "/api/v1/audit", sizeof "/api/v1/audit");
	if (add_query(&path, "host", a->host) != 0 || add_query(&path, "actor", a->actor) != 0 ||
	    add_query(&path, "since", a->since) != 0 || add_query(&path, "limit", a->limit) != 0) {
		free(path);
		return nomem();
	}
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	free(path);
	if (rc != TBCTL_EXIT_OK || a->json) {
		json_decref(reply);
		return rc;
	}
	rows = json_object_get(reply, "audit");
	t = tbctl_table_new(9, audit_header);
	if (t == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(rows, i, row)
	{
		char id[32], status[16];
		const char *cells[9];

		snprintf(id, sizeof id, "%lld", tbctl_jint(row, "id", 0));
		snprintf(status, sizeof status, "%lld", tbctl_jint(row, "status", 0));
		cells[0] = id;
		cells[1] = tbctl_jstr(row, "at");
		cells[2] = tbctl_jstr(row, "actor");
		cells[3] = tbctl_jstr(row, "method");
		cells[4] = tbctl_jstr(row, "path");
		cells[5] = tbctl_jstr(row, "action");
		cells[6] = tbctl_jstr(row, "target");
		cells[7] = status;
		cells[8] = tbctl_jstr(row, "result");
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			json_decref(reply);
			return nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_whoami(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL, *tok;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/whoami", NULL, &reply);

	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		tok = json_object_get(reply, "token");
		printf("token %lld \"", tbctl_jint(tok, "id", 0));
		tbctl_print_safe(stdout, tbctl_jstr(tok, "name") ? tbctl_jstr(tok, "name") : "?");
		printf("\", role ");
		tbctl_print_safe(stdout, tbctl_jstr(tok, "role") ? tbctl_jstr(tok, "role") : "?");
		printf(" (via ");
		tbctl_print_safe(stdout, tbctl_jstr(reply, "via") ? tbctl_jstr(reply, "via") : "?");
		printf(") at %s\n", ctx->http.base_url);
	}
	json_decref(reply);
	return rc;
}

int tbctl_cmd_health(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/health", NULL, &reply);

	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		const char *status = tbctl_jstr(reply, "status");
		const char *version = tbctl_jstr(reply, "version");

		printf("testbedd ");
		tbctl_print_safe(stdout, version ? version : "?");
		printf(" at %s: ", ctx->http.base_url);
		tbctl_print_safe(stdout, status ? status : "?");
		fputc('\n', stdout);
		if (status == NULL || strcmp(status, "ok") != 0)
			rc = TBCTL_EXIT_SERVER;
	}
	json_decref(reply);
	return rc;
}
