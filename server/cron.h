/*
 * cron.h - cron(5) time patterns for the wake schedule: five fields,
 * minute (0-59), hour (0-23), day of month (1-31), month (1-12 or jan-dec),
 * day of week (0-7, 0 and 7 Sunday, or sun-sat); each field is "*" or a
 * comma list of N, N-M, with an optional /STEP on "*" or a range.  As in
 * cron, when both day fields are restricted a day matches either.  Times
 * are the control host's local time (TZ); a time that a change to summer
 * time skips comes an hour later, one repeated by the change back once.
 */
#ifndef TB_CRON_H
#define TB_CRON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define TB_CRON_TEXT_MAX 100 /* characters of a pattern */

struct tb_cron {
	uint64_t minute; /* bit n: minute n */
	uint32_t hour;
	uint32_t mday;           /* bits 1..31 */
	uint16_t month;          /* bits 1..12 */
	uint8_t wday;            /* bits 0..6, Sunday 0 */
	bool mday_any, wday_any; /* the field was "*" (or "*" with a step) */
};

/* Parse text; 0, or -1 with a sentence naming the field and what is wrong
 * in why (at least 160 bytes). */
int tb_cron_parse(const char *text, struct tb_cron *c, char *why, size_t whylen);

/* The first whole minute after `after` that the pattern matches (local
 * time), or -1 when none within 5 years (e.g. "0 0 31 2 *"). */
time_t tb_cron_next(const struct tb_cron *c, time_t after);

#endif /* TB_CRON_H */
