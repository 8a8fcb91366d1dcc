/* power.c - the power state machine: do, then prove by asking the host.  See power.h. */
#include "power.h"
#include "validate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "services.h"
#include "inventory.h"
#include <pthread.h>

#include "boot_check.h"
#include "hosts.h"
#include "proc.h"
#include "ssh.h"
#include "timeutil.h"

#define BMC_CALL_MS 15000
#define BMC_TRIES 3

const char *tb_power_op_name(enum tb_power_op op)
{
	static const char *const names[] = {"on", "off", "cycle", "reset", "soft", "status"};

	return op < TB_POWER_NOPS ? names[op] : "?";
}

int tb_power_op_parse(const char *s)
{
	for (int op = 0; op < TB_POWER_STATUS; op++)
		if (s != NULL && strcmp(s, tb_power_op_name((enum tb_power_op)op)) == 0)
			return op;
	return -1;
}

#define DOWN_CONFIRM_MS 10000 /* after the watcher: until the old OS stops answering */

/* A driver call of method pm; relay_os (40 bytes, the caller's) gets the OS
 * the prober last saw answer on a Wake-on-LAN relay, so that the driver logs
 * in to that persona rather than the relay's first. */
static void fill_call(struct tb_power_call *c, struct tb_action *a, const struct tb_inventory *inv,
		      const struct tb_machine *m, const struct tb_power_method *pm, long timeout_ms,
		      char relay_os[TB_NAME_MAX])
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;

	relay_os[0] = '\0';
	if (pm->driver == TB_POWER_WOL && pm->via == TB_WOL_RELAY && pm->relay != NULL &&
	    !tb_hosts_answering(hosts, pm->relay, relay_os, 40))
		relay_os[0] = '\0';
	*c = (struct tb_power_call){
		.inv = inv,
		.m = m,
		.pm = pm,
		.pool = tb_hosts_pool(hosts),
		.hosts = hosts,
		.relay_os = relay_os[0] != '\0' ? relay_os : NULL,
		.step = tb_action_step,
		.step_cls = a,
		.cancel = tb_action_cancel_flag(a),
		.timeout_ms = timeout_ms,
	};
}

/* One driver call, retrying transient failures with jittered backoff. */
static int driver_call(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
		       const struct tb_power_method *pm, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	const struct tb_power_driver *d = tb_power_driver_for(pm);
	struct tb_power_call c;
	char relay_os[TB_NAME_MAX];
	long backoff = 500;
	int rc = TB_ERR_INTERNAL;

	if (d == NULL || !(tb_power_method_ops(pm) & TB_POWER_BIT(op)))
		return tb_fail(err, TB_ERR_INVALID, "action", "%s: the %s method cannot %s", m->name,
			       d != NULL ? d->name : "?", tb_power_op_name(op));
	/* a command method says how long its program may take */
	fill_call(&c, a, inv, m, pm,
		  pm->driver == TB_POWER_COMMAND && pm->timeout_s > 0 ? pm->timeout_s * 1000L : BMC_CALL_MS, relay_os);
	for (int attempt = 1; attempt <= BMC_TRIES; attempt++) {
		rc = d->run(&c, op, is_on, err);
		if (rc != TB_ERR_UNREACHABLE && rc != TB_ERR_TIMEOUT)
			return rc;
		if (attempt < BMC_TRIES && !tb_action_canceled(a)) {
			long wait = backoff / 2 + rand() % (backoff + 1);

			tb_action_note(a, "%s did not answer (attempt %d of %d); retrying in %ld ms", d->name, attempt,
				       BMC_TRIES, wait);
			tb_sleep_ms(wait, tb_action_cancel_flag(a));
			backoff *= 2;
		}
	}
	return rc;
}

static const struct tb_power_method *find_method(const struct tb_machine *m, enum tb_power_kind kind)
{
	for (size_t i = 0; i < m->npower; i++)
		if (m->power[i].driver == kind)
			return &m->power[i];
	return NULL;
}

/* The first method other than Wake-on-LAN (a BMC: ipmi, redfish; or a
 * command) that can do op, in the inventory's order; NULL when none. */
static const struct tb_power_method *find_bmc(const struct tb_machine *m, enum tb_power_op op)
{
	for (size_t i = 0; i < m->npower; i++)
		if (m->power[i].driver != TB_POWER_WOL && (tb_power_method_ops(&m->power[i]) & TB_POWER_BIT(op)))
			return &m->power[i];
	return NULL;
}

