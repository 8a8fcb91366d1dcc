/* boot.c - boot into an OS through GRUB and prove it: see boot.h. */
#include "boot.h"
#include "validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "boot_check.h"
#include "boot_console.h"
#include "boot_internal.h"
#include "boot_paths.h"
#include "console.h"
#include "store.h"
#include "services.h"
#include "inventory.h"
#include "bootmenu.h"
#include "grubcfg.h"
#include "hosts.h"
#include "power.h"
#include "ssh.h"
#include "timeutil.h"

#define MAX_SWITCHES 3

/* boot_internal.h */
int tb_boot_run_ok(struct tb_action *a, const struct tb_machine *m, const char *os, const char *const argv[],
		   struct tb_ssh_capture *cap, struct tb_error *err)
{
	const char *full[16];
	int rc;

	tb_persona_as_root(tb_machine_persona(m, os), argv, full, 16);
	rc = tb_power_ssh(a, m, os, full, 30000, cap, err);
	if (rc == 0 && cap->res.exit_status != 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "", "%s (%s): %s exited with %d: %.200s", m->name, os, argv[0],
			     cap->res.exit_status, cap->err != NULL ? cap->err : "");
	return rc;
}

static int uname_is(struct tb_action *a, const struct tb_machine *m, const char *os, const char *want, char *got,
		    size_t len)
{
	static const char *const argv[] = {"uname", "-s", NULL};
	struct tb_ssh_capture cap;
	struct tb_error e = {0};
	int ok = 0;

	got[0] = '\0';
	if (tb_power_ssh(a, m, os, argv, 10000, &cap, &e) == 0 && cap.out != NULL) {
		snprintf(got, len, "%s", cap.out);
		got[strcspn(got, "\r\n")] = '\0';
		ok = strcmp(got, want) == 0;
	}
	tb_ssh_capture_free(&cap);
	return ok;
}

/* From Linux: make GRUB boot entry next (or always, when make_default). */
static int set_next(struct tb_action *a, const struct tb_machine *m, const char *os, const char *entry,
		    int make_default, struct tb_error *err)
{
	const char *set[] = {make_default ? "grub-set-default" : "grub-reboot", entry, NULL};
	static const char *const list[] = {"grub-editenv", "-", "list", NULL};
	struct tb_ssh_capture cap;
	char want[256];
	int rc;

	if ((rc = tb_boot_run_ok(a, m, os, set, &cap, err)) != 0) {
		tb_ssh_capture_free(&cap);
		return rc;
	}
	tb_ssh_capture_free(&cap);
	/* grub-reboot exits 0 even when it could not write grubenv: read it back */
	snprintf(want, sizeof(want), "%s=%s", make_default ? "saved_entry" : "next_entry", entry);
	if ((rc = tb_boot_run_ok(a, m, os, list, &cap, err)) == 0) {
		int found = 0;

		for (char *l = cap.out; l != NULL && *l;) {
			char *eol = strchr(l, '\n');

			if (eol != NULL)
				*eol = '\0';
			if (strcmp(l, want) == 0)
				found = 1;
			l = eol != NULL ? eol + 1 : NULL;
		}
		if (!found)
			rc = tb_fail(err, TB_ERR_REMOTE, "",
				     "%s: %s exited 0 but grubenv does not say %s: GRUB cannot write its "
				     "environment here (btrfs, ZFS, LVM or mdraid under /boot?)",
				     m->name, set[0], want);
	}
	tb_ssh_capture_free(&cap);
	if (rc == 0)
		tb_action_note(a, "grubenv now says %s", want);
	if (rc == 0 && make_default) { /* plan from it at once, not at the next probe; and after a restart */
		tb_bootmenus_put_saved(tb_hosts_menus(tb_action_services(a)->hosts), m->name, entry, tb_now());
		tb_store_grub_saved_put(tb_action_services(a)->store, m->name, entry, tb_now(), NULL);
	}
	return rc;
}

struct reboot {
	const struct tb_machine *m;
	const char *os;
};

static int send_reboot(struct tb_action *a, void *cls, struct tb_error *err)
{
	static const char *const bsd[] = {"shutdown", "-r", "now", NULL};
	static const char *const lin[] = {"reboot", NULL};
	struct reboot *r = cls;
	const char *full[8];
	struct tb_ssh_capture cap;
	struct tb_error e = {0};

	(void)err;
	tb_persona_as_root(tb_machine_persona(r->m, r->os),
			   strcmp(tb_boot_kernel_of(r->os), "FreeBSD") == 0 ? bsd : lin, full, 8);
	/* the connection may drop as the host goes down: not an error */
	tb_power_ssh(a, r->m, r->os, full, 15000, &cap, &e);
	tb_ssh_capture_free(&cap);
	return 0;
}

