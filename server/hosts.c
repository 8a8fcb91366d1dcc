/* hosts.c - live reachability of every machine, probed in the background: see hosts.h. */
#include "hosts.h"
#include "validate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services.h"
#include "store.h"
#include "actions.h"
#include "bootmenu.h"
#include "events.h"
#include "inventory.h"
#include "log.h"
#include "machtab.h"
#include "proc.h"
#include "ssh.h"
#include "ticker.h"
#include "timeutil.h"

struct host_state {
	char machine[TB_NAME_MAX];
	char reach[8];        /* "up" | "down" | "unknown" */
	char os[TB_NAME_MAX]; /* answering persona, "" none */
	int64_t since, checked_at;
	char err_code[32];
	char err_msg[TB_ERROR_MSG_MAX];
	char presented_os[TB_NAME_MAX];
	char presented_fp[64];
	char detail[TB_ERROR_MSG_MAX]; /* last log-only detail, to log each once */
	char phase[16];                /* set by an action, "" when none */
	/* Probes of one machine overlap (the prober's round and an action's
	 * wait) and may end out of order: each takes a number when it starts,
	 * and only a result at least as new as the recorded one is kept. */
	uint64_t probe_seq;    /* the number the last probe to start took */
	uint64_t recorded_seq; /* the number of the probe whose result is above */
};
TB_MACHTAB_SLOT(struct host_state, machine);

struct pin {
	char machine[TB_NAME_MAX];
	char os[TB_NAME_MAX];
	char fp[96];
};

struct tb_hosts {
	struct tb_services *sv;
	struct pin *pins; /* keys accepted by an admin (also in the store) */
	size_t npins;
	struct tb_ssh_pool *pool;
	struct tb_bootmenus *menus; /* the GRUB menus read after probes (boot.c) */
	tb_hosts_after_probe_fn after_probe;
	pthread_mutex_t lock;    /* guards st and pins */
	struct tb_ticker prober; /* a round of probes every probe_interval_s, or when kicked */
	struct tb_machtab st;    /* struct host_state */
};

/* The state slot of a machine (lock held); created when missing. */
static struct host_state *slot(struct tb_hosts *h, const char *machine, int create)
{
	struct host_state *s = tb_machtab_get(&h->st, machine, 0);

	if (s == NULL && create && (s = tb_machtab_get(&h->st, machine, 1)) != NULL)
		snprintf(s->reach, sizeof(s->reach), "unknown");
	return s;
}

static void load_row(void *cls, const struct tb_host_state_row *r)
{
	struct tb_hosts *h = cls;
	struct host_state *s = slot(h, r->machine, 1);

	if (s == NULL)
		return;
	snprintf(s->reach, sizeof(s->reach), "%s", r->reachability);
	snprintf(s->os, sizeof(s->os), "%s", r->os != NULL ? r->os : "");
	s->since = r->since;
	s->checked_at = r->checked_at;
	snprintf(s->err_code, sizeof(s->err_code), "%s", r->error_code != NULL ? r->error_code : "");
	snprintf(s->err_msg, sizeof(s->err_msg), "%s", r->error_message != NULL ? r->error_message : "");
	snprintf(s->presented_os, sizeof(s->presented_os), "%s", r->presented_os != NULL ? r->presented_os : "");
	snprintf(s->presented_fp, sizeof(s->presented_fp), "%s", r->presented_fp != NULL ? r->presented_fp : "");
}

/* The pin for a persona: an admin's accepted key, else the inventory's. */
/* Remember an accepted key in memory (lock held). */
static void pin_set(struct tb_hosts *h, const char *machine, const char *os, const char *fp)
{
	struct pin *grown;

	for (size_t i = 0; i < h->npins; i++) {
		if (strcmp(h->pins[i].machine, machine) == 0 && strcmp(h->pins[i].os, os) == 0) {
			snprintf(h->pins[i].fp, sizeof(h->pins[i].fp), "%s", fp);
			return;
		}
	}
	grown = realloc(h->pins, (h->npins + 1) * sizeof(*grown));
	if (grown == NULL)
		return;
	h->pins = grown;
	snprintf(h->pins[h->npins].machine, sizeof(h->pins[0].machine), "%s", machine);
	snprintf(h->pins[h->npins].os, sizeof(h->pins[0].os), "%s", os);
	snprintf(h->pins[h->npins].fp, sizeof(h->pins[0].fp), "%s", fp);
	h->npins++;
}

