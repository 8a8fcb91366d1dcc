/* wake.c - the wake schedule: see wake.h. */
#include "wake.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "services.h"
#include "audit.h"
#include "bmcwatch.h"
#include "cron.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "machtab.h"
#include "power.h"
#include "ticker.h"
#include "timeutil.h"

#define TICK_MS 1000

/* What the schedule knows of one machine. */
struct slot {
	char machine[TB_MACHTAB_NAME];
	char pattern[TB_CRON_TEXT_MAX + 1]; /* the pattern next was taken from */
	time_t next;                        /* -1: none */
	time_t last_at;                     /* 0: nothing happened yet */
	char last[200];
};
TB_MACHTAB_SLOT(struct slot, machine);

struct tb_wake {
	struct tb_services *sv;
	pthread_mutex_t lock; /* guards slots */
	struct tb_ticker ticker;
	struct tb_machtab slots; /* struct slot */
};

/* m's slot, made (and its next time taken) when new or when the pattern
 * changed; NULL when out of memory.  Lock held. */
static struct slot *slot_of(struct tb_wake *w, const struct tb_machine *m, time_t now)
{
	struct slot *s = tb_machtab_get(&w->slots, m->name, 1);

	if (s == NULL)
		return NULL;
	if (strcmp(s->pattern, m->wake_schedule) != 0) {
		snprintf(s->pattern, sizeof(s->pattern), "%s", m->wake_schedule);
		s->next = tb_cron_next(&m->wake, now);
	}
	return s;
}

/* ---- the power-on action ---- */

int tb_wake_power_on(struct tb_services *sv, const struct tb_machine *m, const char *actor, json_t *params,
		     const char *note, int64_t *id, struct tb_error *err)
{
	char holder[TB_HOLDER_MAX] = "";
	int rc;

	*id = 0;
	tb_actions_holder(sv->actions, m->name, holder, sizeof(holder));
	if (holder[0] != '\0') {
		json_decref(params);
		return tb_fail(err, TB_ERR_CONFLICT, "", "held by %s", holder);
	}
	if (tb_machine_is_on(sv->hosts, sv->bmcwatch, m->name)) {
		json_decref(params);
		return 0;
	}
	/* the action takes the hold atomically: refused if anything took it
	 * since the look above */
	if ((rc = tb_power_start(sv, m->name, TB_POWER_ON, params, actor, note, id, err)) != 0)
		return rc;
	tb_audit_self(sv, actor, "host.power", m->name, "ok");
	return 0;
}

/* m's time `due` has come: power it on unless it is on or held; what
 * happened into last. */
static void fire(struct tb_wake *w, const struct tb_machine *m, time_t due, char *last, size_t lastlen)
{
	struct tb_error e = {0};
	char at[TB_TIME_MAX], note[300];
	int64_t id = 0;

	tb_time_format((int64_t)due, at);
	snprintf(note, sizeof(note), "wake_schedule \"%s\" of %s names %s: powering it on", m->wake_schedule, m->name,
		 at);
	if (tb_wake_power_on(w->sv, m, "schedule",
			     json_pack("{s:s, s:s, s:s}", "action", "on", "reason", "schedule", "wake_schedule",
				       m->wake_schedule),
			     note, &id, &e) != 0) {
		snprintf(last, lastlen, "not powered on: %s", e.message);
	} else if (id == 0) {
		snprintf(last, lastlen, "not powered on: it was on already");
	} else {
		snprintf(last, lastlen, "power-on action %lld", (long long)id);
		tb_info("wake", "%s: wake_schedule \"%s\": power-on action %lld", m->name, m->wake_schedule,
			(long long)id);
	}
}

static void round_once(void *cls)
{
	struct tb_wake *w = cls;
	struct tb_inventory *inv = tb_inv_current_get(w->sv->invs);
	time_t now = time(NULL);

	for (size_t i = 0; i < inv->nmachines && !tb_ticker_stopping(&w->ticker); i++) {
		const struct tb_machine *m = &inv->machines[i];
		struct slot *s;
		time_t due = 0;
		char last[200];

		if (m->wake_schedule == NULL)
			continue;
		pthread_mutex_lock(&w->lock);
		if ((s = slot_of(w, m, now)) != NULL && s->next >= 0 && now >= s->next) {
			due = s->next;
			s->next = tb_cron_next(&m->wake, now);
		}
		pthread_mutex_unlock(&w->lock);
		if (due == 0)
			continue;
		fire(w, m, due, last, sizeof(last)); /* unlocked: it asks other parts */
		pthread_mutex_lock(&w->lock);
		if ((s = slot_of(w, m, now)) != NULL) {
			s->last_at = due;
			snprintf(s->last, sizeof(s->last), "%s", last);
		}
		pthread_mutex_unlock(&w->lock);
	}
	tb_inv_current_put(w->sv->invs, inv);
}

int tb_wake_new(struct tb_services *sv, struct tb_wake **out, struct tb_error *err)
{
	struct tb_wake *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	w->sv = sv;
	tb_machtab_init(&w->slots, sizeof(struct slot));
	pthread_mutex_init(&w->lock, NULL);
	*out = w;
	return 0;
}

int tb_wake_start(struct tb_wake *w, struct tb_error *err)
{
	if (tb_ticker_start(&w->ticker, TICK_MS, round_once, w) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the wake schedule thread");
	return 0;
}

void tb_wake_stop(struct tb_wake *w)
{
	if (w != NULL)
		tb_ticker_stop(&w->ticker);
}

void tb_wake_free(struct tb_wake *w)
{
	if (w == NULL)
		return;
	tb_wake_stop(w);
	pthread_mutex_destroy(&w->lock);
	tb_machtab_free(&w->slots);
	free(w);
}

json_t *tb_wake_json(struct tb_wake *w, const struct tb_machine *m)
{
	char next_at[TB_TIME_MAX], last_at[TB_TIME_MAX], last[200] = "";
	time_t next, when = 0;
	struct slot *s;

	if (w == NULL || m->wake_schedule == NULL)
		return json_null();
	pthread_mutex_lock(&w->lock);
	if ((s = slot_of(w, m, time(NULL))) != NULL) {
		next = s->next;
		when = s->last_at;
		snprintf(last, sizeof(last), "%s", s->last);
	} else {
		next = tb_cron_next(&m->wake, time(NULL));
	}
	pthread_mutex_unlock(&w->lock);
	tb_time_format((int64_t)next, next_at);
	tb_time_format((int64_t)when, last_at);
	return json_pack("{s:s, s:o, s:o, s:o}", "schedule", m->wake_schedule, "next_at",
			 next >= 0 ? json_string(next_at) : json_null(), "last_at",
			 when > 0 ? json_string(last_at) : json_null(), "last",
			 when > 0 ? json_string(last) : json_null());
}
