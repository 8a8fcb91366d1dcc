/* ssh.c - commands over SSH with a session pool: see ssh.h. */
#include "ssh.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "log.h"
#include "shquote.h"

#define DEFAULT_CONNECT_TIMEOUT_S 10
#define DEFAULT_IDLE_TIMEOUT_S 60
/* ssh_channel_poll_timeout() waits for stdout only (libssh 0.10), so stderr
 * is looked at between slices of this length. */
#define POLL_SLICE_MS 100
#define READ_CHUNK 16384
/* Chunks drained per turn before the deadline is looked at again. */
#define DRAIN_TURNS 64
/* Fixed, so that the pinned fingerprint is always of the same key: the
 * ed25519 one when the server has it (libssh 0.10's own default order
 * prefers it too, and would also reorder by known_hosts, which we don't use). */
#define HOSTKEY_ALGOS "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384," \
		      "ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256"

/* ---- helpers ---- */

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_rc;

static void lib_init_once(void)
{
	/* Needed when libssh is linked statically, harmless otherwise. */
	lib_rc = ssh_init();
}

static int lib_init(struct tb_error *err)
{
	pthread_once(&lib_once, lib_init_once);
	if (lib_rc != SSH_OK)
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "libssh failed to initialise");
	return 0;
}

static const char *mname(const struct tb_ssh_target *t)
{
	if (t->machine != NULL && *t->machine != '\0')
		return t->machine;
	return t->address != NULL ? t->address : "?";
}

static const char *oname(const struct tb_ssh_target *t)
{
	return t->os != NULL && *t->os != '\0' ? t->os : "unknown OS";
}

static const char *uname_of(const struct tb_ssh_target *t)
{
	return t->user != NULL && *t->user != '\0' ? t->user : "root";
}

static unsigned int port_of(const struct tb_ssh_target *t)
{
	return t->port != 0 ? t->port : 22;
}

static long timeout_s_of(const struct tb_ssh_target *t)
{
	return t->connect_timeout_s > 0 ? t->connect_timeout_s : DEFAULT_CONNECT_TIMEOUT_S;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int min_ms(long long a, long long b)
{
	long long m = a < b ? a : b;

	return m < 0 ? 0 : (int)m;
}

/* ---- sessions ---- */

/* One authenticated session: owned by one caller, or idle in a pool. */
struct conn {
	ssh_session s;
	char *key;                   /* pool key, see pool_key() */
	long timeout_s;              /* the session's normal SSH_OPTIONS_TIMEOUT */
	long long idle_since;        /* now_ms() when checked in */
	char host_fp[TB_SSH_FP_MAX];
	struct conn *next;
};

static void conn_close(struct conn *c)
{
	if (c == NULL)
		return;
	if (c->s != NULL) {
		ssh_disconnect(c->s);
		ssh_free(c->s);
	}
	free(c->key);
	free(c);
}

static void conn_close_list(struct conn *c)
{
	while (c != NULL) {
		struct conn *next = c->next;

		conn_close(c);
		c = next;
	}
}

static int load_key(const struct tb_ssh_target *t, ssh_key *key, struct tb_error *err)
{
	FILE *f;

	if (t->key_file == NULL || *t->key_file == '\0')
		return tb_fail(err, TB_ERR_CONFIG, "key_file",
			       "%s (%s): no ssh key file is configured; set key_file", mname(t),
			       oname(t));
	/* libssh says only "SSH_EOF" for a missing file: ask the OS why. */
	f = fopen(t->key_file, "r");
	if (f == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "key_file",
			       "%s (%s): cannot read the ssh key file %s (%s); set key_file "
			       "to a private key readable by testbedd",
			       mname(t), oname(t), t->key_file, strerror(errno));
	fclose(f);
	if (ssh_pki_import_privkey_file(t->key_file, NULL, NULL, NULL, key) != SSH_OK)
		return tb_fail(err, TB_ERR_CONFIG, "key_file",
			       "%s (%s): %s is not an unencrypted private key; use a key "
			       "without passphrase (ssh-keygen -t ed25519 -N '')",
			       mname(t), oname(t), t->key_file);
	return 0;
}

static int set_options(ssh_session s, const struct tb_ssh_target *t)
{
	bool no = false;
	int verbosity = SSH_LOG_NOLOG, nodelay = 1;
	unsigned int port = port_of(t);
	long timeout = timeout_s_of(t);

	/* HOST first: it would take a "user@" prefix as the user. */
	if (ssh_options_set(s, SSH_OPTIONS_HOST, t->address) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_USER, uname_of(t)) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_HOSTKEYS, HOSTKEY_ALGOS) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity) < 0)
		return -1;
	return 0;
}

