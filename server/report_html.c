/* report_html.c - the report as one self-contained HTML file (report.h): an
 * inline style, tables, inline SVG charts; no script, no image from
 * anywhere, links only to testbedd's own pages when its public URL is known,
 * and its own CSP in a meta element for when it is opened from a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_internal.h"

static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;"
	"padding:16px;color:#111;background:#fff}"
	"h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:13px}"
	"th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
	"th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	".wrap{overflow-x:auto}.muted{color:#555}.bad{color:#b00020;font-weight:bold}.noisy{color:#8a4b00}"
	"pre,code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}pre{background:#f6f6f6;padding:8px;"
	"overflow-x:auto}figure{margin:1em 0}svg.chart{max-width:100%;height:auto;border:1px solid #ddd}"
	"figcaption{color:#555;font-size:12px}figure.flame svg{max-width:100%;height:auto;border:1px solid #ddd}";

static void td(struct tb_outbuf *b, const char *cls, const char *text)
{
	tb_outbuf_puts(b, cls != NULL ? "<td class=\"" : "<td>");
	if (cls != NULL) {
		tb_outbuf_puts(b, cls);
		tb_outbuf_puts(b, "\">");
	}
	rp_esc(b, text);
	tb_outbuf_puts(b, "</td>");
}

/* A cell holding text, a link to href (unless href is NULL). */
static void td_link(struct tb_outbuf *b, const char *cls, const char *href, const char *text)
{
	if (href == NULL) {
		td(b, cls, text);
		return;
	}
	tb_outbuf_puts(b, cls != NULL ? "<td class=\"" : "<td>");
	if (cls != NULL) {
		tb_outbuf_puts(b, cls);
		tb_outbuf_puts(b, "\">");
	}
	tb_outbuf_puts(b, "<a href=\"");
	rp_esc(b, href);
	tb_outbuf_puts(b, "\">");
	rp_esc(b, text);
	tb_outbuf_puts(b, "</a></td>");
}

static void thead(struct tb_outbuf *b, const char *id, const char *caption, const char *const cols[])
{
	tb_outbuf_printf(b, "<div class=\"wrap\"><table id=\"%s\"><caption>", id);
	rp_esc(b, caption);
	tb_outbuf_puts(b, "</caption>\n<thead><tr>");
	for (int i = 0; cols[i] != NULL; i++) {
		tb_outbuf_puts(b, "<th scope=\"col\">");
		rp_esc(b, cols[i]);
		tb_outbuf_puts(b, "</th>");
	}
	tb_outbuf_puts(b, "</tr></thead>\n<tbody>\n");
}

static void tfoot(struct tb_outbuf *b)
{
	tb_outbuf_puts(b, "</tbody></table></div>\n");
}

static void summary(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const cols[] = {"", "", NULL};
	static const char *const keys[] = {"id",         "name",       "state",       "actor",
					   "created_at", "started_at", "finished_at", NULL};
	const json_t *m = r->matrix, *p = json_object_get(m, "progress");
	char buf[160];

	thead(b, "summary", "The matrix", cols);
	for (int i = 0; keys[i] != NULL; i++) {
		const json_t *v = json_object_get(m, keys[i]);

		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		else
			snprintf(buf, sizeof(buf), "%s", json_is_string(v) ? json_string_value(v) : "—");
		tb_outbuf_puts(b, "<tr><th scope=\"row\">");
		rp_esc(b, keys[i]);
		tb_outbuf_puts(b, "</th>");
		td(b, NULL, buf);
		tb_outbuf_puts(b, "</tr>\n");
	}
	snprintf(buf, sizeof(buf), "%lld runs: %lld ok, %lld failed, %lld canceled",
		 (long long)json_integer_value(json_object_get(p, "total")),
		 (long long)json_integer_value(json_object_get(p, "ok")),
		 (long long)json_integer_value(json_object_get(p, "failed")),
		 (long long)json_integer_value(json_object_get(p, "canceled")));
	tb_outbuf_puts(b, "<tr><th scope=\"row\">runs</th>");
	td(b, NULL, buf);
	tb_outbuf_puts(b, "</tr>\n");
	tfoot(b);
}

static void cells_table(struct tb_outbuf *b, const struct tb_report *r, const json_t *cells)
{
	long long matrix = (long long)json_integer_value(json_object_get(r->matrix, "id"));
	char href[RP_HREF];
	const json_t *c;
	size_t i;

	thead(b, "cells",
	      "Per cell, over the runs that ended ok: medians, interquartile range and coefficient of "
	      "variation of the receiver bitrate (noisy cells marked)",
	      rp_cell_cols);
	json_array_foreach(cells, i, c)
	{
		char vals[RP_CELL_NCOLS][RP_TEXT];
		int noisy;

		if (json_is_null(c))
			continue;
		noisy = rp_cell_row(c, " noisy", vals);
		tb_outbuf_puts(b, noisy ? "<tr class=\"noisy\">" : "<tr>");
		if (r->link_base != NULL)
			rp_href(href, sizeof(href), r->link_base, matrix,
				(long long)json_integer_value(json_object_get(c, "cell")), 0);
		td_link(b, "num", r->link_base != NULL ? href : NULL, vals[0]);
		for (int k = 1; k < RP_CELL_NCOLS; k++)
			td(b, rp_cell_num(k) ? "num" : NULL, vals[k]);
		tb_outbuf_puts(b, "</tr>\n");
	}
	tfoot(b);
}

