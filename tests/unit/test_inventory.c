/*
 * test_inventory.c - the inventory loader: the reference example parses, and
 * a table of broken inventories -> the message, with file:line:column.
 * Adding a case is adding a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "inventory.h"

static int path_of(const char *rel, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", getenv("TB_SOURCE_DIR") != NULL ? getenv("TB_SOURCE_DIR") : "..", rel);
	return 0;
}

static void test_reference_example(void **state)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	const struct tb_machine *left, *right, *router;
	char path[512];

	(void)state;
	path_of("deploy/examples/reference.yaml", path, sizeof(path));
	assert_int_equal(tb_inventory_load(path, 0, &inv, &err), 0);
	assert_int_equal(inv->nmachines, 4);
	left = tb_inventory_find(inv, "left");
	assert_non_null(left);
	assert_int_equal(left->role, TB_ROLE_HOST);
	assert_string_equal(left->mac, "a8:a1:59:95:87:60");
	assert_int_equal(left->npower, 2);
	assert_int_equal(left->power[0].driver, TB_POWER_IPMI);
	assert_int_equal(left->power[0].cipher_suite, 3);
	assert_int_equal(left->power[1].driver, TB_POWER_WOL);
	assert_int_equal(left->power[1].via, TB_WOL_RELAY);
	assert_string_equal(left->power[1].relay, "openwrt");
	assert_string_equal(left->boot.default_os, "ubuntu");
	assert_int_equal(left->boot.nentries, 2);
	assert_string_equal(tb_machine_persona(left, "freebsd")->address, "192.168.100.10");
	/* defaults from the top-level ssh: section */
	assert_string_equal(tb_machine_persona(left, "freebsd")->user, "root");
	assert_int_equal(tb_machine_persona(left, "freebsd")->port, 22);
	assert_int_equal(left->idle_poweroff_min, 60);
	assert_string_equal(left->wake_schedule, "30 7 * * mon-fri");
	assert_int_equal(left->wake.hour, 1u << 7);
	assert_null(tb_inventory_find(inv, "right")->wake_schedule);
	assert_int_equal(left->console.type, TB_CONSOLE_TCP);
	right = tb_inventory_find(inv, "right");
	assert_int_equal(right->power[1].via, TB_WOL_BROADCAST);
	assert_string_equal(right->power[1].source, "192.168.100.2");
	assert_int_equal(right->console.type, TB_CONSOLE_DEVICE);
	router = tb_inventory_find(inv, "pokeitwithastick");
	assert_int_equal(router->role, TB_ROLE_ROUTER);
	assert_int_equal(router->nlinks, 2);
	assert_true(router->links[0].rate_bps == 0);  /* not given */
	assert_true(left->links[0].rate_bps == 10e9); /* rate: 10G */
	assert_null(tb_inventory_find(inv, "nope"));
	{
		json_t *j = tb_machine_to_json(left);
		char *text = json_dumps(j, 0);

		assert_non_null(text);
		assert_null(strstr(text, "left-bmc.pass")); /* the password file's path */
		assert_null(strstr(text, "id_ed25519"));    /* the key file's path */
		assert_non_null(strstr(text, "\"cipher_suite\": 3"));
		free(text);
		json_decref(j);
	}
	tb_inventory_free(inv);
}

#define HEAD "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
#define HOST "  left:\n    role: host\n    os:\n      ubuntu: {address: 198.18.0.11}\n"

struct bad_case {
	const char *text;
	const char *expect; /* a substring of the message, with line:column */
};