/* Read the presented host key's fingerprint into fp ("SHA256:..."). */
static int server_fp(ssh_session s, const struct tb_ssh_target *t, char fp[TB_SSH_FP_MAX],
		     struct tb_error *err)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *text = NULL;
	int rc = 0;

	if (ssh_get_server_publickey(s, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0 ||
	    (text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen)) == NULL)
		rc = tb_fail(err, TB_ERR_INTERNAL, mname(t),
			     "%s (%s): cannot read the server's host key: %s", mname(t),
			     oname(t), ssh_get_error(s));
	else
		/* "SHA256:" + unpadded base64, exactly as ssh-keygen -lf prints */
		snprintf(fp, TB_SSH_FP_MAX, "%s", text);
	ssh_string_free_char(text);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

/* TCP connect and key exchange; fills c->s and c->host_fp. */
static int conn_handshake(struct conn *c, const struct tb_ssh_target *t,
			  struct tb_error *err)
{
	int rc;

	if ((rc = lib_init(err)) != 0)
		return rc;
	if (t->address == NULL || *t->address == '\0')
		return tb_fail(err, TB_ERR_CONFIG, "address",
			       "%s (%s): no address to connect to; set its address",
			       mname(t), oname(t));
	c->s = ssh_new();
	if (c->s == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for an ssh session");
	c->timeout_s = timeout_s_of(t);
	if (set_options(c->s, t) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, mname(t),
			       "%s (%s): libssh refused an option: %s", mname(t), oname(t),
			       ssh_get_error(c->s));
	if (ssh_connect(c->s) != SSH_OK)
		return tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			       "%s (%s) at %s port %u does not answer ssh (%s); check that it "
			       "is on, booted into %s and running sshd",
			       mname(t), oname(t), t->address, port_of(t),
			       ssh_get_error(c->s), oname(t));
	return server_fp(c->s, t, c->host_fp, err);
}

/* A new authenticated session, host key checked against the pin. */
static int conn_open(struct conn *c, const struct tb_ssh_target *t,
		     struct tb_ssh_result *res, struct tb_error *err)
{
	ssh_key key = NULL;
	int rc;

	if (t->pinned_fp != NULL && strncmp(t->pinned_fp, "SHA256:", 7) != 0)
		return tb_fail(err, TB_ERR_CONFIG, "pinned_fp",
			       "%s (%s): the pinned host key '%s' is not of the form "
			       "SHA256:... that ssh-keygen -lf prints; fix it or trust the "
			       "host again with tbctl host trust %s",
			       mname(t), oname(t), t->pinned_fp, mname(t));
	/* The key first: a config mistake should not cost a handshake. */
	if ((rc = load_key(t, &key, err)) != 0)
		return rc;
	if ((rc = conn_handshake(c, t, err)) != 0)
		goto out;
	snprintf(res->host_fp, sizeof(res->host_fp), "%s", c->host_fp);
	if (t->pinned_fp == NULL) {
		rc = tb_fail(err, TB_ERR_HOSTKEY, mname(t),
			     "%s (%s) presented host key %s, and no host key is pinned for "
			     "it; an admin can accept it with tbctl host trust %s",
			     mname(t), oname(t), c->host_fp, mname(t));
		goto out;
	}
	if (strcmp(t->pinned_fp, c->host_fp) != 0) {
		rc = tb_fail(err, TB_ERR_HOSTKEY, mname(t),
			     "%s (%s) presented host key %s, which is not the pinned %s; an "
			     "admin can accept it with tbctl host trust %s",
			     mname(t), oname(t), c->host_fp, t->pinned_fp, mname(t));
		goto out;
	}
	switch (ssh_userauth_publickey(c->s, NULL, key)) {
	case SSH_AUTH_SUCCESS:
		rc = 0;
		break;
	case SSH_AUTH_DENIED:
	case SSH_AUTH_PARTIAL:
		rc = tb_fail(err, TB_ERR_UNAUTHORIZED, mname(t),
			     "%s (%s) refused the key %s for user %s; add %s.pub to that "
			     "user's authorized_keys on %s, or set key_file to the right key",
			     mname(t), oname(t), t->key_file, uname_of(t), t->key_file,
			     mname(t));
		break;
	default:
		rc = tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s): logging in as %s failed (%s); check the host and "
			     "its sshd log",
			     mname(t), oname(t), uname_of(t), ssh_get_error(c->s));
		break;
	}
