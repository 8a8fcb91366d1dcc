/* timeutil.h - wall-clock times as the API shows them (RFC 3339, UTC). */
#ifndef TB_TIMEUTIL_H
#define TB_TIMEUTIL_H

#include <stdint.h>

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

#endif /* TB_TIMEUTIL_H */
