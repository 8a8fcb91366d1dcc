/*
 * inventory_power.c - one entry of a machine's power: list (ipmi, wol,
 * redfish, command), validated as inventory.h promises.  See README.md,
 * "Describing a testbed", for the keys.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory_internal.h"
#include "validate.h"

/* ipmi and wol: pm->driver is set. */
static int parse_ipmi_wol(struct inv_ctx *c, const struct tb_ynode *map, const char *path,
			  const struct tb_ynode *machines, struct tb_power_method *pm)
{
	static const char *const ipmi_keys[] = {"driver",        "address",      "port",         "user",
						"password_file", "password_env", "cipher_suite", NULL};
	static const char *const wol_keys[] = {"driver", "via",    "relay", "interface",     "command",
					       "target", "source", "port",  "secureon_file", NULL};
	static const char *const vias[] = {"broadcast", "directed", "raw", "relay", NULL};
	static const char *const commands[] = {"etherwake", "wakeonlan", NULL};
	int rc, v = -1, cmd = 0;

	if (pm->driver == TB_POWER_IPMI) {
		pm->port = 623;
		pm->cipher_suite = 3;
		if ((rc = inv_check_keys(c, map, path, ipmi_keys)) != 0 ||
		    (rc = inv_get_str(c, map, path, "address", 1, tb_valid_address, "the BMC's address",
				      &pm->address)) != 0 ||
		    (rc = inv_get_uint(c, map, path, "port", 1, 65535, &pm->port)) != 0 ||
		    (rc = inv_get_str(c, map, path, "user", 1, tb_valid_user, "the BMC user", &pm->user)) != 0 ||
		    (rc = inv_get_str(c, map, path, "password_file", 0, tb_valid_path, "an absolute path",
				      &pm->password_file)) != 0 ||
		    (rc = inv_check_secret_file(c, map, path, "password_file", pm->password_file)) != 0 ||
		    (rc = inv_get_str(c, map, path, "password_env", 0, tb_valid_env,
				      "an environment variable name (A-Z, 0-9, _)", &pm->password_env)) != 0 ||
		    (rc = inv_get_int(c, map, path, "cipher_suite", 0, 17, &pm->cipher_suite)) != 0)
			return rc;
		if ((pm->password_file == NULL) == (pm->password_env == NULL))
			return inv_bad(c, map, path, "give exactly one of password_file and password_env");
		return 0;
	}
	pm->port = 9;
	if ((rc = inv_check_keys(c, map, path, wol_keys)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "via", 1, vias, &v)) != 0 ||
	    (rc = inv_get_str(c, map, path, "relay", 0, tb_valid_name, "a machine name", &pm->relay)) != 0 ||
	    (rc = inv_get_str(c, map, path, "interface", 0, tb_valid_ifname, "an interface name", &pm->interface)) !=
		    0 ||
	    (rc = inv_get_enum(c, map, path, "command", 0, commands, &cmd)) != 0 ||
	    (rc = inv_get_str(c, map, path, "target", 0, tb_valid_ipv4, "an IPv4 address", &pm->target)) != 0 ||
	    (rc = inv_get_str(c, map, path, "source", 0, tb_valid_ipv4, "an IPv4 address", &pm->source)) != 0 ||
	    (rc = inv_get_str(c, map, path, "secureon_file", 0, tb_valid_path, "an absolute path",
			      &pm->secureon_file)) != 0 ||
	    (rc = inv_check_secret_file(c, map, path, "secureon_file", pm->secureon_file)) != 0)
		return rc;
	if (tb_ynode_get(map, "port") != NULL) {
		if ((rc = inv_get_uint(c, map, path, "port", 7, 9, &pm->port)) != 0)
			return rc;
		if (pm->port == 8)
			return inv_bad(c, tb_ynode_get(map, "port"), path, "Wake-on-LAN uses port 7 or 9");
	}
	pm->via = (enum tb_wol_via)v;
	pm->command = strdup(commands[cmd]);
	if (pm->command == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	switch (pm->via) {
	case TB_WOL_BROADCAST:
	case TB_WOL_DIRECTED:
		if (pm->target == NULL)
			return inv_bad(c, map, path, "via %s needs target: the %s address to send to", vias[v],
				       pm->via == TB_WOL_BROADCAST ? "broadcast" : "host's");
		if (pm->source == NULL && pm->interface == NULL)
			return inv_bad(c, map, path,
				       "via %s needs source (an address of this machine) or interface: "
				       "an unbound packet leaves by the default route",
				       vias[v]);
		break;
	case TB_WOL_RAW:
		if (pm->interface == NULL)
			return inv_bad(c, map, path, "via raw needs interface: the interface to send the frame on");
		break;
	case TB_WOL_RELAY: {
		const struct tb_ynode *rm, *role;

		if (pm->relay == NULL)
			return inv_bad(c, map, path, "via relay needs relay: the name of a machine with role relay");
		if (pm->interface == NULL && strcmp(pm->command, "etherwake") == 0)
			return inv_bad(
				c, map, path,
				"via relay with etherwake needs interface: the relay's interface towards the host"
				" (wakeonlan sends to target, or to the broadcast address, and needs none)");
		rm = tb_ynode_get(machines, pm->relay);
		role = tb_ynode_get(rm, "role");
		if (rm == NULL || role == NULL || role->kind != TB_Y_SCALAR || strcmp(role->scalar, "relay") != 0)
			return inv_bad(c, tb_ynode_get(map, "relay"), path,
				       "relay \"%s\" is not a machine with role relay in this inventory", pm->relay);
		break;
	}
	}
	return 0;
}

