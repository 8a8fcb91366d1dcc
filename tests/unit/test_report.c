/*
 * test_report.c - the report's renderers (report_html.c, report_md.c,
 * report_svg.c) on a fixed matrix: the HTML has every table and a chart
 * (an <svg>) per metric with data, no script anywhere even when the matrix's
 * name, a host's metadata and a command try to inject one, its own CSP in a
 * meta element; the A/B part adds its table, chart and the hosts diff; the
 * Markdown has the same tables and says where the charts are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "console.h"
#include "report.h"
#include "report_internal.h"

#define EVIL "<script>alert(1)</script>"

static json_t *stats(double med, double q1, double q3, double lo, double hi, int noisy)
{
	return json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:[f, f, f], s:b}", "n", 3, "mean", med,
			 "median", med, "stdev", 1.0, "min", lo, "max", hi, "q1", q1, "q3", q3, "cv",
			 noisy ? 0.2 : 0.01, "values", lo, med, hi, "noisy", noisy);
}

static json_t *cell(int n, const char *proto, double rx, int noisy)
{
	json_t *c = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:i}, s:i, s:i}", "cell", n, "client", "left",
			      "client_os", "linux", "server", "right", "server_os", "freebsd", "protocol", proto,
			      "direction", n % 2 ? "reverse" : "forward", "params", "parallel", 1, "n", 3, "runs", 3);

	json_object_set_new(c, "receiver_bps", stats(rx, rx * 0.98, rx * 1.02, rx * 0.95, rx * 1.05, noisy));
	json_object_set_new(c, "sender_bps", stats(rx * 1.01, rx, rx * 1.03, rx * 0.97, rx * 1.06, 0));
	if (strcmp(proto, "udp") == 0) {
		json_object_set_new(c, "lost_percent", stats(2.4, 1, 4, 0.5, 42, 1));
		json_object_set_new(c, "retransmits", json_null());
	} else {
		json_object_set_new(c, "lost_percent", json_null());
		json_object_set_new(c, "retransmits", stats(12, 10, 14, 8, 20, 0));
	}
	return c;
}

/* A report of three cells; with_ab adds a comparison and a hosts diff. */
static void make(struct tb_report *r, int with_ab)
{
	json_t *cells = json_pack("[o, o, o]", cell(0, "tcp", 12.9e9, 0), cell(1, "udp", 1.74e9, 1),
				  cell(2, "tcp", 15.7e9, 0));

	memset(r, 0, sizeof(*r));
	r->matrix = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:[s]}, s:{s:i, s:i, s:i, s:i}}", "id", 7, "name",
			      "ubuntu vs freebsd " EVIL, "state", "succeeded", "created_at", "2026-12-04T09:00:00Z",
			      "spec", "name", "ubuntu vs freebsd " EVIL, "protocols", "tcp", "progress", "total", 9,
			      "ok", 9, "failed", 0, "canceled", 0);
	r->table = json_pack("{s:i, s:[], s:o}", "matrix", 7, "runs", "cells", cells);
	r->hosts = json_pack("[{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s, s:i, s:{s:b, s:b}}, s:{s:s}}}]",
			     "host", "left", "os", "linux", "metadata", "kernel", "Linux", "release",
			     "6.8.0-134-generic", "os", "name", "Ubuntu 24.04 | x " EVIL, "nic", "interface", "enp1s0",
			     "driver", "mlx5_core", "firmware", "16.35.2000", "mtu", 9000, "offloads",
			     "tcp-segmentation-offload", 1, "rx-gro-hw", 0, "tcp", "congestion_control", "cubic");
	r->commands = json_pack("[{s:i, s:i, s:s, s:s}]", "cell", 0, "run", 1, "client_command",
				"iperf3 -c 198.18.0.2 -J '" EVIL "'", "server_command", "iperf3 -s -1");
	snprintf(r->generated, sizeof(r->generated), "2026-12-04T10:00:00Z");
	r->version = "test";
	if (with_ab) {
		json_t *base = json_pack("[o, o, o]", cell(0, "tcp", 13e9, 0), cell(1, "udp", 3.11e9, 0),
					 cell(2, "tcp", 15.5e9, 0));

		r->compare = json_pack("{s:i, s:i, s:s, s:f}", "matrix", 7, "baseline", 6, "metric", "receiver_bps",
				       "max_drop_pct", 5.0);
		assert_int_equal(tb_compare_cells(cells, base, "receiver_bps", 5.0, r->compare), 0);
		json_decref(base);
		r->diff = json_pack("{s:i, s:i, s:[{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}]}", "matrix", 7, "other", 6,
				    "hosts", "host", "left", "os", "linux", "in", "both", "differences", "path",
				    "tcp.congestion_control", "matrix", "cubic", "other", "bbr");
	}
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* How often a text occurs in a rendered report. */
struct occurs {
	const char *text;
	size_t n;
};

