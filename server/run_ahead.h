/*
 * run_ahead.h - the next run's ends made ready while this one's test starts:
 * each target of struct tb_run_ctl's ahead gets a standby shell
 * (tb_ssh_standby, ssh.h), opened in a thread of its own, so that the next
 * run's server and client start without a channel open and a shell start.
 *
 * When: in the last second of this run's test (run_beside.h: its server's
 * next-to-last interval came), not at its start, where it would compete
 * with the client's start and connect on a small host.  Cost: on each of
 * the next run's hosts, an sshd session channel and a /bin/sh that then
 * waits on its stdin (no CPU), a few ms of CPU in that last second.  A
 * standby the next run does not use (a boot came between, another command
 * took it) goes with its idle session.
 */
#ifndef TB_RUN_AHEAD_H
#define TB_RUN_AHEAD_H

#include <pthread.h>
#include <stdbool.h>

#include "ssh.h"

struct tb_services;
struct tb_run_ctl;

struct run_ahead {
	struct tb_services *sv;
	struct tb_ssh_target t[2];
	char pin[2][96];
	int n;
	pthread_mutex_t lock; /* kick (the server's thread) against join (the run's) */
	bool started, closed;
	pthread_t th;
};

/* Take ctl's ahead targets (copied now); nothing opens yet.  run_ahead_free
 * after the last kick can come (every thread that may kick has ended). */
void run_ahead_init(struct run_ahead *a, struct tb_services *sv, struct tb_run_ctl *ctl);
void run_ahead_free(struct run_ahead *a);
/* Open their standby shells in a thread (no blocking here); once, and not
 * after run_ahead_join.  Any thread. */
void run_ahead_kick(struct run_ahead *a);
/* Wait for that thread (done long before: a channel open each) and close a
 * for kicks; safe when none came. */
void run_ahead_join(struct run_ahead *a);
/* A standby shell on t, opened in this thread (a channel open); a failure
 * is only logged: the next command opens its own channel.  The warm-up's,
 * for each host's first run. */
void run_ahead_one(struct tb_services *sv, const struct tb_ssh_target *t);

#endif /* TB_RUN_AHEAD_H */
