/* report_md.c - the report as Markdown (report.h): the HTML report's tables
 * as pipe tables, the commands and the spec in fenced blocks; the charts
 * are left out with a note (they are SVG in the HTML report). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_internal.h"

/* Text outside code: '|' escaped (it would end a table cell), & < > as
 * entities (a Markdown renderer passes HTML through), line breaks as
 * spaces. */
static void text(struct tb_outbuf *b, const char *s)
{
	for (const char *p = s != NULL ? s : ""; *p; p++) {
		if (*p == '|')
			tb_outbuf_puts(b, "\\|");
		else if (*p == '<')
			tb_outbuf_puts(b, "&lt;");
		else if (*p == '>')
			tb_outbuf_puts(b, "&gt;");
		else if (*p == '&')
			tb_outbuf_puts(b, "&amp;");
		else if (*p == '\n' || *p == '\r')
			tb_outbuf_puts(b, " ");
		else
			tb_outbuf_add(b, p, 1);
	}
}

/* A table cell. */
static void cell(struct tb_outbuf *b, const char *s)
{
	tb_outbuf_puts(b, " ");
	text(b, s);
	tb_outbuf_puts(b, " |");
}

static void val(struct tb_outbuf *b, const char *metric, double v)
{
	char buf[48];

	rp_fmt(buf, sizeof(buf), metric, v);
	cell(b, buf);
}

static void head(struct tb_outbuf *b, const char *const cols[])
{
	tb_outbuf_puts(b, "\n|");
	for (int i = 0; cols[i] != NULL; i++)
		cell(b, cols[i]);
	tb_outbuf_puts(b, "\n|");
	for (int i = 0; cols[i] != NULL; i++)
		tb_outbuf_puts(b, " --- |");
	tb_outbuf_puts(b, "\n");
}

/* A fenced block whose fence is longer than any run of backticks in text. */
static void fenced(struct tb_outbuf *b, const char *lang, const char *text)
{
	size_t run = 0, longest = 0;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i < (longest < 3 ? 3 : longest + 1); i++)
		tb_outbuf_puts(b, "`");
	tb_outbuf_printf(b, "%s\n%s\n", lang, text);
	for (size_t i = 0; i < (longest < 3 ? 3 : longest + 1); i++)
		tb_outbuf_puts(b, "`");
	tb_outbuf_puts(b, "\n");
}

static void cells_table(struct tb_outbuf *b, const json_t *cells)
{
	static const char *const cols[] = {"cell", "client → server",   "protocol", "direction", "params",
					   "n",    "receiver (median)", "IQR",      "CV",        "sender (median)",
					   "lost", "retransmits",       "jitter",   NULL};
	const json_t *c;
	size_t i;

	head(b, cols);
	json_array_foreach(cells, i, c)
	{
		const json_t *rx = json_object_get(c, "receiver_bps");
		char buf[200], q1[48], q3[48];

		if (json_is_null(c))
			continue;
		tb_outbuf_printf(b, "| %lld |", (long long)json_integer_value(json_object_get(c, "cell")));
		rp_pair(buf, sizeof(buf), c);
		cell(b, buf);
		cell(b, rp_str(c, "protocol"));
		cell(b, rp_str(c, "direction"));
		rp_params(buf, sizeof(buf), json_object_get(c, "params"));
		cell(b, buf);
		snprintf(buf, sizeof(buf), "%lld of %lld", (long long)json_integer_value(json_object_get(c, "n")),
			 (long long)json_integer_value(json_object_get(c, "runs")));
		cell(b, buf);
		val(b, "receiver_bps", rp_num(rx, "median"));
		rp_fmt(q1, sizeof(q1), "receiver_bps", rp_num(rx, "q1"));
		rp_fmt(q3, sizeof(q3), "receiver_bps", rp_num(rx, "q3"));
		snprintf(buf, sizeof(buf), "%s – %s", q1, q3);
		cell(b, buf);
		if (isnan(rp_num(rx, "cv")))
			snprintf(buf, sizeof(buf), "—");
		else
			snprintf(buf, sizeof(buf), "%.1f %%%s", rp_num(rx, "cv") * 100,
				 json_is_true(json_object_get(rx, "noisy")) ? " **noisy**" : "");
		cell(b, buf);
		val(b, "sender_bps", rp_num(json_object_get(c, "sender_bps"), "median"));
		val(b, "lost_percent", rp_num(json_object_get(c, "lost_percent"), "median"));
		val(b, "retransmits", rp_num(json_object_get(c, "retransmits"), "median"));
		val(b, "jitter_ms", rp_num(json_object_get(c, "jitter_ms"), "median"));
		tb_outbuf_puts(b, "\n");
	}
}

