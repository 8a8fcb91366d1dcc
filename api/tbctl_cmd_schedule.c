/*
 * tbctl_cmd_schedule.c - tbctl schedule set NAME CRON [--baseline
 * latest-passing|ID] [--metric M] [--max-drop PCT], tbctl schedule rm NAME,
 * tbctl schedules: a spec's recurring matrix and its CI gate (PUT/DELETE
 * /api/v1/specs/NAME/schedule, GET /api/v1/schedules).  The list shows each
 * schedule's next time and its last verdicts, newest right, one letter each
 * (P pass, F fail, n no baseline, E error, . running), and under the table why a
 * schedule's last time started no matrix, when it did not.
 */
#include "tbctl.h"
#include "tbctl_http.h"
#include "tbctl_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "tbctl: usage: tbctl schedule set NAME CRON [--baseline latest-passing|ID] [--metric M] "
			"[--max-drop PCT] | rm NAME\n");
	return TBCTL_EXIT_USAGE;
}

/* The PUT body from the options; NULL (said) when one is not what it must be. */
static json_t *body(const struct tbctl_args *a, const char *cron)
{
	json_t *b = json_pack("{s:s}", "cron", cron);
	const char *base = a->baseline != NULL ? a->baseline : "latest-passing";
	char *end = NULL;
	long long id = strtoll(base, &end, 10);
	char *dend = NULL;
	double drop = a->max_drop != NULL ? strtod(a->max_drop, &dend) : 0;

	if (b == NULL)
		return NULL;
	if (strcmp(base, "latest-passing") == 0) {
		json_object_set_new(b, "baseline", json_string(base));
	} else if (base[0] >= '0' && base[0] <= '9' && *end == '\0' && id > 0) {
		json_object_set_new(b, "baseline", json_integer(id));
	} else {
		fprintf(stderr, "tbctl: --baseline is latest-passing or a matrix id, got \"%s\"\n", base);
		json_decref(b);
		return NULL;
	}
	if (a->max_drop != NULL && (dend == a->max_drop || *dend != '\0')) {
		fprintf(stderr, "tbctl: --max-drop is a percentage, got \"%s\"\n", a->max_drop);
		json_decref(b);
		return NULL;
	}
	if (a->max_drop != NULL)
		json_object_set_new(b, "max_drop", json_real(drop));
	if (a->metric != NULL)
		json_object_set_new(b, "metric", json_string(a->metric));
	return b;
}

/* A verdict's letter in the row of the last ones ('.': not judged yet, the
 * matrix still runs). */
static char letter(const char *verdict)
{
	static const struct {
		const char *name;
		char c;
	} v[] = {{"pass", 'P'}, {"fail", 'F'}, {"no_baseline", 'n'}, {"error", 'E'}};

	if (verdict == NULL)
		return '.';
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (strcmp(verdict, v[i].name) == 0)
			return v[i].c;
	return '?';
}

/* A schedule's baseline: "latest-passing" or "matrix ID". */
static void base_text(const json_t *s, char *buf, size_t len)
{
	const json_t *b = json_object_get(s, "baseline");

	if (json_is_integer(b))
		snprintf(buf, len, "matrix %lld", (long long)json_integer_value(b));
	else
		snprintf(buf, len, "%s", json_is_string(b) ? json_string_value(b) : "-");
}

static void print_schedule(const json_t *s)
{
	char base[32];

	base_text(s, base, sizeof(base));
	printf("%s: \"%s\" against %s, %s may drop %g%%, next %s\n", tbctl_jstr(s, "name"), tbctl_jstr(s, "cron"), base,
	       tbctl_jstr(s, "metric") ? tbctl_jstr(s, "metric") : "?",
	       json_number_value(json_object_get(s, "max_drop")),
	       tbctl_jstr(s, "next_at") ? tbctl_jstr(s, "next_at") : "-");
}

