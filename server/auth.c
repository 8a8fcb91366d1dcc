/* auth.c - tokens, sessions and roles: see auth.h (the failed-login limit is ratelimit.c). */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "log.h"
#include "wipe.h"

#define TOKEN_CACHE 256

/* A seam for tests/unit/test_auth.c, which compiles this file with its own
 * definition to revoke a token between a lookup's store read and its cache
 * update (the race of lookup()).  Nothing in the daemon. */
#ifndef TB_AUTH_AFTER_STORE_READ
#define TB_AUTH_AFTER_STORE_READ(a, id) ((void)0)
#endif

struct token_lookup {
	int found;
	int revoked;
	int64_t last_used_at;
	int64_t id;
	char name[64];
	char role[16];
	uint8_t hash[TB_SHA256_LEN];
};

struct tb_auth {
	struct tb_store *st;
	pthread_mutex_t lock;
	/* tokens already read from the store: a request needs no SQL to be
	 * authenticated (revocation goes through tb_auth_token_revoke) */
	struct token_lookup cache[TOKEN_CACHE];
	size_t ncache, next_evict;
	/* revocations so far: a lookup whose store read overlapped one does not
	 * cache what it read (see lookup) */
	uint64_t revocations;
	int64_t session_ttl_s;
};

int tb_auth_new(struct tb_store *st, struct tb_auth **out, struct tb_error *err)
{
	const char *test_ttl = getenv("TESTBEDD_TEST_SESSION_TTL_S");
	struct tb_auth *a;
	long ttl = TB_SESSION_TTL_S;

	*out = NULL;
	if (test_ttl != NULL) {
		char *end;

		errno = 0;
		ttl = strtol(test_ttl, &end, 10);
		if (end == test_ttl || *end != '\0' || errno != 0 || ttl < 1 || ttl > TB_SESSION_TTL_S)
			return tb_fail(err, TB_ERR_INVALID, "TESTBEDD_TEST_SESSION_TTL_S",
				       "TESTBEDD_TEST_SESSION_TTL_S must be 1..%d, got \"%.32s\"", TB_SESSION_TTL_S,
				       test_ttl);
		tb_warn("auth", "a session lasts %ld s (TESTBEDD_TEST_SESSION_TTL_S): for tests only", ttl);
	}
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	a->st = st;
	a->session_ttl_s = ttl;
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
}

void tb_auth_free(struct tb_auth *a)
{
	if (a == NULL)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a);
}

enum tb_level tb_level_parse(const char *role)
{
	if (role == NULL)
		return TB_LEVEL_NONE;
	if (strcmp(role, "viewer") == 0)
		return TB_LEVEL_VIEWER;
	if (strcmp(role, "operator") == 0)
		return TB_LEVEL_OPERATOR;
	if (strcmp(role, "admin") == 0)
		return TB_LEVEL_ADMIN;
	return TB_LEVEL_NONE;
}

const char *tb_level_name(enum tb_level level)
{
	switch (level) {
	case TB_LEVEL_VIEWER: return "viewer";
	case TB_LEVEL_OPERATOR: return "operator";
	case TB_LEVEL_ADMIN: return "admin";
	case TB_LEVEL_NONE: break;
	}
	return "none";
}

