/*
 * runner_internal.h - what runner.c (the queue, the worker, a matrix from
 * start to end) and runner_par.c (hosts at once: the warm-up before the
 * first run and the runs of a round) share.  Not for other files.
 */
#ifndef TB_RUNNER_INTERNAL_H
#define TB_RUNNER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "inventory.h"
#include "validate.h"
#include "run_exec.h"
#include "store.h"
#include "matrix.h"

#define QUEUE_MAX 256
#define TB_RUNNER_PARALLEL 16 /* runs of one round at once (more wait for the next) */

struct leftover {
	char machine[TB_NAME_MAX], os[TB_NAME_MAX];
	long pids[2];
	int npids;
};

struct tb_runner {
	struct tb_services *sv;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stopping;
	int64_t queue[QUEUE_MAX];
	int nqueue;
	int64_t current; /* the matrix in progress, 0: none */
	char current_name[TB_MATRIX_NAME_MAX + 1];
	int current_seq;
	struct tb_run_ctl ctl;                         /* of the run in progress; its stop is the matrix's */
	struct tb_run_ctl par[TB_RUNNER_PARALLEL - 1]; /* of the other runs of a round */
	struct leftover *left;                         /* remote processes of interrupted runs */
	int nleft;
};

struct job {
	struct tb_run_row row; /* strings below are copies */
	char client[TB_NAME_MAX], server[TB_NAME_MAX], link[TB_NAME_MAX], addr[64], proto[8], dir[12];
	char want_client[TB_NAME_MAX], want_server[TB_NAME_MAX];
	char *params;
};

struct jobs {
	struct job *v;
	int n, cap;
	int failed; /* out of memory */
};

/* The runner's view of machine name among hs[0..*nh) (added when new); NULL when gone. */
struct tb_run_host *tb_rn_host_for(struct tb_run_host *hs, int *nh, const struct tb_inventory *inv, const char *name);
/* h's metadata once per OS in this matrix (failures only logged). */
void tb_rn_snapshot(struct tb_runner *r, const struct job *j, struct tb_run_host *h);
/* One run on hosts c and s, stopped through ctl. */
void tb_rn_run_job(struct tb_runner *r, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		   struct tb_run_ctl *ctl);
/* The hosts of j with inventory inv's machines; -1 (the run failed) when one is gone. */
int tb_rn_resolve(struct tb_runner *r, struct job *j, struct tb_run_host *hs, int *nh, const struct tb_inventory *inv,
		  struct tb_run_host **c, struct tb_run_host **s);

/* ---- runner_par.c ---- */
void tb_rn_warm_up(struct tb_runner *r, struct jobs *js, struct tb_run_host *hs, int *nh);
void tb_rn_run_round(struct tb_runner *r, struct job *js, int n, struct tb_run_host *hs, int *nh);

#endif /* TB_RUNNER_INTERNAL_H */
