/* run_round.c - the look barrier of a round's runs: no server of the round
 * starts before every run of it has made its first idle look.  See
 * run_exec.h (struct tb_run_round). */
#include "run_exec.h"

#include <pthread.h>
#include <time.h>

#include "timeutil.h"

void tb_run_round_init(struct tb_run_round *rd, int n)
{
	pthread_mutex_init(&rd->lock, NULL);
	tb_cond_init(&rd->cond);
	rd->pending = n;
	rd->wait_ms = TB_RUN_ROUND_WAIT_MS;
}

void tb_run_round_destroy(struct tb_run_round *rd)
{
	pthread_mutex_destroy(&rd->lock);
	pthread_cond_destroy(&rd->cond);
}

void tb_run_round_skip(struct tb_run_ctl *ctl)
{
	struct tb_run_round *rd = ctl->round;

	if (rd == NULL || ctl->round_looked)
		return;
	ctl->round_looked = 1;
	pthread_mutex_lock(&rd->lock);
	if (--rd->pending <= 0)
		pthread_cond_broadcast(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
}

void tb_run_round_looked(struct tb_run_ctl *ctl)
{
	struct tb_run_round *rd = ctl->round;
	int64_t until;

	if (rd == NULL || ctl->round_looked)
		return;
	until = tb_monotonic_ms() + rd->wait_ms;
	tb_run_round_skip(ctl);
	pthread_mutex_lock(&rd->lock);
	while (rd->pending > 0 && !ctl->stop && tb_monotonic_ms() < until) {
		struct timespec ts = tb_cond_deadline(50);

		pthread_cond_timedwait(&rd->cond, &rd->lock, &ts);
	}
	pthread_mutex_unlock(&rd->lock);
}
