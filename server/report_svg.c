/* report_svg.c - the report's charts as static SVG: a horizontal box plot
 * per cell (report_internal.h).  Plain shapes and text only: no script, no
 * reference outside the element, so a CSP of default-src 'none' shows it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "report_internal.h"

#define W 800.0
#define LABEL_W 330.0 /* the labels' column */
#define X0 (LABEL_W + 10.0)
#define X1 (W - 24.0)
#define TOP 44.0
#define ROW 24.0
#define AXIS 34.0

/* A scale from 0 to a round number over max, its unit and divisor. */
struct scale {
	double max, step, div;
	const char *unit;
};

static void scale_for(const char *metric, double max, struct scale *s)
{
	double raw, mag, f;

	s->div = 1;
	s->unit = strcmp(metric, "lost_percent") == 0  ? "%"
		  : strcmp(metric, "jitter_ms") == 0   ? "ms"
		  : strcmp(metric, "retransmits") == 0 ? "retransmits"
						       : "bit/s";
	if (strcmp(s->unit, "bit/s") == 0) {
		if (max >= 1e9)
			s->div = 1e9, s->unit = "Gbit/s";
		else if (max >= 1e6)
			s->div = 1e6, s->unit = "Mbit/s";
		else if (max >= 1e3)
			s->div = 1e3, s->unit = "kbit/s";
	}
	max /= s->div;
	if (!(max > 0))
		max = 1;
	raw = max / 5;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	s->step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
	s->max = ceil(max / s->step - 1e-9) * s->step;
}

static double xof(const struct scale *s, double v)
{
	double x = X0 + (v / s->div) / s->max * (X1 - X0);

	return x < X0 ? X0 : x > X1 ? X1 : x;
}

/* The label, cut (at a character boundary) to fit its column. */
static void label(struct tb_outbuf *b, double y, const char *text, const char *color)
{
	char cut[64];
	size_t n = strlen(text);

	if (n >= 52) {
		n = 50;
		while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
			n--;
		snprintf(cut, sizeof(cut), "%.*s…", (int)n, text);
		text = cut;
	}
	tb_outbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">", LABEL_W, y + 4, color);
	rp_esc(b, text);
	tb_outbuf_puts(b, "</text>\n");
}

static void head(struct tb_outbuf *b, double h, const char *title, const char *id)
{
	tb_outbuf_printf(b,
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" "
			 "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-labelledby=\"%s\" "
			 "font-family=\"sans-serif\" font-size=\"11\">\n<title id=\"%s\">",
			 W, h, W, h, id, id);
	rp_esc(b, title);
	tb_outbuf_printf(b,
			 "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n"
			 "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">",
			 W, h);
	rp_esc(b, title);
	tb_outbuf_puts(b, "</text>\n");
}

/* Grid lines and tick labels, above and below the rows. */
static void axis(struct tb_outbuf *b, const struct scale *s, double bottom)
{
	for (double t = 0; t <= s->max + s->step / 2; t += s->step) {
		double x = X0 + t / s->max * (X1 - X0);

		tb_outbuf_printf(b,
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>"
				 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">%g</text>\n",
				 x, TOP - 6, x, bottom, x, bottom + 14, t);
	}
	tb_outbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">", X1, bottom + 28);
	rp_esc(b, s->unit);
	tb_outbuf_puts(b, "</text>\n");
}

/* A box from q1 to q3 with the median, centred on y, h high. */
static void box(struct tb_outbuf *b, const struct scale *s, double y, double h, double q1, double q3, double med,
		const char *fill)
{
	if (!isnan(q1) && !isnan(q3)) {
		double x = xof(s, q1), w = xof(s, q3) - x;

		tb_outbuf_printf(b,
				 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
				 "stroke=\"#1f4e79\"/>",
				 x, y - h / 2, w < 1 ? 1 : w, h, fill);
	}
	if (!isnan(med))
		tb_outbuf_printf(b,
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f4e79\" "
				 "stroke-width=\"2.5\"/>",
				 xof(s, med), y - h / 2 - 1, xof(s, med), y + h / 2 + 1);
}

/* The largest value a cell's Stats reaches (max, else q3, else median). */
static double top_of(const json_t *st)
{
	double m = rp_num(st, "max");

	if (isnan(m))
		m = rp_num(st, "q3");
	if (isnan(m))
		m = rp_num(st, "median");
	return m;
}

