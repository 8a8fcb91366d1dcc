/*
 * runner_internal.h - what runner.c (the queue, the scheduler, a worker per
 * running matrix), runner_matrix.c (a matrix from start to end) and
 * runner_par.c (hosts at once: the warm-up before the first run and the runs
 * of a round) share.  Not for other files.
 */
#ifndef TB_RUNNER_INTERNAL_H
#define TB_RUNNER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "inventory.h"
#include "validate.h"
#include "run_exec.h"
#include "runner.h"
#include "store.h"
#include "matrix.h"

#define QUEUE_MAX 256
#define TB_RUNNER_PARALLEL 16 /* runs of one round at once (more wait for the next) */

struct leftover {
	char machine[TB_NAME_MAX], os[TB_NAME_MAX];
	long pids[2];
	int npids;
};

/* The machines a matrix holds while it runs (every client and server of its
 * runs to go, and the routers its link profiles change). */
struct tb_rn_names {
	char v[TB_MATRIX_HOSTS_MAX + TB_MATRIX_ROUTERS_MAX][TB_NAME_MAX];
	int n;
};

/* A matrix in the queue (heap, owned by the queue until a worker takes it). */
struct tb_rn_queued {
	int64_t id;
	char name[TB_MATRIX_NAME_MAX + 1];
	char actor[64];
	struct tb_rn_names ns;
	char why[TB_RUNNER_WHY_MAX]; /* why it waits ("" before the scheduler looked at it) */
	int pos;                     /* its place in the queue last published (1: first; 0: none yet) */
};

/* One running matrix: its thread, the hosts it holds, its stop.  Fields
 * other than ctl/par are guarded by the runner's lock. */
struct tb_rn_worker {
	struct tb_runner *r;
	pthread_t th;
	int busy;         /* a matrix was given to it; 0 again once its thread is joined */
	int done;         /* its thread has ended: the scheduler joins it */
	int stoppers;     /* cancels stopping its runs right now: not reused before 0 */
	uint64_t started; /* the runner's count of starts when it got its matrix */
	int64_t id;
	char name[TB_MATRIX_NAME_MAX + 1];
	char actor[64];
	int seq; /* the seq of its run in progress, -1: none */
	struct tb_rn_names ns;
	struct tb_run_ctl ctl;                         /* of the run in progress; its stop is the matrix's */
	struct tb_run_ctl par[TB_RUNNER_PARALLEL - 1]; /* of the other runs of a round */
};

struct tb_runner {
	struct tb_services *sv;
	pthread_t th; /* the scheduler */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stopping;
	int dirty;       /* something changed since the scheduler looked (a matrix queued or ended) */
	uint64_t starts; /* matrices started */
	struct tb_rn_queued *queue[QUEUE_MAX]; /* FIFO */
	int nqueue;
	struct tb_rn_worker w[TB_RUNNER_WORKERS];
	struct leftover *left; /* remote processes of interrupted runs */
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

/* ---- runner.c ---- */
/* Publish "matrix.state" for matrix id (runner.h's annotations included). */
void tb_rn_publish(struct tb_runner *r, int64_t id);
/* Add name to ns once (ns full: ignored; the spec's limit keeps it from filling). */
void tb_rn_names_add(struct tb_rn_names *ns, const char *name);

/* ---- runner_matrix.c ---- */
/* The holder's text of matrix id named name ("matrix 12 (nightly)"). */
void tb_rn_holder(int64_t id, const char *name, char *buf, size_t len);
/* Run w's matrix (its hosts held by the scheduler) to its end; releases the holds. */
void tb_rn_run_matrix(struct tb_rn_worker *w);
/* The runner's view of machine name among hs[0..*nh) (added when new); NULL when gone. */
struct tb_run_host *tb_rn_host_for(struct tb_run_host *hs, int *nh, const struct tb_inventory *inv, const char *name);
/* h's metadata once per OS in this matrix (failures only logged). */
void tb_rn_snapshot(struct tb_rn_worker *w, const struct job *j, struct tb_run_host *h);
/* One run on hosts c and s, stopped through ctl. */
void tb_rn_run_job(struct tb_rn_worker *w, struct job *j, struct tb_run_host *c, struct tb_run_host *s,
		   struct tb_run_ctl *ctl);
/* Before the first run, its hosts ready (the routers' metadata may still be
 * being taken): its server started ahead (run_early.h) when it is alone in
 * its round on ends ready in the OS it wants. */
void tb_rn_first_ahead(struct tb_rn_worker *w, const struct jobs *js, const struct tb_run_host *hs, int nh);
/* The hosts of j with inventory inv's machines; -1 (the run failed) when one is gone. */
int tb_rn_resolve(struct tb_rn_worker *w, struct job *j, struct tb_run_host *hs, int *nh,
		  const struct tb_inventory *inv, struct tb_run_host **c, struct tb_run_host **s);

/* ---- runner_par.c ---- */
void tb_rn_warm_up(struct tb_rn_worker *w, struct jobs *js, struct tb_run_host *hs, int *nh);
void tb_rn_run_round(struct tb_rn_worker *w, struct job *js, int n, struct tb_run_host *hs, int *nh);

#endif /* TB_RUNNER_INTERNAL_H */
