/*
 * power.h - switching machines on and off.
 *
 * Two layers.  A driver (power_ipmi.c, power_wol.c, power_redfish.c,
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
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "inventory.h"

struct tb_ssh_pool;
struct tb_hosts;

enum tb_power_op {
	TB_POWER_ON = 0,
	TB_POWER_OFF, /* hard off */
	TB_POWER_CYCLE,
	TB_POWER_RESET,
	TB_POWER_SOFT,   /* ACPI soft off */
	TB_POWER_STATUS, /* ask: is the chassis on? */
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
typedef void (*tb_step_fn)(void *cls, const char *what, const char *command, int exit_status, const char *output);

/* What a driver gets for one call.  Everything is borrowed for the call. */
struct tb_power_call {
	const struct tb_inventory *inv; /* to find a relay machine by name */
	const struct tb_machine *m;
	const struct tb_power_method *pm; /* the method to use, one of m->power */
	struct tb_ssh_pool *pool;         /* for drivers that go through ssh (relay) */
	struct tb_hosts *hosts;           /* the pins in force (tb_hosts_target), or NULL: the inventory's */
	const char *relay_os;             /* the relay's OS persona that answers, or NULL: its first */
	tb_step_fn step;
	void *step_cls;
	const volatile int *cancel; /* non-zero: stop as soon as possible */
	long timeout_ms;            /* hard limit for this call */
};

struct tb_power_driver {
	const char *name; /* "ipmi", "wol", "redfish", "command" */
	unsigned int ops; /* TB_POWER_BIT()s it can do (command: at most) */
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
extern const struct tb_power_driver tb_power_redfish;
extern const struct tb_power_driver tb_power_command;

/* The driver for an inventory power method. */
const struct tb_power_driver *tb_power_driver_for(const struct tb_power_method *pm);

/* What this method can do: its driver's ops, and for a command method only
 * the actions it has a template for.  0 for NULL. */
unsigned int tb_power_method_ops(const struct tb_power_method *pm);

/*
 * A BMC method's password (ipmi, redfish), read at call time: from
 * password_file (one trailing newline stripped; one line, at most sz - 2
 * bytes) or from testbedd's own environment variable password_env.  Into
 * buf (NUL-terminated); the caller wipes it with tb_wipe (wipe.h) after use.
 * TB_ERR_CONFIG naming the file or variable, never the password.
 */
int tb_power_read_password(const struct tb_power_call *call, char *buf, size_t sz, struct tb_error *err);
/* "user U, password file F" (or "... environment variable V") for messages. */
void tb_power_cred_hint(const struct tb_power_method *pm, char *buf, size_t sz);

/*
 * Redfish one-shot boot override: GET the ComputerSystem (call->pm is a
 * redfish method), then PATCH it with
 *   {"Boot":{"BootSourceOverrideEnabled":"Once","BootSourceOverrideTarget":target}}
 * and If-Match: the ETag of that GET, so that a change made in between is
 * not overwritten (the BMC answers 412, reported as TB_ERR_CONFLICT).
 * target is a Redfish BootSource value ("Pxe", "Hdd", "UefiBootNext", ...);
 * one the system does not list in BootSourceOverrideTarget@Redfish.
 * AllowableValues is refused with TB_ERR_CONFIG, naming those it allows.
 * Blocks up to call->timeout_ms; steps and errors as the driver's run.
 * Not yet used by the boot flow (boot.c boots through GRUB).
 */
int tb_redfish_boot_once(const struct tb_power_call *call, const char *target, struct tb_error *err);

/* ---- the state machine (power.c), run inside an action ---- */
struct tb_action;
struct tb_services;

/*
 * Do op to machine m and prove it: "on" ends when an OS persona answers ssh
 * (Wake-on-LAN resent every TB_WOL_RESEND_S while waiting); "off"/"soft" end
 * when nothing answers (through the BMC when there is one, else `shutdown -p
 * now` on FreeBSD or `systemctl poweroff` on Linux over ssh, `poweroff` where
 * those are missing); "cycle" and
 * "reset" end when an OS answers again.  Transient BMC errors are retried
 * with jittered backoff; credential and configuration errors fail at once.
 * Every wait is bounded by m's boot/shutdown timeouts; every step is
 * recorded on the action.  Blocks; checks the action's cancel flag.
 * On success *os_out (when non-NULL, 40 bytes) gets the OS that answers, ""
 * when the host is off.
 */
#define TB_WOL_RESEND_S 4
int tb_power_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, enum tb_power_op op,
		 char *os_out, struct tb_error *err);

/*
 * Start a power action: op on host, holding it (TB_ERR_CONFLICT naming the
 * holder when something else holds it), as actor, with params (stolen: what
 * the action records as asked, {"action":"on",...}) and note (NULL, or a
 * sentence recorded as the action's first step: why testbedd does this by
 * itself).  *id gets the action's id.  Returns at once: the action runs in
 * its own thread with the inventory in force now.  The one way to start
 * one (the API, idle power-off, the wake schedule).
 */
struct tb_services;
int tb_power_start(struct tb_services *sv, const char *host, enum tb_power_op op, json_t *params, const char *actor,
		   const char *note, int64_t *id, struct tb_error *err);

/* Wait until a persona of m answers (1, os filled) or nothing does (0),
 * as want says, within timeout_s; resending Wake-on-LAN when resend_wol.
 * 0 when reached; TB_ERR_TIMEOUT or TB_ERR_CANCELED otherwise. */
int tb_power_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, int want_up,
		  int timeout_s, int resend_wol, char *os, size_t oslen, struct tb_error *err);

/* Reboot-like operations: trigger(a, cls, err) makes the host go down (a
 * reboot command, a BMC cycle); this returns when it has gone down and an
 * OS answers again (*os_out, 40 bytes).  A watcher command on the host's
 * own ssh session sees the moment it goes down, however short. */
typedef int (*tb_trigger_fn)(struct tb_action *a, void *cls, struct tb_error *err);
int tb_power_reboot_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			 const char *cur_os, tb_trigger_fn trigger, void *cls, char *os_out, struct tb_error *err);
/* The same when the OS it comes up in is known (expect: a boot chose it):
 * the wait probes that persona first and mostly only it, not the one that
 * has just gone away first (on a LAN an address that is not up costs a
 * whole connect timeout per probe).  Every few probes and at the end all
 * personas are probed, so another OS coming up is still seen.  expect
 * NULL: as tb_power_reboot_wait. */
int tb_power_reboot_wait_for(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			     const char *cur_os, const char *expect, tb_trigger_fn trigger, void *cls, char *os_out,
			     struct tb_error *err);

/* Run argv on the persona of m that answers as os; capture (bounded). */
struct tb_ssh_capture;
int tb_power_ssh(struct tb_action *a, const struct tb_machine *m, const char *os, const char *const argv[],
		 long timeout_ms, struct tb_ssh_capture *cap, struct tb_error *err);

#endif /* TB_POWER_H */
