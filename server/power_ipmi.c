/*
 * power_ipmi.c - the "ipmi" power driver: ipmitool over IPMI 2.0 (lanplus).
 *
 *   ipmitool -v -I lanplus -H ADDR -p PORT -U USER -E -C SUITE -R 1 -N 1 chassis power OP
 *
 * The password goes through -E: IPMI_PASSWORD in ipmitool's environment only
 * (proc.h), read at call time from password_file (one trailing newline
 * stripped) or from testbedd's own environment variable password_env.
 * -C is given always (without it ipmitool 1.8.19 probes cipher suites for
 * about 10 s per command); -R 1 -N 1 bound an unanswered command to about
 * 2 s (20 s by default), and tb_proc_run adds a hard timeout.
 *
 * -v is there only to tell a refused password from a silent BMC: without it
 * ipmitool 1.8.19 prints the same "Error: Unable to establish IPMI v2 /
 * RMCP+ session" for both.  With -v a wrong password adds "> RAKP 2 HMAC is
 * invalid" (about 0.1 s, exit 1), an unknown user "RAKP 2 message indicates
 * an error : unauthorized name", an unsupported cipher suite "Error in open
 * session response message : invalid authentication algorithm", and a BMC
 * that does not answer "Get Auth Capabilities error" (about 2.1 s).  The
 * -v noise lines ("Loading IANA PEN Registry...", the VSO probe) are left
 * out of the recorded output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "power.h"
#include "wipe.h"
#include "proc.h"
#include "validate.h"

#define IPMI_TIMEOUT_MS 15000L
#define IPMI_MAX_OUTPUT 16384u
/* IPMI 2.0 passwords are at most 20 bytes ("lanplus: password is longer
 * than 20 bytes." otherwise). */
#define IPMI_PASSWORD_MAX 20
#define STEP_OUTPUT_MAX 400

/* Lines ipmitool -v prints on every run: not worth recording. */
static const char *const noise[] = {
	"Loading IANA PEN Registry",
	"Running Get VSO Capabilities",
	"Invalid completion code received: Invalid command",
	"Discovered IPMB address",
	NULL,
};

/* ipmitool's words when the BMC answered and refused the credentials
 * (lanplus.c, 1.8.19). */
static const char *const auth_refused[] = {
	"RAKP 2 HMAC is invalid",
	"RAKP 2 message indicates an error",
	"RAKP 4 message has invalid integrity check value",
	"RAKP 4 message indicates an error",
	"Invalid user name",
	"unauthorized name",
	"Insufficient privilege level",
	"Requested privilege level exceeds limit",
	"password is longer than 20 bytes",
	NULL,
};

/* The BMC answered but does not do the cipher suite we asked for. */
static const char *const suite_refused[] = {
	"invalid authentication algorithm",  "invalid integrity algorithm",
	"invalid confidentiality algorithm", "Invalid cipher suite",
	"Unsupported cipher suite",          NULL,
};

static int contains_any(const char *s, const char *const words[])
{
	for (size_t i = 0; words[i] != NULL; i++)
		if (strstr(s, words[i]) != NULL)
			return 1;
	return 0;
}

/*
 * The meaningful lines of ipmitool's output (stdout, then stderr without
 * the -v noise), joined with "; ", at most STEP_OUTPUT_MAX bytes, with the
 * password (if it ever showed up) replaced by ***.
 */
static void short_output(const struct tb_proc_result *r, const char *password, char *out, size_t outsz)
{
	const char *streams[2] = {r->out, r->err};
	size_t len = 0;

	out[0] = '\0';
	for (int s = 0; s < 2; s++) {
		const char *p = streams[s];

		while (p != NULL && *p != '\0') {
			const char *nl = strchr(p, '\n');
			size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
			int keep = n > 0;

			for (size_t i = 0; keep && noise[i] != NULL; i++)
				if (strncmp(p, noise[i], strlen(noise[i])) == 0)
					keep = 0;
			if (keep && len + n + 3 < outsz) {
				if (len > 0) {
					memcpy(out + len, "; ", 2);
					len += 2;
				}
				memcpy(out + len, p, n);
				len += n;
				out[len] = '\0';
			}
			p = nl != NULL ? nl + 1 : NULL;
		}
	}
	if (password != NULL && strlen(password) >= 3) {
		char *hit;

		while ((hit = strstr(out, password)) != NULL) {
			size_t pl = strlen(password);

			memmove(hit + 3, hit + pl, strlen(hit + pl) + 1);
			memcpy(hit, "***", 3);
		}
	}
}

