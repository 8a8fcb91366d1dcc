/*
 * run_exec.h - one iperf3 run between two hosts over ssh, for the runner:
 * start the server (its pid recorded), wait until it listens (checked on
 * the server host with ss or sockstat, never by connecting: that would use
 * up a -1 server), run the client under a watchdog, publish every interval
 * of both sides as it arrives, decide the outcome from iperf3's JSON (never
 * from the exit code alone), retry "server is busy" with jittered backoff,
 * make sure both iperf3 processes are gone, and commit the result.
 *
 * Blocking: the run's duration plus bounded slack.  Called from the
 * runner's thread only; tb_run_ctl is what another thread uses to stop it.
 */
#ifndef TB_RUN_EXEC_H
#define TB_RUN_EXEC_H

#include <pthread.h>
#include <stdbool.h>

#include "iperf.h"
#include "traffic.h"
#include "validate.h"
#include "ssh.h"

struct tb_services;
struct tb_machine;
struct tb_persona;
struct tb_run_row;
struct run_early;

/* A host as this matrix found it: the persona that answers and its traffic tools. */
struct tb_run_host {
	const struct tb_machine *m;
	const struct tb_persona *p;
	char os[TB_NAME_MAX];
	struct tb_tool_caps tools;     /* what it has of each traffic tool */
	bool bsd;                      /* FreeBSD userland: sockstat, not ss */
	bool ready;                    /* os, caps and bsd are known */
	char snapped_os[TB_NAME_MAX];  /* the OS this matrix took its metadata in ("": none yet) */
	bool initial_known;            /* initial_os is what the host was in when the matrix met it */
	char initial_os[TB_NAME_MAX];  /* "" when it was off or did not answer */
	char boot_failed[TB_NAME_MAX]; /* an OS this matrix could not boot it into ("": none) */
	char boot_error[300];
	int tun_set; /* tunables.c: 1 + the tunable set in force, 0: none changed, -1: some (restore them) */
};

enum tb_run_stop { TB_RUN_GO = 0, TB_RUN_CANCEL = 1, TB_RUN_SHUTDOWN = 2 };

/*
 * The runs of one round start at once and may share a host (concurrency
 * pairs): each makes its first idle look before its server starts, and none
 * starts its server before every run of the round has looked, so that no
 * look sees another run's server as a stray.  tb_run_round_looked: the run
 * looked (or never will: it failed before, or did not start); once per
 * run, later calls do nothing.  It then waits, at most wait_ms
 * (TB_RUN_ROUND_WAIT_MS), for the others (a run stuck in its look holds no other one for longer).
 */
#define TB_RUN_ROUND_WAIT_MS 20000
struct tb_run_round {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending; /* runs that have not looked yet */
	int wait_ms; /* how long a run waits for the others: TB_RUN_ROUND_WAIT_MS (init) */
};
void tb_run_round_init(struct tb_run_round *rd, int n);
void tb_run_round_destroy(struct tb_run_round *rd);

/* Shared between the run and a thread that stops it (lock guards all). */
struct tb_run_ctl {
	pthread_mutex_t lock;
	volatile int stop; /* enum tb_run_stop */
	struct tb_ssh_target client_t;
	char client_pin[96];
	long client_pid;            /* > 0 while the client runs */
	int signaled;               /* SIGINT was sent to the client */
	int in_round;               /* set by the runner: one of a round's runs, started with the others at once */
	struct tb_run_round *round; /* the round's look barrier (set with in_round), else NULL */
	int round_looked;           /* this run passed the barrier (tb_run_round_looked) */
	/* the next run's ends, set by the runner (nahead 0: none known): as this
	 * run's client is let go, each gets a standby shell (tb_ssh_standby), so
	 * that the next run's commands start without a channel open and a shell
	 * start; their strings are the inventory's, held by the runner */
	struct tb_ssh_target ahead[2];
	char ahead_pin[2][96];
	int nahead;
	/* the next run's server, started in this run's last second, and this
	 * run's, started in the last one's: set by the runner (run_early.h) */
	struct run_early *early_next, *early_now;
};

/* The run of ctl looked (see struct tb_run_round): blocks until the round's
 * other runs have, TB_RUN_ROUND_WAIT_MS at most.  No round: nothing. */
void tb_run_round_looked(struct tb_run_ctl *ctl);
/* The same without the wait: for a run that will not look (not started). */
void tb_run_round_skip(struct tb_run_ctl *ctl);

/* Ask the run in progress to stop (why: TB_RUN_CANCEL or TB_RUN_SHUTDOWN):
 * SIGINT to its client if one runs (blocking: one short ssh command). */
void tb_run_ctl_stop(struct tb_services *sv, struct tb_run_ctl *ctl, int why);

/* A matrix's metadata of a host, taken with its preparation: matrix_id's,
 * when the host is in OS want (NULL: any), about the data-plane interface
 * of link (NULL: the host's first; hostsnap.h). */
struct tb_run_snap {
	int64_t matrix_id;
	const char *want;
	const char *link;
};

/*
 * Learn what h answers as: `uname -s; iperf3 --version; iperf -v; netperf
 * -V` in one exec on the persona that answered last, or where a probe finds
 * one answering when none did or that exec failed.  With snap, the same exec
 * takes the matrix's metadata of h (hostsnap.h) when snap wants h's OS and
 * h->snapped_os is not it (then set).  0, or TB_ERR_UNREACHABLE /
 * TB_ERR_REMOTE (no traffic tool) with err.  A run whose tool the host lacks
 * fails with its reason.  Blocks: one ssh exec, or a probe and one.
 */
int tb_run_host_prepare(struct tb_services *sv, struct tb_run_host *h, const struct tb_run_snap *snap,
			struct tb_error *err);

/*
 * Execute planned run r (id, matrix_id, seq, addresses and params set) and
 * commit its result to the store.  *state_out gets the run's final state
 * ("ok", "failed", "canceled", "interrupted") and *class_out its error class
 * (NULL for ok); both point to static strings.  Returns 0 when the result
 * was stored, else a store error.
 */
int tb_run_execute(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *r,
		   struct tb_run_host *client, struct tb_run_host *server, const char **state_out,
		   const char **class_out, struct tb_error *err);

/* Stop leftover traffic tool processes by pid on a host persona: each pid
 * is signalled only when it is still an iperf3, iperf or timeout process. */
int tb_run_kill_leftovers(struct tb_services *sv, const struct tb_machine *m, const char *os, const long *pids,
			  int npids, struct tb_error *err);

#endif /* TB_RUN_EXEC_H */