static void load_pin(void *cls, const char *machine, const char *os, const char *fp)
{
	pin_set(cls, machine, os, fp);
}

/* The pin for a persona: an admin's accepted key, else the inventory's.
 * From memory: a GET /hosts reads no SQL. */
static void pinned_fp(struct tb_hosts *h, const struct tb_machine *m, const struct tb_persona *p, char *fp, size_t len)
{
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->npins; i++) {
		if (strcmp(h->pins[i].machine, m->name) == 0 && strcmp(h->pins[i].os, p->os) == 0) {
			snprintf(fp, len, "%s", h->pins[i].fp);
			pthread_mutex_unlock(&h->lock);
			return;
		}
	}
	pthread_mutex_unlock(&h->lock);
	snprintf(fp, len, "%s", p->host_key != NULL ? p->host_key : "");
}

void tb_hosts_target(struct tb_hosts *h, const struct tb_machine *m, const struct tb_persona *p,
		     struct tb_ssh_target *t, char *pin, size_t pinlen)
{
	pinned_fp(h, m, p, pin, pinlen);
	*t = (struct tb_ssh_target){
		.machine = m->name,
		.os = p->os,
		.address = p->address,
		.port = p->port,
		.user = p->user,
		.key_file = p->key_file,
		.pinned_fp = pin[0] ? pin : NULL,
		.connect_timeout_s = p->connect_timeout_s,
	};
}

struct tb_ssh_pool *tb_hosts_pool(struct tb_hosts *h)
{
	return h->pool;
}

struct tb_bootmenus *tb_hosts_menus(struct tb_hosts *h)
{
	return h->menus;
}

struct probe_result {
	int answered;
	char os[TB_NAME_MAX];
	struct tb_error err;
	char presented_os[TB_NAME_MAX];
	char presented_fp[64];
	char detail[TB_ERROR_MSG_MAX]; /* for the log only (may name files) */
};

/* Is fp the pin of another persona of m at the same address?  Then a
 * mismatch only means that the other OS is the one running. */
static int pin_of_sibling(struct tb_hosts *h, const struct tb_machine *m, const struct tb_persona *p, const char *fp)
{
	for (size_t i = 0; i < m->nos; i++) {
		char pin[80];

		if (&m->os[i] == p || strcmp(m->os[i].address, p->address) != 0)
			continue;
		pinned_fp(h, m, &m->os[i], pin, sizeof(pin));
		if (pin[0] != '\0' && strcmp(pin, fp) == 0)
			return 1;
	}
	return 0;
}

static int err_rank(int code)
{
	switch (code) {
	case TB_ERR_HOSTKEY: return 3;
	case TB_ERR_UNAUTHORIZED:
	case TB_ERR_REMOTE:
	case TB_ERR_CONFIG: return 2;
	case 0: return 0;
	default: return 1;
	}
}

/* What a probe of a machine with GRUB runs: `uname -s` (its exit status is
 * the probe's) and, in the same command, GRUB's environment after a marker
 * line when grub-editenv could read it (a Linux persona), so that the saved
 * default is read at every probe without a second round trip.  sh -c: the
 * same under any login shell. */
#define GRUBENV_MARK "@@tb-grubenv"
static const char probe_grubenv[] = "uname -s || exit; e=$(grub-editenv - list 2>/dev/null) && printf '" GRUBENV_MARK
				    "\\n%s\\n' \"$e\"; exit 0";

/* The probe's stdout (uname's line and grubenv: at most a few KiB). */
struct probe_out {
	char buf[4096];
	size_t len;
};

static int probe_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct probe_out *o = cls;

	if (stream == TB_SSH_STDOUT && len < sizeof(o->buf) - 1 - o->len) {
		memcpy(o->buf + o->len, data, len);
		o->len += len;
	}
	return 0;
}

/* GRUB's saved_entry from a Linux persona's probe output into the menus
 * ("" when grubenv has none); nothing when grubenv was not read (the last
 * read stays). */
