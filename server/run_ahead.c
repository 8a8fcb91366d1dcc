/* run_ahead.c - standby shells for the next run's ends.  See run_ahead.h. */
#include "run_ahead.h"

#include <stdio.h>
#include <string.h>

#include "hosts.h"
#include "log.h"
#include "run_exec.h"
#include "services.h"

void run_ahead_one(struct tb_services *sv, const struct tb_ssh_target *t)
{
	struct tb_error e = {0};

	if (tb_ssh_standby(tb_hosts_pool(sv->hosts), t, &e) != 0)
		tb_debug("runner", "no standby shell on %s: %s", t->machine, e.message);
}

static void *ahead_main(void *arg)
{
	struct run_ahead *a = arg;

	for (int i = 0; i < a->n; i++)
		run_ahead_one(a->sv, &a->t[i]);
	return NULL;
}

void run_ahead_init(struct run_ahead *a, struct tb_services *sv, struct tb_run_ctl *ctl)
{
	memset(a, 0, sizeof(*a));
	a->sv = sv;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_lock(&ctl->lock);
	a->n = ctl->nahead;
	for (int i = 0; i < a->n && i < 2; i++) {
		a->t[i] = ctl->ahead[i];
		snprintf(a->pin[i], sizeof(a->pin[i]), "%s", ctl->ahead_pin[i]);
		if (ctl->ahead[i].pinned_fp == ctl->ahead_pin[i]) /* the pin is in ctl's buffer */
			a->t[i].pinned_fp = a->pin[i];
	}
	pthread_mutex_unlock(&ctl->lock);
}

void run_ahead_kick(struct run_ahead *a)
{
	pthread_mutex_lock(&a->lock);
	if (a->n > 0 && !a->started && !a->closed)
		a->started = pthread_create(&a->th, NULL, ahead_main, a) == 0;
	pthread_mutex_unlock(&a->lock);
}

void run_ahead_join(struct run_ahead *a)
{
	bool started;

	pthread_mutex_lock(&a->lock);
	a->closed = true;
	started = a->started;
	a->started = false;
	pthread_mutex_unlock(&a->lock);
	if (started)
		pthread_join(a->th, NULL);
}

void run_ahead_free(struct run_ahead *a)
{
	run_ahead_join(a);
	pthread_mutex_destroy(&a->lock);
}
