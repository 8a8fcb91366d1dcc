/*
 * tbctl_matrix_compare.c - `tbctl matrix compare` (the CI gate: a table per
 * cell, --metric, --spread, a JUnit file) and `tbctl matrix report` (the
 * server's report, written to stdout as it came).
 */
#include "tbctl_matrix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_table.h"

static const char *const metrics[] = {"receiver_bps", "sender_bps", "lost_percent", "retransmits", "jitter_ms", NULL};

int mx_metric_ok(const char *metric)
{
	int known = metric == NULL;

	for (int i = 0; !known && metrics[i] != NULL; i++)
		known = strcmp(metric, metrics[i]) == 0;
	if (!known)
		fprintf(stderr,
			"tbctl: --metric must be receiver_bps, sender_bps, lost_percent, retransmits or jitter_ms, "
			"got \"%s\"\n",
			metric);
	return known;
}

int mx_gate_query(const struct tbctl_args *a, char *q, size_t n)
{
	long long base;
	char *end = NULL;
	double drop = 5;

	if (a->baseline == NULL) {
		fprintf(stderr, "tbctl: --baseline ID is required: the matrix to compare against\n");
		return -1;
	}
	if (mx_parse_id(a->baseline, &base) != 0)
		return -1;
	if (a->max_drop != NULL) {
		drop = strtod(a->max_drop, &end);
		if (end == a->max_drop || *end != '\0' || !(drop >= 0 && drop <= 100)) {
			fprintf(stderr, "tbctl: --max-drop must be a percentage 0..100, got \"%s\"\n", a->max_drop);
			return -1;
		}
	}
	if (!mx_metric_ok(a->metric))
		return -1;
	snprintf(q, n, "/compare?baseline=%lld&max_drop=%g&metric=%s", base, drop,
		 a->metric != NULL ? a->metric : "receiver_bps");
	return 0;
}

/* "q1 .. q3" of a row's side (prefix "" or "baseline_"), "-" when unknown. */
static void fmt_iqr(char *buf, size_t n, const json_t *r, const char *prefix, const char *metric)
{
	char k1[32], k3[32], a[32], b[32];

	snprintf(k1, sizeof(k1), "%sq1", prefix);
	snprintf(k3, sizeof(k3), "%sq3", prefix);
	if (!json_is_number(json_object_get(r, k1)) || !json_is_number(json_object_get(r, k3))) {
		snprintf(buf, n, "-");
		return;
	}
	mx_fmt_metric(a, sizeof(a), metric, mx_jnum(r, k1, -1));
	mx_fmt_metric(b, sizeof(b), metric, mx_jnum(r, k3, -1));
	snprintf(buf, n, "%s..%s", a, b);
}

static int compare_table(const json_t *c, int spread)
{
	static const char *const header[] = {"CELL", "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "PARAMS",  "BASELINE",
					     "NOW",  "CHANGE",           "VERDICT",  "BASE IQR",  "NOW IQR", "OVERLAP"};
	const char *metric = mx_str_or(c, "metric", "receiver_bps");
	struct tbctl_table *t = tbctl_table_new(spread ? 12 : 9, header);
	const json_t *r;
	size_t i;

	if (t == NULL)
		return mx_nomem();
	json_array_foreach(json_object_get(c, "cells"), i, r)
	{
		char cell[48], pair[200], params[256], base[32], now[32], change[32], biqr[80], iqr[80];
		const char *cells[12];
		const json_t *ch = json_object_get(r, "change_pct"), *ov = json_object_get(r, "overlap");

		if (json_is_integer(json_object_get(r, "cell")))
			snprintf(cell, sizeof(cell), "%lld", tbctl_jint(r, "cell", 0));
		else
			snprintf(cell, sizeof(cell), "(%lld)", tbctl_jint(r, "baseline_cell", 0));
		mx_fmt_pair(pair, sizeof(pair), r);
		mx_fmt_params(params, sizeof(params), json_object_get(r, "params"));
		mx_fmt_metric(base, sizeof(base), metric, mx_jnum(r, "baseline_median", -1));
		mx_fmt_metric(now, sizeof(now), metric, mx_jnum(r, "median", -1));
		if (json_is_number(ch))
			snprintf(change, sizeof(change), "%+.1f%%", json_number_value(ch));
		else
			snprintf(change, sizeof(change), "-");
		fmt_iqr(biqr, sizeof(biqr), r, "baseline_", metric);
		fmt_iqr(iqr, sizeof(iqr), r, "", metric);
		cells[0] = cell;
		cells[1] = pair;
		cells[2] = tbctl_jstr(r, "protocol");
		cells[3] = tbctl_jstr(r, "direction");
		cells[4] = params;
		cells[5] = base;
		cells[6] = now;
		cells[7] = change;
		cells[8] = tbctl_jstr(r, "verdict");
		cells[9] = biqr;
		cells[10] = iqr;
		cells[11] = json_is_true(ov) ? "yes" : json_is_false(ov) ? "NO" : "-";
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return mx_nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

/* s with & < > " as XML entities. */
static void xml(FILE *f, const char *s)
{
	for (const char *p = s != NULL ? s : ""; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*p >= 0x20 || *p == '\t' || *p == '\n')
				fputc(*p, f);
		}
	}
}

