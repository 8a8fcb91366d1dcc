/*
 * hostmeta.c - the host-metadata script and the assembly of its output
 * (hostmeta.h): the sections split out, each given to its parser
 * (hostmeta_tools.c, hostmeta_shape.c), and the host and NIC objects built.
 *
 * Out of memory: the parsers set *oom when an allocation fails;
 * tb_hostmeta_parse then returns -1.  Text that is not UTF-8 gets '?' for
 * its bytes >= 0x80.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostmeta.h"
#include "hostmeta_internal.h"

#define IFACE_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"

/* ---- the script ---- */

/* In this order; kind 1 linux, 2 freebsd, 3 both; what comes between cmd
 * and tail: 'i' the interface, 'd' the FreeBSD device "D.U", 'n' nothing
 * but only with an interface. */
static const struct {
	int kind;
	const char *name, *cmd;
	char arg;
	const char *tail;
} commands[] = {
	{3, "uname_a", "uname -a", 0, ""},
	{2, "freebsd_version", "freebsd-version -ku", 0, ""},
	{3, "os_release", "cat /etc/os-release", 0, ""},
	{1, "cpu_model", "grep -m1 'model name' /proc/cpuinfo", 0, ""},
	{1, "nproc", "nproc", 0, ""},
	{1, "meminfo", "grep MemTotal /proc/meminfo", 0, ""},
	/* -e (Linux) / -i (FreeBSD): a key this kernel lacks (IPv6 off, no
	 * INET6) is left out, not an error of the whole section */
	{1, "sysctl",
	 "sysctl -e net.core.rmem_max net.core.wmem_max net.ipv4.tcp_rmem net.ipv4.tcp_wmem "
	 "net.ipv4.tcp_congestion_control net.ipv4.tcp_available_congestion_control net.ipv4.ip_forward "
	 "net.ipv6.conf.all.forwarding",
	 0, ""},
	{2, "sysctl",
	 "sysctl -i kern.ipc.maxsockbuf net.inet.tcp.sendspace net.inet.tcp.recvspace net.inet.tcp.sendbuf_max "
	 "net.inet.tcp.recvbuf_max net.inet.tcp.cc.algorithm net.inet.tcp.cc.available hw.model hw.ncpu "
	 "hw.physmem net.inet.ip.forwarding net.inet6.ip6.forwarding",
	 0, ""},
	/* link shaping: the qdiscs; dummynet's pipes where it is loaded (else TB_HOSTMETA_NO_SHAPER) */
	{1, "shaping",
	 "if command -v tc >/dev/null 2>&1; then tc qdisc show; else echo '" TB_HOSTMETA_NO_SHAPER "'; fi", 0, ""},
	{2, "shaping", "if kldstat -q -m dummynet; then ipfw pipe show; else echo '" TB_HOSTMETA_NO_SHAPER "'; fi", 0,
	 ""},
	{1, "ethtool_i", "ethtool -i '", 'i', "'"},
	{1, "ethtool_k", "ethtool -k '", 'i', "'"},
	{1, "ip_link", "ip -d link show '", 'i', "'"},
	{2, "ifconfig", "ifconfig '", 'i', "'"},
	{2, "pciconf", "pciconf -lv", 'n', ""},
	{2, "dev_desc", "sysctl 'dev.", 'd', ".%desc'"},
	{2, "dev_fw", "sysctl 'dev.", 'd', ".fw_version'"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The FreeBSD device behind interface iface, "D" and "U": the name split
 * into driver and unit (ix0 -> ix, 0), but LinuxKPI ifnets are named apart
 * from their device (mlxen0 -> mlx4_core, 0).  0 when iface is no such name. */
static int bsd_device(const char *iface, char drv[32], char unit[16])
{
	static const char *const renamed[][2] = {{"mlxen", "mlx4_core"}, {"mce", "mlx5_core"}};
	size_t n = strlen(iface), k = n;

	while (k > 0 && isdigit((unsigned char)iface[k - 1]))
		k--;
	if (k == 0 || k == n || k >= 32 || n - k >= 16 || strcspn(iface, ".:-") < k)
		return 0;
	memcpy(drv, iface, k);
	drv[k] = '\0';
	memcpy(unit, iface + k, n - k + 1);
	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (strcmp(drv, renamed[i][0]) == 0)
			strcpy(drv, renamed[i][1]);
	return 1;
}

/* 1 linux, 2 freebsd, 0 unknown. */
static int kind_of(const char *kind)
{
	if (kind == NULL)
		return 0;
	return strcasecmp(kind, "linux") == 0 ? 1 : strcasecmp(kind, "freebsd") == 0 ? 2 : 0;
}

char *tb_hostmeta_script(const char *kind, const char *iface)
{
	/* sbin for sysctl, ethtool, ifconfig in a non-root user's PATH */
	static const char head[] = "LC_ALL=C; export LC_ALL; PATH=$PATH:/sbin:/usr/sbin; export PATH; ";
	char drv[32], unit[16], dev[64] = "", *script, *p;
	size_t cap = sizeof(head) + 16;
	int k = kind_of(kind);

	if (k == 0 || (iface != NULL && (strlen(iface) < 1 || strlen(iface) > 15 ||
					 strspn(iface, IFACE_CHARS) != strlen(iface) || iface[0] == '-')))
		return NULL;
	if (iface != NULL && bsd_device(iface, drv, unit))
		snprintf(dev, sizeof(dev), "%s.%s", drv, unit);
	for (size_t i = 0; i < NCOMMANDS; i++)
		cap += strlen(commands[i].name) + strlen(commands[i].cmd) + strlen(commands[i].tail) + 160;
	if ((script = p = malloc(cap)) == NULL)
		return NULL;
	p = stpcpy(p, head);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char arg = commands[i].arg;

		if ((commands[i].kind & k) == 0 || (arg != 0 && iface == NULL) || (arg == 'd' && dev[0] == '\0'))
			continue;
		p = stpcpy(stpcpy(stpcpy(p, "echo '" TB_HOSTMETA_SECTION), commands[i].name), "'; ");
		p = stpcpy(stpcpy(p, commands[i].cmd), arg == 'i' ? iface : arg == 'd' ? dev : "");
		/* the echo ends a last line that lacks its '\n'; the parser drops it */
		p = stpcpy(stpcpy(p, commands[i].tail),
			   " </dev/null 2>&1; rc=$?; echo; echo \"" TB_HOSTMETA_RC "$rc\"; ");
	}
	strcpy(p, "exit 0");
	return script;
}

char *tb_hostmeta_script_any(const char *iface)
{
	char *lx = tb_hostmeta_script("linux", iface), *bsd = tb_hostmeta_script("freebsd", iface), *script = NULL;
	size_t cap;

	if (lx != NULL && bsd != NULL) {
		cap = strlen(lx) + strlen(bsd) + 256;
		if ((script = malloc(cap)) != NULL)
			snprintf(script, cap,
				 "case ${" TB_HOSTMETA_KERNEL_VAR ":-$(uname -s)} in FreeBSD) echo '" TB_HOSTMETA_KIND
				 "freebsd'; %s;; *) echo '" TB_HOSTMETA_KIND "linux'; %s;; esac",
				 bsd, lx);
	}
	free(lx);
	free(bsd);
	return script;
}

const char *tb_hostmeta_kind(const char *text, size_t len)
{
	size_t k = strlen(TB_HOSTMETA_KIND);

	if (text == NULL || len < k || memcmp(text, TB_HOSTMETA_KIND, k) != 0)
		return NULL;
	if (len >= k + 7 && memcmp(text + k, "freebsd", 7) == 0)
		return "freebsd";
	if (len >= k + 5 && memcmp(text + k, "linux", 5) == 0)
		return "linux";
	return NULL;
}

/* ---- the whole output ---- */

enum {
	S_UNAME,
	S_OS,
	S_CPU,
	S_NPROC,
	S_MEM,
	S_SYSCTL,
	S_ETHI,
	S_ETHK,
	S_IPLINK,
	S_FBSDVER,
	S_IFCONFIG,
	S_PCICONF,
	S_DEVDESC,
	S_DEVFW,
	S_SHAPING,
	S_COUNT
};

static const char *const section_names[S_COUNT] = {"uname_a",  "os_release", "cpu_model", "nproc",   "meminfo",
						   "sysctl",   "ethtool_i",  "ethtool_k", "ip_link", "freebsd_version",
						   "ifconfig", "pciconf",    "dev_desc",  "dev_fw",  "shaping"};

struct parsed {
	char *text[S_COUNT]; /* NULL: section absent */
	int ok[S_COUNT];     /* rc 0, or cut off before its rc line */
	json_t *errors;
	int oom;
};

/* The first non-blank line of text (or an empty span). */
static struct span first_line(const char *text)
{
	struct span line;

	while (hm_next_line(&text, &line))
		if ((line = hm_trim(line, 0)).n > 0)
			return line;
	return (struct span){text, 0};
}

static void close_section(struct parsed *ps, struct span name, const char *body, size_t n, int has_rc, json_int_t rc)
{
	json_t *e;
	char *text;
	int i = 0;

	while (!has_rc && n > 0 && body[n - 1] != '\n') /* cut off: whole lines only */
		n--;
	if ((text = hm_dup_span((struct span){body, n}, 0)) == NULL) {
		ps->oom = 1;
		return;
	}
	if (has_rc && rc != 0) {
		e = hm_chk(json_object(), &ps->oom);
		hm_put(e, "section", hm_jstr(name, &ps->oom), &ps->oom);
		hm_put(e, "rc", json_integer(rc), &ps->oom);
		hm_put_str(e, "message", first_line(text), &ps->oom);
		hm_append(ps->errors, e, &ps->oom);
	}
	while (i < S_COUNT && !hm_equals(name, section_names[i]))
		i++;
	if (i == S_COUNT || ps->oom) {
		free(text);
		return;
	}
	free(ps->text[i]);
	ps->text[i] = text;
	ps->ok[i] = !has_rc || rc == 0;
}

static void split_sections(struct parsed *ps, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *body = NULL;
	struct span name = {NULL, 0};
	size_t ks = strlen(TB_HOSTMETA_SECTION), kr = strlen(TB_HOSTMETA_RC);

	while (p < end && !ps->oom) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl != NULL ? nl : end) - p);

		if (n >= ks && memcmp(p, TB_HOSTMETA_SECTION, ks) == 0) {
			if (body != NULL)
				close_section(ps, name, body, (size_t)(p - body), 0, 0);
			name = hm_trim((struct span){p + ks, n - ks}, 0);
			name.n = strnlen(name.p, name.n);
			body = nl != NULL ? nl + 1 : end;
		} else if (body != NULL && n >= kr && memcmp(p, TB_HOSTMETA_RC, kr) == 0) {
			size_t bn = (size_t)(p - body);
			json_int_t rc;
			int has_rc = hm_to_int((struct span){p + kr, n - kr}, &rc);

			close_section(ps, name, body, bn - (bn > 0 && body[bn - 1] == '\n'), has_rc, rc);
			body = NULL;
		}
		p = nl != NULL ? nl + 1 : end;
	}
	if (body != NULL && !ps->oom)
		close_section(ps, name, body, (size_t)(end - body), 0, 0);
}