/* A relay way with a SecureOn password: etherwake shows it on the relay's command line. */
static int relay_secureon(const struct tb_power_method *pm)
{
	return pm->via == TB_WOL_RELAY && pm->secureon_file != NULL;
}

/*
 * Send every Wake-on-LAN way the machine has; 0 when at least one went out.
 * A relay way with a SecureOn password goes last, and only when no way from
 * this machine onto the target's segment (a bound broadcast, a raw frame)
 * went out: there the password stays in the packet.  first: note the skip
 * (the resends do not repeat it).
 */
static int send_wol(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, int first,
		    struct tb_error *err)
{
	int sent = 0, local = 0, rc = TB_ERR_INVALID;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->npower; i++) {
			const struct tb_power_method *pm = &m->power[i];
			struct tb_power_call c;
			struct tb_error e = {0};
			char relay_os[TB_NAME_MAX];

			if (pm->driver != TB_POWER_WOL || relay_secureon(pm) != (pass == 1))
				continue;
			if (pass == 1 && local > 0) {
				if (first)
					tb_action_note(
						a,
						"Wake-on-LAN: not through the relay %s: etherwake would show the "
						"SecureOn password on the relay's command line, and the packet went "
						"out on %s's segment from this machine",
						pm->relay, m->name);
				continue;
			}
			fill_call(&c, a, inv, m, pm, 10000, relay_os);
			rc = tb_power_wol.run(&c, TB_POWER_ON, NULL, &e);
			if (rc == 0) {
				sent++;
				local += pm->via == TB_WOL_BROADCAST || pm->via == TB_WOL_RAW;
			} else {
				tb_action_note(a, "Wake-on-LAN: %s", e.message);
				*err = e;
			}
		}
	}
	return sent > 0 ? 0 : rc;
}

/* One probe of a machine being waited for: when it is expected up as
 * expect, that persona only; after DOWN_CONFIRM_MS (the old OS's sshd has
 * surely gone) every PROBE_ALL_EVERY-th round, and at the end of the wait,
 * all of them (GRUB may have booted another OS). */
#define PROBE_ALL_EVERY 4
static int probe_wait(struct tb_hosts *hosts, const struct tb_machine *m, const char *expect, int round,
		      int64_t waited_ms, int last, char *os, size_t oslen)
{
	int all = last || (waited_ms >= DOWN_CONFIRM_MS && round % PROBE_ALL_EVERY == PROBE_ALL_EVERY - 1);

	if (expect == NULL)
		return tb_hosts_probe_one(hosts, m, os, oslen);
	return tb_hosts_probe_expect(hosts, m, expect, !all, os, oslen);
}

static int wait_for(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, int want_up,
		    int timeout_s, int resend_wol, const char *expect, char *os, size_t oslen, struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	int64_t start = tb_monotonic_ms(), last_wol = start;

	for (int round = 0;; round++) {
		int up;
		int64_t now = tb_monotonic_ms(), round_start = now;
		long period;

		if (want_up && resend_wol && now - last_wol >= TB_WOL_RESEND_S * 1000) {
			struct tb_error e = {0};

			/* Wake-on-LAN is lossy: keep sending until the host answers. */
			send_wol(a, inv, m, 0, &e);
			last_wol = now;
		}
		up = probe_wait(hosts, m, want_up ? expect : NULL, round, now - start,
				now - start >= (int64_t)timeout_s * 1000 - TB_PROBE_WAIT_CONNECT_S * 1000, os, oslen);
		now = tb_monotonic_ms();

		if (up == want_up) {
			if (up)
				tb_action_note(a, "%s answers as %s after %.1f s", m->name, os,
					       (double)(now - start) / 1000.0);
			else
				tb_action_note(a, "%s no longer answers (after %.1f s)", m->name,
					       (double)(now - start) / 1000.0);
			return 0;
		}
		if (tb_action_canceled(a))
			return tb_fail(err, TB_ERR_CANCELED, "", "canceled while waiting for %s", m->name);
		if (now - start >= (int64_t)timeout_s * 1000)
			return tb_fail(
				err, TB_ERR_TIMEOUT, "",
				want_up ? "%s did not answer ssh within %d s (boot_timeout_s): check its console or BMC"
					: "%s still answers after %d s (shutdown_timeout_s)",
				m->name, timeout_s);
		/* a probe round every second (every quarter second for the one
		 * persona a boot expects: a refused connection costs nothing); one
		 * that waited out a connect timeout has used its time already */
		period = want_up && expect != NULL ? 250 : 1000;
		if (tb_monotonic_ms() - round_start < period)
			tb_sleep_ms(period - (long)(tb_monotonic_ms() - round_start), tb_action_cancel_flag(a));
	}
}

