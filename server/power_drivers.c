/* power_drivers.c - the table of power drivers: one line per driver (power.h). */
#include "power.h"

_Static_assert(TB_POWER_COMMAND_SLOTS == TB_POWER_NOPS, "inventory.h: one command template per power op");

const struct tb_power_driver *tb_power_driver_for(const struct tb_power_method *pm)
{
	if (pm == NULL)
		return NULL;
	switch (pm->driver) {
	case TB_POWER_IPMI: return &tb_power_ipmi;
	case TB_POWER_WOL: return &tb_power_wol;
	case TB_POWER_REDFISH: return &tb_power_redfish;
	case TB_POWER_COMMAND: return &tb_power_command;
	}
	return NULL;
}

unsigned int tb_power_method_ops(const struct tb_power_method *pm)
{
	const struct tb_power_driver *d = tb_power_driver_for(pm);
	unsigned int ops = 0;

	if (d == NULL)
		return 0;
	if (pm->driver != TB_POWER_COMMAND)
		return d->ops;
	for (int op = 0; op < TB_POWER_COMMAND_SLOTS && op < TB_POWER_NOPS; op++)
		if (pm->argv[op] != NULL)
			ops |= TB_POWER_BIT(op);
	return ops & d->ops;
}