/* "left's BMC (198.18.0.12:623)" for messages. */
static void bmc_name(const struct tb_power_call *call, char *buf, size_t sz)
{
	snprintf(buf, sz, "the BMC of %s (%s:%u)", call->m->name, call->pm->address,
		 call->pm->port != 0 ? call->pm->port : 623u);
}

/* The password, with IPMI 2.0's length limit. */
static int read_password(const struct tb_power_call *call, char *buf, size_t sz, struct tb_error *err)
{
	int rc = tb_power_read_password(call, buf, sz, err);

	if (rc == 0 && strlen(buf) > IPMI_PASSWORD_MAX)
		return tb_fail(err, TB_ERR_CONFIG, call->pm->password_file != NULL ? "password_file" : "password_env",
			       "%s: the BMC password is longer than %d bytes, the IPMI 2.0 limit; check "
			       "the BMC credentials",
			       call->m->name, IPMI_PASSWORD_MAX);
	return rc;
}

/* What ipmitool's run (rc from tb_proc_run, its result r) means: 0 (and
 * *is_on for status), or the error a person can act on. */
static int ipmi_outcome(const struct tb_power_call *call, enum tb_power_op op, const char *opword, int rc,
			const struct tb_proc_result *r, const struct tb_error *perr, const char *bmc, const char *creds,
			const char *output, int *is_on, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const char *mname = call->m->name;

	if (rc == TB_ERR_NOT_FOUND)
		rc = tb_fail(err, TB_ERR_CONFIG, "power",
			     "%s: ipmitool is not installed on the testbedd machine (Debian: apt install "
			     "ipmitool; FreeBSD: pkg install ipmitool)",
			     mname);
	else if (rc == TB_ERR_TIMEOUT)
		rc = tb_fail(err, TB_ERR_TIMEOUT, "power",
			     "%s: %s did not answer chassis power %s within %ld ms; check that the BMC "
			     "is powered and reachable from testbedd",
			     mname, bmc, opword, call->timeout_ms > 0 ? call->timeout_ms : IPMI_TIMEOUT_MS);
	else if (rc == TB_ERR_CANCELED)
		rc = tb_fail(err, TB_ERR_CANCELED, NULL, "%s: IPMI chassis power %s stopped on request", mname, opword);
	else if (rc != 0) {
		if (err != NULL)
			*err = *perr;
	} else if (r->exit_status == 0) {
		if (op == TB_POWER_STATUS) {
			if (strstr(r->out, "Chassis Power is on") != NULL) {
				if (is_on != NULL)
					*is_on = 1;
			} else if (strstr(r->out, "Chassis Power is off") != NULL) {
				if (is_on != NULL)
					*is_on = 0;
			} else {
				rc = tb_fail(err, TB_ERR_REMOTE, "power",
					     "%s: %s answered chassis power status with \"%s\", not "
					     "\"Chassis Power is on|off\"",
					     mname, bmc, output);
			}
		}
	} else if (contains_any(r->err, auth_refused)) {
		rc = tb_fail(err, TB_ERR_UNAUTHORIZED, "power",
			     "%s refused the login: check the BMC credentials of %s (%s)", bmc, mname, creds);
	} else if (contains_any(r->err, suite_refused)) {
		rc = tb_fail(err, TB_ERR_CONFIG, "cipher_suite",
			     "%s does not support IPMI cipher suite %d: set cipher_suite of %s to one it "
			     "offers (3 on most BMCs; `ipmitool lan print` lists them)",
			     bmc, pm->cipher_suite, mname);
	} else if (strstr(r->err, "Unable to establish") != NULL ||
		   strstr(r->err, "Get Auth Capabilities error") != NULL || strstr(r->err, "No response") != NULL ||
		   strstr(r->err, "Address lookup") != NULL) {
		rc = tb_fail(err, TB_ERR_UNREACHABLE, "power",
			     "%s: %s does not answer (ipmitool: %s); check that it is powered and "
			     "reachable from testbedd",
			     mname, bmc, output);
	} else {
		rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: %s failed chassis power %s (exit %d): %s", mname, bmc,
			     opword, r->exit_status, output);
	}
	return rc;
}

