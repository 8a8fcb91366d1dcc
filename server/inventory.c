/* inventory.c - load and validate the testbed inventory: see inventory.h. */
#include "inventory.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inventory_internal.h"
#include "validate.h"
#include "yamltree.h"

int inv_bad(struct inv_ctx *c, const struct tb_ynode *n, const char *path, const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tb_fail(c->err, TB_ERR_CONFIG, path, "%s:%u:%u: %s: %s", c->file, n != NULL ? n->line : 1,
		       n != NULL ? n->col : 1, path, what);
}

static char *xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* Reject keys of map that are not in allowed (a NULL-terminated list). */
int inv_check_keys(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *const allowed[])
{
	for (size_t i = 0; i < map->n; i++) {
		size_t j;
		char list[300] = "", sub[512];

		for (j = 0; allowed[j] != NULL; j++)
			if (strcmp(map->keys[i], allowed[j]) == 0)
				break;
		if (allowed[j] != NULL)
			continue;
		for (j = 0; allowed[j] != NULL; j++) {
			strncat(list, allowed[j], sizeof(list) - strlen(list) - 1);
			if (allowed[j + 1] != NULL)
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		}
		snprintf(sub, sizeof(sub), "%s%s%.60s", path, *path ? "." : "", map->keys[i]);
		return inv_bad(c, map->key_nodes[i], sub, "unknown key; allowed here: %s", list);
	}
	return 0;
}

int inv_want_kind(struct inv_ctx *c, const struct tb_ynode *n, const char *path, enum tb_ynode_kind kind)
{
	static const char *const names[] = {"a single value", "a mapping of keys to values", "a list"};

	if (n->kind != kind)
		return inv_bad(c, n, path, "expected %s, found %s", names[kind], names[n->kind]);
	return 0;
}