/* boot_internal.h */
int tb_boot_reboot_wait(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
			const char *expect, char *now_os, struct tb_error *err)
{
	struct reboot r = {m, os};
	char was[TB_NAME_MAX];

	snprintf(was, sizeof(was), "%s", os);
	r.os = was;
	return tb_power_reboot_wait_for(a, inv, m, was, expect, send_reboot, &r, now_os, err);
}

static int is_linux(const char *os)
{
	return strcmp(tb_boot_kernel_of(os), "Linux") == 0;
}

/* The first OS of m that runs Linux (where GRUB's default is set), NULL none. */
static const char *linux_os(const struct tb_machine *m)
{
	for (size_t i = 0; i < m->nos; i++)
		if (is_linux(m->os[i].os))
			return m->os[i].os;
	return NULL;
}

/* boot_internal.h */
int tb_boot_landed(const struct tb_boot_run *r, const char *what, struct tb_error *err)
{
	if (strcmp(r->cur, r->os) == 0)
		return 0;
	return tb_fail(err, TB_ERR_REMOTE, "", "%s came up as %s, not %s: %s", r->m->name, r->cur, r->os, what);
}

/* Name the path a switch of m from cur into os takes (in the steps), and
 * return it: NULL when the table has none (the code below says why). */
static const struct tb_boot_path *note_path(struct tb_action *a, const struct tb_machine *m, const char *cur,
					    const char *os, const char *def)
{
	const struct tb_boot_path *p = tb_boot_path_for(m, cur, os, def, tb_boot_console_usable(a, m));

	if (p != NULL)
		tb_action_note(a, "boot path: %s from %s into %s (%d reboot%s: %s)", p->name, cur, os, p->reboots,
			       p->reboots == 1 ? "" : "s", p->how);
	return p;
}

/* From cur, an OS with no grub-reboot, towards want: to GRUB's default a
 * plain reboot; to another entry GRUB's menu over the console when m has one
 * testbedd reads (boot_console.h), else refused when cur is the default, or
 * a plain reboot to the default (Linux there can choose).  cur gets the OS
 * that answers then.  A plain reboot that lands in another OS than def shows
 * GRUB's default was that OS (def was a guess: grubenv not read): the step
 * says so and def (TB_NAME_MAX) becomes it, so the caller goes on from
 * there. */
int tb_boot_from_other(struct tb_boot_run *run, const char *want, struct tb_error *err)
{
	struct tb_action *a = run->a;
	const struct tb_inventory *inv = run->inv;
	const struct tb_machine *m = run->m;
	char *def = run->def, *cur = run->cur;
	const char *entry = tb_boot_entry_of(m, want);
	struct reboot r = {m, NULL};
	char was[TB_NAME_MAX], why[256];
	struct tb_error pre = {0};
	int rc, console = strcmp(want, def) != 0 && entry != NULL && tb_boot_console_usable(a, m);

	snprintf(was, sizeof(was), "%s", cur);
	r.os = was;
	snprintf(why, sizeof(why), "%s runs %s, which is GRUB's default and has no grub-reboot", m->name, was);
	if (console && (rc = tb_boot_console_precheck(a, m, why, &pre)) != 0) {
		if (strcmp(was, def) == 0) {
			*err = pre;
			return rc;
		}
		tb_action_note(a, "%s", pre.message);
		console = 0;
	}
	if (console) {
		if ((rc = tb_boot_console_reboot(a, inv, m, was, want, entry, send_reboot, &r, cur, err)) != 0)
			return rc;
		if (strcmp(cur, want) != 0)
			return tb_fail(err, TB_ERR_REMOTE, "",
				       "%s came up as %s, not %s: the keys sent on GRUB's menu did not choose it",
				       m->name, cur, want);
		return 0;
	}
	if (strcmp(was, def) == 0)
		return tb_fail(err, TB_ERR_INVALID, "os", "%s: cannot choose %s from it%s", why, want,
			       tb_boot_console_usable(a, m)
				       ? ""
				       : " (and it has no connected console testbedd reads, on which "
					 "GRUB's menu could choose it)");
	tb_action_note(a, "%s has no grub-reboot: a plain reboot returns to GRUB's default (%s)", was, def);
	if ((rc = tb_boot_reboot_wait(a, inv, m, was, def, cur, err)) != 0)
		return rc;
	if (strcmp(cur, def) != 0) {
		tb_action_note(a,
			       "%s came up as %s after a plain reboot: GRUB's default was %s, not %s (grubenv not "
			       "read since testbedd started?); going on from %s",
			       m->name, cur, cur, def, cur);
		snprintf(def, TB_NAME_MAX, "%s", cur);
	}
	return 0;
}