/* The schedules as an aligned table; 0, or -1 when out of memory. */
static int print_list(const json_t *list)
{
	static const char *const header[] = {"SPEC", "CRON", "BASELINE", "NEXT", "AUTHOR", "LAST (newest right)"};
	struct tbctl_table *t = tbctl_table_new(6, header);
	const json_t *s, *v;
	size_t i, k;
	int rc = t != NULL ? 0 : -1;

	json_array_foreach(list, i, s)
	{
		char base[32], last[64 + 48] = "";
		size_t n = 0;
		const char *cells[6] = {tbctl_jstr(s, "name"),    tbctl_jstr(s, "cron"),   base,
					tbctl_jstr(s, "next_at"), tbctl_jstr(s, "author"), last};

		base_text(s, base, sizeof(base));
		json_array_foreach(json_object_get(s, "last"), k, v) if (n + 1 < 64)
			last[n++] = letter(tbctl_jstr(v, "verdict"));
		last[n] = '\0';
		if (n > 0) { /* the newest's matrix after the row */
			v = json_array_get(json_object_get(s, "last"), json_array_size(json_object_get(s, "last")) - 1);
			snprintf(last + n, sizeof(last) - n, "  (matrix %lld: %s)", tbctl_jint(v, "matrix", 0),
				 tbctl_jstr(v, "verdict") ? tbctl_jstr(v, "verdict") : "running");
		}
		if (rc == 0)
			rc = tbctl_table_add(t, cells);
	}
	if (rc == 0)
		tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_array_foreach(list, i, s)
	{
		const json_t *f = json_object_get(s, "last_failure");

		if (rc != 0 || !json_is_object(f))
			continue;
		/* the server's strings (a reservation's note) without control characters */
		tbctl_print_safe(stdout, tbctl_jstr(s, "name") ? tbctl_jstr(s, "name") : "?");
		printf(": not started at ");
		tbctl_print_safe(stdout, tbctl_jstr(f, "at") ? tbctl_jstr(f, "at") : "?");
		printf(": ");
		tbctl_print_safe(stdout, tbctl_jstr(f, "message") ? tbctl_jstr(f, "message") : "?");
		printf("\n");
	}
	return rc;
}

int tbctl_cmd_schedules(const struct tbctl_ctx *ctx)
{
	json_t *out = NULL;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/schedules", NULL, &out);

	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		if (json_array_size(json_object_get(out, "schedules")) == 0)
			printf("no schedules (tbctl schedule set NAME CRON)\n");
		else if (print_list(json_object_get(out, "schedules")) != 0) {
			fprintf(stderr, "tbctl: out of memory\n");
			rc = TBCTL_EXIT_SERVER;
		}
	}
	json_decref(out);
	return rc;
}

int tbctl_cmd_schedule(const struct tbctl_ctx *ctx)
{
	const char *sub = ctx->args->pos[1];
	int n = ctx->args->npos, rc;
	char path[1024], *name;
	json_t *in = NULL, *out = NULL;

	if (!((strcmp(sub, "set") == 0 && n == 4) || (strcmp(sub, "rm") == 0 && n == 3)))
		return usage();
	if (strcmp(sub, "rm") == 0 &&
	    (ctx->args->baseline != NULL || ctx->args->metric != NULL || ctx->args->max_drop != NULL))
		return usage();
	if (strcmp(sub, "set") == 0 && (in = body(ctx->args, ctx->args->pos[3])) == NULL)
		return TBCTL_EXIT_USAGE;
	if ((name = tbctl_http_escape(ctx->args->pos[2])) == NULL) {
		json_decref(in);
		return usage();
	}
	snprintf(path, sizeof(path), "/api/v1/specs/%s/schedule", name);
	free(name);
	rc = tbctl_api_call(ctx, in != NULL ? "PUT" : "DELETE", path, in, &out);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		if (in != NULL)
			print_schedule(json_object_get(out, "schedule"));
		else
			printf("%s: no longer scheduled\n", ctx->args->pos[2]);
	}
	json_decref(in);
	json_decref(out);
	return rc;
}