static void figure(struct tb_outbuf *b, const json_t *cells, const char *metric, const char *title)
{
	struct tb_outbuf svg = {0};
	int n = rp_svg_cells(&svg, cells, metric, title);

	b->nomem |= svg.nomem;
	if (n > 0) {
		tb_outbuf_puts(b, "<figure>\n");
		tb_outbuf_add(b, svg.p, svg.len);
		tb_outbuf_printf(b,
				 "<figcaption>Box: interquartile range; thick line: median; whiskers: min to max; "
				 "dots: every run.  %d cell%s drawn.</figcaption>\n</figure>\n",
				 n, n == 1 ? "" : "s");
	}
	tb_outbuf_free(&svg);
}

static void ab_part(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const dcols[] = {"host", "OS", "in", "what", "baseline", "this matrix", NULL};
	const json_t *c = r->compare, *row, *h, *d;
	const char *metric = rp_str(c, "metric");
	char buf[240];
	size_t i, j, nrows = 0;

	tb_outbuf_printf(b, "<h2 id=\"ab-title\">A/B: against baseline #%lld</h2>\n<p>",
			 (long long)json_integer_value(json_object_get(c, "baseline")));
	snprintf(buf, sizeof(buf),
		 "%s: %lld cells compared, %zu dropped by more than %g %% or failed, %zu with the "
		 "interquartile ranges apart.",
		 json_is_true(json_object_get(c, "pass")) ? "Pass" : "Fail",
		 (long long)json_integer_value(json_object_get(c, "compared")),
		 json_array_size(json_object_get(c, "dropped")), rp_num(c, "max_drop_pct"),
		 json_array_size(json_object_get(c, "beyond_spread")));
	rp_esc(b, buf);
	tb_outbuf_puts(b, "</p>\n");
	snprintf(buf, sizeof(buf), "Per cell: the baseline's and this matrix's %s (%s)", metric,
		 json_is_true(json_object_get(c, "higher_is_worse")) ? "higher is worse" : "higher is better");
	thead(b, "ab", buf, rp_ab_cols);
	json_array_foreach(json_object_get(c, "cells"), i, row)
	{
		char vals[RP_AB_NCOLS][RP_TEXT];

		tb_outbuf_puts(b, rp_ab_row(row, metric, vals) ? "<tr class=\"bad\">" : "<tr>");
		for (int k = 0; k < RP_AB_NCOLS; k++)
			td(b, rp_ab_num(k) ? "num" : NULL, vals[k]);
		tb_outbuf_puts(b, "</tr>\n");
	}
	tfoot(b);
	tb_outbuf_puts(b, "<figure>\n");
	if (rp_svg_ab(b, c) > 0)
		tb_outbuf_puts(b, "<figcaption>Grey: the baseline; blue: this matrix (red: dropped or failed).  Box: "
				  "interquartile range; thick line: median.</figcaption>\n");
	tb_outbuf_puts(b, "</figure>\n<h3>What changed on the hosts</h3>\n");
	thead(b, "hosts-diff", "Host metadata that differs between the baseline and this matrix", dcols);
	json_array_foreach(json_object_get(r->diff, "hosts"), i, h)
	{
		json_array_foreach(json_object_get(h, "differences"), j, d)
		{
			char *mv = json_dumps(json_object_get(d, "matrix"), JSON_ENCODE_ANY | JSON_COMPACT);
			char *ov = json_dumps(json_object_get(d, "other"), JSON_ENCODE_ANY | JSON_COMPACT);

			nrows++;
			tb_outbuf_puts(b, "<tr>");
			td(b, NULL, rp_str(h, "host"));
			td(b, NULL, rp_str(h, "os"));
			td(b, NULL, rp_str(h, "in"));
			td(b, NULL, rp_str(d, "path"));
			td(b, NULL, ov != NULL ? ov : "—");
			td(b, NULL, mv != NULL ? mv : "—");
			tb_outbuf_puts(b, "</tr>\n");
			free(mv);
			free(ov);
		}
		if (json_array_size(json_object_get(h, "differences")) == 0 && strcmp(rp_str(h, "in"), "both") != 0) {
			nrows++;
			tb_outbuf_puts(b, "<tr>");
			td(b, NULL, rp_str(h, "host"));
			td(b, NULL, rp_str(h, "os"));
			td(b, NULL, rp_str(h, "in"));
			tb_outbuf_puts(b, "<td colspan=\"3\">snapshot in one matrix only</td></tr>\n");
		}
	}
	if (nrows == 0)
		tb_outbuf_puts(b, "<tr><td colspan=\"6\">Nothing changed on the hosts.</td></tr>\n");
	tfoot(b);
}

