/*
 * tbctl_cmd_spec.c - tbctl spec push NAME FILE | list | show NAME [V] |
 * diff NAME A B: the spec library (GET/POST /api/v1/specs...).  push reads
 * FILE (a MatrixSpec, "-" for stdin) and stores it under NAME (the spec's
 * "name" is set to NAME) as that name's next version.
 */
#include "tbctl.h"
#include "tbctl_http.h"
#include "tbctl_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "tbctl: usage: tbctl spec push NAME FILE | list | show NAME [V] | diff NAME A B\n");
	return TBCTL_EXIT_USAGE;
}

static int push(const struct tbctl_ctx *ctx, const char *name, const char *file)
{
	json_error_t jerr;
	json_t *spec = strcmp(file, "-") == 0 ? json_loadf(stdin, 0, &jerr) : json_load_file(file, 0, &jerr),
	       *out = NULL;
	int rc;

	if (spec == NULL) {
		fprintf(stderr, "tbctl: %s:%d:%d: %s\n", file, jerr.line, jerr.column, jerr.text);
		return TBCTL_EXIT_USAGE;
	}
	if (!json_is_object(spec) || json_object_set_new(spec, "name", json_string(name)) != 0) {
		fprintf(stderr, "tbctl: %s: a spec is a JSON object (see tbctl matrix plan)\n", file);
		json_decref(spec);
		return TBCTL_EXIT_USAGE;
	}
	rc = tbctl_api_call(ctx, "POST", "/api/v1/specs", spec, &out);
	json_decref(spec);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("%s version %lld\n", name, tbctl_jint(json_object_get(out, "spec"), "version", 0));
	json_decref(out);
	return rc;
}

/* The specs as an aligned table (tbctl_table: the server's strings with
 * control characters replaced).  0, or -1 when out of memory. */
static int print_list(const json_t *specs)
{
	static const char *const header[] = {"NAME", "LATEST", "VERSIONS", "AUTHOR", "CREATED"};
	struct tbctl_table *t = tbctl_table_new(5, header);
	const json_t *s;
	size_t i;
	int rc = t != NULL ? 0 : -1;

	json_array_foreach(specs, i, s)
	{
		char version[24], versions[24];
		const char *cells[5] = {tbctl_jstr(s, "name"), version, versions, tbctl_jstr(s, "author"),
					tbctl_jstr(s, "created_at")};

		snprintf(version, sizeof(version), "%lld", tbctl_jint(s, "version", 0));
		snprintf(versions, sizeof(versions), "%lld", tbctl_jint(s, "versions", 0));
		if (rc == 0)
			rc = tbctl_table_add(t, cells);
	}
	if (rc == 0)
		tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return rc;
}

static void print_value(const char *label, const json_t *v)
{
	char *s = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	printf("%s%s", label, s != NULL ? s : "(none)");
	free(s);
}

static void print_diff(const json_t *changes)
{
	const json_t *c;
	size_t i;

	if (json_array_size(changes) == 0)
		printf("no differences\n");
	json_array_foreach(changes, i, c)
	{
		printf("%-8s %s: ", tbctl_jstr(c, "op") ? tbctl_jstr(c, "op") : "?",
		       tbctl_jstr(c, "path") ? tbctl_jstr(c, "path") : "?");
		print_value("", json_object_get(c, "a"));
		print_value(" -> ", json_object_get(c, "b"));
		printf("\n");
	}
}

int tbctl_cmd_spec(const struct tbctl_ctx *ctx)
{
	const char *sub = ctx->args->pos[1];
	int n = ctx->args->npos, rc;
	char path[1024], *name = NULL;
	json_t *out = NULL;

	if (strcmp(sub, "push") == 0 && n == 4)
		return push(ctx, ctx->args->pos[2], ctx->args->pos[3]);
	if (strcmp(sub, "list") == 0 && n == 2) {
		if ((rc = tbctl_api_call(ctx, "GET", "/api/v1/specs", NULL, &out)) == TBCTL_EXIT_OK &&
		    !ctx->args->json && print_list(json_object_get(out, "specs")) != 0) {
			fprintf(stderr, "tbctl: out of memory\n");
			rc = TBCTL_EXIT_SERVER;
		}
		json_decref(out);
		return rc;
	}
	/* versions are numbers: nothing else reaches the URL */
	for (int i = 3; i < n; i++)
		if (ctx->args->pos[i][0] == '\0' ||
		    strspn(ctx->args->pos[i], "0123456789") != strlen(ctx->args->pos[i]))
			return usage();
	if (n < 3 || (name = tbctl_http_escape(ctx->args->pos[2])) == NULL)
		return usage();
	if (strcmp(sub, "show") == 0 && (n == 3 || n == 4)) {
		if (n == 3)
			snprintf(path, sizeof(path), "/api/v1/specs/%s", name);
		else
			snprintf(path, sizeof(path), "/api/v1/specs/%s/versions/%s", name, ctx->args->pos[3]);
	} else if (strcmp(sub, "diff") == 0 && n == 5) {
		snprintf(path, sizeof(path), "/api/v1/specs/%s/diff?a=%s&b=%s", name, ctx->args->pos[3],
			 ctx->args->pos[4]);
	} else {
		free(name);
		return usage();
	}
	free(name);
	if ((rc = tbctl_api_call(ctx, "GET", path, NULL, &out)) == TBCTL_EXIT_OK && !ctx->args->json) {
		if (strcmp(sub, "diff") == 0) {
			print_diff(json_object_get(out, "changes"));
		} else {
			const json_t *s = json_object_get(out, "spec");

			printf("# %s version %lld by %s at %s\n", tbctl_jstr(s, "name") ? tbctl_jstr(s, "name") : "?",
			       tbctl_jint(s, "version", 0), tbctl_jstr(s, "author") ? tbctl_jstr(s, "author") : "?",
			       tbctl_jstr(s, "created_at") ? tbctl_jstr(s, "created_at") : "?");
			tbctl_print_json(json_object_get(s, "spec"));
		}
	}
	json_decref(out);
	return rc;
}