/* Read a string under key (optional unless required) checked by v. */
int inv_get_str(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, int required,
		validator v, const char *expected, char **out)
{
	const struct tb_ynode *n = tb_ynode_get(map, key);
	char sub[512];
	int rc;

	snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
	if (n == NULL) {
		if (required)
			return inv_bad(c, map, sub, "missing; expected %s", expected);
		return 0;
	}
	if ((rc = inv_want_kind(c, n, sub, TB_Y_SCALAR)) != 0)
		return rc;
	if (v != NULL && !v(n->scalar))
		return inv_bad(c, n, sub, "expected %s, got \"%.80s\"", expected, n->scalar);
	free(*out);
	*out = strdup(n->scalar);
	if (*out == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

int inv_get_long(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		 long *out)
{
	const struct tb_ynode *n = tb_ynode_get(map, key);
	char sub[512], *end;
	long v;
	int rc;

	if (n == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
	if ((rc = inv_want_kind(c, n, sub, TB_Y_SCALAR)) != 0)
		return rc;
	errno = 0;
	v = strtol(n->scalar, &end, 10);
	if (n->quoted || n->scalar[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
		return inv_bad(c, n, sub, "expected a whole number %ld..%ld, got \"%.80s\"", lo, hi, n->scalar);
	*out = v;
	return 0;
}

int inv_get_uint(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		 unsigned int *out)
{
	long v = (long)*out;
	int rc = inv_get_long(c, map, path, key, lo, hi, &v);

	*out = (unsigned int)v;
	return rc;
}

int inv_get_int(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, long lo, long hi,
		int *out)
{
	long v = (long)*out;
	int rc = inv_get_long(c, map, path, key, lo, hi, &v);

	*out = (int)v;
	return rc;
}

/* One of the words in choices (NULL-terminated); *out gets its index. */
int inv_get_enum(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, int required,
		 const char *const choices[], int *out)
{
	char *s = NULL, list[200] = "";
	int rc;

	for (int i = 0; choices[i] != NULL; i++) {
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
		if (choices[i + 1] != NULL)
			strncat(list, " | ", sizeof(list) - strlen(list) - 1);
	}
	if ((rc = inv_get_str(c, map, path, key, required, NULL, list, &s)) != 0 || s == NULL)
		return rc;
	for (int i = 0; choices[i] != NULL; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			free(s);
			return 0;
		}
	}
	{
		char sub[512];

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		rc = inv_bad(c, tb_ynode_get(map, key), sub, "expected one of %s, got \"%.60s\"", list, s);
	}
	free(s);
	return rc;
}

/* A secret file must exist and be readable by its owner only. */
int inv_check_secret_file(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key,
			  const char *file)
{
	struct stat st;
	char sub[512];

	if (file == NULL || !(c->flags & TB_INV_CHECK_FILES))
		return 0;
	snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
	if (stat(file, &st) != 0)
		return inv_bad(c, tb_ynode_get(map, key), sub, "cannot read %s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return inv_bad(c, tb_ynode_get(map, key), sub, "%s is not a regular file", file);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return inv_bad(c, tb_ynode_get(map, key), sub,
			       "%s can be read by group or others (mode %04o); chmod 600 it", file,
			       (unsigned int)(st.st_mode & 07777));
	return 0;
}

static void persona_clear(struct tb_persona *p)
{
	free(p->os);
	free(p->address);
	free(p->user);
	free(p->key_file);
	free(p->host_key);
	memset(p, 0, sizeof(*p));
}

static const char *const ssh_keys[] = {"user", "port", "key_file", "connect_timeout_s", "command_timeout_s", NULL};

/* ssh settings shared by the top-level ssh: section and each persona. */
static int parse_ssh_settings(struct inv_ctx *c, const struct tb_ynode *map, const char *path, struct tb_persona *p)
{
	int rc;

	if ((rc = inv_get_str(c, map, path, "user", 0, tb_valid_user, "a user name", &p->user)) != 0 ||
	    (rc = inv_get_uint(c, map, path, "port", 1, 65535, &p->port)) != 0 ||
	    (rc = inv_get_str(c, map, path, "key_file", 0, tb_valid_path, "an absolute path", &p->key_file)) != 0 ||
	    (rc = inv_check_secret_file(c, map, path, "key_file",
					tb_ynode_get(map, "key_file") != NULL ? p->key_file : NULL)) != 0 ||
	    (rc = inv_get_long(c, map, path, "connect_timeout_s", 1, 120, &p->connect_timeout_s)) != 0 ||
	    (rc = inv_get_long(c, map, path, "command_timeout_s", 1, 3600, &p->command_timeout_s)) != 0)
		return rc;
	return 0;
}

static int parse_persona(struct inv_ctx *c, const char *os, const struct tb_ynode *map, const char *path,
			 struct tb_persona *p)
{
	static const char *const keys[] = {
		"address", "user", "port", "key_file", "host_key", "connect_timeout_s", "command_timeout_s", NULL};
	int rc;

	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 || (rc = inv_check_keys(c, map, path, keys)) != 0)
		return rc;
	p->os = strdup(os);
	p->port = c->ssh.port;
	p->user = xstrdup(c->ssh.user);
	p->key_file = xstrdup(c->ssh.key_file);
	p->connect_timeout_s = c->ssh.connect_timeout_s;
	p->command_timeout_s = c->ssh.command_timeout_s;
	if (p->os == NULL || (c->ssh.user && !p->user) || (c->ssh.key_file && !p->key_file))
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = inv_get_str(c, map, path, "address", 1, tb_valid_address, "an IPv4 or IPv6 address or a host name",
			      &p->address)) != 0 ||
	    (rc = parse_ssh_settings(c, map, path, p)) != 0 ||
	    (rc = inv_get_str(c, map, path, "host_key", 0, tb_valid_fingerprint,
			      "a fingerprint as ssh-keygen -lf prints it, SHA256: and 43 characters", &p->host_key)) !=
		    0)
		return rc;
	if (p->user == NULL)
		return inv_bad(c, map, path, "no ssh user: set user here or in the top-level ssh: section");
	if (p->key_file == NULL)
		return inv_bad(c, map, path, "no ssh key: set key_file here or in the top-level ssh: section");
	return 0;
}

static int parse_console(struct inv_ctx *c, const struct tb_ynode *map, const char *path, struct tb_console *con)
{
	static const char *const types[] = {"tcp", "device", "ipmi-sol", NULL};
	static const char *const keys[] = {"type", "address", "port", "device", "speed", "protocol", NULL};
	static const char *const protocols[] = {"raw", "telnet", NULL};
	int rc, t = -1, proto = 0;

	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 || (rc = inv_check_keys(c, map, path, keys)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "type", 1, types, &t)) != 0)
		return rc;
	con->type = (enum tb_console_type)(t + 1);
	con->speed = 115200;
	if (con->type != TB_CONSOLE_TCP && tb_ynode_get(map, "protocol") != NULL)
		return inv_bad(c, tb_ynode_get(map, "protocol"), path,
			       "protocol (raw | telnet) is for a tcp console only");
	if (con->type == TB_CONSOLE_TCP) {
		if ((rc = inv_get_str(c, map, path, "address", 1, tb_valid_address, "an address", &con->address)) != 0)
			return rc;
		if (tb_ynode_get(map, "port") == NULL)
			return inv_bad(c, map, path, "a tcp console needs port");
		if ((rc = inv_get_enum(c, map, path, "protocol", 0, protocols, &proto)) != 0)
			return rc;
		con->protocol = proto == 1 ? TB_CONSOLE_TELNET : TB_CONSOLE_RAW;
		return inv_get_uint(c, map, path, "port", 1, 65535, &con->port);
	}
	if (con->type == TB_CONSOLE_DEVICE) {
		if ((rc = inv_get_str(c, map, path, "device", 1, tb_valid_path, "a device path such as /dev/cuaU0",
				      &con->device)) != 0)
			return rc;
		return inv_get_uint(c, map, path, "speed", 300, 4000000, &con->speed);
	}
	return 0;
}