out:
	ssh_key_free(key);
	return rc;
}

/* ---- pool ---- */

struct tb_ssh_pool {
	pthread_mutex_t lock;
	unsigned int max_idle;
	long long idle_ms;
	struct conn *idle;           /* most recently used first */
	struct tb_ssh_pool_stats st;
};

struct tb_ssh_pool *tb_ssh_pool_new(unsigned int max_idle_per_target, long idle_timeout_s)
{
	struct tb_ssh_pool *p;

	if (lib_init(NULL) != 0)
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

enum counter { COUNT_CONNECTS, COUNT_REUSES, COUNT_DISCARDS, COUNT_RETRIES };

static void pool_count(struct tb_ssh_pool *pool, enum counter which)
{
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pool->lock);
	switch (which) {
	case COUNT_CONNECTS:
		pool->st.connects++;
		break;
	case COUNT_REUSES:
		pool->st.reuses++;
		break;
	case COUNT_DISCARDS:
		pool->st.discards++;
		break;
	case COUNT_RETRIES:
		pool->st.retries++;
		break;
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
static int conn_get(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, bool reuse,
		    struct conn **out, bool *reused, struct tb_ssh_result *res,
		    struct tb_error *err)
{
	struct conn *c = NULL, *dead = NULL;
	char *key = pool_key(t);
	int rc;

	*reused = false;
	if (key == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	if (pool != NULL && reuse) {
		pthread_mutex_lock(&pool->lock);
		pool_prune(pool, now_ms(), &dead);
		for (struct conn **pp = &pool->idle; *pp != NULL; pp = &(*pp)->next) {
			if (strcmp((*pp)->key, key) == 0) {
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
			pool_count(pool, COUNT_DISCARDS);
			conn_close(c);
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
	rc = conn_open(c, t, res, err);
	if (rc != 0) {
		conn_close(c);
		return rc;
	}
	pool_count(pool, COUNT_CONNECTS);
	tb_debug("ssh", "new session to %s (%s) at %s port %u", mname(t), oname(t), t->address,
		 port_of(t));
	*out = c;
	return 0;
}

/* Give a session back: kept for reuse when healthy and wanted, else closed. */
static void conn_put(struct tb_ssh_pool *pool, struct conn *c, bool healthy)
{
	struct conn *dead = NULL;
	unsigned int same = 0;

	if (pool == NULL) {
		conn_close(c);
		return;
	}
	if (!healthy || !ssh_is_connected(c->s)) {
		pool_count(pool, COUNT_DISCARDS);
		conn_close(c);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	pool_prune(pool, now_ms(), &dead);
	for (struct conn *i = pool->idle; i != NULL; i = i->next)
		if (strcmp(i->key, c->key) == 0)
			same++;
	if (same < pool->max_idle) {
		c->idle_since = now_ms();
		c->next = pool->idle;
		pool->idle = c;
		pool->st.idle++;
		c = NULL;
	} else {
		pool->st.discards++;
	}
	pthread_mutex_unlock(&pool->lock);
	conn_close_list(dead);
	conn_close(c);
}

/* ---- running one command ---- */

/*
 * Run before every command, in the /bin/sh that then execs it (see
 * TB_SSH_STOP_GRACE_MS in ssh.h).  A background watchdog holds the channel's
 * stdin (the command gets /dev/null) and blocks reading it.  We never send
 * anything on stdin, so the read returns only when the channel's stdin is
 * closed: by our EOF at a timeout, by sshd when the connection breaks, or by
 * sshd after the command ended and was reaped.  In the last case $$ (the
 * command, exec keeps the pid) is gone and the watchdog just exits;
 * otherwise it signals the whole process group of the ssh session (sshd
 * makes one per session with setsid), TERM and one second later KILL; it
 * ignores TERM itself and its sleep inherits that.  Its stdout and stderr go
 * to /dev/null so that sshd does not wait for it.  fd 3 carries stdin past
 * the /dev/null that sh gives asynchronous lists without job control.
 * OpenSSH's own "signal" request would do the same, but sshd refuses it for
 * root logins ("session signalling requires privilege separation").
 */
#define WATCHDOG "exec 3<&0; (trap '' TERM; read _; kill -0 $$ 2>/dev/null || exit 0; " \
		 "kill -s TERM 0; sleep 1; kill -s KILL 0) <&3 >/dev/null 2>&1 & " \
		 "exec 3<&- </dev/null"

struct run {
	tb_ssh_output_fn out;
	void *cls;
	bool canceled;
	bool got_status;
	int exit_status;
	char exit_signal[16];
};

static void on_exit_status(ssh_session s, ssh_channel ch, int status, void *ud)
{
	struct run *r = ud;

	(void)s;
	(void)ch;
	r->got_status = true;
	r->exit_status = status;
}

static void on_exit_signal(ssh_session s, ssh_channel ch, const char *sig, int core,
			   const char *errmsg, const char *lang, void *ud)
{
	struct run *r = ud;

	(void)s;
	(void)ch;
	(void)core;
	(void)errmsg;
	(void)lang;
	snprintf(r->exit_signal, sizeof(r->exit_signal), "%s", sig != NULL ? sig : "?");
}

static bool run_ended(ssh_channel ch, const struct run *r)
{
	return r->got_status || r->exit_signal[0] != '\0' || ssh_channel_is_closed(ch);
}

/* Pass what is buffered on both streams to the callback; -1: session broken. */
static int drain(ssh_channel ch, struct run *r)
{
	char buf[READ_CHUNK];

	for (int is_stderr = 0; is_stderr <= 1; is_stderr++) {
		for (int turn = 0; turn < DRAIN_TURNS; turn++) {
			int n = ssh_channel_read_nonblocking(ch, buf, sizeof(buf), is_stderr);

			if (n == SSH_ERROR)
				return -1;
			if (n <= 0)
				break;
			if (r->out != NULL && !r->canceled &&
			    r->out(r->cls, is_stderr ? TB_SSH_STDERR : TB_SSH_STDOUT, buf,
				   (size_t)n) != 0)
				r->canceled = true;
		}
	}
	return 0;
}

/*
 * Process incoming packets for up to ms, also after EOF.  libssh 0.10 has no
 * public "wait for anything" call for one channel; ssh_channel_get_exit_status
 * waits until exit-status, close or SSH_OPTIONS_TIMEOUT, so the timeout is
 * lowered around it.
 */
static void wait_packets(struct conn *c, ssh_channel ch, int ms)
{
	long zero = 0, usec = (long)(ms > 0 ? ms : 1) * 1000;

	if (!ssh_channel_is_eof(ch)) {
		ssh_channel_poll_timeout(ch, ms, 0);
		return;
	}
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &zero);
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
	ssh_channel_get_exit_status(ch);
	zero = 0;
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &c->timeout_s);
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT_USEC, &zero);
}

/*
 * Stop the command: EOF on its stdin wakes the watchdog (WATCHDOG), which
 * signals the session's process group; the "signal" request does the same
 * where sshd allows it.  Returns true when the command ended.
 */
static bool stop_command(struct conn *c, ssh_channel ch, struct run *r)
{
	long long until = now_ms() + TB_SSH_STOP_GRACE_MS;

	if (!run_ended(ch, r) && ssh_is_connected(c->s)) {
		ssh_channel_request_send_signal(ch, "TERM");
		ssh_channel_send_eof(ch);
	}
	while (!run_ended(ch, r) && ssh_is_connected(c->s) && now_ms() < until) {
		if (drain(ch, r) != 0)
			break;
		wait_packets(c, ch, min_ms(until - now_ms(), POLL_SLICE_MS));
	}
	if (!run_ended(ch, r) && ssh_is_connected(c->s))
		ssh_channel_request_send_signal(ch, "KILL");
	if (ssh_is_connected(c->s))
		drain(ch, r);
	return run_ended(ch, r);
}

enum pump_end { PUMP_DONE, PUMP_TIMEOUT, PUMP_CANCELED, PUMP_LOST };

/* Stream output until the command ended (EOF and exit status) or deadline. */
static enum pump_end pump(struct conn *c, ssh_channel ch, struct run *r, long long deadline)
{
	for (;;) {
		if (drain(ch, r) != 0)
			return PUMP_LOST;
		if (r->canceled)
			return PUMP_CANCELED;
		/* EOF first (all output read), then the status that follows it */
		if (ssh_channel_is_eof(ch) && run_ended(ch, r))
			return PUMP_DONE;
		if (now_ms() >= deadline)
			return PUMP_TIMEOUT;
		if (!ssh_is_connected(c->s))
			return PUMP_LOST;
		if (!ssh_channel_is_eof(ch)) {
			if (ssh_channel_poll_timeout(ch, min_ms(deadline - now_ms(), POLL_SLICE_MS),
						     0) == SSH_ERROR)
				return PUMP_LOST;
		} else {
			wait_packets(c, ch, min_ms(deadline - now_ms(), POLL_SLICE_MS));
		}
	}
}

/*
 * Open a channel (retrying once on a new session when a pooled one is dead),
 * exec line, stream, and give the session back.  what names the command in
 * messages.
 */
static int run_line(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
		    const char *what, const char *line, long timeout_ms, struct run *r,
		    struct tb_ssh_result *res, struct tb_error *err)
{
	struct ssh_channel_callbacks_struct cb;
	struct conn *c = NULL;
	ssh_channel ch = NULL;
	bool reused = false, healthy = true;
	long long deadline;
	int rc = 0;

	for (int attempt = 0;; attempt++) {
		rc = conn_get(pool, t, attempt == 0, &c, &reused, res, err);
		if (rc != 0)
			return rc;
		res->reused = reused;
		ch = ssh_channel_new(c->s);
		if (ch != NULL && ssh_channel_open_session(ch) == SSH_OK)
			break;
		if (reused && attempt == 0) {
			/* the server closed the idle session (restart, timeout) */
			tb_debug("ssh", "pooled session to %s (%s) is dead (%s), reconnecting",
				 mname(t), oname(t), ssh_get_error(c->s));
			ssh_channel_free(ch);
			conn_put(pool, c, false);
			pool_count(pool, COUNT_RETRIES);
			continue;
		}
		rc = tb_fail(err, ssh_is_connected(c->s) ? TB_ERR_REMOTE : TB_ERR_UNREACHABLE,
			     mname(t), "%s (%s) did not open a session channel (%s); check its "
			     "sshd (MaxSessions) and log",
			     mname(t), oname(t), ssh_get_error(c->s));
		ssh_channel_free(ch);
		conn_put(pool, c, false);
		return rc;
	}
	if (reused)
		pool_count(pool, COUNT_REUSES);

	memset(&cb, 0, sizeof(cb));
	ssh_callbacks_init(&cb);
	cb.userdata = r;
	cb.channel_exit_status_function = on_exit_status;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_set_channel_callbacks(ch, &cb);

	deadline = now_ms() + timeout_ms;
	if (ssh_channel_request_exec(ch, line) != SSH_OK) {
		healthy = ssh_is_connected(c->s);
		rc = tb_fail(err, healthy ? TB_ERR_REMOTE : TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s) refused to run `%s` (%s); check its sshd log", mname(t),
			     oname(t), what, ssh_get_error(c->s));
		goto out;
	}
	/* no EOF on stdin: the watchdog waits for it (WATCHDOG) */

	switch (pump(c, ch, r, deadline)) {
	case PUMP_DONE:
		rc = 0;
		break;
	case PUMP_LOST:
		healthy = false;
		rc = tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s): the connection broke while `%s` ran (%s); it is "
			     "stopped there once sshd notices",
			     mname(t), oname(t), what, ssh_get_error(c->s));
		break;
	case PUMP_TIMEOUT:
	case PUMP_CANCELED: {
		bool timeout = !r->canceled;
		bool ended = stop_command(c, ch, r);

		res->stopped = true;
		healthy = ssh_is_connected(c->s);
		rc = tb_fail(err, timeout ? TB_ERR_TIMEOUT : TB_ERR_CANCELED, mname(t),
			     "%s (%s): `%s` %s%s", mname(t), oname(t), what,
			     timeout ? "did not end in time and was stopped"
				     : "was stopped on request",
			     ended ? "" : "; it did not end on SIGTERM and may still run "
					  "there");
		if (timeout && ended)
			tb_debug("ssh", "%s (%s): `%s` timed out after %ld ms", mname(t), oname(t),
				 what, timeout_ms);
		break;
	}
	}
out:
	res->exit_status = r->got_status ? r->exit_status : -1;
	snprintf(res->exit_signal, sizeof(res->exit_signal), "%s", r->exit_signal);
	ssh_remove_channel_callbacks(ch, &cb);
	if (healthy)
		ssh_channel_close(ch);
	ssh_channel_free(ch);
	conn_put(pool, c, healthy);
	return rc;
}

static int check_call(const struct tb_ssh_target *t, const char *const argv[],
		      long timeout_ms, struct tb_error *err)
{
	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	if (argv == NULL || argv[0] == NULL)
		return tb_fail(err, TB_ERR_INVALID, "argv", "%s (%s): the command is empty",
			       mname(t), oname(t));
	if (timeout_ms <= 0)
		return tb_fail(err, TB_ERR_INVALID, "timeout_ms",
			       "%s (%s): a command needs a timeout > 0 ms, got %ld", mname(t),
			       oname(t), timeout_ms);
	return 0;
}

static void result_init(struct tb_ssh_result *res)
{
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
}

/* argv as sh would read it, for messages: one line, at most len - 1 bytes. */
static void describe(const char *const argv[], char *buf, size_t len)
{
	char *q = tb_sh_quote_argv(argv, NULL);
	size_t n;

	snprintf(buf, len, "%s", q != NULL ? q : argv[0]);
	free(q);
	n = strlen(buf);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	if (n == len - 1 && len > 4)
		memcpy(buf + len - 4, "...", 3);
}

static int exec_prefixed(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
			 const char *prefix, const char *const argv[], long timeout_ms,
			 tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
			 struct tb_error *err)
{
	struct tb_ssh_result local;
	struct tb_error qerr;
	struct run r = {0};
	char *line, what[96];
	int rc;