static void keep_saved_default(struct tb_hosts *h, const struct tb_machine *m, struct probe_out *o)
{
	char saved[TB_BOOTMENU_ENTRY_MAX] = "", *l;
	struct tb_boot_default bd;

	o->buf[o->len] = '\0';
	if (strncmp(o->buf, "Linux\n", 6) != 0 || (l = strstr(o->buf, "\n" GRUBENV_MARK "\n")) == NULL)
		return;
	for (l += strlen(GRUBENV_MARK) + 2; *l != '\0';) {
		char *eol = strchr(l, '\n');

		if (eol != NULL)
			*eol = '\0';
		if (strncmp(l, "saved_entry=", 12) == 0)
			snprintf(saved, sizeof(saved), "%s", l + 12);
		if (eol == NULL)
			break;
		l = eol + 1;
	}
	tb_bootmenus_default(h->menus, m, &bd);
	if (!bd.read || strcmp(bd.saved_entry, saved) != 0) /* kept for a restart: only when it changed */
		tb_store_grub_saved_put(h->sv->store, m->name, saved, tb_now(), NULL);
	tb_bootmenus_put_saved(h->menus, m->name, saved, tb_now());
}

/* A saved default the store kept (the last read before a restart). */
static void load_saved(void *cls, const char *machine, const char *entry, int64_t read_at)
{
	struct tb_hosts *h = cls;

	tb_bootmenus_put_saved(h->menus, machine, entry, read_at);
}

/* Probe one persona: connect, check the key, log in, `uname -s` (with
 * grubenv on a machine with GRUB: probe_grubenv). */
static int probe_persona(struct tb_hosts *h, const struct tb_machine *m, const struct tb_persona *p, long max_connect_s,
			 struct probe_result *res)
{
	static const char *const uname_argv[] = {"uname", "-s", NULL};
	static const char *const grub_argv[] = {"sh", "-c", probe_grubenv, NULL};
	const int grub = m->boot.loader != NULL && h->menus != NULL;
	struct probe_out out = {.len = 0};
	char pin[80], presented[80] = "";
	struct tb_ssh_target t;
	struct tb_ssh_result r;
	struct tb_error e = {0};
	int rc;

	tb_hosts_target(h, m, p, &t, pin, sizeof(pin));
	if (max_connect_s > 0 && t.connect_timeout_s > max_connect_s)
		t.connect_timeout_s = max_connect_s;
	memset(&r, 0, sizeof(r));
	rc = tb_ssh_exec(h->pool, &t, grub ? grub_argv : uname_argv, p->command_timeout_s * 1000,
			 grub ? probe_output : NULL, &out, &r, &e);
	snprintf(presented, sizeof(presented), "%s", r.host_fp);
	if (rc == 0 && r.exit_status == 0) {
		if (grub)
			keep_saved_default(h, m, &out);
		res->answered = 1;
		snprintf(res->os, sizeof(res->os), "%s", p->os);
		return 0;
	}
	if (rc == 0)
		rc = tb_fail(&e, TB_ERR_REMOTE, "", "%s (%s): uname -s exited with %d", m->name, p->os, r.exit_status);
	if (rc == TB_ERR_CONFIG) {
		/* The state is readable by every viewer: the key file's path and
		 * what is wrong with it go to the log only. */
		snprintf(res->detail, sizeof(res->detail), "%s", e.message);
		tb_fail(&e, rc, "",
			"%s (%s): the ssh key file of this persona cannot be used; "
			"the daemon's log says why",
			m->name, p->os);
	}
	if (rc == TB_ERR_HOSTKEY && presented[0] != '\0' && pin_of_sibling(h, m, p, presented))
		return rc; /* the other OS at this address is up; not an error */
	if (err_rank(rc) > err_rank(res->err.code))
		res->err = e;
	if (rc == TB_ERR_HOSTKEY && presented[0] != '\0') {
		snprintf(res->presented_os, sizeof(res->presented_os), "%s", p->os);
		snprintf(res->presented_fp, sizeof(res->presented_fp), "%s", presented);
	}
	return rc;
}