/* An ipmi-sol console is read through the machine's BMC: it needs an ipmi
 * power: entry (parsed before the console), whose address and login it uses. */
static int console_has_bmc(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_machine *m)
{
	if (m->console.type != TB_CONSOLE_IPMI_SOL)
		return 0;
	for (size_t i = 0; i < m->npower; i++)
		if (m->power[i].driver == TB_POWER_IPMI)
			return 0;
	return inv_bad(c, tb_ynode_get(map, "type"), path,
		       "an ipmi-sol console needs an ipmi power: entry (its BMC's address and login)");
}

/* "0004", "000a" -> "0004", "000A"; 0 when not four hex digits. */
static int efi_number(const char *s, char out[5])
{
	static const char hex[] = "0123456789abcdefABCDEF";

	if (s == NULL || strlen(s) != 4)
		return 0;
	for (int i = 0; i < 4; i++) {
		if (s[i] == '\0' || strchr(hex, s[i]) == NULL)
			return 0;
		out[i] = (char)toupper((unsigned char)s[i]);
	}
	out[4] = '\0';
	return 1;
}

/* boot.efi (optional): a mapping of OS (of os:) to its firmware Boot####. */
static int parse_boot_efi(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_ynode *os,
			  struct tb_boot *b)
{
	const struct tb_ynode *efi = tb_ynode_get(map, "efi");
	char sub[512];
	int rc;

