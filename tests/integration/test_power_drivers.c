/*
 * test_power_drivers.c - the ipmi and wol power drivers against the
 * simulated testbed (deploy/sim: real ipmi_sim, ipmitool, sshd, etherwake,
 * wakeonlan and hostd listening for magic packets).  Brings up its own sim
 * (prefix tbpw, block 238) and takes it down at the end.  Needs root;
 * skipped otherwise.
 *
 * IPMI: status/on/off/cycle/soft/reset change the sim host's power; a
 * wrong password fails at once with TB_ERR_UNAUTHORIZED; a BMC that does
 * not answer fails within its timeout; the password is on no
 * /proc/PID/cmdline while ipmitool runs (but in its environment).
 * Wake-on-LAN: every way (subnet broadcast, limited broadcast, unicast,
 * from an interface's address, raw frame on the bridge, relay with
 * etherwake and with wakeonlan) powers an off host on; the steps name the
 * way and the exact command.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inventory.h"
#include "power.h"
#include "proc.h"
#include "ssh.h"
#include "steps.h"
#include "timeutil.h"

#define PFX "tbpw"
#define BLOCK "238"
#define NET "198.18.238."
#define MAC_RIGHT "02:18:ee:00:00:02"

static char sim[512];
static char simdir[256];
static char password[64];
static struct tb_inventory *inv;
static struct tb_ssh_pool *pool;
static const struct tb_machine *left, *right;
static int skip_all;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* ---- the sim ---- */

