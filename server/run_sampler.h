/*
 * run_sampler.h - CPU and memory sampling of one host during one run (issue
 * 20 item 1): one long-lived reader over ssh (run_sample.h's loop), started
 * with the run and stopped by its pid with it; each sample is published as a
 * `run.sample` event ({matrix, run, seq, side, host, sample}), which the
 * store keeps with the other events (GET /api/v1/runs/{id}/samples reads
 * them back).
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
};

/* Start sampling host h (side "client" or "server") for run r, for at most
 * wall_s seconds.  0, or -1 (nothing started; the run goes on without). */
int run_sampler_start(struct run_sampler *s, struct tb_services *sv, const struct tb_run_host *h,
		      const struct tb_run_row *r, const char *side, long wall_s);
/* Stop it by pid (TERM) and wait for its thread.  Safe after a failed start. */
void run_sampler_stop(struct run_sampler *s);

#endif /* TB_RUN_SAMPLER_H */
