/*
 * log.h - the daemon's log: one line per message on stderr (or a file),
 * "2026-12-02T16:20:00Z level component: message".  Thread-safe (one write(2)
 * per line).  Never pass a secret (token, password, key) to these functions.
 */
#ifndef TB_LOG_H
#define TB_LOG_H

enum tb_log_level { TB_LOG_DEBUG = 0, TB_LOG_INFO = 1, TB_LOG_WARN = 2, TB_LOG_ERROR = 3 };

/* Messages below level are dropped.  Default TB_LOG_INFO. */
void tb_log_set_level(enum tb_log_level level);

/* Send the log to fd (default 2).  The caller keeps ownership of fd. */
void tb_log_set_fd(int fd);

void tb_log(enum tb_log_level level, const char *component, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

#define tb_debug(c, ...) tb_log(TB_LOG_DEBUG, c, __VA_ARGS__)
#define tb_info(c, ...) tb_log(TB_LOG_INFO, c, __VA_ARGS__)
#define tb_warn(c, ...) tb_log(TB_LOG_WARN, c, __VA_ARGS__)
#define tb_error(c, ...) tb_log(TB_LOG_ERROR, c, __VA_ARGS__)

#endif /* TB_LOG_H */
