/*
 * tbctl_cmd_inventory.c - tbctl inventory show|check FILE|reload (admin):
 * the inventory testbedd has loaded, a proposed file checked by the server
 * (FILE:LINE:COL as --check-config), and a reload as SIGHUP.  The file is
 * read here and sent as text: the server never writes it.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file (or stdin for "-") as a JSON string, or NULL after saying
 * why on stderr. */
static json_t *read_text(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t n = 0, cap = 65536;
	char *buf;
	json_t *j = NULL;

	if (f == NULL) {
		fprintf(stderr, "tbctl: cannot read %s\n", path);
		return NULL;
	}
	if ((buf = malloc(cap)) != NULL) {
		size_t r;

		while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
			char *nb;

			n += r;
			if (n < cap)
				continue;
			if (cap >= 16u << 20 || (nb = realloc(buf, cap * 2)) == NULL) {
				n = 0;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		if (n > 0 || !ferror(f))
			j = json_stringn(buf, n) /* NULL when not UTF-8 */;
		free(buf);
	}
	if (f != stdin)
		fclose(f);
	if (j == NULL)
		fprintf(stderr, "tbctl: cannot read %s (over 16 MiB, not UTF-8, or out of memory)\n", path);
	return j;
}

static void print_summary(const json_t *inv)
{
	const json_t *last = json_object_get(inv, "last_reload"), *m;
	size_t i;

	printf("file       %s\nloaded at  %s\n", tbctl_jstr(inv, "file") ? tbctl_jstr(inv, "file") : "?",
	       tbctl_jstr(inv, "loaded_at") ? tbctl_jstr(inv, "loaded_at") : "?");
	if (json_is_object(last))
		printf("reload     %s by %s: %s%s\n", tbctl_jstr(last, "at") ? tbctl_jstr(last, "at") : "?",
		       tbctl_jstr(last, "by") ? tbctl_jstr(last, "by") : "?",
		       json_is_true(json_object_get(last, "ok")) ? "ok" : "refused, old kept: ",
		       json_is_true(json_object_get(last, "ok")) ? "" : tbctl_jstr(last, "error"));
	printf("machines   %zu\n", json_array_size(json_object_get(inv, "machines")));
	json_array_foreach(json_object_get(inv, "machines"), i, m)
	{
		printf("  %-16s %s\n", tbctl_jstr(m, "name") ? tbctl_jstr(m, "name") : "?",
		       tbctl_jstr(m, "role") ? tbctl_jstr(m, "role") : "?");
	}
}

static int check(const struct tbctl_ctx *ctx, const char *path)
{
	json_t *text = read_text(path), *body, *out = NULL, *e;
	size_t i;
	int rc;

	if (text == NULL)
		return TBCTL_EXIT_USAGE;
	if ((body = json_pack("{s:o}", "text", text)) == NULL)
		return TBCTL_EXIT_SERVER;
	rc = tbctl_api_call(ctx, "POST", "/api/v1/inventory/check", body, &out);
	json_decref(body);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	if (json_is_true(json_object_get(out, "ok"))) {
		if (!ctx->args->json)
			printf("%s: ok, %lld machines\n", path, tbctl_jint(out, "machines", 0));
	} else {
		/* the server names its own file; a person reads the one they gave */
		json_array_foreach(json_object_get(out, "errors"), i, e)
		{
			const char *msg = tbctl_jstr(e, "message") ? tbctl_jstr(e, "message") : "?", *rest;
			char where[64];

			snprintf(where, sizeof(where), ":%lld:%lld: ", tbctl_jint(e, "line", 0),
				 tbctl_jint(e, "col", 0));
			if (tbctl_jint(e, "line", 0) > 0 && (rest = strstr(msg, where)) != NULL)
				fprintf(stderr, "%s%s%s\n", path, where, rest + strlen(where));
			else
				fprintf(stderr, "%s: %s\n", path, msg);
		}
		rc = TBCTL_EXIT_REFUSED;
	}
	json_decref(out);
	return rc;
}

int tbctl_cmd_inventory(const struct tbctl_ctx *ctx)
{
	const char *sub = ctx->args->pos[1];
	json_t *out = NULL;
	int rc;

	if (strcmp(sub, "check") == 0 && ctx->args->npos == 3)
		return check(ctx, ctx->args->pos[2]);
	if (ctx->args->npos != 2 || (strcmp(sub, "show") != 0 && strcmp(sub, "reload") != 0)) {
		fprintf(stderr, "tbctl: usage: tbctl inventory show|check FILE|reload\n");
		return TBCTL_EXIT_USAGE;
	}
	rc = strcmp(sub, "show") == 0 ? tbctl_api_call(ctx, "GET", "/api/v1/inventory", NULL, &out)
				      : tbctl_api_call(ctx, "POST", "/api/v1/inventory/reload", NULL, &out);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		print_summary(json_object_get(out, "inventory"));
	json_decref(out);
	return rc;
}