	if (res == NULL)
		res = &local;
	result_init(res);
	if ((rc = check_call(t, argv, timeout_ms, err)) != 0)
		return rc;
	line = tb_ssh_command_line_prefixed(prefix, argv, &qerr);
	if (line == NULL)
		return tb_fail(err, qerr.code, qerr.field, "%s (%s): %s", mname(t), oname(t),
			       qerr.message);
	r.out = on_output;
	r.cls = cls;
	describe(argv, what, sizeof(what));
	rc = run_line(pool, t, what, line, timeout_ms, &r, res, err);
	free(line);
	return rc;
}

int tb_ssh_exec(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
		const char *const argv[], long timeout_ms, tb_ssh_output_fn on_output,
		void *cls, struct tb_ssh_result *res, struct tb_error *err)
{
	return exec_prefixed(pool, t, WATCHDOG, argv, timeout_ms, on_output, cls, res, err);
}

/* ---- spawn: the first stdout line is the pid ---- */

#define PID_LINE_MAX 24
#define HELD_STDERR_MAX 65536

struct spawn {
	tb_ssh_pid_fn on_pid;
	tb_ssh_output_fn on_output;
	void *cls;
	char line[PID_LINE_MAX];
	size_t n;
	long pid;          /* 0 until the pid line arrived */
	bool bad;          /* the first line was not a pid */
	bool nomem;
	char *held;        /* stderr that came before the pid line */
	size_t held_len;
};

static int spawn_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct spawn *sp = cls;

