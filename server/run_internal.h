/*
 * run_internal.h - what run_exec.c (one run: the client, the outcome),
 * run_commit.c (the outcome stored), run_server.c (the run's iperf3 server:
 * started, heard to listen, stopped by pid) and run_early.c (the next run's
 * server started ahead) share.  Not for other files.
 */
#ifndef TB_RUN_INTERNAL_H
#define TB_RUN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "iperf.h"
#include "traffic.h"
#include "outbuf.h"
#include "run_exec.h"
#include "ssh.h"

#define RUN_OUT_MAX (32u << 20) /* stdout kept per side */
#define RUN_ERR_MAX (64u << 10) /* stderr kept per side */
#define SLACK_S 15              /* client watchdog: omit + duration + this */

/* The port of run id's tries-th attempt (1 the first): runs after each other differ. */
static inline int run_port(int64_t id, int tries)
{
	return 5201 + (int)((id * 7 + tries) % 800);
}

struct tb_services;
struct tb_store;
struct tb_run_row;

/* What one attempt of a run came to (run_exec.c), committed by run_commit. */
struct outcome {
	json_t *client_result; /* owned */
	json_t *server_result; /* owned */
	struct tb_outbuf cout, cerr, sout, serr;
	char *client_cmd, *server_cmd;
	const char *klass; /* NULL: ok */
	char message[512];
	bool retry_busy;  /* busy, or the port was taken: try again */
	bool retry_lost;  /* no stream connected (a lost UDP connect datagram): once more */
	bool idle_busy;   /* the first look beside the start found an end busy: stopped before the client */
	const char *tool; /* the driver's name */
	json_t *idle;     /* owned: how long the idle check waited and why, or NULL */
	json_t *latency;  /* owned: the RTT beside the run, summarised (run_latency.h), or NULL */
};

/* The run r ended with o: its row, intervals, summary and raw outputs
 * stored in one transaction (run_commit.c).  0, or -1 with err. */
int run_commit(struct tb_services *sv, struct tb_run_row *r, const struct outcome *o, struct tb_error *err);

/* The server side of one attempt, its ssh session in a thread of its own. */
struct run_server {
	struct tb_services *sv;
	struct tb_ssh_target t;
	char pin[96];
	char *script;
	long timeout_ms;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long pid;      /* timeout(1)'s pid, which runs iperf3 */
	int listening; /* 1 listening, -1 never did */
	int ended, rc, exit_code;
	int killed; /* testbedd stopped it by pid */
	struct tb_error err;
	struct tb_outbuf line, out, errb;
	const struct tb_traffic_driver *drv;
	struct tb_traffic_parser *parser; /* the server's output, live (lock; run_server_set_parser) */
	struct tb_outbuf held;            /* its lines before a parser was set (a server started early) */
	int final_seen;                   /* the server printed its summary (drv->server_stays) */
	bool started;                     /* run_server_start made its thread */
	const struct tb_run_row *r;
	struct tb_ssh_before before; /* .script NULL: none; else run first (the idle look) */
};

/* Set s up to serve run r (params p, tool drv) on host sh: its target, the
 * script (timeout(1) ends the server after wall_s + 5 s), the lock.  0, or -1 with err; either way
 * run_server_free(s) afterwards. */
int run_server_init(struct run_server *s, struct tb_services *sv, const struct tb_run_host *sh,
		    const struct tb_run_row *r, const struct tb_traffic_driver *drv, const struct tb_iperf_params *p,
		    long wall_s, struct tb_error *err);
/* Start the server's ssh session in s->th, with before's script (NULL:
 * none) run first in its shell: 0, or -1 (no thread). */
int run_server_start(struct run_server *s, const struct tb_ssh_before *before);
/* The parser of the server's output from now on, fed first what the server
 * printed before (a server started ahead of its run, run_early.h).  Any
 * time after init, once. */
void run_server_set_parser(struct run_server *s, struct tb_traffic_parser *parser);
/* Wait at most wait_ms until the server's pid is known (or it listens, or
 * its session ended): then run_server_finish can stop it by pid. */
void run_server_wait_pid(struct run_server *s, int wait_ms);
/* Wait for the server's ssh command to end (or, for a server that stays,
 * its summary) for at most wait_ms; stop it by pid if it did not end; join
 * the thread. */
void run_server_finish(struct run_server *s, int wait_ms);
void run_server_free(struct run_server *s);

/*
 * The client's gate (tb_ssh_spawn_gated): its channel and shell are opened
 * while the server starts; it runs the moment the server listens and, with
 * look, both ends' first look found them idle.  The server's pid is stored
 * before the client runs, as for a crash's cleanup; then go(go_cls) (what
 * starts with the run), then the client.
 */
struct run_idle_look;
struct run_gate {
	struct run_server *s;
	struct tb_run_ctl *ctl;
	struct tb_store *store;
	struct tb_run_row *r;
	int64_t until;
	int listening;              /* what the gate saw last: 1, -1 (failed or timed out), -2 (an end busy), 0 */
	struct run_idle_look *look; /* NULL: no look */
	void (*go)(void *cls);      /* NULL: nothing */
	void *go_cls;
};

/* A tb_ssh_gate_fn: 1 when the server listens and the look found both ends
 * idle (the server's pid stored, go called), 0 not yet, -1 never (failed,
 * timed out, an end busy, or the run was asked to stop). */
int run_client_gate(void *cls);

#endif /* TB_RUN_INTERNAL_H */
