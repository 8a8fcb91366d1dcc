/* console_list.c - the consoles in force: making a console and its reader
 * thread, stopping it, and following the inventory (the start and every
 * reload: new ones made, gone and changed ones stopped, unchanged ones
 * kept), the close and the free.  The list is behind cs->lock (console.c
 * reads it around every use); see console.h. */
#include "console_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "timeutil.h"

/* 1 when c reads m's console as the inventory defines it now (a reload
 * keeps such a reader running; any other is restarted). */
static int same_definition(const struct console *c, const struct tb_machine *m)
{
	struct console k; /* what console_setup_kind takes of m (protocol, BMC) */

	memset(&k, 0, sizeof(k));
	console_setup_kind(&k, m);
	return c->type == m->console.type && c->protocol == k.protocol && strcmp(c->bmc_address, k.bmc_address) == 0 &&
	       c->bmc_port == k.bmc_port && strcmp(c->bmc_user, k.bmc_user) == 0 &&
	       strcmp(c->bmc_password_file, k.bmc_password_file) == 0 &&
	       strcmp(c->bmc_password_env, k.bmc_password_env) == 0 && c->bmc_cipher_suite == k.bmc_cipher_suite &&
	       strcmp(c->address, m->console.address != NULL ? m->console.address : "") == 0 &&
	       c->port == m->console.port &&
	       strcmp(c->device, m->console.device != NULL ? m->console.device : "") == 0 &&
	       c->speed == m->console.speed;
}

/* A reader that replaces another (a reload) connects once the old one is
 * gone: a console server that takes one connection (ser2net's default) would
 * refuse the new one while the old one holds it.  Waits at most 5 s (the old
 * one was poked: it ends in milliseconds), less when c is stopped; then lets
 * go of prev, which the reaping may free from then on. */
static void wait_prev(struct console *c)
{
	struct console *prev = c->prev;

	for (int i = 0; prev != NULL; i++) {
		int done, closing;

		pthread_mutex_lock(&c->mu);
		closing = c->cs->closing;
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&prev->mu);
		done = prev->exited || closing || i >= 500;
		if (done) {
			prev->successor_waits = 0;
			console_shed_locked(prev);
		}
		pthread_mutex_unlock(&prev->mu);
		if (done)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	c->prev = NULL;
}

/* The thread of c: the reader (console_io.c), then exited set, so that a
 * reload's reaping joins it without waiting. */