static int run_sim(const char *args, char *out, size_t outsz)
{
	char cmd[1024];
	FILE *p;
	size_t n = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s", sim, args);
	if ((p = popen(cmd, "r")) == NULL)
		return -1;
	if (out != NULL) {
		n = fread(out, 1, outsz - 1, p);
		out[n] = '\0';
		while (n > 0 && out[n - 1] == '\n')
			out[--n] = '\0';
	} else {
		char buf[256];

		while (fread(buf, 1, sizeof(buf), p) > 0)
			;
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void read_power(const char *host, char *buf, size_t sz)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/hosts/%s/power", simdir, host);
	buf[0] = '\0';
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(buf, (int)sz, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static int wait_power(const char *host, const char *want, long ms)
{
	char p[32];

	for (long t = 0; t <= ms; t += 50) {
		read_power(host, p, sizeof(p));
		if (strcmp(p, want) == 0)
			return 1;
		sleep_ms(50);
	}
	print_message("%s: power is %s, wanted %s\n", host, p, want);
	return 0;
}

/* Completed boots of host so far (": power on" lines in its log). */
static int boots(const char *host)
{
	char path[512], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/hosts/%s/log", simdir, host);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t l = strlen(line);

		if (l >= 10 && strcmp(line + l - 10, ": power on") == 0)
			n++;
		else if (l >= 11 && strcmp(line + l - 11, ": power on\n") == 0)
			n++;
	}
	fclose(f);
	return n;
}

static int wait_boots(const char *host, int more_than, long ms)
{
	for (long t = 0; t <= ms; t += 50) {
		if (boots(host) > more_than)
			return 1;
		sleep_ms(50);
	}
	print_message("%s did not boot again\n", host);
	return 0;
}

/* Power host off from inside (its OS), as a person would before a WoL. */
static void host_off(const struct tb_machine *m)
{
	const struct tb_persona *p = &m->os[0];
	struct tb_ssh_target t = {m->name, p->os, p->address, p->port, p->user, p->key_file, p->host_key, 5};
	const char *argv[] = {"poweroff", NULL};
	char pw[32];

	read_power(m->name, pw, sizeof(pw));
	if (strcmp(pw, "off") != 0) {
		assert_true(wait_power(m->name, "on", 30000));
		(void)tb_ssh_exec(NULL, &t, argv, 10000, NULL, NULL, NULL, NULL);
	}
	assert_true(wait_power(m->name, "off", 30000));
}

static int group_setup(void **state)
{
	const char *top = getenv("TB_SOURCE_DIR");
	char path[512], out[512];
	struct tb_error e;
	FILE *f;

	if (geteuid() != 0) {
		skip_all = 1;
		return 0;
	}
	snprintf(sim, sizeof(sim), "%s/deploy/sim/sim", top != NULL ? top : "../..");
	if (access(sim, X_OK) != 0) {
		skip_all = 1;
		return 0;
	}
	run_sim("down --prefix " PFX " >/dev/null 2>&1", NULL, 0);
	if (run_sim("up --prefix " PFX " --block " BLOCK " 2>&1", out, sizeof(out)) != 0) {
		fprintf(stderr, "sim up failed: %s\n", out);
		return -1;
	}
	snprintf(simdir, sizeof(simdir), "/run/testbedd-sim/%s", PFX);
	snprintf(path, sizeof(path), "%s/bmc-left.pass", simdir);
	if ((f = fopen(path, "r")) == NULL || fgets(password, sizeof(password), f) == NULL)
		return -1;
	fclose(f);
	password[strcspn(password, "\n")] = '\0';
	snprintf(path, sizeof(path), "%s/inventory.yaml", simdir);
	if (tb_inventory_load(path, 0, &inv, &e) != 0) {
		fprintf(stderr, "inventory: %s\n", e.message);
		return -1;
	}
	left = tb_inventory_find(inv, "left");
	right = tb_inventory_find(inv, "right");
	pool = tb_ssh_pool_new(2, 30);
	return left != NULL && right != NULL && pool != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
	if (skip_all)
		return 0;
	tb_ssh_pool_free(pool);
	tb_inventory_free(inv);
	run_sim("down --prefix " PFX " >/dev/null 2>&1", NULL, 0);
	return 0;
}

static const struct tb_power_method *method(const struct tb_machine *m, enum tb_power_kind kind, int via)
{
	for (size_t i = 0; i < m->npower; i++)
		if (m->power[i].driver == kind && (via < 0 || (int)m->power[i].via == via))
			return &m->power[i];
	fail_msg("%s has no such power method", m->name);
	return NULL;
}

static struct tb_power_call make_call(const struct tb_machine *m, const struct tb_power_method *pm,
				      struct tb_test_steps *s, long timeout_ms)
{
	struct tb_power_call c = {.inv = inv,
				  .m = m,
				  .pm = pm,
				  .pool = pool,
				  .step = tb_test_step,
				  .step_cls = s,
				  .timeout_ms = timeout_ms};

	return c;
}

/* ---- IPMI ---- */

static int ipmi(const struct tb_power_method *pm, enum tb_power_op op, int *is_on, struct tb_test_steps *s,
		struct tb_error *e)
{
	struct tb_power_call c = make_call(left, pm, s, 10000);

	return tb_power_ipmi.run(&c, op, is_on, e);
}

static void test_ipmi_status_and_steps(void **state)
{
	const struct tb_power_method *pm;
	struct tb_test_steps s = {0};
	struct tb_error e;
	char want[512];
	int on = -1;

	if (skip_all)
		skip();
	pm = method(left, TB_POWER_IPMI, -1);
	assert_ptr_equal(tb_power_driver_for(pm), &tb_power_ipmi);
	assert_int_equal(ipmi(pm, TB_POWER_STATUS, &on, &s, &e), 0);
	assert_int_equal(on, 1);
	assert_int_equal(s.n, 1);
	snprintf(want, sizeof(want),
		 "ipmitool -v -I lanplus -H " NET "12 -p 623 -U ADMIN -E -C 3 -R 1 -N 1 chassis power status");
	assert_string_equal(s.command[0], want);
	assert_int_equal(s.status[0], 0);
	assert_string_equal(s.output[0], "Chassis Power is on");
	assert_non_null(strstr(s.what[0], "left"));
	for (int i = 0; i < s.n; i++) {
		assert_null(strstr(s.command[i], password));
		assert_null(strstr(s.output[i], password));
		assert_null(strstr(s.what[i], password));
	}
}

static void test_ipmi_off_on(void **state)
{
	const struct tb_power_method *pm;
	struct tb_test_steps s = {0};
	struct tb_error e;
	int on = -1;

	if (skip_all)
		skip();
	pm = method(left, TB_POWER_IPMI, -1);
	assert_true(wait_power("left", "on", 30000));
	assert_int_equal(ipmi(pm, TB_POWER_OFF, NULL, &s, &e), 0);
	assert_true(wait_power("left", "off", 30000));
	assert_int_equal(ipmi(pm, TB_POWER_STATUS, &on, &s, &e), 0);
	assert_int_equal(on, 0);
	assert_int_equal(ipmi(pm, TB_POWER_ON, NULL, &s, &e), 0);
	assert_true(wait_power("left", "on", 30000));
	assert_int_equal(ipmi(pm, TB_POWER_STATUS, &on, &s, &e), 0);
	assert_int_equal(on, 1);
	assert_string_equal(s.command[0] + strlen(s.command[0]) - 3, "off");
	assert_string_equal(s.output[0], "Chassis Power Control: Down/Off");
}

static void test_ipmi_cycle_reset_soft(void **state)
{
	const struct tb_power_method *pm;
	struct tb_test_steps s = {0};
	struct tb_error e;
	int b;

	if (skip_all)
		skip();
	pm = method(left, TB_POWER_IPMI, -1);
	assert_true(wait_power("left", "on", 30000));
	b = boots("left");
	assert_int_equal(ipmi(pm, TB_POWER_CYCLE, NULL, &s, &e), 0);
	assert_true(wait_boots("left", b, 30000));
	assert_true(wait_power("left", "on", 30000));

	b = boots("left");
	assert_int_equal(ipmi(pm, TB_POWER_RESET, NULL, &s, &e), 0);
	assert_true(wait_boots("left", b, 30000));
	assert_true(wait_power("left", "on", 30000));

	assert_int_equal(ipmi(pm, TB_POWER_SOFT, NULL, &s, &e), 0);
	assert_true(wait_power("left", "off", 30000));
	assert_int_equal(ipmi(pm, TB_POWER_ON, NULL, &s, &e), 0);
	assert_true(wait_power("left", "on", 30000));
}

static void test_ipmi_wrong_password(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s = {0};
	struct tb_error e;
	char path[] = "/tmp/tbpw-pass-XXXXXX", want[512];
	int64_t t0;
	int fd;

	if (skip_all)
		skip();
	fd = mkstemp(path); /* 0600 */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "wrong-password\n", 15), 15);
	close(fd);
	pm = *method(left, TB_POWER_IPMI, -1);
	pm.password_file = path;
	t0 = tb_monotonic_ms();
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, NULL, &s, &e), TB_ERR_UNAUTHORIZED);
	/* at once, not after retries or a timeout */
	assert_true(tb_monotonic_ms() - t0 < 1500);
	snprintf(want, sizeof(want), "check the BMC credentials of left (user ADMIN, password file %s)", path);
	assert_non_null(strstr(e.message, want));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.status[0], 1);
	assert_non_null(strstr(s.output[0], "RAKP 2 HMAC is invalid"));
	assert_null(strstr(s.output[0], "wrong-password"));
	assert_null(strstr(e.message, "wrong-password"));

	/* an unknown user is a credential problem too */
	pm = *method(left, TB_POWER_IPMI, -1);
	pm.user = "NOBODY";
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, NULL, &s, &e), TB_ERR_UNAUTHORIZED);
	assert_non_null(strstr(e.message, "user NOBODY"));

	/* an unreadable password file: configuration, named */
	pm = *method(left, TB_POWER_IPMI, -1);
	pm.password_file = "/nonexistent/tbpw.pass";
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, NULL, &s, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "/nonexistent/tbpw.pass"));
	unlink(path);
}