	if (efi == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%s.efi", path);
	if ((rc = inv_want_kind(c, efi, sub, TB_Y_MAP)) != 0)
		return rc;
	b->efi = calloc(efi->n + 1, sizeof(*b->efi));
	if (b->efi == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < efi->n; i++) {
		struct tb_boot_entry *e = &b->efi[b->nefi++];
		char esub[512], num[5];

		snprintf(esub, sizeof(esub), "%s.%.60s", sub, efi->keys[i]);
		if (tb_ynode_get(os, efi->keys[i]) == NULL)
			return inv_bad(c, efi->key_nodes[i], esub, "not an OS of this machine's os: section");
		if ((rc = inv_want_kind(c, efi->items[i], esub, TB_Y_SCALAR)) != 0)
			return rc;
		if (!efi_number(efi->items[i]->scalar, num))
			return inv_bad(c, efi->items[i], esub,
				       "expected a UEFI Boot#### number: four hex digits, quoted (\"0004\")");
		e->os = strdup(efi->keys[i]);
		e->entry = strdup(num);
		if (e->os == NULL || e->entry == NULL)
			return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	}
	return 0;
}

/* The BMC boot devices testbedd may ask for (IPMI chassis bootdev, Redfish
 * BootSourceOverrideTarget: boot_paths.h). */
static int bmc_device(const char *s)
{
	static const char *const devs[] = {"disk", "pxe", "cdrom", "bios", NULL};

	for (int i = 0; devs[i] != NULL; i++)
		if (strcmp(s, devs[i]) == 0)
			return 1;
	return 0;
}

/* boot.KEY (optional): a mapping of OS (of os:) to a scalar valid() takes,
 * what (the expectation) in the error otherwise. */
static int parse_boot_map(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_ynode *os,
			  const char *key, int (*valid)(const char *), const char *what, struct tb_boot_entry **out,
			  size_t *n)
{
	const struct tb_ynode *v = tb_ynode_get(map, key);
	char sub[512];
	int rc;

	if (v == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((rc = inv_want_kind(c, v, sub, TB_Y_MAP)) != 0)
		return rc;
	if ((*out = calloc(v->n + 1, sizeof(**out))) == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < v->n; i++) {
		struct tb_boot_entry *e = &(*out)[(*n)++];
		char esub[512];

		snprintf(esub, sizeof(esub), "%s.%.60s", sub, v->keys[i]);
		if (tb_ynode_get(os, v->keys[i]) == NULL)
			return inv_bad(c, v->key_nodes[i], esub, "not an OS of this machine's os: section");
		if ((rc = inv_want_kind(c, v->items[i], esub, TB_Y_SCALAR)) != 0)
			return rc;
		if (!valid(v->items[i]->scalar))
			return inv_bad(c, v->items[i], esub, "%s", what);
		e->os = strdup(v->keys[i]);
		e->entry = strdup(v->items[i]->scalar);
		if (e->os == NULL || e->entry == NULL)
			return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	}
	return 0;
}

static int parse_boot(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_ynode *os,
		      struct tb_boot *b)
{
	static const char *const keys[] = {"loader", "default", "entries", "efi", "esp_grubenv", "bmc", NULL};
	static const char *const loaders[] = {"grub", NULL};
	const struct tb_ynode *entries;
	char sub[512];
	int rc, l = 0;

	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 || (rc = inv_check_keys(c, map, path, keys)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "loader", 1, loaders, &l)) != 0 ||
	    (rc = inv_get_str(c, map, path, "default", 1, tb_valid_name, "an OS name from os:", &b->default_os)) != 0)
		return rc;
	b->loader = strdup(loaders[l]);
	if (b->loader == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	if (tb_ynode_get(os, b->default_os) == NULL)
		return inv_bad(c, tb_ynode_get(map, "default"), path,
			       "default \"%s\" is not an OS of this machine's os: section", b->default_os);
	snprintf(sub, sizeof(sub), "%s.entries", path);
	entries = tb_ynode_get(map, "entries");
	if (entries == NULL)
		return inv_bad(c, map, sub, "missing; expected a mapping of OS to GRUB entry");
	if ((rc = inv_want_kind(c, entries, sub, TB_Y_MAP)) != 0)
		return rc;
	b->entries = calloc(entries->n + 1, sizeof(*b->entries));
	if (b->entries == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < entries->n; i++) {
		struct tb_boot_entry *e = &b->entries[b->nentries++];
		char esub[512];

		snprintf(esub, sizeof(esub), "%s.%.60s", sub, entries->keys[i]);
		if (tb_ynode_get(os, entries->keys[i]) == NULL)
			return inv_bad(c, entries->key_nodes[i], esub, "not an OS of this machine's os: section");
		if ((rc = inv_want_kind(c, entries->items[i], esub, TB_Y_SCALAR)) != 0)
			return rc;
		if (!tb_valid_entry(entries->items[i]->scalar))
			return inv_bad(
				c, entries->items[i], esub,
				"expected a GRUB entry: an index, an id or a title (1..128 printable characters)");
		e->os = strdup(entries->keys[i]);
		e->entry = strdup(entries->items[i]->scalar);
		if (e->os == NULL || e->entry == NULL)
			return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	}
	if ((rc = parse_boot_map(
		     c, map, path, os, "esp_grubenv", tb_valid_path,
		     "expected the absolute path where this OS mounts the GRUB environment block on the EFI "
		     "system partition (\"/boot/efi/grubenv\")",
		     &b->esp, &b->nesp)) != 0 ||
	    (rc = parse_boot_map(c, map, path, os, "bmc", bmc_device,
				 "expected the BMC boot device that brings this OS up: disk, pxe, cdrom or bios",
				 &b->bmc, &b->nbmc)) != 0)
		return rc;
	return parse_boot_efi(c, map, path, os, b);
}

/* "10G", "2.5G", "100M", "1000000" (bits/s; K M G T are 1000-based) -> bps; 0 when not one. */
static double link_rate(const char *s)
{
	char *end;
	double v;

	if (s == NULL || !isdigit((unsigned char)*s) || strlen(s) > 20)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s)
		return 0;
	switch (*end) {
	case 'K': v *= 1e3, end++; break;
	case 'M': v *= 1e6, end++; break;
	case 'G': v *= 1e9, end++; break;
	case 'T': v *= 1e12, end++; break;
	default: break;
	}
	return *end == '\0' && v >= 1000 && v <= 1e15 ? v : 0;
}