/* doc has every text of has (NULL-terminated), none of lacks, and each of
 * occ (ended by a NULL text) as often as said; a failure names the text. */
static void check(const char *doc, const char *const has[], const char *const lacks[], const struct occurs occ[])
{
	for (size_t i = 0; has[i] != NULL; i++)
		if (strstr(doc, has[i]) == NULL)
			fail_msg("missing: %s", has[i]);
	for (size_t i = 0; lacks[i] != NULL; i++)
		if (strstr(doc, lacks[i]) != NULL)
			fail_msg("present: %s", lacks[i]);
	for (size_t i = 0; occ[i].text != NULL; i++)
		if (count(doc, occ[i].text) != occ[i].n)
			fail_msg("%s: %zu times, want %zu", occ[i].text, count(doc, occ[i].text), occ[i].n);
}

static void test_html(void **state)
{
	static const char *const has[] = {"&lt;script&gt;alert(1)&lt;/script&gt;",
					  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';",
					  /* every table */
					  "id=\"summary\"", "id=\"cells\"", "id=\"hosts\"", "id=\"commands\"",
					  "<svg xmlns=\"http://www.w3.org/2000/svg\"",
					  /* the noisy cell is said so, the numbers are there */
					  "noisy", "12.90 Gbit/s", "mlx5_core", "iperf3 -s -1", "&quot;protocols&quot;",
					  NULL};
	static const char *const lacks[] = {"<script", "<SCRIPT",
					    /* nothing is fetched: no src, href or url() */
					    " src=", "href=", "url(", NULL};
	static const struct occurs occ[] = {
		{"<table", 4},
		{"</table>", 4},
		/* receiver bitrate and loss (a UDP cell has it): two charts, closed */
		{"<svg", 2},
		{"</svg>", 2},
		/* every value a dot: three per cell in the bitrate chart, three in the loss chart */
		{"<circle", 3 * 3 + 3},
		{NULL, 0}};
	struct tb_report r;
	char *html = NULL;
	size_t len = 0;

	(void)state;
	make(&r, 0);
	assert_int_equal(tb_report_html(&r, &html, &len), 0);
	assert_int_equal(strlen(html), len);
	assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	check(html, has, lacks, occ);
	free(html);
	tb_report_free(&r);
}

static void test_html_ab(void **state)
{
	static const char *const has[] = {"id=\"ab\"", "id=\"hosts-diff\"", "A/B: against baseline #6",
					  "id=\"chart-ab\"",
					  /* the UDP cell fell from 3.11 to 1.74 Gbit/s: dropped, beyond the spread */
					  "-44.05 %", "no: beyond the spread", "tcp.congestion_control", NULL};
	static const char *const lacks[] = {"<script", NULL};
	static const struct occurs occ[] = {{"<table", 6}, {"<svg", 3}, {NULL, 0}};
	struct tb_report r;
	char *html = NULL;
	size_t len = 0;

	(void)state;
	make(&r, 1);
	assert_int_equal(tb_report_html(&r, &html, &len), 0);
	check(html, has, lacks, occ);
	free(html);
	tb_report_free(&r);
}