static void *run(void *arg)
{
	struct console *c = arg;

	wait_prev(c);
	console_thread(c);
	pthread_mutex_lock(&c->mu);
	c->exited = 1;
	console_shed_locked(c);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Free c (its thread joined, no feed left; NULL allowed). */
static void destroy(struct console *c)
{
	if (c == NULL)
		return;
	tb_conlog_close(&c->log);
	tb_ring_free(&c->ring);
	for (int k = 0; k < 2; k++)
		if (c->pipe[k] >= 0)
			close(c->pipe[k]);
	if (c->cs != NULL)
		pthread_mutex_destroy(&c->mu);
	free(c->cs);
	free(c);
}

/* Under c->mu of both: c takes over old's scrollback (the offsets go on) and
 * lease. */
static void inherit(struct console *c, const struct console *old)
{
	memcpy(c->ring.buf, old->ring.buf, old->ring.cap);
	c->ring.end = old->ring.end;
	memcpy(c->holder, old->holder, sizeof(c->holder));
	c->holder_token = old->holder_token;
	c->holder_since = old->holder_since;
	c->holder_use_ms = old->holder_use_ms;
}

/* A new console for m (copied), with old's scrollback and lease when old is
 * not NULL, its thread started: *out, or an error and nothing made. */
static int make(struct tb_consoles *cs, const struct tb_machine *m, struct console *old, struct console **out,
		struct tb_error *err)
{
	struct console *c = calloc(1, sizeof(*c));
	char dir[512];
	int rc;

	*out = NULL;
	if (c == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	c->pipe[0] = c->pipe[1] = -1;
	if ((c->cs = calloc(1, sizeof(*c->cs))) == NULL) {
		free(c);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	snprintf(c->cs->state_dir, sizeof(c->cs->state_dir), "%s", cs->state_dir);
	c->cs->idle = cs->idle;
	c->cs->lease_idle_s = cs->lease_idle_s;
	pthread_mutex_init(&c->mu, NULL);
	snprintf(c->name, sizeof(c->name), "%s", m->name);
	c->type = m->console.type;
	snprintf(c->address, sizeof(c->address), "%s", m->console.address != NULL ? m->console.address : "");
	c->port = m->console.port;
	snprintf(c->device, sizeof(c->device), "%s", m->console.device != NULL ? m->console.device : "");
	c->speed = m->console.speed;
	console_setup_kind(c, m);
	c->since = tb_now();
	snprintf(dir, sizeof(dir), "%s/console/%s", cs->state_dir, m->name);
	if ((rc = tb_conlog_init(&c->log, dir, err)) != 0)
		goto fail;
	if (tb_ring_init(&c->ring, TB_CONSOLE_RING) != 0) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto fail;
	}
	if (old != NULL) { /* before the thread: nothing read yet */
		pthread_mutex_lock(&old->mu);
		inherit(c, old);
		pthread_mutex_unlock(&old->mu);
	}
	if (pipe(c->pipe) != 0) {
		rc = tb_fail(err, TB_ERR_IO, "", "pipe: %s", strerror(errno));
		goto fail;
	}
	for (int i = 0; i < 2; i++) {
		fcntl(c->pipe[i], F_SETFD, FD_CLOEXEC);
		fcntl(c->pipe[i], F_SETFL, O_NONBLOCK);
	}
	if (old != NULL) { /* the thread waits for old's end (wait_prev) */
		pthread_mutex_lock(&old->mu);
		old->successor_waits = 1;
		pthread_mutex_unlock(&old->mu);
		c->prev = old;
	}
	if (pthread_create(&c->thread, NULL, run, c) != 0) {
		if (old != NULL) {
			pthread_mutex_lock(&old->mu);
			old->successor_waits = 0;
			pthread_mutex_unlock(&old->mu);
		}
		rc = tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the console thread of %s", m->name);
		goto fail;
	}
	c->started = 1;
	*out = c;
	return 0;
fail:
	destroy(c);
	return rc;
}

void console_shed_locked(struct console *c)
{
	if (c->cs->closing && c->exited && c->nfeeds == 0 && !c->successor_waits && c->ring.buf != NULL) {
		tb_ring_free(&c->ring);
		tb_info("console", "%s: its scrollback is freed (stopped, no viewer left)", c->name);
	}
}

/* Stop c's thread (it ends soon: poked) and end its viewers' streams, their
 * last event saying why (NULL: none, the service closes); its lease goes
 * with it.  Never blocks but on c->mu. */
static void stop(struct console *c, const char *why)
{
	pthread_mutex_lock(&c->mu);
	c->cs->closing = 1;
	if (why != NULL)
		snprintf(c->end_reason, sizeof(c->end_reason), "%s", why);
	c->holder[0] = '\0';
	c->gen++;
	console_wake_all(c);
	console_shed_locked(c);
	pthread_mutex_unlock(&c->mu);
	console_poke(c);
}

/* Under cs->lock written: free the retired consoles whose thread returned
 * and whose viewers are gone (their thread joined: at once, it returned). */
static void reap(struct tb_consoles *cs)
{
	for (struct console **p = &cs->retired; *p != NULL;) {
		struct console *c = *p;
		int done;

		pthread_mutex_lock(&c->mu);
		done = c->nfeeds == 0 && c->exited && !c->successor_waits;
		pthread_mutex_unlock(&c->mu);
		if (!done) {
			p = &c->retired_next;
			continue;
		}
		*p = c->retired_next;
		if (c->started)
			pthread_join(c->thread, NULL);
		destroy(c);
	}
}

/* TB_CONSOLE_LEASE_IDLE_S, or N seconds when the environment has
 * TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S=N (1..TB_CONSOLE_LEASE_IDLE_S; for tests
 * only, logged as a warning; anything else is refused). */
static int lease_idle_s(int *out, struct tb_error *err)
{
	const char *v = getenv("TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S");
	char *end;
	long n;

	*out = TB_CONSOLE_LEASE_IDLE_S;
	if (v == NULL)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || *end != '\0' || errno != 0 || n < 1 || n > TB_CONSOLE_LEASE_IDLE_S)
		return tb_fail(err, TB_ERR_INVALID, "TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S",
			       "TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S must be 1..%d, got \"%.32s\"",
			       TB_CONSOLE_LEASE_IDLE_S, v);
	tb_warn("console", "a console lease lapses after %ld s (TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S): for tests only",
		n);
	*out = (int)n;
	return 0;
}

int tb_consoles_start(const char *state_dir, struct tb_inv_current *invs, struct tb_idle *idle,
		      struct tb_consoles **out, struct tb_error *err)
{
	struct tb_consoles *cs = calloc(1, sizeof(*cs));
	int rc = 0;

	*out = NULL;
	if (cs == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = lease_idle_s(&cs->lease_idle_s, err)) != 0) {
		free(cs);
		return rc;
	}
	snprintf(cs->state_dir, sizeof(cs->state_dir), "%s", state_dir);
	cs->idle = idle;
	pthread_rwlock_init(&cs->lock, NULL);
	if ((rc = tb_consoles_reload(cs, invs, err)) != 0) {
		tb_consoles_close(cs);
		tb_consoles_free(cs);
		return rc;
	}
	*out = cs;
	return 0;
}

