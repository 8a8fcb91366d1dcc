/*
 * tbctl_cmd_matrix.c - tbctl matrix plan, run, watch, results, show, list,
 * cancel, resume, rerun, compare: matrices of iperf3 runs (server/matrix.h
 * has the spec, server/results.c the JSON shapes).  Following a matrix live
 * is tbctl_matrix_watch.c; formatting tbctl_matrix_fmt.c.
 */
#include "tbctl_matrix.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_table.h"

/* The runs to show: --limit N (all when absent or "all"); -1 bad. */
static long long plan_want(const struct tbctl_ctx *ctx)
{
	const char *l = ctx->args->limit;
	char *end;
	long long n;

	if (l == NULL || strcmp(l, "all") == 0)
		return LLONG_MAX;
	n = strtoll(l, &end, 10);
	return *l != '\0' && *end == '\0' && n >= 0 ? n : -1;
}

/*
 * POST the spec and follow the pages (a plan may have 100,000 runs; the
 * server answers 1,000 at most a time) until want runs are in hand: one
 * reply with "plan" and "timeline" holding them all, "page" saying how many
 * were fetched.  The pages after the first post the plan's own spec (its
 * seed set), so they are pages of the same plan.
 */
static int plan_pages(const struct tbctl_ctx *ctx, json_t *spec, long long want, json_t **out)
{
	json_t *first = NULL, *runs, *tl, *next;
	char path[96];
	long long have = 0;
	int rc;

	*out = NULL;
	snprintf(path, sizeof(path), "/api/v1/matrices/plan?limit=%lld", want < 1000 ? want : 1000);
	if ((rc = tbctl_api_call_quiet(ctx, "POST", path, spec, &first)) != TBCTL_EXIT_OK) {
		json_decref(first);
		return rc;
	}
	runs = json_object_get(json_object_get(first, "plan"), "plan");
	tl = json_object_get(json_object_get(first, "plan"), "timeline");
	have = (long long)json_array_size(runs);
	next = json_object_get(json_object_get(json_object_get(first, "plan"), "page"), "next_offset");
	while (json_is_integer(next) && have < want && rc == TBCTL_EXIT_OK) {
		json_t *page = NULL, *p, *e;
		size_t i;

		snprintf(path, sizeof(path), "/api/v1/matrices/plan?offset=%lld&limit=%lld", json_integer_value(next),
			 want - have < 1000 ? want - have : 1000);
		rc = tbctl_api_call_quiet(ctx, "POST", path, json_object_get(json_object_get(first, "plan"), "spec"),
					  &page);
		p = json_object_get(page, "plan");
		if (rc == TBCTL_EXIT_OK &&
		    json_integer_value(json_object_get(p, "runs")) !=
			    json_integer_value(json_object_get(json_object_get(first, "plan"), "runs"))) {
			fprintf(stderr, "tbctl: the plan changed between pages (the hosts' OSes?): plan again\n");
			rc = TBCTL_EXIT_SERVER;
		}
		json_array_extend(runs, json_object_get(p, "plan"));
		json_array_foreach(json_object_get(p, "timeline"), i, e)
		{
			json_t *last = json_array_get(tl, json_array_size(tl) - 1);

			/* a round across the pages' edge comes in both */
			if (last == NULL || json_integer_value(json_object_get(last, "round")) !=
						    json_integer_value(json_object_get(e, "round")))
				json_array_append(tl, e);
		}
		have = (long long)json_array_size(runs);
		json_object_set(json_object_get(first, "plan"), "page", json_object_get(p, "page"));
		next = json_object_get(json_object_get(json_object_get(first, "plan"), "page"), "next_offset");
		json_decref(page);
	}
	json_object_set_new(json_object_get(json_object_get(first, "plan"), "page"), "offset", json_integer(0));
	json_object_set_new(json_object_get(json_object_get(first, "plan"), "page"), "returned", json_integer(have));
	*out = first;
	return rc;
}

