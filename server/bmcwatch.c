/* bmcwatch.c - what each BMC says about its chassis, read in the background: see bmcwatch.h. */
#include "bmcwatch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "services.h"
#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "machtab.h"
#include "power.h"
#include "ticker.h"
#include "timeutil.h"

#define TICK_MS 500

struct bmc_state {
	char machine[TB_MACHTAB_NAME];
	char method[16];
	int on;             /* 1, 0, -1 unknown */
	int64_t since_ms;   /* when on took its value (wall clock) */
	int64_t started_ms; /* when the last reading started (wall clock) */
	int64_t checked_ms; /* when it ended (wall clock); 0 never */
	int64_t last_mono;  /* when it ended (monotonic), for scheduling */
	char err_code[32];
	char err_msg[TB_ERROR_MSG_MAX];
	char logged[TB_ERROR_MSG_MAX]; /* the last error detail logged, to log each once */
	int mismatch;
	int64_t mismatch_since_ms;
	char mismatch_msg[160];
};
TB_MACHTAB_SLOT(struct bmc_state, machine);

struct tb_bmcwatch {
	struct tb_services *sv;
	unsigned int interval_s;
	pthread_mutex_t lock; /* guards st */
	struct tb_ticker ticker;
	struct tb_machtab st; /* struct bmc_state */
};

/* ---- pure helpers ---- */

const struct tb_power_method *tb_bmc_method(const struct tb_machine *m)
{
	for (size_t i = 0; i < m->npower; i++) {
		/* what this method can do: a command method only the actions it has templates for */
		if (tb_power_driver_for(&m->power[i]) != NULL &&
		    (tb_power_method_ops(&m->power[i]) & TB_POWER_BIT(TB_POWER_STATUS)))
			return &m->power[i];
	}
	return NULL;
}

unsigned int tb_bmc_interval(unsigned int requested, unsigned int floor)
{
	if (floor == 0)
		floor = TB_BMC_FLOOR_S;
	return requested < floor ? floor : requested;
}

int64_t tb_bmc_next_check_ms(int64_t last_ms, unsigned int interval_s)
{
	return last_ms == 0 ? 0 : last_ms + (int64_t)interval_s * 1000;
}

int tb_bmc_mismatch(const struct tb_bmc_sides *s)
{
	if (s->bmc_on < 0 || s->os_up < 0 || s->bmc_on == s->os_up)
		return 0;
	return s->os_seen_ms >= s->bmc_since_ms + TB_BMC_MISMATCH_MARGIN_MS &&
	       s->bmc_seen_ms >= s->os_since_ms + TB_BMC_MISMATCH_MARGIN_MS;
}

/* ---- state ---- */

/* The slot of a machine (lock held); created when missing (NULL: out of memory). */
static struct bmc_state *slot(struct tb_bmcwatch *w, const char *machine, int create)
{
	struct bmc_state *s = tb_machtab_get(&w->st, machine, 0);

	if (s == NULL && create && (s = tb_machtab_get(&w->st, machine, 1)) != NULL)
		s->on = -1;
	return s;
}

static const char *power_word(int on)
{
	return on < 0 ? "unknown" : on ? "on" : "off";
}

static json_t *ms_json(int64_t ms)
{
	char buf[TB_TIME_MAX];

	if (ms == 0)
		return json_null();
	tb_time_format_ms(ms, buf);
	return json_string(buf);
}

static json_t *state_json(const struct bmc_state *s)
{
	json_t *err = json_null(), *mm = json_null();

	if (s->err_code[0])
		err = json_pack("{s:s, s:s}", "code", s->err_code, "message", s->err_msg);
	if (s->mismatch)
		mm = json_pack("{s:o, s:s}", "since", ms_json(s->mismatch_since_ms), "message", s->mismatch_msg);
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "method", s->method, "power", power_word(s->on), "since",
			 ms_json(s->since_ms), "checked_at", ms_json(s->checked_ms), "error", err, "mismatch", mm);
}

/* Publish host.bmc: change is "power" or "mismatch". */
static void publish(struct tb_bmcwatch *w, const struct bmc_state *copy, const char *change)
{
	json_t *j = state_json(copy);

	if (j == NULL)
		return;
	json_object_set_new(j, "change", json_string(change));
	tb_events_publish(w->sv->events, "host.bmc", copy->machine, 0, j);
}

