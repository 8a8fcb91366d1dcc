/* report_md.c - the report as Markdown (report.h): the HTML report's tables
 * as pipe tables, the commands and the spec in fenced blocks; the charts
 * (the HTML report's SVGs, report_svg.c) as images inline, data: URIs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
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

/* [label](href), or label as text when href is NULL: in href what could end
 * the link or a table cell, or start HTML, is percent-encoded. */
static void link(struct tb_outbuf *b, const char *label, const char *href)
{
	if (href == NULL) {
		text(b, label);
		return;
	}
	tb_outbuf_puts(b, "[");
	text(b, label);
	tb_outbuf_puts(b, "](");
	for (const unsigned char *p = (const unsigned char *)href; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || strchr("()[]<>|`\\\"'", *p) != NULL)
			tb_outbuf_printf(b, "%%%02X", *p);
		else
			tb_outbuf_add(b, (const char *)p, 1);
	tb_outbuf_puts(b, ")");
}

/* A table cell. */
static void cell(struct tb_outbuf *b, const char *s)
{
	tb_outbuf_puts(b, " ");
	text(b, s);
	tb_outbuf_puts(b, " |");
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

/* "Cell N (run R):" before a cell's commands, each a link with a public URL. */
static void commands_head(struct tb_outbuf *b, const struct tb_report *r, const json_t *c)
{
	long long matrix = (long long)json_integer_value(json_object_get(r->matrix, "id"));
	long long cell = (long long)json_integer_value(json_object_get(c, "cell"));
	long long run = (long long)json_integer_value(json_object_get(c, "run"));
	char ct[24], rt[24], href[RP_HREF];

	snprintf(ct, sizeof(ct), "%lld", cell);
	snprintf(rt, sizeof(rt), "%lld", run);
	tb_outbuf_puts(b, "\nCell ");
	if (r->link_base != NULL)
		rp_href(href, sizeof(href), r->link_base, matrix, cell, 0);
	link(b, ct, r->link_base != NULL ? href : NULL);
	tb_outbuf_puts(b, " (run ");
	if (r->link_base != NULL)
		rp_href(href, sizeof(href), r->link_base, matrix, cell, run);
	link(b, rt, r->link_base != NULL && run > 0 ? href : NULL);
	tb_outbuf_puts(b, "):\n\n");
}

/* A row of texts. */
static void row_of(struct tb_outbuf *b, const char vals[][RP_TEXT], int n)
{
	tb_outbuf_puts(b, "|");
	for (int k = 0; k < n; k++)
		cell(b, vals[k]);
	tb_outbuf_puts(b, "\n");
}

static void cells_table(struct tb_outbuf *b, const struct tb_report *r, const json_t *cells)
{
	long long matrix = (long long)json_integer_value(json_object_get(r->matrix, "id"));
	char href[RP_HREF];
	const json_t *c;
	size_t i;

	head(b, rp_cell_cols);
	json_array_foreach(cells, i, c)
	{
		char vals[RP_CELL_NCOLS][RP_TEXT];

		if (json_is_null(c))
			continue;
		rp_cell_row(c, " **noisy**", vals);
		if (r->link_base != NULL)
			rp_href(href, sizeof(href), r->link_base, matrix,
				(long long)json_integer_value(json_object_get(c, "cell")), 0);
		tb_outbuf_puts(b, "| ");
		link(b, vals[0], r->link_base != NULL ? href : NULL);
		tb_outbuf_puts(b, " ");
		row_of(b, (const char(*)[RP_TEXT])vals + 1, RP_CELL_NCOLS - 1);
	}
}

/* An SVG as a Markdown image inline: ![alt](data:image/svg+xml;base64,...)
 * (one file to mail or attach; renderers that refuse data: URIs show alt). */
static void svg_image(struct tb_outbuf *b, struct tb_outbuf *svg, const char *alt)
{
	char *enc = svg->nomem ? NULL : malloc(4 * ((svg->len + 2) / 3) + 1);

	if (enc == NULL) {
		b->nomem = 1;
		return;
	}
	tb_b64_encode(svg->p, svg->len, enc);
	tb_outbuf_printf(b, "\n![%s](data:image/svg+xml;base64,%s)\n", alt, enc);
	free(enc);
}

/* The box plots per cell of metric, when any cell has it. */
static void cells_chart(struct tb_outbuf *b, const json_t *cells, const char *metric, const char *title)
{
	struct tb_outbuf svg = {0};

	if (rp_svg_cells(&svg, cells, metric, title) > 0)
		svg_image(b, &svg, title);
	b->nomem |= svg.nomem;
	tb_outbuf_free(&svg);
}

static void ab_part(struct tb_outbuf *b, const struct tb_report *r)
{
	static const char *const dcols[] = {"host", "OS", "what", "baseline", "this matrix", NULL};
	const json_t *c = r->compare, *row, *h, *d;
	const char *metric = rp_str(c, "metric");
	size_t i, j;

	tb_outbuf_printf(b,
			 "\n## A/B: against baseline #%lld\n\n%s: %lld cells compared, %zu dropped by more than "
			 "%g %% or failed, %zu with the interquartile ranges apart.\n",
			 (long long)json_integer_value(json_object_get(c, "baseline")),
			 json_is_true(json_object_get(c, "pass")) ? "Pass" : "**Fail**",
			 (long long)json_integer_value(json_object_get(c, "compared")),
			 json_array_size(json_object_get(c, "dropped")), rp_num(c, "max_drop_pct"),
			 json_array_size(json_object_get(c, "beyond_spread")));
	head(b, rp_ab_cols);
	json_array_foreach(json_object_get(c, "cells"), i, row)
	{
		char vals[RP_AB_NCOLS][RP_TEXT];

		rp_ab_row(row, metric, vals);
		row_of(b, (const char(*)[RP_TEXT])vals, RP_AB_NCOLS);
	}
	{
		struct tb_outbuf svg = {0};

		if (rp_svg_ab(&svg, c) > 0)
			svg_image(b, &svg, "A/B: the baseline (grey) and this matrix per cell");
		b->nomem |= svg.nomem;
		tb_outbuf_free(&svg);
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
	int any_loss = 0;

	tb_outbuf_puts(&b, "# ");
	text(&b, rp_str(r->matrix, "name"));
	tb_outbuf_printf(&b, "\n\nMatrix #%lld, %s.  Report generated %s by testbedd %s.\n\n## Summary\n",
			 (long long)json_integer_value(json_object_get(r->matrix, "id")), rp_str(r->matrix, "state"),
			 r->generated, r->version);
	summary(&b, r);
	tb_outbuf_puts(&b, "\n## Results\n\nPer cell, over the runs that ended ok: medians, interquartile range and "
			   "coefficient of variation of the receiver bitrate.\n");
	cells_table(&b, r, json_object_get(r->table, "cells"));
	tb_outbuf_puts(&b, "\n### Charts\n\nBox: interquartile range; thick line: median; whiskers: min to max; "
			   "dots: every run.\n");
	cells_chart(&b, json_object_get(r->table, "cells"), "receiver_bps", "Receiver bitrate per cell");
	json_array_foreach(json_object_get(r->table, "cells"), i, c)
		any_loss |= json_is_object(json_object_get(c, "lost_percent"));
	if (any_loss)
		cells_chart(&b, json_object_get(r->table, "cells"), "lost_percent", "Lost datagrams per cell (UDP)");
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
		commands_head(&b, r, c);
		fenced(&b, "sh", text);
		free(text);
	}
	if (r->commands_left > 0)
		tb_outbuf_printf(&b, "\n%d more cells' commands left out (see the API's runs).\n", r->commands_left);
	rp_md_flames(&b, r);
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