static void ab_part(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const cols[] = {"cell", "what",   "baseline (median)", "baseline IQR", "now (median)",
					   "IQR",  "change", "IQRs overlap",      "verdict",      NULL};
	static const char *const dcols[] = {"host", "OS", "what", "baseline", "this matrix", NULL};
	const json_t *c = r->compare, *row, *h, *d;
	const char *metric = rp_str(c, "metric");
	char buf[240], x[48], y[48];
	size_t i, j;

	tb_outbuf_printf(b,
			 "\n## A/B: against baseline #%lld\n\n%s: %lld cells compared, %zu dropped by more than "
			 "%g %% or failed, %zu with the interquartile ranges apart.\n",
			 (long long)json_integer_value(json_object_get(c, "baseline")),
			 json_is_true(json_object_get(c, "pass")) ? "Pass" : "**Fail**",
			 (long long)json_integer_value(json_object_get(c, "compared")),
			 json_array_size(json_object_get(c, "dropped")), rp_num(c, "max_drop_pct"),
			 json_array_size(json_object_get(c, "beyond_spread")));
	head(b, cols);
	json_array_foreach(json_object_get(c, "cells"), i, row)
	{
		const json_t *ov = json_object_get(row, "overlap");

		if (json_is_integer(json_object_get(row, "cell")))
			tb_outbuf_printf(b, "| %lld |", (long long)json_integer_value(json_object_get(row, "cell")));
		else
			tb_outbuf_puts(b, "| — |");
		rp_label(buf, sizeof(buf), row);
		cell(b, buf[0] == '#' && strchr(buf, ' ') != NULL ? strchr(buf, ' ') + 1 : buf);
		val(b, metric, rp_num(row, "baseline_median"));
		rp_fmt(x, sizeof(x), metric, rp_num(row, "baseline_q1"));
		rp_fmt(y, sizeof(y), metric, rp_num(row, "baseline_q3"));
		snprintf(buf, sizeof(buf), "%s – %s", x, y);
		cell(b, buf);
		val(b, metric, rp_num(row, "median"));
		rp_fmt(x, sizeof(x), metric, rp_num(row, "q1"));
		rp_fmt(y, sizeof(y), metric, rp_num(row, "q3"));
		snprintf(buf, sizeof(buf), "%s – %s", x, y);
		cell(b, buf);
		if (isnan(rp_num(row, "change_pct")))
			snprintf(buf, sizeof(buf), "—");
		else
			snprintf(buf, sizeof(buf), "%+.2f %%", rp_num(row, "change_pct"));
		cell(b, buf);
		cell(b, json_is_true(ov)                                      ? "yes"
			: !json_is_false(ov)                                  ? "—"
			: json_is_true(json_object_get(row, "beyond_spread")) ? "no: beyond the spread"
									      : "no (a change within the allowed)");
		cell(b, rp_str(row, "verdict"));
		tb_outbuf_puts(b, "\n");
	}
	tb_outbuf_puts(b, "\n### What changed on the hosts\n");
	head(b, dcols);
	json_array_foreach(json_object_get(r->diff, "hosts"), i, h)
	{
		json_array_foreach(json_object_get(h, "differences"), j, d)
		{
			char *mv = json_dumps(json_object_get(d, "matrix"), JSON_ENCODE_ANY | JSON_COMPACT);
			char *bv = json_dumps(json_object_get(d, "other"), JSON_ENCODE_ANY | JSON_COMPACT);

			tb_outbuf_puts(b, "|");
			cell(b, rp_str(h, "host"));
			cell(b, rp_str(h, "os"));
			cell(b, rp_str(d, "path"));
			cell(b, bv != NULL ? bv : "—");
			cell(b, mv != NULL ? mv : "—");
			tb_outbuf_puts(b, "\n");
			free(mv);
			free(bv);
		}
	}
}