static void cell_row(struct tb_outbuf *b, const struct scale *s, double y, const json_t *c, const char *metric)
{
	const json_t *st = json_object_get(c, metric), *v;
	double lo = rp_num(st, "min"), hi = rp_num(st, "max");
	int noisy = json_is_true(json_object_get(st, "noisy"));
	char text[240];
	size_t i;

	rp_label(text, sizeof(text), c);
	label(b, y, text, noisy ? "#8a4b00" : "#111");
	if (!json_is_object(st)) {
		tb_outbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#777\">no result</text>\n", X0 + 4, y + 4);
		return;
	}
	if (!isnan(lo) && !isnan(hi))
		tb_outbuf_printf(b,
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>",
				 xof(s, lo), y, xof(s, hi), y, xof(s, lo), y - 4, xof(s, lo), y + 4, xof(s, hi), y - 4,
				 xof(s, hi), y + 4);
	box(b, s, y, 12, rp_num(st, "q1"), rp_num(st, "q3"), rp_num(st, "median"), noisy ? "#f3c27a" : "#9ec5e8");
	json_array_foreach(json_object_get(st, "values"), i, v) if (json_is_number(v))
		tb_outbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#000\" fill-opacity=\"0.55\"/>",
				 xof(s, json_number_value(v)), y);
	tb_outbuf_puts(b, "\n");
}

/* Whether a cell has a row in metric's chart: its Stats, or no ok run at
 * all ("no result"); a cell with results but not this metric (a TCP cell in
 * the loss chart) has none. */
static int charted(const json_t *c, const char *metric)
{
	return !json_is_null(c) &&
	       (json_is_object(json_object_get(c, metric)) || json_integer_value(json_object_get(c, "n")) == 0);
}

int rp_svg_cells(struct tb_outbuf *b, const json_t *cells, const char *metric, const char *title)
{
	const json_t *c;
	double max = 0, h, y;
	int rows = 0, any = 0, drawn = 0;
	struct scale s;
	char id[48];
	size_t i;

	json_array_foreach(cells, i, c)
	{
		double t = top_of(json_object_get(c, metric));

		if (!charted(c, metric))
			continue;
		rows++;
		any |= !isnan(t);
		if (!isnan(t) && t > max)
			max = t;
	}
	if (!any)
		return 0;
	if (rows > TB_REPORT_MAX_CHART_ROWS)
		rows = TB_REPORT_MAX_CHART_ROWS;
	scale_for(metric, max, &s);
	h = TOP + rows * ROW + AXIS;
	snprintf(id, sizeof(id), "chart-%s", metric);
	head(b, h, title, id);
	axis(b, &s, TOP + rows * ROW);
	y = TOP + ROW / 2;
	json_array_foreach(cells, i, c)
	{
		if (!charted(c, metric) || drawn >= rows)
			continue;
		cell_row(b, &s, y, c, metric);
		y += ROW;
		drawn++;
	}
	tb_outbuf_puts(b, "</svg>\n");
	return drawn;
}

int rp_svg_ab(struct tb_outbuf *b, const json_t *cmp)
{
	const json_t *rows = json_object_get(cmp, "cells"), *r;
	const char *metric = rp_str(cmp, "metric");
	double max = 0, h, y;
	int n = 0, drawn = 0;
	struct scale s;
	char title[160];
	size_t i;

	json_array_foreach(rows, i, r)
	{
		static const char *const keys[] = {"q3", "median", "baseline_q3", "baseline_median"};

		if (isnan(rp_num(r, "median")) && isnan(rp_num(r, "baseline_median")))
			continue;
		n++;
		for (int k = 0; k < 4; k++)
			if (rp_num(r, keys[k]) > max)
				max = rp_num(r, keys[k]);
	}
	if (n == 0)
		return 0;
	if (n > TB_REPORT_MAX_CHART_ROWS)
		n = TB_REPORT_MAX_CHART_ROWS;
	scale_for(metric, max, &s);
	h = TOP + n * ROW * 1.25 + AXIS + 16;
	snprintf(title, sizeof(title), "%s: baseline #%lld (grey) and #%lld (blue), median and IQR", metric,
		 (long long)json_integer_value(json_object_get(cmp, "baseline")),
		 (long long)json_integer_value(json_object_get(cmp, "matrix")));
	head(b, h, title, "chart-ab");
	axis(b, &s, TOP + n * ROW * 1.25);
	y = TOP + ROW * 0.625;
	json_array_foreach(rows, i, r)
	{
		char text[240];
		int bad = strcmp(rp_str(r, "verdict"), "dropped") == 0 || strcmp(rp_str(r, "verdict"), "failed") == 0;

		if ((isnan(rp_num(r, "median")) && isnan(rp_num(r, "baseline_median"))) || drawn >= n)
			continue;
		rp_label(text, sizeof(text), r);
		label(b, y, text, bad ? "#b00020" : "#111");
		box(b, &s, y - 5, 8, rp_num(r, "baseline_q1"), rp_num(r, "baseline_q3"), rp_num(r, "baseline_median"),
		    "#cfcfcf");
		box(b, &s, y + 5, 8, rp_num(r, "q1"), rp_num(r, "q3"), rp_num(r, "median"),
		    bad ? "#f2a0a8" : "#9ec5e8");
		tb_outbuf_puts(b, "\n");
		y += ROW * 1.25;
		drawn++;
	}
	tb_outbuf_puts(b, "</svg>\n");
	return drawn;
}