void tb_hosts_set_phase(struct tb_hosts *h, const char *machine, const char *phase)
{
	struct host_state *s;
	int changed = 0;

	pthread_mutex_lock(&h->lock);
	s = slot(h, machine, 1);
	if (s != NULL && strcmp(s->phase, phase != NULL ? phase : "") != 0) {
		snprintf(s->phase, sizeof(s->phase), "%s", phase != NULL ? phase : "");
		changed = 1;
	}
	pthread_mutex_unlock(&h->lock);
	if (changed)
		tb_events_publish(h->sv->events, "host.state", machine, 0, tb_hosts_state_json(h, machine));
}

static json_t *state_json(struct tb_hosts *h, const char *machine, const struct tb_hold_info *held);

void tb_hosts_set_held(struct tb_hosts *h, const char *machine, const struct tb_hold_info *held)
{
	/* actions' lock is held: held is what it says, not asked again */
	tb_events_publish(h->sv->events, "host.state", machine, 0, state_json(h, machine, held));
}

static void publish_state(struct tb_hosts *h, const char *machine)
{
	tb_events_publish(h->sv->events, "host.state", machine, 0, tb_hosts_state_json(h, machine));
}

/* Probe m's personas until one answers: expect first when given (only it
 * when only), then the OS that answered last time, then the rest. */
static void probe_machine(struct tb_hosts *h, const struct tb_machine *m, long max_connect_s, const char *expect,
			  int only)
{
	struct probe_result res;
	struct host_state *s, before;
	char current[TB_NAME_MAX] = "";
	uint64_t seq = 0;
	int64_t now;

	memset(&res, 0, sizeof(res));
	pthread_mutex_lock(&h->lock);
	s = slot(h, m->name, 1);
	if (s != NULL) {
		snprintf(current, sizeof(current), "%s", s->os);
		seq = ++s->probe_seq;
	}
	pthread_mutex_unlock(&h->lock);

	/* A machine being booted into an OS: that persona first (the one that
	 * answered last time has just gone away).  Otherwise the OS that
	 * answered last time first: usually it still does. */
	if (expect != NULL && tb_machine_persona(m, expect) != NULL)
		probe_persona(h, m, tb_machine_persona(m, expect), max_connect_s, &res);
	else
		expect = NULL;
	for (int pass = 0; pass < 2 && !res.answered && !(expect != NULL && only); pass++) {
		for (size_t i = 0; i < m->nos && !res.answered; i++) {
			int is_current = strcmp(m->os[i].os, current) == 0;

			if ((pass == 0) != is_current || (expect != NULL && strcmp(m->os[i].os, expect) == 0))
				continue;
			probe_persona(h, m, &m->os[i], max_connect_s, &res);
		}
	}

	now = tb_now();
	pthread_mutex_lock(&h->lock);
	s = slot(h, m->name, 1);
	if (s == NULL || seq < s->recorded_seq) {
		/* A probe that started before the one recorded (e.g. the
		 * prober's, stalled in a connect timeout while the host booted,
		 * behind an action's that saw it up) knows less: its result
		 * would put back a stale state and publish a false change. */
		pthread_mutex_unlock(&h->lock);
		if (s != NULL)
			tb_debug("hosts", "%s: a probe older than the recorded one ended (%s): dropped", m->name,
				 res.answered ? "up" : "down");
		return;
	}
	s->recorded_seq = seq;
	before = *s;
	if (res.detail[0] != '\0' && strcmp(res.detail, s->detail) != 0)
		tb_warn("hosts", "%s", res.detail);
	snprintf(s->detail, sizeof(s->detail), "%s", res.detail);
	snprintf(s->reach, sizeof(s->reach), "%s", res.answered ? "up" : "down");
	snprintf(s->os, sizeof(s->os), "%s", res.answered ? res.os : "");
	if (strcmp(before.reach, s->reach) != 0 || strcmp(before.os, s->os) != 0 || s->since == 0)
		s->since = now;
	s->checked_at = now;
	snprintf(s->err_code, sizeof(s->err_code), "%s",
		 res.answered || res.err.code == 0 ? "" : tb_err_name(res.err.code));
	snprintf(s->err_msg, sizeof(s->err_msg), "%s", res.answered ? "" : res.err.message);
	snprintf(s->presented_os, sizeof(s->presented_os), "%s", res.presented_os);
	snprintf(s->presented_fp, sizeof(s->presented_fp), "%s", res.presented_fp);
	{
		struct host_state copy = *s;
		struct tb_host_state_row row = {
			.machine = copy.machine,
			.reachability = copy.reach,
			.os = copy.os[0] ? copy.os : NULL,
			.since = copy.since,
			.checked_at = copy.checked_at,
			.error_code = copy.err_code[0] ? copy.err_code : NULL,
			.error_message = copy.err_msg[0] ? copy.err_msg : NULL,
			.presented_os = copy.presented_os[0] ? copy.presented_os : NULL,
			.presented_fp = copy.presented_fp[0] ? copy.presented_fp : NULL,
		};

		pthread_mutex_unlock(&h->lock);
		if (strcmp(before.reach, copy.reach) != 0 || strcmp(before.os, copy.os) != 0)
			tb_info("hosts", "%s: %s%s%s", copy.machine, copy.reach, copy.os[0] ? " as " : "", copy.os);
		tb_store_host_state_put(h->sv->store, &row, NULL);
		if (strcmp(before.reach, copy.reach) != 0 || strcmp(before.os, copy.os) != 0 ||
		    strcmp(before.err_code, copy.err_code) != 0 || strcmp(before.err_msg, copy.err_msg) != 0 ||
		    strcmp(before.presented_fp, copy.presented_fp) != 0)
			publish_state(h, copy.machine);
	}
}