/* The console of m in the new list: old's when it reads m's console as
 * defined now (it runs on, untouched), else a new one; a changed one
 * inherits old's scrollback (the offsets go on: a viewer resumes with
 * Last-Event-ID) and lease, and old is stopped. */
static int renew(struct tb_consoles *cs, struct console *old, const struct tb_machine *m, struct console **out,
		 struct tb_error *err)
{
	int rc;

	if (old != NULL && same_definition(old, m)) {
		*out = old;
		return 0;
	}
	rc = make(cs, m, old, out, err);
	if (old != NULL) {
		tb_info("console", "%s: its console changed in the inventory: the reader restarts", m->name);
		stop(old, "its console changed in the inventory (reloaded): its reader restarted, open the stream "
			  "again");
	}
	return rc;
}

int tb_consoles_reload(struct tb_consoles *cs, struct tb_inv_current *invs, struct tb_error *err)
{
	struct tb_inventory *inv = tb_inv_current_get(invs);
	struct console **next = NULL, **old;
	size_t n = 0, nold;
	int rc = 0;

	if (inv->nmachines > 0 && (next = calloc(inv->nmachines, sizeof(*next))) == NULL) {
		tb_inv_current_put(invs, inv);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	pthread_rwlock_wrlock(&cs->lock);
	if (cs->closing) { /* a reload racing the stop: the close stopped them all */
		pthread_rwlock_unlock(&cs->lock);
		tb_inv_current_put(invs, inv);
		free(next);
		return 0;
	}
	reap(cs);
	old = cs->c;
	nold = cs->n;
	for (size_t i = 0; i < inv->nmachines; i++) {
		const struct tb_machine *m = &inv->machines[i];
		struct console *o = NULL;
		struct tb_error one = {0};
		int e;

		if (!console_reads(m))
			continue;
		for (size_t k = 0; k < nold && o == NULL; k++) {
			if (old[k] != NULL && strcmp(old[k]->name, m->name) == 0) {
				o = old[k];
				old[k] = NULL; /* kept, or stopped by renew */
			}
		}
		if (o != NULL && !same_definition(o, m)) {
			o->retired_next = cs->retired;
			cs->retired = o;
		}
		if ((e = renew(cs, o, m, &next[n], &one)) == 0) {
			n++;
		} else { /* this console is not read; the others are */
			tb_error("console", "%s: %s", m->name, one.message);
			if (rc == 0) {
				rc = e;
				*err = one;
			}
		}
	}
	for (size_t k = 0; k < nold; k++) {
		if (old[k] == NULL)
			continue;
		tb_info("console", "%s: no console in the inventory any more: its reader stops", old[k]->name);
		stop(old[k], "its console is no longer in the inventory (reloaded)");
		old[k]->retired_next = cs->retired;
		cs->retired = old[k];
	}
	free(old);
	cs->c = next;
	cs->n = n;
	pthread_rwlock_unlock(&cs->lock);
	tb_inv_current_put(invs, inv);
	return rc;
}

void tb_consoles_close(struct tb_consoles *cs)
{
	if (cs == NULL || cs->closing)
		return;
	pthread_rwlock_wrlock(&cs->lock);
	cs->closing = 1;
	for (size_t i = 0; i < cs->n; i++)
		stop(cs->c[i], NULL);
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->c[i]->started) {
			pthread_join(cs->c[i]->thread, NULL);
			cs->c[i]->started = 0;
		}
	}
	for (struct console *c = cs->retired; c != NULL; c = c->retired_next) {
		if (c->started) {
			pthread_join(c->thread, NULL);
			c->started = 0;
		}
	}
	pthread_rwlock_unlock(&cs->lock);
}

void tb_consoles_free(struct tb_consoles *cs)
{
	if (cs == NULL)
		return;
	tb_consoles_close(cs);
	for (size_t i = 0; i < cs->n; i++)
		destroy(cs->c[i]);
	for (struct console *c = cs->retired, *next; c != NULL; c = next) {
		next = c->retired_next;
		destroy(c);
	}
	free(cs->c);
	pthread_rwlock_destroy(&cs->lock);
	free(cs);
}
