/*
 * run_sampler.h - CPU and memory sampling of one host during one run (issue
 * 20 item 1): one long-lived reader over ssh (run_sample.h's loop), started
 * with the run and stopped by its pid with it; each sample is published as a
 * `run.sample` event ({matrix, run, seq, side, host, n, sample}; n: the
 * sample's number among the host's in the run, from 0) for the live
 * chart, and kept in the store's run_samples table (store_samples.h), which
 * the event retention does not touch: written RUN_SAMPLE_BATCH at a time
 * (one transaction every few seconds per host, on the sampler's thread,
 * not the bus's) and what is left when the sampler stops.  GET
 * /api/v1/runs/{id}/samples reads them back.
 *
 * A sampler is used by the run's thread; its own thread reads the output.
 */
#ifndef TB_RUN_SAMPLER_H
#define TB_RUN_SAMPLER_H

#include <pthread.h>
#include <stdbool.h>

#include "run_exec.h"
#include "run_sample.h"
#include "ssh.h"

struct tb_services;
struct tb_run_row;

#define RUN_SAMPLE_BATCH 10 /* samples per store transaction */

struct run_sampler {
	struct tb_services *sv;
	const struct tb_run_row *r;
	const char *side, *host;
	struct tb_ssh_target t;
	char pin[96];
	pthread_t th;
	bool started;
	pthread_mutex_t lock;
	long pid; /* the remote loop's shell, once tb_ssh_spawn said it (lock) */
	enum tb_sample_os os;
	long timeout_ms;
	struct tb_sample_reader *reader;
	int published;
	/* samples read, not stored yet (the reader's thread, then stop's) */
	char *pend_json[RUN_SAMPLE_BATCH];
	int64_t pend_at[RUN_SAMPLE_BATCH];
	int npend, stored;
};

/* Start sampling host h (side "client", "server" or "router") for run r, for at most
 * wall_s seconds.  0, or -1 (nothing started; the run goes on without). */
int run_sampler_start(struct run_sampler *s, struct tb_services *sv, const struct tb_run_host *h,
		      const struct tb_run_row *r, const char *side, long wall_s);
/* Stop it by pid (TERM), wait for its thread and store the samples not
 * stored yet.  Safe after a failed start. */
void run_sampler_stop(struct run_sampler *s);

/* The routers on a run's path: every machine of role router with a link
 * named link (the pair's link; as matrix_linkprof.c finds them), at most
 * max into out, in inventory order.  Pure: inv held by the caller. */
struct tb_inventory;
struct tb_machine;
size_t run_sample_routers(const struct tb_inventory *inv, const char *link, const struct tb_machine **out, size_t max);

#define RUN_SAMPLE_ROUTERS 4

/* The samplers of one run: its two ends and the routers on its path (each
 * router as the OS it answers as, when it answers; one that does not is
 * left out and logged).  The inventory is held from start to stop. */
struct run_samplers {
	struct tb_services *sv;
	struct tb_inventory *inv;
	struct run_sampler s[2 + RUN_SAMPLE_ROUTERS];
	struct tb_run_host routers[RUN_SAMPLE_ROUTERS];
	int n;
};

/* Start the samplers of run r (ends ch and sh), for at most wall_s seconds
 * each.  What does not start is left out: the run goes on without. */
void run_samplers_start(struct run_samplers *set, struct tb_services *sv, const struct tb_run_host *ch,
			const struct tb_run_host *sh, const struct tb_run_row *r, long wall_s);
/* Stop them all (run_sampler_stop each) and let the inventory go. */
void run_samplers_stop(struct run_samplers *set);

#endif /* TB_RUN_SAMPLER_H */
