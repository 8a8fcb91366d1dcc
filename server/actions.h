/*
 * actions.h - long operations on one host (power, boot), run in their own
 * thread, recorded step by step in the store and published as events.
 *
 * One holder per host: starting an action holds its host until it ends; a
 * second request gets TB_ERR_CONFLICT naming the holder ("action 12 (boot
 * freebsd) by admin").  A matrix will hold its hosts the same way
 * (tb_actions_hold / tb_actions_release).
 *
 * Every step is stored with a millisecond timestamp and published as an
 * "action.step" event; every change of state as "action.state".  On start
 * an action that was queued or running when testbedd stopped is marked
 * failed ("interrupted").
 *
 * Thread-safe.  An action's work function runs in the action's thread and
 * must check tb_action_canceled() between steps; every wait it does must be
 * bounded.
 */
#ifndef TB_ACTIONS_H
#define TB_ACTIONS_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_actions;
struct tb_action;
struct tb_events;
struct tb_store;

/* The work: 0 for success, else a tb_err with err filled (the reason). */
typedef int (*tb_action_fn)(struct tb_action *a, void *cls, struct tb_error *err);

/* Told each time a host is taken and let go (a use begins or ends: idle
 * power-off counts from it).  Called with the actions' lock held: it must
 * not call back into actions.  fn NULL: nobody listens. */
struct tb_hold_info;
struct tb_actions_hooks {
	void (*on_use)(void *cls, const char *host);
	void *cls;
	/* Told, with the lock held, each time a host's holder changes (h NULL:
	 * nobody holds it now), so that the host's state can show held_by.  It
	 * must not call back into actions.  NULL: nobody listens. */
	void (*on_hold)(void *cls, const char *host, const struct tb_hold_info *h);
	void *hold_cls;
	/* Asked, with the lock held, before host is taken for by (who started
	 * the action or matrix): 0 lets it, else TB_ERR_CONFLICT with err filled
	 * (a reservation, reserve.h).  It must not call back into actions.
	 * NULL: anybody may. */
	int (*may_hold)(void *cls, const char *host, const char *by, struct tb_error *err);
	void *may_cls;
	/* Around each action's work, in the action's thread, no lock held:
	 * begin's result (owned by the hooks) is handed to end, which is
	 * called after the work returned rc, took_ms later, while the action
	 * is still running (it may add steps) and must free it.  NULL: none. */
	void *(*on_begin)(void *cls, struct tb_action *a);
	void (*on_end)(void *cls, struct tb_action *a, void *begun, int rc, int64_t took_ms);
	void *run_cls;
};

/* The store and the bus are used, not owned; ctx is handed back to work
 * functions by tb_action_services() and never looked into here.  Marks actions
 * left queued or running by an earlier testbedd as failed (one UPDATE). */
int tb_actions_new(struct tb_store *st, struct tb_events *ev, struct tb_services *ctx,
		   const struct tb_actions_hooks *hooks, struct tb_actions **out, struct tb_error *err);
/* Cancel every running action and wait for its thread. */
void tb_actions_stop(struct tb_actions *acts);

/*
 * Hold host, record the action (kind "power"/"boot", params: stolen JSON
 * object describing the request), and start fn(a, cls) in a new thread.
 * cls is freed with cls_free (may be NULL) when the action ends.  *id gets
 * the action's id.  TB_ERR_CONFLICT when the host is held.
 */
int tb_actions_start(struct tb_actions *acts, const char *host, const char *kind, json_t *params, const char *actor,
		     tb_action_fn fn, void *cls, void (*cls_free)(void *), int64_t *id, struct tb_error *err);

/* Record a step (see power.h's tb_step_fn; a is the cls). */
void tb_action_step(void *a, const char *what, const char *command, int exit_status, const char *output);
/* printf-style step with no command. */
void tb_action_note(struct tb_action *a, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

int tb_action_canceled(const struct tb_action *a);
const volatile int *tb_action_cancel_flag(const struct tb_action *a);
int64_t tb_action_id(const struct tb_action *a);
const char *tb_action_host(const struct tb_action *a);
/* "power" or "boot". */
const char *tb_action_kind(const struct tb_action *a);
struct tb_services *tb_action_services(const struct tb_action *a);

/* Ask a running action to stop; TB_ERR_NOT_FOUND, or TB_ERR_CONFLICT when it has ended. */
int tb_actions_cancel(struct tb_actions *acts, int64_t id, struct tb_error *err);

/* An action with its steps, as the API shows it (new reference). */
int tb_actions_get_json(struct tb_actions *acts, int64_t id, json_t **out, struct tb_error *err);
/* Newest first; host NULL: any; limit 1..1000. */
int tb_actions_list_json(struct tb_actions *acts, const char *host, int limit, json_t **out, struct tb_error *err);

/* A holder's name ("action 12 (boot {...}) by admin", "matrix 7 (nightly)"):
 * the size of every buffer that keeps or shows one. */
#define TB_HOLDER_MAX 160

/* Who holds a host, as the API shows it (a host's state.held_by). */
struct tb_hold_info {
	char kind[8];             /* "action", "matrix", or "" for another holder */
	int64_t id;               /* the action's or matrix's id; 0 for another holder */
	char by[64];              /* who started it ("" when not known) */
	char text[TB_HOLDER_MAX]; /* the holder's name, as a 409 says it */
	int64_t since_ms;         /* when the hold was taken */
};

/* Hold a host for something else (a matrix): TB_ERR_CONFLICT naming the holder. */
int tb_actions_hold(struct tb_actions *acts, const char *host, const char *holder, struct tb_error *err);
/* The same, saying what holds it: kind "matrix", its id and who started it
 * (held_by).  kind NULL as tb_actions_hold. */
int tb_actions_hold_as(struct tb_actions *acts, const char *host, const char *holder, const char *kind, int64_t id,
		       const char *by, struct tb_error *err);
/* Who holds host now: 1 and *out filled, else 0. */
int tb_actions_held_by(struct tb_actions *acts, const char *host, struct tb_hold_info *out);
/* held_by as the API shows it: {kind, id, by, holder, since, since_ms}, or
 * JSON null when h is NULL (new reference). */
json_t *tb_hold_info_json(const struct tb_hold_info *h);
void tb_actions_release(struct tb_actions *acts, const char *host);
/* Who holds host now ("" when nobody), into buf. */
void tb_actions_holder(struct tb_actions *acts, const char *host, char *buf, size_t len);

#endif /* TB_ACTIONS_H */