/* One testcase: a failure for dropped or failed, skipped for a cell that
 * could not be compared (no_baseline, new, missing). */
static void junit_case(FILE *f, const json_t *r, const char *metric, long long id)
{
	const char *v = tbctl_jstr(r, "verdict");
	char pair[200], params[256], name[600], base[32], now[32], msg[200];
	const json_t *ch = json_object_get(r, "change_pct");

	v = v != NULL ? v : "?";
	mx_fmt_pair(pair, sizeof(pair), r);
	mx_fmt_params(params, sizeof(params), json_object_get(r, "params"));
	if (json_is_integer(json_object_get(r, "cell")))
		snprintf(name, sizeof(name), "cell %lld: %s %s %s %s", tbctl_jint(r, "cell", 0), pair,
			 mx_str_or(r, "protocol", ""), mx_str_or(r, "direction", ""), params);
	else
		snprintf(name, sizeof(name), "baseline cell %lld: %s %s %s %s", tbctl_jint(r, "baseline_cell", 0), pair,
			 mx_str_or(r, "protocol", ""), mx_str_or(r, "direction", ""), params);
	mx_fmt_metric(base, sizeof(base), metric, mx_jnum(r, "baseline_median", -1));
	mx_fmt_metric(now, sizeof(now), metric, mx_jnum(r, "median", -1));
	if (json_is_number(ch))
		snprintf(msg, sizeof(msg), "%s: %s %s -> %s (%+.2f%%)", v, metric, base, now, json_number_value(ch));
	else
		snprintf(msg, sizeof(msg), "%s: %s %s -> %s", v, metric, base, now);
	fprintf(f, "    <testcase classname=\"testbedd.matrix%lld\" name=\"", id);
	xml(f, name);
	fputs("\">", f);
	if (strcmp(v, "dropped") == 0 || strcmp(v, "failed") == 0) {
		fprintf(f, "\n      <failure type=\"%s\" message=\"", v);
		xml(f, msg);
		fputs("\">", f);
		xml(f, msg);
		fputs("</failure>\n    ", f);
	} else if (strcmp(v, "ok") != 0) {
		fputs("\n      <skipped message=\"", f);
		xml(f, msg);
		fputs("\"/>\n    ", f);
	}
	fputs("</testcase>\n", f);
}

/* The comparison as a JUnit XML file (GitLab, Jenkins): one testsuite, one
 * testcase per row of the comparison. */
static int junit(const char *path, const json_t *c, long long id)
{
	const char *metric = mx_str_or(c, "metric", "receiver_bps");
	size_t n = json_array_size(json_object_get(c, "cells")), fails = 0, skipped = 0, i;
	const json_t *r;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "tbctl: --junit %s: %s\n", path, strerror(errno));
		return TBCTL_EXIT_USAGE;
	}
	json_array_foreach(json_object_get(c, "cells"), i, r)
	{
		const char *v = mx_str_or(r, "verdict", "");

		fails += strcmp(v, "dropped") == 0 || strcmp(v, "failed") == 0;
		skipped += strcmp(v, "ok") != 0 && strcmp(v, "dropped") != 0 && strcmp(v, "failed") != 0;
	}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"testbedd\" tests=\"%zu\" "
		"failures=\"%zu\">\n  <testsuite name=\"matrix %lld against baseline %lld (%s, max drop %g%%)\" "
		"tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
		n, fails, id, tbctl_jint(c, "baseline", 0), metric, mx_jnum(c, "max_drop_pct", 0), n, fails, skipped);
	json_array_foreach(json_object_get(c, "cells"), i, r) junit_case(f, r, metric, id);
	fputs("  </testsuite>\n</testsuites>\n", f);
	if (fclose(f) != 0) {
		fprintf(stderr, "tbctl: --junit %s: %s\n", path, strerror(errno));
		return TBCTL_EXIT_USAGE;
	}
	return TBCTL_EXIT_OK;
}

