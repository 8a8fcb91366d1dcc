/*
 * hosts.h - what each machine is doing now: which OS persona answers ssh,
 * since when, and the last error; kept fresh by a bounded background prober
 * and saved in the store.  It observes only: it never powers, boots or
 * "corrects" anything.
 *
 * A probe of a persona is: connect to its address, check the host key
 * against the pin (an admin's accepted key, else the inventory's), log in
 * with the key, run `uname -s`.  A refused key is kept as "presented" so that
 * an admin can look at it and accept it (tb_hosts_trust).
 *
 * Thread-safe.  tb_hosts_start spawns the prober thread; probes run in at
 * most TB_PROBE_WORKERS threads and each is bounded by the persona's
 * connect and command timeouts.
 */
#ifndef TB_HOSTS_H
#define TB_HOSTS_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_hosts;

#define TB_PROBE_WORKERS 4
#define TB_PROBE_WAIT_CONNECT_S 3
/* The connect timeout of a probe of only the persona a boot expects: it is
 * tried again at once, and an address that is not up yet would otherwise
 * hold each try for TB_PROBE_WAIT_CONNECT_S, also after it came up. */
#define TB_PROBE_EXPECT_CONNECT_S 1

struct tb_machine;

/* Called in a prober thread after each machine's probe (the GRUB menu read,
 * boot.c, hangs here: app.c wires it, so that hosts need not know boot).
 * Its work must be bounded.  NULL: nothing. */
typedef void (*tb_hosts_after_probe_fn)(struct tb_hosts *h, const struct tb_machine *m);

int tb_hosts_start(struct tb_services *sv, tb_hosts_after_probe_fn after_probe, struct tb_hosts **out,
		   struct tb_error *err);
/* Stop the background prober: returns after its round in flight (which
 * reads the holders, actions.c) has ended; no round starts afterwards.
 * Probes that others ask for (tb_hosts_probe_one, _expect) still work.  Call it
 * before the actions are freed; idempotent. */
void tb_hosts_halt(struct tb_hosts *h);
/* Halts the prober if running and frees h. */
void tb_hosts_stop(struct tb_hosts *h);

/* The inventory was replaced: forget machines that left, probe at once. */
void tb_hosts_inventory_changed(struct tb_hosts *h);

/* Wake the prober now rather than at its next interval. */
void tb_hosts_probe_now(struct tb_hosts *h);

/* Run one probe round of every machine in the calling thread (tests, and
 * the prober itself).  Blocks for up to the slowest persona's timeouts. */
void tb_hosts_probe_all(struct tb_hosts *h);

/* The "state" object of a machine for the API (new reference).  Its
 * held_by is asked of actions (their lock, briefly): never call this with
 * actions' lock held. */
json_t *tb_hosts_state_json(struct tb_hosts *h, const char *machine);

/* A machine for the API: the inventory's public view, each persona's
 * host_key as it is pinned now (an admin's accepted key over the
 * inventory's), and its state.  New reference; NULL when out of memory. */
struct tb_machine;
json_t *tb_hosts_machine_json(struct tb_hosts *h, const struct tb_machine *m);

/* Call fn for every machine's reachability ("up", "down", "unknown") and
 * answering OS (NULL when none), under the hosts lock: fn must not block. */
typedef void (*tb_hosts_state_fn)(void *cls, const char *machine, const char *reachability, const char *os);
void tb_hosts_each_state(struct tb_hosts *h, tb_hosts_state_fn fn, void *cls);

/* Probe one machine now, in the calling thread (also updates its state and
 * publishes a change), with connect timeouts of at most
 * TB_PROBE_WAIT_CONNECT_S (a machine being waited for is on the LAN).  Returns 1 and the answering OS in os (len bytes)
 * when a persona answers, else 0.  Blocks up to the personas' timeouts. */
struct tb_machine;
int tb_hosts_probe_one(struct tb_hosts *h, const struct tb_machine *m, char *os, size_t len);
/* The same for a machine expected to come up as persona expect (a boot):
 * that persona first, before the one that answered last (which has just
 * gone away: on a LAN a persona that is not up costs a whole connect
 * timeout).  only: no other persona, with a connect timeout of
 * TB_PROBE_EXPECT_CONNECT_S (another persona that answers is seen at the
 * next full probe).  expect NULL, or not a persona of m: as
 * tb_hosts_probe_one. */
int tb_hosts_probe_expect(struct tb_hosts *h, const struct tb_machine *m, const char *expect, int only, char *os,
			  size_t len);

/* What the prober last saw, without probing: 1 and the answering OS in os
 * when a persona answered, else 0.  Never blocks on the network. */
int tb_hosts_answering(struct tb_hosts *h, const char *machine, char *os, size_t len);

/* What the prober last saw of machine, without probing: 1 an OS answers,
 * 0 none does, -1 unknown (not probed yet); *since (when that began) and
 * *checked_at (the last probe), in seconds, 0 when unknown.  Never blocks
 * on the network. */
int tb_hosts_reach(struct tb_hosts *h, const char *machine, int64_t *since, int64_t *checked_at);

/* What an action is doing to the machine ("powering_on", "booting",
 * "shutting_down"; NULL when nothing): shown as state.phase. */
void tb_hosts_set_phase(struct tb_hosts *h, const char *machine, const char *phase);

/* Who holds the machine now (actions' on_hold, wired in app.c, called with
 * actions' lock held; NULL: nobody): published as host.state with that
 * held_by.  Nothing is kept here: tb_hosts_state_json asks actions
 * (tb_actions_held_by) each time.  Takes the hosts lock; publishes an event. */
struct tb_hold_info;
void tb_hosts_set_held(struct tb_hosts *h, const char *machine, const struct tb_hold_info *held);

/* The ssh target of a persona with the pin in force; pin is the caller's
 * buffer (at least 80 bytes) that t->pinned_fp may point into. */
struct tb_persona;
struct tb_ssh_target;
struct tb_ssh_pool;
void tb_hosts_target(struct tb_hosts *h, const struct tb_machine *m, const struct tb_persona *p,
		     struct tb_ssh_target *t, char *pin, size_t pinlen);
struct tb_ssh_pool *tb_hosts_pool(struct tb_hosts *h);

/* The GRUB menus the prober read after its probes (bootmenu.h; boot.c
 * reads them): each probe round reads a Linux machine's menu when it is due. */
struct tb_bootmenus;
struct tb_bootmenus *tb_hosts_menus(struct tb_hosts *h);

/* "ssh USER@ADDRESS <argv as sh would run it>": how a command sent to
 * persona p is shown to people and stored (malloc'd; NULL: out of memory). */
char *tb_hosts_command_shown(const struct tb_persona *p, const char *const argv[]);

/* An admin accepts the host key that persona os of machine presented:
 * fp must be exactly the fingerprint shown.  TB_ERR_NOT_FOUND for an
 * unknown machine or OS, TB_ERR_CONFLICT when fp is not what it presented. */
int tb_hosts_trust(struct tb_hosts *h, const char *machine, const char *os, const char *fp, const char *actor,
		   struct tb_error *err);

#endif /* TB_HOSTS_H */