/* The text of a section that can be read (rc 0 or cut off), else NULL. */
static const char *usable(const struct parsed *ps, int i)
{
	return ps->ok[i] ? ps->text[i] : NULL;
}

static const char *get_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* dst[dkey] = src[skey] when src has one. */
static void copy(json_t *dst, const char *dkey, const json_t *src, const char *skey, int *oom)
{
	json_t *v = json_object_get(src, skey);

	if (v != NULL)
		hm_put(dst, dkey, json_incref(v), oom);
}

/* The value of sysctl name in text (sysctl output), or NULL. */
static json_t *sysctl_value(const char *text, const char *name, int *oom)
{
	json_t *m = text != NULL ? hm_sysctl_parse(text, oom) : NULL;
	json_t *v = json_incref(json_object_get(m, name));

	json_decref(m);
	return v;
}

/* kernel = first word, release = third, machine = the last (Linux: the one
 * before "GNU/Linux"; Ubuntu prints x86_64 three times). */
static void build_uname(json_t *o, const char *text, int *oom)
{
	struct span line = first_line(text), rest = line, w, prev = {NULL, 0}, last = {NULL, 0};
	int count = 0;

	if (line.n > 0)
		hm_put_str(o, "uname", line, oom);
	for (; hm_next_word(&rest, &w); count++) {
		if (count == 0 || count == 2)
			hm_put_str(o, count == 0 ? "kernel" : "release", w, oom);
		prev = last;
		last = w;
	}
	if (count >= 4)
		hm_put_str(o, "machine", hm_equals(last, "GNU/Linux") ? prev : last, oom);
}