	if (sp->pid == 0 && stream == TB_SSH_STDERR) {
		/* keep the promise "pid first" even if stderr overtakes stdout */
		char *h;

		if (sp->held_len + len > HELD_STDERR_MAX) {
			/* a flood of stderr before the pid line: give up holding */
			int rc = 0;

			if (sp->on_output != NULL && sp->held_len > 0)
				rc = sp->on_output(sp->cls, stream, sp->held, sp->held_len);
			free(sp->held);
			sp->held = NULL;
			sp->held_len = 0;
			if (rc == 0 && sp->on_output != NULL)
				rc = sp->on_output(sp->cls, stream, data, len);
			return rc;
		}
		h = realloc(sp->held, sp->held_len + len);
		if (h == NULL) {
			sp->nomem = true;
			return -1;
		}
		memcpy(h + sp->held_len, data, len);
		sp->held = h;
		sp->held_len += len;
		return 0;
	}
	while (sp->pid == 0 && len > 0) {
		char c = *data++;
		char *end;

		len--;
		if (c != '\n') {
			if (sp->n + 1 >= sizeof(sp->line)) {
				sp->bad = true;
				return -1;
			}
			sp->line[sp->n++] = c;
			continue;
		}
		sp->line[sp->n] = '\0';
		errno = 0;
		sp->pid = strtol(sp->line, &end, 10);
		if (errno != 0 || end == sp->line || *end != '\0' || sp->pid <= 1) {
			sp->pid = 0;
			sp->bad = true;
			return -1;
		}
		if (sp->on_pid != NULL && sp->on_pid(sp->cls, sp->pid) != 0)
			return -1;
		if (sp->held_len > 0 && sp->on_output != NULL &&
		    sp->on_output(sp->cls, TB_SSH_STDERR, sp->held, sp->held_len) != 0)
			return -1;
		free(sp->held);
		sp->held = NULL;
		sp->held_len = 0;
	}
	if (len > 0 && sp->on_output != NULL)
		return sp->on_output(sp->cls, stream, data, len);
	return 0;
}

