/*
 * bmcwatch.h - the BMC's view of each machine's power, beside the
 * reachability prober's (hosts.h).
 *
 * For every machine with a power method whose driver can answer
 * TB_POWER_STATUS (ipmi today; redfish once it exists), a background
 * thread asks the BMC "is the chassis on?" at most every
 * cfg.bmc_interval_s (default 30 s, never below cfg.bmc_floor_s, 5 s unless
 * a test lowers it).  A machine that something holds (tb_actions_holder:
 * an action or a matrix) is not asked: the action is talking to its BMC;
 * it is asked at the next tick after the hold ends.
 *
 * It observes only: it never powers anything on or off nor "corrects" a
 * difference.  It publishes a "host.bmc" event when what the BMC says
 * changes (on, off, unknown) and when a mismatch begins or ends: the BMC
 * says on and no OS answers ssh, or the BMC says off and an OS answers.
 *
 * Only the driver's status command runs (ipmitool ... chassis power
 * status, password through the environment).  An error that could name a
 * secret's file (credentials refused, configuration) is shown as a
 * sentence pointing at the daemon's log; the log has the detail.
 *
 * Thread-safe.  BMCs are asked one after another in the watcher's thread,
 * each call bounded by TB_BMC_CALL_MS.
 */
#ifndef TB_BMCWATCH_H
#define TB_BMCWATCH_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_hosts;
struct tb_machine;
struct tb_power_method;
struct tb_bmcwatch;

#define TB_BMC_INTERVAL_S 30  /* default between two readings of one BMC */
#define TB_BMC_FLOOR_S 5      /* the shortest interval allowed outside tests */
#define TB_BMC_CALL_MS 10000L /* one status call at most */
/* A difference counts as a mismatch only when each side was seen this
 * long after the other side last changed: a probe or a BMC reading that
 * started before the change must not raise one. */
#define TB_BMC_MISMATCH_MARGIN_MS 5000

/* Start the watcher thread (none when cfg.bmc_interval_s is 0). */
int tb_bmcwatch_start(struct tb_services *sv, struct tb_bmcwatch **out, struct tb_error *err);
/* Stop and join the thread, free everything.  NULL is allowed. */
void tb_bmcwatch_stop(struct tb_bmcwatch *w);

/*
 * The "bmc" object of machine m for the API (new reference): json null
 * when m has no power method that can tell its state, else
 *   {"method", "power": "on"|"off"|"unknown", "since", "checked_at",
 *    "error": null|{"code","message"}, "mismatch": null|{"since","message"}}
 * Never blocks on the network.
 */
json_t *tb_bmcwatch_json(struct tb_bmcwatch *w, const struct tb_machine *m);

/* What m's BMC said last: 1 on, 0 off, -1 unknown or no BMC. */
int tb_bmcwatch_power(struct tb_bmcwatch *w, const char *machine);

/* 1 when machine is on as far as testbedd can tell: an OS answers ssh (the
 * prober), or its BMC says the chassis is on.  Idle power-off and the wake
 * schedule decide by it.  Never blocks on the network. */
struct tb_hosts;
int tb_machine_is_on(struct tb_hosts *hosts, struct tb_bmcwatch *bmc, const char *machine);

/* ---- pure helpers (unit-tested) ---- */

/* The first power method of m whose driver answers TB_POWER_STATUS, or NULL. */
const struct tb_power_method *tb_bmc_method(const struct tb_machine *m);

/* The interval in force: requested, but never below floor (floor 0: TB_BMC_FLOOR_S). */
unsigned int tb_bmc_interval(unsigned int requested, unsigned int floor);

/* When to read a BMC next (monotonic ms): at once when never read
 * (last_ms 0), else last_ms + interval_s. */
int64_t tb_bmc_next_check_ms(int64_t last_ms, unsigned int interval_s);

/* What each side saw: power/up 1, 0, or -1 unknown; since = when that
 * value began, seen = when it was last confirmed (wall-clock ms). */
struct tb_bmc_sides {
	int bmc_on;
	int64_t bmc_since_ms, bmc_seen_ms;
	int os_up;
	int64_t os_since_ms, os_seen_ms;
};
/* 1 when the BMC and reachability disagree and each was seen at least
 * TB_BMC_MISMATCH_MARGIN_MS after the other's last change; else 0. */
int tb_bmc_mismatch(const struct tb_bmc_sides *s);

#endif /* TB_BMCWATCH_H */
