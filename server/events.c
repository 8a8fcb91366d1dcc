/*
 * events.c - the event bus: ring, store, subscribers: see events.h.
 *
 * Publishing fills the ring and returns; a writer thread stores what was
 * published since its last transaction in one transaction (a tick: under
 * load a tick takes many events, when idle one), and only then makes those
 * events visible to subscribers.  So every event a subscriber ever saw is in
 * the store (resuming after it, even across a restart, works), ids are
 * stored in order, and no publisher waits on SQLite (or on its fsync at a
 * WAL checkpoint) under the bus lock.  A publisher waits only when the
 * writer is a whole ring behind (the ring holds what is not stored yet).
 */
#include "events.h"
#include "validate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store.h"
#include "timeutil.h"

struct slot {
	int64_t id;
	int64_t at; /* unix s */
	char type[40];
	char host[TB_NAME_MAX];
	int64_t matrix;
	char *json; /* the whole event object, compact */
};

struct tb_sub {
	struct tb_events *ev;
	struct tb_sub *next, *prev;
	int64_t cursor; /* last id delivered (or skipped) */
	char host[TB_NAME_MAX];
	char types[256];
	int64_t matrix;
	int hide_audit;
	int64_t owner;
	int64_t session;
	int64_t ends_at;         /* unix s (0: never); its first read from then on closes it */
	int64_t lifetime_end_ms; /* tb_monotonic_ms: TB_EVENTS_MAX_LIFETIME_S after it began */
	int reset_ahead;         /* resumed after an id this bus never had */
	int announce;            /* live only: say first where the stream starts */
	tb_events_wake_fn wake;
	void *cls;
	int waiting; /* told TB_SUB_WAIT; wake on the next event */
	int dropped;
	char *carry; /* the rest of an event longer than a read */
	size_t carry_len, carry_off;
};

struct tb_events {
	struct tb_store *st;
	pthread_mutex_t lock;
	struct slot ring[TB_EVENTS_RING];
	int64_t last;   /* last id published */
	int64_t stored; /* last id the writer committed (or gave up on): subscribers see up to here */
	int64_t floor;  /* no id below it is kept (the store's retention at start) */
	struct tb_sub *subs;
	size_t nsubs;
	int closing;
	uint64_t published, dropped, pruned;
	unsigned int per_token; /* the cap of open subscriptions per owner */
	pthread_t writer;
	int writer_up;          /* the writer thread runs (joined by close) */
	int stop;               /* the writer stores what is left, then ends */
	pthread_cond_t work;    /* to the writer: something was published, or stop */
	pthread_cond_t written; /* from the writer: stored moved on, or it ended */
	uint64_t batches;       /* transactions the writer made */
};

/* The most events one transaction stores (the rows' array is on the heap). */
#define WRITE_BATCH 1024

static struct slot *slot_of(struct tb_events *ev, int64_t id)
{
	return &ev->ring[(uint64_t)id % TB_EVENTS_RING];
}

/* Oldest id the ring still holds (lock held). */
static int64_t ring_oldest(struct tb_events *ev)
{
	int64_t oldest = ev->last - TB_EVENTS_RING + 1;

	if (oldest < ev->floor)
		oldest = ev->floor;
	return oldest < 1 ? 1 : oldest;
}

static void fill_slot(struct slot *s, int64_t id, int64_t at, const char *type, const char *host, int64_t matrix,
		      char *json)
{
	free(s->json);
	s->id = id;
	s->at = at;
	snprintf(s->type, sizeof(s->type), "%s", type);
	snprintf(s->host, sizeof(s->host), "%s", host != NULL ? host : "");
	s->matrix = matrix;
	s->json = json;
}

static void load_kept(void *cls, const struct tb_event_row *r)
{
	struct tb_events *ev = cls;
	char *copy = strdup(r->json);

	if (copy == NULL)
		return;
	fill_slot(slot_of(ev, r->id), r->id, r->at, r->type, r->host, r->matrix, copy);
	if (ev->floor == 0 || r->id < ev->floor)
		ev->floor = r->id;
	if (r->id > ev->last)
		ev->last = r->id;
}

/* The store's retention: the newest TB_EVENTS_KEEP, none older than
 * TB_EVENTS_KEEP_DAYS.  Returns how many went (no lock needed: the store
 * has its own). */