int mx_compare(const struct tbctl_ctx *ctx, long long id, const char *query)
{
	json_t *reply = NULL, *c;
	char *path = mx_matrix_path(id, query);
	int rc;

	if (path == NULL)
		return mx_nomem();
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	free(path);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	c = json_object_get(reply, "compare");
	if (!ctx->args->json) {
		size_t nd = json_array_size(json_object_get(c, "dropped"));
		int worse_up = json_is_true(json_object_get(c, "higher_is_worse"));

		rc = compare_table(c, (ctx->args->seen & TBCTL_OPT_SPREAD) != 0);
		printf("matrix %lld against baseline %lld (%s, a %s of more than %g%% fails): %lld cell%s compared, ",
		       id, tbctl_jint(c, "baseline", 0), mx_str_or(c, "metric", "?"), worse_up ? "rise" : "drop",
		       mx_jnum(c, "max_drop_pct", 0), tbctl_jint(c, "compared", 0),
		       tbctl_jint(c, "compared", 0) == 1 ? "" : "s");
		if (json_is_true(json_object_get(c, "pass")))
			printf("none %s: pass\n", worse_up ? "worse" : "dropped");
		else if (nd > 0)
			printf("%zu %s or without a result: FAIL\n", nd, worse_up ? "worse" : "dropped");
		else
			printf("nothing to compare (no cell of the baseline matches): FAIL\n");
		if (ctx->args->seen & TBCTL_OPT_SPREAD)
			printf("%zu cell%s with the interquartile ranges apart (beyond the spread)\n",
			       json_array_size(json_object_get(c, "beyond_spread")),
			       json_array_size(json_object_get(c, "beyond_spread")) == 1 ? "" : "s");
	}
	if (rc == TBCTL_EXIT_OK && ctx->args->junit != NULL)
		rc = junit(ctx->args->junit, c, id);
	if (rc == TBCTL_EXIT_OK && !json_is_true(json_object_get(c, "pass")))
		rc = TBCTL_EXIT_DROPPED;
	json_decref(reply);
	return rc;
}

int tbctl_cmd_matrix_compare(const struct tbctl_ctx *ctx)
{
	char q[160];
	long long id;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0 || mx_gate_query(ctx->args, q, sizeof(q)) != 0)
		return TBCTL_EXIT_USAGE;
	return mx_compare(ctx, id, q);
}

int tbctl_cmd_matrix_report(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	const char *format = a->format != NULL ? a->format : "html";
	long long id, base = 0;
	char q[96], *path, *text = NULL;
	size_t len = 0;
	int rc;

	if (mx_parse_id(a->pos[2], &id) != 0 || (a->baseline != NULL && mx_parse_id(a->baseline, &base) != 0) ||
	    !mx_metric_ok(a->metric))
		return TBCTL_EXIT_USAGE;
	if (strcmp(format, "html") != 0 && strcmp(format, "md") != 0) {
		fprintf(stderr, "tbctl: --format must be html or md, got \"%s\"\n", format);
		return TBCTL_EXIT_USAGE;
	}
	if (base > 0 && a->metric != NULL)
		snprintf(q, sizeof(q), "/report?format=%s&baseline=%lld&metric=%s", format, base, a->metric);
	else if (base > 0)
		snprintf(q, sizeof(q), "/report?format=%s&baseline=%lld", format, base);
	else
		snprintf(q, sizeof(q), "/report?format=%s", format);
	if ((path = mx_matrix_path(id, q)) == NULL)
		return mx_nomem();
	rc = tbctl_api_get_text(ctx, path, &text, &len);
	free(path);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	if (len > 0 && (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)) {
		fprintf(stderr, "tbctl: writing the report: %s\n", strerror(errno));
		rc = TBCTL_EXIT_USAGE;
	}
	free(text);
	return rc;
}
