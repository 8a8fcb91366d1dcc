/*
 * tbctl_cmd_reserve.c - tbctl reserve HOST... --for DURATION [--note TEXT]
 * [--wait], tbctl release [ID], tbctl reservations: reserving hosts for a
 * while (operator), first come first served; a queued reservation says its
 * position and estimated start, and --wait follows it until granted.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FOR_MAX_S (3660L * 86400) /* ten years: beyond any reservation, within time_t and a calendar year */

/* "90", "90s", "45m", "2h", "1d" into seconds (at most FOR_MAX_S); -1 when
 * not one. */
static long parse_for(const char *s)
{
	static const struct {
		const char *unit;
		long secs;
	} units[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
	char *end;
	long v = s != NULL ? strtol(s, &end, 10) : -1;

	if (s == NULL || *s < '0' || *s > '9' || v <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0)
			return v <= FOR_MAX_S / units[i].secs ? v * units[i].secs : -1;
	return -1;
}

static void print_resv(const json_t *v)
{
	json_t *h;
	size_t i;

	printf("reservation %lld: ", tbctl_jint(v, "id", 0));
	json_array_foreach(json_object_get(v, "hosts"), i, h) printf("%s%s", i > 0 ? " " : "", json_string_value(h));
	if (strcmp(tbctl_jstr(v, "state") ? tbctl_jstr(v, "state") : "", "granted") == 0)
		printf(" granted to %s until %s\n", tbctl_jstr(v, "owner"), tbctl_jstr(v, "until"));
	else
		printf(" queued for %s at position %lld, estimated start %s\n", tbctl_jstr(v, "owner"),
		       tbctl_jint(v, "position", 0), tbctl_jstr(v, "estimated_start"));
}

/* Poll GET /reservations every second until id is granted (or gone). */
static int wait_granted(const struct tbctl_ctx *ctx, long long id)
{
	for (;;) {
		json_t *out = NULL, *v;
		const char *st = NULL;
		size_t i;
		int rc = tbctl_api_call_quiet(ctx, "GET", "/api/v1/reservations", NULL, &out);

		if (rc != TBCTL_EXIT_OK)
			return rc;
		json_array_foreach(json_object_get(out, "reservations"), i, v) if (tbctl_jint(v, "id", 0) == id)
		{
			st = tbctl_jstr(v, "state");
			if (st != NULL && strcmp(st, "granted") == 0)
				print_resv(v);
			break;
		}
		rc = st == NULL ? TBCTL_EXIT_CANCELED : strcmp(st, "granted") == 0 ? TBCTL_EXIT_OK : -1;
		json_decref(out);
		if (rc == TBCTL_EXIT_CANCELED)
			fprintf(stderr, "tbctl: reservation %lld ended before it was granted\n", id);
		if (rc >= 0)
			return rc;
		nanosleep(&(struct timespec){1, 0}, NULL);
	}
}

int tbctl_cmd_reserve(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	long secs = parse_for(a->duration);
	json_t *hosts = json_array(), *body, *out = NULL, *v;
	char until[32];
	time_t t;
	struct tm tm;
	int rc;

	if (secs <= 0) {
		fprintf(stderr, "tbctl: reserve needs --for DURATION (90s, 45m, 2h, 1d; under ten years)\n");
		json_decref(hosts);
		return TBCTL_EXIT_USAGE;
	}
	t = time(NULL) + secs;
	gmtime_r(&t, &tm);
	strftime(until, sizeof(until), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int i = 1; i < a->npos; i++)
		json_array_append_new(hosts, json_string(a->pos[i]));
	body = json_pack("{s:o, s:s, s:s}", "hosts", hosts, "until", until, "note", a->note != NULL ? a->note : "");
	if (body == NULL)
		return TBCTL_EXIT_SERVER;
	rc = tbctl_api_call(ctx, "POST", "/api/v1/reservations", body, &out);
	json_decref(body);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	v = json_object_get(out, "reservation");
	if (!a->json)
		print_resv(v);
	if (a->wait && strcmp(tbctl_jstr(v, "state") ? tbctl_jstr(v, "state") : "", "granted") != 0)
		rc = wait_granted(ctx, tbctl_jint(v, "id", 0));
	json_decref(out);
	return rc;
}

/* release ID, or with no ID every reservation of the caller. */
int tbctl_cmd_release(const struct tbctl_ctx *ctx)
{
	json_t *out = NULL, *who = NULL, *v;
	char path[96];
	size_t i;
	int rc, n = 0;

	if (ctx->args->npos == 2) {
		char *end;
		long long id = strtoll(ctx->args->pos[1], &end, 10);

		if (*end != '\0' || id < 1) {
			fprintf(stderr, "tbctl: release takes a reservation ID (tbctl reservations)\n");
			return TBCTL_EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "/api/v1/reservations/%lld", id);
		if ((rc = tbctl_api_call(ctx, "DELETE", path, NULL, NULL)) == TBCTL_EXIT_OK)
			printf("released reservation %lld\n", id);
		return rc;
	}
	if ((rc = tbctl_api_call_quiet(ctx, "GET", "/api/v1/whoami", NULL, &who)) != TBCTL_EXIT_OK ||
	    (rc = tbctl_api_call_quiet(ctx, "GET", "/api/v1/reservations", NULL, &out)) != TBCTL_EXIT_OK) {
		json_decref(who);
		return rc;
	}
	json_array_foreach(json_object_get(out, "reservations"), i, v)
	{
		const char *owner = tbctl_jstr(v, "owner"), *me = tbctl_jstr(json_object_get(who, "token"), "name");

		if (owner == NULL || me == NULL || strcmp(owner, me) != 0)
			continue;
		snprintf(path, sizeof(path), "/api/v1/reservations/%lld", tbctl_jint(v, "id", 0));
		if ((rc = tbctl_api_call(ctx, "DELETE", path, NULL, NULL)) != TBCTL_EXIT_OK)
			break;
		printf("released reservation %lld\n", tbctl_jint(v, "id", 0));
		n++;
	}
	if (rc == TBCTL_EXIT_OK && n == 0)
		printf("you have no reservation\n");
	json_decref(out);
	json_decref(who);
	return rc;
}

int tbctl_cmd_reservations(const struct tbctl_ctx *ctx)
{
	json_t *out = NULL, *v;
	size_t i;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/reservations", NULL, &out);

	if (rc == TBCTL_EXIT_OK && !ctx->args->json) {
		json_array_foreach(json_object_get(out, "reservations"), i, v) print_resv(v);
		if (json_array_size(json_object_get(out, "reservations")) == 0)
			printf("no reservations\n");
	}
	json_decref(out);
	return rc;
}