int tb_power_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, int want_up,
		  int timeout_s, int resend_wol, char *os, size_t oslen, struct tb_error *err)
{
	return wait_for(a, inv, m, want_up, timeout_s, resend_wol, NULL, os, oslen, err);
}

int tb_power_ssh(struct tb_action *a, const struct tb_machine *m, const char *os, const char *const argv[],
		 long timeout_ms, struct tb_ssh_capture *cap, struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	const struct tb_persona *p = tb_machine_persona(m, os);
	struct tb_ssh_target t;
	char pin[96], shown[1024], *q;
	int rc;

	memset(cap, 0, sizeof(*cap));
	if (p == NULL)
		return tb_fail(err, TB_ERR_NOT_FOUND, "os", "%s has no OS persona %s", m->name, os);
	tb_hosts_target(hosts, m, p, &t, pin, sizeof(pin));
	rc = tb_ssh_run_capture(tb_hosts_pool(hosts), &t, argv, timeout_ms, 8192, cap, err);
	q = tb_proc_display(argv);
	snprintf(shown, sizeof(shown), "ssh %s@%s %s", p->user, p->address, q != NULL ? q : "?");
	free(q);
	{
		char out[1024];

		snprintf(out, sizeof(out), "%s%s%s", cap->out != NULL ? cap->out : "",
			 cap->err != NULL && cap->err[0] ? "\n" : "", cap->err != NULL ? cap->err : "");
		tb_action_step(a, rc == 0 ? "ran on the host" : err->message, shown,
			       rc == 0 ? cap->res.exit_status : -1, out[0] ? out : NULL);
	}
	return rc;
}

/* What the persona answering as os is and has for powering itself off:
 * `uname -s` ("" when it cannot tell) and which of shutdown, poweroff,
 * reboot and systemctl are on its PATH (one ssh command). */
struct os_tools {
	char sys[64];
	bool shutdown, poweroff, reboot, systemctl;
};

static void os_tools(struct tb_action *a, const struct tb_machine *m, const char *os, struct os_tools *o)
{
	static const char *const argv[] = {
		"sh", "-c", "uname -s; for c in shutdown poweroff reboot systemctl; do command -v $c; done", NULL};
	struct tb_ssh_capture cap;
	struct tb_error e = {0};
	char text[1024], *line, *save = NULL;

	memset(o, 0, sizeof(*o));
	/* a path a line for each one there (dash's command -v takes one name) */
	if (tb_power_ssh(a, m, os, argv, 10000, &cap, &e) == 0 && cap.out != NULL) {
		snprintf(text, sizeof(text), "%s", cap.out);
		for (line = strtok_r(text, "\r\n", &save); line != NULL; line = strtok_r(NULL, "\r\n", &save)) {
			const char *name = strrchr(line, '/') != NULL ? strrchr(line, '/') + 1 : line;

			if (o->sys[0] == '\0') { /* the first line: uname -s */
				snprintf(o->sys, sizeof(o->sys), "%s", line);
				continue;
			}
			o->shutdown |= strcmp(name, "shutdown") == 0;
			o->poweroff |= strcmp(name, "poweroff") == 0;
			o->reboot |= strcmp(name, "reboot") == 0;
			o->systemctl |= strcmp(name, "systemctl") == 0;
		}
	}
	tb_ssh_capture_free(&cap);
}

/*
 * Seeing a reboot: a probe between two polls can miss a host that is down
 * for a second (the simulated testbed reboots that fast; so do VMs).  So a
 * watcher keeps a command running on the host over its own ssh session
 * while the reboot is triggered: the host went down when that command's
 * session dies.  It prints a line a second, so that a cancel is seen.
 */
struct watch {
	struct tb_action *a;
	struct tb_ssh_target t;
	char pin[96];
	long timeout_ms;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started, rc;
	int64_t ended_ms;
};

