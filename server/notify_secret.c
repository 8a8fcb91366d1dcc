/* notify_secret.c - a sink's secret, read from a file at send time: see
 * notify_internal.h.  Like a BMC password file (power_secret.c), but a file
 * group or others may read is refused, and the file must be in the secrets
 * directory: a rule is written over the API, and without that an admin
 * could have testbedd send any one-line file it can read (admin.token, a
 * BMC password file) to a URL of the admin's choosing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notify.h"
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

void tb_notify_secrets_dir(const char *state_dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/notify-secrets", state_dir);
}

/* The name of path inside dir: path is "DIR/NAME" or a bare NAME, with no
 * other '/' and not "." or ".."; else a refusal naming dir. */
static int name_in_dir(const char *path, const char *dir, const char *field, const char **name, struct tb_error *err)
{
	size_t n = strlen(dir);

	*name = path;
	if (strncmp(path, dir, n) == 0 && path[n] == '/')
		*name = path + n + 1;
	if (**name == '\0' || strchr(*name, '/') != NULL || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
		return tb_fail(err, TB_ERR_CONFIG, field,
			       "a secret file must be in %s (give its name or %s/NAME): testbedd reads a rule's "
			       "secrets from there only",
			       dir, dir);
	return 0;
}

/* Open dir (not a symbolic link) for openat. */
static int open_dir(const char *dir, const char *field, struct tb_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return tb_fail(err, TB_ERR_CONFIG, field,
			       "cannot open %s, the directory of notification secrets: %s; create it (mode 0700, "
			       "owned by testbedd's user) and put the file there",
			       dir, strerror(errno));
	return fd;
}

int nf_secret_check(const char *path, const char *dir, const char *field, struct tb_error *err)
{
	const char *name;
	struct stat st;
	int dfd, rc;

	if ((rc = name_in_dir(path, dir, field, &name, err)) != 0)
		return rc;
	if ((dfd = open_dir(dir, field, err)) < 0)
		return dfd;
	rc = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
	close(dfd);
	if (rc != 0)
		return tb_fail(err, TB_ERR_CONFIG, field, "cannot read the secret file %s/%s: %s", dir, name,
			       strerror(errno));
	return check_stat(&st, path, field, err);
}

int nf_secret_read(const char *path, const char *dir, const char *field, char *buf, size_t sz, struct tb_error *err)
{
	const char *name;
	struct stat st;
	ssize_t n;
	size_t len;
	int fd, dfd, rc;

	buf[0] = '\0';
	if ((rc = name_in_dir(path, dir, field, &name, err)) != 0)
		return rc;
	if ((dfd = open_dir(dir, field, err)) < 0)
		return dfd;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	close(dfd);
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
