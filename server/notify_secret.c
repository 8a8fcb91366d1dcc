/* notify_secret.c - a sink's secret, read from a file at send time: see
 * notify_internal.h.  Read as every secret file is (crypto_secret.h), and
 * stricter than a BMC password file: owned by testbedd's user, not a
 * symbolic link, not empty, and in the secrets directory: a rule is written
 * over the API, and without that an admin could have testbedd send any
 * one-line file it can read (admin.token, a BMC password file) to a URL of
 * the admin's choosing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "crypto_secret.h"
#include "notify.h"
#include "notify_internal.h"
#include "wipe.h"

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

int nf_secret_read(const char *path, const char *dir, const char *field, char *buf, size_t sz, struct tb_error *err)
{
	struct tb_secret_file f = {.shown = path,
				   .what = "the secret file",
				   .field = field,
				   .flags = TB_SECRET_NOFOLLOW | TB_SECRET_OWNER | TB_SECRET_NONEMPTY};
	int rc;

	buf[0] = '\0';
	if ((rc = name_in_dir(path, dir, field, &f.name, err)) != 0)
		return rc;
	if ((f.dirfd = open_dir(dir, field, err)) < 0)
		return f.dirfd;
	rc = tb_secret_read(&f, buf, sz, err);
	close(f.dirfd);
	return rc;
}

int nf_secret_check(const char *path, const char *dir, const char *field, struct tb_error *err)
{
	char buf[NF_SECRET_MAX];
	int rc = nf_secret_read(path, dir, field, buf, sizeof(buf), err);

	tb_wipe(buf, sizeof(buf));
	return rc;
}
