/* console.c - the consoles service: the viewers' streams, the writer lease,
 * input and the kept boot logs.  Making, stopping and reloading the readers
 * is console_list.c, the reader threads console_io.c, the pure parts
 * console_ring.c.  See console.h. */
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

/* Under cs->lock (read or write): host's console in force, or NULL. */
static struct console *find(struct tb_consoles *cs, const char *host)
{
	for (size_t i = 0; cs != NULL && host != NULL && i < cs->n; i++)
		if (strcmp(cs->c[i]->name, host) == 0)
			return cs->c[i];
	return NULL;
}

static int not_found(const char *host, struct tb_error *err)
{
	return tb_fail(err, TB_ERR_NOT_FOUND, "name", "\"%.64s\" has no console read by testbedd (see its inventory)",
		       host);
}

/* cs->lock read for a use of the list (cs may be NULL: nothing).  Each
 * public function that takes a host reads the list around its static X_of,
 * which works on host's console c (NULL: it has none) and may lock c->mu:
 * a reload, which writes the list, never frees a console in use. */
static void list_read(struct tb_consoles *cs)
{
	if (cs != NULL)
		pthread_rwlock_rdlock(&cs->lock);
}

static void list_done(struct tb_consoles *cs)
{
	if (cs != NULL)
		pthread_rwlock_unlock(&cs->lock);
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
	return json_pack("{s:s, s:b, s:o, s:s?, s:o, s:o, s:I, s:I}", "type", console_type_name(c), "connected",
			 c->connected, "since", tb_time_json(c->since), "last_error",
			 c->last_error[0] ? c->last_error : NULL, "last_error_at", tb_time_json(c->last_error_at),
			 "lease", lease_json_locked(c), "viewers", (json_int_t)c->nfeeds, "bytes",
			 (json_int_t)c->ring.end);
}

/* fn(host's console) under its lock; JSON null when host has none. */
static json_t *json_locked(struct tb_consoles *cs, const char *host, json_t *(*fn)(struct console *c))
{
	struct console *c;
	json_t *j;

	list_read(cs);
	if ((c = find(cs, host)) == NULL) {
		j = json_null();
	} else {
		pthread_mutex_lock(&c->mu);
		j = fn(c);
		pthread_mutex_unlock(&c->mu);
	}
	list_done(cs);
	return j;
}

json_t *tb_console_state_json(struct tb_consoles *cs, const char *host)
{
	return json_locked(cs, host, state_json_locked);
}