/*
 * An error for every viewer: credentials refused and configuration errors
 * can name the password file (power_ipmi.c's hints), so they are replaced
 * by a sentence and logged.
 */
static void public_error(const char *machine, const struct tb_error *e, char *msg, size_t len)
{
	if (e->code == TB_ERR_UNAUTHORIZED)
		snprintf(msg, len, "%s: the BMC refused the login; check its credentials (the daemon's log says which)",
			 machine);
	else if (e->code == TB_ERR_CONFIG)
		snprintf(msg, len, "%s: the BMC cannot be asked: a configuration problem (the daemon's log says what)",
			 machine);
	else
		snprintf(msg, len, "%s", e->message);
}

/* Ask m's BMC now (not under the lock), then record and publish. */
static void read_one(struct tb_bmcwatch *w, const struct tb_inventory *inv, const struct tb_machine *m,
		     const struct tb_power_method *pm)
{
	const struct tb_power_driver *d = tb_power_driver_for(pm);
	struct tb_power_call call = {
		.inv = inv,
		.m = m,
		.pm = pm,
		.pool = tb_hosts_pool(w->sv->hosts),
		.timeout_ms = TB_BMC_CALL_MS,
	};
	volatile int no_cancel = 0;
	struct tb_error e = {0};
	struct bmc_state *s, copy;
	int64_t started = tb_now_ms(), ended;
	int on = -1, rc, was, log_it = 0;

	call.cancel = &no_cancel;
	rc = d->run(&call, TB_POWER_STATUS, &on, &e);
	ended = tb_now_ms();
	pthread_mutex_lock(&w->lock);
	if ((s = slot(w, m->name, 1)) == NULL) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	was = s->on;
	snprintf(s->method, sizeof(s->method), "%s", d->name);
	s->on = rc == 0 ? on : -1;
	if (s->on != was || s->since_ms == 0)
		s->since_ms = ended;
	s->started_ms = started;
	s->checked_ms = ended;
	s->last_mono = tb_monotonic_ms();
	if (rc == 0) {
		s->err_code[0] = s->err_msg[0] = s->logged[0] = '\0';
	} else {
		snprintf(s->err_code, sizeof(s->err_code), "%s", tb_err_name(e.code != 0 ? e.code : rc));
		public_error(m->name, &e, s->err_msg, sizeof(s->err_msg));
		if (strcmp(s->logged, e.message) != 0) {
			snprintf(s->logged, sizeof(s->logged), "%s", e.message);
			log_it = 1;
		}
	}
	copy = *s;
	pthread_mutex_unlock(&w->lock);
	if (log_it)
		tb_warn("bmc", "%s: chassis power status: %s", m->name, e.message);
	if (copy.on != was) {
		tb_info("bmc", "%s: the BMC says %s (was %s)", m->name, power_word(copy.on), power_word(was));
		publish(w, &copy, "power");
	}
}

/* Compare with reachability; publish when a mismatch begins or ends. */
static void check_mismatch(struct tb_bmcwatch *w, const char *machine)
{
	struct tb_bmc_sides sides = {0};
	struct bmc_state *s, copy;
	int64_t os_since, os_seen;
	int now_mm;

	sides.os_up = tb_hosts_reach(w->sv->hosts, machine, &os_since, &os_seen);
	/* the prober's times are whole seconds: its change happened within
	 * the second after since, its probe ended within the second of seen */
	sides.os_since_ms = os_since * 1000 + 999;
	sides.os_seen_ms = os_seen * 1000;
	pthread_mutex_lock(&w->lock);
	if ((s = slot(w, machine, 0)) == NULL || s->checked_ms == 0) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	sides.bmc_on = s->on;
	sides.bmc_since_ms = s->since_ms;
	sides.bmc_seen_ms = s->started_ms; /* what it said was true when the reading began */
	now_mm = tb_bmc_mismatch(&sides);
	if (now_mm == s->mismatch) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	s->mismatch = now_mm;
	s->mismatch_since_ms = now_mm ? tb_now_ms() : 0;
	snprintf(s->mismatch_msg, sizeof(s->mismatch_msg), "%s",
		 !now_mm ? ""
		 : s->on ? "the BMC says on, but no OS answers ssh"
			 : "the BMC says off, but an OS answers ssh");
	copy = *s;
	pthread_mutex_unlock(&w->lock);
	if (now_mm)
		tb_warn("bmc", "%s: %s", machine, copy.mismatch_msg);
	else
		tb_info("bmc", "%s: the BMC and reachability agree again", machine);
	publish(w, &copy, "mismatch");
}

