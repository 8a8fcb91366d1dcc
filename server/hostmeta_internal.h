/*
 * hostmeta_internal.h - what hostmeta.c's assembly and the parsers of
 * hostmeta_tools.c and hostmeta_shape.c share with the text and JSON
 * helpers of hostmeta_text.c: spans of a text (a line, a word) and
 * building JSON that stays within memory (every helper sets *oom when an
 * allocation fails, and then the caller's result is dropped).
 */
#ifndef TB_HOSTMETA_INTERNAL_H
#define TB_HOSTMETA_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

/* A piece of a NUL-terminated text, not itself NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

int hm_is_blank(char c);
/* s without blanks at both ends (and newlines too when nl). */
struct span hm_trim(struct span s, int nl);
struct span hm_span_of(const char *s);
struct span hm_upto(const char *p, const char *end);
int hm_starts(struct span s, const char *lit);
int hm_equals(struct span s, const char *lit);
/* The next line at *pos, without its '\n'; 0 at the end of the text. */
int hm_next_line(const char **pos, struct span *line);
/* The next blank-separated word of *s, consumed; 0 when none is left. */
int hm_next_word(struct span *s, struct span *w);
/* s (blanks around allowed) as a non-negative decimal. */
int hm_to_int(struct span s, json_int_t *out);
/* A malloc'd NUL-terminated copy of s; bytes >= 0x80 become '?' when ascii. */
char *hm_dup_span(struct span s, int ascii);
/* j, with a NULL j (a failed allocation) noted in *oom. */
json_t *hm_chk(json_t *j, int *oom);
json_t *hm_jstr(struct span s, int *oom);
/* A number when s is one, else a string. */
json_t *hm_jscalar(struct span s, int *oom);
/* obj[key] = v, v stolen; a NULL obj or v counts as out of memory. */
void hm_put(json_t *obj, const char *key, json_t *v, int *oom);
void hm_putn(json_t *obj, struct span key, json_t *v, int *oom);
void hm_put_str(json_t *obj, const char *key, struct span s, int *oom);
void hm_append(json_t *arr, json_t *v, int *oom);
/* o when it has members; else (or out of memory) NULL. */
json_t *hm_nonempty(json_t *o, int *oom);
/* The "<A,B,C>" in word w as ["A","B","C"]; NULL when w has no '<'. */
json_t *hm_angle_list(struct span w, int *oom);
/* "key value key value ..." into obj, numbers as integers. */
void hm_put_pairs(json_t *obj, struct span s, int *oom);
/* hostmeta_tools.c: the one-tool sections (hostmeta.h's tb_hostmeta_*
 * parsers), as section parsers that set *oom. */
json_t *hm_sysctl_parse(const char *text, int *oom);
json_t *hm_os_release_parse(const char *text, int *oom);
json_t *hm_ethtool_i_parse(const char *text, int *oom);
json_t *hm_ethtool_k_parse(const char *text, int *oom);
json_t *hm_ip_link_parse(const char *text, int *oom);
json_t *hm_ifconfig_parse(const char *text, int *oom);
json_t *hm_pciconf_parse(const char *text, int *oom);
json_t *hm_cc_list_parse(const char *value, int *oom);
/* hostmeta_shape.c: `ipfw pipe show` and `tc qdisc show` (hostmeta.h's
 * "shaping"), as section parsers that set *oom. */
json_t *hm_ipfw_pipes_parse(const char *text, int *oom);
json_t *hm_tc_qdisc_parse(const char *text, int *oom);
/* A section parser's result, NULL when it ran out of memory. */
json_t *hm_run(json_t *(*parse)(const char *, int *), const char *text);

#endif /* TB_HOSTMETA_INTERNAL_H */