static const struct bad_case bad[] = {
	{"", "t.yaml:1:1: the file is empty"},
	{"version: 1\nmachines: [\n", "t.yaml:3:1: did not find expected node content"},
	{"version: 1\n  bad: indent\n", "t.yaml:2:6: mapping values are not allowed"},
	{"machines: {}\n", "t.yaml:1:1: version: missing"},
	{"version: 2\nmachines: {}\n", "t.yaml:1:10: version: expected a whole number 1..1"},
	{"version: 1\n", "t.yaml:1:1: machines: missing"},
	{"version: 1\nmachine: {}\n", "t.yaml:2:1: machine: unknown key; allowed here: version, ssh, machines"},
	{"version: 1\nversion: 1\n", "t.yaml:2:1: duplicate key \"version\" (first at line 1)"},
	{HEAD "  left:\n    role: hots\n", "t.yaml:5:11: machines.left.role: expected one of host | router | relay"},
	{HEAD "  left:\n    os: {}\n", "t.yaml:5:5: machines.left.role: missing"},
	{HEAD "  left:\n    role: host\n", "t.yaml:5:5: machines.left.os: missing"},
	{HEAD "  Left:\n    role: host\n", "t.yaml:4:3: machines.Left: a machine name is 1..32 of a-z 0-9 - _"},
	{HEAD HOST "    colour: red\n", "t.yaml:8:5: machines.left.colour: unknown key"},
	{HEAD "  left:\n    role: host\n    os:\n      ubuntu: {address: \"not an address!\"}\n",
	 "t.yaml:7:25: machines.left.os.ubuntu.address: expected an IPv4 or IPv6 address or a host name"},
	{HEAD "  left:\n    role: host\n    os:\n      ubuntu: {address: 1.2.3.4, port: 70000}\n",
	 "t.yaml:7:40: machines.left.os.ubuntu.port: expected a whole number 1..65535, got \"70000\""},
	{HEAD "  left:\n    role: host\n    os:\n      ubuntu: {address: 1.2.3.4, host_key: abc}\n",
	 "machines.left.os.ubuntu.host_key: expected a fingerprint"},
	{"version: 1\nmachines:\n" HOST, "t.yaml:6:15: machines.left.os.ubuntu: no ssh user"},
	{HEAD HOST "    mac: 00:11:22:33:44\n", "t.yaml:8:10: machines.left.mac: expected a MAC address"},
	{HEAD HOST "    power:\n      - {driver: wol, via: raw, interface: eth0}\n",
	 "t.yaml:9:9: machines.left.power[0]: Wake-on-LAN needs the machine's mac"},
	{HEAD HOST
	 "    mac: \"02:00:00:00:00:01\"\n    power:\n      - driver: wol\n        via: relay\n        relay: openwrt\n        interface: br-lan\n",
	 "t.yaml:12:16: machines.left.power[0]: relay \"openwrt\" is not a machine with role relay"},
	{HEAD HOST "    mac: \"02:00:00:00:00:01\"\n    power:\n      - {driver: wol, via: relay, relay: openwrt}\n",
	 "machines.left.power[0]: via relay with etherwake needs interface"},
	{HEAD HOST
	 "    mac: \"02:00:00:00:00:01\"\n    power:\n      - driver: wol\n        via: broadcast\n        target: 198.18.0.255\n",
	 "machines.left.power[0]: via broadcast needs source"},
	{HEAD HOST "    mac: \"02:00:00:00:00:01\"\n    power:\n      - {driver: wol, via: carrier-pigeon}\n",
	 "t.yaml:10:28: machines.left.power[0].via: expected one of broadcast | directed | raw | relay"},
	{HEAD HOST "    power:\n      - {driver: ipmi, address: 1.2.3.4, user: ADMIN}\n",
	 "t.yaml:9:9: machines.left.power[0]: give exactly one of password_file and password_env"},
	{HEAD HOST "    power:\n      - {driver: ipmi, address: 1.2.3.4, user: ADMIN, password: ADMIN}\n",
	 "t.yaml:9:55: machines.left.power[0].password: unknown key"},
	{HEAD HOST
	 "    power:\n      - {driver: ipmi, address: 1.2.3.4, user: ADMIN, password_env: x, cipher_suite: 18}\n",
	 "machines.left.power[0].password_env: expected an environment variable name"},
	{HEAD HOST "    power:\n      - {driver: redfsh}\n",
	 "t.yaml:9:18: machines.left.power[0].driver: expected one of ipmi | wol | redfish | command"},
	/* redfish */
	{HEAD HOST "    power:\n      - {driver: redfish}\n",
	 "t.yaml:9:9: machines.left.power[0].url: missing; expected the BMC's https://HOST[:PORT]"},
	{HEAD HOST "    power:\n      - {driver: redfish, url: \"http://1.2.3.4\", user: root, password_env: X}\n",
	 "t.yaml:9:32: machines.left.power[0].url: expected the BMC's https://HOST[:PORT] (the service root's base, "
	 "no path), got \"http://1.2.3.4\""},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc:8443/redfish/v1\", user: root, password_env: X}\n",
	 "machines.left.power[0].url: expected the BMC's https://HOST[:PORT]"},
	{HEAD HOST "    power:\n      - {driver: redfish, url: \"https://bmc:70000\", user: root, password_env: X}\n",
	 "machines.left.power[0].url: expected the BMC's https://HOST[:PORT]"},
	{HEAD HOST "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root}\n",
	 "t.yaml:9:9: machines.left.power[0]: give exactly one of password_file and password_env"},
	{HEAD HOST "    power:\n      - {driver: redfish, url: \"https://bmc\", password_env: X}\n",
	 "machines.left.power[0].user: missing; expected the BMC user"},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_env: X, auth: digest}\n",
	 "machines.left.power[0].auth: expected one of basic | session, got \"digest\""},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_env: X, insecure: yes}\n",
	 "machines.left.power[0].insecure: expected one of false | true, got \"yes\""},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_env: X, insecure: true, ca_file: /ca.pem}\n",
	 "machines.left.power[0]: insecure: true turns certificate checks off, so ca_file would not be used"},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_env: X, ca_file: ca.pem}\n",
	 "machines.left.power[0].ca_file: expected an absolute path"},
	{HEAD HOST
	 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_env: X, system: \"../x\"}\n",
	 "machines.left.power[0].system: expected a ComputerSystem id (1..64 of A-Z a-z 0-9 . _ -)"},
	{HEAD HOST "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password: x}\n",
	 "machines.left.power[0].password: unknown key; allowed here: driver, url, system, user, password_file, "
	 "password_env, auth, ca_file, insecure"},
	/* command */
	{HEAD HOST "    power:\n      - {driver: command}\n",
	 "t.yaml:9:9: machines.left.power[0]: a command method needs at least one of on, off, cycle, reset, soft, status"},
	{HEAD HOST "    power:\n      - {driver: command, on: \"pm --on {host}\"}\n",
	 "t.yaml:9:31: machines.left.power[0].on: expected a list, found a single value"},
	{HEAD HOST "    power:\n      - {driver: command, on: []}\n",
	 "machines.left.power[0].on: expected a list of 1..64 words: the program and its arguments"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm, \"{hots}\"]}\n",
	 "t.yaml:9:36: machines.left.power[0].on[1]: unknown placeholder {hots}; known: {host} {mac} {bmc}"},
	{HEAD HOST "    power:\n      - {driver: command, on: [\"{host}\"]}\n",
	 "machines.left.power[0].on[0]: expected a program name or absolute path (no placeholder)"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm, [a]]}\n",
	 "machines.left.power[0].on[1]: expected a single value, found a list"},
	{HEAD HOST "    power:\n      - {driver: command, status: [pm, -q]}\n",
	 "machines.left.power[0]: status needs on_pattern or off_pattern"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm], on_pattern: on}\n",
	 "machines.left.power[0]: on_pattern and off_pattern read the output of status, which is not given"},
	{HEAD HOST "    power:\n      - {driver: command, status: [pm], on_pattern: \"(on\"}\n",
	 "machines.left.power[0].on_pattern: not a POSIX extended regular expression"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm, \"{bmc}\"]}\n",
	 "machines.left.power[0]: on uses {bmc} but the method has no address"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm], address: \"pdu 1\"}\n",
	 "machines.left.power[0].address: expected the power switch's address or HOST:PORT, no spaces (for {bmc})"},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm], timeout_s: 0}\n",
	 "machines.left.power[0].timeout_s: expected a whole number 1..3600, got \"0\""},
	{HEAD HOST "    power:\n      - {driver: command, on: [pm], shell: true}\n",
	 "machines.left.power[0].shell: unknown key; allowed here: driver, on, off, cycle, reset, soft, status, "
	 "on_pattern, off_pattern, address, timeout_s"},
	{HEAD HOST "    power: {driver: ipmi}\n", "t.yaml:8:12: machines.left.power: expected a list, found a mapping"},
	{HEAD HOST "    boot: {loader: grub, default: windows, entries: {ubuntu: \"0\"}}\n",
	 "machines.left.boot: default \"windows\" is not an OS of this machine's os: section"},
	{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {freebsd: \"4\"}}\n",
	 "machines.left.boot.entries.freebsd: not an OS of this machine's os: section"},
	{HEAD HOST "    boot: {loader: lilo, default: ubuntu, entries: {}}\n",
	 "machines.left.boot.loader: expected one of grub"},
	{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {ubuntu: \"12\"}}\n",
	 "t.yaml:8:81: machines.left.boot.efi.ubuntu: expected a UEFI Boot#### number"},
	{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {ubuntu: \"00g1\"}}\n",
	 "machines.left.boot.efi.ubuntu: expected a UEFI Boot#### number"},
	{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: {windows: \"0003\"}}\n",
	 "machines.left.boot.efi.windows: not an OS of this machine's os: section"},
	{HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}, efi: \"0001\"}\n",
	 "machines.left.boot.efi"},
	{HEAD HOST "    links:\n      lan10: {address: 10.0.10.2}\n",
	 "t.yaml:9:24: machines.left.links.lan10.address: expected an IPv4 address with prefix length"},
	{HEAD HOST "    links:\n      lan10: {address: \"2001:2:0:10::2/64\"}\n",
	 "t.yaml:9:24: machines.left.links.lan10.address: expected an IPv4 address with prefix length, such as "
	 "10.0.10.2/24 (an IPv6 one goes in address6)"},
	{HEAD HOST "    links:\n      lan10: {address: 10.0.10.2/24, rate: fast}\n",
	 "t.yaml:9:44: machines.left.links.lan10.rate: expected the link's rate in bits/s, such as 10G"},
	{HEAD HOST "    links:\n      lan10: {address: 10.0.10.2/24, rate: 10X}\n",
	 "machines.left.links.lan10.rate: expected the link's rate"},
	{HEAD HOST
	 "    links:\n      lan10: {address: 10.0.10.2/24, ifname: {ubuntu: \"this-name-is-far-too-long\"}}\n",
	 "machines.left.links.lan10.ifname.ubuntu: expected an interface name"},
	{HEAD HOST "    console: {type: tcp, address: 127.0.0.1}\n", "machines.left.console: a tcp console needs port"},
	{HEAD HOST "    console: {type: ipmi-sol}\n",
	 "t.yaml:8:21: machines.left.console: an ipmi-sol console needs an ipmi power: entry"},
	{HEAD HOST "    idle_poweroff_min: -5\n", "machines.left.idle_poweroff_min: expected a whole number 0..10080"},
	{HEAD HOST "    idle_poweroff_min: \"60\"\n", "machines.left.idle_poweroff_min: expected a whole number"},
	{HEAD HOST "    wake_schedule: \"30 7 * *\"\n",
	 "t.yaml:8:20: machines.left.wake_schedule: \"30 7 * *\" has 4 fields; a schedule has five"},
	{HEAD HOST "    wake_schedule: \"0 25 * * *\"\n",
	 "machines.left.wake_schedule: hour: \"25\": values are 0..23"},
	{HEAD HOST "    wake_schedule: [\"0 7 * * *\"]\n", "machines.left.wake_schedule: expected"},
	{HEAD HOST "    wake_schedule: \"0 7 * * *\"\n",
	 "machines.left.wake_schedule: a wake schedule needs a power: method that can switch the machine on"},
	{"version: 1\nssh: {user: root, key_file: relative/key}\nmachines: {}\n",
	 "t.yaml:2:29: ssh.key_file: expected an absolute path"},
	{"version: 1\nssh: &a {user: root}\nmachines: {}\n", "anchors (&name) are not supported"},
};

static void test_bad_inventories(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_inventory *inv = NULL;
		struct tb_error err = {0};
		int rc = tb_inventory_load_buffer("t.yaml", bad[i].text, strlen(bad[i].text), 0, &inv, &err);

		if (rc != TB_ERR_CONFIG || inv != NULL || strstr(err.message, bad[i].expect) == NULL) {
			fprintf(stderr, "case %zu: rc %d, message \"%s\"\n  expected \"%s\"\n", i, rc, err.message,
				bad[i].expect);
			failures++;
		}
		tb_inventory_free(inv);
	}
	assert_int_equal(failures, 0);
}

/* The redfish and command methods: what is kept, what the API shows. */
static void test_redfish_and_command(void **state)
{
	static const char text[] = HEAD HOST "    mac: \"02:00:00:00:00:01\"\n"
					     "    power:\n"
					     "      - driver: redfish\n"
					     "        url: \"https://[fd00::12]:8443/\"\n"
					     "        user: admin\n"
					     "        password_file: /etc/testbedd/left-redfish.pass\n"
					     "        auth: session\n"
					     "        insecure: true\n"
					     "      - driver: redfish\n"
					     "        url: https://bmc-left.lab\n"
					     "        system: System.Embedded.1\n"
					     "        user: admin\n"
					     "        password_env: TB_LEFT_BMC\n"
					     "        ca_file: /etc/testbedd/bmc-ca.pem\n"
					     "      - driver: command\n"
					     "        address: \"pdu1.lab:10101\"\n"
					     "        on: [pm, -h, \"{bmc}\", --on, \"{host}\"]\n"
					     "        off: [/usr/local/bin/plug, \"mac={mac}\", \"{X} {x\"]\n"
					     "        status: [pm, -h, \"{bmc}\", --query, \"{host}\"]\n"
					     "        on_pattern: \": on$\"\n"
					     "        off_pattern: \": off$\"\n"
					     "        timeout_s: 10\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	const struct tb_machine *m;
	char *js;
	json_t *j;

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	m = tb_inventory_find(inv, "left");
	assert_int_equal(m->npower, 3);
	assert_int_equal(m->power[0].driver, TB_POWER_REDFISH);
	assert_string_equal(m->power[0].url, "https://[fd00::12]:8443/");
	assert_null(m->power[0].system);
	assert_int_equal(m->power[0].auth, TB_REDFISH_SESSION);
	assert_int_equal(m->power[0].insecure, 1);
	assert_int_equal(m->power[1].auth, TB_REDFISH_BASIC);
	assert_string_equal(m->power[1].system, "System.Embedded.1");
	assert_string_equal(m->power[1].ca_file, "/etc/testbedd/bmc-ca.pem");
	assert_int_equal(m->power[1].insecure, 0);
	assert_int_equal(m->power[2].driver, TB_POWER_COMMAND);
	assert_string_equal(m->power[2].argv[0][2], "{bmc}");
	assert_null(m->power[2].argv[0][5]);
	assert_string_equal(m->power[2].argv[1][2], "{X} {x"); /* not a placeholder: kept */
	assert_null(m->power[2].argv[2]);                      /* no cycle */
	assert_non_null(m->power[2].argv[5]);                  /* status */
	assert_string_equal(m->power[2].on_pattern, ": on$");
	assert_int_equal(m->power[2].timeout_s, 10);

	j = tb_machine_to_json(m);
	js = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(js);
	assert_null(strstr(js, "left-redfish.pass"));
	assert_null(strstr(js, "TB_LEFT_BMC"));
	assert_non_null(strstr(js, "{\"auth\":\"session\",\"ca_file\":null,\"driver\":\"redfish\",\"insecure\":true,"
				   "\"system\":null,\"url\":\"https://[fd00::12]:8443/\",\"user\":\"admin\"}"));
	assert_non_null(strstr(js, "\"insecure\":false"));
	assert_non_null(strstr(js, "{\"actions\":[\"on\",\"off\",\"status\"],\"address\":\"pdu1.lab:10101\","
				   "\"driver\":\"command\",\"timeout_s\":10}"));
	free(js);
	json_decref(j);
	tb_inventory_free(inv);
}

/* A relay that runs wakeonlan needs no interface (it sends to target, or to
 * the broadcast address); one that runs etherwake does (the bad table). */
static void test_relay_wakeonlan_without_interface(void **state)
{
	static const char text[] = HEAD HOST "    mac: \"02:00:00:00:00:01\"\n"
					     "    power:\n"
					     "      - {driver: wol, via: relay, relay: openwrt, command: wakeonlan}\n"
					     "  openwrt:\n"
					     "    role: relay\n"
					     "    os:\n"
					     "      openwrt: {address: 198.18.0.1}\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	const struct tb_machine *m;

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	m = tb_inventory_find(inv, "left");
	assert_int_equal(m->power[0].via, TB_WOL_RELAY);
	assert_string_equal(m->power[0].command, "wakeonlan");
	assert_null(m->power[0].interface);
	tb_inventory_free(inv);
}

/* An ipmi-sol console with an ipmi power entry (its BMC) loads; without one
 * it is refused (test_bad_inventories). */
static void test_ipmi_sol_with_its_bmc(void **state)
{
	static const char text[] = HEAD HOST
		"    power:\n"
		"      - {driver: ipmi, address: 1.2.3.4, user: ADMIN, password_env: BMC_PW}\n"
		"    console: {type: ipmi-sol}\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	assert_int_equal(tb_inventory_find(inv, "left")->console.type, TB_CONSOLE_IPMI_SOL);
	tb_inventory_free(inv);
}

/* With TB_INV_CHECK_FILES a key file must exist and be private. */
static void test_secret_file_modes(void **state)
{
	char dir[] = "/tmp/tbinv-XXXXXX", key[128], pass[128], text[1024];
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(key, sizeof(key), "%s/key", dir);
	snprintf(text, sizeof(text), "version: 1\nssh: {user: root, key_file: %s}\nmachines:\n" HOST, key);
	/* missing */
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), TB_INV_CHECK_FILES, &inv, &err),
			 TB_ERR_CONFIG);
	assert_non_null(strstr(err.message, "ssh.key_file: cannot read"));
	f = fopen(key, "w");
	assert_non_null(f);
	fputs("key\n", f);
	fclose(f);
	chmod(key, 0644);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), TB_INV_CHECK_FILES, &inv, &err),
			 TB_ERR_CONFIG);
	assert_non_null(strstr(err.message, "can be read by group or others (mode 0644); chmod 600 it"));
	chmod(key, 0600);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), TB_INV_CHECK_FILES, &inv, &err), 0);
	assert_non_null(inv);
	tb_inventory_free(inv);
	inv = NULL;
	/* a redfish password file too */
	snprintf(pass, sizeof(pass), "%s/pass", dir);
	snprintf(text, sizeof(text),
		 "version: 1\nssh: {user: root, key_file: %s}\nmachines:\n" HOST
		 "    power:\n      - {driver: redfish, url: \"https://bmc\", user: root, password_file: %s}\n",
		 key, pass);
	f = fopen(pass, "w");
	assert_non_null(f);
	fputs("secret\n", f);
	fclose(f);
	chmod(pass, 0640);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), TB_INV_CHECK_FILES, &inv, &err),
			 TB_ERR_CONFIG);
	assert_non_null(strstr(err.message, "machines.left.power[0].password_file: "));
	assert_non_null(strstr(err.message, "(mode 0640); chmod 600 it"));
	chmod(pass, 0600);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), TB_INV_CHECK_FILES, &inv, &err), 0);
	tb_inventory_free(inv);
	unlink(pass);
	unlink(key);
	rmdir(dir);
}