/* From Linux (cur): set GRUB's next entry (or default) and reboot. */
int tb_boot_from_linux(struct tb_boot_run *run, struct tb_error *err)
{
	struct tb_action *a = run->a;
	const struct tb_inventory *inv = run->inv;
	const struct tb_machine *m = run->m;
	const char *os = run->os;
	char *def = run->def, *cur = run->cur;
	int *done_default = run->done_default;
	const char *entry = tb_boot_entry_of(m, os);
	int rc, expect_grub = 0;

	if (!*done_default) {
		if (entry != NULL) {
			if ((rc = set_next(a, m, cur, entry, 1, err)) != 0)
				return rc;
			snprintf(def, TB_NAME_MAX, "%s", os); /* GRUB's default now */
			expect_grub = 1;
		}
		*done_default = 1;
	} else if (strcmp(os, def) != 0 && entry != NULL) {
		if ((rc = set_next(a, m, cur, entry, 0, err)) != 0)
			return rc;
	}
	if (strcmp(cur, os) == 0) /* made default where it already runs */
		return 0;
	expect_grub |= strcmp(os, def) != 0;
	if ((rc = tb_boot_reboot_wait(a, inv, m, cur, expect_grub ? os : def, cur, err)) != 0)
		return rc;
	if (expect_grub && strcmp(cur, os) != 0)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "%s came up as %s, not %s: GRUB did not use the one-shot entry (grubenv not "
			       "writable on btrfs, ZFS, LVM or mdraid?, or boot.entries.%s names the wrong entry)",
			       m->name, cur, os, os);
	return 0;
}

static int boot_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
		    int make_default, struct tb_error *err)
{
	struct tb_hosts *hosts = tb_action_services(a)->hosts;
	struct tb_boot_default bd;
	char cur[TB_NAME_MAX], got[64], def[TB_NAME_MAX];
	int rc, done_default;

	/* GRUB's saved default as last read from grubenv, else the inventory's */
	tb_bootmenus_default(tb_hosts_menus(hosts), m, &bd);
	snprintf(def, sizeof(def), "%s", bd.os);
	if (bd.mismatch)
		tb_action_note(
			a,
			"GRUB's saved default is %s (grubenv saved_entry=%s), not the inventory's boot.default %s: "
			"planning from grubenv",
			bd.saved_os, bd.saved_entry, m->boot.default_os);
	/* a default is set from Linux (grub-set-default), even where it is one */
	done_default = !make_default || (!is_linux(os) && strcmp(def, os) == 0);

	if (!tb_hosts_probe_one(hosts, m, cur, sizeof(cur))) {
		tb_action_note(a, "%s is off: powering it on first", m->name);
		if ((rc = tb_power_run(a, inv, m, TB_POWER_ON, cur, err)) != 0)
			return rc;
	}
	for (int n = 0; n <= MAX_SWITCHES; n++) {
		if (tb_action_canceled(a))
			return tb_fail(err, TB_ERR_CANCELED, "", "canceled");
		if (strcmp(cur, os) == 0 && done_default) {
			if (!uname_is(a, m, cur, tb_boot_kernel_of(os), got, sizeof(got)))
				return tb_fail(err, TB_ERR_REMOTE, "",
					       "%s answers at %s's address but uname -s says \"%s\", not %s", m->name,
					       os, got, tb_boot_kernel_of(os));
			tb_action_note(a, "%s runs %s: verified (uname -s: %s)", m->name, os, got);
			return 0;
		}
		if (n == MAX_SWITCHES)
			break;
		/* a one-shot switch: the table's path runs it (grub-set-default is its own) */
		const struct tb_boot_path *p = done_default && strcmp(cur, os) != 0 ? note_path(a, m, cur, os, def)
										    : NULL;
		struct tb_boot_run run = {a, inv, m, os, cur, def, &done_default};

		if (p != NULL) {
			rc = p->run(&run, err);
		} else if (is_linux(cur)) {
			rc = tb_boot_from_linux(&run, err);
		} else if (!done_default && !is_linux(os)) {
			/* making a non-Linux OS the default: through Linux */
			if (linux_os(m) == NULL)
				return tb_fail(err, TB_ERR_INVALID, "make_default",
					       "%s has no Linux to run grub-set-default from", m->name);
			tb_action_note(a, "GRUB's default is set from Linux (grub-set-default): to %s first",
				       linux_os(m));
			rc = tb_boot_from_other(&run, linux_os(m), err);
		} else {
			rc = tb_boot_from_other(&run, os, err);
		}
		if (rc != 0)
			return rc;
	}
	return tb_fail(err, TB_ERR_REMOTE, "", "%s is still not in %s after %d reboots", m->name, os, MAX_SWITCHES);
}

