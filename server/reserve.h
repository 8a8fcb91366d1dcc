/*
 * reserve.h - reservations: "I am using left and right until 18:00".
 *
 * A reservation names hosts, an end and a note, and belongs to the token
 * (by its name) that asked.  It is granted at once when none of its hosts is
 * reserved or promised to an earlier request, else queued: first come first
 * served per host, with a position and an estimated start (the ends of what
 * is before it).  A queued reservation keeps its length: granted later, it
 * ends that much after its grant.  Released by its owner, broken by an admin,
 * or expired by itself (a ticker every second); each time the queue is walked
 * and whatever fits is granted.  Events: reservation.granted, .queued,
 * .released, .broken, .expired (data: the reservation).
 *
 * While a host is reserved, tb_reserve_check refuses anybody else with
 * TB_ERR_CONFLICT naming the owner and the end: actions.c asks it through
 * its may_hold hook (set by app.c), so power, boot and matrix holds all go
 * through it.
 *
 * Kept in the store (store_reserve.c) and come back on restart.
 * Thread-safe: one mutex, held across the bus's publish and the store's
 * write of the row that changed.
 */
#ifndef TB_RESERVE_H
#define TB_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_events;
struct tb_reserve;
struct tb_store;

#define TB_RESERVE_HOSTS_MAX 16 /* hosts in one reservation */
#define TB_RESERVE_MAX 64       /* reservations granted and queued at once */
#define TB_RESERVE_MAX_S (7 * 86400)

/* ev may be NULL (tests): nothing is published; st may be NULL: nothing is
 * kept.  With st, the reservations kept by an earlier testbedd come back
 * (one SELECT); what ended meanwhile ends at the first tick. */
int tb_reserve_new(struct tb_events *ev, struct tb_store *st, struct tb_reserve **out, struct tb_error *err);
/* Start the expiry ticker (every second). */
int tb_reserve_start(struct tb_reserve *r, struct tb_error *err);
/* Stop the ticker; free.  NULL is allowed. */
void tb_reserve_free(struct tb_reserve *r);

/* Ask for hosts until `until` (unix s, after now, at most TB_RESERVE_MAX_S
 * ahead).  *out: the reservation as JSON (new reference).  TB_ERR_INVALID
 * naming the field; TB_ERR_CONFLICT when the owner already holds or waits
 * for one of the hosts, or when full. */
int tb_reserve_request(struct tb_reserve *r, const char *const hosts[], size_t nhosts, int64_t until, const char *note,
		       const char *owner, int64_t now, json_t **out, struct tb_error *err);

/* Release (owner) or break (admin, when not the owner: *broke set) one.
 * TB_ERR_NOT_FOUND, or TB_ERR_FORBIDDEN for another's without admin. */
int tb_reserve_release(struct tb_reserve *r, int64_t id, const char *who, int admin, int64_t now, int *broke,
		       struct tb_error *err);

/* End what is over at now and grant what then fits. */
void tb_reserve_expire(struct tb_reserve *r, int64_t now);

/* 0 when who may use host now; TB_ERR_CONFLICT naming the owner and end.
 * who NULL or "": someone unknown (refused while reserved). */
int tb_reserve_check(struct tb_reserve *r, const char *host, const char *who, struct tb_error *err);

/* {"reservations": [...]}: granted first, then the queue in order. */
json_t *tb_reserve_list_json(struct tb_reserve *r, int64_t now);
/* The reservation granted on host ({"id","owner","until","note"}) or null. */
json_t *tb_reserve_host_json(struct tb_reserve *r, const char *host);

#endif /* TB_RESERVE_H */
