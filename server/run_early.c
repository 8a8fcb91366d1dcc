/* run_early.c - the next run's server started ahead.  See run_early.h. */
#include "run_early.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "matrix.h"
#include "metrics.h"
#include "run_idle.h"
#include "run_internal.h"
#include "services.h"
#include "ssh.h"
#include "store.h"
#include "timeutil.h"

struct run_early {
	struct tb_metrics *metrics;
	struct tb_run_row row; /* the next run's, its first attempt's port set (s.r is &row) */
	const struct tb_run_host *sh;
	const struct tb_persona *p; /* sh's persona when planned */
	struct run_server s;
	struct run_idle_look *look; /* its server end runs before the server; NULL: no idle check */
	struct tb_ssh_before before;
	int64_t kicked_ms; /* when its server was started (tb_now_ms) */
};

/* A server started ahead and not taken by then is not used: its timeout(1)
 * (the run's length + SLACK_S from its start) or iperf3's --idle-timeout
 * could end it during its test.  One kicked in the run before's last second
 * is about a second old; the first run's waits for the routers' metadata. */
#define FRESH_MS 10000

/* Whether pj (a run's params) sets nothing between runs: no tunables, no
 * link profile (the runner sets those after the run before has ended). */
static bool sets_nothing(const json_t *pj)
{
	const json_t *tun = json_object_get(pj, "tunables"), *lp = json_object_get(pj, "link_profile");

	return pj != NULL && (tun == NULL || json_is_null(tun)) && (lp == NULL || json_is_null(lp));
}

void run_early_plan(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *now,
		    const struct tb_run_row *next, const struct tb_run_host *ch, const struct tb_run_host *sh)
{
	json_t *pn = now != NULL ? json_loads(now->params != NULL ? now->params : "", 0, NULL) : NULL;
	json_t *pj = json_loads(next->params != NULL ? next->params : "", 0, NULL);
	struct tb_iperf_params p;
	struct tb_error e = {0};
	struct run_early *x = NULL;
	bool ok = (now == NULL || sets_nothing(pn)) && sets_nothing(pj) &&
		  tb_matrix_params_from_json(pj, &p, &e) == 0 && tb_traffic_driver_for(p.tool) == &tb_traffic_iperf3;

	json_decref(pn);
	json_decref(pj);
	run_early_drop(ctl, &ctl->early_next);
	if (!ok || (x = calloc(1, sizeof(*x))) == NULL)
		return;
	x->metrics = sv->metrics;
	x->row = *next;
	x->row.port = run_port(next->id, 1);
	x->sh = sh;
	x->p = sh->p;
	if (run_server_init(&x->s, sv, sh, &x->row, &tb_traffic_iperf3, &p, p.omit_s + p.duration_s + SLACK_S, &e) !=
		    0 ||
	    ((x->look = run_idle_look_new(sv, &x->row, ch, sh)) != NULL && !run_idle_look_strays_only(x->look))) {
		run_server_free(&x->s);
		run_idle_look_free(x->look);
		free(x);
		return;
	}
	pthread_mutex_lock(&ctl->lock);
	ctl->early_next = x;
	pthread_mutex_unlock(&ctl->lock);
}

void run_early_kick(struct tb_run_ctl *ctl, int running_port)
{
	struct run_early *x;

	pthread_mutex_lock(&ctl->lock);
	if ((x = ctl->early_next) != NULL && !x->s.started) {
		if (x->look != NULL) {
			run_idle_look_also_port(x->look, running_port);
			run_idle_look_before(x->look, 1, &x->before);
		}
		x->kicked_ms = tb_now_ms();
		if (run_server_start(&x->s, x->look != NULL ? &x->before : NULL) == 0)
			tb_debug("runner", "matrix %lld run %d: its server starts ahead on %s, port %d",
				 (long long)x->row.matrix_id, x->row.seq, x->s.t.machine, x->row.port);
	}
	pthread_mutex_unlock(&ctl->lock);
}

void run_early_next_up(struct tb_run_ctl *ctl, int64_t run_id)
{
	struct run_early *x;

	run_early_drop(ctl, &ctl->early_now); /* one the last run did not take */
	pthread_mutex_lock(&ctl->lock);
	x = ctl->early_next;
	ctl->early_next = NULL;
	if (x != NULL && x->row.id == run_id)
		ctl->early_now = x, x = NULL;
	pthread_mutex_unlock(&ctl->lock);
	run_early_drop(ctl, &x);
}

struct run_early *run_early_take(struct tb_run_ctl *ctl, const struct tb_run_row *r, const struct tb_run_host *sh)
{
	struct run_early *x;
	bool gone;

	pthread_mutex_lock(&ctl->lock);
	x = ctl->early_now;
	ctl->early_now = NULL;
	pthread_mutex_unlock(&ctl->lock);
	if (x == NULL)
		return NULL;
	pthread_mutex_lock(&x->s.lock);
	gone = x->s.ended || x->s.listening < 0;
	pthread_mutex_unlock(&x->s.lock);
	if (gone || (x->s.started && tb_now_ms() - x->kicked_ms > FRESH_MS) || x->row.id != r->id ||
	    x->row.port != r->port || x->sh != sh || x->p != sh->p) {
		run_early_drop(ctl, &x);
		return NULL;
	}
	if (x->s.started)
		tb_metrics_server_ahead(x->metrics, 1);
	return x;
}

struct run_server *run_early_server(struct run_early *x)
{
	return &x->s;
}

struct run_idle_look *run_early_look(struct run_early *x)
{
	struct run_idle_look *l = x->look;

	x->look = NULL;
	return l;
}

void run_early_free(struct run_early *x)
{
	if (x == NULL)
		return;
	run_idle_look_free(x->look);
	free(x);
}

void run_early_drop(struct tb_run_ctl *ctl, struct run_early **slot)
{
	struct run_early *x;

	pthread_mutex_lock(&ctl->lock);
	x = *slot;
	*slot = NULL;
	pthread_mutex_unlock(&ctl->lock);
	if (x == NULL)
		return;
	if (x->s.started) { /* its look may still run: the pid comes after it */
		run_server_wait_pid(&x->s, 3000);
		run_server_finish(&x->s, 0);
		tb_metrics_server_ahead(x->metrics, 0);
		tb_debug("runner", "matrix %lld run %d: its server started ahead was not used: stopped",
			 (long long)x->row.matrix_id, x->row.seq);
	}
	run_server_free(&x->s);
	run_early_free(x);
}