static void hosts_table(struct tb_outbuf *b, const json_t *hosts)
{
	const json_t *h;
	size_t i;

	thead(b, "hosts", "What each host was (a snapshot per host and OS, taken when the matrix first used it)",
	      rp_host_cols);
	json_array_foreach(hosts, i, h)
	{
		char vals[11][160];

		snprintf(vals[0], sizeof(vals[0]), "%s (%s)", rp_str(h, "host"), rp_str(h, "os"));
		rp_host_values(json_object_get(h, "metadata"), vals);
		tb_outbuf_puts(b, "<tr>");
		for (int k = 0; rp_host_cols[k] != NULL; k++)
			td(b, NULL, vals[k]);
		tb_outbuf_puts(b, "</tr>\n");
	}
	tfoot(b);
}

static void commands_table(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const cols[] = {"cell", "run", "server command", "client command", NULL};
	long long matrix = (long long)json_integer_value(json_object_get(r->matrix, "id"));
	const char *base = r->link_base;
	const json_t *c;
	size_t i;

	thead(b, "commands", "The exact commands of each cell's first run", cols);
	json_array_foreach(r->commands, i, c)
	{
		long long cell = (long long)json_integer_value(json_object_get(c, "cell"));
		long long run = (long long)json_integer_value(json_object_get(c, "run"));
		char ct[24], rt[24], ch[RP_HREF], rh[RP_HREF];

		snprintf(ct, sizeof(ct), "%lld", cell);
		snprintf(rt, sizeof(rt), "%lld", run);
		if (base != NULL) {
			rp_href(ch, sizeof(ch), base, matrix, cell, 0);
			rp_href(rh, sizeof(rh), base, matrix, cell, run);
		}
		tb_outbuf_puts(b, "<tr>");
		td_link(b, "num", base != NULL ? ch : NULL, ct);
		td_link(b, "num", base != NULL && run > 0 ? rh : NULL, rt);
		tb_outbuf_puts(b, "<td><code>");
		rp_esc(b, rp_str(c, "server_command"));
		tb_outbuf_puts(b, "</code></td><td><code>");
		rp_esc(b, rp_str(c, "client_command"));
		tb_outbuf_puts(b, "</code></td></tr>\n");
	}
	tfoot(b);
	if (r->commands_left > 0)
		tb_outbuf_printf(b, "<p class=\"muted\">%d more cells' commands left out (see the API's runs).</p>\n",
				 r->commands_left);
}

int tb_report_html(const struct tb_report *r, char **out, size_t *len)
{
	struct tb_outbuf b = {0};
	const json_t *cells = json_object_get(r->table, "cells");
	char *spec = json_dumps(json_object_get(r->matrix, "spec"), JSON_INDENT(2) | JSON_SORT_KEYS);
	int any_loss = 0;
	const json_t *c;
	size_t i;

	tb_outbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			   "style-src 'unsafe-inline'; img-src data:\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	rp_esc(&b, rp_str(r->matrix, "name"));
	tb_outbuf_printf(&b, " · matrix %lld · testbedd report</title>\n<style>%s</style>\n</head>\n<body>\n<h1>",
			 (long long)json_integer_value(json_object_get(r->matrix, "id")), style);
	rp_esc(&b, rp_str(r->matrix, "name"));
	tb_outbuf_printf(&b, "</h1>\n<p class=\"muted\">Matrix #%lld, %s.  Report generated %s by testbedd ",
			 (long long)json_integer_value(json_object_get(r->matrix, "id")), rp_str(r->matrix, "state"),
			 r->generated);
	rp_esc(&b, r->version);
	tb_outbuf_puts(&b, ".</p>\n<h2>Summary</h2>\n");
	summary(&b, r);
	tb_outbuf_puts(&b, "<h2>Results</h2>\n");
	cells_table(&b, r, cells);
	tb_outbuf_puts(&b, "<h2>Charts</h2>\n");
	figure(&b, cells, "receiver_bps", "Receiver bitrate per cell");
	json_array_foreach(cells, i, c) any_loss |= json_is_object(json_object_get(c, "lost_percent"));
	if (any_loss)
		figure(&b, cells, "lost_percent", "Lost datagrams per cell (UDP)");
	if (r->compare != NULL)
		ab_part(&b, r);
	tb_outbuf_puts(&b, "<h2>Hosts</h2>\n");
	hosts_table(&b, r->hosts);
	tb_outbuf_puts(&b, "<h2>Commands</h2>\n");
	commands_table(&b, r);
	rp_html_flames(&b, r);
	tb_outbuf_puts(&b, "<h2>Spec</h2>\n<pre id=\"spec\">");
	rp_esc(&b, spec != NULL ? spec : "");
	tb_outbuf_puts(&b, "</pre>\n</body>\n</html>\n");
	free(spec);
	*len = b.len;
	if (b.nomem || (*out = tb_outbuf_take(&b)) == NULL) {
		tb_outbuf_free(&b);
		*out = NULL;
		return -1;
	}
	return 0;
}
