/* timeutil.c - RFC 3339 times and clocks: see timeutil.h. */
#include "timeutil.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tb_time_format(int64_t t, char buf[TB_TIME_MAX])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, TB_TIME_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void tb_time_format_ms(int64_t ms, char buf[TB_TIME_MAX])
{
	char base[TB_TIME_MAX];

	tb_time_format(ms / 1000, base);
	base[strlen(base) - 1] = '\0'; /* drop the Z */
	snprintf(buf, TB_TIME_MAX, "%s.%03dZ", base, (int)(ms % 1000));
}

json_t *tb_time_json(int64_t t)
{
	char buf[TB_TIME_MAX];

	if (t == 0)
		return json_null();
	tb_time_format(t, buf);
	return json_string(buf);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), without timegm(). */
static int64_t days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m + (m > 2 ? (unsigned int)-3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int tb_time_parse(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, sec, n = 0, oh = 0, om = 0;
	char sign = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -1;
	s += n;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (strcmp(s, "Z") != 0) {
		if (sscanf(s, "%c%2d:%2d%n", &sign, &oh, &om, &n) != 3 || s[n] != '\0' || (sign != '+' && sign != '-'))
			return -1;
	}
	*out = days_from_civil(y, (unsigned int)mo, (unsigned int)d) * 86400 + h * 3600 + mi * 60 + sec;
	if (sign == '+')
		*out -= oh * 3600 + om * 60;
	else if (sign == '-')
		*out += oh * 3600 + om * 60;
	return 0;
}

int64_t tb_now(void)
{
	return (int64_t)time(NULL);
}

int64_t tb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tb_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tb_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int rc;

	if ((rc = pthread_condattr_init(&attr)) != 0)
		return rc;
	if ((rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)) == 0)
		rc = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return rc;
}

struct timespec tb_cond_deadline(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ms < 0)
		ms = 0;
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

int tb_sleep_ms(long ms, const volatile int *stop)
{
	int64_t until = tb_monotonic_ms() + ms;

	for (;;) {
		int64_t left = until - tb_monotonic_ms();
		struct timespec ts;

		if (stop != NULL && *stop)
			return 1;
		if (left <= 0)
			return 0;
		if (stop != NULL && left > 100)
			left = 100;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
}
