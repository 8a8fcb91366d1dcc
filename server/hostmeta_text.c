/* hostmeta_text.c - spans of a text and JSON built from them, for the
 * host-metadata parsers (hostmeta_internal.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostmeta_internal.h"

int hm_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* s without blanks at both ends (and newlines too when nl). */
struct span hm_trim(struct span s, int nl)
{
	while (s.n > 0 && (hm_is_blank(s.p[0]) || (nl && s.p[0] == '\n'))) {
		s.p++;
		s.n--;
	}
	while (s.n > 0 && (hm_is_blank(s.p[s.n - 1]) || (nl && s.p[s.n - 1] == '\n')))
		s.n--;
	return s;
}

struct span hm_span_of(const char *s)
{
	return (struct span){s, strlen(s)};
}

struct span hm_upto(const char *p, const char *end)
{
	return (struct span){p, (size_t)(end - p)};
}

int hm_starts(struct span s, const char *lit)
{
	return s.n >= strlen(lit) && memcmp(s.p, lit, strlen(lit)) == 0;
}

int hm_equals(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* The next line at *pos, without its '\n'; 0 at the end of the text. */
int hm_next_line(const char **pos, struct span *line)
{
	size_t n = strcspn(*pos, "\n");

	if (**pos == '\0')
		return 0;
	*line = (struct span){*pos, n};
	*pos += n + ((*pos)[n] == '\n');
	return 1;
}

/* The next blank-separated word of *s, consumed; 0 when none is left. */
int hm_next_word(struct span *s, struct span *w)
{
	*s = hm_trim(*s, 0);
	w->p = s->p;
	while (s->n > 0 && !hm_is_blank(s->p[0])) {
		s->p++;
		s->n--;
	}
	w->n = (size_t)(s->p - w->p);
	return w->n > 0;
}

/* s (blanks around allowed) as a non-negative decimal. */
int hm_to_int(struct span s, json_int_t *out)
{
	s = hm_trim(s, 0);
	*out = 0;
	if (s.n == 0 || s.n > 18)
		return 0;
	for (size_t i = 0; i < s.n; i++) {
		if (!isdigit((unsigned char)s.p[i]))
			return 0;
		*out = *out * 10 + (s.p[i] - '0');
	}
	return 1;
}

/* A malloc'd NUL-terminated copy of s; bytes >= 0x80 become '?' when ascii. */
char *hm_dup_span(struct span s, int ascii)
{
	char *c = malloc(s.n + 1);

	for (size_t i = 0; c != NULL && i < s.n; i++)
		c[i] = ascii && (unsigned char)s.p[i] >= 0x80 ? '?' : s.p[i];
	if (c != NULL)
		c[s.n] = '\0';
	return c;
}

/* j, with a NULL j (a failed allocation) noted in *oom. */
json_t *hm_chk(json_t *j, int *oom)
{
	if (j == NULL)
		*oom = 1;
	return j;
}

json_t *hm_jstr(struct span s, int *oom)
{
	json_t *j = json_stringn(s.p, s.n);
	char *c;

	if (j == NULL && (c = hm_dup_span(s, 1)) != NULL) { /* not UTF-8 */
		j = json_stringn(c, s.n);
		free(c);
	}
	return hm_chk(j, oom);
}

/* A number when s is one, else a string. */
json_t *hm_jscalar(struct span s, int *oom)
{
	json_int_t v;

	return hm_to_int(s, &v) ? hm_chk(json_integer(v), oom) : hm_jstr(s, oom);
}

/* obj[key] = v, v stolen; a NULL obj or v counts as out of memory. */
void hm_put(json_t *obj, const char *key, json_t *v, int *oom)
{
	if (json_object_set_new(obj, key, v) != 0)
		*oom = 1;
}

void hm_putn(json_t *obj, struct span key, json_t *v, int *oom)
{
	char *k = hm_dup_span(key, 1);

	if (k == NULL) {
		json_decref(v);
		*oom = 1;
		return;
	}
	hm_put(obj, k, v, oom);
	free(k);
}

void hm_put_str(json_t *obj, const char *key, struct span s, int *oom)
{
	hm_put(obj, key, hm_jstr(s, oom), oom);
}

void hm_append(json_t *arr, json_t *v, int *oom)
{
	if (json_array_append_new(arr, v) != 0)
		*oom = 1;
}

/* o when it has members; else (or out of memory) NULL. */
json_t *hm_nonempty(json_t *o, int *oom)
{
	if (*oom || json_object_size(o) + json_array_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The "<A,B,C>" in word w as ["A","B","C"]; NULL when w has no '<'. */
json_t *hm_angle_list(struct span w, int *oom)
{
	const char *p = memchr(w.p, '<', w.n), *end = w.p + w.n;
	json_t *a = p != NULL ? hm_chk(json_array(), oom) : NULL;

	/* a word ends at a blank, a newline or the NUL, where strcspn stops */
	while (a != NULL && p < end && *p != '>') {
		size_t n = strcspn(++p, ",> \t\r\n");

		if (n > 0)
			hm_append(a, hm_jstr((struct span){p, n}, oom), oom);
		p += n;
	}
	return a;
}

/* "key value key value ..." into obj, numbers as integers. */
void hm_put_pairs(json_t *obj, struct span s, int *oom)
{
	struct span k, v;

	while (hm_next_word(&s, &k) && hm_next_word(&s, &v))
		hm_putn(obj, k, hm_jscalar(v, oom), oom);
}

/* A section parser's result, NULL when it ran out of memory. */
json_t *hm_run(json_t *(*parse)(const char *, int *), const char *text)
{
	int oom = 0;
	json_t *j = text != NULL ? parse(text, &oom) : NULL;

	if (oom) {
		json_decref(j);
		return NULL;
	}
	return j;
}