static void round_once(void *cls)
{
	struct tb_bmcwatch *w = cls;
	struct tb_inventory *inv = tb_inv_current_get(w->sv->invs);

	for (size_t i = 0; i < inv->nmachines && !tb_ticker_stopping(&w->ticker); i++) {
		const struct tb_machine *m = &inv->machines[i];
		const struct tb_power_method *pm = tb_bmc_method(m);
		struct bmc_state *s;
		char holder[TB_HOLDER_MAX];
		int64_t due;

		if (pm == NULL)
			continue;
		pthread_mutex_lock(&w->lock);
		s = slot(w, m->name, 1);
		due = s != NULL ? tb_bmc_next_check_ms(s->last_mono, w->interval_s) : 0;
		pthread_mutex_unlock(&w->lock);
		if (s == NULL)
			continue;
		tb_actions_holder(w->sv->actions, m->name, holder, sizeof(holder));
		if (holder[0] == '\0' && tb_monotonic_ms() >= due)
			read_one(w, inv, m, pm);
		check_mismatch(w, m->name);
	}
	tb_inv_current_put(w->sv->invs, inv);
}

int tb_bmcwatch_start(struct tb_services *sv, struct tb_bmcwatch **out, struct tb_error *err)
{
	struct tb_bmcwatch *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	w->sv = sv;
	w->interval_s = tb_bmc_interval(sv->cfg->bmc_interval_s, sv->cfg->bmc_floor_s);
	tb_machtab_init(&w->st, sizeof(struct bmc_state));
	pthread_mutex_init(&w->lock, NULL);
	if (sv->cfg->bmc_interval_s > 0) {
		if (tb_ticker_start(&w->ticker, TICK_MS, round_once, w) != 0) {
			tb_bmcwatch_stop(w);
			return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the BMC watcher thread");
		}
		tb_info("bmc", "reading each BMC's chassis power every %u s", w->interval_s);
	}
	*out = w;
	return 0;
}

void tb_bmcwatch_stop(struct tb_bmcwatch *w)
{
	if (w == NULL)
		return;
	tb_ticker_stop(&w->ticker);
	pthread_mutex_destroy(&w->lock);
	tb_machtab_free(&w->st);
	free(w);
}

json_t *tb_bmcwatch_json(struct tb_bmcwatch *w, const struct tb_machine *m)
{
	const struct tb_power_method *pm = tb_bmc_method(m);
	struct bmc_state *s, copy;

	if (pm == NULL)
		return json_null();
	memset(&copy, 0, sizeof(copy));
	copy.on = -1;
	snprintf(copy.method, sizeof(copy.method), "%s", tb_power_driver_for(pm)->name);
	if (w != NULL) {
		pthread_mutex_lock(&w->lock);
		if ((s = slot(w, m->name, 0)) != NULL && s->checked_ms != 0)
			copy = *s;
		pthread_mutex_unlock(&w->lock);
	}
	return state_json(&copy);
}

int tb_machine_is_on(struct tb_hosts *hosts, struct tb_bmcwatch *bmc, const char *machine)
{
	int64_t since, seen;

	return tb_hosts_reach(hosts, machine, &since, &seen) == 1 || tb_bmcwatch_power(bmc, machine) == 1;
}

int tb_bmcwatch_power(struct tb_bmcwatch *w, const char *machine)
{
	struct bmc_state *s;
	int on = -1;

	if (w == NULL)
		return -1;
	pthread_mutex_lock(&w->lock);
	if ((s = slot(w, machine, 0)) != NULL)
		on = s->on;
	pthread_mutex_unlock(&w->lock);
	return on;
}
