/*
 * wake.h - the wake schedule: a machine with wake_schedule (a cron pattern,
 * cron.h) is powered on at each time the pattern names, so that a testbed
 * that idle power-off switched off in the evening is up in the morning.
 *
 * A background thread checks every second.  When a machine's time comes it
 * gets a power "on" action with actor "schedule", through the same action
 * path as POST /hosts/{name}/power (recorded step by step, published, one
 * holder per host), and an audit record.  Nothing is done to a machine that
 * is on already (an OS answers, or its BMC says on) or that something holds;
 * either is what its "last" says.  A time missed while testbedd was not
 * running is not made up; a reload that changes the pattern takes the next
 * time from the new one.
 *
 * Thread-safe.
 */
#ifndef TB_WAKE_H
#define TB_WAKE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_machine;
struct tb_wake;

int tb_wake_new(struct tb_services *sv, struct tb_wake **out, struct tb_error *err);
/* Start the thread. */
int tb_wake_start(struct tb_wake *w, struct tb_error *err);
/* Stop and join the thread. */
void tb_wake_stop(struct tb_wake *w);
/* Free; NULL is allowed. */
void tb_wake_free(struct tb_wake *w);

/*
 * The "wake" object of m for the API (new reference): json null when m has
 * no wake_schedule, else
 *   {"schedule": the pattern, "next_at": time|null (none in 5 years),
 *    "last_at": time|null, "last": what happened then|null}
 */
json_t *tb_wake_json(struct tb_wake *w, const struct tb_machine *m);

/*
 * Power m on as the wake schedule does (the one way testbedd wakes a host by
 * itself; the schedules of specs, schedule.h, use it too): a power "on"
 * action by actor ("schedule" for the wake schedule, a spec schedule's
 * author for it), params (stolen: what the action records as asked) and note
 * (its first step: why), through tb_power_start, audited.  Nothing is done
 * to a machine that is on already (an OS answers, or its BMC says on): 0
 * with *id 0.  A machine that something holds: TB_ERR_CONFLICT "held by
 * ...".  A reservation lets its owner's actions through and refuses the
 * others' (reserve.h): the wake schedule's always.  Else *id gets the
 * action's id.  Returns at once.
 */
int tb_wake_power_on(struct tb_services *sv, const struct tb_machine *m, const char *actor, json_t *params,
		     const char *note, int64_t *id, struct tb_error *err);

#endif /* TB_WAKE_H */
