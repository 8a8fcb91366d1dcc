/* crypto_secret.c - a one-line secret read from its file at use: see
 * crypto_secret.h. */
#include "crypto_secret.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wipe.h"

/* The checks on the opened file's status. */
static int check_stat(const struct tb_secret_file *f, const struct stat *st, struct tb_error *err)
{
	if (!S_ISREG(st->st_mode))
		return tb_fail(err, TB_ERR_CONFIG, f->field, "%s %s is not a regular file", f->what, f->shown);
	if ((f->flags & TB_SECRET_OWNER) && st->st_uid != geteuid())
		return tb_fail(err, TB_ERR_CONFIG, f->field, "%s %s must be owned by testbedd's user", f->what,
			       f->shown);
	if (!(f->flags & TB_SECRET_PUBLIC) && (st->st_mode & (S_IRWXG | S_IRWXO)) != 0)
		return tb_fail(err, TB_ERR_CONFIG, f->field,
			       "%s %s is open to group or others (mode %04o): chmod 600 %s", f->what, f->shown,
			       (unsigned)(st->st_mode & 07777), f->shown);
	return 0;
}

/* Open f (non-blocking: a FIFO would hang the reader) and check it. */
int tb_secret_open(const struct tb_secret_file *f, struct stat *st, struct tb_error *err)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | ((f->flags & TB_SECRET_NOFOLLOW) ? O_NOFOLLOW : 0);
	int fd, rc;

	if ((fd = openat(f->dirfd, f->name, flags)) < 0) {
		if (errno == ELOOP && (f->flags & TB_SECRET_NOFOLLOW))
			return tb_fail(err, TB_ERR_CONFIG, f->field, "%s %s is a symbolic link: give the file itself",
				       f->what, f->shown);
		return tb_fail(err, TB_ERR_CONFIG, f->field,
			       "cannot read %s %s: %s; testbedd needs to read it (mode 0600, owned by testbedd's user)",
			       f->what, f->shown, strerror(errno));
	}
	if (fstat(fd, st) != 0)
		rc = tb_fail(err, TB_ERR_CONFIG, f->field, "cannot read %s %s: %s", f->what, f->shown, strerror(errno));
	else
		rc = check_stat(f, st, err);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int tb_secret_read(const struct tb_secret_file *f, char *buf, size_t sz, struct tb_error *err)
{
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	buf[0] = '\0';
	if ((fd = tb_secret_open(f, &st, err)) < 0)
		return fd;
	do
		n = read(fd, buf, sz - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0) {
		tb_wipe(buf, sz);
		return tb_fail(err, TB_ERR_CONFIG, f->field, "cannot read %s %s: %s", f->what, f->shown,
			       strerror(errno));
	}
	len = (size_t)n;
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if ((len == 0 && (f->flags & TB_SECRET_NONEMPTY)) || memchr(buf, '\0', len) != NULL ||
	    memchr(buf, '\n', len) != NULL || (size_t)n == sz - 1) {
		tb_wipe(buf, sz);
		return tb_fail(err, TB_ERR_CONFIG, f->field, "%s %s must hold the secret on one line (%s%zu bytes)",
			       f->what, f->shown, (f->flags & TB_SECRET_NONEMPTY) ? "1.." : "at most ", sz - 2);
	}
	return 0;
}