int tb_auth_token_create(struct tb_auth *a, const char *name, enum tb_level level, char secret[TB_SECRET_MAX],
			 int64_t *id, struct tb_error *err)
{
	uint8_t placeholder[TB_SHA256_LEN], hash[TB_SHA256_LEN];
	char random_part[48], prefix[40];
	int rc;

	secret[0] = '\0';
	/* The id is part of the token, so insert first with a random placeholder
	 * hash, then store the real one.  Both writes are single statements. */
	if ((rc = tb_random_bytes(placeholder, sizeof(placeholder))) != 0)
		return tb_fail(err, rc, "", "cannot read random bytes from /dev/urandom");
	if ((rc = tb_store_token_insert(a->st, name, tb_level_name(level), placeholder, (int64_t)time(NULL), id,
					err)) != 0)
		return rc;
	snprintf(prefix, sizeof(prefix), "tbk_%" PRId64 "_", *id);
	if ((rc = tb_random_secret("", random_part, sizeof(random_part))) != 0)
		return tb_fail(err, rc, "", "cannot read random bytes from /dev/urandom");
	snprintf(secret, TB_SECRET_MAX, "%s%s", prefix, random_part);
	tb_wipe(random_part, sizeof(random_part));
	tb_sha256(secret, strlen(secret), hash);
	if ((rc = tb_store_token_set_hash(a->st, *id, hash, err)) != 0)
		tb_wipe(secret, TB_SECRET_MAX); /* not a token: the store kept the placeholder */
	return rc;
}

static void take_token(void *cls, const struct tb_token_row *r)
{
	struct token_lookup *t = cls;

	t->found = 1;
	t->id = r->id;
	t->revoked = r->revoked;
	t->last_used_at = r->last_used_at;
	snprintf(t->name, sizeof(t->name), "%s", r->name);
	snprintf(t->role, sizeof(t->role), "%s", r->role);
	memcpy(t->hash, r->hash, TB_SHA256_LEN);
}

/* The token with this id, from the cache or the store; 0 when found.  The
 * store is read unlocked, so a revocation can land between the read and the
 * cache update: tb_auth_token_revoke counts revocations under the lock after
 * its store write, and a read that saw the count change is stale.  It is read
 * again (a few times), and only a read no revocation overlapped is cached, so
 * the cache never holds a "not revoked" copy older than a revocation. */
static int lookup(struct tb_auth *a, int64_t id, struct token_lookup *t)
{
	uint64_t seen;
	size_t slot;
	int tries = 0;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ncache; i++) {
		if (a->cache[i].id == id) {
			*t = a->cache[i];
			pthread_mutex_unlock(&a->lock);
			return 0;
		}
	}
	for (;;) {
		seen = a->revocations;
		pthread_mutex_unlock(&a->lock);
		memset(t, 0, sizeof(*t));
		if (tb_store_token_get(a->st, id, take_token, t, NULL) != 0 || !t->found)
			return -1;
		TB_AUTH_AFTER_STORE_READ(a, id);
		pthread_mutex_lock(&a->lock);
		if (a->revocations == seen)
			break;
		if (++tries == 3) {
			/* revocations keep landing: answer from the last read (it
			 * started after the ones before it) but cache nothing */
			pthread_mutex_unlock(&a->lock);
			return 0;
		}
	}
	/* another thread may have cached it meanwhile: one entry per id */
	for (slot = 0; slot < a->ncache && a->cache[slot].id != id; slot++)
		;
	if (slot == a->ncache && a->ncache == TOKEN_CACHE) {
		slot = a->next_evict;
		a->next_evict = (a->next_evict + 1) % TOKEN_CACHE;
	} else if (slot == a->ncache) {
		a->ncache++;
	}
	a->cache[slot] = *t;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* Note a use: the store is written at most once a minute per token. */
static void touch(struct tb_auth *a, struct token_lookup *t)
{
	int64_t now = (int64_t)time(NULL);

	if (now - t->last_used_at < 60)
		return;
	tb_store_token_touch(a->st, t->id, now);
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ncache; i++)
		if (a->cache[i].id == t->id)
			a->cache[i].last_used_at = now;
	pthread_mutex_unlock(&a->lock);
}

int tb_auth_token_revoke(struct tb_auth *a, int64_t id, struct tb_error *err)
{
	int rc = tb_store_token_revoke(a->st, id, err);

	/* after the store write: a lookup reading before it sees the count move */
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ncache; i++)
		if (a->cache[i].id == id)
			a->cache[i].revoked = 1;
	a->revocations++;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* Check a token's text against its stored hash by its id. */
