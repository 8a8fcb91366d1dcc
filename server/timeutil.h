/* timeutil.h - wall-clock times as the API shows them (RFC 3339, UTC). */
#ifndef TB_TIMEUTIL_H
#define TB_TIMEUTIL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#define TB_TIME_MAX 32

/* "2026-12-02T16:20:00Z" into buf (TB_TIME_MAX bytes). */
void tb_time_format(int64_t t, char buf[TB_TIME_MAX]);

/* The same as a JSON string, or JSON null for t == 0.  New reference. */
json_t *tb_time_json(int64_t t);

/* Parse "YYYY-MM-DDTHH:MM:SSZ" (or with +HH:MM); 0 on success, -1 otherwise. */
int tb_time_parse(const char *s, int64_t *out);

/* "2026-12-02T16:20:00.123Z" for a wall-clock time in milliseconds. */
void tb_time_format_ms(int64_t ms, char buf[TB_TIME_MAX]);

/* Seconds and milliseconds since the epoch, and a monotonic clock in
 * milliseconds. */
int64_t tb_now(void);
int64_t tb_now_ms(void);
int64_t tb_monotonic_ms(void);

/* Sleep ms milliseconds (monotonic).  With stop (may be NULL), sleep in
 * slices of at most 100 ms and return early once *stop is non-zero.
 * Returns 1 when it stopped early, else 0.  The one sleep of the tree. */
int tb_sleep_ms(long ms, const volatile int *stop);

/*
 * Condition variables whose timed waits run on CLOCK_MONOTONIC, so that a
 * step of the wall clock (NTP, an admin's date) neither stalls nor rushes
 * them.  tb_cond_init initialises cond so (0 or an errno value, as
 * pthread_cond_init); tb_cond_deadline is the absolute time ms milliseconds
 * from now on that clock, for pthread_cond_timedwait on such a cond.  Every
 * cond of server/ that is waited on with a timeout is made by tb_cond_init.
 */
int tb_cond_init(pthread_cond_t *cond);
struct timespec tb_cond_deadline(long ms);

#endif /* TB_TIMEUTIL_H */