int tbctl_cmd_matrix_plan(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"SEQ",  "ROUND",    "CELL",      "CLIENT -> SERVER",
					     "LINK", "PROTOCOL", "DIRECTION", "IPERF ARGS"};
	json_t *spec = mx_load_spec(ctx->args->pos[2]), *reply = NULL, *plan, *r;
	long long want = plan_want(ctx), total;
	struct tbctl_table *t;
	char est[32];
	size_t i;
	int rc;

	if (spec == NULL)
		return TBCTL_EXIT_USAGE;
	if (want < 0) {
		json_decref(spec);
		fprintf(stderr, "tbctl: --limit is a number of runs (0 or more) or all\n");
		return TBCTL_EXIT_USAGE;
	}
	rc = plan_pages(ctx, spec, want, &reply);
	json_decref(spec);
	if (rc == TBCTL_EXIT_OK && ctx->args->json)
		tbctl_print_json(reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	plan = json_object_get(reply, "plan");
	if ((t = tbctl_table_new(8, header)) == NULL) {
		json_decref(reply);
		return mx_nomem();
	}
	json_array_foreach(json_object_get(plan, "plan"), i, r)
	{
		char seq[24], round[24], cell[24], pair[200], link[128];
		const char *cells[8];

		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(round, sizeof(round), "%lld", tbctl_jint(r, "round", 0));
		snprintf(cell, sizeof(cell), "%lld", tbctl_jint(r, "cell", 0));
		snprintf(pair, sizeof(pair), "%s -> %s", mx_str_or(r, "client", "?"), mx_str_or(r, "server", "?"));
		snprintf(link, sizeof(link), "%s (%s)", mx_str_or(r, "link", "?"), mx_str_or(r, "server_address", "?"));
		cells[0] = seq;
		cells[1] = round;
		cells[2] = cell;
		cells[3] = pair;
		cells[4] = link;
		cells[5] = tbctl_jstr(r, "protocol");
		cells[6] = tbctl_jstr(r, "direction");
		cells[7] = tbctl_jstr(r, "iperf_args");
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			json_decref(reply);
			return mx_nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	total = tbctl_jint(plan, "runs", 0);
	if ((long long)json_array_size(json_object_get(plan, "plan")) < total)
		printf("(the first %zu of %lld runs: --limit N or --limit all for more)\n",
		       json_array_size(json_object_get(plan, "plan")), total);
	json_array_foreach(json_object_get(plan, "boots"), i, r)
	{
		char when[48], dur[32];

		if (json_is_integer(json_object_get(r, "seq")))
			snprintf(when, sizeof(when), "before run %lld", tbctl_jint(r, "seq", 0));
		else
			snprintf(when, sizeof(when), "after the last run");
		mx_fmt_dur(dur, sizeof(dur), mx_jnum(r, "estimated_s", -1));
		printf("boot %s: %s %s -> %s (about %s)\n", when, mx_str_or(r, "machine", "?"),
		       mx_str_or(r, "from", "off"), mx_str_or(r, "to", "?"), dur);
	}
	mx_fmt_dur(est, sizeof(est), mx_jnum(plan, "estimated_s", -1));
	fputs("plan \"", stdout);
	tbctl_print_safe(stdout, mx_str_or(plan, "name", ""));
	printf("\": %lld run%s in %lld cell%s, order %s", tbctl_jint(plan, "runs", 0),
	       tbctl_jint(plan, "runs", 0) == 1 ? "" : "s", tbctl_jint(plan, "cells", 0),
	       tbctl_jint(plan, "cells", 0) == 1 ? "" : "s", mx_str_or(plan, "order", "?"));
	if (json_is_integer(json_object_get(plan, "seed")))
		printf(" (seed %lld)", tbctl_jint(plan, "seed", 0));
	if (tbctl_jint(plan, "rounds", 0) < tbctl_jint(plan, "runs", 0))
		printf(", %lld round%s (runs on disjoint hosts at once)", tbctl_jint(plan, "rounds", 0),
		       tbctl_jint(plan, "rounds", 0) == 1 ? "" : "s");
	printf(", estimated %s; nothing was started\n", est);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* ---- starting ---- */

/* After POST path (body may be NULL) that answered {"matrix": ...}: print
 * the id, or follow the matrix with --wait. */
static int started(const struct tbctl_ctx *ctx, const char *path, json_t *body, const char *what,
		   struct mx_watch *resumed, long long *id_out)
{
	const struct tbctl_args *a = ctx->args;
	int quiet = (a->seen & TBCTL_OPT_QUIET) != 0;
	json_t *reply = NULL, *m;
	long long id;
	char est[32];
	int rc;

	rc = a->wait ? tbctl_api_call_quiet(ctx, "POST", path, body, &reply)
		     : tbctl_api_call(ctx, "POST", path, body, &reply);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	id = tbctl_jint(m, "id", 0);
	if (id_out != NULL)
		*id_out = id;
	mx_fmt_dur(est, sizeof(est), mx_jnum(m, "estimated_s", -1));
	if (quiet && !a->json) {
		printf("%lld\n", id);
	} else if (!a->json) {
		printf("matrix %lld \"", id);
		tbctl_print_safe(stdout, mx_str_or(m, "name", ""));
		printf("\" %s%s: %lld runs, estimated %s\n", mx_str_or(m, "state", "?"), what,
		       tbctl_jint(json_object_get(m, "progress"), "total", 0), est);
		if (!a->wait)
			printf("follow it with: tbctl matrix watch %lld\n", id);
	}
	fflush(stdout);
	if (a->wait && resumed != NULL) {
		mx_watch_set_matrix(resumed, m);
		rc = mx_watch_follow(resumed);
	} else if (a->wait) {
		rc = mx_watch_follow_new(ctx, id);
	}
	json_decref(reply);
	return rc;
}

int tbctl_cmd_matrix_run(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	int gate = (a->seen & (TBCTL_OPT_BASELINE | TBCTL_OPT_MAX_DROP)) != 0;
	json_t *spec;
	long long id = 0;
	char q[160];
	int rc;

	if (gate && !a->wait) {
		fprintf(stderr, "tbctl: --baseline needs --wait: the gate compares the matrix once it has ended\n");
		return TBCTL_EXIT_USAGE;
	}
	if (gate && mx_gate_query(a, q, sizeof(q)) != 0)
		return TBCTL_EXIT_USAGE;
	if ((spec = mx_load_spec(a->pos[2])) == NULL)
		return TBCTL_EXIT_USAGE;
	rc = started(ctx, "/api/v1/matrices", spec, "", NULL, &id);
	json_decref(spec);
	/* a matrix that ran (even with failed runs) is judged; a canceled one is not */
	if (gate && id > 0 && (rc == TBCTL_EXIT_OK || rc == TBCTL_EXIT_FAILED)) {
		int grc = mx_compare(ctx, id, q);

		if (grc != TBCTL_EXIT_OK)
			rc = grc;
	}
	return rc;
}

int tbctl_cmd_matrix_rerun(const struct tbctl_ctx *ctx)
{
	char *path, what[64];
	long long id;
	int rc;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = mx_matrix_path(id, "/rerun")) == NULL)
		return mx_nomem();
	snprintf(what, sizeof(what), " (a rerun of %lld)", id);
	rc = started(ctx, path, NULL, what, NULL, NULL);
	free(path);
	return rc;
}