struct round {
	struct tb_hosts *h;
	struct tb_inventory *inv;
	pthread_mutex_t lock;
	size_t next;
};

static void *round_worker(void *arg)
{
	struct round *r = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&r->lock);
		i = r->next++;
		pthread_mutex_unlock(&r->lock);
		if (i >= r->inv->nmachines)
			return NULL;
		probe_machine(r->h, &r->inv->machines[i], 0, NULL, 0);
		if (r->h->after_probe != NULL)
			r->h->after_probe(r->h, &r->inv->machines[i]);
	}
}

void tb_hosts_probe_all(struct tb_hosts *h)
{
	struct round r = {.h = h, .inv = tb_inv_current_get(h->sv->invs)};
	pthread_t t[TB_PROBE_WORKERS];
	size_t nt = r.inv->nmachines < TB_PROBE_WORKERS ? r.inv->nmachines : TB_PROBE_WORKERS, started = 0;

	pthread_mutex_init(&r.lock, NULL);
	for (size_t i = 0; i < nt; i++)
		if (pthread_create(&t[started], NULL, round_worker, &r) == 0)
			started++;
	if (started == 0)
		round_worker(&r);
	for (size_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&r.lock);
	tb_inv_current_put(h->sv->invs, r.inv);
}

static void probe_round(void *cls)
{
	tb_hosts_probe_all(cls);
}