static void test_ipmi_password_env(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s = {0};
	struct tb_error e;
	int on = -1;

	if (skip_all)
		skip();
	pm = *method(left, TB_POWER_IPMI, -1);
	pm.password_file = NULL;
	pm.password_env = "TBPW_BMC_PASSWORD";
	unsetenv("TBPW_BMC_PASSWORD");
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, &on, &s, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "TBPW_BMC_PASSWORD"));
	setenv("TBPW_BMC_PASSWORD", password, 1);
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, &on, &s, &e), 0);
	assert_int_equal(on, 1);
	unsetenv("TBPW_BMC_PASSWORD");
}

static void test_ipmi_unreachable(void **state)
{
	struct tb_power_method pm;
	struct tb_power_call c;
	struct tb_test_steps s = {0};
	struct tb_error e;
	int64_t t0, dt;

	if (skip_all)
		skip();
	pm = *method(left, TB_POWER_IPMI, -1);
	pm.address = NET "99"; /* on the sim's net, nothing there */
	t0 = tb_monotonic_ms();
	assert_int_equal(ipmi(&pm, TB_POWER_STATUS, NULL, &s, &e), TB_ERR_UNREACHABLE);
	dt = tb_monotonic_ms() - t0;
	assert_true(dt < 5000);
	assert_non_null(strstr(e.message, "does not answer"));
	assert_non_null(strstr(e.message, NET "99:623"));

	/* the hard timeout is shorter than ipmitool's own give-up */
	c = make_call(left, &pm, &s, 800);
	t0 = tb_monotonic_ms();
	assert_int_equal(tb_power_ipmi.run(&c, TB_POWER_STATUS, NULL, &e), TB_ERR_TIMEOUT);
	dt = tb_monotonic_ms() - t0;
	assert_true(dt >= 800 && dt < 800 + TB_PROC_KILL_GRACE_MS + 500);
	assert_non_null(strstr(e.message, "within 800 ms"));
}

