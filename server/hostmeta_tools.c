/*
 * hostmeta_tools.c - the parsers of the host-metadata script's sections
 * that come from one tool each (hostmeta.h): sysctl, os-release, ethtool,
 * ip link, FreeBSD's ifconfig and pciconf, and the congestion-control list.
 *
 * Each parser walks its text a line at a time and keeps what it recognizes,
 * so a truncated or foreign capture gives a smaller object, never an error.
 * Out of memory: the hm_*_parse functions set *oom when an allocation
 * fails; the public section parsers then return NULL.  Text that is not
 * UTF-8 gets '?' for its bytes >= 0x80.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostmeta.h"
#include "hostmeta_internal.h"

/* ---- sysctl: "name: value" (FreeBSD), "name = value" (procps) ---- */

json_t *hm_sysctl_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line = {"", 0}, name = {NULL, 0};
	const char *pos = text, *vstart = NULL, *vend = NULL;
	int multi = 0, more = 1;

	while (o != NULL && more) {
		size_t k = 0;
		int dot = 0, bsd = 0, eq = 0;

		if ((more = hm_next_line(&pos, &line)) != 0) {
			while (k < line.n &&
			       (isalnum((unsigned char)line.p[k]) || strchr("_.%/@+-", line.p[k]) != NULL))
				dot |= line.p[k++] == '.';
			bsd = dot && k < line.n && line.p[k] == ':' && (k + 1 == line.n || hm_is_blank(line.p[k + 1]));
			eq = dot && line.n >= k + 2 && memcmp(line.p + k, " =", 2) == 0 &&
			     (k + 2 == line.n || hm_is_blank(line.p[k + 2]));
		}
		if (more && multi && !bsd && !eq && !hm_starts(line, "sysctl: ")) {
			vend = line.p + line.n; /* FreeBSD: a value goes on up to the next name */
			continue;
		}
		if (vstart != NULL)
			hm_putn(o, name, hm_jstr(hm_trim(hm_upto(vstart, vend), 1), oom), oom);
		vstart = NULL;
		if ((multi = more && bsd) != 0 || (more && eq)) {
			name = (struct span){line.p, k};
			vstart = line.p + k + (bsd ? 1 : 2);
			vend = line.p + line.n;
		}
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_sysctl(const char *text)
{
	return hm_run(hm_sysctl_parse, text);
}

/* ---- /etc/os-release ---- */

/* A value as os-release(5) quotes it: "..." with \ escapes, '...', bare. */
static json_t *unquote(struct span v, int *oom)
{
	char *buf = malloc(v.n + 1), q = 0;
	size_t k = 0;
	json_t *j;

	if (buf == NULL)
		return hm_chk(NULL, oom);
	for (size_t i = 0; i < v.n; i++) {
		char c = v.p[i];

		if (q != '\'' && c == '\\' && i + 1 < v.n && (q == 0 || strchr("\"\\$`", v.p[i + 1]) != NULL))
			buf[k++] = v.p[++i];
		else if ((c == '"' || c == '\'') && (q == 0 || q == c))
			q = q == 0 ? c : 0;
		else
			buf[k++] = c;
	}
	j = hm_jstr((struct span){buf, k}, oom);
	free(buf);
	return j;
}

json_t *hm_os_release_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line;
	const char *pos = text;

	while (o != NULL && hm_next_line(&pos, &line)) {
		size_t k = 0;

		line = hm_trim(line, 0);
		while (k < line.n && (isalnum((unsigned char)line.p[k]) || line.p[k] == '_'))
			k++;
		if (k > 0 && k < line.n && line.p[k] == '=')
			hm_putn(o, (struct span){line.p, k}, unquote(hm_upto(line.p + k + 1, line.p + line.n), oom),
				oom);
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_os_release(const char *text)
{
	return hm_run(hm_os_release_parse, text);
}

/* ---- ethtool ---- */

/* "key: value", key made of [A-Za-z0-9_-] (indentation allowed). */
static int key_value(struct span line, struct span *key, struct span *value)
{
	const char *colon;

	line = hm_trim(line, 0);
	if ((colon = memchr(line.p, ':', line.n)) == NULL || colon == line.p)
		return 0;
	*key = hm_upto(line.p, colon);
	*value = hm_trim(hm_upto(colon + 1, line.p + line.n), 0);
	for (size_t i = 0; i < key->n; i++)
		if (!isalnum((unsigned char)key->p[i]) && key->p[i] != '-' && key->p[i] != '_')
			return 0;
	return 1;
}

json_t *hm_ethtool_i_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line, key, value;
	const char *pos = text;
	char *k;

	while (o != NULL && hm_next_line(&pos, &line)) {
		if (!key_value(line, &key, &value))
			continue;
		if ((k = hm_dup_span(key, 1)) == NULL) {
			*oom = 1;
			break;
		}
		for (char *c = k; *c != '\0'; c++)
			*c = *c == '-' ? '_' : *c;
		hm_put(o, k, value.n == 0 && strcmp(k, "firmware_version") == 0 ? json_null() : hm_jstr(value, oom),
		       oom);
		free(k);
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_ethtool_i(const char *text)
{
	return hm_run(hm_ethtool_i_parse, text);
}

json_t *hm_ethtool_k_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line, key, value, on, fixed;
	const char *pos = text;

	while (o != NULL && hm_next_line(&pos, &line)) {
		/* "name: on", "name: off [fixed]", "name: off [requested on]" */
		if (hm_starts(line, "Features for ") || !key_value(line, &key, &value) || !hm_next_word(&value, &on) ||
		    !(hm_equals(on, "on") || hm_equals(on, "off")))
			continue;
		fixed = value;
		hm_putn(o, key,
			json_pack("{s:b, s:b}", "on", hm_equals(on, "on"), "fixed",
				  hm_next_word(&value, &fixed) && hm_equals(fixed, "[fixed]")),
			oom);
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_ethtool_k(const char *text)
{
	return hm_run(hm_ethtool_k_parse, text);
}

/* ---- ip -d link show ---- */

json_t *hm_ip_link_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line, w, rest, save;
	const char *pos = text;
	int head = 0, link = 0;
	json_int_t index;

	while (o != NULL && hm_next_line(&pos, &line)) {
		rest = line;
		if (!hm_next_word(&rest, &w))
			continue;
		if (!head && w.n > 1 && w.p[w.n - 1] == ':' && hm_to_int((struct span){w.p, w.n - 1}, &index)) {
			/* "4: eth0: <FLAGS> mtu 1400 qdisc ... qlen 1000" */
			head = 1;
			hm_put(o, "index", json_integer(index), oom);
			if (hm_next_word(&rest, &w)) {
				const char *at = memchr(w.p, '@', w.n); /* "eth0.5@eth0:" */

				hm_put_str(o, "name", hm_upto(w.p, at != NULL ? at : w.p + w.n - (w.p[w.n - 1] == ':')),
					   oom);
			}
			save = rest;
			if (hm_next_word(&rest, &w) && w.p[0] == '<')
				hm_put(o, "flags", hm_angle_list(w, oom), oom);
			else
				rest = save;
			hm_put_pairs(o, rest, oom);
		} else if (head && !link && hm_starts(w, "link/")) {
			/* "link/ether MAC brd MAC promiscuity 0 ..." (link/none has no MAC) */
			link = 1;
			hm_put_str(o, "link_type", hm_upto(w.p + 5, w.p + w.n), oom);
			save = rest;
			if (hm_next_word(&rest, &w) && memchr(w.p, ':', w.n) != NULL)
				hm_put_str(o, "mac", w, oom);
			else
				rest = save;
			hm_put_pairs(o, rest, oom);
		}
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_ip_link(const char *text)
{
	return hm_run(hm_ip_link_parse, text);
}

/* ---- FreeBSD ifconfig, pciconf ---- */

json_t *hm_ifconfig_parse(const char *text, int *oom)
{
	json_t *o = hm_chk(json_object(), oom);
	struct span line, w, rest, flags;
	const char *pos = text;
	int head = 0;

	while (o != NULL && hm_next_line(&pos, &line)) {
		rest = line;
		if (!hm_next_word(&rest, &w))
			continue;
		if (!head && !hm_is_blank(line.p[0]) && w.n > 1 && w.p[w.n - 1] == ':' && hm_next_word(&rest, &flags) &&
		    hm_starts(flags, "flags=")) {
			/* "ix0: flags=8843<UP,...> metric 0 mtu 9000", then TAB-indented lines */
			head = 1;
			hm_put_str(o, "name", (struct span){w.p, w.n - 1}, oom);
			if (memchr(flags.p, '<', flags.n) != NULL)
				hm_put(o, "flags", hm_angle_list(flags, oom), oom);
			hm_put_pairs(o, rest, oom);
		} else if (!head || !hm_is_blank(line.p[0])) {
			continue;
		} else if (hm_starts(w, "options=") && memchr(w.p, '<', w.n) != NULL) {
			hm_put(o, "options", hm_angle_list(w, oom), oom);
		} else if (hm_equals(w, "ether") && hm_next_word(&rest, &w)) {
			hm_put_str(o, "mac", w, oom);
		} else if (hm_equals(w, "inet") && hm_next_word(&rest, &w)) {
			if (json_object_get(o, "inet") == NULL)
				hm_put(o, "inet", hm_chk(json_array(), oom), oom);
			hm_append(json_object_get(o, "inet"), hm_jstr(w, oom), oom);
		} else if (hm_equals(w, "media:") || hm_equals(w, "status:")) {
			hm_put_str(o, w.p[0] == 'm' ? "media" : "status", hm_trim(rest, 0), oom);
		}
	}
	return hm_nonempty(o, oom);
}

json_t *tb_hostmeta_ifconfig(const char *text)
{
	return hm_run(hm_ifconfig_parse, text);
}

/* pciconf's names -> ours: {name, on the entry line, on a verbose line}. */
static const char *pci_key(struct span k, int verbose)
{
	static const char *const keys[][3] = {{"vendor", "vendor_id", "vendor"},
					      {"device", "device_id", "device"},
					      {"class", "class", "class_name"},
					      {"subclass", NULL, "subclass"},
					      {"subvendor", "subvendor_id", NULL},
					      {"subdevice", "subdevice_id", NULL},
					      {"rev", "rev", NULL},
					      {"hdr", "hdr", NULL},
					      {"chip", "chip", NULL},
					      {"card", "card", NULL}};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (hm_equals(k, keys[i][0]))
			return keys[i][1 + verbose];
	return NULL;
}

json_t *hm_pciconf_parse(const char *text, int *oom)
{
	json_t *a = hm_chk(json_array(), oom), *cur = NULL;
	struct span line, w, rest, v;
	const char *pos = text, *at, *eq, *key;

	while (a != NULL && !*oom && hm_next_line(&pos, &line)) {
		rest = line;
		if (!hm_next_word(&rest, &w))
			continue;
		at = memchr(w.p, '@', w.n);
		if (!hm_is_blank(line.p[0]) && at != NULL && at > w.p && at + 1 < w.p + w.n) {
			/* "ix0@pci0:4:0:0:<TAB>class=0x020000 rev=0x01 ... vendor=0x8086 ..." */
			hm_append(a, cur = hm_chk(json_object(), oom), oom);
			if (*oom)
				break;
			hm_put_str(cur, "name", hm_upto(w.p, at), oom);
			hm_put_str(cur, "selector", hm_upto(at + 1, w.p + w.n - (w.p[w.n - 1] == ':')), oom);
			while (hm_next_word(&rest, &w))
				if ((eq = memchr(w.p, '=', w.n)) != NULL &&
				    (key = pci_key(hm_upto(w.p, eq), 0)) != NULL)
					hm_put_str(cur, key, hm_upto(eq + 1, w.p + w.n), oom);
		} else if (cur != NULL && hm_is_blank(line.p[0]) && (eq = memchr(line.p, '=', line.n)) != NULL &&
			   (key = pci_key(hm_trim(hm_upto(line.p, eq), 0), 1)) != NULL) {
			/* "    vendor     = 'Intel Corporation'" */
			v = hm_trim(hm_upto(eq + 1, line.p + line.n), 0);
			if (v.n >= 2 && v.p[0] == '\'' && v.p[v.n - 1] == '\'')
				v = (struct span){v.p + 1, v.n - 2};
			hm_put_str(cur, key, v, oom);
		}
	}
	return hm_nonempty(a, oom);
}

json_t *tb_hostmeta_pciconf(const char *text)
{
	return hm_run(hm_pciconf_parse, text);
}

json_t *hm_cc_list_parse(const char *value, int *oom)
{
	json_t *a = hm_chk(json_array(), oom);
	struct span line, w;
	const char *pos = value;
	size_t n;

	if (strchr(value, '\n') != NULL) {
		/* FreeBSD 14's table: "CCmod D PCB count", then "name [*] count" rows */
		while (a != NULL && hm_next_line(&pos, &line))
			if (hm_next_word(&line, &w) && !hm_equals(w, "CCmod"))
				hm_append(a, hm_jstr(w, oom), oom);
	} else {
		for (; a != NULL && *pos != '\0'; pos += n + (pos[n] != '\0'))
			if ((n = strcspn(pos, ", \t\r")) > 0)
				hm_append(a, hm_jstr((struct span){pos, n}, oom), oom);
	}
	return hm_nonempty(a, oom);
}

json_t *tb_hostmeta_cc_list(const char *value)
{
	return hm_run(hm_cc_list_parse, value);
}
