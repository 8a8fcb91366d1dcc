/*
 * metrics.h - counters and histograms for GET /metrics (Prometheus text
 * exposition format 0.0.4): requests by route, method and status with
 * latency histograms, refused unauthenticated requests, rows pruned by the
 * retention, SSE clients, events, host reachability, build info.
 *
 * Thread-safe (one mutex; an observation is a few additions).
 */
#ifndef TB_METRICS_H
#define TB_METRICS_H

#include <stddef.h>

struct tb_metrics;

struct tb_metrics *tb_metrics_new(void);
void tb_metrics_free(struct tb_metrics *m);

/* One request: route is a routing-table pattern (or "static", "none"). */
void tb_metrics_request(struct tb_metrics *m, const char *route, const char *method, unsigned int status,
			double seconds);

/* A request refused before its caller was known (no or bad credentials, a
 * failed login): such requests are not audited, only counted here, by route
 * (a routing-table pattern: a static string) and status. */
void tb_metrics_auth_failure(struct tb_metrics *m, const char *route, unsigned int status);

/* n rows the retention deleted from table (a static string, "audit"). */
void tb_metrics_pruned(struct tb_metrics *m, const char *table, unsigned long long n);

/* One idle check of a run's two ends (run_idle.h): made by the run's own
 * ssh commands (in_commands), or apart from them (a busy end's wait, a
 * round's runs, a look in the commands that did not report). */
void tb_metrics_idle_look(struct tb_metrics *m, int in_commands);

/* A run's server started ahead, in the last second of the run before
 * (run_early.h): used by its run, or stopped unused. */
void tb_metrics_server_ahead(struct tb_metrics *m, int used);

/* SSE streams open now (+1 on open, -1 on close). */
void tb_metrics_sse(struct tb_metrics *m, int delta);

/* The exposition text of these counters and the bus's (ev), appended to
 * out (out->nomem when memory ran out).  Other families (the hosts) are the
 * caller's to add. */
struct tb_events;
struct tb_outbuf;
void tb_metrics_render(struct tb_metrics *m, struct tb_events *ev, struct tb_outbuf *out);

#endif /* TB_METRICS_H */
