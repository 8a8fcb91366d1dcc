/*
 * publish_bench.c - publishing throughput of the event bus (issue 20 item 0;
 * tests/bench/README.md section 6; ./deploy/bench --only publish).  Linked
 * against libtestbed.
 *
 * On a fresh store each (a temporary directory, the store's own settings:
 * WAL, synchronous=NORMAL), T publisher threads publish N events of a
 * run.interval's size (about 600 bytes of JSON) in total:
 *
 *   bus      tb_events_publish as it is (a writer thread stores what was
 *            published since its last transaction in one transaction), until
 *            tb_events_flush says every event is stored;
 *   old      the reference: what tb_events_publish did before, one INSERT
 *            (one transaction) per event under the bus's mutex, with the
 *            same JSON work;
 *   batched  the ceiling: raw tb_store_event_insert_many of 1,024 rows a
 *            transaction, one thread, JSON made before.
 *
 * Printed per mode and T: events/s, each publish call's p50/p99/max (the
 * time a publisher, e.g. a run's interval reader, is held), events a
 * transaction; for the bus also when each event became readable by a
 * subscriber (a thread reading it with tb_sub_next).  Then the same paced,
 * N/10 events 1 ms apart (the bus not saturated).  The ratios bus/old come from the same run on the same
 * machine; nothing is asserted (exit 1 only when something failed).
 *
 *   publish_bench [--events N] [--smoke]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "events.h"
#include "store.h"

/* Built with -DTB_BUS_BEFORE against the library of the commit before the
 * bus's writer thread (no tb_events_flush, no batches: it published
 * synchronously), the "bus" lines are the old bus itself: the same
 * bench, before and after, in the same hour. */
#ifdef TB_BUS_BEFORE
#define tb_events_flush(ev) ((void)(ev))
#define BATCHES(es) 0
#else
#define BATCHES(es) ((es).batches)
#endif

char *mkdtemp(char *template);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* An interval's data, as the runner publishes it. */
static json_t *interval(int i)
{
	return json_pack("{s:i, s:s, s:i, s:{s:f, s:f, s:f, s:I, s:f, s:b, s:{s:I, s:f, s:I, s:I, s:I}}}", "run", 7,
			 "side", "server", "n", i, "interval", "start", (double)i, "end", (double)i + 1.0, "seconds",
			 1.000041, "bytes", (json_int_t)1172373504, "bits_per_second", 9378886843.21, "omitted", 0,
			 "sum", "retransmits", (json_int_t)12, "rtt_ms", 0.043, "snd_cwnd", (json_int_t)3141592, "pmtu",
			 (json_int_t)1500, "packets", (json_int_t)809400);
}

struct fresh {
	char dir[64], path[128];
	struct tb_store *st;
};

static int open_fresh(struct fresh *f)
{
	struct tb_error err = {0};

	snprintf(f->dir, sizeof(f->dir), "/tmp/tbpub-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	if (tb_store_open(f->path, &f->st, &err) != 0) {
		fprintf(stderr, "publish_bench: %s\n", err.message);
		return -1;
	}
	return 0;
}

static void close_fresh(struct fresh *f)
{
	char p[160];
	static const char *const sides[] = {"", "-wal", "-shm"};

	tb_store_close(f->st);
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", f->path, sides[i]);
		unlink(p);
	}
	rmdir(f->dir);
}

/* ---- the old publish, kept here as the reference ---- */
struct old_bus {
	pthread_mutex_t lock;
	struct tb_store *st;
	int64_t last;
};

static int64_t old_publish(struct old_bus *b, const char *type, json_t *data)
{
	json_t *obj;
	char *text;
	int64_t id;
	struct tb_event_row row;

	pthread_mutex_lock(&b->lock);
	id = ++b->last;
	obj = json_pack("{s:I, s:s, s:s, s:n, s:n, s:o}", "id", (json_int_t)id, "at", "2026-12-04T10:00:00.000Z",
			"type", type, "host", "matrix", "data", data);
	text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(obj);
	row = (struct tb_event_row){.id = id, .at = (int64_t)time(NULL), .type = type, .json = text};
	if (tb_store_event_insert(b->st, &row, NULL) != 0)
		id = -1;
	free(text);
	pthread_mutex_unlock(&b->lock);
	return id;
}

/* ---- publishers ---- */
struct pub {
	int mode; /* 0 bus, 1 old */
	struct tb_events *ev;
	struct old_bus *old;
	int first, count;
	double *lat;   /* ms per call, count of them */
	double *start; /* by id: when its publish began (bus) */
	long pace_us;  /* a pause after each publish (0: none) */
	int failed;
};