static void test_md(void **state)
{
	static const char *const has[] = {
		"\n| cell | client → server | protocol |", "\n| cell | what | baseline (median) |",
		"\n| host | OS | kernel |", "\n| host | OS | what | baseline | this matrix |",
		/* the charts as images inline: base64 of "<svg xmlns" */
		"\n### Charts\n", "\n![Receiver bitrate per cell](data:image/svg+xml;base64,PHN2ZyB4bWxucz",
		"\n![A/B: the baseline (grey) and this matrix per cell](data:image/svg+xml;base64,PHN2ZyB4bWxucz",
		"| 12.90 Gbit/s |", "```sh\n# server\niperf3 -s -1\n", "```json\n{",
		/* a '|' in a value does not break its table */
		"| Ubuntu 24.04 \\| x &lt;script&gt;", "# ubuntu vs freebsd &lt;script&gt;",
		"| tcp | forward | parallel=1 | 3 of 3 | 12.90 Gbit/s |", NULL};
	static const char *const lacks[] = {"<svg", NULL};
	/* no HTML a renderer would pass through: the two left are in the fenced
	 * command and spec, which a renderer shows as code */
	static const struct occurs occ[] = {{"<script", 2}, {NULL, 0}};
	struct tb_report r;
	char *md = NULL;
	size_t len = 0;

	(void)state;
	make(&r, 1);
	assert_int_equal(tb_report_md(&r, &md, &len), 0);
	assert_int_equal(strlen(md), len);
	assert_true(strncmp(md, "# ubuntu vs freebsd", 19) == 0);
	check(md, has, lacks, occ);
	{
		/* the first image decodes to the HTML report's first chart */
		const char *p = strstr(md, "base64,") + 7;
		char *b64 = strndup(p, strcspn(p, ")"));
		unsigned char *svg = malloc(strlen(b64));
		long n;

		assert_non_null(svg);
		n = tb_b64_decode(b64, svg);
		assert_true(n > 0);
		svg[n] = '\0';
		assert_non_null(strstr((char *)svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
		assert_non_null(strstr((char *)svg, "Receiver bitrate per cell"));
		assert_non_null(strstr((char *)svg, "</svg>"));
		free(svg);
		free(b64);
	}
	free(md);
	tb_report_free(&r);
}

/* The HTML and the Markdown show each row of the cells and A/B tables with
 * the same texts (one source: rp_cell_row, rp_ab_row). */
static void test_same_rows(void **state)
{
	struct tb_report r;
	char *html, *md, vals[RP_CELL_NCOLS][RP_TEXT], ab[RP_AB_NCOLS][RP_TEXT];
	size_t hl, ml, i;
	json_t *c;

	(void)state;
	make(&r, 1);
	assert_int_equal(tb_report_html(&r, &html, &hl), 0);
	assert_int_equal(tb_report_md(&r, &md, &ml), 0);
	json_array_foreach(json_object_get(r.table, "cells"), i, c)
	{
		rp_cell_row(c, "", vals);
		for (int k = 1; k < RP_CELL_NCOLS; k++) {
			if (strstr(html, vals[k]) == NULL || strstr(md, vals[k]) == NULL)
				fail_msg("cell %zu column %s: \"%s\" not in both", i, rp_cell_cols[k], vals[k]);
		}
	}
	json_array_foreach(json_object_get(r.compare, "cells"), i, c)
	{
		rp_ab_row(c, "receiver_bps", ab);
		for (int k = 1; k < RP_AB_NCOLS; k++)
			if (strstr(html, ab[k]) == NULL || strstr(md, ab[k]) == NULL)
				fail_msg("A/B row %zu column %s: \"%s\" not in both", i, rp_ab_cols[k], ab[k]);
	}
	free(html);
	free(md);
	tb_report_free(&r);
}

/* With a public URL each cell and run links to its page (escaped: the base
 * holds an '&', a Markdown link a ')'); without it the report has no link. */
static void test_links(void **state)
{
	static const char *const html_has[] = {
		"<td class=\"num\"><a href=\"https://tb.example/a&amp;b)/#/matrices/7?cell=0\">0</a></td>",
		"<a href=\"https://tb.example/a&amp;b)/#/matrices/7?cell=2\">2</a>",
		"<td class=\"num\"><a href=\"https://tb.example/a&amp;b)/#/runs/1\">1</a></td>", NULL};
	static const char *const md_has[] = {"| [0](https://tb.example/a&b%29/#/matrices/7?cell=0) |",
					     "Cell [0](https://tb.example/a&b%29/#/matrices/7?cell=0) "
					     "(run [1](https://tb.example/a&b%29/#/runs/1)):",
					     NULL};
	/* no link without a base (the charts' data: images are no link) */
	static const char *const none[] = {"<a ", "](http", "](#", "](/", "](.", "#/matrices", "#/runs", NULL};
	static const char *const lacks[] = {"<script", NULL};
	static const struct occurs occ[] = {{NULL, 0}};
	struct tb_report r;
	char *html = NULL, *md = NULL;
	size_t len = 0;

	(void)state;
	make(&r, 0);
	r.link_base = "https://tb.example/a&b)";
	assert_int_equal(tb_report_html(&r, &html, &len), 0);
	assert_int_equal(tb_report_md(&r, &md, &len), 0);
	check(html, html_has, lacks, occ);
	check(md, md_has, lacks + 1, occ);
	free(html);
	free(md);
	r.link_base = NULL;
	assert_int_equal(tb_report_html(&r, &html, &len), 0);
	assert_int_equal(tb_report_md(&r, &md, &len), 0);
	check(html, lacks + 1, none, occ);
	check(md, lacks + 1, none, occ);
	free(html);
	free(md);
	tb_report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html),      cmocka_unit_test(test_html_ab), cmocka_unit_test(test_md),
		cmocka_unit_test(test_same_rows), cmocka_unit_test(test_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
