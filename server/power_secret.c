/* power_secret.c - a BMC method's password, read at call time: see power.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto_secret.h"
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

	buf[0] = '\0';
	if (pm->password_file != NULL) {
		/* the inventory's path, written by the operator: a link is fine */
		struct tb_secret_file f = {
			AT_FDCWD, pm->password_file, pm->password_file, "the BMC password file", "password_file", 0};
		char msg[TB_ERROR_MSG_MAX];
		int rc = tb_secret_read(&f, buf, sz, err);

		if (rc != 0) {
			snprintf(msg, sizeof(msg), "%s", err->message);
			return tb_fail(err, rc, "password_file", "%s: %s", m, msg);
		}
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
