/*
 * run_latency.h - latency under load beside a run (issue 20 item 7; the
 * bufferbloat view of Flent's RRUL): when the run's matrix spec says
 * "latency": "irtt", an irtt server on the run's server host (bound to the
 * run's server address), then an idle probe from the client host to it (2 s
 * at 100 ms, before the load), then a stream for the run's length beside
 * it, stopped by its pid with the run.  Where irtt is missing on either host
 * (or the spec says "ping") ping does it instead (200 ms).  Each second of
 * packets is published as a `run.rtt` event ({matrix, run, seq, host,
 * server, tool, phase: "idle"|"load", at_ms, bin}, bin as irtt_parse.h
 * makes it), kept with the events; GET /api/v1/runs/{id}/latency reads them
 * back with the idle and loaded summaries.
 *
 * Used by the run's thread; its own threads read the remote programs.
 * Nothing of a request reaches a shell: the address comes from the
 * inventory and is quoted.
 */
#ifndef TB_RUN_LATENCY_H
#define TB_RUN_LATENCY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "irtt_parse.h"
#include "run_exec.h"
#include "ssh.h"

struct tb_services;
struct tb_run_row;

struct run_latency {
	struct tb_services *sv;
	const struct tb_run_row *r;
	const char *client, *server;
	struct tb_ssh_target ct, st;
	char cpin[96], spin[96];
	char dest[80]; /* irtt's ADDR:PORT ([ADDR]:PORT for IPv6) */
	char addr[64]; /* ping's */
	enum tb_rtt_tool tool;
	const char *phase;
	int64_t t0_ms; /* the phase's stream began (testbedd's clock) */
	long load_s;
	pthread_t sth, cth;
	bool sstarted, cstarted;
	pthread_mutex_t lock;
	long spid, cpid; /* the remote irtt server and stream, once known (lock) */
	struct tb_rtt_reader *reader;
	int published;
	json_t *bins[2]; /* idle, load: copies of what was published, for the summary (lock) */
	json_t *summary; /* after stop: {tool, client, server, idle, load, median_ratio}, or NULL (owned) */
};

/* Start latency for run r between client ch and server sh, the loaded
 * stream lasting load_s seconds (omit + duration) at most; blocks for the
 * idle probe (about 2-5 s).  0 when the spec asks for none or it started;
 * -1 when it could not (logged; the run goes on without).  l is zeroed. */
int run_latency_start(struct run_latency *l, struct tb_services *sv, const struct tb_run_host *ch,
		      const struct tb_run_host *sh, const struct tb_run_row *r, long load_s);
/* Stop the stream and the server by pid and wait for their threads; the
 * last second goes out, and l->summary is made from every bin published
 * (the run keeps it: the run.rtt events may go with the event store's
 * retention).  Safe after any start; the caller owns l->summary. */
void run_latency_stop(struct run_latency *l);

#endif /* TB_RUN_LATENCY_H */
