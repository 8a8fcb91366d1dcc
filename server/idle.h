/*
 * idle.h - idle power-off: a machine with idle_poweroff_min set is switched
 * off after that many minutes with no use.
 *
 * Use is anything that holds the machine (an action, a matrix: actions.c
 * calls tb_idle_touch when a hold is taken and when it is released) and,
 * once consoles exist, console use (the console code calls tb_idle_touch).
 * The last use is the latest touch, or testbedd's start.
 *
 * A background thread checks every second: a machine that is on (an OS
 * answers ssh, or its BMC says on), that nothing holds, and whose last use
 * is idle_poweroff_min minutes ago gets a power "off" action with actor
 * "idle", through the same action path as POST /hosts/{name}/power
 * (recorded step by step, published, one holder per host).  Nothing fires
 * on a machine that is off or held.  It never retries faster than the idle
 * time: a failed power-off ends a use like any other action.
 *
 * A "minute" is cfg.idle_minute_s seconds: 60, except in tests (see
 * TESTBEDD_TEST_IDLE_MINUTE_S in README.md).
 *
 * Thread-safe.  tb_idle_touch never blocks on anything but a mutex.
 */
#ifndef TB_IDLE_H
#define TB_IDLE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_machine;
struct tb_idle;

/* Create (the clock starts now); no thread yet. */
int tb_idle_new(struct tb_services *sv, struct tb_idle **out, struct tb_error *err);
/* Start the checker thread. */
int tb_idle_start(struct tb_idle *idle, struct tb_error *err);
/* Stop and join the thread (touches still work until tb_idle_free). */
void tb_idle_stop(struct tb_idle *idle);
/* Free (after everything that touches is gone).  NULL is allowed. */
void tb_idle_free(struct tb_idle *idle);

/* machine was used now.  idle may be NULL (nothing happens). */
void tb_idle_touch(struct tb_idle *idle, const char *machine);

/*
 * The "idle_poweroff" object of m for the API (new reference): json null
 * when m has no idle_poweroff_min, else
 *   {"after_min", "last_use", "state": "counting"|"held"|"off",
 *    "off_at": time|null, "seconds_left": n|null}
 * off_at and seconds_left are set only while counting (on and not held).
 */
json_t *tb_idle_json(struct tb_idle *idle, const struct tb_machine *m);

/* ---- pure helpers (unit-tested) ---- */

enum tb_idle_state { TB_IDLE_NONE, TB_IDLE_OFF, TB_IDLE_HELD, TB_IDLE_COUNTING, TB_IDLE_DUE };

/* When a machine last used at last_use_ms (wall clock) is to be switched
 * off: last_use_ms + after_min * minute_s seconds; -1 when after_min <= 0. */
int64_t tb_idle_off_at_ms(int64_t last_use_ms, int after_min, unsigned int minute_s);

/* What to do now: NONE (not configured), OFF, HELD, COUNTING (not yet),
 * DUE (switch it off). */
enum tb_idle_state tb_idle_decide(int after_min, int on, int held, int64_t off_at_ms, int64_t now_ms);

/* Whole seconds until off_at (rounded up), never negative. */
int64_t tb_idle_seconds_left(int64_t off_at_ms, int64_t now_ms);

#endif /* TB_IDLE_H */
