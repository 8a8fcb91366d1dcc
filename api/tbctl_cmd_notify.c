/*
 * tbctl_cmd_notify.c - tbctl notify list|add|set|rm|test|deliveries: the
 * notification rules (admin) and their delivery log.  A rule is written as
 * the API's JSON in a file ("-": stdin), as for `matrix run SPEC`.
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

/* A rule id operand: 1..2^53, else a usage message. */
static int rule_id(const char *s, long long *id)
{
	char *end;

	*id = s != NULL ? strtoll(s, &end, 10) : 0;
	if (s == NULL || *s < '0' || *s > '9' || *end != '\0' || *id < 1 || *id > (1LL << 53)) {
		fprintf(stderr,
			"tbctl: a notification rule is named by its numeric ID (tbctl notify list), got \"%s\"\n",
			s != NULL ? s : "");
		return TBCTL_EXIT_USAGE;
	}
	return TBCTL_EXIT_OK;
}

static json_t *load_rule(const char *path)
{
	json_error_t e;
	json_t *j = strcmp(path, "-") == 0 ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &e)
					   : json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (j == NULL)
		fprintf(stderr, "tbctl: %s:%d: %s\n", strcmp(path, "-") == 0 ? "stdin" : path, e.line, e.text);
	return j;
}

static void join(const json_t *arr, char *buf, size_t len)
{
	size_t i, n = 0;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(arr, i, v)
	{
		int w = snprintf(buf + n, len - n, "%s%s", i > 0 ? "," : "",
				 json_is_string(v) ? json_string_value(v) : "?");

		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	if (json_array_size(arr) == 0)
		snprintf(buf, len, "any");
}

/* GET path and print the array under key as a table (header: 7 columns),
 * a row per element by row (0, or -1: out of memory); with --json the
 * reply as it came. */
static int table_of(const struct tbctl_ctx *ctx, const char *path, const char *key, const char *const header[7],
		    int (*row)(struct tbctl_table *t, const json_t *v))
{
	json_t *reply = NULL, *v;
	struct tbctl_table *t;
	size_t i;
	int oom = 0, rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);

	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	if ((t = tbctl_table_new(7, header)) == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(json_object_get(reply, key), i, v)
	{
		if (row(t, v) != 0)
			oom = 1;
	}
	if (!oom)
		tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return oom ? nomem() : TBCTL_EXIT_OK;
}

static int rule_row(struct tbctl_table *t, const json_t *r)
{
	char id[24], pending[24], trig[512], hosts[256];
	const char *cells[7];

	snprintf(id, sizeof(id), "%lld", tbctl_jint(r, "id", 0));
	snprintf(pending, sizeof(pending), "%lld", tbctl_jint(r, "pending", 0));
	join(json_object_get(r, "triggers"), trig, sizeof(trig));
	join(json_object_get(r, "hosts"), hosts, sizeof(hosts));
	cells[0] = id;
	cells[1] = tbctl_jstr(r, "name");
	cells[2] = tbctl_jstr(json_object_get(r, "sink"), "template");
	cells[3] = trig;
	cells[4] = hosts;
	cells[5] = json_is_true(json_object_get(r, "failing"))    ? "FAILING"
		   : json_is_false(json_object_get(r, "enabled")) ? "disabled"
								  : "ok";
	cells[6] = pending;
	return tbctl_table_add(t, cells);
}

static int list(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"ID", "NAME", "SINK", "TRIGGERS", "HOSTS", "STATE", "PENDING"};

	return table_of(ctx, "/api/v1/notifications", "rules", header, rule_row);
}

/* add FILE (POST) or set ID FILE (PUT). */
static int save(const struct tbctl_ctx *ctx, const char *id, const char *file)
{
	json_t *body, *reply = NULL;
	char path[64] = "/api/v1/notifications";
	long long v = 0;
	int rc;

	if (id != NULL && (rc = rule_id(id, &v)) != TBCTL_EXIT_OK)
		return rc;
	if (id != NULL)
		snprintf(path, sizeof(path), "/api/v1/notifications/%lld", v);
	if ((body = load_rule(file)) == NULL)
		return TBCTL_EXIT_USAGE;
	rc = tbctl_api_call(ctx, id != NULL ? "PUT" : "POST", path, body, &reply);
	json_decref(body);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("%s notification rule %lld\n", id != NULL ? "changed" : "created", tbctl_jint(reply, "id", 0));
	json_decref(reply);
	return rc;
}

static int simple(const struct tbctl_ctx *ctx, const char *method, const char *id, const char *tail)
{
	json_t *reply = NULL;
	char path[96];
	long long v;
	int rc;

	if ((rc = rule_id(id, &v)) != TBCTL_EXIT_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/notifications/%lld%s", v, tail);
	rc = tbctl_api_call(ctx, method, path, NULL, &reply);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		if (strcmp(method, "DELETE") == 0)
			printf("deleted notification rule %lld\n", v);
		else
			printf("queued test message %lld (tbctl notify deliveries %lld)\n",
			       tbctl_jint(reply, "delivery", 0), v);
	}
	json_decref(reply);
	return rc;
}

static int delivery_row(struct tbctl_table *t, const json_t *d)
{
	char did[24], att[16], st[16];
	const char *cells[7];

	snprintf(did, sizeof(did), "%lld", tbctl_jint(d, "id", 0));
	snprintf(att, sizeof(att), "%lld", tbctl_jint(d, "attempts", 0));
	if (json_is_integer(json_object_get(d, "last_status")))
		snprintf(st, sizeof(st), "%lld", tbctl_jint(d, "last_status", 0));
	else
		snprintf(st, sizeof(st), "-");
	cells[0] = did;
	cells[1] = tbctl_jstr(d, "trigger");
	cells[2] = tbctl_jstr(d, "state");
	cells[3] = att;
	cells[4] = st;
	cells[5] = tbctl_jstr(d, "created_at");
	cells[6] = tbctl_jstr(d, "last_error") != NULL ? tbctl_jstr(d, "last_error") : "";
	return tbctl_table_add(t, cells);
}

static int deliveries(const struct tbctl_ctx *ctx, const char *id)
{
	static const char *const header[] = {"ID", "TRIGGER", "STATE", "ATTEMPTS", "STATUS", "CREATED", "LAST-ERROR"};
	char path[96];
	long long v;
	int rc;

	if ((rc = rule_id(id, &v)) != TBCTL_EXIT_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/notifications/%lld/deliveries", v);
	return table_of(ctx, path, "deliveries", header, delivery_row);
}

int tbctl_cmd_notify(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	const char *sub = a->pos[1];

	if (strcmp(sub, "list") == 0 && a->npos == 2)
		return list(ctx);
	if (strcmp(sub, "add") == 0 && a->npos == 3)
		return save(ctx, NULL, a->pos[2]);
	if (strcmp(sub, "set") == 0 && a->npos == 4)
		return save(ctx, a->pos[2], a->pos[3]);
	if (strcmp(sub, "rm") == 0 && a->npos == 3)
		return simple(ctx, "DELETE", a->pos[2], "");
	if (strcmp(sub, "test") == 0 && a->npos == 3)
		return simple(ctx, "POST", a->pos[2], "/test");
	if (strcmp(sub, "deliveries") == 0 && a->npos == 3)
		return deliveries(ctx, a->pos[2]);
	fprintf(stderr, "tbctl: usage: tbctl notify list | add RULE.json | set ID RULE.json | rm ID | test ID | "
			"deliveries ID\n");
	return TBCTL_EXIT_USAGE;
}