static int check_token(struct tb_auth *a, const char *token, int64_t *id_out, struct tb_principal *who,
		       struct tb_error *err)
{
	struct token_lookup t = {0};
	uint8_t hash[TB_SHA256_LEN];
	const char *p;
	char *end;
	long long id;

	if (token == NULL || strncmp(token, "tbk_", 4) != 0 || strlen(token) > TB_SECRET_MAX)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "not a testbedd token (they start with tbk_)");
	p = token + 4;
	errno = 0;
	id = strtoll(p, &end, 10);
	if (end == p || *end != '_' || errno != 0 || id <= 0)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "malformed token");
	if (lookup(a, (int64_t)id, &t) != 0)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "unknown token");
	tb_sha256(token, strlen(token), hash);
	if (!tb_ct_equal(hash, t.hash, TB_SHA256_LEN))
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "unknown token");
	if (t.revoked)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "this token was revoked: ask an admin for a new one");
	who->token_id = (int64_t)id;
	snprintf(who->name, sizeof(who->name), "%s", t.name);
	who->level = tb_level_parse(t.role);
	who->via_cookie = 0;
	who->session_id = 0;
	who->expires_at = 0;
	*id_out = (int64_t)id;
	touch(a, &t);
	return 0;
}

int tb_auth_bearer(struct tb_auth *a, const char *token, struct tb_principal *who, struct tb_error *err)
{
	int64_t id;

	return check_token(a, token, &id, who, err);
}

int tb_auth_bootstrap(struct tb_auth *a, const char *state_dir, struct tb_error *err)
{
	char secret[TB_SECRET_MAX], path[1024];
	int64_t count = 0, id;
	size_t len;
	int rc, fd;

	if ((rc = tb_store_token_count(a->st, &count, err)) != 0 || count > 0)
		return rc;
	snprintf(path, sizeof(path), "%s/admin.token", state_dir);
	/* O_EXCL: never follow or overwrite a file someone else put there. */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0)
		return tb_fail(err, TB_ERR_IO, "", "cannot create %s: %s", path, strerror(errno));
	if ((rc = tb_auth_token_create(a, "admin", TB_LEVEL_ADMIN, secret, &id, err)) != 0) {
		close(fd);
		unlink(path);
		return rc;
	}
	len = strlen(secret);
	secret[len] = '\n';
	if (write(fd, secret, len + 1) != (ssize_t)(len + 1) || fsync(fd) != 0)
		rc = tb_fail(err, TB_ERR_IO, "", "cannot write %s: %s", path, strerror(errno));
	/* a plain memset before the return is a dead store the compiler drops */
	tb_wipe(secret, sizeof(secret));
	close(fd);
	if (rc == 0)
		tb_info("auth", "first start: wrote an admin token to %s (mode 0600)", path);
	return rc;
}

int tb_auth_session_create(struct tb_auth *a, const char *token, int remember, char cookie[TB_SECRET_MAX],
			   char csrf[TB_SECRET_MAX], int64_t *expires_at, struct tb_principal *who,
			   struct tb_error *err)
{
	struct tb_session_row row;
	uint8_t hash[TB_SHA256_LEN];
	int64_t id;
	int rc;

	cookie[0] = csrf[0] = '\0';
	if ((rc = check_token(a, token, &id, who, err)) != 0)
		return rc;
	if (tb_random_secret("", cookie, TB_SECRET_MAX) != 0 || tb_random_secret("", csrf, TB_SECRET_MAX) != 0) {
		rc = tb_fail(err, TB_ERR_IO, "", "cannot read random bytes from /dev/urandom");
		goto out;
	}
	row.token_id = id;
	tb_sha256(csrf, strlen(csrf), row.csrf_hash);
	row.created_at = (int64_t)time(NULL);
	row.remember = remember != 0;
	row.expires_at = row.created_at + (remember ? (int64_t)TB_SESSION_REMEMBER_TTL_S : a->session_ttl_s);
	tb_sha256(cookie, strlen(cookie), hash);
	tb_store_session_purge(a->st, (int64_t)time(NULL));
	if ((rc = tb_store_session_insert(a->st, hash, &row, err)) != 0)
		goto out;
	*expires_at = row.expires_at;
	who->via_cookie = 1;
	who->session_id = tb_auth_session_id(cookie);
	who->expires_at = row.expires_at;
out:
	if (rc != 0) {
		/* no session: the secrets are nobody's */
		tb_wipe(cookie, TB_SECRET_MAX);
		tb_wipe(csrf, TB_SECRET_MAX);
	}
	return rc;
}