int tb_ssh_spawn(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
		 const char *const argv[], long timeout_ms, tb_ssh_pid_fn on_pid,
		 tb_ssh_output_fn on_output, void *cls, struct tb_ssh_result *res,
		 struct tb_error *err)
{
	struct tb_ssh_result local;
	struct spawn sp = {0};
	int rc;

	if (res == NULL)
		res = &local;
	sp.on_pid = on_pid;
	sp.on_output = on_output;
	sp.cls = cls;
	rc = exec_prefixed(pool, t, WATCHDOG "; echo $$", argv, timeout_ms, spawn_output, &sp,
			   res, err);
	if (sp.nomem) {
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for the output of %s",
			     argv[0]);
	} else if (sp.bad) {
		rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
			     "%s (%s): %s did not report its pid as the first line of "
			     "output; check that /bin/sh on %s is a POSIX shell",
			     mname(t), oname(t), argv[0], mname(t));
	} else if (rc == 0 && sp.pid == 0) {
		rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
			     "%s (%s): %s ended (exit status %d) without reporting its pid; "
			     "check that /bin/sh on %s is a POSIX shell",
			     mname(t), oname(t), argv[0], res->exit_status, mname(t));
	}
	/* stderr held back for a pid that never came: still the caller's */
	if (!sp.nomem && sp.held_len > 0 && on_output != NULL)
		on_output(cls, TB_SSH_STDERR, sp.held, sp.held_len);
	free(sp.held);
	return rc;
}

