/* flame_svg.c - a flame graph SVG from folded stacks.  See flame.h. */
#include "flame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

#define TITLE_H 36       /* the title's band at the top */
#define CHAR_W 7.2       /* a character of the 12 px monospace font */
#define MIN_WIDTH_PX 0.1 /* narrower frames are left out */

struct node {
	const char *name; /* into the tree's copy of the folded text */
	long count;       /* samples of this frame and everything above it */
	struct node *child, *last, *next;
};

struct tree {
	char *text; /* the folded text, cut into names */
	struct node root;
	int depth; /* frames of the deepest stack */
	int nomem;
};

static struct node *child_of(struct tree *t, struct node *n, const char *name)
{
	struct node *c;

	if (n->last != NULL && strcmp(n->last->name, name) == 0)
		return n->last; /* sorted input: the usual case */
	for (c = n->child; c != NULL; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		t->nomem = 1;
		return NULL;
	}
	c->name = name;
	if (n->last != NULL)
		n->last->next = c;
	else
		n->child = c;
	n->last = c;
	return c;
}

/* One "a;b;c N" line (cut in place) into the tree; a line without a
 * positive count is skipped. */
static void add_line(struct tree *t, char *line)
{
	char *sp = strrchr(line, ' '), *end, *frame, *save = NULL;
	struct node *n = &t->root;
	long count;
	int d = 0;

	if (sp == NULL || sp == line)
		return;
	count = strtol(sp + 1, &end, 10);
	if (count <= 0 || *end != '\0')
		return;
	*sp = '\0';
	t->root.count += count;
	for (frame = strtok_r(line, ";", &save); frame != NULL && n != NULL; frame = strtok_r(NULL, ";", &save)) {
		if ((n = child_of(t, n, frame)) == NULL)
			return;
		n->count += count;
		d++;
	}
	if (d > t->depth)
		t->depth = d;
}

static void free_nodes(struct node *n)
{
	while (n != NULL) {
		struct node *next = n->next;

		free_nodes(n->child);
		free(n);
		n = next;
	}
}

/* s as XML text: the five special characters escaped, bytes outside
 * printable ASCII as '?' (always well-formed, whatever a symbol held);
 * at most max characters, ".." ending a cut one. */
static void put_escaped(struct tb_outbuf *b, const char *s, size_t max)
{
	size_t len = strlen(s), n = len > max ? (max >= 2 ? max - 2 : 0) : len;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '&': tb_outbuf_puts(b, "&amp;"); break;
		case '<': tb_outbuf_puts(b, "&lt;"); break;
		case '>': tb_outbuf_puts(b, "&gt;"); break;
		case '"': tb_outbuf_puts(b, "&quot;"); break;
		case '\'': tb_outbuf_puts(b, "&apos;"); break;
		default: tb_outbuf_add(b, c < 0x20 || c >= 0x7f ? "?" : (const char *)&s[i], 1);
		}
	}
	if (n < len)
		tb_outbuf_puts(b, "..");
}

/* A warm colour from the name (the same name, the same colour). */
static void colour(const char *name, unsigned int rgb[3])
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
		h = (h ^ *p) * 16777619u;
	rgb[0] = 205 + h % 51;
	rgb[1] = (h >> 8) % 231;
	rgb[2] = (h >> 16) % 56;
}

struct draw {
	struct tb_outbuf *b;
	double scale; /* px per sample */
	long total;
	int height;
};

/* Node n at depth d (0: the root, at the bottom) from x, then its children. */
static void draw(const struct draw *dr, const struct node *n, int d, double x)
{
	double w = (double)n->count * dr->scale;
	double y = dr->height - TB_FLAME_PAD - (d + 1) * TB_FLAME_FRAME_H;
	unsigned int rgb[3];
	size_t fit;

	if (w < MIN_WIDTH_PX)
		return;
	colour(n->name, rgb);
	tb_outbuf_puts(dr->b, "<g><title>");
	put_escaped(dr->b, n->name, TB_FLAME_FRAME_MAX);
	tb_outbuf_printf(dr->b,
			 " (%ld samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			 "fill=\"rgb(%u,%u,%u)\" rx=\"2\" data-samples=\"%ld\"/>",
			 n->count, 100.0 * (double)n->count / (double)dr->total, x, y, w, TB_FLAME_FRAME_H - 1, rgb[0],
			 rgb[1], rgb[2], n->count);
	fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= 3) {
		tb_outbuf_printf(dr->b, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
		put_escaped(dr->b, n->name, fit);
		tb_outbuf_puts(dr->b, "</text>");
	}
	tb_outbuf_puts(dr->b, "</g>\n");
	for (const struct node *c = n->child; c != NULL; c = c->next) {
		draw(dr, c, d + 1, x);
		x += (double)c->count * dr->scale;
	}
}

int tb_flame_svg(const char *folded, const char *title, char **out, size_t *len)
{
	struct tree t = {0};
	struct tb_outbuf b = {0};
	struct draw dr;
	char *line, *save = NULL;
	int rc = -1;

	*out = NULL;
	*len = 0;
	if ((t.text = strdup(folded != NULL ? folded : "")) == NULL)
		return -1;
	t.root.name = "all";
	for (line = strtok_r(t.text, "\n", &save); line != NULL && !t.nomem; line = strtok_r(NULL, "\n", &save))
		add_line(&t, line);
	if (t.nomem)
		goto out;
	dr.b = &b;
	dr.total = t.root.count;
	dr.scale = t.root.count > 0 ? (double)(TB_FLAME_WIDTH - 2 * TB_FLAME_PAD) / (double)t.root.count : 0;
	dr.height = TITLE_H + (t.depth + 1) * TB_FLAME_FRAME_H + 2 * TB_FLAME_PAD;
	tb_outbuf_printf(&b,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
			 "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"12\" class=\"flamegraph\">\n"
			 "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fdfcf7\"/>\n"
			 "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" class=\"title\">",
			 TB_FLAME_WIDTH, dr.height, TB_FLAME_WIDTH, dr.height, TB_FLAME_WIDTH / 2);
	put_escaped(&b, title != NULL ? title : "Flame graph", 300);
	tb_outbuf_printf(&b, "</text>\n<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">%ld samples</text>\n",
			 TB_FLAME_PAD, TITLE_H - 4, t.root.count);
	if (t.root.count > 0)
		draw(&dr, &t.root, 0, TB_FLAME_PAD);
	tb_outbuf_puts(&b, "</svg>\n");
	if (b.nomem)
		goto out;
	*len = b.len;
	*out = tb_outbuf_take(&b);
	rc = *out != NULL ? 0 : -1;
out:
	tb_outbuf_free(&b);
	free_nodes(t.root.child);
	free(t.text);
	return rc;
}
