/* notify_secret.c - a sink's secret, read from a file at send time: see
 * notify_internal.h.  Like a BMC password file (power_secret.c), but a file
 * group or others may read is refused, not just warned about. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notify_internal.h"

/* The checks on an opened or named file's status. */
static int check_stat(const struct stat *st, const char *path, const char *field, struct tb_error *err)
{
	if (!S_ISREG(st->st_mode))
		return tb_fail(err, TB_ERR_CONFIG, field, "the secret file %s is not a regular file", path);
	if (st->st_uid != geteuid())
		return tb_fail(err, TB_ERR_CONFIG, field, "the secret file %s must be owned by testbedd's user", path);
	if ((st->st_mode & (S_IRWXG | S_IRWXO)) != 0)
		return tb_fail(err, TB_ERR_CONFIG, field,
			       "the secret file %s is open to group or others (mode %04o): chmod 600 %s", path,
			       (unsigned)(st->st_mode & 07777), path);
	return 0;
}

int nf_secret_check(const char *path, const char *field, struct tb_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return tb_fail(err, TB_ERR_CONFIG, field, "cannot read the secret file %s: %s", path, strerror(errno));
	return check_stat(&st, path, field, err);
}

int nf_secret_read(const char *path, const char *field, char *buf, size_t sz, struct tb_error *err)
{
	struct stat st;
	ssize_t n;
	size_t len;
	int fd, rc;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return tb_fail(err, TB_ERR_CONFIG, field, "cannot read the secret file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = tb_fail(err, TB_ERR_CONFIG, field, "cannot read the secret file %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if ((rc = check_stat(&st, path, field, err)) != 0) {
		close(fd);
		return rc;
	}
	do
		n = read(fd, buf, sz - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return tb_fail(err, TB_ERR_CONFIG, field, "cannot read the secret file %s: %s", path, strerror(errno));
	len = (size_t)n;
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (len == 0 || memchr(buf, '\0', len) != NULL || memchr(buf, '\n', len) != NULL || (size_t)n == sz - 1)
		return tb_fail(err, TB_ERR_CONFIG, field,
			       "the secret file %s must hold the secret on one line (1..%zu bytes)", path, sz - 2);
	return 0;
}