/*
 * "https://HOST[:PORT]" with an optional trailing "/": HOST a DNS name, an
 * IPv4 address or [IPv6].  Plain http is refused: Redfish sends the
 * password (basic) or the session's token with every request.
 */
static int valid_redfish_url(const char *s)
{
	const char *p, *end;
	char host[256];
	size_t n;

	if (strncmp(s, "https://", 8) != 0)
		return 0;
	p = s + 8;
	if (*p == '[') {
		end = strchr(p, ']');
		if (end == NULL || (size_t)(end - p - 1) >= sizeof(host))
			return 0;
		memcpy(host, p + 1, (size_t)(end - p - 1));
		host[end - p - 1] = '\0';
		if (strchr(host, ':') == NULL || !tb_valid_address(host))
			return 0;
		p = end + 1;
	} else {
		n = strcspn(p, ":/");
		if (n == 0 || n >= sizeof(host))
			return 0;
		memcpy(host, p, n);
		host[n] = '\0';
		if (!tb_valid_address(host) || strchr(host, ':') != NULL)
			return 0;
		p += n;
	}
	if (*p == ':') {
		long port = 0;

		p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p) && port <= 65535)
			port = port * 10 + (*p++ - '0');
		if (port < 1 || port > 65535)
			return 0;
	}
	return *p == '\0' || strcmp(p, "/") == 0;
}

/* A Redfish resource id as it appears in a URL path segment. */
static int valid_system_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("._-", *s) == NULL)
			return 0;
	return 1;
}

static int parse_redfish(struct inv_ctx *c, const struct tb_ynode *map, const char *path, struct tb_power_method *pm)
{
	static const char *const keys[] = {"driver",       "url",  "system",  "user",     "password_file",
					   "password_env", "auth", "ca_file", "insecure", NULL};
	static const char *const auths[] = {"basic", "session", NULL};
	static const char *const bools[] = {"false", "true", NULL};
	int rc, auth = 0, insecure = 0;

	if ((rc = inv_check_keys(c, map, path, keys)) != 0 ||
	    (rc = inv_get_str(c, map, path, "url", 1, valid_redfish_url,
			      "the BMC's https://HOST[:PORT] (the service root's base, no path)", &pm->url)) != 0 ||
	    (rc = inv_get_str(c, map, path, "system", 0, valid_system_id,
			      "a ComputerSystem id (1..64 of A-Z a-z 0-9 . _ -)", &pm->system)) != 0 ||
	    (rc = inv_get_str(c, map, path, "user", 1, tb_valid_user, "the BMC user", &pm->user)) != 0 ||
	    (rc = inv_get_str(c, map, path, "password_file", 0, tb_valid_path, "an absolute path",
			      &pm->password_file)) != 0 ||
	    (rc = inv_check_secret_file(c, map, path, "password_file", pm->password_file)) != 0 ||
	    (rc = inv_get_str(c, map, path, "password_env", 0, tb_valid_env,
			      "an environment variable name (A-Z, 0-9, _)", &pm->password_env)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "auth", 0, auths, &auth)) != 0 ||
	    (rc = inv_get_str(c, map, path, "ca_file", 0, tb_valid_path, "an absolute path", &pm->ca_file)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "insecure", 0, bools, &insecure)) != 0)
		return rc;
	if ((pm->password_file == NULL) == (pm->password_env == NULL))
		return inv_bad(c, map, path, "give exactly one of password_file and password_env");
	if (insecure && pm->ca_file != NULL)
		return inv_bad(c, tb_ynode_get(map, "insecure"), path,
			       "insecure: true turns certificate checks off, so ca_file would not be used: "
			       "give one of them");
	pm->auth = (enum tb_redfish_auth)auth;
	pm->insecure = insecure;
	return 0;
}

