/*
 * matrix_profile.h - the spec's "profile" (issue 20 item 2, flame graphs):
 * {"side": "sender"|"receiver"|"both" (default "sender"), "frequency": N
 * (samples a second per CPU, 1..10000, default 99)}.  Checked here, shown in
 * the plan with the commands each end runs (run_profile.c runs them: the
 * scripts below are the one place they are written).
 *
 * Pure: no I/O.  Strings returned are malloc'd (the caller frees them).
 */
#ifndef TB_MATRIX_PROFILE_H
#define TB_MATRIX_PROFILE_H

#include <stdbool.h>

#include <jansson.h>

#include "error.h"

#define TB_PROFILE_FREQ_DEFAULT 99
#define TB_PROFILE_FREQ_MAX 10000

/* 0 when spec has no "profile" or a valid one, else TB_ERR_INVALID naming
 * the field ("profile", "profile.side", "profile.frequency"). */
int tb_mx_profile_check(const json_t *spec, struct tb_error *err);

/* The spec's choice: *side "sender", "receiver" or "both" (static), *freq;
 * false when the spec asks for no profile. */
bool tb_mx_profile_of(const json_t *spec, const char **side, long *freq);

/* The plan's "profile": side, frequency and what runs on each OS. */
json_t *tb_mx_profile_plan_json(const json_t *spec);

/* The shell script an end runs to profile for wall_s seconds at most (sh
 * -c; built from integers only).  It prints "TBPROF unavailable REASON" and
 * exits 3 when the profiler or the permission is missing; the Linux one
 * prints "TBPROF dir DIR" (its mktemp -d) before it execs perf record. */
char *tb_mx_profile_script(bool bsd, long freq, long wall_s);
/* The profiler's own command line, as people read it ("perf record ...");
 * wall_s < 0: "WALL" in its place (the plan). */
char *tb_mx_profile_command(bool bsd, long freq, long wall_s);

#endif /* TB_MATRIX_PROFILE_H */