/* ---- the password is on no command line ---- */

struct bg {
	volatile int done;
	int rc[6];
	const struct tb_power_method *pm;
};

static void *ipmi_thread(void *arg)
{
	struct bg *b = arg;

	for (int i = 0; i < 6; i++) {
		struct tb_test_steps s = {0};
		struct tb_error e;
		int on;

		b->rc[i] = ipmi(b->pm, TB_POWER_STATUS, &on, &s, &e);
	}
	b->done = 1;
	return NULL;
}

/* /proc/PID/file into buf with its NULs as newlines; 0, or -1 when it is gone. */
static int read_proc(const char *pid, const char *file, char *buf, size_t len)
{
	char path[300];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, file);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	buf[n] = '\0';
	return 0;
}

/* Scan every /proc/PID/file; 1 when one holds needle. */
static int proc_scan(const char *file, const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (d == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		char buf[32768];

		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && read_proc(de->d_name, file, buf, sizeof(buf)) == 0)
			found = strstr(buf, needle) != NULL;
	}
	closedir(d);
	return found;
}

/* One pass over /proc: 1 when a process runs ipmitool at host (its cmdline),
 * and then *env_seen when that same process's environment holds env (read
 * right away: a status call lives for milliseconds). */
static int ipmitool_scan(const char *host, const char *env, int *env_seen)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char buf[32768];

		if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
		    read_proc(de->d_name, "cmdline", buf, sizeof(buf)) != 0 || strstr(buf, "ipmitool\n") == NULL ||
		    strstr(buf, host) == NULL)
			continue;
		found = 1;
		if (read_proc(de->d_name, "environ", buf, sizeof(buf)) == 0 && strstr(buf, env) != NULL)
			*env_seen = 1;
	}
	closedir(d);
	return found;
}

static void test_ipmi_password_not_on_cmdline(void **state)
{
	struct bg b = {0};
	pthread_t th;
	char envpw[128];
	int seen_ipmitool = 0, seen_env = 0, scans = 0;

	if (skip_all)
		skip();
	b.pm = method(left, TB_POWER_IPMI, -1);
	snprintf(envpw, sizeof(envpw), "IPMI_PASSWORD=%s\n", password);
	assert_int_equal(pthread_create(&th, NULL, ipmi_thread, &b), 0);
	while (!b.done) {
		assert_false(proc_scan("cmdline", password));
		scans++;
		if (ipmitool_scan(NET "12\n", envpw, &seen_env))
			seen_ipmitool++;
	}
	pthread_join(th, NULL);
	for (int i = 0; i < 6; i++)
		assert_int_equal(b.rc[i], 0);
	print_message("%d scans, ipmitool seen in %d\n", scans, seen_ipmitool);
	assert_true(seen_ipmitool > 0); /* the scans overlapped ipmitool */
	assert_true(seen_env);          /* and -E got the password */
}

/* ---- Wake-on-LAN ---- */

static int wol(const struct tb_power_method *pm, struct tb_test_steps *s, struct tb_error *e)
{
	struct tb_power_call c = make_call(right, pm, s, 10000);

	return tb_power_wol.run(&c, TB_POWER_ON, NULL, e);
}

/* right off, then pm must bring it on; returns the steps */
static void wake_right(const struct tb_power_method *pm, struct tb_test_steps *s)
{
	struct tb_error e;

	host_off(right);
	memset(s, 0, sizeof(*s));
	if (wol(pm, s, &e) != 0)
		fail_msg("wol: %s", e.message);
	assert_true(wait_power("right", "on", 30000));
}

static void test_wol_broadcast(void **state)
{
	struct tb_test_steps s;

	if (skip_all)
		skip();
	wake_right(method(right, TB_POWER_WOL, TB_WOL_BROADCAST), &s);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.what[0], "UDP magic packet for " MAC_RIGHT " to " NET "255:9 from " NET "1");
	assert_int_equal(s.status[0], -1);
}