/*
 * Placeholders in a command template: {host}, {mac}, {bmc}.  Any other
 * {lowercase_word} is a mistake (a typo would otherwise reach the program
 * as literal text); other braces are kept as they are.
 */
static int check_placeholders(const char *s, char *bad_word, size_t sz)
{
	static const char *const known[] = {"{host}", "{mac}", "{bmc}", NULL};

	for (const char *p = strchr(s, '{'); p != NULL; p = strchr(p + 1, '{')) {
		size_t n = 1;
		int ok = 0;

		while (p[n] != '\0' && (islower((unsigned char)p[n]) || p[n] == '_'))
			n++;
		if (n == 1 || p[n] != '}')
			continue;
		for (int i = 0; known[i] != NULL; i++)
			ok |= strncmp(p, known[i], n + 1) == 0 && strlen(known[i]) == n + 1;
		if (!ok) {
			snprintf(bad_word, sz, "%.*s", (int)(n + 1 < 40 ? n + 1 : 40), p);
			return 0;
		}
	}
	return 1;
}

/* A command method's address: what {bmc} stands for, "pdu1", "10.0.0.5:10101",
 * "[fd00::5]:23": 1..255 printable bytes without spaces.  It only ever
 * reaches a program as (part of) one argument, never a shell. */
static int valid_command_address(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 255)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f)
			return 0;
	return 1;
}

#define CMD_MAX_ARGS 64
#define CMD_MAX_ARG_LEN 1024

static int parse_argv(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, char ***out)
{
	const struct tb_ynode *n = tb_ynode_get(map, key);
	char sub[512], word[48];
	int rc;

	if (n == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((rc = inv_want_kind(c, n, sub, TB_Y_SEQ)) != 0)
		return rc;
	if (n->n == 0 || n->n > CMD_MAX_ARGS)
		return inv_bad(c, n, sub, "expected a list of 1..%d words: the program and its arguments",
			       CMD_MAX_ARGS);
	*out = calloc(n->n + 1, sizeof(**out));
	if (*out == NULL)
		return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; i < n->n; i++) {
		const struct tb_ynode *it = n->items[i];
		char isub[540];

		snprintf(isub, sizeof(isub), "%s[%zu]", sub, i);
		if ((rc = inv_want_kind(c, it, isub, TB_Y_SCALAR)) != 0)
			return rc;
		if (strlen(it->scalar) > CMD_MAX_ARG_LEN)
			return inv_bad(c, it, isub, "longer than %d bytes", CMD_MAX_ARG_LEN);
		if (i == 0 && (it->scalar[0] == '\0' || it->scalar[0] == '-' || strchr(it->scalar, '{') != NULL))
			return inv_bad(c, it, isub,
				       "expected a program name or absolute path (no placeholder), "
				       "got \"%.80s\"",
				       it->scalar);
		if (!check_placeholders(it->scalar, word, sizeof(word)))
			return inv_bad(c, it, isub, "unknown placeholder %s; known: {host} {mac} {bmc}", word);
		if (((*out)[i] = strdup(it->scalar)) == NULL)
			return tb_fail(c->err, TB_ERR_NOMEM, "", "out of memory");
	}
	return 0;
}

static int check_regex(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const char *key, const char *re)
{
	regex_t rx;
	char sub[512], what[200];
	int rc;

	if (re == NULL)
		return 0;
	if ((rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &rx, what, sizeof(what));
		snprintf(sub, sizeof(sub), "%s.%s", path, key);
		return inv_bad(c, tb_ynode_get(map, key), sub, "not a POSIX extended regular expression: %s", what);
	}
	regfree(&rx);
	return 0;
}