static void build_common(json_t *o, const struct parsed *ps, int *oom)
{
	json_t *rel = usable(ps, S_OS) != NULL ? hm_os_release_parse(usable(ps, S_OS), oom) : NULL, *os, *fv;
	const char *pos = usable(ps, S_FBSDVER);
	struct span line;

	if (usable(ps, S_UNAME) != NULL)
		build_uname(o, usable(ps, S_UNAME), oom);
	if (rel != NULL) {
		os = hm_chk(json_object(), oom);
		copy(os, "name", rel, json_object_get(rel, "PRETTY_NAME") != NULL ? "PRETTY_NAME" : "NAME", oom);
		copy(os, "id", rel, "ID", oom);
		copy(os, "version", rel, "VERSION_ID", oom);
		if ((os = hm_nonempty(os, oom)) != NULL)
			hm_put(o, "os", os, oom);
		json_decref(rel);
	}
	if (pos != NULL) { /* freebsd-version -ku: kernel, then userland */
		fv = hm_chk(json_object(), oom);
		while (fv != NULL && json_object_size(fv) < 2 && hm_next_line(&pos, &line))
			if ((line = hm_trim(line, 0)).n > 0)
				hm_put_str(fv, json_object_size(fv) == 0 ? "kernel" : "userland", line, oom);
		if ((fv = hm_nonempty(fv, oom)) != NULL)
			hm_put(o, "freebsd_version", fv, oom);
	}
}

