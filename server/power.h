/*
 * power.h - switching machines on and off.
 *
 * Two layers.  A driver (power_ipmi.c, power_wol.c; later power_redfish.c,
 * power_command.c) does one thing to one machine through one of its
 * inventory's power methods and says exactly which command or packet it
 * used.  The power state machine (power.c) decides what to do and proves the
 * result by asking the host (hosts.h): "on" succeeds only when an OS persona
 * answers ssh, never because a packet was sent.
 *
 * Adding a driver is one new file that fills a struct tb_power_driver and
 * one line in tb_power_driver_for().
 */
#ifndef TB_POWER_H
#define TB_POWER_H

#include <stddef.h>

#include "error.h"
#include "inventory.h"

struct tb_ssh_pool;

enum tb_power_op {
	TB_POWER_ON = 0,
	TB_POWER_OFF,      /* hard off */
	TB_POWER_CYCLE,
	TB_POWER_RESET,
	TB_POWER_SOFT,     /* ACPI soft off */
	TB_POWER_STATUS,   /* ask: is the chassis on? */
	TB_POWER_NOPS
};

#define TB_POWER_BIT(op) (1u << (op))

const char *tb_power_op_name(enum tb_power_op op);
/* "on" -> TB_POWER_ON ...; -1 for anything else (status is not an action). */
int tb_power_op_parse(const char *s);

/*
 * Records one step of an action: what was done (a sentence), the command as
 * it ran with secrets replaced by "***" (NULL when none), its exit status
 * (-1 when none), and a short output (NULL when none).  The action module
 * stores and publishes it; a driver calls it for every command or packet.
 */
typedef void (*tb_step_fn)(void *cls, const char *what, const char *command, int exit_status,
			   const char *output);

/* What a driver gets for one call.  Everything is borrowed for the call. */
struct tb_power_call {
	const struct tb_inventory *inv;     /* to find a relay machine by name */
	const struct tb_machine *m;
	const struct tb_power_method *pm;   /* the method to use, one of m->power */
	struct tb_ssh_pool *pool;           /* for drivers that go through ssh (relay) */
	const char *relay_os;               /* the relay's OS persona that answers, or NULL: its first */
	tb_step_fn step;
	void *step_cls;
	const volatile int *cancel;         /* non-zero: stop as soon as possible */
	long timeout_ms;                    /* hard limit for this call */
};

struct tb_power_driver {
	const char *name;                   /* "ipmi", "wol" */
	unsigned int ops;                   /* TB_POWER_BIT()s it can do */
	/*
	 * Do op.  For TB_POWER_STATUS set *is_on.  Blocks up to call->timeout_ms.
	 * Errors (error.h): TB_ERR_UNAUTHORIZED (credentials refused: say which to
	 * check), TB_ERR_CONFIG (a secret file unreadable, no raw-socket
	 * permission: say what to fix), TB_ERR_UNREACHABLE / TB_ERR_TIMEOUT
	 * (transient: the caller may retry), TB_ERR_REMOTE, TB_ERR_CANCELED.
	 */
	int (*run)(const struct tb_power_call *call, enum tb_power_op op, int *is_on, struct tb_error *err);
};

extern const struct tb_power_driver tb_power_ipmi;
extern const struct tb_power_driver tb_power_wol;

/* The driver for an inventory power method. */
const struct tb_power_driver *tb_power_driver_for(const struct tb_power_method *pm);

#endif /* TB_POWER_H */
