/* report_flame.c - the flame graphs in the HTML report (issue 20 item 2):
 * of each cell's first run (the runs the commands table lists) that was
 * profiled, gathered from STATE/profiles (run_profile.h) with the report,
 * and drawn by the renderers: in HTML the first RP_FLAMES_DRAWN ends with
 * stacks as inline SVG (flame_svg.c, its XML declaration left out), in both
 * every profiled end as a line saying its samples or why it has none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "report.h"
#include "report_internal.h"
#include "run_profile.h"

#define RP_FLAMES_DRAWN 4 /* a flame graph is 50-300 kB of SVG: a few, not every cell's */

void rp_gather_flames(const char *state_dir, struct tb_report *r)
{
	const json_t *c;
	size_t i;

	if (state_dir == NULL || (r->flames = json_array()) == NULL)
		return;
	json_array_foreach(r->commands, i, c)
	{
		json_int_t run = json_integer_value(json_object_get(c, "run"));
		struct tb_error e = {0};
		json_t *doc = run > 0 ? run_profile_load(state_dir, run, &e) : NULL;

		if (doc != NULL)
			json_object_set_new(doc, "cell", json_integer(json_integer_value(json_object_get(c, "cell"))));
		if (doc != NULL && json_array_append_new(r->flames, doc) != 0)
			break;
	}
}

/* One end's flame graph, inline. */
static void draw(struct tb_outbuf *b, json_int_t run, const json_t *p)
{
	char title[300], *svg = NULL;
	const char *body;
	size_t len;

	snprintf(title, sizeof(title), "%s, the %s (%s -F %lld), run id %lld", rp_str(p, "host"), rp_str(p, "side"),
		 rp_str(p, "tool"), (long long)json_integer_value(json_object_get(p, "frequency")), (long long)run);
	if (tb_flame_svg(json_string_value(json_object_get(p, "folded")), title, &svg, &len) != 0)
		return;
	body = strstr(svg, "<svg ");
	tb_outbuf_puts(b, "<figure class=\"flame\">");
	tb_outbuf_puts(b, body != NULL ? body : "");
	tb_outbuf_puts(b, "<figcaption>");
	rp_esc(b, title);
	tb_outbuf_puts(b, "</figcaption></figure>\n");
	free(svg);
}

/* Markdown text: what a renderer reads as markup or HTML escaped, line
 * breaks as spaces (the reason came from a host). */
static void md_text(struct tb_outbuf *b, const char *s)
{
	for (const char *p = s; *p != '\0'; p++) {
		if (*p == '<')
			tb_outbuf_puts(b, "&lt;");
		else if (*p == '>')
			tb_outbuf_puts(b, "&gt;");
		else if (*p == '&')
			tb_outbuf_puts(b, "&amp;");
		else if (*p == '\n' || *p == '\r')
			tb_outbuf_puts(b, " ");
		else {
			if (strchr("\\`*_[]|#", *p) != NULL)
				tb_outbuf_puts(b, "\\");
			tb_outbuf_add(b, p, 1);
		}
	}
}

void rp_md_flames(struct tb_outbuf *b, const struct tb_report *r)
{
	const json_t *doc, *p;
	size_t i, k;

	if (json_array_size(r->flames) == 0)
		return;
	tb_outbuf_puts(b, "\n## Flame graphs\n\nEach cell's first run that was profiled (the spec's profile); the "
			  "flame graphs are in the HTML report and at GET /api/v1/runs/{id}/flamegraph.svg.\n\n");
	json_array_foreach(r->flames, i, doc)
	{
		json_array_foreach(json_object_get(doc, "profiles"), k, p)
		{
			tb_outbuf_printf(b, "- cell %lld, run id %lld: ",
					 (long long)json_integer_value(json_object_get(doc, "cell")),
					 (long long)json_integer_value(json_object_get(doc, "run")));
			md_text(b, rp_str(p, "host"));
			tb_outbuf_puts(b, " (");
			md_text(b, rp_str(p, "side"));
			tb_outbuf_puts(b, ", ");
			md_text(b, rp_str(p, "tool"));
			if (strcmp(rp_str(p, "state"), "ok") == 0) {
				tb_outbuf_printf(b, "): %lld samples\n",
						 (long long)json_integer_value(json_object_get(p, "samples")));
			} else {
				tb_outbuf_puts(b, "): no flame graph: ");
				md_text(b, rp_str(p, "reason"));
				tb_outbuf_puts(b, "\n");
			}
		}
	}
}

void rp_html_flames(struct tb_outbuf *b, const struct tb_report *r)
{
	const json_t *doc, *p;
	size_t i, k;
	int drawn = 0;

	if (json_array_size(r->flames) == 0)
		return;
	tb_outbuf_puts(
		b, "<h2>Flame graphs</h2>\n<p class=\"muted\">Where the CPU time went during each cell's first "
		   "run, system-wide on the profiled host (the spec's profile): each box a function, as wide as its "
		   "share of the samples, its callers below.</p>\n<ul>\n");
	json_array_foreach(r->flames, i, doc)
	{
		json_array_foreach(json_object_get(doc, "profiles"), k, p)
		{
			tb_outbuf_printf(b, "<li>cell %lld, run id %lld: ",
					 (long long)json_integer_value(json_object_get(doc, "cell")),
					 (long long)json_integer_value(json_object_get(doc, "run")));
			rp_esc(b, rp_str(p, "host"));
			tb_outbuf_puts(b, " (");
			rp_esc(b, rp_str(p, "side"));
			tb_outbuf_puts(b, ", ");
			rp_esc(b, rp_str(p, "tool"));
			if (strcmp(rp_str(p, "state"), "ok") == 0)
				tb_outbuf_printf(b, "): %lld samples</li>\n",
						 (long long)json_integer_value(json_object_get(p, "samples")));
			else {
				tb_outbuf_puts(b, "): no flame graph: ");
				rp_esc(b, rp_str(p, "reason"));
				tb_outbuf_puts(b, "</li>\n");
			}
		}
	}
	tb_outbuf_puts(b, "</ul>\n");
	json_array_foreach(r->flames, i, doc)
	{
		json_array_foreach(json_object_get(doc, "profiles"), k, p)
		{
			if (drawn < RP_FLAMES_DRAWN && json_integer_value(json_object_get(p, "samples")) > 0) {
				draw(b, json_integer_value(json_object_get(doc, "run")), p);
				drawn++;
			}
		}
	}
}