int tb_boot_run(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m, const char *os,
		int make_default, struct tb_error *err)
{
	struct tb_services *sv = tb_action_services(a);
	int rc;

	if ((rc = tb_boot_check(m, os, make_default, err)) != 0)
		return rc;
	rc = boot_run(a, inv, m, os, make_default, err);
	tb_hosts_set_phase(sv->hosts, m->name, NULL);
	return rc;
}

int tb_boot_menu_read(struct tb_hosts *h, const struct tb_machine *m, const char *os, json_t **entries,
		      struct tb_error *err)
{
	static const char *const argv[] = {"cat", "/boot/grub/grub.cfg", NULL};
	const struct tb_persona *p = tb_machine_persona(m, os);
	struct tb_ssh_capture cap;
	struct tb_ssh_target t;
	char pin[96];
	int rc;

	*entries = NULL;
	if (p == NULL)
		return tb_fail(err, TB_ERR_NOT_FOUND, "name", "%s has no OS persona %.40s", m->name, os);
	tb_hosts_target(h, m, p, &t, pin, sizeof(pin));
	rc = tb_ssh_run_capture(tb_hosts_pool(h), &t, argv, 15000, 1024 * 1024, &cap, err);
	if (rc == 0 && cap.res.exit_status != 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "", "%s (%s): cannot read /boot/grub/grub.cfg: %.200s", m->name, os,
			     cap.err != NULL ? cap.err : "");
	if (rc == 0 && (*entries = tb_grubcfg_entries(cap.out)) == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	tb_ssh_capture_free(&cap);
	return rc;
}

void tb_boot_menu_refresh(struct tb_hosts *h, const struct tb_machine *m)
{
	struct tb_bootmenus *menus = tb_hosts_menus(h);
	int64_t since, checked;
	struct tb_error e = {0};
	json_t *entries;
	char os[TB_NAME_MAX];

	if (m->boot.loader == NULL || menus == NULL || !tb_hosts_answering(h, m->name, os, sizeof(os)) ||
	    strcmp(tb_boot_kernel_of(os), "Linux") != 0)
		return;
	/* GRUB's saved default came with the probe itself (hosts.c) */
	tb_hosts_reach(h, m->name, &since, &checked);
	if (!tb_bootmenus_due(menus, m->name, os, since, tb_now()))
		return;
	if (tb_boot_menu_read(h, m, os, &entries, &e) == 0)
		tb_bootmenus_put(menus, m->name, os, entries, tb_now());
	else
		tb_bootmenus_failed(menus, m->name, os, &e, tb_now());
}

/* {os: {entry, index}}: the inventory's map resolved in entries. */
static json_t *entry_map(const struct tb_machine *m, const json_t *entries)
{
	json_t *map = json_object();

	for (size_t i = 0; map != NULL && i < m->boot.nentries; i++) {
		char idx[64];
		int found = tb_grubcfg_resolve(entries, m->boot.entries[i].entry, idx, sizeof(idx)) == 0;

		json_object_set_new(map, m->boot.entries[i].os,
				    json_pack("{s:s, s:o}", "entry", m->boot.entries[i].entry, "index",
					      found ? json_string(idx) : json_null()));
	}
	return map;
}

int tb_boot_entries(struct tb_services *sv, const struct tb_machine *m, int refresh, json_t **out, unsigned int *status,
		    struct tb_error *err)
{
	struct tb_bootmenus *menus = tb_hosts_menus(sv->hosts);
	struct tb_bootmenu_view v;
	int64_t now = tb_now();
	char os[TB_NAME_MAX];
	int up, linux_up;

