/*
 * run_beside.h - what starts beside a run the moment its client is let go
 * (after the run is marked running) and stops when the client has ended:
 * CPU and memory samples of both ends and the routers on the path (the
 * spec's "sample", run_sampler.h), the latency stream ("latency",
 * run_latency.h), a profile ("profile", run_profile.h), and, in the
 * test's last second, the next run's server (run_early.h) and standby shells
 * for its ends (run_ahead.h).  Nothing of it for a run whose
 * client never ran (an end found busy, the server did not listen).
 *
 * Blocking: run_beside_start waits for the latency's idle probe (2-3 s)
 * when the spec asks for latency; run_beside_stop for the profile's read.
 * Called from the run's thread only.
 */
#ifndef TB_RUN_BESIDE_H
#define TB_RUN_BESIDE_H

#include <stdbool.h>

#include <jansson.h>

#include "run_ahead.h"
#include "run_latency.h"
#include "run_profile.h"
#include "run_sampler.h"

struct tb_services;
struct tb_run_ctl;
struct tb_run_row;
struct tb_run_host;

struct run_beside {
	/* set by the caller */
	struct tb_services *sv;
	struct tb_run_ctl *ctl; /* its ahead targets */
	struct tb_run_row *r;
	const struct tb_run_host *ch, *sh;
	long load_s; /* omit + duration: the loaded part */
	long wall_s; /* the run's whole length at most */
	bool sample; /* the spec's "sample" */
	/* run_beside_start's */
	bool started;
	struct run_ahead ahead;
	struct run_samplers samplers;
	struct run_latency lat;
	struct run_profile prof;
};

/* init before the run's server starts (the next run's targets taken from
 * ctl), free after every thread of the run has ended; start as the client is
 * let go, stop once it ended. */
void run_beside_init(struct run_beside *b);
void run_beside_free(struct run_beside *b);
void run_beside_start(struct run_beside *b);
/* The run's test is in its last second: the next run's server started
 * ahead (run_early.h) and standby shells (run_ahead.h).  Any thread, between
 * init and free (after stop: no shells). */
void run_beside_ahead(struct run_beside *b);
/* Stop what started (nothing when nothing did); the latency summary (owned,
 * NULL when none) into *latency. */
void run_beside_stop(struct run_beside *b, bool read_profile, json_t **latency);

#endif /* TB_RUN_BESIDE_H */