static int parse_command(struct inv_ctx *c, const struct tb_ynode *map, const char *path, struct tb_power_method *pm)
{
	/* the order of enum tb_power_op */
	static const char *const actions[TB_POWER_COMMAND_SLOTS] = {"on", "off", "cycle", "reset", "soft", "status"};
	static const char *const keys[] = {"driver", "on",         "off",         "cycle",   "reset",     "soft",
					   "status", "on_pattern", "off_pattern", "address", "timeout_s", NULL};
	int rc, any = 0;

	pm->timeout_s = 30;
	if ((rc = inv_check_keys(c, map, path, keys)) != 0)
		return rc;
	for (int i = 0; i < TB_POWER_COMMAND_SLOTS; i++) {
		if ((rc = parse_argv(c, map, path, actions[i], &pm->argv[i])) != 0)
			return rc;
		any |= pm->argv[i] != NULL;
	}
	if ((rc = inv_get_str(c, map, path, "on_pattern", 0, NULL, NULL, &pm->on_pattern)) != 0 ||
	    (rc = check_regex(c, map, path, "on_pattern", pm->on_pattern)) != 0 ||
	    (rc = inv_get_str(c, map, path, "off_pattern", 0, NULL, NULL, &pm->off_pattern)) != 0 ||
	    (rc = check_regex(c, map, path, "off_pattern", pm->off_pattern)) != 0 ||
	    (rc = inv_get_str(c, map, path, "address", 0, valid_command_address,
			      "the power switch's address or HOST:PORT, no spaces (for {bmc})", &pm->address)) != 0 ||
	    (rc = inv_get_int(c, map, path, "timeout_s", 1, 3600, &pm->timeout_s)) != 0)
		return rc;
	if (!any)
		return inv_bad(c, map, path,
			       "a command method needs at least one of on, off, cycle, reset, soft, "
			       "status: an argv list");
	if (pm->argv[TB_POWER_COMMAND_SLOTS - 1] != NULL && pm->on_pattern == NULL && pm->off_pattern == NULL)
		return inv_bad(c, tb_ynode_get(map, "status"), path,
			       "status needs on_pattern or off_pattern: how to read its output");
	if (pm->argv[TB_POWER_COMMAND_SLOTS - 1] == NULL && (pm->on_pattern != NULL || pm->off_pattern != NULL))
		return inv_bad(c, map, path,
			       "on_pattern and off_pattern read the output of status, which is not given");
	for (int i = 0; i < TB_POWER_COMMAND_SLOTS; i++)
		for (size_t j = 0; pm->argv[i] != NULL && pm->argv[i][j] != NULL; j++)
			if (strstr(pm->argv[i][j], "{bmc}") != NULL && pm->address == NULL)
				return inv_bad(c, tb_ynode_get(map, actions[i]), path,
					       "%s uses {bmc} but the method has no address", actions[i]);
	return 0;
}

int inv_parse_power(struct inv_ctx *c, const struct tb_ynode *map, const char *path, const struct tb_ynode *machines,
		    struct tb_power_method *pm)
{
	static const char *const drivers[] = {"ipmi", "wol", "redfish", "command", NULL};
	int rc, d = -1;

	if ((rc = inv_want_kind(c, map, path, TB_Y_MAP)) != 0 ||
	    (rc = inv_get_enum(c, map, path, "driver", 1, drivers, &d)) != 0)
		return rc;
	pm->driver = (enum tb_power_kind)d;
	switch (pm->driver) {
	case TB_POWER_REDFISH: return parse_redfish(c, map, path, pm);
	case TB_POWER_COMMAND: return parse_command(c, map, path, pm);
	case TB_POWER_IPMI:
	case TB_POWER_WOL: break;
	}
	return parse_ipmi_wol(c, map, path, machines, pm);
}

void inv_power_clear(struct tb_power_method *pm)
{
	free(pm->address);
	free(pm->user);
	free(pm->password_file);
	free(pm->password_env);
	free(pm->relay);
	free(pm->interface);
	free(pm->command);
	free(pm->target);
	free(pm->source);
	free(pm->secureon_file);
	free(pm->url);
	free(pm->system);
	free(pm->ca_file);
	for (int i = 0; i < TB_POWER_COMMAND_SLOTS; i++) {
		for (size_t j = 0; pm->argv[i] != NULL && pm->argv[i][j] != NULL; j++)
			free(pm->argv[i][j]);
		free(pm->argv[i]);
	}
	free(pm->on_pattern);
	free(pm->off_pattern);
	memset(pm, 0, sizeof(*pm));
}
