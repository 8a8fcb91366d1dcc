/* runner_par.c - hosts at once: every host of a matrix prepared before its
 * first run, and the runs of a round each in a thread (runner_internal.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "inventory.h"
#include "hostsnap.h"
#include "hosts.h"
#include "log.h"
#include "run_ahead.h"
#include "runner_internal.h"

/* Before the first run, every host at once: what it answers as and its
 * iperf3 (tb_run_host_prepare), its metadata when its first run wants the
 * OS it is in, and the routers' metadata: one ssh round trip of time, not
 * one per host.  What fails here is tried again before the host's runs.
 * The first run's server starts as soon as the hosts are ready, while the
 * routers' metadata (the longer script) is still being taken. */
struct warm {
	struct tb_rn_worker *w;
	const struct job *j; /* the host's first run (NULL: a router) */
	struct tb_run_host *h;
	const char *want;
	const struct tb_machine *router;
	pthread_t th;
};

static void *warm_main(void *arg)
{
	struct warm *a = arg;
	struct tb_error e = {0};

	if (a->router != NULL) {
		if (tb_hostsnap_take_machine(a->w->r->sv, a->w->id, a->router, &e) != 0)
			tb_warn("runner", "matrix %lld: the metadata of router %s was not taken: %s",
				(long long)a->w->id, a->router->name, e.message);
	} else {
		/* the metadata in the same exec as the versions */
		struct tb_run_snap snap = {a->j->row.matrix_id, a->want, a->j->row.link};

		if (tb_run_host_prepare(a->w->r->sv, a->h, &snap, &e) == 0 &&
		    (a->want == NULL || strcmp(a->want, a->h->os) == 0)) {
			struct tb_ssh_target t;
			char pin[96];

			tb_rn_snapshot(a->w, a->j, a->h); /* when that exec did not take it */
			/* a standby shell for its first run (run_ahead.h), while the other hosts get ready */
			tb_hosts_target(a->w->r->sv->hosts, a->h->m, a->h->p, &t, pin, sizeof(pin));
			run_ahead_one(a->w->r->sv, &t);
		}
	}
	return NULL;
}

/* Whether name is one of hs[0..n): a router that runs traffic itself gets
 * its metadata with its preparation, not a second time beside it. */
static bool is_run_host(const struct tb_run_host *hs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (hs[i].m != NULL && strcmp(hs[i].m->name, name) == 0)
			return true;
	return false;
}

void tb_rn_warm_up(struct tb_rn_worker *wk, struct jobs *js, struct tb_run_host *hs, int *nh)
{
	struct tb_inventory *inv = tb_inv_current_get(wk->r->sv->invs);
	struct warm *w = calloc((size_t)(2 * js->n) + inv->nmachines + 1, sizeof(*w));
	int n = 0, seen = *nh;

	for (int i = 0; w != NULL && i < js->n; i++)
		for (int k = 0; k < 2; k++) {
			const char *name = k == 0 ? js->v[i].client : js->v[i].server;
			struct tb_run_host *h = tb_rn_host_for(hs, nh, inv, name);

			if (h == NULL || h - hs < seen) /* gone, or met already */
				continue;
			seen = *nh;
			h->m = tb_inventory_find(inv, name);
			w[n++] = (struct warm){wk,   &js->v[i],
					       h,    k == 0 ? js->v[i].row.want_client_os : js->v[i].row.want_server_os,
					       NULL, 0};
		}
	for (size_t i = 0; w != NULL && i < inv->nmachines; i++)
		if (inv->machines[i].role == TB_ROLE_ROUTER && !is_run_host(hs, *nh, inv->machines[i].name))
			w[n++] = (struct warm){wk, NULL, NULL, NULL, &inv->machines[i], 0};
	for (int i = 0; i < n; i++)
		if (pthread_create(&w[i].th, NULL, warm_main, &w[i]) != 0) {
			warm_main(&w[i]);
			w[i].w = NULL; /* no thread to join */
		}
	for (int pass = 0; pass < 2; pass++) { /* the hosts, then the routers */
		for (int i = 0; i < n; i++)
			if (w[i].w != NULL && (w[i].router == NULL) == (pass == 0))
				pthread_join(w[i].th, NULL);
		if (pass == 0 && w != NULL)
			tb_rn_first_ahead(wk, js, hs, *nh);
	}
	free(w);
	tb_inv_current_put(wk->r->sv->invs, inv);
}

struct par_job {
	struct tb_rn_worker *w;
	struct job *j;
	struct tb_run_host *c, *s;
	struct tb_run_ctl *ctl;
	pthread_t th;
	bool started;
};

static void *par_main(void *arg)
{
	struct par_job *p = arg;

	tb_rn_run_job(p->w, p->j, p->c, p->s, p->ctl);
	tb_run_round_skip(p->ctl); /* a run that ended before its look holds the others no longer */
	return NULL;
}

/* n runs of one round (their hosts are disjoint) at once, each in a thread of
 * its own with its own control; returns when all have ended. */
void tb_rn_run_round(struct tb_rn_worker *w, struct job *js, int n, struct tb_run_host *hs, int *nh)
{
	struct tb_inventory *inv = tb_inv_current_get(w->r->sv->invs);
	struct par_job p[TB_RUNNER_PARALLEL];
	struct tb_run_round rd;
	int stop;

	/* reset the other slots, then look at the matrix's stop: a cancel that
	 * comes after this look stops every slot itself (tb_runner_cancel) */
	for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++) {
		pthread_mutex_lock(&w->par[k].lock);
		w->par[k].stop = TB_RUN_GO;
		pthread_mutex_unlock(&w->par[k].lock);
	}
	pthread_mutex_lock(&w->ctl.lock);
	stop = w->ctl.stop;
	pthread_mutex_unlock(&w->ctl.lock);
	tb_run_round_init(&rd, n);
	for (int k = 0; k < n; k++) {
		p[k] = (struct par_job){w, &js[k], NULL, NULL, k == 0 ? &w->ctl : &w->par[k - 1], 0, false};
		p[k].ctl->in_round = n > 1; /* the runs of a round may share a host: run_exec.c's idle look */
		p[k].ctl->round = n > 1 ? &rd : NULL;
		p[k].ctl->round_looked = 0;
		if (stop || tb_rn_resolve(w, &js[k], hs, nh, inv, &p[k].c, &p[k].s) != 0) {
			tb_run_round_skip(p[k].ctl); /* it never looks: the others do not wait for it */
			continue;
		}
		if (pthread_create(&p[k].th, NULL, par_main, &p[k]) == 0) {
			p[k].started = true;
		} else {
			tb_run_round_skip(p[k].ctl); /* no thread: in turn, after the round's others */
			p[k].ctl->round = NULL;
			tb_rn_run_job(w, &js[k], p[k].c, p[k].s, p[k].ctl);
		}
	}
	for (int k = 0; k < n; k++)
		if (p[k].started)
			pthread_join(p[k].th, NULL);
	for (int k = 0; k < n; k++)
		p[k].ctl->round = NULL;
	tb_run_round_destroy(&rd);
	w->ctl.in_round = 0; /* the matrix's own control, used by its single runs too */
	tb_inv_current_put(w->r->sv->invs, inv);
}
