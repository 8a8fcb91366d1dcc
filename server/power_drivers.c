/* power_drivers.c - the table of power drivers: one line per driver (power.h). */
#include "power.h"

const struct tb_power_driver *tb_power_driver_for(const struct tb_power_method *pm)
{
	if (pm == NULL)
		return NULL;
	switch (pm->driver) {
	case TB_POWER_IPMI:
		return &tb_power_ipmi;
	case TB_POWER_WOL:
		return &tb_power_wol;
	}
	return NULL;
}