/* Integers from sysctl values: kind, 'c' cpu / 'm' the object / 't' tcp, key, name. */
static const struct {
	int kind;
	char obj;
	const char *key, *name;
} sysctl_ints[] = {
	{1, 't', "rmem_max", "net.core.rmem_max"},
	{1, 't', "wmem_max", "net.core.wmem_max"},
	{2, 'c', "count", "hw.ncpu"},
	{2, 'm', "memory_bytes", "hw.physmem"},
	{2, 't', "maxsockbuf", "kern.ipc.maxsockbuf"},
	{2, 't', "sendbuf_max", "net.inet.tcp.sendbuf_max"},
	{2, 't', "recvbuf_max", "net.inet.tcp.recvbuf_max"},
	{2, 't', "sendspace", "net.inet.tcp.sendspace"},
	{2, 't', "recvspace", "net.inet.tcp.recvspace"},
};

/* The sysctl_ints of kind k that go to obj, into dst. */
static void put_ints(json_t *dst, char obj, int k, const json_t *sc, int *oom)
{
	const char *v;
	json_int_t n;

	for (size_t i = 0; i < sizeof(sysctl_ints) / sizeof(sysctl_ints[0]); i++)
		if (sysctl_ints[i].kind == k && sysctl_ints[i].obj == obj &&
		    (v = get_str(sc, sysctl_ints[i].name)) != NULL && hm_to_int(hm_span_of(v), &n))
			hm_put(dst, sysctl_ints[i].key, json_integer(n), oom);
}

