/*
 * ssh_pool.c - the session pool: idle authenticated sessions per target,
 * checkout/checkin, idle expiry, counters.  See ssh.h and ssh_internal.h.
 */
#include "ssh_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "timeutil.h"

#define DEFAULT_IDLE_TIMEOUT_S 60

struct tb_ssh_pool {
	pthread_mutex_t lock; /* guards idle and st, never held over I/O */
	unsigned int max_idle;
	long long idle_ms;
	struct conn *idle; /* most recently used first */
	struct tb_ssh_pool_stats st;
};

static void conn_close_list(struct conn *c)
{
	while (c != NULL) {
		struct conn *next = c->next;

		tb_ssh_conn_close(c);
		c = next;
	}
}

struct tb_ssh_pool *tb_ssh_pool_new(unsigned int max_idle_per_target, long idle_timeout_s)
{
	struct tb_ssh_pool *p;

	if (tb_ssh_lib_init(NULL) != 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return NULL;
	}
	p->max_idle = max_idle_per_target;
	p->idle_ms = (idle_timeout_s > 0 ? idle_timeout_s : DEFAULT_IDLE_TIMEOUT_S) * 1000LL;
	return p;
}

void tb_ssh_pool_free(struct tb_ssh_pool *pool)
{
	if (pool == NULL)
		return;
	conn_close_list(pool->idle);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

void tb_ssh_pool_stats(struct tb_ssh_pool *pool, struct tb_ssh_pool_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pool->lock);
	*out = pool->st;
	pthread_mutex_unlock(&pool->lock);
}

/* Under the lock: move expired idle sessions to *dead. */
static void pool_prune(struct tb_ssh_pool *pool, long long now, struct conn **dead)
{
	struct conn **pp = &pool->idle;

	while (*pp != NULL) {
		struct conn *c = *pp;

		if (now - c->idle_since > pool->idle_ms) {
			*pp = c->next;
			c->next = *dead;
			*dead = c;
			pool->st.idle--;
			pool->st.discards++;
		} else {
			pp = &c->next;
		}
	}
}

void tb_ssh_pool_count(struct tb_ssh_pool *pool, enum pool_counter which)
{
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pool->lock);
	switch (which) {
	case COUNT_CONNECTS: pool->st.connects++; break;
	case COUNT_REUSES: pool->st.reuses++; break;
	case COUNT_DISCARDS: pool->st.discards++; break;
	case COUNT_RETRIES: pool->st.retries++; break;
	case COUNT_STANDBYS: pool->st.standbys++; break;
	}
	pthread_mutex_unlock(&pool->lock);
}

/* Sessions are interchangeable when all of these match. */
static char *pool_key(const struct tb_ssh_target *t)
{
	const char *addr = t->address != NULL ? t->address : "";
	const char *key = t->key_file != NULL ? t->key_file : "";
	const char *fp = t->pinned_fp != NULL ? t->pinned_fp : "";
	size_t len = strlen(addr) + strlen(key) + strlen(fp) + strlen(uname_of(t)) + 32;
	char *k = malloc(len);

	if (k != NULL)
		snprintf(k, len, "%s\n%u\n%s\n%s\n%s", uname_of(t), port_of(t), addr, key, fp);
	return k;
}

/* Check a session out of the pool (reuse) or make a new one. */
int tb_ssh_conn_get(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, bool reuse, struct conn **out,
		    bool *reused, struct tb_ssh_result *res, struct tb_error *err)
{
	struct conn *c = NULL, *dead = NULL;
	char *key = pool_key(t);
	int rc;

	*reused = false;
	if (key == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	if (pool != NULL && reuse) {
		pthread_mutex_lock(&pool->lock);
		pool_prune(pool, tb_monotonic_ms(), &dead);
		/* one with a standby shell first (its command starts at once), else the newest */
		for (int pass = 0; pass < 2 && c == NULL; pass++)
			for (struct conn **pp = &pool->idle; *pp != NULL; pp = &(*pp)->next) {
				if (strcmp((*pp)->key, key) == 0 && (pass == 1 || (*pp)->standby != NULL)) {
					c = *pp;
					*pp = c->next;
					c->next = NULL;
					pool->st.idle--;
					break;
				}
			}
		pthread_mutex_unlock(&pool->lock);
		conn_close_list(dead);
		if (c != NULL && !ssh_is_connected(c->s)) {
			tb_ssh_pool_count(pool, COUNT_DISCARDS);
			tb_ssh_conn_close(c);
			c = NULL;
		}
		if (c != NULL) {
			free(key);
			snprintf(res->host_fp, sizeof(res->host_fp), "%s", c->host_fp);
			*reused = true;
			*out = c;
			return 0;
		}
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		free(key);
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	}
	c->key = key;
	rc = tb_ssh_conn_open(c, t, res, err);
	if (rc != 0) {
		tb_ssh_conn_close(c);
		return rc;
	}
	tb_ssh_pool_count(pool, COUNT_CONNECTS);
	tb_debug("ssh", "new session to %s (%s) at %s port %u", mname(t), oname(t), t->address, port_of(t));
	*out = c;
	return 0;
}

/* Give a session back: kept for reuse when healthy and wanted, else closed. */
void tb_ssh_conn_put(struct tb_ssh_pool *pool, struct conn *c, bool healthy)
{
	struct conn *dead = NULL;
	unsigned int same = 0;

	if (pool == NULL) {
		tb_ssh_conn_close(c);
		return;
	}
	if (!healthy || !ssh_is_connected(c->s)) {
		tb_ssh_pool_count(pool, COUNT_DISCARDS);
		tb_ssh_conn_close(c);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	pool_prune(pool, tb_monotonic_ms(), &dead);
	for (struct conn *i = pool->idle; i != NULL; i = i->next)
		if (strcmp(i->key, c->key) == 0)
			same++;
	if (same >= pool->max_idle && same > 0 && c->standby != NULL) {
		/* a session with a standby shell is kept before a plain one: the oldest plain one goes */
		struct conn **victim = NULL;

		for (struct conn **pp = &pool->idle; *pp != NULL; pp = &(*pp)->next)
			if (strcmp((*pp)->key, c->key) == 0 && (*pp)->standby == NULL)
				victim = pp;
		if (victim != NULL) {
			struct conn *v = *victim;

			*victim = v->next;
			v->next = dead;
			dead = v;
			pool->st.idle--;
			pool->st.discards++;
			same--;
		}
	}
	if (same < pool->max_idle) {
		c->idle_since = tb_monotonic_ms();
		c->next = pool->idle;
		pool->idle = c;
		pool->st.idle++;
		c = NULL;
	} else {
		pool->st.discards++;
	}
	pthread_mutex_unlock(&pool->lock);
	conn_close_list(dead);
	tb_ssh_conn_close(c);
}
