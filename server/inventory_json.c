/* inventory_json.c - the public view of a machine for the API: everything
 * the inventory says but secrets and the paths of secret files. */
#include "inventory.h"

static json_t *str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *power_to_json(const struct tb_power_method *p)
{
	static const char *const vias[] = {"broadcast", "directed", "raw", "relay"};

	if (p->driver == TB_POWER_REDFISH)
		/* insecure is shown so that the UI can say the BMC's certificate is not checked */
		return json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:b}", "driver", "redfish", "url", p->url, "system",
				 str_or_null(p->system), "user", p->user, "auth",
				 p->auth == TB_REDFISH_SESSION ? "session" : "basic", "ca_file",
				 str_or_null(p->ca_file), "insecure", p->insecure);
	if (p->driver == TB_POWER_COMMAND) {
		static const char *const actions[TB_POWER_COMMAND_SLOTS] = {"on",    "off",  "cycle",
									    "reset", "soft", "status"};
		json_t *a = json_array();

		for (int i = 0; i < TB_POWER_COMMAND_SLOTS; i++)
			if (p->argv[i] != NULL)
				json_array_append_new(a, json_string(actions[i]));
		return json_pack("{s:s, s:o, s:o, s:i}", "driver", "command", "actions", a, "address",
				 str_or_null(p->address), "timeout_s", p->timeout_s);
	}
	if (p->driver == TB_POWER_IPMI)
		return json_pack("{s:s, s:s, s:I, s:s, s:i}", "driver", "ipmi", "address", p->address, "port",
				 (json_int_t)p->port, "user", p->user, "cipher_suite", p->cipher_suite);
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:b}", "driver", "wol", "via", vias[p->via], "relay",
			 str_or_null(p->relay), "interface", str_or_null(p->interface), "command",
			 str_or_null(p->via == TB_WOL_RELAY ? p->command : NULL), "target", str_or_null(p->target),
			 "source", str_or_null(p->source), "port", (json_int_t)p->port, "secureon",
			 p->secureon_file != NULL);
}

json_t *tb_machine_to_json(const struct tb_machine *m)
{
	json_t *j, *power, *os, *links, *boot = json_null(), *console = json_null();

	power = json_array();
	for (size_t i = 0; i < m->npower; i++)
		json_array_append_new(power, power_to_json(&m->power[i]));
	os = json_object();
	for (size_t i = 0; i < m->nos; i++) {
		const struct tb_persona *p = &m->os[i];

		json_object_set_new(os, p->os,
				    json_pack("{s:s, s:I, s:s, s:o}", "address", p->address, "port",
					      (json_int_t)p->port, "user", p->user, "host_key",
					      str_or_null(p->host_key)));
	}
	links = json_object();
	for (size_t i = 0; i < m->nlinks; i++) {
		json_t *ifn = json_object(), *l;

		for (size_t k = 0; k < m->links[i].nifnames; k++)
			json_object_set_new(ifn, m->links[i].ifnames[k].os, json_string(m->links[i].ifnames[k].ifname));
		l = json_pack("{s:s, s:o}", "address", m->links[i].address, "ifname", ifn);

		if (l != NULL && m->links[i].rate_bps > 0)
			json_object_set_new(l, "rate_bps", json_real(m->links[i].rate_bps));
		if (l != NULL && m->links[i].address6 != NULL)
			json_object_set_new(l, "address6", json_string(m->links[i].address6));
		json_object_set_new(links, m->links[i].name, l);
	}
	if (m->boot.loader != NULL) {
		json_t *entries = json_object();

		for (size_t i = 0; i < m->boot.nentries; i++)
			json_object_set_new(entries, m->boot.entries[i].os, json_string(m->boot.entries[i].entry));
		boot = json_pack("{s:s, s:s, s:o}", "loader", m->boot.loader, "default", m->boot.default_os, "entries",
				 entries);
	}
	switch (m->console.type) {
	case TB_CONSOLE_TCP:
		console = json_pack("{s:s, s:s, s:I, s:s}", "type", "tcp", "address", m->console.address, "port",
				    (json_int_t)m->console.port, "protocol",
				    m->console.protocol == TB_CONSOLE_TELNET ? "telnet" : "raw");
		break;
	case TB_CONSOLE_DEVICE:
		console = json_pack("{s:s, s:s, s:I}", "type", "device", "device", m->console.device, "speed",
				    (json_int_t)m->console.speed);
		break;
	case TB_CONSOLE_IPMI_SOL: console = json_pack("{s:s}", "type", "ipmi-sol"); break;
	case TB_CONSOLE_NONE: break;
	}
	j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o}", "name", m->name, "role",
		      tb_role_name(m->role), "mac", str_or_null(m->mac), "power", power, "console",
		      console ? console : json_null(), "boot", boot ? boot : json_null(), "os", os, "links", links,
		      "idle_poweroff_min", m->idle_poweroff_min >= 0 ? json_integer(m->idle_poweroff_min) : json_null(),
		      "wake_schedule", str_or_null(m->wake_schedule), "boot_timeout_s", m->boot_timeout_s,
		      "shutdown_timeout_s", m->shutdown_timeout_s, "cannot_delay", str_or_null(m->cannot_delay));
	return j;
}