/* An IPv6 address with its prefix length ("2001:2:0:10::2/64"). */
static int valid_cidr6(const char *s)
{
	return strchr(s, ':') != NULL && tb_valid_cidr(s);
}

/* An IPv4 address with its prefix length ("10.0.10.2/24"): a link's
 * address (its IPv6 one is address6). */
static int valid_cidr4(const char *s)
{
	return strchr(s, ':') == NULL && tb_valid_cidr(s);
}

static int parse_link(struct inv_ctx *c, const char *name, const struct tb_ynode *map, const char *path,
		      const struct tb_ynode *os, struct tb_link *l)
{
	static const char *const keys[] = {"address", "address6", "ifname", "rate", NULL};
	const struct tb_ynode *ifn, *rate;
	const char *why;
	char sub[512];
	int rc;

	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 || (rc = inv_check_keys(c, map, path, keys)) != 0 ||
	    (rc = inv_get_str(c, map, path, "address", 1, valid_cidr4,
			      "an IPv4 address with prefix length, such as 10.0.10.2/24 (an IPv6 one goes in address6)",
			      &l->address)) != 0 ||
	    (rc = inv_get_str(c, map, path, "address6", 0, valid_cidr6,
			      "an IPv6 address with prefix length, such as 2001:2:0:10::2/64", &l->address6)) != 0)
		return rc;
	if (l->address6 != NULL && (why = tb_ipv6_unusable(l->address6)) != NULL) {
		snprintf(sub, sizeof(sub), "%s.address6", path);
		return inv_bad(c, tb_ynode_get(map, "address6"), sub,
			       "%s is %s: expected a global or unique-local IPv6 address with prefix length, such as "
			       "2001:2:0:10::2/64",
			       l->address6, why);
	}
	if ((rate = tb_ynode_get(map, "rate")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.rate", path);
		if ((rc = inv_want_kind(c, rate, sub, TB_Y_SCALAR)) != 0)
			return rc;
		if ((l->rate_bps = link_rate(rate->scalar)) == 0)
			return inv_bad(c, rate, sub,
				       "expected the link's rate in bits/s, such as 10G, 2.5G or 100M (1000-based)");
	}
	if ((l->name = strdup(name)) == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	ifn = tb_ynode_get(map, "ifname");
	if (ifn == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%s.ifname", path);
	if ((rc = inv_want_kind(c, ifn, sub, TB_Y_MAP)) != 0)
		return rc;
	l->ifnames = calloc(ifn->n + 1, sizeof(*l->ifnames));
	if (l->ifnames == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < ifn->n; i++) {
		struct tb_ifname *f = &l->ifnames[l->nifnames++];
		char isub[512];

		snprintf(isub, sizeof(isub), "%s.%.60s", sub, ifn->keys[i]);
		if (tb_ynode_get(os, ifn->keys[i]) == NULL)
			return inv_bad(c, ifn->key_nodes[i], isub, "not an OS of this machine's os: section");
		if ((rc = inv_want_kind(c, ifn->items[i], isub, TB_Y_SCALAR)) != 0)
			return rc;
		if (!tb_valid_ifname(ifn->items[i]->scalar))
			return inv_bad(c, ifn->items[i], isub,
				       "expected an interface name (1..15 of A-Z a-z 0-9 . _ -)");
		f->os = strdup(ifn->keys[i]);
		f->ifname = strdup(ifn->items[i]->scalar);
		if (f->os == NULL || f->ifname == NULL)
			return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	}
	return 0;
}

/* machines.NAME.os: one persona at least. */
static int parse_personas(struct inv_ctx *c, const struct tb_ynode *map, const char *path, struct tb_machine *m,
			  const struct tb_ynode **os_out)
{
	const struct tb_ynode *os = tb_ynode_get(map, "os");
	char sub[512];
	int rc;

	snprintf(sub, sizeof(sub), "%s.os", path);
	*os_out = os;
	if (os == NULL)
		return inv_bad(c, map, sub, "missing; every machine needs at least one OS persona to reach it by ssh");
	if ((rc = inv_want_kind(c, os, sub, TB_Y_MAP)) != 0)
		return rc;
	if (os->n == 0)
		return inv_bad(c, os, sub, "empty; every machine needs at least one OS persona");
	m->os = calloc(os->n, sizeof(*m->os));
	if (m->os == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < os->n; i++) {
		char psub[512];

		snprintf(psub, sizeof(psub), "%s.%.60s", sub, os->keys[i]);
		if (!tb_valid_name(os->keys[i]))
			return inv_bad(c, os->key_nodes[i], psub, "an OS name is 1..32 of a-z 0-9 - _");
		if ((rc = parse_persona(c, os->keys[i], os->items[i], psub, &m->os[m->nos++])) != 0)
			return rc;
	}
	return 0;
}

/* machines.NAME.power (n): the methods, in order. */
static int parse_powers(struct inv_ctx *c, const struct tb_ynode *n, const char *sub, const struct tb_ynode *machines,
			struct tb_machine *m)
{
	int rc;

	if ((rc = inv_want_kind(c, n, sub, TB_Y_SEQ)) != 0)
		return rc;
	m->power = calloc(n->n + 1, sizeof(*m->power));
	if (m->power == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < n->n; i++) {
		char psub[512];

		snprintf(psub, sizeof(psub), "%s[%zu]", sub, i);
		m->npower++;
		if ((rc = inv_parse_power(c, n->items[i], psub, machines, &m->power[i])) != 0)
			return rc;
		if (m->power[i].driver == TB_POWER_WOL && m->mac == NULL)
			return inv_bad(c, n->items[i], psub, "Wake-on-LAN needs the machine's mac");
	}
	return 0;
}

/* machines.NAME.wake_schedule (n): a cron pattern, with a power method. */
static int parse_wake(struct inv_ctx *c, const struct tb_ynode *n, const char *sub, struct tb_machine *m)
{
	char why[200];
	int rc;

	if ((rc = inv_want_kind(c, n, sub, TB_Y_SCALAR)) != 0)
		return rc;
	if (tb_cron_parse(n->scalar, &m->wake, why, sizeof(why)) != 0)
		return inv_bad(c, n, sub, "%s", why);
	if (m->npower == 0)
		return inv_bad(c, n, sub, "a wake schedule needs a power: method that can switch the machine on");
	if ((m->wake_schedule = strdup(n->scalar)) == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	return 0;
}

/* machines.NAME.links (n): the data-plane links by name. */
static int parse_links(struct inv_ctx *c, const struct tb_ynode *n, const char *sub, const struct tb_ynode *os,
		       struct tb_machine *m)
{
	int rc;

	if ((rc = inv_want_kind(c, n, sub, TB_Y_MAP)) != 0)
		return rc;
	m->links = calloc(n->n + 1, sizeof(*m->links));
	if (m->links == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < n->n; i++) {
		char lsub[512];

		snprintf(lsub, sizeof(lsub), "%s.%.60s", sub, n->keys[i]);
		if (!tb_valid_name(n->keys[i]))
			return inv_bad(c, n->key_nodes[i], lsub, "a link name is 1..32 of a-z 0-9 - _");
		m->nlinks++;
		if ((rc = parse_link(c, n->keys[i], n->items[i], lsub, os, &m->links[i])) != 0)
			return rc;
	}
	return 0;
}

/* A reason a person wrote (cannot_delay): 1..200 bytes of printable text. */
static int valid_reason(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 200 && tb_text_refused(s, n) < 0;
}

static int parse_machine(struct inv_ctx *c, const char *name, const struct tb_ynode *map,
			 const struct tb_ynode *machines, struct tb_machine *m)
{
	static const char *const keys[] = {"role",
					   "mac",
					   "power",
					   "console",
					   "boot",
					   "os",
					   "links",
					   "idle_poweroff_min",
					   "wake_schedule",
					   "boot_timeout_s",
					   "shutdown_timeout_s",
					   "cannot_delay",
					   NULL};
	static const char *const roles[] = {"host", "router", "relay", NULL};
	const struct tb_ynode *n, *os;
	char path[256], sub[512];
	int rc, role = 0;

	snprintf(path, sizeof(path), "machines.%s", name);
	m->idle_poweroff_min = -1;
	m->boot_timeout_s = 300;
	m->shutdown_timeout_s = 120;
	if ((m->name = strdup(name)) == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 || (rc = inv_check_keys(c, map, path, keys)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "role", 1, roles, &role)) != 0 ||
	    (rc = inv_get_str(c, map, path, "mac", 0, tb_valid_mac, "a MAC address such as a8:a1:59:95:87:60",
			      &m->mac)) != 0 ||
	    (rc = inv_get_int(c, map, path, "idle_poweroff_min", 0, 10080, &m->idle_poweroff_min)) != 0 ||
	    (rc = inv_get_int(c, map, path, "boot_timeout_s", 5, 3600, &m->boot_timeout_s)) != 0 ||
	    (rc = inv_get_int(c, map, path, "shutdown_timeout_s", 5, 3600, &m->shutdown_timeout_s)) != 0 ||
	    (rc = inv_get_str(c, map, path, "cannot_delay", 0, valid_reason, "why, in 1..200 printable characters",
			      &m->cannot_delay)) != 0)
		return rc;
	m->role = (enum tb_role)role;
	if ((rc = parse_personas(c, map, path, m, &os)) != 0)
		return rc;
	if ((n = tb_ynode_get(map, "power")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.power", path);
		if ((rc = parse_powers(c, n, sub, machines, m)) != 0)
			return rc;
	}
	if ((n = tb_ynode_get(map, "wake_schedule")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.wake_schedule", path);
		if ((rc = parse_wake(c, n, sub, m)) != 0)
			return rc;
	}
	if ((n = tb_ynode_get(map, "console")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.console", path);
		if ((rc = parse_console(c, n, sub, &m->console)) != 0)
			return rc;
		if ((rc = console_has_bmc(c, n, sub, m)) != 0)
			return rc;
	}
	if ((n = tb_ynode_get(map, "boot")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.boot", path);
		if ((rc = parse_boot(c, n, sub, os, &m->boot)) != 0)
			return rc;
	}
	if ((n = tb_ynode_get(map, "links")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.links", path);
		if ((rc = parse_links(c, n, sub, os, m)) != 0)
			return rc;
	}
	return 0;
}

static int parse_root(struct inv_ctx *c, const struct tb_ynode *root, struct tb_inventory *inv)
{
	static const char *const keys[] = {"version", "ssh", "machines", NULL};
	const struct tb_ynode *n, *machines;
	long version = 0;
	int rc;

	if ((rc = inv_want_kind(c, root, "(top level)", TB_Y_MAP)) != 0 ||
	    (rc = inv_check_keys(c, root, "", keys)) != 0)
		return rc;
	if (tb_ynode_get(root, "version") == NULL)
		return inv_bad(c, root, "version", "missing; this format is version: 1");
	if ((rc = inv_get_long(c, root, "", "version", 1, 1, &version)) != 0)
		return rc;
	c->ssh.port = 22;
	c->ssh.connect_timeout_s = 5;
	c->ssh.command_timeout_s = 30;
	if ((n = tb_ynode_get(root, "ssh")) != NULL) {
		if ((rc = inv_want_kind(c, n, "ssh", TB_Y_MAP)) != 0 ||
		    (rc = inv_check_keys(c, n, "ssh", ssh_keys)) != 0 ||
		    (rc = parse_ssh_settings(c, n, "ssh", &c->ssh)) != 0)
			return rc;
	}
	machines = tb_ynode_get(root, "machines");
	if (machines == NULL)
		return inv_bad(c, root, "machines", "missing; list the testbed's machines under machines:");
	if ((rc = inv_want_kind(c, machines, "machines", TB_Y_MAP)) != 0)
		return rc;
	inv->machines = calloc(machines->n + 1, sizeof(*inv->machines));
	if (inv->machines == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < machines->n; i++) {
		char path[256];

		snprintf(path, sizeof(path), "machines.%.60s", machines->keys[i]);
		if (!tb_valid_name(machines->keys[i]))
			return inv_bad(c, machines->key_nodes[i], path, "a machine name is 1..32 of a-z 0-9 - _");
		inv->nmachines++;
		if ((rc = parse_machine(c, machines->keys[i], machines->items[i], machines, &inv->machines[i])) != 0)
			return rc;
	}
	return 0;
}

static int load_tree(const char *name, struct tb_ynode *root, unsigned int flags, struct tb_inventory **out,
		     struct tb_error *err)
{
	struct inv_ctx c = {.file = name, .flags = flags, .err = err};
	struct tb_inventory *inv = calloc(1, sizeof(*inv));
	int rc;

	if (inv == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	inv->path = strdup(name);
	rc = inv->path == NULL ? tb_fail(err, TB_ERR_NOMEM, "", "out of memory") : parse_root(&c, root, inv);
	persona_clear(&c.ssh);
	if (rc != 0) {
		tb_inventory_free(inv);
		return rc;
	}
	*out = inv;
	return 0;
}

int tb_inventory_load_buffer(const char *name, const char *text, size_t len, unsigned int flags,
			     struct tb_inventory **out, struct tb_error *err)
{
	struct tb_ynode *root;
	int rc;

	*out = NULL;
	if ((rc = tb_yaml_load_buffer(name, text, len, &root, err)) != 0)
		return rc;
	rc = load_tree(name, root, flags, out, err);
	tb_ynode_free(root);
	return rc;
}

int tb_inventory_load(const char *path, unsigned int flags, struct tb_inventory **out, struct tb_error *err)
{
	struct tb_ynode *root;
	int rc;

	*out = NULL;
	if ((rc = tb_yaml_load_file(path, &root, err)) != 0)
		return rc;
	rc = load_tree(path, root, flags, out, err);
	tb_ynode_free(root);
	return rc;
}

static void machine_free(struct tb_machine *m)
{
	free(m->name);
	free(m->mac);
	free(m->wake_schedule);
	free(m->cannot_delay);
	for (size_t i = 0; i < m->npower; i++)
		inv_power_clear(&m->power[i]);
	free(m->power);
	free(m->console.address);
	free(m->console.device);
	free(m->boot.loader);
	free(m->boot.default_os);
	for (size_t i = 0; i < m->boot.nentries; i++) {
		free(m->boot.entries[i].os);
		free(m->boot.entries[i].entry);
	}
	free(m->boot.entries);
	for (size_t i = 0; i < m->boot.nefi; i++) {
		free(m->boot.efi[i].os);
		free(m->boot.efi[i].entry);
	}
	free(m->boot.efi);
	for (size_t i = 0; i < m->boot.nesp; i++) {
		free(m->boot.esp[i].os);
		free(m->boot.esp[i].entry);
	}
	free(m->boot.esp);
	for (size_t i = 0; i < m->boot.nbmc; i++) {
		free(m->boot.bmc[i].os);
		free(m->boot.bmc[i].entry);
	}
	free(m->boot.bmc);
	for (size_t i = 0; i < m->nos; i++)
		persona_clear(&m->os[i]);
	free(m->os);
	for (size_t i = 0; i < m->nlinks; i++) {
		free(m->links[i].name);
		free(m->links[i].address);
		free(m->links[i].address6);
		for (size_t j = 0; j < m->links[i].nifnames; j++) {
			free(m->links[i].ifnames[j].os);
			free(m->links[i].ifnames[j].ifname);
		}
		free(m->links[i].ifnames);
	}
	free(m->links);
}

void tb_inventory_free(struct tb_inventory *inv)
{
	if (inv == NULL)
		return;
	for (size_t i = 0; i < inv->nmachines; i++)
		machine_free(&inv->machines[i]);
	free(inv->machines);
	free(inv->path);
	free(inv);
}

const struct tb_machine *tb_inventory_find(const struct tb_inventory *inv, const char *name)
{
	for (size_t i = 0; inv != NULL && i < inv->nmachines; i++)
		if (strcmp(inv->machines[i].name, name) == 0)
			return &inv->machines[i];
	return NULL;
}

const struct tb_persona *tb_machine_persona(const struct tb_machine *m, const char *os)
{
	for (size_t i = 0; m != NULL && i < m->nos; i++)
		if (strcmp(m->os[i].os, os) == 0)
			return &m->os[i];
	return NULL;
}

void tb_persona_as_root(const struct tb_persona *p, const char *const in[], const char *out[], size_t max)
{
	size_t n = 0;

	if (strcmp(p->user, "root") != 0 && max > 3) {
		out[n++] = "sudo";
		out[n++] = "-n";
	}
	for (size_t i = 0; in[i] != NULL && n + 1 < max; i++)
		out[n++] = in[i];
	out[n] = NULL;
}

const char *tb_role_name(enum tb_role role)
{
	switch (role) {
	case TB_ROLE_HOST: return "host";
	case TB_ROLE_ROUTER: return "router";
	case TB_ROLE_RELAY: return "relay";
	}
	return "host";
}
