/*
 * auth.h - who is calling: API tokens, browser sessions and roles (the
 * per-address limit on failed logins is ratelimit.h).
 *
 * Tokens look like "tbk_<id>_<43 base64url chars>"; only their SHA-256 is
 * stored, and the check compares hashes in constant time.  A browser session
 * is a random cookie secret plus a CSRF secret, both stored hashed; it lasts
 * TB_SESSION_TTL_S from its login (a remembered one TB_SESSION_REMEMBER_TTL_S
 * from its last use) and dies with its token.  A revocation is seen by every
 * check that starts after tb_auth_token_revoke returned (the token cache never
 * keeps a copy read before it).
 *
 * Thread-safe.  Calls block on the store (SQLite).  Secrets written to caller
 * buffers are the caller's to show once and then wipe (tb_wipe); never log
 * them.  This module wipes every secret it drops itself.
 */
#ifndef TB_AUTH_H
#define TB_AUTH_H

#include <stdint.h>

#include "error.h"
#include "store.h"

enum tb_level { TB_LEVEL_NONE = 0, TB_LEVEL_VIEWER = 1, TB_LEVEL_OPERATOR = 2, TB_LEVEL_ADMIN = 3 };

#define TB_SECRET_MAX 96
#define TB_SESSION_TTL_S (12 * 3600)
/* "Remember this device": a session of a phone or laptop one logs in from often. */
#define TB_SESSION_REMEMBER_TTL_S (30 * 24 * 3600)

struct tb_principal {
	int64_t token_id;
	char name[64];
	enum tb_level level;
	int via_cookie;
	int64_t session_id; /* via_cookie: tb_auth_session_id of the cookie; else 0 */
	int64_t expires_at; /* via_cookie: when the session ends (unix s); else 0 */
	int renewed;        /* via_cookie: this use moved expires_at (send the cookie again) */
};

struct tb_auth;

/* The session TTL is TB_SESSION_TTL_S, or N seconds when the environment has
 * TESTBEDD_TEST_SESSION_TTL_S=N (1..TB_SESSION_TTL_S; for tests only: logged
 * as a warning; anything else is refused with TB_ERR_INVALID). */
int tb_auth_new(struct tb_store *st, struct tb_auth **out, struct tb_error *err);
void tb_auth_free(struct tb_auth *a);

/* "viewer" -> TB_LEVEL_VIEWER ...; TB_LEVEL_NONE for anything else. */
enum tb_level tb_level_parse(const char *role);
const char *tb_level_name(enum tb_level level);

/* With no token in the store, create an admin token and write it to
 * state_dir/admin.token (mode 0600, created exclusively).  Logs the path, never
 * the token.  A no-op when tokens exist. */
int tb_auth_bootstrap(struct tb_auth *a, const char *state_dir, struct tb_error *err);

/* Create a token; secret gets the token text (shown once). */
int tb_auth_token_create(struct tb_auth *a, const char *name, enum tb_level level, char secret[TB_SECRET_MAX],
			 int64_t *id, struct tb_error *err);

/* Revoke a token (its sessions end with it).  TB_ERR_NOT_FOUND when unknown. */
int tb_auth_token_revoke(struct tb_auth *a, int64_t id, struct tb_error *err);

/* Check a bearer token.  TB_ERR_UNAUTHORIZED with a reason when it is not valid. */
int tb_auth_bearer(struct tb_auth *a, const char *token, struct tb_principal *who, struct tb_error *err);

/* Log in with a token: a new session.  cookie and csrf get the two secrets.
 * remember != 0: the session lasts TB_SESSION_REMEMBER_TTL_S (not the test
 * override), else the session TTL. */
int tb_auth_session_create(struct tb_auth *a, const char *token, int remember, char cookie[TB_SECRET_MAX],
			   char csrf[TB_SECRET_MAX], int64_t *expires_at, struct tb_principal *who,
			   struct tb_error *err);

/* Check a session cookie; when mutating, csrf (the X-CSRF-Token header, may be
 * NULL) must match the session's.  TB_ERR_UNAUTHORIZED or TB_ERR_CSRF.
 * A use is noted (last used, and remote: the client's address as the edge
 * sees it) at most once a minute per session; then a remembered session's
 * expiry slides to TB_SESSION_REMEMBER_TTL_S from now and who->renewed is
 * set.  An ordinary session keeps the expiry of its login. */
int tb_auth_cookie(struct tb_auth *a, const char *cookie, const char *csrf, int mutating, const char *remote,
		   struct tb_principal *who, struct tb_error *err);

void tb_auth_session_delete(struct tb_auth *a, const char *cookie);

/* "Log out everywhere": delete every session of token_id (a session created
 * while this runs may survive).  *ids gets the tb_auth_session_id of each
 * deleted session (malloc'd, the caller frees; NULL when *n is 0), so that
 * their event streams can be ended. */
int tb_auth_session_delete_all(struct tb_auth *a, int64_t token_id, int64_t **ids, size_t *n, struct tb_error *err);

/* "Your devices": one session of a token.  id is the store's (what
 * DELETE /sessions/{id} takes); session_id is tb_auth_session_id's (to match
 * the caller's own and to end its streams; never shown). */
struct tb_session_view {
	int64_t id;
	int64_t session_id;
	int64_t token_id;
	char token_name[64];
	int64_t created_at; /* 0: unknown */
	int64_t expires_at;
	int64_t last_used_at; /* 0: unknown */
	int remember;
	char device[80];       /* "" when unknown */
	char last_address[64]; /* "" when unknown */
};

/* The unexpired sessions of token_id (0: of every token, for an admin),
 * oldest first: *out malloc'd (the caller frees; NULL when *n is 0). */
int tb_auth_session_list(struct tb_auth *a, int64_t token_id, struct tb_session_view **out, size_t *n,
			 struct tb_error *err);

/* End session id when it is token_id's (0: any token's, for an admin;
 * TB_ERR_NOT_FOUND else, also for another token's); *session_id gets its
 * tb_auth_session_id, so that its event streams can be ended, and owner
 * (64 bytes) its token's name. */
int tb_auth_session_end(struct tb_auth *a, int64_t token_id, int64_t id, int64_t *session_id, char owner[64],
			struct tb_error *err);

/* Label the session of cookie with a browser summary ("" or NULL: none) and
 * the address it logged in from (best effort). */
void tb_auth_session_set_client(struct tb_auth *a, const char *cookie, const char *device, const char *remote);

/* A session's id, from its cookie: 63 bits of the cookie's SHA-256, never 0
 * (not a secret: the hash is what the store keeps).  Event streams opened with
 * the cookie carry it, so that logging out ends them.  No lock, no I/O. */
int64_t tb_auth_session_id(const char *cookie);

#endif /* TB_AUTH_H */
