/* console.c - the consoles service: making and stopping the readers, the
 * viewers' streams, the writer lease, input and the kept boot logs.  The
 * reader threads are console_io.c; the pure parts console_ring.c.  See
 * console.h. */
#include "console_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idle.h"
#include "log.h"
#include "timeutil.h"

static struct console *find(struct tb_consoles *cs, const char *host)
{
	for (size_t i = 0; cs != NULL && host != NULL && i < cs->n; i++)
		if (strcmp(cs->c[i].name, host) == 0)
			return &cs->c[i];
	return NULL;
}

static int not_found(const char *host, struct tb_error *err)
{
	return tb_fail(err, TB_ERR_NOT_FOUND, "name", "\"%.64s\" has no console read by testbedd (see its inventory)",
		       host);
}

static int setup(struct tb_consoles *cs, struct console *c, const struct tb_machine *m, struct tb_error *err)
{
	char dir[512];
	int rc;

	c->cs = cs;
	c->pipe[0] = c->pipe[1] = -1;
	pthread_mutex_init(&c->mu, NULL);
	snprintf(c->name, sizeof(c->name), "%s", m->name);
	c->type = m->console.type;
	snprintf(c->address, sizeof(c->address), "%s", m->console.address != NULL ? m->console.address : "");
	c->port = m->console.port;
	snprintf(c->device, sizeof(c->device), "%s", m->console.device != NULL ? m->console.device : "");
	c->speed = m->console.speed;
	c->since = tb_now();
	snprintf(dir, sizeof(dir), "%s/console/%s", cs->state_dir, m->name);
	if ((rc = tb_conlog_init(&c->log, dir, err)) != 0)
		return rc;
	if (tb_ring_init(&c->ring, TB_CONSOLE_RING) != 0)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (pipe(c->pipe) != 0)
		return tb_fail(err, TB_ERR_IO, "", "pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(c->pipe[i], F_SETFD, FD_CLOEXEC);
		fcntl(c->pipe[i], F_SETFL, O_NONBLOCK);
	}
	if (pthread_create(&c->thread, NULL, console_thread, c) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the console thread of %s", m->name);
	c->started = 1;
	return 0;
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
	struct tb_inventory *inv;
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
	inv = tb_inv_current_get(invs);
	if (inv->nmachines > 0 && (cs->c = calloc(inv->nmachines, sizeof(*cs->c))) == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	for (size_t i = 0; rc == 0 && i < inv->nmachines; i++) {
		const struct tb_machine *m = &inv->machines[i];

		if (m->console.type != TB_CONSOLE_TCP && m->console.type != TB_CONSOLE_DEVICE)
			continue;
		rc = setup(cs, &cs->c[cs->n++], m, err);
	}
	tb_inv_current_put(invs, inv);
	if (rc != 0) {
		tb_consoles_close(cs);
		tb_consoles_free(cs);
		return rc;
	}
	*out = cs;
	return 0;
}

void tb_consoles_close(struct tb_consoles *cs)
{
	if (cs == NULL || cs->closing)
		return;
	cs->closing = 1;
	for (size_t i = 0; i < cs->n; i++) {
		struct console *c = &cs->c[i];

		if (c->pipe[1] >= 0)
			console_poke(c);
		if (c->started) {
			pthread_mutex_lock(&c->mu);
			console_wake_all(c);
			pthread_mutex_unlock(&c->mu);
			pthread_join(c->thread, NULL);
			c->started = 0;
		}
	}
}

void tb_consoles_free(struct tb_consoles *cs)
{
	if (cs == NULL)
		return;
	tb_consoles_close(cs);
	for (size_t i = 0; i < cs->n; i++) {
		struct console *c = &cs->c[i];

		tb_conlog_close(&c->log);
		tb_ring_free(&c->ring);
		for (int k = 0; k < 2; k++)
			if (c->pipe[k] >= 0)
				close(c->pipe[k]);
		if (c->cs != NULL)
			pthread_mutex_destroy(&c->mu);
	}
	free(cs->c);
	free(cs);
}

/* Under c->mu: a lease unused for cs->lease_idle_s (TB_CONSOLE_LEASE_IDLE_S)
 * is gone; the viewers are told (a state event). */
static void lease_expire(struct console *c)
{
	if (c->holder[0] && tb_monotonic_ms() - c->holder_use_ms > (int64_t)c->cs->lease_idle_s * 1000) {
		tb_info("console", "%s: the lease of %s lapsed (no input for %d s)", c->name, c->holder,
			c->cs->lease_idle_s);
		c->holder[0] = '\0';
		c->gen++;
		console_wake_all(c);
	}
}

static json_t *lease_json_locked(struct console *c)
{
	lease_expire(c);
	if (!c->holder[0])
		return json_null();
	return json_pack("{s:s, s:o}", "holder", c->holder, "since", tb_time_json(c->holder_since));
}

static json_t *state_json_locked(struct console *c)
{
	return json_pack("{s:s, s:b, s:o, s:s?, s:o, s:o, s:I, s:I}", "type",
			 c->type == TB_CONSOLE_TCP ? "tcp" : "device", "connected", c->connected, "since",
			 tb_time_json(c->since), "last_error", c->last_error[0] ? c->last_error : NULL, "last_error_at",
			 tb_time_json(c->last_error_at), "lease", lease_json_locked(c), "viewers",
			 (json_int_t)c->nfeeds, "bytes", (json_int_t)c->ring.end);
}

/* fn(host's console) under its lock; JSON null when host has none. */
static json_t *json_locked(struct tb_consoles *cs, const char *host, json_t *(*fn)(struct console *c))
{
	struct console *c = find(cs, host);
	json_t *j;

	if (c == NULL)
		return json_null();
	pthread_mutex_lock(&c->mu);
	j = fn(c);
	pthread_mutex_unlock(&c->mu);
	return j;
}

json_t *tb_console_state_json(struct tb_consoles *cs, const char *host)
{
	return json_locked(cs, host, state_json_locked);
}

void tb_console_boot_mark(struct tb_consoles *cs, const char *host, const char *why)
{
	struct console *c = find(cs, host);

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	tb_conlog_rotate(&c->log, why);
	pthread_mutex_unlock(&c->mu);
}

/* ---- viewers ---- */

static void feed_attach(struct tb_feed *tf, void (*wake)(void *cls), void *cls)
{
	struct cfeed *f = (struct cfeed *)tf;

	pthread_mutex_lock(&f->c->mu);
	f->wake = wake;
	f->wake_cls = cls;
	pthread_mutex_unlock(&f->c->mu);
}

/* "id: N\nevent: output\ndata: BASE64\n\n", or a state event first when the
 * state changed since the last one sent.  A lease that lapsed is found here
 * too (the edge reads every stream at its heartbeat), so viewers see it go. */
static long feed_next(struct tb_feed *tf, char *buf, size_t max)
{
	struct cfeed *f = (struct cfeed *)tf;
	struct console *c = f->c;
	long n = 0;

	pthread_mutex_lock(&c->mu);
	lease_expire(c);
	if (c->cs->closing) {
		n = -1;
	} else if (f->seen_gen != c->gen) {
		json_t *j = state_json_locked(c);
		char *s = json_dumps(j, JSON_COMPACT);

		json_decref(j);
		if (s != NULL && strlen(s) + 24 < max) {
			n = snprintf(buf, max, "event: state\ndata: %s\n\n", s);
			f->seen_gen = c->gen;
		}
		free(s);
	} else if (f->pos < c->ring.end && max > 96) {
		unsigned char raw[3072];
		size_t want = (max - 64) / 4 * 3, got;
		int h;

		if (want > sizeof(raw))
			want = sizeof(raw);
		got = tb_ring_read(&c->ring, &f->pos, raw, want);
		h = snprintf(buf, max, "id: %llu\nevent: output\ndata: ", (unsigned long long)f->pos);
		n = h + (long)tb_b64_encode(raw, got, buf + h);
		buf[n++] = '\n';
		buf[n++] = '\n';
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

static void feed_close(struct tb_feed *tf)
{
	struct cfeed *f = (struct cfeed *)tf;
	struct console *c = f->c;

	pthread_mutex_lock(&c->mu);
	for (struct cfeed **p = &c->feeds; *p != NULL; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			c->nfeeds--;
			c->gen++;
			break;
		}
	}
	console_wake_all(c);
	pthread_mutex_unlock(&c->mu);
	free(f);
}

int tb_console_open_feed(struct tb_consoles *cs, const char *host, int64_t from, struct tb_feed **out,
			 struct tb_error *err)
{
	struct console *c = find(cs, host);
	struct cfeed *f;
	int rc = 0;

	*out = NULL;
	if (c == NULL)
		return not_found(host, err);
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	f->f = (struct tb_feed){feed_attach, feed_next, feed_close};
	f->c = c;
	pthread_mutex_lock(&c->mu);
	if (c->nfeeds >= TB_CONSOLE_VIEWERS) {
		rc = tb_fail(err, TB_ERR_RATE_LIMITED, "", "the console of %s has %d viewers already", c->name,
			     TB_CONSOLE_VIEWERS);
	} else {
		f->pos = from < 0 ? tb_ring_start(&c->ring) : (uint64_t)from;
		f->seen_gen = c->gen - 1; /* the state goes first */
		f->next = c->feeds;
		c->feeds = f;
		c->nfeeds++;
		c->gen++;
		console_wake_all(c);
	}
	pthread_mutex_unlock(&c->mu);
	if (rc != 0) {
		free(f);
		return rc;
	}
	tb_idle_touch(cs->idle, host);
	*out = &f->f;
	return 0;
}

/* ---- the lease and input ---- */

static int holds(const struct console *c, const struct tb_console_who *who)
{
	return c->holder[0] && c->holder_token == who->token_id && strcmp(c->holder, who->name) == 0;
}

int tb_console_lease_take(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, int takeover,
			  char taken_from[64], struct tb_error *err)
{
	struct console *c = find(cs, host);
	int rc = 0;

	taken_from[0] = '\0';
	if (c == NULL)
		return not_found(host, err);
	pthread_mutex_lock(&c->mu);
	lease_expire(c);
	if (c->holder[0] && !holds(c, who)) {
		if (!takeover || !who->admin) {
			char since[TB_TIME_MAX];

			tb_time_format(c->holder_since, since);
			rc = tb_fail(err, TB_ERR_CONFLICT, "lease", "the console of %s is leased to %s since %s%s",
				     c->name, c->holder, since,
				     who->admin ? " (an admin may take it over: {\"takeover\": true})" : "");
		} else {
			snprintf(taken_from, 64, "%s", c->holder);
		}
	}
	if (rc == 0) {
		if (!holds(c, who)) {
			snprintf(c->holder, sizeof(c->holder), "%s", who->name);
			c->holder_token = who->token_id;
			c->holder_since = tb_now();
			c->gen++;
			console_wake_all(c);
		}
		c->holder_use_ms = tb_monotonic_ms();
	}
	pthread_mutex_unlock(&c->mu);
	if (rc == 0)
		tb_idle_touch(cs->idle, host);
	return rc;
}

int tb_console_lease_drop(struct tb_consoles *cs, const char *host, const struct tb_console_who *who,
			  struct tb_error *err)
{
	struct console *c = find(cs, host);
	int rc = 0;

	if (c == NULL)
		return not_found(host, err);
	pthread_mutex_lock(&c->mu);
	lease_expire(c);
	if (c->holder[0] && !holds(c, who) && !who->admin) {
		rc = tb_fail(err, TB_ERR_CONFLICT, "lease", "the console of %s is leased to %s, not to you", c->name,
			     c->holder);
	} else if (c->holder[0]) {
		c->holder[0] = '\0';
		c->gen++;
		console_wake_all(c);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

json_t *tb_console_lease_json(struct tb_consoles *cs, const char *host)
{
	return json_locked(cs, host, lease_json_locked);
}

/* Under c->mu: may who type now? */
static int may_type(struct console *c, const struct tb_console_who *who, struct tb_error *err)
{
	lease_expire(c);
	if (!c->holder[0])
		return tb_fail(err, TB_ERR_CONFLICT, "lease",
			       "nobody holds the console of %s: take its lease first (POST .../console/lease)",
			       c->name);
	if (!holds(c, who))
		return tb_fail(err, TB_ERR_CONFLICT, "lease", "the console of %s is leased to %s, not to you", c->name,
			       c->holder);
	if (!c->connected)
		return tb_fail(err, TB_ERR_CONFLICT, "", "the console of %s is not connected%s%s", c->name,
			       c->last_error[0] ? ": " : "", c->last_error);
	return 0;
}

int tb_console_input(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, const void *data,
		     size_t len, struct tb_error *err)
{
	struct console *c = find(cs, host);
	int rc;

	if (c == NULL)
		return not_found(host, err);
	if (len > TB_CONSOLE_INPUT_MAX)
		return tb_fail(err, TB_ERR_TOO_LARGE, "data", "at most %d bytes of input a request, got %zu",
			       TB_CONSOLE_INPUT_MAX, len);
	pthread_mutex_lock(&c->mu);
	if ((rc = may_type(c, who, err)) == 0) {
		if (c->inlen + len > sizeof(c->inq)) {
			rc = tb_fail(err, TB_ERR_CONFLICT, "data",
				     "the console of %s has %zu bytes still to send: later", c->name, c->inlen);
		} else {
			memcpy(c->inq + c->inlen, data, len);
			c->inlen += len;
			c->holder_use_ms = tb_monotonic_ms();
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (rc == 0) {
		console_poke(c);
		tb_idle_touch(cs->idle, host);
	}
	return rc;
}

int tb_console_break(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, struct tb_error *err)
{
	struct console *c = find(cs, host);
	int rc;

	if (c == NULL)
		return not_found(host, err);
	if (c->type != TB_CONSOLE_DEVICE)
		return tb_fail(err, TB_ERR_INVALID, "key",
			       "the console of %s is raw TCP, which has no Break (a device console has; telnet with "
			       "RFC 2217 is not read yet)",
			       c->name);
	pthread_mutex_lock(&c->mu);
	if ((rc = may_type(c, who, err)) == 0) {
		c->brk = 1;
		c->holder_use_ms = tb_monotonic_ms();
	}
	pthread_mutex_unlock(&c->mu);
	if (rc == 0) {
		console_poke(c);
		tb_idle_touch(cs->idle, host);
	}
	return rc;
}

/* ---- kept boot logs ---- */

static int by_id_desc(const void *a, const void *b)
{
	long long x = atoll(json_string_value(json_object_get(*(json_t *const *)a, "id")));
	long long y = atoll(json_string_value(json_object_get(*(json_t *const *)b, "id")));

	return x < y ? 1 : x > y ? -1 : 0;
}

int tb_console_logs_json(struct tb_consoles *cs, const char *host, json_t **out, struct tb_error *err)
{
	struct console *c = find(cs, host);
	json_t *items[TB_CONSOLE_KEEP_FILES * 2], *list;
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	*out = NULL;
	if (c == NULL)
		return not_found(host, err);
	if ((d = opendir(c->log.dir)) == NULL)
		return tb_fail(err, TB_ERR_IO, "", "cannot read %s: %s", c->log.dir, strerror(errno));
	while ((e = readdir(d)) != NULL && n < sizeof(items) / sizeof(items[0])) {
		char id[64], path[800];
		size_t len = strlen(e->d_name);
		struct stat st;
		const char *reason;

		if (len < 5 || len - 4 >= sizeof(id) || strcmp(e->d_name + len - 4, ".log") != 0)
			continue;
		memcpy(id, e->d_name, len - 4);
		id[len - 4] = '\0';
		snprintf(path, sizeof(path), "%s/%s", c->log.dir, e->d_name);
		if (!tb_conlog_valid_id(id) || stat(path, &st) != 0)
			continue;
		reason = strchr(id, '-') + 1;
		items[n++] = json_pack("{s:s, s:o, s:s, s:I}", "id", id, "started",
				       tb_time_json((int64_t)(atoll(id) / 1000)), "reason", reason, "bytes",
				       (json_int_t)st.st_size);
	}
	closedir(d);
	qsort(items, n, sizeof(items[0]), by_id_desc);
	list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, items[i]);
	*out = list;
	return 0;
}

int tb_console_log_read(struct tb_consoles *cs, const char *host, const char *id, char **data, size_t *len,
			struct tb_error *err)
{
	struct console *c = find(cs, host);
	char path[800];
	FILE *f;
	long size;

	*data = NULL;
	*len = 0;
	if (c == NULL)
		return not_found(host, err);
	if (!tb_conlog_valid_id(id))
		return tb_fail(err, TB_ERR_INVALID, "id", "a log id looks like 1764840000123-grub");
	snprintf(path, sizeof(path), "%s/%s.log", c->log.dir, id);
	if ((f = fopen(path, "rb")) == NULL)
		return tb_fail(err, TB_ERR_NOT_FOUND, "id", "no console log %s of %s", id, c->name);
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (*data = malloc((size_t)size + 1)) == NULL || fread(*data, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(*data);
		*data = NULL;
		return tb_fail(err, TB_ERR_IO, "", "cannot read console log %s of %s", id, c->name);
	}
	fclose(f);
	*len = (size_t)size;
	return 0;
}