static void test_wol_limited_broadcast_port7(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_BROADCAST);
	pm.target = "255.255.255.255";
	pm.port = 7;
	wake_right(&pm, &s);
	assert_string_equal(s.what[0], "UDP magic packet for " MAC_RIGHT " to 255.255.255.255:7 from " NET "1");
}

static void test_wol_directed(void **state)
{
	struct tb_test_steps s;

	if (skip_all)
		skip();
	wake_right(method(right, TB_POWER_WOL, TB_WOL_DIRECTED), &s);
	assert_string_equal(s.what[0], "UDP magic packet for " MAC_RIGHT " to " NET "21:9 from " NET "1");
}

static void test_wol_from_interface(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_BROADCAST);
	pm.source = NULL;
	pm.interface = PFX "br";
	wake_right(&pm, &s);
	assert_string_equal(s.what[0], "UDP magic packet for " MAC_RIGHT " to " NET "255:9 from " NET "1 (" PFX "br)");
}

static void test_wol_raw(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_BROADCAST);
	pm.via = TB_WOL_RAW;
	pm.target = NULL;
	pm.source = NULL;
	pm.interface = PFX "br";
	wake_right(&pm, &s);
	assert_non_null(strstr(s.what[0], "EtherType 0x0842"));
	assert_non_null(strstr(s.what[0], "on " PFX "br"));
}

static void test_wol_relay_etherwake(void **state)
{
	struct tb_test_steps s;

	if (skip_all)
		skip();
	wake_right(method(right, TB_POWER_WOL, TB_WOL_RELAY), &s);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.command[0], "ssh root@" NET "2 etherwake -i mgmt0 " MAC_RIGHT);
	assert_int_equal(s.status[0], 0);

	/* etherwake failing on the relay: TB_ERR_REMOTE with its words, step recorded */
	{
		struct tb_power_method pm = *method(right, TB_POWER_WOL, TB_WOL_RELAY);
		struct tb_error e;

		pm.interface = "nosuch0";
		memset(&s, 0, sizeof(s));
		assert_int_equal(wol(&pm, &s, &e), TB_ERR_REMOTE);
		assert_non_null(strstr(e.message, "etherwake on the relay relay failed"));
		assert_int_equal(s.n, 1);
		assert_true(s.status[0] > 0);
		assert_string_equal(s.command[0], "ssh root@" NET "2 etherwake -i nosuch0 " MAC_RIGHT);
	}
}

static void test_wol_relay_wakeonlan(void **state)
{
	struct tb_power_method pm;
	struct tb_test_steps s;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_RELAY);
	pm.command = "wakeonlan";
	pm.interface = NULL;
	pm.port = 7;
	wake_right(&pm, &s);
	assert_string_equal(s.command[0], "ssh root@" NET "2 wakeonlan -p 7 " MAC_RIGHT);
	assert_int_equal(s.status[0], 0);
}

/* Mistakes fail with a sentence, and send nothing. */
static void test_wol_refusals(void **state)
{
	struct tb_power_method pm;
	struct tb_power_call c;
	struct tb_test_steps s = {0};
	struct tb_error e;
	int on;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_BROADCAST);
	c = make_call(right, &pm, &s, 5000);
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_STATUS, &on, &e), TB_ERR_INVALID);
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_OFF, NULL, &e), TB_ERR_INVALID);
	assert_int_equal(tb_power_wol.ops, TB_POWER_BIT(TB_POWER_ON));
	pm.source = NULL;
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "default route"));
	pm.source = "192.0.2.77"; /* not ours */
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "192.0.2.77"));
	pm.via = TB_WOL_RAW;
	pm.interface = "tbpwnone0";
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, "tbpwnone0"));
	pm = *method(right, TB_POWER_WOL, TB_WOL_RELAY);
	pm.relay = "nosuch";
	assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), TB_ERR_CONFIG);
	assert_int_equal(s.n, 0);
}

/* The bytes on the wire, SecureOn included, caught by a UDP socket on
 * loopback: 6 x 0xff, the MAC 16 times, the password. */
