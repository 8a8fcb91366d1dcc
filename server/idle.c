/* idle.c - idle power-off: see idle.h. */
#include "idle.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "services.h"
#include "audit.h"
#include "bmcwatch.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "machtab.h"
#include "power.h"
#include "reserve.h"
#include "ticker.h"
#include "timeutil.h"

#define TICK_MS 1000

struct use {
	char machine[TB_MACHTAB_NAME];
	int64_t last_ms;
};
TB_MACHTAB_SLOT(struct use, machine);

struct tb_idle {
	struct tb_services *sv;
	int64_t started_ms;
	pthread_mutex_t lock; /* guards uses */
	struct tb_ticker ticker;
	struct tb_machtab uses; /* struct use */
};

/* ---- pure helpers ---- */

int64_t tb_idle_off_at_ms(int64_t last_use_ms, int after_min, unsigned int minute_s)
{
	if (after_min <= 0)
		return -1;
	return last_use_ms + (int64_t)after_min * (int64_t)(minute_s > 0 ? minute_s : 60) * 1000;
}

enum tb_idle_state tb_idle_decide(int after_min, int on, int held, int64_t off_at_ms, int64_t now_ms)
{
	if (after_min <= 0 || off_at_ms < 0)
		return TB_IDLE_NONE;
	if (!on)
		return TB_IDLE_OFF;
	if (held)
		return TB_IDLE_HELD;
	return now_ms >= off_at_ms ? TB_IDLE_DUE : TB_IDLE_COUNTING;
}

int64_t tb_idle_seconds_left(int64_t off_at_ms, int64_t now_ms)
{
	int64_t left = off_at_ms - now_ms;

	return left <= 0 ? 0 : (left + 999) / 1000;
}

/* ---- last use ---- */

void tb_idle_touch(struct tb_idle *idle, const char *machine)
{
	int64_t now = tb_now_ms();
	struct use *u;

	if (idle == NULL || machine == NULL)
		return;
	pthread_mutex_lock(&idle->lock);
	if ((u = tb_machtab_get(&idle->uses, machine, 1)) != NULL)
		u->last_ms = now;
	pthread_mutex_unlock(&idle->lock);
}

static int64_t last_use(struct tb_idle *idle, const char *machine)
{
	int64_t t = idle->started_ms;

	pthread_mutex_lock(&idle->lock);
	{
		const struct use *u = tb_machtab_get(&idle->uses, machine, 0);

		if (u != NULL)
			t = u->last_ms;
	}
	pthread_mutex_unlock(&idle->lock);
	return t;
}

/* Everything the decision needs about m now. */
static enum tb_idle_state decide(struct tb_idle *idle, const struct tb_machine *m, int64_t *last, int64_t *off_at,
				 char *holder, size_t hlen)
{
	int64_t now = tb_now_ms();
	struct tb_error e = {0};

	*last = last_use(idle, m->name);
	*off_at = tb_idle_off_at_ms(*last, m->idle_poweroff_min, idle->sv->cfg->idle_minute_s);
	tb_actions_holder(idle->sv->actions, m->name, holder, hlen);
	/* someone's reservation holds it too (idle is "anyone else"): held,
	 * not a power-off that the hold hook refuses every second */
	if (holder[0] == '\0' && idle->sv->reserve != NULL &&
	    tb_reserve_check(idle->sv->reserve, m->name, "idle", &e) != 0)
		snprintf(holder, hlen, "%s", e.message);
	return tb_idle_decide(m->idle_poweroff_min, tb_machine_is_on(idle->sv->hosts, idle->sv->bmcwatch, m->name),
			      holder[0] != '\0', *off_at, now);
}

/* ---- the power-off action ---- */

