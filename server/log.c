/* log.c - one line per message, one write(2) per line: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static enum tb_log_level min_level = TB_LOG_INFO;
static int log_fd = 2;

void tb_log_set_level(enum tb_log_level level)
{
	min_level = level;
}

void tb_log_set_fd(int fd)
{
	log_fd = fd;
}

void tb_log(enum tb_log_level level, const char *component, const char *fmt, ...)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	char line[2048];
	struct tm tm;
	time_t now;
	size_t n;
	int r;
	va_list ap;

	if (level < min_level)
		return;
	now = time(NULL);
	gmtime_r(&now, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	r = snprintf(line + n, sizeof(line) - n, "%s %s: ", names[level], component);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n ? (size_t)r : sizeof(line) - n - 1;
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n ? (size_t)r : sizeof(line) - n - 1;
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	/* one line per message: a newline inside a message would forge a line */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		/* nowhere left to report it */
	}
}