static int ipmi_run(const struct tb_power_call *call, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const char *mname = call->m->name;
	char password[256], env_pw[sizeof("IPMI_PASSWORD=") + sizeof(password)];
	char port[16], suite[16], bmc[200], creds[400], what[300], output[STEP_OUTPUT_MAX + 1];
	const char *opword;
	const char *env[] = {env_pw, NULL};
	struct tb_proc_result r;
	struct tb_error perr;
	char *cmd = NULL;
	int rc;

	switch (op) {
	case TB_POWER_ON: opword = "on"; break;
	case TB_POWER_OFF: opword = "off"; break;
	case TB_POWER_CYCLE: opword = "cycle"; break;
	case TB_POWER_RESET: opword = "reset"; break;
	case TB_POWER_SOFT: opword = "soft"; break;
	case TB_POWER_STATUS: opword = "status"; break;
	default: return tb_fail(err, TB_ERR_INVALID, "action", "%s: IPMI cannot do this", mname);
	}
	/* The inventory validated these; argv is built from them only, so
	 * check again rather than pass something ipmitool takes as an option. */
	if (pm->address == NULL || !tb_valid_address(pm->address) || pm->address[0] == '-' || pm->user == NULL ||
	    !tb_valid_user(pm->user) || pm->user[0] == '-' || pm->port > 65535 || pm->cipher_suite < 0 ||
	    pm->cipher_suite > 17)
		return tb_fail(err, TB_ERR_CONFIG, "power",
			       "%s: the ipmi method needs a valid address, "
			       "user, port and cipher_suite",
			       mname);
	bmc_name(call, bmc, sizeof(bmc));
	tb_power_cred_hint(pm, creds, sizeof(creds));
	snprintf(port, sizeof(port), "%u", pm->port != 0 ? pm->port : 623u);
	snprintf(suite, sizeof(suite), "%d", pm->cipher_suite);

	const char *argv[] = {"ipmitool", "-v", "-I",     "lanplus", "-H",    pm->address, "-p",
			      port,       "-U", pm->user, "-E",      "-C",    suite,       "-R",
			      "1",        "-N", "1",      "chassis", "power", opword,      NULL};

	if ((rc = read_password(call, password, sizeof(password), err)) != 0) {
		tb_wipe(password, sizeof(password));
		return rc;
	}
	snprintf(env_pw, sizeof(env_pw), "IPMI_PASSWORD=%s", password);
	rc = tb_proc_run(argv, env, call->timeout_ms > 0 ? call->timeout_ms : IPMI_TIMEOUT_MS, IPMI_MAX_OUTPUT,
			 call->cancel, &r, &perr);
	tb_wipe(env_pw, sizeof(env_pw));

	short_output(&r, password, output, sizeof(output));
	cmd = tb_proc_display(argv);
	snprintf(what, sizeof(what), "IPMI chassis power %s for %s (BMC %s:%s)", opword, mname, pm->address, port);
	if (call->step != NULL && r.pid > 0)
		call->step(call->step_cls, what, cmd, r.exit_status, output[0] != '\0' ? output : NULL);
	tb_debug("power", "%s: %s: exit %d: %s", mname, cmd != NULL ? cmd : "ipmitool", r.exit_status, output);

	rc = ipmi_outcome(call, op, opword, rc, &r, &perr, bmc, creds, output, is_on, err);
	tb_wipe(password, sizeof(password));
	free(cmd);
	tb_proc_result_free(&r);
	return rc;
}

const struct tb_power_driver tb_power_ipmi = {
	.name = "ipmi",
	.ops = TB_POWER_BIT(TB_POWER_ON) | TB_POWER_BIT(TB_POWER_OFF) | TB_POWER_BIT(TB_POWER_CYCLE) |
	       TB_POWER_BIT(TB_POWER_RESET) | TB_POWER_BIT(TB_POWER_SOFT) | TB_POWER_BIT(TB_POWER_STATUS),
	.run = ipmi_run,
};