int tb_hosts_start(struct tb_services *sv, tb_hosts_after_probe_fn after_probe, struct tb_hosts **out,
		   struct tb_error *err)
{
	struct tb_hosts *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	h->sv = sv;
	h->after_probe = after_probe;
	tb_machtab_init(&h->st, sizeof(struct host_state));
	pthread_mutex_init(&h->lock, NULL);
	h->pool = tb_ssh_pool_new(2, 60);
	h->menus = tb_bootmenus_new();
	if (h->pool == NULL || h->menus == NULL) {
		tb_hosts_stop(h);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	tb_store_host_state_each(sv->store, load_row, h);
	tb_store_hostkey_each(sv->store, load_pin, h);
	tb_store_grub_saved_each(sv->store, load_saved, h);
	if (sv->cfg->probe_interval_s > 0) {
		if (tb_ticker_start(&h->prober, (long)sv->cfg->probe_interval_s * 1000L, probe_round, h) != 0) {
			tb_hosts_stop(h);
			return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the prober thread");
		}
	}
	*out = h;
	return 0;
}

void tb_hosts_halt(struct tb_hosts *h)
{
	if (h != NULL)
		tb_ticker_stop(&h->prober);
}

void tb_hosts_stop(struct tb_hosts *h)
{
	if (h == NULL)
		return;
	tb_hosts_halt(h);
	tb_ssh_pool_free(h->pool);
	tb_bootmenus_free(h->menus);
	pthread_mutex_destroy(&h->lock);
	tb_machtab_free(&h->st);
	free(h->pins);
	free(h);
}

void tb_hosts_probe_now(struct tb_hosts *h)
{
	tb_ticker_kick(&h->prober);
}

void tb_hosts_inventory_changed(struct tb_hosts *h)
{
	tb_hosts_probe_now(h);
}

/* The state of machine with held_by from held (NULL: nobody holds it). */
static json_t *state_json(struct tb_hosts *h, const char *machine, const struct tb_hold_info *held)
{
	struct host_state s, *p;
	json_t *err = json_null(), *presented = json_null(), *j;

	pthread_mutex_lock(&h->lock);
	p = slot(h, machine, 0);
	if (p != NULL)
		s = *p;
	pthread_mutex_unlock(&h->lock);
	if (p == NULL)
		return json_pack("{s:s, s:n, s:n, s:n, s:n, s:n, s:s, s:o}", "reachability", "unknown", "os", "since",
				 "checked_at", "last_error", "presented_host_key", "phase", "unknown", "held_by",
				 tb_hold_info_json(held));
	if (s.err_code[0])
		err = json_pack("{s:s, s:s}", "code", s.err_code, "message", s.err_msg);
	if (s.presented_fp[0])
		presented = json_pack("{s:s, s:s}", "os", s.presented_os, "fingerprint", s.presented_fp);
	j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "reachability", s.reach, "os",
		      s.os[0] ? json_string(s.os) : json_null(), "since", tb_time_json(s.since), "checked_at",
		      tb_time_json(s.checked_at), "last_error", err, "presented_host_key", presented, "phase",
		      s.phase[0] ? s.phase
				 : (strcmp(s.reach, "up") == 0     ? "up"
				    : strcmp(s.reach, "down") == 0 ? "down"
								   : "unknown"));
	if (j != NULL)
		json_object_set_new(j, "held_by", tb_hold_info_json(held));
	return j;
}

json_t *tb_hosts_state_json(struct tb_hosts *h, const char *machine)
{
	struct tb_hold_info held;
	int is_held = h->sv->actions != NULL && tb_actions_held_by(h->sv->actions, machine, &held);

	/* who holds it is actions' to say (kept there only) */
	return state_json(h, machine, is_held ? &held : NULL);
}

json_t *tb_hosts_machine_json(struct tb_hosts *h, const struct tb_machine *m)
{
	json_t *j = tb_machine_to_json(m), *os;

	if (j == NULL)
		return NULL;
	os = json_object_get(j, "os");
	for (size_t i = 0; i < m->nos; i++) {
		char pin[80];

		pinned_fp(h, m, &m->os[i], pin, sizeof(pin));
		json_object_set_new(json_object_get(os, m->os[i].os), "host_key",
				    pin[0] ? json_string(pin) : json_null());
	}
	json_object_set_new(j, "state", tb_hosts_state_json(h, m->name));
	if (json_is_object(json_object_get(j, "boot"))) {
		struct tb_boot_default bd;

		tb_bootmenus_default(h->menus, m, &bd);
		json_object_set_new(json_object_get(j, "boot"), "saved_default",
				    bd.read ? json_pack("{s:s, s:o, s:o, s:s, s:b}", "entry", bd.saved_entry, "os",
							bd.saved_os[0] ? json_string(bd.saved_os) : json_null(),
							"read_at", tb_time_json(bd.read_at), "plans_from", bd.os,
							"mismatch", bd.mismatch)
					    : json_null());
	}
	return j;
}

int tb_hosts_answering(struct tb_hosts *h, const char *machine, char *os, size_t len)
{
	struct host_state *s;
	int up = 0;

	pthread_mutex_lock(&h->lock);
	s = slot(h, machine, 0);
	if (s != NULL && strcmp(s->reach, "up") == 0) {
		up = 1;
		snprintf(os, len, "%s", s->os);
	} else if (len > 0) {
		os[0] = '\0';
	}
	pthread_mutex_unlock(&h->lock);
	return up;
}