/* cpu and memory_bytes into o, the tcp members into tcp (k: 1 linux, 2 freebsd). */
static void build_host(json_t *o, int k, const json_t *sc, const struct parsed *ps, json_t *tcp, int *oom)
{
	json_t *cpu = hm_chk(json_object(), oom), *a;
	const char *pos = k == 1 ? usable(ps, S_CPU) : NULL, *v, *colon;
	struct span line, w;
	json_int_t n;

	while (pos != NULL && hm_next_line(&pos, &line))
		if (hm_starts(line, "model name") && (colon = memchr(line.p, ':', line.n)) != NULL) {
			hm_put_str(cpu, "model", hm_trim(hm_upto(colon + 1, line.p + line.n), 0), oom);
			break;
		}
	if (k == 2 && (v = get_str(sc, "hw.model")) != NULL)
		hm_put_str(cpu, "model", hm_span_of(v), oom);
	if (k == 1 && usable(ps, S_NPROC) != NULL && hm_to_int(first_line(usable(ps, S_NPROC)), &n))
		hm_put(cpu, "count", json_integer(n), oom);
	put_ints(cpu, 'c', k, sc, oom);
	if ((cpu = hm_nonempty(cpu, oom)) != NULL)
		hm_put(o, "cpu", cpu, oom);
	put_ints(o, 'm', k, sc, oom);
	for (pos = k == 1 ? usable(ps, S_MEM) : NULL; pos != NULL && hm_next_line(&pos, &line);)
		if (hm_next_word(&line, &w) && hm_equals(w, "MemTotal:") && hm_next_word(&line, &w) &&
		    hm_to_int(w, &n) && n < ((json_int_t)1 << 52)) /* kB */
			hm_put(o, "memory_bytes", json_integer(n * 1024), oom);
	if ((v = get_str(sc, k == 1 ? "net.ipv4.tcp_congestion_control" : "net.inet.tcp.cc.algorithm")) != NULL)
		hm_put_str(tcp, "congestion_control", hm_span_of(v), oom);
	v = get_str(sc, k == 1 ? "net.ipv4.tcp_available_congestion_control" : "net.inet.tcp.cc.available");
	if (v != NULL && (a = hm_cc_list_parse(v, oom)) != NULL)
		hm_put(tcp, "congestion_available", a, oom);
	for (int i = 0; k == 1 && i < 2; i++) { /* "4096<TAB>131072<TAB>6291456" */
		struct span rest;
		int bad = 0;

		if ((v = get_str(sc, i == 0 ? "net.ipv4.tcp_rmem" : "net.ipv4.tcp_wmem")) == NULL)
			continue;
		rest = hm_span_of(v);
		a = hm_chk(json_array(), oom);
		while (a != NULL && !bad && hm_next_word(&rest, &w))
			if (!(bad = !hm_to_int(w, &n)))
				hm_append(a, json_integer(n), oom);
		if (bad)
			json_decref(a);
		else if ((a = hm_nonempty(a, oom)) != NULL)
			hm_put(tcp, i == 0 ? "rmem" : "wmem", a, oom);
	}
	put_ints(tcp, 't', k, sc, oom);
}