/* ---- a subscriber of the bus: when each id became readable ---- */
struct reader {
	struct tb_sub *sub;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int woke;
	double *seen; /* by id */
	int64_t want, got;
};

static void reader_wake(void *cls)
{
	struct reader *r = cls;

	pthread_mutex_lock(&r->mu);
	r->woke = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void *reader_main(void *cls)
{
	struct reader *r = cls;
	static char buf[65536];
	size_t n;

	while (r->got < r->want) {
		enum tb_sub_status st = tb_sub_next(r->sub, buf, sizeof(buf) - 1, &n);
		double t = now_ms();

		if (st == TB_SUB_CLOSED)
			break;
		if (st == TB_SUB_WAIT) {
			pthread_mutex_lock(&r->mu);
			while (!r->woke)
				pthread_cond_wait(&r->cv, &r->mu);
			r->woke = 0;
			pthread_mutex_unlock(&r->mu);
			continue;
		}
		buf[n] = '\0';
		for (const char *q = buf; (q = strstr(q, "id: ")) != NULL; q += 4) {
			long long id = strtoll(q + 4, NULL, 10);

			if ((q == buf || q[-1] == '\n') && id >= 1 && id <= r->want) {
				r->seen[id] = t;
				r->got++;
			}
		}
	}
	return NULL;
}

static void *publisher(void *cls)
{
	struct pub *p = cls;

	for (int i = 0; i < p->count; i++) {
		json_t *d = interval(p->first + i);
		double t0 = now_ms();
		int64_t id = p->mode == 0 ? tb_events_publish(p->ev, "run.interval", NULL, 0, d)
					  : old_publish(p->old, "run.interval", d);

		p->lat[i] = now_ms() - t0;
		if (p->start != NULL && id > 0)
			p->start[id] = t0;
		if (p->pace_us > 0)
			nanosleep(&(struct timespec){.tv_nsec = p->pace_us * 1000}, NULL);
		if (id <= 0)
			p->failed = 1;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n);

	return v[k >= n ? n - 1 : k];
}

/* One mode with T threads: prints and returns 0, or -1. */
static int run_mode(int mode, int threads, int n, long pace_us)
{
	static const char *const names[] = {"bus", "old"};
	struct fresh f;
	struct tb_events *ev = NULL;
	struct old_bus old = {.last = 0};
	struct tb_events_stats es = {0};
	struct tb_error err = {0};
	pthread_t t[16];
	struct pub p[16];
	double *lat = calloc((size_t)n, sizeof(double)), t0, wall;
	int per = n / threads, failed = 0;
	struct reader rd = {.want = (int64_t)(n / threads) * threads};
	double *start = calloc((size_t)n + 1, sizeof(double)), *seen = calloc((size_t)n + 1, sizeof(double));
	pthread_t rt;
	struct tb_events_filter all = {0};

	if (lat == NULL || open_fresh(&f) != 0)
		return -1;
	if (mode == 0 && tb_events_new(f.st, &ev, &err) != 0) {
		fprintf(stderr, "publish_bench: %s\n", err.message);
		return -1;
	}
	pthread_mutex_init(&old.lock, NULL);
	old.st = f.st;
	pthread_mutex_init(&rd.mu, NULL);
	pthread_cond_init(&rd.cv, NULL);
	rd.seen = seen;
	if (mode == 0) {
		if (start == NULL || seen == NULL ||
		    tb_events_subscribe(ev, 0, &all, reader_wake, &rd, &rd.sub, &err) != 0 ||
		    pthread_create(&rt, NULL, reader_main, &rd) != 0)
			return -1;
	}
	t0 = now_ms();
	for (int i = 0; i < threads; i++) {
		p[i] = (struct pub){.mode = mode,
				    .ev = ev,
				    .old = &old,
				    .first = i * per,
				    .count = per,
				    .lat = lat + i * per,
				    .start = mode == 0 ? start : NULL,
				    .pace_us = pace_us};
		pthread_create(&t[i], NULL, publisher, &p[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		failed |= p[i].failed;
	}
	if (mode == 0)
		tb_events_flush(ev);
	wall = now_ms() - t0;
	if (mode == 0) {
		/* publish -> readable by a subscriber, per event */
		size_t k = 0;

		pthread_join(rt, NULL);
		tb_events_unsubscribe(rd.sub);
		for (int64_t id = 1; id <= rd.want; id++)
			if (seen[id] > 0 && start[id] > 0)
				seen[k++] = seen[id] - start[id];
		qsort(seen, k, sizeof(double), cmp_double);
		if (k > 0) {
			printf("  bus     %d thread%s: publish -> readable by a subscriber p50 %.3f ms p99 %.3f ms max %.1f ms "
			       "(%zu events; before, an event was readable when its publish returned)\n",
			       threads, threads == 1 ? " " : "s", pct(seen, k, 50), pct(seen, k, 99), seen[k - 1], k);
			printf("RESULT visible threads=%d paced=%d p50_ms=%.4f p99_ms=%.4f max_ms=%.2f\n", threads,
			       pace_us > 0, pct(seen, k, 50), pct(seen, k, 99), seen[k - 1]);
		}
		if ((int64_t)k != rd.want)
			failed = 1;
	}
	pthread_mutex_destroy(&rd.mu);
	pthread_cond_destroy(&rd.cv);
	free(start);
	if (mode == 0) {
		tb_events_stats(ev, &es);
		tb_events_close(ev);
		tb_events_free(ev);
	}
	pthread_mutex_destroy(&old.lock);
	{
		int64_t last = 0;

		tb_store_event_last(f.st, &last, NULL);
		if (last != (int64_t)per * threads)
			failed = 1;
	}
	close_fresh(&f);
	qsort(lat, (size_t)(per * threads), sizeof(double), cmp_double);
	printf("  %-7s %d thread%s: %8.0f events/s (%.0f ms for %d, all stored), a publish call p50 %.3f ms p99 %.3f "
	       "ms max %.1f ms, %.1f events a transaction\n",
	       names[mode], threads, threads == 1 ? " " : "s", (double)(per * threads) / wall * 1000.0, wall,
	       per * threads, pct(lat, (size_t)(per * threads), 50), pct(lat, (size_t)(per * threads), 99),
	       lat[per * threads - 1], mode == 0 && BATCHES(es) > 0 ? (double)es.published / (double)BATCHES(es) : 1.0);
	printf("RESULT publish mode=%s%s threads=%d per_s=%.0f p50_ms=%.4f p99_ms=%.4f max_ms=%.2f\n", names[mode],
	       pace_us > 0 ? "_paced" : "", threads, (double)(per * threads) / wall * 1000.0,
	       pct(lat, (size_t)(per * threads), 50), pct(lat, (size_t)(per * threads), 99), lat[per * threads - 1]);
	free(lat);
	free(seen);
	return failed ? -1 : 0;
}

/* The ceiling: raw batched inserts of ready JSON. */
static int run_batched(int n)
{
	struct fresh f;
	struct tb_event_row *rows = calloc((size_t)n, sizeof(*rows));
	char **texts = calloc((size_t)n, sizeof(char *));
	double t0, wall;
	int rc = 0;

	if (rows == NULL || texts == NULL || open_fresh(&f) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		json_t *d = interval(i);

		texts[i] = json_dumps(d, JSON_COMPACT);
		json_decref(d);
		rows[i] = (struct tb_event_row){
			.id = i + 1, .at = (int64_t)time(NULL), .type = "run.interval", .json = texts[i]};
	}
	t0 = now_ms();
#ifndef TB_BUS_BEFORE
	for (int i = 0; i < n && rc == 0; i += 1024)
		rc = tb_store_event_insert_many(f.st, rows + i, (size_t)(n - i < 1024 ? n - i : 1024), NULL);
#endif
	wall = now_ms() - t0;
	close_fresh(&f);
	for (int i = 0; i < n; i++)
		free(texts[i]);
	free(texts);
	free(rows);
	printf("  batched 1 thread : %8.0f events/s (raw inserts, 1,024 a transaction, JSON made before)\n",
	       (double)n / wall * 1000.0);
	printf("RESULT publish mode=batched threads=1 per_s=%.0f\n", (double)n / wall * 1000.0);
	return rc;
}

int main(int argc, char **argv)
{
	int n = 20000, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0)
			n = 2000;
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			n = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: publish_bench [--events N] [--smoke]\n");
			return 2;
		}
	}
	if (n < 16)
		n = 16;
	printf("publishing %d run.interval events (about 600 bytes each), each way on a fresh store\n", n);
	for (int threads = 1; threads <= 4 && rc == 0; threads *= 4) {
		rc |= run_mode(1, threads, n, 0);
		rc |= run_mode(0, threads, n, 0);
	}
	rc |= run_batched(n);
	/* paced (1 ms apart): the delay a subscriber sees when the bus is not saturated */
	printf("paced: %d events, 1 thread, 1 ms apart\n", n / 10);
	rc |= run_mode(1, 1, n / 10, 1000);
	rc |= run_mode(0, 1, n / 10, 1000);
	if (rc != 0)
		fprintf(stderr, "publish_bench: something failed (an event not stored, a store that did not open)\n");
	return rc != 0;
}
