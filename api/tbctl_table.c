/*
 * tbctl_table.c - aligned text tables; see tbctl_table.h.
 */
#include "tbctl_table.h"

#include <stdlib.h>
#include <string.h>

struct tbctl_table {
	size_t ncols;
	size_t nrows; /* including the header row */
	size_t cap;   /* rows allocated */
	char **cells; /* nrows * ncols, row-major */
};

/* Display width: one column per UTF-8 code point (continuation bytes skipped). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static char *copy(const char *s)
{
	size_t n;
	char *c;

	if (s == NULL || *s == '\0')
		s = "-";
	n = strlen(s) + 1;
	c = malloc(n);
	if (c != NULL)
		memcpy(c, s, n);
	return c;
}

struct tbctl_table *tbctl_table_new(size_t ncols, const char *const *header)
{
	struct tbctl_table *t = calloc(1, sizeof *t);

	if (t == NULL)
		return NULL;
	t->ncols = ncols;
	if (tbctl_table_add(t, header) != 0) {
		tbctl_table_free(t);
		return NULL;
	}
	return t;
}

int tbctl_table_add(struct tbctl_table *t, const char *const *cells)
{
	size_t i;

	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **nc = realloc(t->cells, cap * t->ncols * sizeof *nc);

		if (nc == NULL)
			return -1;
		t->cells = nc;
		t->cap = cap;
	}
	for (i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] = copy(cells[i]);
		if (t->cells[t->nrows * t->ncols + i] == NULL) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

void tbctl_print_safe(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		fputc(c < 0x20 || c == 0x7F ? '?' : c, out);
	}
}

int tbctl_table_print(const struct tbctl_table *t, FILE *out)
{
	size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
	size_t r, c;

	if (w == NULL)
		return -1;
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			size_t cw = width(t->cells[r * t->ncols + c]);

			if (cw > w[c])
				w[c] = cw;
		}
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];

			tbctl_print_safe(out, cell);
			if (c + 1 < t->ncols) {
				size_t pad = w[c] - width(cell) + 2;

				while (pad--)
					fputc(' ', out);
			}
		}
		fputc('\n', out);
	}
	free(w);
	return ferror(out) ? -1 : 0;
}

void tbctl_table_free(struct tbctl_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
