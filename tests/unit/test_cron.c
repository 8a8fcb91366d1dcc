/*
 * test_cron.c - the wake schedule's cron patterns: what parses (numbers,
 * names, ranges, steps, lists), what is refused and how the refusal reads,
 * and the next matching minute, in UTC and across Europe/Berlin's
 * daylight-saving changes (tzdata).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cron.h"

/* UTC (or the zone set) "YYYY-MM-DD HH:MM" of t. */
static const char *at(time_t t)
{
	static char buf[32];
	struct tm tm;

	if (t < 0)
		return "never";
	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M %a", &tm);
	return buf;
}

/* Local time y-m-d h:m:s as time_t. */
static time_t local(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = s,
			.tm_isdst = -1};

	return mktime(&tm);
}

static void zone(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static const char *next_of(const char *pattern, time_t after)
{
	struct tb_cron c;
	char why[200];

	if (tb_cron_parse(pattern, &c, why, sizeof(why)) != 0)
		fail_msg("%s: %s", pattern, why);
	return at(tb_cron_next(&c, after));
}

static void test_parse(void **state)
{
	struct tb_cron c;
	char why[200];

	(void)state;
	assert_int_equal(tb_cron_parse("30 7 * * mon-fri", &c, why, sizeof(why)), 0);
	assert_true(c.minute == (uint64_t)1 << 30);
	assert_int_equal(c.hour, 1u << 7);
	assert_int_equal(c.wday, 0x3e); /* Monday..Friday */
	assert_true(c.mday_any);
	assert_false(c.wday_any);
	assert_int_equal(tb_cron_parse("*/15 8-18/2 1,15 Jan,jul 7", &c, why, sizeof(why)), 0);
	assert_true(c.minute == ((uint64_t)1 << 0 | (uint64_t)1 << 15 | (uint64_t)1 << 30 | (uint64_t)1 << 45));
	assert_int_equal(c.hour, 1u << 8 | 1u << 10 | 1u << 12 | 1u << 14 | 1u << 16 | 1u << 18);
	assert_int_equal(c.mday, 1u << 1 | 1u << 15);
	assert_int_equal(c.month, 1u << 1 | 1u << 7);
	assert_int_equal(c.wday, 1); /* 7 is Sunday, as 0 */
	assert_int_equal(tb_cron_parse("  5/20\t* * * *  ", &c, why, sizeof(why)), 0);
	assert_true(c.minute == ((uint64_t)1 << 5 | (uint64_t)1 << 25 | (uint64_t)1 << 45));

	assert_int_equal(tb_cron_parse("30 7 * *", &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "has 4 fields; a schedule has five: minute hour day-of-month month day-of-week"));
	assert_int_equal(tb_cron_parse("30 7 * * * *", &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "more than five fields"));
	assert_int_equal(tb_cron_parse("60 7 * * *", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "minute: \"60\": values are 0..59");
	assert_int_equal(tb_cron_parse("0 18-8 * * *", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "hour: \"18-8\": values are 0..23, and a range goes upwards");
	assert_int_equal(tb_cron_parse("0 7 0 * *", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "day of month: \"0\": values are 1..31");
	assert_int_equal(tb_cron_parse("0 7 * * monday", &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why,
			       "day of week: \"monday\" is not N, N-M, *, a /STEP of those, or a comma list of them "
			       "(days may be sun..sat)"));
	assert_int_equal(tb_cron_parse("*/0 * * * *", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "minute: \"*/0\": a step is 1..59");
	assert_int_equal(tb_cron_parse("1,,2 * * * *", &c, why, sizeof(why)), -1);
	assert_int_equal(tb_cron_parse("@daily", &c, why, sizeof(why)), -1);
	assert_int_equal(tb_cron_parse("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14 "
				       "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 * *",
				       &c, why, sizeof(why)),
			 -1);
	assert_string_equal(why, "a schedule is at most 100 characters");
	assert_int_equal(tb_cron_parse("0 7 * * 1; reboot", &c, why, sizeof(why)), -1);
}

static void test_next_utc(void **state)
{
	time_t wed; /* Wednesday 07:30:00 */

	(void)state;
	zone("UTC");
	wed = local(2026, 12, 2, 7, 30, 0);
	/* strictly after: at 07:30:00 the next 07:30 is tomorrow's */
	assert_string_equal(next_of("30 7 * * *", wed), "2026-12-03 07:30 Thu");
	assert_string_equal(next_of("30 7 * * *", wed - 1), "2026-12-02 07:30 Wed");
	assert_string_equal(next_of("* * * * *", wed + 5), "2026-12-02 07:31 Wed");
	assert_string_equal(next_of("30 7 * * mon-fri", local(2026, 12, 4, 8, 0, 0)), "2026-12-07 07:30 Mon");
	assert_string_equal(next_of("0 */6 * * *", wed), "2026-12-02 12:00 Wed");
	assert_string_equal(next_of("0 0 1 * *", wed), "2027-01-01 00:00 Fri");
	assert_string_equal(next_of("0 0 29 2 *", wed), "2028-02-29 00:00 Tue");
	/* both day fields restricted: either matches (the 13th, or a Friday) */
	assert_string_equal(next_of("0 9 13 * fri", wed), "2026-12-04 09:00 Fri");
	assert_string_equal(next_of("0 9 3 * fri", wed), "2026-12-03 09:00 Thu");
	assert_string_equal(next_of("0 0 31 2 *", wed), "never");
	assert_string_equal(next_of("59 23 31 12 *", wed), "2026-12-31 23:59 Thu");
}

static void test_next_dst(void **state)
{
	(void)state;
	zone("Europe/Berlin");
	/* 2027-03-28: 02:00 CET -> 03:00 CEST; 02:30 does not exist that day: it
	 * comes an hour later, not never (a wake is late, not lost) */
	assert_string_equal(next_of("30 2 * * *", local(2027, 3, 27, 12, 0, 0)), "2027-03-28 03:30 Sun");
	assert_string_equal(next_of("30 2 * * *", local(2027, 3, 28, 3, 30, 0)), "2027-03-29 02:30 Mon");
	assert_string_equal(next_of("0 7 * * *", local(2027, 3, 27, 12, 0, 0)), "2027-03-28 07:00 Sun");
	{
		/* the 07:00 after the change is 6 hours (UTC) after the 01:00 before it */
		struct tb_cron c;
		char why[200];
		time_t one, seven;

		assert_int_equal(tb_cron_parse("0 1 28 3 *", &c, why, sizeof(why)), 0);
		one = tb_cron_next(&c, local(2027, 3, 27, 12, 0, 0));
		assert_int_equal(tb_cron_parse("0 7 28 3 *", &c, why, sizeof(why)), 0);
		seven = tb_cron_next(&c, local(2027, 3, 27, 12, 0, 0));
		assert_int_equal(seven - one, 5 * 3600);
	}
	/* 2027-10-31: 03:00 CEST -> 02:00 CET; 02:30 comes once in the answer */
	assert_string_equal(next_of("30 2 * * *", local(2027, 10, 30, 12, 0, 0)), "2027-10-31 02:30 Sun");
	zone("UTC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_next_utc),
		cmocka_unit_test(test_next_dst),
	};

	return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
