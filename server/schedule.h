/*
 * schedule.h - recurring matrices: a schedule per library spec (specs.h)
 * starts the spec's latest version as a matrix when its cron pattern
 * (cron.h, the control host's time zone, as the wake schedule) comes due,
 * through the runner's own submit (runner.h) as the schedule's author; after
 * the matrix ends the CI gate (compare.h: metric, max_drop) is applied
 * against the baseline policy -- a pinned matrix id, or "latest-passing":
 * the newest matrix of the same name that succeeded and did not fail its
 * gate -- and the verdict is stored with the matrix (store_specs.h) and
 * published as a "matrix.gate" event:
 *
 *   {"matrix":ID, "spec":NAME, "version":V, "baseline":ID|null,
 *    "verdict":"pass"|"fail"|"no_baseline"|"error", "metric":M,
 *    "max_drop":PCT, "compared":N, "dropped":[cell...], "message":TEXT?}
 *
 * A time missed while testbedd was down starts once at the next tick.  A
 * spec that cannot start (a host reserved, the inventory changed) waits for
 * its next time and says why in a "schedule.failed" event:
 *
 *   {"spec":NAME, "cron":PATTERN, "error":{"code", "field", "message"},
 *    "next_at":TIME|null}
 *
 * and keeps it with the schedule (its last_failure) until a time starts one.
 *
 * A host of the spec that is off (the prober sees it down, its BMC does not
 * say on) and has a power method is powered on first, the wake schedule's
 * way (wake.h tb_wake_power_on: an action with actor "schedule"); the
 * ticker looks at those actions each second, without waiting on them, and
 * submits the matrix once all have succeeded.  One that failed, or still
 * runs past the longest boot timeout and a minute (it is canceled), fails
 * that time with a schedule.failed naming the host; so does a host off and
 * reserved by someone else than the schedule's author (not powered on).
 *
 * Threads: one ticker (each second) does the starting and the judging; the
 * HTTP threads only read and write the store through the calls below
 * (given the store only: blocking on disk I/O only).  JSON returned is the caller's.
 */
#ifndef TB_SCHEDULE_H
#define TB_SCHEDULE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_schedule;
struct tb_store;

/* Make (not started) and start the ticker; stop joins it; free after stop.
 * NULL is allowed in stop and free. */
int tb_schedule_new(struct tb_services *sv, struct tb_schedule **out, struct tb_error *err);
int tb_schedule_start(struct tb_schedule *sc, struct tb_error *err);
void tb_schedule_stop(struct tb_schedule *sc);
void tb_schedule_free(struct tb_schedule *sc);

/* Set name's schedule from body {"cron", "baseline": "latest-passing" | ID,
 * "metric"?, "max_drop"?}; the spec must exist.  400s name the field.  The
 * schedule as tb_schedule_list_json shows one into *out. */
int tb_schedule_put(struct tb_store *st, const char *name, const json_t *body, const char *author, json_t **out,
		    struct tb_error *err);
int tb_schedule_delete(struct tb_store *st, const char *name, struct tb_error *err);
/* [{name, cron, baseline, metric, max_drop, author, next_at, last:[{matrix,
 * verdict, baseline, at}] oldest first (up to 20)}] by name; name NULL: all,
 * else that one (TB_ERR_NOT_FOUND when it has none). */
int tb_schedule_list_json(struct tb_store *st, const char *name, json_t **out, struct tb_error *err);
/* The gate of a matrix started by a schedule: {matrix, spec, version,
 * baseline, verdict (null: not judged yet), detail, at}; TB_ERR_NOT_FOUND
 * for a matrix no schedule started. */
int tb_schedule_gate_json(struct tb_store *st, int64_t matrix_id, json_t **out, struct tb_error *err);

#endif /* TB_SCHEDULE_H */