	*out = NULL;
	*status = 200;
	if (m->boot.loader == NULL)
		return tb_fail(err, TB_ERR_INVALID, "name", "%s has no boot: section in the inventory", m->name);
	/* the prober's view and the menu it read: nothing here waits on the host */
	up = tb_hosts_answering(sv->hosts, m->name, os, sizeof(os));
	linux_up = up && strcmp(tb_boot_kernel_of(os), "Linux") == 0;
	tb_bootmenus_get(menus, m->name, &v);
	/* ask for a read: when refreshing, or when there is no menu (unless a
	 * read just failed: that error is the answer until the retry) */
	if (linux_up && !v.pending &&
	    (refresh || (v.entries == NULL && !(v.failed && now - v.failed_at < TB_BOOTMENU_RETRY_S)))) {
		tb_bootmenus_want(menus, m->name);
		tb_hosts_probe_now(sv->hosts);
		v.pending = 1;
	}
	if (v.entries != NULL) {
		json_t *map = entry_map(m, v.entries);

		*out = json_pack(
			"{s:s, s:s, s:s, s:o, s:o, s:o, s:I, s:b, s:o}", "host", m->name, "read_from", v.os, "default",
			m->boot.default_os, "entries", v.entries, "map", map, "read_at", tb_time_json(v.read_at),
			"age_s", (json_int_t)(now - v.read_at), "refreshing", v.pending, "last_error",
			v.failed ? json_pack("{s:s, s:s}", "code", tb_err_name(v.last.code), "message", v.last.message)
				 : json_null());
		return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	if (!up)
		return tb_fail(err, TB_ERR_CONFLICT, "name",
			       "%s does not answer and its GRUB menu was not read yet: power it on to read it",
			       m->name);
	if (!linux_up)
		return tb_fail(err, TB_ERR_CONFLICT, "name",
			       "%s runs %s now and its GRUB menu was not read yet; it is read from Linux: boot it into "
			       "%s first",
			       m->name, os, m->boot.default_os);
	if (v.failed && !v.pending) {
		*err = v.last;
		return v.last.code != 0 ? v.last.code
					: tb_fail(err, TB_ERR_REMOTE, "", "%s: reading the menu failed", m->name);
	}
	*status = 202;
	*out = json_pack("{s:s, s:s, s:s, s:i, s:s}", "host", m->name, "state", "reading", "reading_from", os,
			 "retry_after_s", 2, "message", "");
	if (*out != NULL) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "%s's GRUB menu is being read from its %s in the background: ask again in a "
			 "few seconds",
			 m->name, os);
		json_object_set_new(*out, "message", json_string(msg));
	}
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

/* ---- starting a boot action ---- */

/* What the action's thread needs: the inventory it was started with. */
struct boot_work {
	struct tb_services *sv;
	struct tb_inventory *inv;
	const struct tb_machine *m;
	char os[TB_NAME_MAX];
	int make_default;
};

static void boot_work_free(void *cls)
{
	struct boot_work *w = cls;

	tb_inv_current_put(w->sv->invs, w->inv);
	free(w);
}

static int do_boot(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct boot_work *w = cls;

	return tb_boot_run(a, w->inv, w->m, w->os, w->make_default, err);
}

int tb_boot_start(struct tb_services *sv, const char *host, const char *os, int make_default, const char *actor,
		  int64_t *id, struct tb_error *err)
{
	struct boot_work *w = calloc(1, sizeof(*w));
	int rc;

	if (w == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	w->sv = sv;
	w->inv = tb_inv_current_get(sv->invs);
	if ((w->m = tb_inventory_find(w->inv, host)) == NULL) {
		boot_work_free(w);
		return tb_fail(err, TB_ERR_NOT_FOUND, "name", "no machine named \"%.64s\" in the inventory", host);
	}
	snprintf(w->os, sizeof(w->os), "%s", os);
	w->make_default = make_default;
	if ((rc = tb_boot_check(w->m, os, make_default, err)) != 0) {
		boot_work_free(w);
		return rc;
	}
	return tb_actions_start(sv->actions, w->m->name, "boot",
				json_pack("{s:s, s:b}", "os", os, "make_default", make_default != 0), actor, do_boot, w,
				boot_work_free, id, err);
}
