/* cron.c - cron(5) time patterns.  See cron.h. */
#include "cron.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field {
	const char *name;
	int lo, hi;
	const char *const *names; /* names for lo, lo+1, ... or NULL */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
					  "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct field fields[5] = {
	{"minute", 0, 59, NULL},          {"hour", 0, 23, NULL},
	{"day of month", 1, 31, NULL},    {"month", 1, 12, month_names},
	{"day of week", 0, 7, day_names},
};

/* A number or (where the field has them) a three-letter name at *p. */
static int value(const struct field *f, const char **p, int *out)
{
	const char *s = *p;

	if (isdigit((unsigned char)*s)) {
		long v = 0;

		while (isdigit((unsigned char)*s) && v < 1000)
			v = v * 10 + (*s++ - '0');
		*out = (int)v;
		*p = s;
		return 0;
	}
	for (int i = 0; f->names != NULL && f->names[i] != NULL; i++) {
		if (strncmp(s, f->names[i], 3) == 0 && !isalpha((unsigned char)s[3])) {
			*out = f->lo + i;
			*p = s + 3;
			return 0;
		}
	}
	return -1;
}

/* One field's text (NUL-terminated, lower case) into bits; any: it starts
 * with "*" (cron's reading of the two day fields). */
static int parse_field(const struct field *f, const char *text, uint64_t *bits, bool *any, char *why, size_t whylen)
{
	const char *p = text;

	*bits = 0;
	*any = text[0] == '*';
	for (;;) {
		int a, b, step = 1;
		bool single = false;

		if (*p == '*') {
			a = f->lo;
			b = f->hi;
			p++;
		} else {
			if (value(f, &p, &a) != 0)
				goto bad;
			b = a;
			single = *p != '-';
			if (*p == '-') {
				p++;
				if (value(f, &p, &b) != 0)
					goto bad;
			}
		}
		if (*p == '/') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			for (step = 0; isdigit((unsigned char)*p) && step < 1000; p++)
				step = step * 10 + (*p - '0');
			if (step < 1 || step > f->hi) {
				snprintf(why, whylen, "%s: \"%s\": a step is 1..%d", f->name, text, f->hi);
				return -1;
			}
			if (single)
				b = f->hi; /* "5/15": from 5 on, as in cron */
		}
		if (a < f->lo || b > f->hi || a > b) {
			snprintf(why, whylen, "%s: \"%s\": values are %d..%d%s", f->name, text, f->lo, f->hi,
				 a > b && a <= f->hi && b >= f->lo ? ", and a range goes upwards" : "");
			return -1;
		}
		for (int v = a; v <= b; v += step)
			*bits |= (uint64_t)1 << v;
		if (*p == '\0')
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	snprintf(why, whylen, "%s: \"%s\" is not N, N-M, *, a /STEP of those, or a comma list of them%s", f->name, text,
		 f->names == month_names ? " (months may be jan..dec)"
		 : f->names == day_names ? " (days may be sun..sat)"
					 : "");
	return -1;
}

int tb_cron_parse(const char *text, struct tb_cron *c, char *why, size_t whylen)
{
	char buf[5][64];
	uint64_t bits[5];
	bool any[5];
	int n = 0;
	const char *p = text;

	memset(c, 0, sizeof(*c));
	if (strlen(text) > TB_CRON_TEXT_MAX) {
		snprintf(why, whylen, "a schedule is at most %d characters", TB_CRON_TEXT_MAX);
		return -1;
	}
	while (*p != '\0') {
		size_t k = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (n == 5) {
			snprintf(why, whylen,
				 "\"%.60s\" has more than five fields (minute hour day-of-month month day-of-week)",
				 text);
			return -1;
		}
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			if (k + 1 >= sizeof(buf[0])) {
				snprintf(why, whylen, "the %s field is too long", fields[n].name);
				return -1;
			}
			buf[n][k++] = (char)tolower((unsigned char)*p++);
		}
		buf[n][k] = '\0';
		n++;
	}
	if (n != 5) {
		snprintf(why, whylen,
			 "\"%.60s\" has %d field%s; a schedule has five: minute hour day-of-month month "
			 "day-of-week, e.g. \"30 7 * * mon-fri\"",
			 text, n, n == 1 ? "" : "s");
		return -1;
	}
	for (int i = 0; i < 5; i++)
		if (parse_field(&fields[i], buf[i], &bits[i], &any[i], why, whylen) != 0)
			return -1;
	c->minute = bits[0];
	c->hour = (uint32_t)bits[1];
	c->mday = (uint32_t)bits[2];
	c->month = (uint16_t)bits[3];
	c->wday = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f); /* 7 is Sunday too */
	c->mday_any = any[2];
	c->wday_any = any[4];
	return 0;
}

static bool day_matches(const struct tb_cron *c, const struct tm *t)
{
	bool md = (c->mday >> t->tm_mday) & 1, wd = (c->wday >> t->tm_wday) & 1;

	if (c->mday_any && c->wday_any)
		return true;
	if (c->mday_any)
		return wd;
	if (c->wday_any)
		return md;
	return md || wd;
}

/* t to 00:00 of the next day (local time). */
static void next_day(struct tm *t)
{
	time_t at;

	t->tm_mday++;
	t->tm_hour = 0;
	t->tm_min = 0;
	t->tm_isdst = -1;
	at = mktime(t);
	localtime_r(&at, t);
}

time_t tb_cron_next(const struct tb_cron *c, time_t after)
{
	struct tm t;
	time_t at = after - after % 60 + 60; /* the next whole minute */

	localtime_r(&at, &t);
	t.tm_sec = 0;
	for (int days = 0; days < 366 * 5;) {
		if (!((c->month >> (t.tm_mon + 1)) & 1) || !day_matches(c, &t)) {
			next_day(&t);
			days++;
			continue;
		}
		while (t.tm_hour < 24 && !((c->hour >> t.tm_hour) & 1)) {
			t.tm_hour++;
			t.tm_min = 0;
		}
		while (t.tm_hour < 24) {
			while (t.tm_min < 60 && !((c->minute >> t.tm_min) & 1))
				t.tm_min++;
			if (t.tm_min < 60) {
				/* a minute that does not exist (the hour a change to summer
				 * time skips) comes as mktime reads it: an hour later */
				t.tm_isdst = -1;
				at = mktime(&t);
				if (at > after)
					return at;
				localtime_r(&at, &t);
				t.tm_min++;
				continue;
			}
			do {
				t.tm_hour++;
			} while (t.tm_hour < 24 && !((c->hour >> t.tm_hour) & 1));
			t.tm_min = 0;
		}
		next_day(&t);
		days++;
	}
	return -1;
}
