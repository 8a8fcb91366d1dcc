/* reserve.c - reservations of hosts, a FIFO queue per host, expiry: see
 * reserve.h. */
#include "reserve.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "store_reserve.h"
#include "ticker.h"
#include "timeutil.h"

struct resv {
	int64_t id; /* 0: free slot */
	int granted;
	char hosts[TB_RESERVE_HOSTS_MAX][64];
	size_t nhosts;
	char owner[64];
	char note[256];
	int64_t asked_at, granted_at, until, length_s;
	uint64_t seq; /* order of asking: the queue's order */
};

struct tb_reserve {
	pthread_mutex_t lock;
	struct tb_events *ev;
	struct tb_store *st; /* NULL: not kept (tests) */
	struct tb_ticker ticker;
	struct resv v[TB_RESERVE_MAX];
	int64_t next_id;
	uint64_t next_seq;
};

/* Keep v's row (lock held); a failure is logged: the reservation holds in
 * memory all the same. */
static void save(struct tb_reserve *r, const struct resv *v)
{
	char hosts[TB_RESERVE_HOSTS_MAX * 65] = "";
	struct tb_error e = {0};
	size_t n = 0;

	if (r->st == NULL)
		return;
	for (size_t i = 0; i < v->nhosts; i++)
		n += (size_t)snprintf(hosts + n, sizeof(hosts) - n, "%s%s", i > 0 ? " " : "", v->hosts[i]);
	if (tb_store_reserve_put(r->st,
				 &(struct tb_reserve_row){v->id, (int64_t)v->seq, hosts, v->owner, v->note, v->granted,
							  v->asked_at, v->granted_at, v->until, v->length_s},
				 &e) != 0)
		tb_warn("reserve", "reservation %lld not kept: %s", (long long)v->id, e.message);
}

static void drop(struct tb_reserve *r, int64_t id)
{
	struct tb_error e = {0};

	if (r->st != NULL && tb_store_reserve_delete(r->st, id, &e) != 0)
		tb_warn("reserve", "reservation %lld not forgotten: %s", (long long)id, e.message);
}

/* A kept row back into a free slot (at start, no lock needed yet). */
static void load_row(void *cls, const struct tb_reserve_row *row)
{
	struct tb_reserve *r = cls;
	struct resv *v = NULL;
	const char *p = row->hosts;

	for (size_t i = 0; i < TB_RESERVE_MAX && v == NULL; i++)
		if (r->v[i].id == 0)
			v = &r->v[i];
	if (v == NULL)
		return;
	v->id = row->id;
	v->seq = (uint64_t)row->seq;
	v->granted = row->granted;
	snprintf(v->owner, sizeof(v->owner), "%s", row->owner);
	snprintf(v->note, sizeof(v->note), "%s", row->note);
	v->asked_at = row->asked_at;
	v->granted_at = row->granted_at;
	v->until = row->until;
	v->length_s = row->length_s;
	while (*p != '\0' && v->nhosts < TB_RESERVE_HOSTS_MAX) {
		size_t len = strcspn(p, " ");

		snprintf(v->hosts[v->nhosts++], sizeof(v->hosts[0]), "%.*s", (int)len, p);
		p += len;
		p += *p == ' ';
	}
	if (v->id >= r->next_id)
		r->next_id = v->id + 1;
	if (v->seq >= r->next_seq)
		r->next_seq = v->seq + 1;
}