static uint64_t prune(struct tb_events *ev, int64_t last, int64_t now)
{
	int64_t deleted = 0;

	if (tb_store_event_prune(ev->st, last - TB_EVENTS_KEEP + 1, now - (int64_t)TB_EVENTS_KEEP_DAYS * 86400,
				 &deleted) == 0)
		return (uint64_t)deleted;
	return 0;
}

static void *writer_main(void *cls);

int tb_events_new(struct tb_store *st, struct tb_events **out, struct tb_error *err)
{
	struct tb_events *ev = calloc(1, sizeof(*ev));
	int64_t last = 0;
	int rc;

	*out = NULL;
	if (ev == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	ev->st = st;
	ev->per_token = TB_EVENTS_PER_TOKEN;
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->work, NULL);
	pthread_cond_init(&ev->written, NULL);
	/* Ids continue across restarts, so Last-Event-ID stays meaningful. */
	if ((rc = tb_store_event_last(st, &last, err)) != 0) {
		tb_events_free(ev);
		return rc;
	}
	ev->pruned = prune(ev, last, tb_now()); /* what aged while testbedd was down: before the ring is filled */
	if ((rc = tb_store_event_each(st, last - TB_EVENTS_RING, TB_EVENTS_RING, load_kept, ev, err)) != 0) {
		tb_events_free(ev);
		return rc;
	}
	ev->last = ev->stored = last;
	if (ev->floor == 0)
		ev->floor = last + 1; /* nothing kept: ids go on from last */
	if (pthread_create(&ev->writer, NULL, writer_main, ev) != 0) {
		tb_events_free(ev);
		return tb_fail(err, TB_ERR_NOMEM, "", "cannot start the event bus's writer thread");
	}
	ev->writer_up = 1;
	*out = ev;
	return 0;
}

void tb_events_set_per_token(struct tb_events *ev, unsigned int n)
{
	pthread_mutex_lock(&ev->lock);
	ev->per_token = n > 0 ? n : TB_EVENTS_PER_TOKEN;
	pthread_mutex_unlock(&ev->lock);
}

/* Store what is left and end the writer (once; not from the writer). */
static void stop_writer(struct tb_events *ev)
{
	int up;

	pthread_mutex_lock(&ev->lock);
	up = ev->writer_up;
	ev->writer_up = 0;
	ev->stop = 1;
	pthread_cond_signal(&ev->work);
	pthread_cond_broadcast(&ev->written);
	pthread_mutex_unlock(&ev->lock);
	if (up)
		pthread_join(ev->writer, NULL);
}

void tb_events_close(struct tb_events *ev)
{
	if (ev == NULL)
		return;
	pthread_mutex_lock(&ev->lock);
	ev->closing = 1;
	for (struct tb_sub *s = ev->subs; s != NULL; s = s->next) {
		if (s->waiting) {
			s->waiting = 0;
			s->wake(s->cls);
		}
	}
	pthread_cond_broadcast(&ev->written); /* a publisher waiting for room fails now */
	pthread_mutex_unlock(&ev->lock);
	stop_writer(ev);
}

void tb_events_flush(struct tb_events *ev)
{
	int64_t target;

	pthread_mutex_lock(&ev->lock);
	target = ev->last;
	while (ev->stored < target && ev->writer_up)
		pthread_cond_wait(&ev->written, &ev->lock);
	pthread_mutex_unlock(&ev->lock);
}