/* nic on Linux: ethtool -i, ip -d link show, ethtool -k. */
static void build_nic_linux(json_t *nic, const struct parsed *ps, int *oom)
{
	json_t *ei = usable(ps, S_ETHI) ? hm_ethtool_i_parse(usable(ps, S_ETHI), oom) : NULL;
	json_t *il = usable(ps, S_IPLINK) ? hm_ip_link_parse(usable(ps, S_IPLINK), oom) : NULL;
	json_t *ek = usable(ps, S_ETHK) ? hm_ethtool_k_parse(usable(ps, S_ETHK), oom) : NULL;
	json_t *off, *v;
	const char *key;

	copy(nic, "driver", ei, "driver", oom);
	copy(nic, "driver_version", ei, "version", oom);
	copy(nic, "firmware", ei, "firmware_version", oom);
	copy(nic, "bus", ei, "bus_info", oom);
	if (json_object_get(nic, "bus") == NULL)
		copy(nic, "bus", il, "parentdev", oom);
	copy(nic, "mtu", il, "mtu", oom);
	copy(nic, "mac", il, "mac", oom);
	if (ek != NULL) {
		off = hm_chk(json_object(), oom);
		json_object_foreach(ek, key, v) hm_put(off, key, json_incref(json_object_get(v, "on")), oom);
		hm_put(nic, "offloads", off, oom);
	}
	json_decref(ei);
	json_decref(il);
	json_decref(ek);
}

/* Drop the errors of section name whose message has what. */
static void drop_errors(struct parsed *ps, const char *name, const char *what)
{
	for (size_t i = json_array_size(ps->errors); i-- > 0;) {
		const json_t *e = json_array_get(ps->errors, i);
		const char *s = json_string_value(json_object_get(e, "section"));
		const char *m = json_string_value(json_object_get(e, "message"));

		if (s != NULL && strcmp(s, name) == 0 && m != NULL && strstr(m, what) != NULL)
			json_array_remove(ps->errors, i);
	}
}

/* nic on FreeBSD: ifconfig, then the device behind the interface: its
 * pciconf entry and dev.D.U sysctls.  An interface that pciconf does not
 * list (a cloned one: vlan, lagg, bridge, epair; the sim's veths) has no
 * dev.D.U node: its "unknown oid" is that fact, not a failed part. */
static void build_nic_freebsd(json_t *nic, const char *iface, struct parsed *ps, int *oom)
{
	char drv[32], unit[16], dev[64], oid[96];
	json_t *ifc = usable(ps, S_IFCONFIG) ? hm_ifconfig_parse(usable(ps, S_IFCONFIG), oom) : NULL;
	json_t *pci = usable(ps, S_PCICONF) ? hm_pciconf_parse(usable(ps, S_PCICONF), oom) : NULL, *v, *off,
	       *entry = NULL;
	size_t i;

	if (bsd_device(iface, drv, unit)) {
		snprintf(dev, sizeof(dev), "%s%s", drv, unit);
		json_array_foreach(pci, i, v) if (get_str(v, "name") != NULL && strcmp(get_str(v, "name"), dev) == 0)
			entry = v;
		hm_put_str(nic, "driver", hm_span_of(drv), oom);
		if (pci != NULL && entry == NULL) {
			drop_errors(ps, "dev_desc", "unknown oid");
			drop_errors(ps, "dev_fw", "unknown oid");
		}
		if (ps->text[S_DEVFW] != NULL &&
		    (pci == NULL || entry != NULL)) { /* mlx4_core has no fw_version: "unknown oid", rc 1 */
			snprintf(oid, sizeof(oid), "dev.%s.%s.fw_version", drv, unit);
			v = sysctl_value(usable(ps, S_DEVFW), oid, oom);
			hm_put(nic, "firmware", v != NULL ? v : json_null(), oom);
		}
		copy(nic, "bus", entry, "selector", oom);
		snprintf(oid, sizeof(oid), "dev.%s.%s.%%desc", drv, unit);
		if ((v = sysctl_value(usable(ps, S_DEVDESC), oid, oom)) != NULL)
			hm_put(nic, "description", v, oom);
		copy(nic, "vendor", entry, "vendor", oom);
		copy(nic, "device", entry, "device", oom);
	}
	copy(nic, "mtu", ifc, "mtu", oom);
	copy(nic, "mac", ifc, "mac", oom);
	if ((v = json_object_get(ifc, "options")) != NULL) {
		json_t *opt;

		off = hm_chk(json_object(), oom);
		json_array_foreach(v, i, opt) hm_put(off, json_string_value(opt), json_true(), oom);
		hm_put(nic, "offloads", off, oom);
	}
	json_decref(ifc);
	json_decref(pci);
}