/* Note a use of the session of hash at now (see tb_auth_cookie): at most
 * one store write a minute per session, read from the row just read (the
 * store's WHERE settles racing requests).  Updates row->expires_at and
 * who->renewed when a remembered session's expiry moved. */
static void touch_session(struct tb_auth *a, const uint8_t hash[TB_SHA256_LEN], struct tb_session_row *row,
			  const char *remote, int64_t now, struct tb_principal *who)
{
	int64_t expires = row->remember ? now + (int64_t)TB_SESSION_REMEMBER_TTL_S : 0;
	int written = 0;

	if (now - row->last_used_at < 60)
		return;
	if (tb_store_session_touch(a->st, hash, now, remote, expires, &written) == 0 && written && expires > 0) {
		row->expires_at = expires;
		who->renewed = 1;
	}
}

/* tb_auth_cookie at now (unix s): the clock is the caller's, so that
 * tests/unit/test_auth.c can use a session for days in no time. */
static int check_cookie(struct tb_auth *a, const char *cookie, const char *csrf, int mutating, const char *remote,
			int64_t now, struct tb_principal *who, struct tb_error *err)
{
	struct tb_session_row row;
	struct token_lookup t = {0};
	uint8_t hash[TB_SHA256_LEN];

	who->renewed = 0;
	tb_sha256(cookie, strlen(cookie), hash);
	if (tb_store_session_get(a->st, hash, &row, NULL) != 0)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "your session ended: log in again");
	/* expires_at is the first second it is over (its streams end then too) */
	if (row.expires_at <= now)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "your session expired: log in again");
	if (lookup(a, row.token_id, &t) != 0 || t.revoked)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "", "the token of this session was revoked: log in again");
	if (mutating) {
		uint8_t ch[TB_SHA256_LEN];

		if (csrf == NULL || *csrf == '\0')
			return tb_fail(err, TB_ERR_CSRF, "X-CSRF-Token",
				       "a change made with a session cookie needs the X-CSRF-Token header "
				       "from the login reply");
		tb_sha256(csrf, strlen(csrf), ch);
		if (!tb_ct_equal(ch, row.csrf_hash, TB_SHA256_LEN))
			return tb_fail(err, TB_ERR_CSRF, "X-CSRF-Token",
				       "the X-CSRF-Token header does not match this session");
	}
	/* a use that checked out only: a refused CSRF does not slide the expiry */
	touch_session(a, hash, &row, remote, now, who);
	who->token_id = row.token_id;
	snprintf(who->name, sizeof(who->name), "%s", t.name);
	who->level = tb_level_parse(t.role);
	who->via_cookie = 1;
	who->session_id = tb_auth_session_id(cookie);
	who->expires_at = row.expires_at;
	return 0;
}

int tb_auth_cookie(struct tb_auth *a, const char *cookie, const char *csrf, int mutating, const char *remote,
		   struct tb_principal *who, struct tb_error *err)
{
	return check_cookie(a, cookie, csrf, mutating, remote, (int64_t)time(NULL), who, err);
}

void tb_auth_session_delete(struct tb_auth *a, const char *cookie)
{
	uint8_t hash[TB_SHA256_LEN];

	tb_sha256(cookie, strlen(cookie), hash);
	tb_store_session_delete(a->st, hash);
}

/* The session id of a cookie hash (see tb_auth_session_id). */
static int64_t hash_session_id(const uint8_t hash[TB_SHA256_LEN])
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8; i++)
		v = v << 8 | hash[i];
	v &= (uint64_t)INT64_MAX;
	return v != 0 ? (int64_t)v : 1;
}