static void fire(struct tb_idle *idle, const struct tb_machine *m, int64_t last)
{
	struct tb_error e = {0};
	char at[TB_TIME_MAX], note[300];
	int64_t id = 0;

	tb_time_format(last / 1000, at);
	snprintf(note, sizeof(note), "%s has not been used since %s (idle_poweroff_min %d): powering it off", m->name,
		 at, m->idle_poweroff_min);
	/* the action takes the hold atomically: if anything took it since
	 * decide() looked, this is refused and nothing happens */
	if (tb_power_start(idle->sv, m->name, TB_POWER_OFF,
			   json_pack("{s:s, s:s, s:i}", "action", "off", "reason", "idle", "idle_poweroff_min",
				     m->idle_poweroff_min),
			   "idle", note, &id, &e) == 0) {
		tb_info("idle", "%s: idle for %d min: power-off action %lld", m->name, m->idle_poweroff_min,
			(long long)id);
		tb_audit_self(idle->sv, "idle", "host.power", m->name, "ok");
	} else {
		tb_debug("idle", "%s: not powered off: %s", m->name, e.message);
	}
}

static void round_once(void *cls)
{
	struct tb_idle *idle = cls;
	struct tb_inventory *inv = tb_inv_current_get(idle->sv->invs);

	for (size_t i = 0; i < inv->nmachines && !tb_ticker_stopping(&idle->ticker); i++) {
		const struct tb_machine *m = &inv->machines[i];
		char holder[TB_HOLDER_MAX];
		int64_t last, off_at;

		if (m->idle_poweroff_min > 0 && decide(idle, m, &last, &off_at, holder, sizeof(holder)) == TB_IDLE_DUE)
			fire(idle, m, last);
	}
	tb_inv_current_put(idle->sv->invs, inv);
}

int tb_idle_new(struct tb_services *sv, struct tb_idle **out, struct tb_error *err)
{
	struct tb_idle *idle = calloc(1, sizeof(*idle));

	*out = NULL;
	if (idle == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	idle->sv = sv;
	idle->started_ms = tb_now_ms();
	tb_machtab_init(&idle->uses, sizeof(struct use));
	pthread_mutex_init(&idle->lock, NULL);
	*out = idle;
	return 0;
}

int tb_idle_start(struct tb_idle *idle, struct tb_error *err)
{
	if (tb_ticker_start(&idle->ticker, TICK_MS, round_once, idle) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the idle power-off thread");
	if (idle->sv->cfg->idle_minute_s != 0 && idle->sv->cfg->idle_minute_s != 60)
		tb_warn("idle", "an idle minute is %u s (TESTBEDD_TEST_IDLE_MINUTE_S): for tests only",
			idle->sv->cfg->idle_minute_s);
	return 0;
}

void tb_idle_stop(struct tb_idle *idle)
{
	if (idle != NULL)
		tb_ticker_stop(&idle->ticker);
}

void tb_idle_free(struct tb_idle *idle)
{
	if (idle == NULL)
		return;
	tb_idle_stop(idle);
	pthread_mutex_destroy(&idle->lock);
	tb_machtab_free(&idle->uses);
	free(idle);
}

json_t *tb_idle_json(struct tb_idle *idle, const struct tb_machine *m)
{
	static const char *const words[] = {"none", "off", "held", "counting", "counting"};
	enum tb_idle_state s;
	char holder[TB_HOLDER_MAX], last_at[TB_TIME_MAX], off_at_s[TB_TIME_MAX];
	int64_t last, off_at, now = tb_now_ms();
	int counting;

	if (idle == NULL || m->idle_poweroff_min <= 0)
		return json_null();
	s = decide(idle, m, &last, &off_at, holder, sizeof(holder));
	counting = s == TB_IDLE_COUNTING || s == TB_IDLE_DUE;
	tb_time_format_ms(last, last_at);
	tb_time_format((off_at + 999) / 1000, off_at_s);
	return json_pack("{s:i, s:s, s:s, s:o, s:o}", "after_min", m->idle_poweroff_min, "last_use", last_at, "state",
			 words[s], "off_at", counting ? json_string(off_at_s) : json_null(), "seconds_left",
			 counting ? json_integer(tb_idle_seconds_left(off_at, now)) : json_null());
}
