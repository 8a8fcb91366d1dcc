/* metrics.c - Prometheus text exposition: see metrics.h. */
#include "metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "outbuf.h"

#define MAX_SERIES 128
#define NBUCKETS 13

static const double bounds[NBUCKETS - 1] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};

struct series {
	const char *route; /* static strings: routing-table patterns */
	char method[8];
	unsigned int status;
	uint64_t count;
	double sum;
	uint64_t buckets[NBUCKETS]; /* non-cumulative; the last is +Inf */
};

#define MAX_AUTH_SERIES 64
#define MAX_PRUNED 4

struct counter {
	const char *label; /* static string */
	unsigned int status;
	uint64_t count;
};

struct tb_metrics {
	pthread_mutex_t lock;
	struct series s[MAX_SERIES];
	size_t n;
	uint64_t overflow;
	long sse;
	struct counter auth[MAX_AUTH_SERIES];
	size_t nauth;
	struct counter pruned[MAX_PRUNED];
	size_t npruned;
	uint64_t looks[2]; /* apart, in the run's commands */
	uint64_t ahead[2]; /* servers started ahead: stopped unused, used */
};

struct tb_metrics *tb_metrics_new(void)
{
	struct tb_metrics *m = calloc(1, sizeof(*m));

	if (m != NULL)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void tb_metrics_free(struct tb_metrics *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void tb_metrics_request(struct tb_metrics *m, const char *route, const char *method, unsigned int status,
			double seconds)
{
	struct series *s = NULL;
	size_t b = 0;

	if (m == NULL)
		return;
	while (b < NBUCKETS - 1 && seconds > bounds[b])
		b++;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++) {
		if (m->s[i].route == route && m->s[i].status == status && strcmp(m->s[i].method, method) == 0) {
			s = &m->s[i];
			break;
		}
	}
	if (s == NULL && m->n < MAX_SERIES) {
		s = &m->s[m->n++];
		s->route = route;
		snprintf(s->method, sizeof(s->method), "%s", method);
		s->status = status;
	}
	if (s != NULL) {
		s->count++;
		s->sum += seconds;
		s->buckets[b]++;
	} else {
		m->overflow++;
	}
	pthread_mutex_unlock(&m->lock);
}

/* Add n to the counter of (label, status) in c[0..*nc), creating it when
 * there is room (labels are static strings: compared by pointer). */
static void count(struct tb_metrics *m, struct counter *c, size_t *nc, size_t max, const char *label,
		  unsigned int status, uint64_t n)
{
	size_t i;

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < *nc; i++)
		if (c[i].label == label && c[i].status == status)
			break;
	if (i == *nc && *nc < max) {
		c[i].label = label;
		c[i].status = status;
		(*nc)++;
	}
	if (i < *nc)
		c[i].count += n;
	else
		m->overflow += n;
	pthread_mutex_unlock(&m->lock);
}

void tb_metrics_auth_failure(struct tb_metrics *m, const char *route, unsigned int status)
{
	if (m != NULL)
		count(m, m->auth, &m->nauth, MAX_AUTH_SERIES, route, status, 1);
}

void tb_metrics_pruned(struct tb_metrics *m, const char *table, unsigned long long n)
{
	if (m != NULL)
		count(m, m->pruned, &m->npruned, MAX_PRUNED, table, 0, n);
}

/* One more in counter[yes != 0] of m (NULL: none kept). */
static void count_pair(struct tb_metrics *m, uint64_t *counter, int yes)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	counter[yes != 0]++;
	pthread_mutex_unlock(&m->lock);
}

void tb_metrics_idle_look(struct tb_metrics *m, int in_commands)
{
	count_pair(m, m != NULL ? m->looks : NULL, in_commands);
}

void tb_metrics_server_ahead(struct tb_metrics *m, int used)
{
	count_pair(m, m != NULL ? m->ahead : NULL, used);
}

void tb_metrics_sse(struct tb_metrics *m, int delta)
{
	pthread_mutex_lock(&m->lock);
	m->sse += delta;
	pthread_mutex_unlock(&m->lock);
}

/* The request-duration histograms of the n series in copy. */
static void render_durations(const struct series *copy, size_t n, struct tb_outbuf *out)
{
	tb_outbuf_printf(out, "# HELP testbedd_http_request_duration_seconds Time from request to reply.\n"
			      "# TYPE testbedd_http_request_duration_seconds histogram\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t cum = 0;

		for (size_t k = 0; k < NBUCKETS; k++) {
			cum += copy[i].buckets[k];
			if (k < NBUCKETS - 1)
				tb_outbuf_printf(
					out,
					"testbedd_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\","
					"status=\"%u\",le=\"%g\"} %llu\n",
					copy[i].route, copy[i].method, copy[i].status, bounds[k],
					(unsigned long long)cum);
			else
				tb_outbuf_printf(
					out,
					"testbedd_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\","
					"status=\"%u\",le=\"+Inf\"} %llu\n",
					copy[i].route, copy[i].method, copy[i].status, (unsigned long long)cum);
		}
		tb_outbuf_printf(
			out,
			"testbedd_http_request_duration_seconds_sum{route=\"%s\",method=\"%s\",status=\"%u\"} %.6f\n",
			copy[i].route, copy[i].method, copy[i].status, copy[i].sum);
		tb_outbuf_printf(
			out,
			"testbedd_http_request_duration_seconds_count{route=\"%s\",method=\"%s\",status=\"%u\"} %llu\n",
			copy[i].route, copy[i].method, copy[i].status, (unsigned long long)copy[i].count);
	}
}