/* "forwarding": {"ipv4": bool, "ipv6": bool}, each when its sysctl said (k: 1 Linux, 2 FreeBSD). */
static void put_forwarding(json_t *o, const json_t *sc, int k, int *oom)
{
	static const char *const names[2][2] = {{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"},
						{"net.inet.ip.forwarding", "net.inet6.ip6.forwarding"}};
	json_t *f = hm_chk(json_object(), oom);
	json_int_t fwd;

	for (int fam = 0; f != NULL && fam < 2; fam++) {
		const json_t *v = json_object_get(sc, names[k - 1][fam]);

		if (v != NULL && hm_to_int(hm_span_of(json_string_value(v)), &fwd))
			hm_put(f, fam == 0 ? "ipv4" : "ipv6", json_boolean(fwd == 1), oom);
	}
	if (json_object_size(f) > 0)
		hm_put(o, "forwarding", json_incref(f), oom);
	json_decref(f);
}

int tb_hostmeta_parse(const char *kind, const char *iface, const char *text, size_t len, json_t **out)
{
	struct parsed ps;
	int k = kind_of(kind), *oom = &ps.oom;
	json_t *o, *sc, *tcp, *nic, *v;

	memset(&ps, 0, sizeof(ps));
	*out = NULL;
	ps.errors = hm_chk(json_array(), oom);
	if (text != NULL)
		split_sections(&ps, text, len);
	o = hm_chk(json_object(), oom);
	if (k != 0)
		hm_put(o, "kind", json_string(k == 1 ? "linux" : "freebsd"), oom);
	build_common(o, &ps, oom);
	sc = ps.text[S_SYSCTL] != NULL ? hm_sysctl_parse(ps.text[S_SYSCTL], oom) : NULL;
	tcp = hm_chk(json_object(), oom);
	if (k != 0)
		build_host(o, k, sc, &ps, tcp, oom);
	if (k != 0 && iface != NULL) {
		hm_put_str(nic = hm_chk(json_object(), oom), "interface", hm_span_of(iface), oom);
		if (k == 1)
			build_nic_linux(nic, &ps, oom);
		else
			build_nic_freebsd(nic, iface, &ps, oom);
		/* interface, a FreeBSD driver and a failed dev_fw's null say nothing of the host */
		if (json_object_size(nic) > (size_t)(1 + (k == 2 && json_object_get(nic, "driver") != NULL) +
						     (k == 2 && json_is_null(json_object_get(nic, "firmware")))))
			hm_put(o, "nic", json_incref(nic), oom);
		json_decref(nic);
	}
	if ((tcp = hm_nonempty(tcp, oom)) != NULL)
		hm_put(o, "tcp", tcp, oom);
	if (k != 0)
		put_forwarding(o, sc, k, oom);
	/* a shaper without pipes or qdiscs: an empty map, so that a new one is a row of the diff */
	if (k != 0 && usable(&ps, S_SHAPING) != NULL && strstr(usable(&ps, S_SHAPING), TB_HOSTMETA_NO_SHAPER) == NULL) {
		v = (k == 1 ? hm_tc_qdisc_parse : hm_ipfw_pipes_parse)(usable(&ps, S_SHAPING), oom);
		hm_put(o, "shaping", json_pack("{s:o}", k == 1 ? "qdiscs" : "pipes", v != NULL ? v : json_object()),
		       oom);
	}
	if (sc != NULL)
		hm_put(o, "sysctl", sc, oom);
	if (json_array_size(ps.errors) > 0)
		hm_put(o, "errors", json_incref(ps.errors), oom);
	json_decref(ps.errors);
	for (int i = 0; i < S_COUNT; i++)
		free(ps.text[i]);
	if (*oom) {
		json_decref(o);
		return -1;
	}
	*out = o;
	return 0;
}
