/* power_secret.c - a BMC method's password, read at call time: see power.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "power.h"

void tb_power_cred_hint(const struct tb_power_method *pm, char *buf, size_t sz)
{
	if (pm->password_file != NULL)
		snprintf(buf, sz, "user %s, password file %s", pm->user, pm->password_file);
	else
		snprintf(buf, sz, "user %s, password in testbedd's environment variable %s", pm->user,
			 pm->password_env != NULL ? pm->password_env : "?");
}

int tb_power_read_password(const struct tb_power_call *call, char *buf, size_t sz, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const char *m = call->m->name;
	size_t len;

	buf[0] = '\0';
	if (pm->password_file != NULL) {
		int fd = open(pm->password_file, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return tb_fail(err, TB_ERR_CONFIG, "password_file",
				       "%s: cannot read the BMC password file %s: %s; testbedd needs to "
				       "read it (mode 0600, owned by testbedd's user)",
				       m, pm->password_file, strerror(errno));
		do
			n = read(fd, buf, sz - 1);
		while (n < 0 && errno == EINTR);
		close(fd);
		if (n < 0)
			return tb_fail(err, TB_ERR_CONFIG, "password_file",
				       "%s: cannot read the BMC password file %s: %s", m, pm->password_file,
				       strerror(errno));
		len = (size_t)n;
		buf[len] = '\0';
		if (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (len > 0 && buf[len - 1] == '\r')
			buf[--len] = '\0';
		if (memchr(buf, '\0', len) != NULL || memchr(buf, '\n', len) != NULL || (size_t)n == sz - 1)
			return tb_fail(err, TB_ERR_CONFIG, "password_file",
				       "%s: the BMC password file %s must hold the password on one line "
				       "(at most %zu bytes)",
				       m, pm->password_file, sz - 2);
	} else if (pm->password_env != NULL) {
		const char *v = getenv(pm->password_env);

		if (v == NULL)
			return tb_fail(err, TB_ERR_CONFIG, "password_env",
				       "%s: the environment variable %s (the BMC password) is not set in "
				       "testbedd's environment; set it in the service's environment",
				       m, pm->password_env);
		if (strlen(v) >= sz)
			return tb_fail(err, TB_ERR_CONFIG, "password_env",
				       "%s: the BMC password in %s is longer than %zu bytes", m, pm->password_env,
				       sz - 1);
		memcpy(buf, v, strlen(v) + 1);
	} else {
		return tb_fail(err, TB_ERR_CONFIG, "power",
			       "%s: the %s method has no password_file or "
			       "password_env",
			       m, tb_power_driver_for(pm) != NULL ? tb_power_driver_for(pm)->name : "BMC");
	}
	return 0;
}