/* A command as root on a persona: sudo -n in front only for another user;
 * cut to the room given, always NULL-ended. */
static void test_persona_as_root(void **state)
{
	struct tb_persona root = {.user = "root"}, tb = {.user = "tb"};
	const char *in[] = {"sysctl", "-w", "a.b=1", NULL}, *out[8];

	(void)state;
	tb_persona_as_root(&root, in, out, 8);
	assert_string_equal(out[0], "sysctl");
	assert_null(out[3]);
	tb_persona_as_root(&tb, in, out, 8);
	assert_string_equal(out[0], "sudo");
	assert_string_equal(out[1], "-n");
	assert_string_equal(out[2], "sysctl");
	assert_string_equal(out[4], "a.b=1");
	assert_null(out[5]);
	tb_persona_as_root(&tb, in, out, 4);
	assert_string_equal(out[2], "sysctl");
	assert_null(out[3]);
}

/* boot.efi (OS -> UEFI Boot####): parsed and upper-cased; absent is none. */
static void test_boot_efi(void **state)
{
	const char *with = HEAD HOST "      freebsd: {address: 198.18.0.12}\n"
				     "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"},"
				     " efi: {ubuntu: \"0001\", freebsd: \"000a\"}}\n";
	const char *without = HEAD HOST "    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\"}}\n";
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", with, strlen(with), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].boot.nefi, 2);
	assert_string_equal(inv->machines[0].boot.efi[0].os, "ubuntu");
	assert_string_equal(inv->machines[0].boot.efi[0].entry, "0001");
	assert_string_equal(inv->machines[0].boot.efi[1].os, "freebsd");
	assert_string_equal(inv->machines[0].boot.efi[1].entry, "000A");
	tb_inventory_free(inv);
	inv = NULL;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", without, strlen(without), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].boot.nefi, 0);
	tb_inventory_free(inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_example),
		cmocka_unit_test(test_bad_inventories),
		cmocka_unit_test(test_redfish_and_command),
		cmocka_unit_test(test_secret_file_modes),
		cmocka_unit_test(test_relay_wakeonlan_without_interface),
		cmocka_unit_test(test_ipmi_sol_with_its_bmc),
		cmocka_unit_test(test_persona_as_root),
		cmocka_unit_test(test_boot_efi),
	};

	return cmocka_run_group_tests_name("inventory", tests, NULL, NULL);
}