int tbctl_cmd_matrix_resume(const struct tbctl_ctx *ctx)
{
	struct mx_watch *w = NULL;
	char *path;
	long long id;
	int rc = TBCTL_EXIT_OK;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = mx_matrix_path(id, "/resume")) == NULL)
		return mx_nomem();
	if (ctx->args->wait) {
		/* the runs it kept, before they start again: not reported as news */
		if ((w = mx_watch_new(ctx, id)) == NULL) {
			free(path);
			return mx_nomem();
		}
		rc = mx_watch_load_kept(w);
	}
	if (rc == TBCTL_EXIT_OK)
		rc = started(ctx, path, NULL, " again", w, NULL);
	mx_watch_free(w);
	free(path);
	return rc;
}

int tbctl_cmd_matrix_cancel(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL;
	char *path;
	long long id;
	int rc;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = mx_matrix_path(id, "/cancel")) == NULL)
		return mx_nomem();
	rc = tbctl_api_call(ctx, "POST", path, NULL, &reply);
	free(path);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("matrix %lld: cancel requested (it was %s); resume runs what is left\n", id,
		       mx_str_or(json_object_get(reply, "matrix"), "state", "?"));
	json_decref(reply);
	return rc;
}

/* ---- looking ---- */

int tbctl_cmd_matrix_list(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"ID", "NAME", "STATE", "DONE", "FAILED", "BY", "CREATED", "ELAPSED"};
	char path[128];
	json_t *reply = NULL, *m;
	struct tbctl_table *t;
	size_t i;
	int rc;

	if (ctx->args->limit != NULL && strspn(ctx->args->limit, "0123456789") != strlen(ctx->args->limit)) {
		fprintf(stderr, "tbctl: --limit is a whole number 1..1000, got \"%s\"\n", ctx->args->limit);
		return TBCTL_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/api/v1/matrices?limit=%s", ctx->args->limit ? ctx->args->limit : "50");
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	if ((t = tbctl_table_new(8, header)) == NULL) {
		json_decref(reply);
		return mx_nomem();
	}
	json_array_foreach(json_object_get(reply, "matrices"), i, m)
	{
		const json_t *p = json_object_get(m, "progress");
		char id[24], done[48], failed[24], el[32];
		const char *cells[8];

		snprintf(id, sizeof(id), "%lld", tbctl_jint(m, "id", 0));
		snprintf(done, sizeof(done), "%lld/%lld", tbctl_jint(p, "done", 0), tbctl_jint(p, "total", 0));
		snprintf(failed, sizeof(failed), "%lld", tbctl_jint(p, "failed", 0));
		mx_fmt_dur(el, sizeof(el), mx_jnum(p, "elapsed_s", -1));
		cells[0] = id;
		cells[1] = tbctl_jstr(m, "name");
		cells[2] = tbctl_jstr(m, "state");
		cells[3] = done;
		cells[4] = failed;
		cells[5] = tbctl_jstr(m, "actor");
		cells[6] = tbctl_jstr(m, "created_at");
		cells[7] = el;
		tbctl_table_add(t, cells);
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* Every run: state, results, error. */
static int runs_table(const json_t *runs)
{
	static const char *const header[] = {"SEQ",   "RUN",    "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "PARAMS",
					     "STATE", "SENDER", "RECEIVER",         "RETRANS",  "LOSS",      "ERROR"};
	struct tbctl_table *t = tbctl_table_new(12, header);
	const json_t *r;
	size_t i;

	if (t == NULL)
		return mx_nomem();
	json_array_foreach(runs, i, r)
	{
		char seq[24], id[24], pair[200], params[256], snd[32], rcv[32], rtx[32], loss[32];
		const char *cells[12];

		if (!json_is_object(r))
			continue;
		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(id, sizeof(id), "%lld", tbctl_jint(r, "id", 0));
		mx_fmt_pair(pair, sizeof(pair), r);
		mx_fmt_params(params, sizeof(params), json_object_get(r, "params"));
		mx_fmt_bps(snd, sizeof(snd), mx_jnum(r, "sender_bps", -1));
		mx_fmt_bps(rcv, sizeof(rcv), mx_jnum(r, "receiver_bps", -1));
		mx_fmt_count(rtx, sizeof(rtx), mx_jnum(r, "retransmits", -1));
		mx_fmt_percent(loss, sizeof(loss), mx_jnum(r, "lost_percent", -1));
		cells[0] = seq;
		cells[1] = id;
		cells[2] = pair;
		cells[3] = tbctl_jstr(r, "protocol");
		cells[4] = tbctl_jstr(r, "direction");
		cells[5] = params;
		cells[6] = tbctl_jstr(r, "state");
		cells[7] = snd;
		cells[8] = rcv;
		cells[9] = rtx;
		cells[10] = loss;
		cells[11] = tbctl_jstr(r, "error_class");
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return mx_nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

/* Per cell: the medians of its repeats. */
static int cells_table(const json_t *cells_json)
{
	static const char *const header[] = {"CELL",   "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "PARAMS", "N",
					     "FAILED", "SENDER",           "RECEIVER", "RETRANS",   "LOSS"};
	struct tbctl_table *t = tbctl_table_new(11, header);
	const json_t *c;
	size_t i;

	if (t == NULL)
		return mx_nomem();
	json_array_foreach(cells_json, i, c)
	{
		char cell[24], pair[200], params[256], n[48], failed[24], snd[32], rcv[32], rtx[32], loss[32];
		const char *cells[11];

		if (!json_is_object(c))
			continue; /* a cell no run of which is stored */
		snprintf(cell, sizeof(cell), "%lld", tbctl_jint(c, "cell", 0));
		mx_fmt_pair(pair, sizeof(pair), c);
		mx_fmt_params(params, sizeof(params), json_object_get(c, "params"));
		snprintf(n, sizeof(n), "%lld/%lld", tbctl_jint(c, "n", 0), tbctl_jint(c, "runs", 0));
		snprintf(failed, sizeof(failed), "%lld", tbctl_jint(c, "failed", 0));
		mx_fmt_bps(snd, sizeof(snd), mx_median_of(c, "sender_bps"));
		mx_fmt_bps(rcv, sizeof(rcv), mx_median_of(c, "receiver_bps"));
		mx_fmt_count(rtx, sizeof(rtx), mx_median_of(c, "retransmits"));
		mx_fmt_percent(loss, sizeof(loss), mx_median_of(c, "lost_percent"));
		cells[0] = cell;
		cells[1] = pair;
		cells[2] = tbctl_jstr(c, "protocol");
		cells[3] = tbctl_jstr(c, "direction");
		cells[4] = params;
		cells[5] = n;
		cells[6] = failed;
		cells[7] = snd;
		cells[8] = rcv;
		cells[9] = rtx;
		cells[10] = loss;
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return mx_nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_matrix_results(const struct tbctl_ctx *ctx)
{
	unsigned seen = ctx->args->seen;
	int by_run = (seen & TBCTL_OPT_RUNS) != 0, rc;
	json_t *reply = NULL;
	char path[160];
	long long id;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if (by_run && (seen & TBCTL_OPT_CELLS)) {
		fprintf(stderr, "tbctl: --runs and --cells are two views: choose one (default: --cells)\n");
		return TBCTL_EXIT_USAGE;
	}
	if ((seen & TBCTL_OPT_CSV) && ctx->args->json) {
		fprintf(stderr, "tbctl: --csv and --json are two outputs: choose one\n");
		return TBCTL_EXIT_USAGE;
	}
	if (seen & TBCTL_OPT_CSV) {
		char *text;
		size_t len;

		snprintf(path, sizeof(path), "/api/v1/matrices/%lld/results?format=csv&view=%s", id,
			 by_run ? "runs" : "cells");
		if ((rc = tbctl_api_get_text(ctx, path, &text, &len)) != TBCTL_EXIT_OK)
			return rc;
		if (len > 0)
			fwrite(text, 1, len, stdout); /* as the server sent it */
		free(text);
		return TBCTL_EXIT_OK;
	}
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/results", id);
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	printf("matrix %lld \"", id);
	tbctl_print_safe(stdout, mx_str_or(reply, "name", ""));
	printf("\": %s; %s\n", mx_str_or(reply, "state", "?"),
	       by_run ? "every run" : "per cell, the median of its ok runs (N: ok/all)");
	rc = by_run ? runs_table(json_object_get(reply, "runs")) : cells_table(json_object_get(reply, "cells"));
	json_decref(reply);
	return rc;
}

int tbctl_cmd_matrix_show(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL, *m, *p, *err;
	char *path, el[32], left[32];
	long long id;
	int rc;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = mx_matrix_path(id, "?runs=1")) == NULL)
		return mx_nomem();
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	free(path);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	m = json_object_get(reply, "matrix");
	p = json_object_get(m, "progress");
	err = json_object_get(m, "error");
	mx_fmt_dur(el, sizeof(el), mx_jnum(p, "elapsed_s", -1));
	mx_fmt_dur(left, sizeof(left), mx_jnum(p, "remaining_s", -1));
	printf("matrix %lld \"", id);
	tbctl_print_safe(stdout, mx_str_or(m, "name", ""));
	printf("\": %s, by %s, created %s, started %s, finished %s", mx_str_or(m, "state", "?"),
	       mx_str_or(m, "actor", "?"), mx_str_or(m, "created_at", "-"), mx_str_or(m, "started_at", "-"),
	       mx_str_or(m, "finished_at", "-"));
	if (json_is_integer(json_object_get(m, "rerun_of")))
		printf(", a rerun of %lld", tbctl_jint(m, "rerun_of", 0));
	printf("\nprogress: %lld/%lld done: %lld ok, %lld failed, %lld canceled; %lld running, %lld pending; "
	       "%s elapsed, ~%s left\n",
	       tbctl_jint(p, "done", 0), tbctl_jint(p, "total", 0), tbctl_jint(p, "ok", 0), tbctl_jint(p, "failed", 0),
	       tbctl_jint(p, "canceled", 0), tbctl_jint(p, "running", 0), tbctl_jint(p, "pending", 0), el, left);
	if (json_is_object(err)) {
		printf("error: %s: ", mx_str_or(err, "code", "?"));
		tbctl_print_safe(stdout, mx_str_or(err, "message", ""));
		fputc('\n', stdout);
	}
	rc = runs_table(json_object_get(m, "runs"));
	json_decref(reply);
	return rc;
}