void tb_console_boot_mark(struct tb_consoles *cs, const char *host, const char *why)
{
	struct console *c;

	list_read(cs);
	if ((c = find(cs, host)) != NULL) {
		pthread_mutex_lock(&c->mu);
		tb_conlog_rotate(&c->log, why);
		pthread_mutex_unlock(&c->mu);
	}
	list_done(cs);
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
 * state changed since the last one sent; once the console stopped, an "end"
 * event with the reason a reload gave (none when the service closes), then
 * the end of the stream.  A lease that lapsed is found here
 * too (the edge reads every stream at its heartbeat), so viewers see it go. */
static long feed_next(struct tb_feed *tf, char *buf, size_t max)
{
	struct cfeed *f = (struct cfeed *)tf;
	struct console *c = f->c;
	long n = 0;

	pthread_mutex_lock(&c->mu);
	lease_expire(c);
	if (c->cs->closing && c->end_reason[0] && !f->told_end && max > sizeof(c->end_reason) + 64) {
		/* stopped by a reload: the last event says why */
		json_t *j = json_pack("{s:s}", "reason", c->end_reason);
		char *s = json_dumps(j, JSON_COMPACT);

		json_decref(j);
		n = s != NULL ? snprintf(buf, max, "event: end\ndata: %s\n\n", s) : -1;
		f->told_end = 1;
		free(s);
	} else if (c->cs->closing) {
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
	console_shed_locked(c);
	console_wake_all(c);
	pthread_mutex_unlock(&c->mu);
	free(f);
}

static int open_feed_of(struct tb_consoles *cs, struct console *c, const char *host, int64_t from, struct tb_feed **out,
			struct tb_error *err)
{
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

int tb_console_open_feed(struct tb_consoles *cs, const char *host, int64_t from, struct tb_feed **out,
			 struct tb_error *err)
{
	int r;

	list_read(cs);
	r = open_feed_of(cs, find(cs, host), host, from, out, err);
	list_done(cs);
	return r;
}

/* ---- the lease and input ---- */

static int holds(const struct console *c, const struct tb_console_who *who)
{
	return c->holder[0] && c->holder_token == who->token_id && strcmp(c->holder, who->name) == 0;
}

static int lease_take_of(struct tb_consoles *cs, struct console *c, const char *host, const struct tb_console_who *who,
			 int takeover, char taken_from[64], struct tb_error *err)
{
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

int tb_console_lease_take(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, int takeover,
			  char taken_from[64], struct tb_error *err)
{
	int r;

	list_read(cs);
	r = lease_take_of(cs, find(cs, host), host, who, takeover, taken_from, err);
	list_done(cs);
	return r;
}

static int lease_drop_of(struct console *c, const char *host, const struct tb_console_who *who, struct tb_error *err)
{
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

int tb_console_lease_drop(struct tb_consoles *cs, const char *host, const struct tb_console_who *who,
			  struct tb_error *err)
{
	int r;

	list_read(cs);
	r = lease_drop_of(find(cs, host), host, who, err);
	list_done(cs);
	return r;
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

static int input_of(struct tb_consoles *cs, struct console *c, const char *host, const struct tb_console_who *who,
		    const void *data, size_t len, struct tb_error *err)
{
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

int tb_console_input(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, const void *data,
		     size_t len, struct tb_error *err)
{
	int r;

	list_read(cs);
	r = input_of(cs, find(cs, host), host, who, data, len, err);
	list_done(cs);
	return r;
}

static int break_of(struct tb_consoles *cs, struct console *c, const char *host, const struct tb_console_who *who,
		    struct tb_error *err)
{
	int rc;

	if (c == NULL)
		return not_found(host, err);
	if ((rc = console_break_check(c, err)) != 0)
		return rc;
	pthread_mutex_lock(&c->mu);
	if ((rc = may_type(c, who, err)) == 0 && c->brk >= TB_CONSOLE_BREAKS_MAX) {
		rc = tb_fail(err, TB_ERR_CONFLICT, "key", "the console of %s has %d Breaks still to send: later",
			     c->name, c->brk);
	} else if (rc == 0) {
		c->brk++; /* each asked for is sent, in turn (a telnet one lasts 250 ms) */
		c->holder_use_ms = tb_monotonic_ms();
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
	int r;

	list_read(cs);
	r = break_of(cs, find(cs, host), host, who, err);
	list_done(cs);
	return r;
}

/* ---- kept boot logs ---- */

static int by_id_desc(const void *a, const void *b)
{
	long long x = atoll(json_string_value(json_object_get(*(json_t *const *)a, "id")));
	long long y = atoll(json_string_value(json_object_get(*(json_t *const *)b, "id")));

	return x < y ? 1 : x > y ? -1 : 0;
}

static int logs_json_of(struct console *c, const char *host, json_t **out, struct tb_error *err)
{
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

int tb_console_logs_json(struct tb_consoles *cs, const char *host, json_t **out, struct tb_error *err)
{
	int r;

	list_read(cs);
	r = logs_json_of(find(cs, host), host, out, err);
	list_done(cs);
	return r;
}

static int log_read_of(struct console *c, const char *host, const char *id, char **data, size_t *len,
		       struct tb_error *err)
{
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

int tb_console_log_read(struct tb_consoles *cs, const char *host, const char *id, char **data, size_t *len,
			struct tb_error *err)
{
	int r;

	list_read(cs);
	r = log_read_of(find(cs, host), host, id, data, len, err);
	list_done(cs);
	return r;
}

/* ---- for an action that reads and types on a console ---- */

static int64_t mark_of(struct console *c)
{
	int64_t end;

	if (c == NULL)
		return -1;
	pthread_mutex_lock(&c->mu);
	end = (int64_t)c->ring.end;
	pthread_mutex_unlock(&c->mu);
	return end;
}

int64_t tb_console_mark(struct tb_consoles *cs, const char *host)
{
	int64_t r;

	list_read(cs);
	r = mark_of(find(cs, host));
	list_done(cs);
	return r;
}

static size_t read_since_of(struct console *c, int64_t from, char *buf, size_t max)
{
	uint64_t pos = from < 0 ? 0 : (uint64_t)from;
	size_t n;

	if (c == NULL || max == 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	if (c->ring.end > pos && c->ring.end - pos > max)
		pos = c->ring.end - max;
	n = tb_ring_read(&c->ring, &pos, buf, max);
	pthread_mutex_unlock(&c->mu);
	return n;
}

size_t tb_console_read_since(struct tb_consoles *cs, const char *host, int64_t from, char *buf, size_t max)
{
	size_t r;

	list_read(cs);
	r = read_since_of(find(cs, host), from, buf, max);
	list_done(cs);
	return r;
}
