/* flame_fold.c - profiler stacks folded into "a;b;c N" lines.  See flame.h. */
#include "flame.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

#define COMPACT_AT 65536 /* stacks kept before duplicates are merged */
#define LINE_MAX_BYTES 4096

struct entry {
	char *stack;
	long count;
};

struct tb_flame_folder {
	enum tb_flame_fmt fmt;
	struct tb_outbuf line;            /* the line being read (a piece may end mid-line) */
	char *frames[TB_FLAME_DEPTH_MAX]; /* the current stack, leaf first */
	int nframes;
	char comm[TB_FLAME_FRAME_MAX]; /* perf: the sample's command */
	bool in_sample;                /* perf: a header was read, its stack not yet added */
	struct entry *v;
	size_t n, cap;
	bool nomem;
};

struct tb_flame_folder *tb_flame_folder_new(enum tb_flame_fmt fmt)
{
	struct tb_flame_folder *f = calloc(1, sizeof(*f));

	if (f != NULL) {
		f->fmt = fmt;
		f->line.max = LINE_MAX_BYTES;
	}
	return f;
}

static void drop_frames(struct tb_flame_folder *f)
{
	for (int i = 0; i < f->nframes; i++)
		free(f->frames[i]);
	f->nframes = 0;
}

void tb_flame_folder_free(struct tb_flame_folder *f)
{
	if (f == NULL)
		return;
	drop_frames(f);
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].stack);
	free(f->v);
	tb_outbuf_free(&f->line);
	free(f);
}

/* A frame's name from s (len bytes), as flame.h says: offset dropped, ';'
 * and control characters replaced, at most TB_FLAME_FRAME_MAX - 1 bytes. */
static void clean_name(const char *s, size_t len, char *out, size_t cap)
{
	size_t n = 0;
	const char *plus;

	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	/* "+0x1a2" at the end: the offset within the function */
	for (plus = s + len; plus > s && plus[-1] != '+'; plus--)
		;
	if (plus > s && plus + 1 < s + len && plus[0] == '0' && plus[1] == 'x' && plus - 1 > s)
		len = (size_t)(plus - 1 - s);
	for (size_t i = 0; i < len && n + 1 < cap; i++) {
		char c = s[i];

		out[n++] = c == ';' ? ':' : (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, cap, "[unknown]");
}

static void push_frame(struct tb_flame_folder *f, const char *name)
{
	if (f->nframes >= TB_FLAME_DEPTH_MAX) {
		/* the deepest frames go: keep the root side, drop the oldest leaf */
		free(f->frames[0]);
		memmove(f->frames, f->frames + 1, (TB_FLAME_DEPTH_MAX - 1) * sizeof(f->frames[0]));
		f->nframes--;
	}
	if ((f->frames[f->nframes] = strdup(name)) == NULL) {
		f->nomem = true;
		return;
	}
	f->nframes++;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->stack, ((const struct entry *)b)->stack);
}

/* Sort the stacks and merge equal ones (their counts added). */
static void compact(struct tb_flame_folder *f)
{
	size_t w = 0;

	if (f->n == 0)
		return;
	qsort(f->v, f->n, sizeof(f->v[0]), cmp_entry);
	for (size_t i = 1; i < f->n; i++) {
		if (strcmp(f->v[w].stack, f->v[i].stack) == 0) {
			f->v[w].count += f->v[i].count;
			free(f->v[i].stack);
		} else {
			f->v[++w] = f->v[i];
		}
	}
	f->n = w + 1;
}

/* The current stack (root first: root, then the frames from the last read
 * to the first) added count times; the frames are dropped. */
static void add_stack(struct tb_flame_folder *f, const char *root, long count)
{
	struct tb_outbuf b = {0};

	if (root != NULL)
		tb_outbuf_puts(&b, root);
	for (int i = f->nframes - 1; i >= 0; i--) {
		if (b.len > 0)
			tb_outbuf_puts(&b, ";");
		tb_outbuf_puts(&b, f->frames[i]);
	}
	drop_frames(f);
	if (b.len == 0 || b.nomem || count <= 0) {
		f->nomem |= b.nomem;
		tb_outbuf_free(&b);
		return;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct entry *v = realloc(f->v, cap * sizeof(*v));

		if (v == NULL) {
			f->nomem = true;
			tb_outbuf_free(&b);
			return;
		}
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n].stack = tb_outbuf_take(&b);
	f->v[f->n].count = count;
	if (f->v[f->n].stack == NULL) {
		f->nomem = true;
		return;
	}
	if (++f->n >= COMPACT_AT)
		compact(f);
}

/* perf: "comm  tid [cpu] time: ..." -> comm (which may hold spaces):
 * what stands before the tid that precedes " [". */
static void perf_comm(const char *s, char *out, size_t cap)
{
	const char *br = strstr(s, " [");
	const char *end = br != NULL ? br : s + strcspn(s, " \t");

	if (br != NULL) {
		while (end > s && end[-1] == ' ')
			end--;
		while (end > s && end[-1] != ' ' && end[-1] != '\t')
			end--; /* the tid ("123" or "123/456") */
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end == s) /* no room for a name: the first word */
			end = s + strcspn(s, " \t");
	}
	clean_name(s, (size_t)(end - s), out, cap);
}