int64_t tb_auth_session_id(const char *cookie)
{
	uint8_t hash[TB_SHA256_LEN];

	tb_sha256(cookie, strlen(cookie), hash);
	return hash_session_id(hash);
}

struct hash_list {
	uint8_t (*h)[TB_SHA256_LEN];
	size_t n, cap;
	int oom;
};

static void collect_hash(void *cls, const uint8_t hash[TB_SHA256_LEN])
{
	struct hash_list *l = cls;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		uint8_t(*h)[TB_SHA256_LEN] = realloc(l->h, cap * sizeof(*h));

		if (h == NULL) {
			l->oom = 1;
			return;
		}
		l->h = h, l->cap = cap;
	}
	memcpy(l->h[l->n++], hash, TB_SHA256_LEN);
}

int tb_auth_session_delete_all(struct tb_auth *a, int64_t token_id, int64_t **ids, size_t *n, struct tb_error *err)
{
	struct hash_list l = {0};
	int rc;

	*ids = NULL;
	*n = 0;
	if ((rc = tb_store_session_hashes(a->st, token_id, collect_hash, &l, err)) == 0 && l.oom)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory listing sessions");
	if (rc == 0 && l.n > 0 && (*ids = malloc(l.n * sizeof(**ids))) == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory listing sessions");
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		tb_store_session_delete(a->st, l.h[i]);
		(*ids)[(*n)++] = hash_session_id(l.h[i]);
	}
	free(l.h);
	return rc;
}

struct view_list {
	struct tb_session_view *v;
	size_t n, cap;
	int oom;
};

static void collect_view(void *cls, const struct tb_session_info *s)
{
	struct view_list *l = cls;
	struct tb_session_view *v;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;

		if ((v = realloc(l->v, cap * sizeof(*v))) == NULL) {
			l->oom = 1;
			return;
		}
		l->v = v, l->cap = cap;
	}
	v = &l->v[l->n++];
	v->id = s->id;
	v->token_id = s->token_id;
	snprintf(v->token_name, sizeof(v->token_name), "%s", s->token_name != NULL ? s->token_name : "");
	v->created_at = s->created_at;
	v->expires_at = s->expires_at;
	v->last_used_at = s->last_used_at;
	v->remember = s->remember;
	v->session_id = hash_session_id(s->hash);
	snprintf(v->device, sizeof(v->device), "%s", s->device != NULL ? s->device : "");
	snprintf(v->last_address, sizeof(v->last_address), "%s", s->last_address != NULL ? s->last_address : "");
}

int tb_auth_session_list(struct tb_auth *a, int64_t token_id, struct tb_session_view **out, size_t *n,
			 struct tb_error *err)
{
	struct view_list l = {0};
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = tb_store_session_list(a->st, token_id, (int64_t)time(NULL), collect_view, &l, err)) == 0 && l.oom)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory listing sessions");
	if (rc != 0) {
		free(l.v);
		return rc;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int tb_auth_session_end(struct tb_auth *a, int64_t token_id, int64_t id, int64_t *session_id, char owner[64],
			struct tb_error *err)
{
	uint8_t hash[TB_SHA256_LEN];
	int64_t owner_id;
	int rc;

	owner[0] = '\0';
	if ((rc = tb_store_session_find(a->st, id, token_id, hash, &owner_id, owner, err)) != 0)
		return rc;
	tb_store_session_delete(a->st, hash);
	*session_id = hash_session_id(hash);
	return 0;
}

void tb_auth_session_set_client(struct tb_auth *a, const char *cookie, const char *device, const char *remote)
{
	uint8_t hash[TB_SHA256_LEN];

	tb_sha256(cookie, strlen(cookie), hash);
	tb_store_session_set_client(a->st, hash, device != NULL && *device != '\0' ? device : NULL, remote);
}