/* ---- capture ---- */

struct capture_sink {
	struct tb_ssh_capture *cap;
	size_t max;
	size_t out_cap, err_cap;
	bool nomem;
};

static int append(char **buf, size_t *len, size_t *cap, bool *trunc, size_t max,
		  const char *data, size_t n)
{
	if (*len + n > max) {
		*trunc = true;
		n = max - *len;
	}
	if (*len + n + 1 > *cap) {
		size_t want = *cap != 0 ? *cap : 1024;
		char *p;

		while (want < *len + n + 1)
			want *= 2;
		p = realloc(*buf, want);
		if (p == NULL)
			return -1;
		*buf = p;
		*cap = want;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static int capture_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct capture_sink *s = cls;
	struct tb_ssh_capture *c = s->cap;
	int rc;

	if (stream == TB_SSH_STDOUT)
		rc = append(&c->out, &c->out_len, &s->out_cap, &c->out_truncated, s->max, data,
			    len);
	else
		rc = append(&c->err, &c->err_len, &s->err_cap, &c->err_truncated, s->max, data,
			    len);
	if (rc != 0)
		s->nomem = true;
	return rc;
}

int tb_ssh_run_capture(struct tb_ssh_pool *pool, const struct tb_ssh_target *t,
		       const char *const argv[], long timeout_ms, size_t max_bytes,
		       struct tb_ssh_capture *cap, struct tb_error *err)
{
	struct capture_sink s = {0};
	int rc;

	memset(cap, 0, sizeof(*cap));
	s.cap = cap;
	s.max = max_bytes;
	rc = tb_ssh_exec(pool, t, argv, timeout_ms, capture_output, &s, &cap->res, err);
	/* never leave NULL buffers behind: "" when nothing arrived */
	if (append(&cap->out, &cap->out_len, &s.out_cap, &cap->out_truncated, s.max, "", 0) ||
	    append(&cap->err, &cap->err_len, &s.err_cap, &cap->err_truncated, s.max, "", 0))
		s.nomem = true;
	if (s.nomem)
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for the output of %s",
			     argv != NULL && argv[0] != NULL ? argv[0] : "a command");
	return rc;
}