int tb_hosts_reach(struct tb_hosts *h, const char *machine, int64_t *since, int64_t *checked_at)
{
	struct host_state *s;
	int up = -1;

	*since = *checked_at = 0;
	pthread_mutex_lock(&h->lock);
	s = slot(h, machine, 0);
	if (s != NULL && strcmp(s->reach, "unknown") != 0) {
		up = strcmp(s->reach, "up") == 0;
		*since = s->since;
		*checked_at = s->checked_at;
	}
	pthread_mutex_unlock(&h->lock);
	return up;
}

int tb_hosts_probe_one(struct tb_hosts *h, const struct tb_machine *m, char *os, size_t len)
{
	return tb_hosts_probe_expect(h, m, NULL, 0, os, len);
}

int tb_hosts_probe_expect(struct tb_hosts *h, const struct tb_machine *m, const char *expect, int only, char *os,
			  size_t len)
{
	/* a waiting action probes often: a machine that is off must not hold
	 * it up for a full connect timeout per persona */
	probe_machine(h, m, expect != NULL && only ? TB_PROBE_EXPECT_CONNECT_S : TB_PROBE_WAIT_CONNECT_S, expect, only);
	return tb_hosts_answering(h, m->name, os, len);
}

void tb_hosts_each_state(struct tb_hosts *h, tb_hosts_state_fn fn, void *cls)
{
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->st.n; i++) {
		const struct host_state *st = tb_machtab_at(&h->st, i);

		fn(cls, st->machine, st->reach, st->os[0] ? st->os : NULL);
	}
	pthread_mutex_unlock(&h->lock);
}

int tb_hosts_trust(struct tb_hosts *h, const char *machine, const char *os, const char *fp, const char *actor,
		   struct tb_error *err)
{
	struct tb_inventory *inv = tb_inv_current_get(h->sv->invs);
	const struct tb_machine *m = tb_inventory_find(inv, machine);
	struct host_state *s;
	char presented[64] = "", presented_os[TB_NAME_MAX] = "";
	int rc;

	if (m == NULL)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "name", "no machine named \"%.64s\"", machine);
	else if (tb_machine_persona(m, os) == NULL)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "os", "%s has no OS persona \"%.40s\"", machine, os);
	else
		rc = 0;
	tb_inv_current_put(h->sv->invs, inv);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&h->lock);
	s = slot(h, machine, 0);
	if (s != NULL) {
		snprintf(presented, sizeof(presented), "%s", s->presented_fp);
		snprintf(presented_os, sizeof(presented_os), "%s", s->presented_os);
	}
	pthread_mutex_unlock(&h->lock);
	if (presented[0] == '\0' || strcmp(presented_os, os) != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "fingerprint",
			       "%s (%s) has not presented a refused host key; nothing to accept", machine, os);
	if (strcmp(presented, fp) != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "fingerprint",
			       "%s (%s) presented %s, not the %.64s you sent: check the key and send the one shown",
			       machine, os, presented, fp);
	if ((rc = tb_store_hostkey_set(h->sv->store, machine, os, fp, actor, tb_now(), err)) != 0)
		return rc;
	pthread_mutex_lock(&h->lock);
	pin_set(h, machine, os, fp);
	s = slot(h, machine, 0);
	if (s != NULL && strcmp(s->presented_fp, fp) == 0) {
		s->presented_fp[0] = '\0';
		s->presented_os[0] = '\0';
	}
	pthread_mutex_unlock(&h->lock);
	tb_info("hosts", "%s (%s): host key %s accepted by %s", machine, os, fp, actor);
	publish_state(h, machine);
	tb_hosts_probe_now(h);
	return 0;
}

char *tb_hosts_command_shown(const struct tb_persona *p, const char *const argv[])
{
	char *q = tb_proc_display(argv), *s;
	size_t n;

	if (q == NULL)
		return NULL;
	n = strlen(q) + strlen(p->user) + strlen(p->address) + 16;
	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "ssh %s@%s %s", p->user, p->address, q);
	free(q);
	return s;
}
