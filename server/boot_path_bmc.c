/*
 * boot_path_bmc.c - the boot path bmc-bootdev (boot_paths.h): the BMC's
 * one-shot boot device (boot.bmc: the device that brings the OS wanted up,
 * e.g. pxe for a machine that netboots FreeBSD) set through the machine's
 * ipmi method (`ipmitool ... chassis bootdev DEV options=efiboot`, read back
 * with `chassis bootparam get 5`) or its redfish one (tb_redfish_boot_once:
 * BootSourceOverrideEnabled Once), then a reboot from the OS answering: the
 * firmware starts that device once.  Runs in the boot action's thread, never
 * in a handler.  Blocks for two BMC calls and a boot.
 */
#include "boot_internal.h"
#include "boot_paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "boot_check.h"
#include "hosts.h"
#include "power.h"
#include "proc.h"
#include "services.h"
#include "validate.h"
#include "wipe.h"

#define BMC_TIMEOUT_MS 20000
#define BMC_MAX_OUTPUT (64 * 1024)

/* ipmitool against m's BMC (pm) with the words after the session options;
 * the password through -E (IPMI_PASSWORD in its environment only).  *out
 * (len) gets stdout; a step records the command. */
static int ipmi(const struct tb_power_call *call, const char *const words[], const char *what, char *out, size_t len,
		struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	char pw[256], env_pw[sizeof("IPMI_PASSWORD=") + sizeof(pw)], port[16], suite[16];
	const char *env[] = {env_pw, NULL};
	const char *argv[32] = {"ipmitool", "-v", "-I", "lanplus", "-H", pm->address, "-p", port, "-U",
				pm->user,   "-E", "-C", suite,     "-R", "1",         "-N", "1"};
	size_t n = 17;
	struct tb_proc_result r;
	struct tb_error perr = {0};
	char *cmd;
	int rc;

	if (pm->address == NULL || !tb_valid_address(pm->address) || pm->address[0] == '-' || pm->user == NULL ||
	    !tb_valid_user(pm->user) || pm->user[0] == '-')
		return tb_fail(err, TB_ERR_CONFIG, "power", "%s: the ipmi method needs a valid address and user",
			       call->m->name);
	for (size_t i = 0; words[i] != NULL && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[n++] = words[i];
	argv[n] = NULL;
	snprintf(port, sizeof(port), "%u", pm->port != 0 ? pm->port : 623u);
	snprintf(suite, sizeof(suite), "%d", pm->cipher_suite);
	if ((rc = tb_power_read_password(call, pw, sizeof(pw), err)) != 0) {
		tb_wipe(pw, sizeof(pw));
		return rc;
	}
	snprintf(env_pw, sizeof(env_pw), "IPMI_PASSWORD=%s", pw);
	tb_wipe(pw, sizeof(pw));
	rc = tb_proc_run(argv, env, BMC_TIMEOUT_MS, BMC_MAX_OUTPUT, call->cancel, &r, &perr);
	tb_wipe(env_pw, sizeof(env_pw));
	cmd = tb_proc_display(argv);
	if (r.pid > 0)
		call->step(call->step_cls, what, cmd, r.exit_status, r.err != NULL && r.err[0] ? r.err : NULL);
	free(cmd);
	if (rc == TB_ERR_NOT_FOUND)
		rc = tb_fail(err, TB_ERR_CONFIG, "power",
			     "%s: ipmitool is not installed on the testbedd machine (Debian: apt install ipmitool)",
			     call->m->name);
	else if (rc != 0)
		*err = perr;
	else if (r.exit_status != 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "", "%s: the BMC (%s) refused %s (exit %d): %.200s", call->m->name,
			     pm->address, what, r.exit_status, r.err != NULL ? r.err : "");
	if (rc == 0)
		snprintf(out, len, "%s", r.out != NULL ? r.out : "");
	tb_proc_result_free(&r);
	return rc;
}

/* IPMI: chassis bootdev DEV options=efiboot, read back (Get System Boot
 * Options parameter 5: its Boot Device Selector). */
static int ipmi_bootdev(const struct tb_power_call *call, const char *dev, struct tb_error *err)
{
	const char *set[] = {"chassis", "bootdev", dev, "options=efiboot", NULL};
	const char *get[] = {"chassis", "bootparam", "get", "5", NULL};
	const char *want = tb_boot_ipmi_selector(dev);
	char out[4096], what[200];
	int rc;

	snprintf(what, sizeof(what), "IPMI chassis bootdev %s options=efiboot for %s", dev, call->m->name);
	if ((rc = ipmi(call, set, what, out, sizeof(out), err)) != 0)
		return rc;
	snprintf(what, sizeof(what), "IPMI chassis bootparam get 5 (the boot device) for %s", call->m->name);
	if ((rc = ipmi(call, get, what, out, sizeof(out), err)) != 0)
		return rc;
	if (want == NULL || strstr(out, want) == NULL)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "%s: the BMC took chassis bootdev %s but its boot device reads back otherwise "
			       "(no \"%s\" in: %.200s)",
			       call->m->name, dev, want != NULL ? want : "?", out);
	return 0;
}

/* boot_internal.h */
int tb_boot_bmc_set(const struct tb_power_call *call, const char *dev, struct tb_error *err)
{
	if (tb_boot_redfish_target(dev) == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "boot", "%s: %.40s is not a boot device testbedd can ask a BMC for",
			       call->m->name, dev != NULL ? dev : "(none)");
	if (call->pm->driver == TB_POWER_REDFISH)
		return tb_redfish_boot_once(call, tb_boot_redfish_target(dev), err);
	if (call->pm->driver == TB_POWER_IPMI)
		return ipmi_bootdev(call, dev, err);
	return tb_fail(err, TB_ERR_CONFIG, "boot", "%s: only an ipmi or redfish power method sets a boot device",
		       call->m->name);
}

int tb_boot_path_bmc_bootdev(struct tb_boot_run *r, struct tb_error *err)
{
	const struct tb_power_method *pm = tb_boot_bmc_method(r->m);
	const char *dev = tb_boot_bmc_of(r->m, r->os);
	struct tb_hosts *hosts = tb_action_services(r->a)->hosts;
	struct tb_power_call call;
	int rc;

	if (pm == NULL || dev == NULL)
		return tb_fail(err, TB_ERR_INVALID, "os", "%s: no boot.bmc.%s or no ipmi or redfish power method",
			       r->m->name, r->os);
	call = (struct tb_power_call){
		.inv = r->inv,
		.m = r->m,
		.pm = pm,
		.pool = tb_hosts_pool(hosts),
		.hosts = hosts,
		.step = tb_action_step,
		.step_cls = r->a,
		.cancel = tb_action_cancel_flag(r->a),
		.timeout_ms = BMC_TIMEOUT_MS,
	};
	if ((rc = tb_boot_bmc_set(&call, dev, err)) != 0)
		return rc;
	tb_action_note(r->a, "the BMC boots %s once from %s (boot.bmc.%s)", r->m->name, dev, r->os);
	if ((rc = tb_boot_reboot_wait(r->a, r->inv, r->m, r->cur, r->os, r->cur, err)) != 0)
		return rc;
	return tb_boot_landed(r, "the firmware did not take the BMC's one-shot boot device (does boot.bmc name it?)",
			      err);
}