void tb_ssh_capture_free(struct tb_ssh_capture *cap)
{
	if (cap == NULL)
		return;
	free(cap->out);
	free(cap->err);
	memset(cap, 0, sizeof(*cap));
}

/* ---- kill ---- */

int tb_ssh_kill(struct tb_ssh_pool *pool, const struct tb_ssh_target *t, long pid,
		const char *sig, struct tb_error *err)
{
	static const char *const allowed[] = {"TERM", "KILL", "INT", "HUP", "USR1", "USR2"};
	struct tb_ssh_capture cap;
	char spid[32];
	const char *argv[] = {"kill", "-s", sig, spid, NULL};
	bool ok = false;
	int rc;

	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	for (size_t i = 0; sig != NULL && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strcmp(sig, allowed[i]) == 0)
			ok = true;
	if (!ok)
		return tb_fail(err, TB_ERR_INVALID, "signal",
			       "%s (%s): signal must be TERM, KILL, INT, HUP, USR1 or USR2",
			       mname(t), oname(t));
	/* kill -s SIG 0 / -1 would hit a whole process group or everything */
	if (pid <= 1)
		return tb_fail(err, TB_ERR_INVALID, "pid",
			       "%s (%s): refusing to signal pid %ld", mname(t), oname(t), pid);
	snprintf(spid, sizeof(spid), "%ld", pid);
	rc = tb_ssh_run_capture(pool, t, argv, timeout_s_of(t) * 1000, 4096, &cap, err);
	if (rc == 0 && cap.res.exit_status != 0) {
		char *nl = strchr(cap.err, '\n');

		if (nl != NULL)
			*nl = '\0';
		if (strstr(cap.err, "No such process") != NULL ||
		    strstr(cap.err, "no such process") != NULL)
			rc = tb_fail(err, TB_ERR_NOT_FOUND, "pid",
				     "%s (%s) has no process %ld (it has ended)", mname(t),
				     oname(t), pid);
		else
			rc = tb_fail(err, TB_ERR_REMOTE, mname(t),
				     "%s (%s): kill -s %s %ld failed (exit status %d: %s)",
				     mname(t), oname(t), sig, pid, cap.res.exit_status, cap.err);
	}
	tb_ssh_capture_free(&cap);
	return rc;
}

/* ---- host key ---- */

int tb_ssh_host_key(const struct tb_ssh_target *t, char fp[TB_SSH_FP_MAX], struct tb_error *err)
{
	struct conn c;
	int rc;

	fp[0] = '\0';
	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	memset(&c, 0, sizeof(c));
	rc = conn_handshake(&c, t, err);
	if (rc == 0)
		snprintf(fp, TB_SSH_FP_MAX, "%s", c.host_fp);
	if (c.s != NULL) {
		ssh_disconnect(c.s);
		ssh_free(c.s);
	}
	return rc;
}
