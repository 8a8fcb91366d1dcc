/*
 * ssh_internal.h - what the files of the SSH adapter share; not for other
 * modules (their contract is ssh.h).
 *
 *   ssh_session.c  one session: libssh options, connect, host-key pinning,
 *                  authentication, close; tb_ssh_host_key
 *   ssh_pool.c     struct tb_ssh_pool: checkout/checkin of sessions, idle
 *                  expiry, counters; tb_ssh_pool_*
 *   ssh.c          commands on a session: channels, the watchdog, streaming,
 *                  timeouts; tb_ssh_exec/spawn/kill/run_capture
 *
 * Ownership: a struct conn belongs to exactly one owner at a time: the
 * caller that got it from tb_ssh_conn_get (or made it with
 * tb_ssh_conn_open), or a pool's idle list.  tb_ssh_conn_put and
 * tb_ssh_conn_close take it over; after them the caller must not touch it.
 * The conn owns its libssh session and key string.
 *
 * Locking: libssh sessions are not thread-safe, so a session is used only by
 * its owner and needs no lock.  A pool's mutex guards its idle list and its
 * counters only; it is never held across network I/O (sessions found dead or
 * expired under it are closed after it is released).
 */
#ifndef TB_SSH_INTERNAL_H
#define TB_SSH_INTERNAL_H

#include <stdbool.h>

#include <libssh/libssh.h>

#include "error.h"
#include "ssh.h"

#define DEFAULT_CONNECT_TIMEOUT_S 10

/* One authenticated session: owned by one caller, or idle in a pool. */
struct conn {
	ssh_session s;
	char *key;            /* which sessions it can stand in for: pool_key()
				      * in ssh_pool.c; owned, may be NULL */
	long timeout_s;       /* the session's normal SSH_OPTIONS_TIMEOUT */
	long long idle_since; /* tb_monotonic_ms() when checked in */
	char host_fp[TB_SSH_FP_MAX];
	ssh_channel standby; /* NULL, or a shell waiting for its script (tb_ssh_standby) */
	struct conn *next;   /* the pool's idle list */
};

/* ---- the target's fields with their defaults, for messages and options ---- */

static inline const char *mname(const struct tb_ssh_target *t)
{
	if (t->machine != NULL && *t->machine != '\0')
		return t->machine;
	return t->address != NULL ? t->address : "?";
}

static inline const char *oname(const struct tb_ssh_target *t)
{
	return t->os != NULL && *t->os != '\0' ? t->os : "unknown OS";
}

static inline const char *uname_of(const struct tb_ssh_target *t)
{
	return t->user != NULL && *t->user != '\0' ? t->user : "root";
}

static inline unsigned int port_of(const struct tb_ssh_target *t)
{
	return t->port != 0 ? t->port : 22;
}

static inline long timeout_s_of(const struct tb_ssh_target *t)
{
	return t->connect_timeout_s > 0 ? t->connect_timeout_s : DEFAULT_CONNECT_TIMEOUT_S;
}

/* ---- ssh_session.c ---- */

/* ssh_init() once per process; err may be NULL.  Cheap after the first call. */
int tb_ssh_lib_init(struct tb_error *err);

/*
 * Make c (zeroed by the caller, c->key already set or NULL) a new
 * authenticated session: loads the key, connects, checks the presented host
 * key against t->pinned_fp (copied into res->host_fp as soon as it is known)
 * and logs in.  Blocks for a TCP connect, key exchange and authentication.
 * On failure c may hold a half-made session: close it with tb_ssh_conn_close.
 */
int tb_ssh_conn_open(struct conn *c, const struct tb_ssh_target *t, struct tb_ssh_result *res, struct tb_error *err);

/* Disconnect (network: sends a disconnect) and free c with its key.  NULL is
 * allowed. */
void tb_ssh_conn_close(struct conn *c);

/* ---- ssh_pool.c ---- */

enum pool_counter { COUNT_CONNECTS, COUNT_REUSES, COUNT_DISCARDS, COUNT_RETRIES, COUNT_STANDBYS };

/* Count one event in pool's stats (takes its mutex briefly).  NULL pool: no-op. */
void tb_ssh_pool_count(struct tb_ssh_pool *pool, enum pool_counter which);

/*
 * Check an idle session for t out of the pool (when reuse and pool != NULL;
 * *reused set, res->host_fp filled; one carrying a standby shell first) or
 * make a new one with tb_ssh_conn_open.
 * On 0, *out is the caller's until tb_ssh_conn_put.  Blocks when it has to
 * connect; takes the pool's mutex briefly.
 */
int tb_ssh_conn_get(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, bool reuse, struct conn **out,
		    bool *reused, struct tb_ssh_result *res, struct tb_error *err);

/* Give c back: kept for reuse when healthy, connected and wanted, else closed.
 * Always takes c over.  NULL pool: c is closed. */
void tb_ssh_conn_put(struct tb_ssh_pool *pool, struct conn *c, bool healthy);

#endif /* TB_SSH_INTERNAL_H */