int tb_reserve_new(struct tb_events *ev, struct tb_store *st, struct tb_reserve **out, struct tb_error *err)
{
	struct tb_reserve *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	pthread_mutex_init(&r->lock, NULL);
	r->ev = ev;
	r->st = st;
	r->next_id = 1;
	if (st != NULL && (rc = tb_store_reserve_each(st, load_row, r, err)) != 0) {
		tb_reserve_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static void tick(void *cls)
{
	tb_reserve_expire(cls, tb_now());
}

int tb_reserve_start(struct tb_reserve *r, struct tb_error *err)
{
	if (tb_ticker_start(&r->ticker, 1000, tick, r) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the reservations' thread");
	return 0;
}

void tb_reserve_free(struct tb_reserve *r)
{
	if (r == NULL)
		return;
	tb_ticker_stop(&r->ticker);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static int has_host(const struct resv *v, const char *host)
{
	for (size_t i = 0; i < v->nhosts; i++)
		if (strcmp(v->hosts[i], host) == 0)
			return 1;
	return 0;
}

static int overlap(const struct resv *a, const struct resv *b)
{
	for (size_t i = 0; i < a->nhosts; i++)
		if (has_host(b, a->hosts[i]))
			return 1;
	return 0;
}

static json_t *resv_json(const struct tb_reserve *r, const struct resv *v, int64_t now)
{
	json_t *hosts = json_array(), *j;
	int64_t start = v->granted ? v->granted_at : now;
	long position = 0;

	for (size_t i = 0; i < v->nhosts; i++)
		json_array_append_new(hosts, json_string(v->hosts[i]));
	if (!v->granted) {
		/* estimated start: the latest end of what is granted or queued
		 * before it on one of its hosts (queued ones by their length) */
		for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
			const struct resv *o = &r->v[i];

			if (o->id == 0 || o == v)
				continue;
			if (!o->granted && o->seq < v->seq)
				position++;
			if (!overlap(o, v) || (!o->granted && o->seq > v->seq))
				continue;
			if (o->granted && o->until > start)
				start = o->until;
		}
		for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
			const struct resv *o = &r->v[i];

			if (o->id != 0 && !o->granted && o->seq < v->seq && overlap(o, v))
				start += o->length_s;
		}
	}
	j = json_pack("{s:I, s:o, s:s, s:s, s:s, s:o, s:o}", "id", (json_int_t)v->id, "hosts", hosts, "owner", v->owner,
		      "note", v->note, "state", v->granted ? "granted" : "queued", "asked_at",
		      tb_time_json(v->asked_at), "until", tb_time_json(v->granted ? v->until : start + v->length_s));
	if (j == NULL)
		return NULL;
	if (v->granted) {
		json_object_set_new(j, "granted_at", tb_time_json(v->granted_at));
	} else {
		json_object_set_new(j, "position", json_integer(position + 1));
		json_object_set_new(j, "estimated_start", tb_time_json(start));
	}
	return j;
}

static void publish(struct tb_reserve *r, const char *type, const struct resv *v, int64_t now)
{
	if (r->ev != NULL)
		tb_events_publish(r->ev, type, v->nhosts > 0 ? v->hosts[0] : NULL, 0, resv_json(r, v, now));
}

/* Grant, in the order of asking, every queued reservation whose hosts no
 * granted one has and no earlier queued one waits for (lock held). */
static void grant_fitting(struct tb_reserve *r, int64_t now)
{
	for (;;) {
		struct resv *best = NULL;

		for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
			struct resv *v = &r->v[i];
			int blocked = 0;

			if (v->id == 0 || v->granted || (best != NULL && best->seq < v->seq))
				continue;
			for (size_t k = 0; k < TB_RESERVE_MAX && !blocked; k++) {
				const struct resv *o = &r->v[k];

				blocked = o->id != 0 && o != v && (o->granted || o->seq < v->seq) && overlap(o, v);
			}
			if (!blocked)
				best = v;
		}
		if (best == NULL)
			return;
		best->granted = 1;
		best->granted_at = now;
		best->until = now + best->length_s;
		publish(r, "reservation.granted", best, now);
		save(r, best);
	}
}

int tb_reserve_request(struct tb_reserve *r, const char *const hosts[], size_t nhosts, int64_t until, const char *note,
		       const char *owner, int64_t now, json_t **out, struct tb_error *err)
{
	struct resv *v = NULL;
	int rc = 0;

	*out = NULL;
	if (nhosts == 0 || nhosts > TB_RESERVE_HOSTS_MAX)
		return tb_fail(err, TB_ERR_INVALID, "hosts", "hosts must name 1..%d machines", TB_RESERVE_HOSTS_MAX);
	if (until <= now || until - now > TB_RESERVE_MAX_S)
		return tb_fail(err, TB_ERR_INVALID, "until", "until must be in the future, at most %d days ahead",
			       TB_RESERVE_MAX_S / 86400);
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < TB_RESERVE_MAX && rc == 0; i++) {
		const struct resv *o = &r->v[i];

		if (o->id == 0) {
			if (v == NULL)
				v = &r->v[i];
			continue;
		}
		for (size_t k = 0; k < nhosts && rc == 0; k++)
			if (strcmp(o->owner, owner) == 0 && has_host(o, hosts[k]))
				rc = tb_fail(err, TB_ERR_CONFLICT, "hosts",
					     "you already have reservation %lld (%s) on %s: release it first",
					     (long long)o->id, o->granted ? "granted" : "queued", hosts[k]);
	}
	if (rc == 0 && v == NULL)
		rc = tb_fail(err, TB_ERR_CONFLICT, "", "%d reservations are granted or queued: wait for some to end",
			     TB_RESERVE_MAX);
	if (rc == 0) {
		memset(v, 0, sizeof(*v));
		v->id = r->next_id++;
		v->seq = r->next_seq++;
		for (size_t k = 0; k < nhosts; k++)
			snprintf(v->hosts[v->nhosts++], sizeof(v->hosts[0]), "%s", hosts[k]);
		snprintf(v->owner, sizeof(v->owner), "%s", owner);
		snprintf(v->note, sizeof(v->note), "%s", note != NULL ? note : "");
		v->asked_at = now;
		v->length_s = until - now;
		grant_fitting(r, now);
		if (!v->granted) {
			publish(r, "reservation.queued", v, now);
			save(r, v);
		}
		*out = resv_json(r, v, now);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int tb_reserve_release(struct tb_reserve *r, int64_t id, const char *who, int admin, int64_t now, int *broke,
		       struct tb_error *err)
{
	int rc = 0;

	*broke = 0;
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
		struct resv *v = &r->v[i];

		if (v->id != id)
			continue;
		if (strcmp(v->owner, who) != 0 && !admin) {
			rc = tb_fail(err, TB_ERR_FORBIDDEN, "id",
				     "reservation %lld is %s's: only its owner or an admin can end it", (long long)id,
				     v->owner);
			break;
		}
		*broke = strcmp(v->owner, who) != 0;
		publish(r, *broke ? "reservation.broken" : "reservation.released", v, now);
		drop(r, v->id);
		memset(v, 0, sizeof(*v));
		grant_fitting(r, now);
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	if (rc == 0)
		rc = tb_fail(err, TB_ERR_NOT_FOUND, "id", "no reservation %lld", (long long)id);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void tb_reserve_expire(struct tb_reserve *r, int64_t now)
{
	int ended = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
		struct resv *v = &r->v[i];

		if (v->id != 0 && v->granted && v->until <= now) {
			publish(r, "reservation.expired", v, now);
			drop(r, v->id);
			memset(v, 0, sizeof(*v));
			ended = 1;
		}
	}
	if (ended)
		grant_fitting(r, now);
	pthread_mutex_unlock(&r->lock);
}

int tb_reserve_check(struct tb_reserve *r, const char *host, const char *who, struct tb_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < TB_RESERVE_MAX && rc == 0; i++) {
		const struct resv *v = &r->v[i];
		char end[TB_TIME_MAX];

		if (v->id == 0 || !v->granted || !has_host(v, host) || (who != NULL && strcmp(v->owner, who) == 0))
			continue;
		tb_time_format(v->until, end);
		rc = tb_fail(err, TB_ERR_CONFLICT, "name", "%s is reserved by %s until %s (reservation %lld%s%s)", host,
			     v->owner, end, (long long)v->id, v->note[0] ? ": " : "", v->note);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

json_t *tb_reserve_list_json(struct tb_reserve *r, int64_t now)
{
	json_t *list = json_array();

	pthread_mutex_lock(&r->lock);
	for (int granted = 1; granted >= 0; granted--) {
		uint64_t last = 0;
		int first = 1;

		/* in the order of asking: a small selection each round */
		for (;;) {
			const struct resv *next = NULL;

			for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
				const struct resv *v = &r->v[i];

				if (v->id != 0 && v->granted == granted && (first || v->seq > last) &&
				    (next == NULL || v->seq < next->seq))
					next = v;
			}
			if (next == NULL)
				break;
			json_array_append_new(list, resv_json(r, next, now));
			last = next->seq;
			first = 0;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return json_pack("{s:o}", "reservations", list);
}

json_t *tb_reserve_host_json(struct tb_reserve *r, const char *host)
{
	json_t *j = json_null();

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < TB_RESERVE_MAX; i++) {
		const struct resv *v = &r->v[i];

		if (v->id != 0 && v->granted && has_host(v, host)) {
			json_decref(j);
			j = json_pack("{s:I, s:s, s:o, s:s}", "id", (json_int_t)v->id, "owner", v->owner, "until",
				      tb_time_json(v->until), "note", v->note);
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return j != NULL ? j : json_null();
}