void tb_metrics_render(struct tb_metrics *m, struct tb_events *ev, struct tb_outbuf *out)
{
	struct series *copy;
	struct tb_events_stats es;
	struct counter auth[MAX_AUTH_SERIES], pruned[MAX_PRUNED];
	size_t n, nauth, npruned;
	long sse;
	uint64_t overflow, looks[2], ahead[2];

	copy = malloc(sizeof(m->s));
	if (copy == NULL) {
		out->nomem = true;
		return;
	}
	pthread_mutex_lock(&m->lock);
	n = m->n;
	memcpy(copy, m->s, n * sizeof(*copy));
	sse = m->sse;
	overflow = m->overflow;
	nauth = m->nauth;
	memcpy(auth, m->auth, sizeof(auth));
	npruned = m->npruned;
	memcpy(pruned, m->pruned, sizeof(pruned));
	memcpy(looks, m->looks, sizeof(looks));
	memcpy(ahead, m->ahead, sizeof(ahead));
	pthread_mutex_unlock(&m->lock);

	tb_outbuf_printf(out, "# HELP testbedd_build_info testbedd's version.\n# TYPE testbedd_build_info gauge\n");
	tb_outbuf_printf(out, "testbedd_build_info{version=\"%s\"} 1\n", TB_VERSION);
	tb_outbuf_printf(out, "# HELP testbedd_http_requests_total HTTP requests by route, method and status.\n"
			      "# TYPE testbedd_http_requests_total counter\n");
	for (size_t i = 0; i < n; i++)
		tb_outbuf_printf(out, "testbedd_http_requests_total{route=\"%s\",method=\"%s\",status=\"%u\"} %llu\n",
				 copy[i].route, copy[i].method, copy[i].status, (unsigned long long)copy[i].count);
	tb_outbuf_printf(out,
			 "# HELP testbedd_http_requests_unrecorded_total Requests beyond the series limit.\n"
			 "# TYPE testbedd_http_requests_unrecorded_total counter\n"
			 "testbedd_http_requests_unrecorded_total %llu\n",
			 (unsigned long long)overflow);
	render_durations(copy, n, out);
	free(copy);
	tb_outbuf_printf(out,
			 "# HELP testbedd_http_auth_failures_total Requests refused before their caller was known"
			 " (not audited), by route and status.\n# TYPE testbedd_http_auth_failures_total counter\n");
	for (size_t i = 0; i < nauth; i++)
		tb_outbuf_printf(out, "testbedd_http_auth_failures_total{route=\"%s\",status=\"%u\"} %llu\n",
				 auth[i].label, auth[i].status, (unsigned long long)auth[i].count);
	tb_events_stats(ev, &es);
	tb_outbuf_printf(out, "# HELP testbedd_store_pruned_rows_total Rows the retention deleted, by table.\n"
			      "# TYPE testbedd_store_pruned_rows_total counter\n");
	for (size_t i = 0; i < npruned; i++)
		tb_outbuf_printf(out, "testbedd_store_pruned_rows_total{table=\"%s\"} %llu\n", pruned[i].label,
				 (unsigned long long)pruned[i].count);
	tb_outbuf_printf(out, "testbedd_store_pruned_rows_total{table=\"events\"} %llu\n",
			 (unsigned long long)es.pruned);
	tb_outbuf_printf(out,
			 "# HELP testbedd_sse_clients Event streams open now.\n# TYPE testbedd_sse_clients gauge\n"
			 "testbedd_sse_clients %ld\n",
			 sse);
	tb_outbuf_printf(out,
			 "# HELP testbedd_events_published_total Events published on the bus.\n"
			 "# TYPE testbedd_events_published_total counter\ntestbedd_events_published_total %llu\n",
			 (unsigned long long)es.published);
	tb_outbuf_printf(out,
			 "# HELP testbedd_events_dropped_subscribers_total Streams dropped for falling behind.\n"
			 "# TYPE testbedd_events_dropped_subscribers_total counter\n"
			 "testbedd_events_dropped_subscribers_total %llu\n",
			 (unsigned long long)es.dropped_subscribers);
	tb_outbuf_printf(out,
			 "# HELP testbedd_run_idle_looks_total Idle checks of a run's two ends, by how they were "
			 "made: in the run's own ssh commands, or apart (a busy end's wait, a round's runs, a "
			 "look in the commands that did not report).\n"
			 "# TYPE testbedd_run_idle_looks_total counter\n"
			 "testbedd_run_idle_looks_total{how=\"in_commands\"} %llu\n"
			 "testbedd_run_idle_looks_total{how=\"apart\"} %llu\n",
			 (unsigned long long)looks[1], (unsigned long long)looks[0]);
	tb_outbuf_printf(out,
			 "# HELP testbedd_run_servers_ahead_total Runs' servers started in the last second of the "
			 "run before: used by their run, or stopped unused.\n"
			 "# TYPE testbedd_run_servers_ahead_total counter\n"
			 "testbedd_run_servers_ahead_total{how=\"used\"} %llu\n"
			 "testbedd_run_servers_ahead_total{how=\"stopped\"} %llu\n",
			 (unsigned long long)ahead[1], (unsigned long long)ahead[0]);
}