static void hosts_table(struct tb_outbuf *b, const json_t *hosts)
{
	const json_t *h;
	size_t i;

	head(b, rp_host_cols);
	json_array_foreach(hosts, i, h)
	{
		char vals[11][160];

		snprintf(vals[0], sizeof(vals[0]), "%s (%s)", rp_str(h, "host"), rp_str(h, "os"));
		rp_host_values(json_object_get(h, "metadata"), vals);
		tb_outbuf_puts(b, "|");
		for (int k = 0; rp_host_cols[k] != NULL; k++)
			cell(b, vals[k]);
		tb_outbuf_puts(b, "\n");
	}
}

static void summary(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const cols[] = {"", "", NULL};
	static const char *const keys[] = {"id", "state", "actor", "created_at", "started_at", "finished_at", NULL};
	const json_t *p = json_object_get(r->matrix, "progress");
	char buf[160];

	head(b, cols);
	for (int i = 0; keys[i] != NULL; i++) {
		const json_t *v = json_object_get(r->matrix, keys[i]);

		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		else
			snprintf(buf, sizeof(buf), "%s", json_is_string(v) ? json_string_value(v) : "—");
		tb_outbuf_puts(b, "|");
		cell(b, keys[i]);
		cell(b, buf);
		tb_outbuf_puts(b, "\n");
	}
	snprintf(buf, sizeof(buf), "%lld: %lld ok, %lld failed, %lld canceled",
		 (long long)json_integer_value(json_object_get(p, "total")),
		 (long long)json_integer_value(json_object_get(p, "ok")),
		 (long long)json_integer_value(json_object_get(p, "failed")),
		 (long long)json_integer_value(json_object_get(p, "canceled")));
	tb_outbuf_puts(b, "| runs |");
	cell(b, buf);
	tb_outbuf_puts(b, "\n");
}

int tb_report_md(const struct tb_report *r, char **out, size_t *len)
{
	struct tb_outbuf b = {0};
	char *spec = json_dumps(json_object_get(r->matrix, "spec"), JSON_INDENT(2) | JSON_SORT_KEYS);
	const json_t *c;
	size_t i;

	tb_outbuf_puts(&b, "# ");
	text(&b, rp_str(r->matrix, "name"));
	tb_outbuf_printf(&b, "\n\nMatrix #%lld, %s.  Report generated %s by testbedd %s.\n\n## Summary\n",
			 (long long)json_integer_value(json_object_get(r->matrix, "id")), rp_str(r->matrix, "state"),
			 r->generated, r->version);
	summary(&b, r);
	tb_outbuf_puts(&b, "\n## Results\n\nPer cell, over the runs that ended ok: medians, interquartile range and "
			   "coefficient of variation of the receiver bitrate.\n");
	cells_table(&b, json_object_get(r->table, "cells"));
	tb_outbuf_puts(&b, "\n*Charts (box plots per cell) are in the HTML report: "
			   "`tbctl matrix report ID --format html`.*\n");
	if (r->compare != NULL)
		ab_part(&b, r);
	tb_outbuf_puts(&b, "\n## Hosts\n");
	hosts_table(&b, r->hosts);
	tb_outbuf_puts(&b, "\n## Commands\n\nThe exact commands of each cell's first run.\n");
	json_array_foreach(r->commands, i, c)
	{
		char *text = NULL;
		size_t n = strlen(rp_str(c, "server_command")) + strlen(rp_str(c, "client_command")) + 64;

		if ((text = malloc(n)) == NULL) {
			b.nomem = true;
			break;
		}
		snprintf(text, n, "# server\n%s\n# client\n%s", rp_str(c, "server_command"),
			 rp_str(c, "client_command"));
		tb_outbuf_printf(&b, "\nCell %lld (run %lld):\n\n",
				 (long long)json_integer_value(json_object_get(c, "cell")),
				 (long long)json_integer_value(json_object_get(c, "run")));
		fenced(&b, "sh", text);
		free(text);
	}
	if (r->commands_left > 0)
		tb_outbuf_printf(&b, "\n%d more cells' commands left out (see the API's runs).\n", r->commands_left);
	tb_outbuf_puts(&b, "\n## Spec\n\n");
	fenced(&b, "json", spec != NULL ? spec : "");
	free(spec);
	*len = b.len;
	if (b.nomem || (*out = tb_outbuf_take(&b)) == NULL) {
		tb_outbuf_free(&b);
		*out = NULL;
		return -1;
	}
	return 0;
}
