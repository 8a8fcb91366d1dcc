/* grubcfg.c - the boot menu of a grub.cfg: see grubcfg.h. */
#include "grubcfg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The quoted or bare word at *p, unquoted into out; advances *p. */
static int word(const char **p, char *out, size_t len)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '{')
		return -1;
	while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '{') {
		if (*s == '\'' || *s == '"') {
			char q = *s++;

			while (*s != '\0' && *s != q) {
				if (q == '"' && *s == '\\' && s[1] != '\0')
					s++;
				if (n + 1 < len)
					out[n++] = *s;
				s++;
			}
			if (*s == q)
				s++;
		} else {
			if (*s == '\\' && s[1] != '\0')
				s++;
			if (n + 1 < len)
				out[n++] = *s;
			s++;
		}
	}
	out[n] = '\0';
	*p = s;
	return 0;
}

json_t *tb_grubcfg_entries(const char *text)
{
	json_t *list = json_array();
	int depth = 0, index[8] = {0}, in_sub[8] = {0};
	char parent[8][32] = {{0}};
	const char *line = text;

	while (list != NULL && line != NULL && *line != '\0') {
		const char *eol = strchr(line, '\n'), *p = line;
		char buf[1024], title[256] = "", id[256] = "", w[256];
		size_t n = eol != NULL ? (size_t)(eol - line) : strlen(line);
		int is_sub;

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), line);
		line = eol != NULL ? eol + 1 : NULL;
		p = buf;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '}') {
			if (depth > 0)
				depth--;
			continue;
		}
		is_sub = strncmp(p, "submenu", 7) == 0 && isspace((unsigned char)p[7]);
		if (!is_sub && !(strncmp(p, "menuentry", 9) == 0 && isspace((unsigned char)p[9]))) {
			/* other blocks (if, function) also nest */
			size_t l = strlen(p);

			while (l > 0 && isspace((unsigned char)p[l - 1]))
				l--;
			if (l > 0 && p[l - 1] == '{' && depth < 7) {
				in_sub[depth + 1] = 0;
				depth++;
			}
			continue;
		}
		p += is_sub ? 7 : 9;
		if (word(&p, title, sizeof(title)) != 0)
			continue;
		while (word(&p, w, sizeof(w)) == 0) {
			if ((strcmp(w, "--id") == 0 || strcmp(w, "$menuentry_id_option") == 0) &&
			    word(&p, id, sizeof(id)) == 0)
				break;
		}
		/* only entries at the top level or directly in a submenu count */
		if (depth == 0 || (depth == 1 && in_sub[1])) {
			char path[64];

			if (depth == 0)
				snprintf(path, sizeof(path), "%d", index[0]);
			else
				snprintf(path, sizeof(path), "%s>%d", parent[1], index[1]);
			json_array_append_new(list, json_pack("{s:s, s:o, s:s, s:b}", "index", path, "id",
							      id[0] ? json_string(id) : json_null(), "title", title,
							      "submenu", is_sub));
			index[depth]++;
			if (depth < 7) {
				snprintf(parent[depth + 1], sizeof(parent[0]), "%s", path);
				in_sub[depth + 1] = is_sub;
				index[depth + 1] = 0;
			}
		}
		if (strchr(p, '{') != NULL && depth < 7)
			depth++;
	}
	return list;
}

int tb_grubcfg_resolve(const json_t *entries, const char *entry, char *out, size_t len)
{
	size_t i;
	json_t *e;

	/* as GRUB: an index path first, then an id, then a title */
	json_array_foreach(entries, i, e)
	{
		const char *index = json_string_value(json_object_get(e, "index"));

		if (index != NULL && strcmp(index, entry) == 0)
			goto found;
	}
	json_array_foreach(entries, i, e)
	{
		const char *id = json_string_value(json_object_get(e, "id"));

		if (id != NULL && strcmp(id, entry) == 0)
			goto found;
	}
	json_array_foreach(entries, i, e)
	{
		const char *title = json_string_value(json_object_get(e, "title"));

		if (title != NULL && strcmp(title, entry) == 0)
			goto found;
	}
	return -1;
found:
	if (json_string_value(json_object_get(e, "index")) == NULL)
		return -1; /* an entry without its index path cannot be booted by one */
	snprintf(out, len, "%s", json_string_value(json_object_get(e, "index")));
	return 0;
}