void tb_events_free(struct tb_events *ev)
{
	if (ev == NULL)
		return;
	stop_writer(ev);
	pthread_mutex_lock(&ev->lock);
	ev->closing = 1;
	for (struct tb_sub *s = ev->subs; s != NULL; s = s->next) {
		s->ev = NULL; /* detached: its owner frees it later */
		if (s->waiting) {
			s->waiting = 0;
			s->wake(s->cls);
		}
	}
	ev->subs = NULL;
	pthread_mutex_unlock(&ev->lock);
	for (size_t i = 0; i < TB_EVENTS_RING; i++)
		free(ev->ring[i].json);
	pthread_cond_destroy(&ev->work);
	pthread_cond_destroy(&ev->written);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

static int matches(const struct tb_sub *s, const struct slot *e)
{
	if (s->hide_audit && strcmp(e->type, "audit") == 0)
		return 0;
	if (s->host[0] != '\0' && strcmp(s->host, e->host) != 0)
		return 0;
	if (s->matrix != 0 && s->matrix != e->matrix)
		return 0;
	if (s->types[0] != '\0') {
		const char *p = s->types;

		while (*p != '\0') {
			size_t n = strcspn(p, ",");
			int prefix = n > 0 && p[n - 1] == '.';

			if (prefix ? strncmp(e->type, p, n) == 0 : strlen(e->type) == n && strncmp(e->type, p, n) == 0)
				return 1;
			p += n;
			if (*p == ',')
				p++;
		}
		return 0;
	}
	return 1;
}

int64_t tb_events_publish(struct tb_events *ev, const char *type, const char *host, int64_t matrix, json_t *data)
{
	char at[TB_TIME_MAX];
	json_t *obj;
	char *text;
	int64_t id, ms = tb_now_ms();

	if (data == NULL)
		return TB_ERR_NOMEM;
	tb_time_format_ms(ms, at);
	pthread_mutex_lock(&ev->lock);
	/* The ring holds what is not stored yet: wait for room (only when the
	 * writer is a whole ring behind, the store stalled). */
	while (!ev->closing && ev->writer_up && ev->last - ev->stored >= TB_EVENTS_RING)
		pthread_cond_wait(&ev->written, &ev->lock);
	if (ev->closing || !ev->writer_up) {
		pthread_mutex_unlock(&ev->lock);
		json_decref(data);
		return TB_ERR_CANCELED;
	}
	id = ev->last + 1;
	obj = json_pack("{s:I, s:s, s:s, s:o, s:o, s:o}", "id", (json_int_t)id, "at", at, "type", type, "host",
			host != NULL ? json_string(host) : json_null(), "matrix",
			matrix != 0 ? json_integer(matrix) : json_null(), "data", data);
	text = obj != NULL ? json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(obj);
	if (text == NULL) {
		pthread_mutex_unlock(&ev->lock);
		return TB_ERR_NOMEM;
	}
	ev->last = id;
	ev->published++;
	fill_slot(slot_of(ev, id), id, ms / 1000, type, host, matrix, text);
	pthread_cond_signal(&ev->work);
	pthread_mutex_unlock(&ev->lock);
	return id;
}

/* After the writer stored (lo..hi]: drop who lags too far, wake who waits
 * for one of them (lock held). */
static void wake_for(struct tb_events *ev, int64_t lo, int64_t hi)
{
	for (struct tb_sub *s = ev->subs; s != NULL; s = s->next) {
		if (hi - s->cursor > TB_EVENTS_MAX_LAG && !s->dropped) {
			s->dropped = 1;
			ev->dropped++;
		}
		if (!s->waiting)
			continue;
		if (s->dropped) {
			s->waiting = 0;
			s->wake(s->cls);
			continue;
		}
		for (int64_t id = s->cursor > lo ? s->cursor + 1 : lo + 1; id <= hi; id++) {
			if (matches(s, slot_of(ev, id))) {
				s->waiting = 0;
				s->wake(s->cls);
				break;
			}
		}
	}
}

/* Store slots (lo..hi] in one transaction; when that fails, one by one, so
 * that one bad row loses only itself.  The slots are not overwritten
 * meanwhile: publishing waits while the ring is full of unstored events. */
static void write_batch(struct tb_events *ev, struct tb_event_row *rows, int64_t lo, int64_t hi)
{
	size_t n = 0;

	for (int64_t id = lo + 1; id <= hi; id++) {
		const struct slot *e = slot_of(ev, id);

		if (e->id != id || e->json == NULL)
			continue;
		rows[n++] = (struct tb_event_row){.id = id,
						  .at = e->at,
						  .type = e->type,
						  .host = e->host[0] != '\0' ? e->host : NULL,
						  .matrix = e->matrix,
						  .json = e->json};
	}
	if (tb_store_event_insert_many(ev->st, rows, n, NULL) == 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (tb_store_event_insert(ev->st, &rows[i], NULL) != 0)
			tb_warn("events", "event %lld not persisted", (long long)rows[i].id);
}

/* The writer: whatever was published since its last transaction, in one
 * transaction; then it is visible.  Ends when stopped, with nothing left. */
static void *writer_main(void *cls)
{
	struct tb_events *ev = cls;
	struct tb_event_row *rows = malloc(WRITE_BATCH * sizeof(*rows));

	pthread_mutex_lock(&ev->lock);
	for (;;) {
		int64_t lo, hi;
		uint64_t gone = 0;

		while (ev->stored == ev->last && !ev->stop)
			pthread_cond_wait(&ev->work, &ev->lock);
		if (ev->stored == ev->last)
			break;
		lo = ev->stored;
		hi = ev->last - lo > WRITE_BATCH ? lo + WRITE_BATCH : ev->last;
		pthread_mutex_unlock(&ev->lock);
		if (rows != NULL)
			write_batch(ev, rows, lo, hi);
		else
			tb_warn("events", "events %lld-%lld not persisted (out of memory)", (long long)lo + 1,
				(long long)hi);
		if (hi / 1000 != lo / 1000)
			gone = prune(ev, hi, tb_now());
		pthread_mutex_lock(&ev->lock);
		ev->stored = hi;
		ev->batches++;
		ev->pruned += gone;
		wake_for(ev, lo, hi);
		pthread_cond_broadcast(&ev->written);
	}
	pthread_cond_broadcast(&ev->written);
	pthread_mutex_unlock(&ev->lock);
	free(rows);
	return NULL;
}

int64_t tb_events_last_id(struct tb_events *ev)
{
	int64_t id;

	pthread_mutex_lock(&ev->lock);
	id = ev->last;
	pthread_mutex_unlock(&ev->lock);
	return id;
}

/* 1 when s is over: dropped, or its end time passed (lock held).  The
 * lifetime runs on the monotonic clock (a clock step neither ends streams
 * nor keeps them); a session's expiry is a wall-clock time. */
struct clocks {
	int64_t wall_s, mono_ms;
};

static struct clocks clocks_now(void)
{
	return (struct clocks){.wall_s = tb_now_ms() / 1000, .mono_ms = tb_monotonic_ms()};
}

static int ended(const struct tb_sub *s, struct clocks now)
{
	return s->dropped || (s->ends_at != 0 && now.wall_s >= s->ends_at) || now.mono_ms >= s->lifetime_end_ms;
}

/* TB_ERR_RATE_LIMITED when owner has ev->per_token subscriptions that have
 * not ended (lock held). */
static int over_cap(struct tb_events *ev, int64_t owner, struct tb_error *err)
{
	struct clocks now = clocks_now();
	size_t n = 0;

	if (owner == 0)
		return 0;
	for (const struct tb_sub *s = ev->subs; s != NULL; s = s->next)
		if (s->owner == owner && !ended(s, now))
			n++;
	if (n < ev->per_token)
		return 0;
	return tb_fail(err, TB_ERR_RATE_LIMITED, "",
		       "this token already has %u event streams open (the most one token may have): "
		       "close one, or use another token",
		       ev->per_token);
}

int tb_events_check_cap(struct tb_events *ev, int64_t owner, struct tb_error *err)
{
	int rc;

	pthread_mutex_lock(&ev->lock);
	rc = over_cap(ev, owner, err);
	pthread_mutex_unlock(&ev->lock);
	return rc;
}

int tb_events_subscribe(struct tb_events *ev, int64_t since, const struct tb_events_filter *f, tb_events_wake_fn wake,
			void *cls, struct tb_sub **out, struct tb_error *err)
{
	struct tb_sub *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (s == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (f->types != NULL && strlen(f->types) >= sizeof(s->types)) {
		free(s);
		return tb_fail(err, TB_ERR_INVALID, "type", "type filter too long");
	}
	snprintf(s->host, sizeof(s->host), "%s", f->host != NULL ? f->host : "");
	snprintf(s->types, sizeof(s->types), "%s", f->types != NULL ? f->types : "");
	s->matrix = f->matrix;
	s->hide_audit = f->hide_audit;
	s->owner = f->owner;
	s->session = f->session;
	s->ends_at = f->ends_at;
	s->lifetime_end_ms = tb_monotonic_ms() + (int64_t)TB_EVENTS_MAX_LIFETIME_S * 1000;
	s->wake = wake;
	s->cls = cls;
	pthread_mutex_lock(&ev->lock);
	/* counted and added under one lock: no two callers both get the last place */
	if ((rc = over_cap(ev, f->owner, err)) != 0) {
		pthread_mutex_unlock(&ev->lock);
		free(s);
		return rc;
	}
	s->ev = ev;
	/* since < 0: live only.  A since this bus never reached (a restored or
	 * replaced state directory): the client's state is stale, tell it. */
	s->reset_ahead = since > ev->last;
	s->announce = since < 0;
	s->cursor = since < 0 || since > ev->last ? ev->stored : since;
	s->next = ev->subs;
	if (ev->subs != NULL)
		ev->subs->prev = s;
	ev->subs = s;
	ev->nsubs++;
	pthread_mutex_unlock(&ev->lock);
	*out = s;
	return 0;
}

void tb_events_unsubscribe(struct tb_sub *s)
{
	struct tb_events *ev;

	if (s == NULL)
		return;
	ev = s->ev;
	if (ev != NULL) {
		pthread_mutex_lock(&ev->lock);
		if (s->ev != NULL) {
			if (s->prev != NULL)
				s->prev->next = s->next;
			else
				ev->subs = s->next;
			if (s->next != NULL)
				s->next->prev = s->prev;
			ev->nsubs--;
		}
		pthread_mutex_unlock(&ev->lock);
	}
	free(s->carry);
	free(s);
}

/* Append one SSE record (id < 0: without an id line); returns bytes used,
 * or 0 when it does not fit (then, if the buffer is empty, it is split
 * through carry). */
static size_t put_record(struct tb_sub *s, char *buf, size_t len, size_t used, int64_t id, const char *type,
			 const char *json)
{
	size_t need;
	char head[96];
	int hn;

	if (id >= 0)
		hn = snprintf(head, sizeof(head), "id: %lld\nevent: %s\ndata: ", (long long)id, type);
	else
		hn = snprintf(head, sizeof(head), "event: %s\ndata: ", type);
	need = (size_t)hn + strlen(json) + 2;
	if (used + need <= len) {
		memcpy(buf + used, head, (size_t)hn);
		memcpy(buf + used + (size_t)hn, json, strlen(json));
		memcpy(buf + used + need - 2, "\n\n", 2);
		return need;
	}
	if (used > 0)
		return 0;
	/* one record longer than the whole buffer: keep the rest for later */
	s->carry = malloc(need);
	if (s->carry == NULL)
		return 0;
	memcpy(s->carry, head, (size_t)hn);
	memcpy(s->carry + hn, json, strlen(json));
	memcpy(s->carry + need - 2, "\n\n", 2);
	s->carry_len = need;
	s->carry_off = 0;
	return 0;
}

struct store_page {
	struct tb_sub *sub;
	char *buf;
	size_t len, used;
	int full;
	int rows;
};

static void page_row(void *cls, const struct tb_event_row *r)
{
	struct store_page *p = cls;
	struct tb_sub *s = p->sub;
	struct slot e = {.id = r->id, .matrix = r->matrix};
	size_t n;

	if (p->full)
		return;
	if (p->rows++ == 0 && r->id > s->cursor + 1 && s->cursor > 0) {
		/* The store no longer holds what came right after the cursor:
		 * say so once, so that the client reloads its state. */
		char reset[64];

		snprintf(reset, sizeof(reset), "{\"oldest\":%lld}", (long long)r->id);
		n = put_record(s, p->buf, p->len, p->used, -1, "reset", reset);
		p->used += n;
		if (n == 0) {
			p->full = 1;
			return;
		}
	}
	snprintf(e.type, sizeof(e.type), "%s", r->type);
	snprintf(e.host, sizeof(e.host), "%s", r->host != NULL ? r->host : "");
	if (matches(s, &e)) {
		n = put_record(s, p->buf, p->len, p->used, r->id, r->type, r->json);
		if (n == 0 && s->carry == NULL) {
			p->full = 1;
			return;
		}
		p->used += n;
	}
	s->cursor = r->id;
	if (s->carry != NULL)
		p->full = 1;
}

enum tb_sub_status tb_sub_next(struct tb_sub *s, char *buf, size_t len, size_t *n)
{
	struct tb_events *ev = s->ev;
	size_t used = 0;

	*n = 0;
	if (s->carry != NULL) {
		size_t k = s->carry_len - s->carry_off < len ? s->carry_len - s->carry_off : len;

		memcpy(buf, s->carry + s->carry_off, k);
		s->carry_off += k;
		if (s->carry_off == s->carry_len) {
			free(s->carry);
			s->carry = NULL;
		}
		*n = k;
		return TB_SUB_DATA;
	}
	if (ev == NULL)
		return TB_SUB_CLOSED;
	pthread_mutex_lock(&ev->lock);
	if (ev->closing || ended(s, clocks_now())) {
		pthread_mutex_unlock(&ev->lock);
		return TB_SUB_CLOSED;
	}
	if (s->reset_ahead) {
		char reset[64];

		s->reset_ahead = 0;
		snprintf(reset, sizeof(reset), "{\"oldest\":%lld}", (long long)ring_oldest(ev));
		*n = put_record(s, buf, len, 0, -1, "reset", reset);
		pthread_mutex_unlock(&ev->lock);
		if (*n > 0)
			return TB_SUB_DATA;
		return tb_sub_next(s, buf, len, n);
	}
	if (s->announce) {
		/* "stream" with the id it starts after: a client that loses the
		 * stream before any event resumes from here, missing nothing */
		char pos[48];

		s->announce = 0;
		snprintf(pos, sizeof(pos), "{\"last_id\":%lld}", (long long)s->cursor);
		*n = put_record(s, buf, len, 0, s->cursor, "stream", pos);
		pthread_mutex_unlock(&ev->lock);
		if (*n > 0)
			return TB_SUB_DATA;
		return tb_sub_next(s, buf, len, n);
	}
	if (s->cursor < ev->stored && s->cursor + 1 < ring_oldest(ev)) {
		/* Behind the ring: replay a page from the store, unlocked. */
		struct store_page p = {.sub = s, .buf = buf, .len = len};

		pthread_mutex_unlock(&ev->lock);
		if (tb_store_event_each(ev->st, s->cursor, 256, page_row, &p, NULL) != 0)
			return TB_SUB_CLOSED;
		if (p.rows == 0) {
			/* nothing kept past the cursor: continue from the ring */
			pthread_mutex_lock(&ev->lock);
			if (s->cursor + 1 < ring_oldest(ev)) {
				s->cursor = ring_oldest(ev) - 1;
				s->reset_ahead = 1; /* what it resumed after is gone: say so */
			}
			pthread_mutex_unlock(&ev->lock);
		}
		if (p.used > 0) {
			*n = p.used;
			return TB_SUB_DATA;
		}
		return tb_sub_next(s, buf, len, n);
	}
	while (s->cursor < ev->stored) {
		struct slot *e = slot_of(ev, s->cursor + 1);
		size_t k;

		if (e->id != s->cursor + 1 || e->json == NULL) {
			s->cursor++; /* lost from memory (out of memory): skip */
			continue;
		}
		if (matches(s, e)) {
			k = put_record(s, buf, len, used, e->id, e->type, e->json);
			if (k == 0 && s->carry == NULL)
				break;
			used += k;
		}
		s->cursor++;
		if (s->carry != NULL)
			break;
	}
	if (used == 0 && s->carry == NULL) {
		s->waiting = 1;
		pthread_mutex_unlock(&ev->lock);
		return TB_SUB_WAIT;
	}
	pthread_mutex_unlock(&ev->lock);
	if (used == 0)
		return tb_sub_next(s, buf, len, n);
	*n = used;
	return TB_SUB_DATA;
}

/* End the subscriptions whose owner (or, by_session, session) is id. */
static void drop_where(struct tb_events *ev, int by_session, int64_t id)
{
	pthread_mutex_lock(&ev->lock);
	for (struct tb_sub *s = ev->subs; s != NULL; s = s->next) {
		if ((by_session ? s->session : s->owner) != id || s->dropped)
			continue;
		s->dropped = 1;
		if (s->waiting) {
			s->waiting = 0;
			s->wake(s->cls);
		}
	}
	pthread_mutex_unlock(&ev->lock);
}

void tb_events_drop_owner(struct tb_events *ev, int64_t owner)
{
	drop_where(ev, 0, owner);
}

void tb_events_drop_session(struct tb_events *ev, int64_t session)
{
	if (session != 0)
		drop_where(ev, 1, session);
}

void tb_events_stats(struct tb_events *ev, struct tb_events_stats *out)
{
	pthread_mutex_lock(&ev->lock);
	out->published = ev->published;
	out->pruned = ev->pruned;
	out->dropped_subscribers = ev->dropped;
	out->subscribers = ev->nsubs;
	out->batches = ev->batches;
	pthread_mutex_unlock(&ev->lock);
}