static int watch_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct watch *w = cls;

	(void)stream, (void)data, (void)len;
	pthread_mutex_lock(&w->lock);
	if (!w->started) {
		w->started = 1;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return tb_action_canceled(w->a) ? -1 : 0;
}

static void *watch_run(void *arg)
{
	static const char *const argv[] = {"sh", "-c", "while :; do echo up; sleep 1; done", NULL};
	struct watch *w = arg;
	struct tb_ssh_result res;
	struct tb_error e = {0};
	int rc = tb_ssh_exec(NULL, &w->t, argv, w->timeout_ms, watch_output, w, &res, &e);

	pthread_mutex_lock(&w->lock);
	w->rc = rc;
	w->ended_ms = tb_monotonic_ms();
	w->started = 1; /* also wakes a caller still waiting for the start */
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* The persona's boot id, new at every boot: Linux's kernel.random.boot_id
 * (procps sysctl), FreeBSD's kern.boottime (the kernel by the
 * persona's name, boot_check.h).  "" when it could not be read.  One ssh
 * command (a step), up to 10 s. */
static void boot_id(struct tb_action *a, const struct tb_machine *m, const char *os, char *out, size_t len)
{
	static const char *const lin[] = {"sysctl", "-n", "kernel.random.boot_id", NULL};
	static const char *const bsd[] = {"sysctl", "-n", "kern.boottime", NULL};
	struct tb_ssh_capture cap;
	struct tb_error e = {0};

	out[0] = '\0';
	if (tb_power_ssh(a, m, os, strcmp(tb_boot_kernel_of(os), "FreeBSD") == 0 ? bsd : lin, 10000, &cap, &e) == 0 &&
	    cap.res.exit_status == 0 && cap.out != NULL) {
		snprintf(out, len, "%s", cap.out);
		out[strcspn(out, "\r\n")] = '\0';
	}
	tb_ssh_capture_free(&cap);
}

/* A reboot is proven by a new boot id, not by a probe that missed the host:
 * when it answers as cur_os again its boot id must differ from before (so a
 * reboot too quick for any probe to see is still proven, and an old OS that
 * only dropped its sessions is not taken for a new boot).  While the id is
 * the same, asked again every 2 s until the boot timeout.  Another OS
 * answering is its own proof.  Blocks up to boot_timeout_s. */
static int reboot_proven(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			 const char *cur_os, const char *before, const char *expect, char *os_out, struct tb_error *err)
{
	const char *what = strcmp(tb_boot_kernel_of(cur_os), "FreeBSD") == 0 ? "kern.boottime" : "boot id";
	int64_t until = tb_monotonic_ms() + (int64_t)m->boot_timeout_s * 1000;
	char now[96];
	int rc;

	while (strcmp(os_out, cur_os) == 0) {
		boot_id(a, m, cur_os, now, sizeof(now));
		if (now[0] != '\0' && strcmp(now, before) != 0) {
			tb_action_note(a, "%s rebooted: its %s was %s, now %s", m->name, what, before, now);
			return 0;
		}
		if (tb_monotonic_ms() >= until && now[0] == '\0')
			return tb_fail(err, TB_ERR_TIMEOUT, "",
				       "%s answers as %s again but its %s (%s before the reboot) could not be read for "
				       "%d s: the reboot is not proven",
				       m->name, cur_os, what, before, m->boot_timeout_s);
		if (tb_monotonic_ms() >= until)
			return tb_fail(err, TB_ERR_TIMEOUT, "",
				       "%s answers as %s but did not reboot: its %s is still %s after %d s", m->name,
				       cur_os, what, before, m->boot_timeout_s);
		tb_sleep_ms(2000, tb_action_cancel_flag(a));
		if (tb_action_canceled(a))
			return tb_fail(err, TB_ERR_CANCELED, "", "canceled while waiting for %s to reboot", m->name);
		rc = wait_for(a, inv, m, 1, (int)((until - tb_monotonic_ms()) / 1000) + 1, 0, expect, os_out, 40, err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int tb_power_reboot_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			 const char *cur_os, tb_trigger_fn trigger, void *cls, char *os_out, struct tb_error *err)
{
	return tb_power_reboot_wait_for(a, inv, m, cur_os, NULL, trigger, cls, os_out, err);
}

int tb_power_reboot_wait_for(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			     const char *cur_os, const char *expect, tb_trigger_fn trigger, void *cls, char *os_out,
			     struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	const struct tb_persona *p = tb_machine_persona(m, cur_os);
	struct watch w = {.a = a, .timeout_ms = (long)m->shutdown_timeout_s * 1000};
	pthread_t th;
	int64_t t0;
	int rc, started;
	char before[96];

	if (p == NULL)
		return tb_fail(err, TB_ERR_NOT_FOUND, "os", "%s has no OS persona %s", m->name, cur_os);
	boot_id(a, m, cur_os, before, sizeof(before)); /* the proof after: a new one */
	tb_hosts_target(hosts, m, p, &w.t, w.pin, sizeof(w.pin));
	pthread_mutex_init(&w.lock, NULL);
	tb_cond_init(&w.cond);
	if (pthread_create(&th, NULL, watch_run, &w) != 0) {
		pthread_mutex_destroy(&w.lock);
		pthread_cond_destroy(&w.cond);
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start a thread");
	}
	{
		struct timespec until;

		until = tb_cond_deadline(20000);
		pthread_mutex_lock(&w.lock);
		while (!w.started)
			if (pthread_cond_timedwait(&w.cond, &w.lock, &until) != 0)
				break;
		started = w.started && w.ended_ms == 0;
		pthread_mutex_unlock(&w.lock);
	}
	t0 = tb_monotonic_ms();
	tb_hosts_set_phase(hosts, m->name, "shutting_down");
	rc = started ? trigger(a, cls, err)
		     : tb_fail(err, TB_ERR_UNREACHABLE, "", "%s (%s) stopped answering before the reboot was sent",
			       m->name, cur_os);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	if (rc != 0)
		return rc;
	if (tb_action_canceled(a))
		return tb_fail(err, TB_ERR_CANCELED, "", "canceled while waiting for %s to go down", m->name);
	if (w.rc == TB_ERR_TIMEOUT)
		return tb_fail(err, TB_ERR_TIMEOUT, "", "%s (%s) still answers %d s after the reboot was sent", m->name,
			       cur_os, m->shutdown_timeout_s);
	tb_action_note(a, "%s went down after %.1f s", m->name, (double)(w.ended_ms - t0) / 1000.0);
	/* The watcher's session can die before the old OS's sshd does (a busy
	 * host ends its processes one by one): an answer from the old OS right
	 * now is that sshd, not the next boot.  Wait (a bounded while) until a
	 * probe finds nothing or another OS answers.  Not when another OS is
	 * expected: its answer is the proof, and probing the old persona first
	 * costs a whole connect timeout once its address has gone. */
	if (expect == NULL || strcmp(expect, cur_os) == 0) {
		int64_t until = tb_monotonic_ms() + DOWN_CONFIRM_MS;
		char os[TB_NAME_MAX];
		int seen_down = 0;

		while (!tb_action_canceled(a) && tb_monotonic_ms() < until) {
			if (!tb_hosts_probe_one(hosts, m, os, sizeof(os)) || strcmp(os, cur_os) != 0) {
				seen_down = 1;
				break;
			}
			tb_sleep_ms(200, tb_action_cancel_flag(a));
		}
		if (!seen_down && !tb_action_canceled(a))
			tb_action_note(
				a, "%s still answered as %s %d s after its session ended: waiting for it to come up",
				m->name, cur_os, DOWN_CONFIRM_MS / 1000);
	}
	tb_hosts_set_phase(hosts, m->name, "booting");
	rc = wait_for(a, inv, m, 1, m->boot_timeout_s, 0, expect, os_out, 40, err);
	if (rc != 0 || before[0] == '\0') /* no id read before: the answer is the proof, as it was */
		return rc;
	return reboot_proven(a, inv, m, cur_os, before, expect, os_out, err);
}

/* Ask the running OS to power off or reboot (the connection may drop:
 * fine), with what it has: FreeBSD `shutdown -p now` / `shutdown -r now`,
 * else `poweroff` / `reboot`; Linux `systemctl poweroff|reboot`, else
 * `poweroff` / `reboot`.  The step shows the command as it ran. */
static int ssh_shutdown(struct tb_action *a, const struct tb_machine *m, const char *os, int reboot,
			struct tb_error *err)
{
	static const char *const bsd_off[] = {"shutdown", "-p", "now", NULL};
	static const char *const bsd_reboot[] = {"shutdown", "-r", "now", NULL};
	static const char *const linux_off[] = {"systemctl", "poweroff", NULL};
	static const char *const linux_reboot[] = {"systemctl", "reboot", NULL};
	static const char *const plain_off[] = {"poweroff", NULL};
	static const char *const plain_reboot[] = {"reboot", NULL};
	const char *const *argv;
	struct tb_ssh_capture cap;
	struct tb_error e = {0};
	struct os_tools o;

	os_tools(a, m, os, &o);
	if (o.sys[0] == '\0')
		return tb_fail(err, TB_ERR_UNREACHABLE, "", "%s (%s) did not say which OS it runs (uname -s)", m->name,
			       os);
	if (strcmp(o.sys, "FreeBSD") == 0)
		argv = reboot ? (o.shutdown || !o.reboot ? bsd_reboot : plain_reboot)
			      : (o.shutdown || !o.poweroff ? bsd_off : plain_off);
	else
		argv = reboot ? (o.systemctl || !o.reboot ? linux_reboot : plain_reboot)
			      : (o.systemctl || !o.poweroff ? linux_off : plain_off);
	tb_power_ssh(a, m, os, argv, 15000, &cap, &e);
	tb_ssh_capture_free(&cap);
	return 0;
}

static int power_on(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, char *os,
		    struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	const struct tb_power_method *bmc = find_bmc(m, TB_POWER_ON);
	int have_wol = find_method(m, TB_POWER_WOL) != NULL, rc, used_wol;

	if (tb_hosts_probe_one(hosts, m, os, 40)) {
		tb_action_note(a, "%s is already on: it answers as %s", m->name, os);
		return 0;
	}
	if (bmc == NULL && !have_wol)
		return tb_fail(err, TB_ERR_INVALID, "action",
			       "%s has no power method that can switch it on: add ipmi, "
			       "redfish, a command with on: or wol to its inventory entry",
			       m->name);
	tb_hosts_set_phase(hosts, m->name, "powering_on");
	rc = -1;
	used_wol = 0;
	if (bmc != NULL) {
		rc = driver_call(a, inv, m, bmc, TB_POWER_ON, NULL, err);
		if (rc == TB_ERR_UNAUTHORIZED || rc == TB_ERR_CONFIG || rc == TB_ERR_CANCELED)
			return rc;
		if (rc != 0 && have_wol)
			tb_action_note(a, "the BMC failed (%s); trying Wake-on-LAN", err->message);
	}
	if (rc != 0 && have_wol) {
		if ((rc = send_wol(a, inv, m, 1, err)) != 0)
			return rc;
		used_wol = 1;
	}
	if (rc != 0)
		return rc;
	tb_hosts_set_phase(hosts, m->name, "booting");
	return tb_power_wait(a, inv, m, 1, m->boot_timeout_s, used_wol, os, 40, err);
}

static int power_off(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, int soft,
		     struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	const struct tb_power_method *bmc = find_bmc(m, soft ? TB_POWER_SOFT : TB_POWER_OFF);
	char os[TB_NAME_MAX];
	int rc;

	if (!tb_hosts_probe_one(hosts, m, os, sizeof(os))) {
		int on = 0;

		if (bmc == NULL || !(tb_power_method_ops(bmc) & TB_POWER_BIT(TB_POWER_STATUS))) {
			tb_action_note(a, "%s is already off: nothing answers", m->name);
			return 0;
		}
		if ((rc = driver_call(a, inv, m, bmc, TB_POWER_STATUS, &on, err)) != 0)
			return rc;
		if (!on) {
			tb_action_note(a, "%s is already off: nothing answers and the BMC says off", m->name);
			return 0;
		}
	}
	tb_hosts_set_phase(hosts, m->name, "shutting_down");
	if (bmc != NULL)
		rc = driver_call(a, inv, m, bmc, soft ? TB_POWER_SOFT : TB_POWER_OFF, NULL, err);
	else
		rc = ssh_shutdown(a, m, os, 0, err);
	if (rc != 0)
		return rc;
	return tb_power_wait(a, inv, m, 0, m->shutdown_timeout_s, 0, os, sizeof(os), err);
}

struct bmc_op {
	const struct tb_inventory *inv;
	const struct tb_machine *m;
	const struct tb_power_method *bmc;
	enum tb_power_op op;
};

static int bmc_trigger(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct bmc_op *b = cls;

	return driver_call(a, b->inv, b->m, b->bmc, b->op, NULL, err);
}

struct reboot_op {
	const struct tb_machine *m;
	const char *os;
};

static int reboot_trigger(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct reboot_op *r = cls;

	return ssh_shutdown(a, r->m, r->os, 1, err);
}

/* cycle and reset: through the BMC, else off by ssh and back on. */
static int power_restart(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			 enum tb_power_op op, char *os, struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	const struct tb_power_method *bmc = find_bmc(m, op);
	char cur[TB_NAME_MAX];
	int rc;

	if (bmc != NULL) {
		struct bmc_op bo = {inv, m, bmc, op};

		if (tb_hosts_probe_one(hosts, m, cur, sizeof(cur)))
			return tb_power_reboot_wait(a, inv, m, cur, bmc_trigger, &bo, os, err);
		tb_hosts_set_phase(hosts, m->name, "booting");
		if ((rc = driver_call(a, inv, m, bmc, op, NULL, err)) != 0)
			return rc;
		return tb_power_wait(a, inv, m, 1, m->boot_timeout_s, 0, os, 40, err);
	}
	if (!tb_hosts_probe_one(hosts, m, cur, sizeof(cur)))
		return tb_fail(err, TB_ERR_CONFLICT, "action",
			       "%s does not answer and has no BMC: use \"on\" to wake it", m->name);
	tb_hosts_set_phase(hosts, m->name, "shutting_down");
	if (op == TB_POWER_RESET) {
		/* no BMC: the closest to a reset is a reboot by the OS */
		struct reboot_op ro = {m, cur};

		return tb_power_reboot_wait(a, inv, m, cur, reboot_trigger, &ro, os, err);
	}
	if (find_method(m, TB_POWER_WOL) == NULL)
		return tb_fail(err, TB_ERR_INVALID, "action",
			       "%s has neither a BMC nor Wake-on-LAN: a cycle would leave it off; use reset (a reboot) "
			       "or add a power method to its inventory entry",
			       m->name);
	if ((rc = power_off(a, inv, m, 0, err)) != 0)
		return rc;
	return power_on(a, inv, m, os, err);
}

int tb_power_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, enum tb_power_op op,
		 char *os_out, struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	char os[TB_NAME_MAX] = "";
	int rc;

	switch (op) {
	case TB_POWER_ON: rc = power_on(a, inv, m, os, err); break;
	case TB_POWER_OFF:
	case TB_POWER_SOFT: rc = power_off(a, inv, m, op == TB_POWER_SOFT, err); break;
	case TB_POWER_CYCLE:
	case TB_POWER_RESET: rc = power_restart(a, inv, m, op, os, err); break;
	default: rc = tb_fail(err, TB_ERR_INVALID, "action", "unknown power action"); break;
	}
	tb_hosts_set_phase(hosts, m->name, NULL);
	if (os_out != NULL)
		snprintf(os_out, 40, "%s", rc == 0 ? os : "");
	return rc;
}

/* ---- starting a power action ---- */

/* What the action's thread needs: the inventory it was started with. */
struct power_work {
	struct tb_services *sv;
	struct tb_inventory *inv;
	const struct tb_machine *m;
	enum tb_power_op op;
	char note[400];
};

static void power_work_free(void *cls)
{
	struct power_work *w = cls;

	tb_inv_current_put(w->sv->invs, w->inv);
	free(w);
}

static int do_power(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct power_work *w = cls;

	if (w->note[0] != '\0')
		tb_action_note(a, "%s", w->note);
	return tb_power_run(a, w->inv, w->m, w->op, NULL, err);
}

int tb_power_start(struct tb_services *sv, const char *host, enum tb_power_op op, json_t *params, const char *actor,
		   const char *note, int64_t *id, struct tb_error *err)
{
	struct power_work *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		json_decref(params);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	w->sv = sv;
	w->inv = tb_inv_current_get(sv->invs);
	w->op = op;
	snprintf(w->note, sizeof(w->note), "%s", note != NULL ? note : "");
	if ((w->m = tb_inventory_find(w->inv, host)) == NULL) {
		json_decref(params);
		power_work_free(w);
		return tb_fail(err, TB_ERR_NOT_FOUND, "name", "no machine named \"%.64s\" in the inventory", host);
	}
	/* tb_actions_start takes the hold atomically, frees w on every path */
	return tb_actions_start(sv->actions, w->m->name, "power", params, actor, do_power, w, power_work_free, id, err);
}