/* perf: "ADDR symbol+0xOFF (dso)" -> symbol, or "[dso's file name]" when
 * perf did not know the symbol. */
static void perf_frame(struct tb_flame_folder *f, const char *s)
{
	char name[TB_FLAME_FRAME_MAX];
	const char *sym = s + strcspn(s, " \t"), *dso = NULL, *end;
	size_t len;

	sym += strspn(sym, " \t");
	len = strlen(sym);
	while (len > 0 && (sym[len - 1] == ' ' || sym[len - 1] == '\r'))
		len--;
	end = sym + len;
	if (len > 0 && sym[len - 1] == ')')
		for (const char *p = end - 1; p > sym; p--)
			if (p[0] == '(' && p[-1] == ' ') {
				dso = p + 1;
				end = p - 1;
				break;
			}
	clean_name(sym, (size_t)(end - sym), name, sizeof(name));
	if (strcmp(name, "[unknown]") == 0 && dso != NULL) {
		const char *close = strrchr(dso, ')'), *base = dso;

		for (const char *p = dso; p < close; p++)
			if (*p == '/')
				base = p + 1;
		if (close != NULL && close > base && strncmp(base, "unknown]", 8) != 0 && *base != '[')
			snprintf(name, sizeof(name), "[%.*s]", (int)(close - base), base);
	}
	push_frame(f, name);
}

static void perf_line(struct tb_flame_folder *f, const char *s)
{
	if (s[0] == '\0' || strcmp(s, "\r") == 0) {
		if (f->in_sample)
			add_stack(f, f->comm, 1);
		f->in_sample = false;
	} else if (s[0] == '#') {
		return;
	} else if (s[0] == ' ' || s[0] == '\t') {
		if (f->in_sample)
			perf_frame(f, s + strspn(s, " \t"));
	} else {
		if (f->in_sample) /* no blank line after the last one */
			add_stack(f, f->comm, 1);
		drop_frames(f);
		perf_comm(s, f->comm, sizeof(f->comm));
		f->in_sample = true;
	}
}

static void dtrace_line(struct tb_flame_folder *f, const char *s)
{
	const char *t = s + strspn(s, " \t");
	size_t len = strlen(t), digits = strspn(t, "0123456789");

	while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '\r'))
		len--;
	if (len == 0) {
		drop_frames(f); /* between stacks */
	} else if (digits == len) {
		if (f->nframes > 0 && len < 19)
			add_stack(f, NULL, strtol(t, NULL, 10));
		drop_frames(f);
	} else if (t != s && (memchr(t, '`', len) != NULL || strncmp(t, "0x", 2) == 0)) {
		char name[TB_FLAME_FRAME_MAX];

		clean_name(t, len, name, sizeof(name));
		push_frame(f, name);
	} else {
		drop_frames(f); /* a header ("CPU ID FUNCTION:NAME") or a message */
	}
}

static void one_line(struct tb_flame_folder *f, const char *s)
{
	if (f->fmt == TB_FLAME_PERF)
		perf_line(f, s);
	else
		dtrace_line(f, s);
}

int tb_flame_feed(struct tb_flame_folder *f, const char *data, size_t len)
{
	while (len > 0 && !f->nomem) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - data) : len;

		tb_outbuf_add(&f->line, data, n);
		if (nl == NULL)
			break;
		/* a line past LINE_MAX_BYTES is read cut (a frame name is cut anyway) */
		one_line(f, tb_outbuf_str(&f->line));
		tb_outbuf_clear(&f->line);
		f->line.truncated = false;
		data += n + 1;
		len -= n + 1;
	}
	f->nomem |= f->line.nomem;
	return f->nomem ? -1 : 0;
}

char *tb_flame_finish(struct tb_flame_folder *f, long *samples)
{
	struct tb_outbuf out = {0};
	long total = 0;

	if (f->line.len > 0) {
		one_line(f, tb_outbuf_str(&f->line));
		tb_outbuf_clear(&f->line);
	}
	one_line(f, ""); /* the last stack without a blank line after it */
	if (f->nomem)
		return NULL;
	compact(f);
	for (size_t i = 0; i < f->n; i++) {
		tb_outbuf_printf(&out, "%s %ld\n", f->v[i].stack, f->v[i].count);
		total += f->v[i].count;
	}
	if (out.nomem) {
		tb_outbuf_free(&out);
		return NULL;
	}
	if (samples != NULL)
		*samples = total;
	return out.len > 0 ? tb_outbuf_take(&out) : strdup("");
}

char *tb_flame_fold(enum tb_flame_fmt fmt, const char *text, size_t len, long *samples)
{
	struct tb_flame_folder *f = tb_flame_folder_new(fmt);
	char *out = NULL;

	if (f != NULL && tb_flame_feed(f, text, len) == 0)
		out = tb_flame_finish(f, samples);
	tb_flame_folder_free(f);
	return out;
}