static void test_wol_packet_bytes(void **state)
{
	static const struct {
		const char *file_text;
		unsigned char pw[6];
		int pwlen;
	} cases[] = {
		{NULL, {0}, 0},
		{"0a:0b:0c:0d:0e:0f\n", {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, 6},
		{"A0B1C2D3E4F5", {0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5}, 6},
		{"192.168.1.2\n", {192, 168, 1, 2}, 4},
		{"de:ad:be:ef", {0xde, 0xad, 0xbe, 0xef}, 4},
	};
	static const unsigned char mac[6] = {0x02, 0x18, 0xee, 0x00, 0x00, 0x02};

	if (skip_all)
		skip();
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct sockaddr_in sin = {0};
		socklen_t sl = sizeof(sin);
		struct tb_power_method pm;
		struct tb_power_call c;
		struct tb_test_steps s = {0};
		struct tb_error e;
		char path[] = "/tmp/tbpw-secureon-XXXXXX", port[8];
		unsigned char buf[256];
		ssize_t n;
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
		assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
		snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
		pm = *method(right, TB_POWER_WOL, TB_WOL_DIRECTED);
		pm.target = "127.0.0.1";
		pm.source = "127.0.0.1";
		pm.port = ntohs(sin.sin_port);
		pm.secureon_file = NULL;
		if (cases[k].file_text != NULL) {
			int f = mkstemp(path);

			assert_true(f >= 0);
			assert_true(write(f, cases[k].file_text, strlen(cases[k].file_text)) > 0);
			close(f);
			pm.secureon_file = path;
		}
		c = make_call(right, &pm, &s, 5000);
		assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), 0);
		n = recv(fd, buf, sizeof(buf), 0);
		assert_int_equal(n, 102 + cases[k].pwlen);
		for (int i = 0; i < 6; i++)
			assert_int_equal(buf[i], 0xff);
		for (int i = 0; i < 16; i++)
			assert_memory_equal(buf + 6 + 6 * i, mac, 6);
		if (cases[k].pwlen > 0) {
			assert_memory_equal(buf + 102, cases[k].pw, (size_t)cases[k].pwlen);
			assert_non_null(strstr(s.what[0], "with SecureOn password"));
			unlink(path);
		}
		close(fd);
	}
	/* a malformed SecureOn file is refused, naming it */
	{
		struct tb_power_method pm = *method(right, TB_POWER_WOL, TB_WOL_DIRECTED);
		char path[] = "/tmp/tbpw-secureon-XXXXXX";
		struct tb_power_call c;
		struct tb_error e;
		int f = mkstemp(path);

		assert_true(write(f, "0a:0b:0c\n", 9) == 9);
		close(f);
		pm.secureon_file = path;
		c = make_call(right, &pm, NULL, 5000);
		c.step = NULL;
		assert_int_equal(tb_power_wol.run(&c, TB_POWER_ON, NULL, &e), TB_ERR_CONFIG);
		assert_non_null(strstr(e.message, path));
		unlink(path);
	}
}

/* Without CAP_NET_RAW, a raw frame fails saying so. */
static void test_wol_raw_needs_cap(void **state)
{
	struct tb_power_method pm;
	pid_t pid;
	int st;

	if (skip_all)
		skip();
	pm = *method(right, TB_POWER_WOL, TB_WOL_BROADCAST);
	pm.via = TB_WOL_RAW;
	pm.interface = PFX "br";
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tb_power_call c = make_call(right, &pm, NULL, 5000);
		struct tb_error e;
		int rc;

		c.step = NULL;
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		rc = tb_power_wol.run(&c, TB_POWER_ON, NULL, &e);
		_exit(rc == TB_ERR_CONFIG && strstr(e.message, "needs CAP_NET_RAW") != NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipmi_status_and_steps),
		cmocka_unit_test(test_ipmi_wrong_password),
		cmocka_unit_test(test_ipmi_password_env),
		cmocka_unit_test(test_ipmi_unreachable),
		cmocka_unit_test(test_ipmi_password_not_on_cmdline),
		cmocka_unit_test(test_ipmi_off_on),
		cmocka_unit_test(test_ipmi_cycle_reset_soft),
		cmocka_unit_test(test_wol_refusals),
		cmocka_unit_test(test_wol_raw_needs_cap),
		cmocka_unit_test(test_wol_packet_bytes),
		cmocka_unit_test(test_wol_broadcast),
		cmocka_unit_test(test_wol_limited_broadcast_port7),
		cmocka_unit_test(test_wol_directed),
		cmocka_unit_test(test_wol_from_interface),
		cmocka_unit_test(test_wol_raw),
		cmocka_unit_test(test_wol_relay_etherwake),
		cmocka_unit_test(test_wol_relay_wakeonlan),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
