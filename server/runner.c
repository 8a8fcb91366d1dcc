/* runner.c - the matrix queue, its scheduler and a worker per running
 * matrix.  See runner.h; a matrix from start to end is runner_matrix.c. */
#include "runner.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "reserve.h"
#include "services.h"
#include "events.h"
#include "inventory.h"
#include "log.h"
#include "matrix.h"
#include "results.h"
#include "run_exec.h"
#include "runner_internal.h"
#include "store.h"
#include "timeutil.h"
#include "linkprof.h"
#include "tunables.h"

void tb_rn_publish(struct tb_runner *r, int64_t id)
{
	struct tb_results_src src = tb_runner_results_src(r, r->sv->store);
	json_t *j = NULL;

	if (tb_results_matrix_json(&src, id, 0, &j, NULL) != 0)
		return;
	tb_runner_annotate(r, j);
	tb_events_publish(r->sv->events, "matrix.state", NULL, id,
			  json_pack("{s:I, s:O, s:O, s:O*}", "matrix", (json_int_t)id, "state",
				    json_object_get(j, "state"), "progress", json_object_get(j, "progress"), "queue",
				    json_object_get(j, "queue")));
	json_decref(j);
}

void tb_rn_names_add(struct tb_rn_names *ns, const char *name)
{
	for (int i = 0; i < ns->n; i++)
		if (strcmp(ns->v[i], name) == 0)
			return;
	if (ns->n < (int)(sizeof(ns->v) / sizeof(ns->v[0]))) /* the spec's limits (matrix_spec.c): never more */
		snprintf(ns->v[ns->n++], sizeof(ns->v[0]), "%s", name);
}

/* Stop the run or round in progress of w (why: TB_RUN_CANCEL or TB_RUN_SHUTDOWN). */
static void stop_runs(struct tb_rn_worker *w, int why)
{
	tb_run_ctl_stop(w->r->sv, &w->ctl, why);
	for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
		tb_run_ctl_stop(w->r->sv, &w->par[k], why);
}

/* The worker running matrix id (lock held), or NULL. */
static struct tb_rn_worker *worker_of(struct tb_runner *r, int64_t id)
{
	for (int k = 0; k < TB_RUNNER_WORKERS; k++)
		if (r->w[k].busy && !r->w[k].done && r->w[k].id == id)
			return &r->w[k];
	return NULL;
}

static void stop_leftovers(struct tb_runner *r)
{
	struct tb_inventory *inv = tb_inv_current_get(r->sv->invs);

	for (int i = 0; i < r->nleft; i++) {
		const struct tb_machine *m = tb_inventory_find(inv, r->left[i].machine);
		struct tb_error e = {0};

		if (m != NULL &&
		    tb_run_kill_leftovers(r->sv, m, r->left[i].os, r->left[i].pids, r->left[i].npids, &e) != 0)
			tb_warn("runner", "%s: could not stop the iperf3 of an interrupted run (pids %ld %ld): %s",
				r->left[i].machine, r->left[i].pids[0], r->left[i].pids[1], e.message);
	}
	tb_inv_current_put(r->sv->invs, inv);
	free(r->left);
	r->left = NULL;
	r->nleft = 0;
}

static void note_leftover(void *cls, const struct tb_run_row *row)
{
	struct tb_runner *r = cls;
	struct leftover *l;

	if (row->client_pid <= 1 && row->server_pid <= 1)
		return;
	if ((l = realloc(r->left, (size_t)(r->nleft + 2) * sizeof(*l))) == NULL)
		return;
	r->left = l;
	if (row->client_pid > 1 && row->client_os != NULL) {
		l = &r->left[r->nleft++];
		snprintf(l->machine, sizeof(l->machine), "%s", row->client);
		snprintf(l->os, sizeof(l->os), "%s", row->client_os);
		l->pids[0] = row->client_pid;
		l->npids = 1;
	}
	if (row->server_pid > 1 && row->server_os != NULL) {
		l = &r->left[r->nleft++];
		snprintf(l->machine, sizeof(l->machine), "%s", row->server);
		snprintf(l->os, sizeof(l->os), "%s", row->server_os);
		l->pids[0] = row->server_pid;
		l->npids = 1;
	}
}

/* ---- the scheduler ---- */

static void *worker_main(void *arg)
{
	struct tb_rn_worker *w = arg;

	tb_rn_run_matrix(w);
	pthread_mutex_lock(&w->r->lock);
	w->done = 1;
	w->r->dirty = 1;
	pthread_cond_broadcast(&w->r->cond);
	pthread_mutex_unlock(&w->r->lock);
	return NULL;
}

/* Join the workers whose matrix ended (lock held; the join does not wait:
 * their thread has returned or is returning). */
static void reap(struct tb_runner *r)
{
	for (int k = 0; k < TB_RUNNER_WORKERS; k++) {
		struct tb_rn_worker *w = &r->w[k];

		if (w->busy && w->done && w->stoppers == 0) {
			pthread_join(w->th, NULL);
			w->busy = w->done = 0;
			w->id = 0;
			w->seq = -1;
		}
	}
}

static struct tb_rn_worker *free_worker(struct tb_runner *r)
{
	for (int k = 0; k < TB_RUNNER_WORKERS; k++)
		if (!r->w[k].busy && r->w[k].stoppers == 0)
			return &r->w[k];
	return NULL;
}

static int nbusy(const struct tb_runner *r)
{
	int n = 0;

	for (int k = 0; k < TB_RUNNER_WORKERS; k++)
		n += r->w[k].busy;
	return n;
}

/* Hold every host of q for it: 0, or -1 with why it waits (nothing held then). */
static int take_holds(struct tb_runner *r, const struct tb_rn_queued *q, char *why, size_t len)
{
	char holder[TB_HOLDER_MAX];
	int i;

	tb_rn_holder(q->id, q->name, holder, sizeof(holder));
	for (i = 0; i < q->ns.n; i++) {
		struct tb_error e = {0};
		struct tb_hold_info hi;

		if (tb_actions_hold_as(r->sv->actions, q->ns.v[i], holder, "matrix", q->id, q->actor, &e) == 0)
			continue;
		if (e.code == TB_ERR_CONFLICT && tb_actions_held_by(r->sv->actions, q->ns.v[i], &hi))
			snprintf(why, len, "waiting for %s: %s", q->ns.v[i], hi.text);
		else
			snprintf(why, len, "waiting for %s: %s", q->ns.v[i], e.message);
		break;
	}
	if (i == q->ns.n)
		return 0;
	while (i-- > 0)
		tb_actions_release(r->sv->actions, q->ns.v[i]);
	return -1;
}

/* A host q wants that a matrix queued before it (queue[0..before)) wants too: FIFO. */
static int wanted_before(struct tb_runner *r, int before, const struct tb_rn_queued *q, char *why, size_t len)
{
	for (int k = 0; k < before; k++)
		for (int a = 0; a < r->queue[k]->ns.n; a++)
			for (int b = 0; b < q->ns.n; b++)
				if (strcmp(r->queue[k]->ns.v[a], q->ns.v[b]) == 0) {
					snprintf(why, len, "waiting for %s: matrix %lld (%s), queued before it",
						 q->ns.v[b], (long long)r->queue[k]->id, r->queue[k]->name);
					return 1;
				}
	return 0;
}

/* Give q (whose hosts are held) to worker w; 0, or -1 (no thread). */
static int start_on(struct tb_runner *r, struct tb_rn_worker *w, const struct tb_rn_queued *q)
{
	w->busy = 1;
	w->done = 0;
	w->started = ++r->starts;
	w->id = q->id;
	w->seq = -1;
	snprintf(w->name, sizeof(w->name), "%s", q->name);
	snprintf(w->actor, sizeof(w->actor), "%s", q->actor);
	w->ns = q->ns;
	pthread_mutex_lock(&w->ctl.lock);
	w->ctl.stop = TB_RUN_GO;
	pthread_mutex_unlock(&w->ctl.lock);
	if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
		for (int i = 0; i < w->ns.n; i++)
			tb_actions_release(r->sv->actions, w->ns.v[i]);
		w->busy = 0;
		w->id = 0;
		return -1;
	}
	tb_info("runner", "matrix %lld (%s) starts (%d running)", (long long)q->id, q->name, nbusy(r));
	return 0;
}

/* One look at the queue (lock held): start, in FIFO order, every matrix a
 * worker is free for and whose hosts can be held; the others get their
 * reason.  A reason or a place that changed (one ahead started or was
 * canceled) goes to *events as [id, reason, position] to publish. */
static void schedule(struct tb_runner *r, json_t *events)
{
	for (int i = 0; i < r->nqueue;) {
		struct tb_rn_queued *q = r->queue[i];
		struct tb_rn_worker *w = free_worker(r);
		char why[TB_RUNNER_WHY_MAX];

		if (r->stopping)
			return;
		if (w == NULL)
			snprintf(why, sizeof(why), "waiting for a worker: %d matrices run (the most at once)",
				 TB_RUNNER_WORKERS);
		else if (!wanted_before(r, i, q, why, sizeof(why)) && take_holds(r, q, why, sizeof(why)) == 0) {
			if (start_on(r, w, q) == 0) {
				memmove(r->queue + i, r->queue + i + 1,
					(size_t)(r->nqueue - i - 1) * sizeof(r->queue[0]));
				r->nqueue--;
				free(q);
				continue;
			}
			snprintf(why, sizeof(why), "waiting for a worker: no thread could be started");
		}
		if (strcmp(why, q->why) != 0 || q->pos != i + 1) {
			if (strcmp(why, q->why) != 0)
				tb_info("runner", "matrix %lld waits: %s", (long long)q->id, why);
			snprintf(q->why, sizeof(q->why), "%s", why);
			q->pos = i + 1;
			json_array_append_new(events, json_pack("[I, s, i]", (json_int_t)q->id, why, q->pos));
		}
		i++;
	}
}

static void *scheduler(void *arg)
{
	struct tb_runner *r = arg;

	stop_leftovers(r);
	tb_tun_restore_pending(r->sv); /* what a crash left changed on the hosts (tunables.h) */
	tb_lp_remove_pending(r->sv);   /* the router pipes a crash left configured (linkprof.h) */
	pthread_mutex_lock(&r->lock);
	for (;;) {
		json_t *events;
		size_t k;
		json_t *ev;
		int fresh = r->dirty;

		reap(r);
		if (r->stopping)
			break;
		events = json_array(); /* after the stop's break: it would leak there */
		r->dirty = 0;
		if (fresh && r->nqueue > 0 && nbusy(r) == 0) {
			/* a host that did not answer at start may now; nothing runs to be disturbed */
			pthread_mutex_unlock(&r->lock);
			tb_tun_restore_pending(r->sv);
			pthread_mutex_lock(&r->lock);
		}
		schedule(r, events);
		pthread_mutex_unlock(&r->lock);
		json_array_foreach(events, k, ev)
		{
			json_int_t id = json_integer_value(json_array_get(ev, 0));
			json_t *why = json_array_get(ev, 1);

			tb_events_publish(r->sv->events, "matrix.state", NULL, id,
					  json_pack("{s:I, s:s, s:O, s:{s:O, s:O}}", "matrix", id, "state", "queued",
						    "waiting_for", why, "queue", "position", json_array_get(ev, 2),
						    "waiting_for", why));
		}
		json_decref(events);
		pthread_mutex_lock(&r->lock);
		reap(r);
		if (r->stopping)
			break;
		if (r->dirty)
			continue;
		if (r->nqueue > 0) { /* holds of actions and reservations end without telling: look again */
			struct timespec ts = tb_cond_deadline(500);

			pthread_cond_timedwait(&r->cond, &r->lock, &ts);
		} else {
			pthread_cond_wait(&r->cond, &r->lock);
		}
	}
	pthread_mutex_unlock(&r->lock);
	/* tb_runner_stop has stopped their runs: every worker ends now */
	for (int i = 0; i < TB_RUNNER_WORKERS; i++) {
		struct tb_rn_worker *w = &r->w[i];

		if (w->busy) {
			pthread_join(w->th, NULL);
			w->busy = 0;
		}
	}
	return NULL;
}

/* Free r (its threads joined or never started). */
static void tb_runner_free(struct tb_runner *r)
{
	for (int i = 0; i < TB_RUNNER_WORKERS; i++) {
		pthread_mutex_destroy(&r->w[i].ctl.lock);
		for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
			pthread_mutex_destroy(&r->w[i].par[k].lock);
	}
	for (int i = 0; i < r->nqueue; i++)
		free(r->queue[i]);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->left);
	free(r);
}

int tb_runner_new(struct tb_services *sv, struct tb_runner **out, struct tb_error *err)
{
	struct tb_runner *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	r->sv = sv;
	pthread_mutex_init(&r->lock, NULL);
	tb_cond_init(&r->cond); /* monotonic: the scheduler's look again every 0.5 s */
	for (int i = 0; i < TB_RUNNER_WORKERS; i++) {
		r->w[i].r = r;
		r->w[i].seq = -1;
		pthread_mutex_init(&r->w[i].ctl.lock, NULL);
		for (int k = 0; k < TB_RUNNER_PARALLEL - 1; k++)
			pthread_mutex_init(&r->w[i].par[k].lock, NULL);
	}
	if ((rc = tb_store_matrix_interrupt(sv->store,
					    "testbedd stopped while this ran: resume the matrix to run it again",
					    tb_now(), note_leftover, r, err)) != 0 ||
	    pthread_create(&r->th, NULL, scheduler, r) != 0) {
		if (rc == 0)
			rc = tb_fail(err, TB_ERR_INTERNAL, "", "cannot start the runner's thread");
		tb_runner_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void tb_runner_stop(struct tb_runner *r)
{
	struct tb_rn_worker *busy[TB_RUNNER_WORKERS];
	int n = 0;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	for (int i = 0; i < TB_RUNNER_WORKERS; i++)
		if (r->w[i].busy) {
			r->w[i].stoppers++;
			busy[n++] = &r->w[i];
		}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < n; i++)
		stop_runs(busy[i], TB_RUN_SHUTDOWN);
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < n; i++)
		busy[i]->stoppers--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->th, NULL); /* it joins every worker */
	tb_runner_free(r);
}

/* Queue q (taken: freed here on failure). */
static int enqueue(struct tb_runner *r, struct tb_rn_queued *q, struct tb_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (r->nqueue >= QUEUE_MAX) {
		rc = tb_fail(err, TB_ERR_CONFLICT, "", "%d matrices are queued already: wait for some to finish",
			     QUEUE_MAX);
		free(q);
	} else {
		r->queue[r->nqueue++] = q;
		r->dirty = 1;
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static struct tb_rn_queued *queued_new(int64_t id, const char *name, const char *actor)
{
	struct tb_rn_queued *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->id = id;
	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->actor, sizeof(q->actor), "%s", actor != NULL ? actor : "");
	return q;
}

int tb_runner_submit(struct tb_runner *r, const struct tb_matrix_plan *plan, const char *actor, int64_t rerun_of,
		     int64_t *id, struct tb_error *err)
{
	struct tb_run_row *rows = calloc((size_t)plan->nruns + 1, sizeof(*rows));
	char **params = calloc((size_t)plan->nruns + 1, sizeof(*params));
	char *spec = json_dumps(plan->spec, JSON_COMPACT | JSON_SORT_KEYS);
	struct tb_matrix_row m = {
		.name = plan->name,
		.spec = spec,
		.state = "queued",
		.actor = actor,
		.created_at = tb_now(),
		.seed = (int64_t)plan->seed,
		.estimated_ms = plan->estimated_ms,
		.rerun_of = rerun_of,
	};
	struct tb_rn_queued *q;
	const char *routers[TB_MATRIX_ROUTERS_MAX];
	int rc = 0, nrouters;

	if (rows == NULL || params == NULL || spec == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *p = &plan->runs[i];
		json_t *pj = tb_matrix_params_json(&p->p);

		/* the run's tunable set: stored with it, so that it can be reproduced (tunables.h) */
		if (pj != NULL && p->tset >= 0 &&
		    json_object_set_new(pj, "tunables", tb_matrix_tunables_set_json(plan, p->tset)) != 0) {
			json_decref(pj);
			pj = NULL;
		}
		/* the run's link profile: stored with it, so that it can be reproduced (linkprof.h) */
		if (pj != NULL && p->lprof >= 0 &&
		    json_object_set_new(pj, "link_profile", tb_matrix_linkprof_json(plan, p->lprof)) != 0) {
			json_decref(pj);
			pj = NULL;
		}

		params[i] = pj != NULL ? json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(pj);
		if (params[i] == NULL) {
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
			goto out;
		}
		rows[i] = (struct tb_run_row){
			.seq = p->seq,
			.cell = p->cell,
			.repeat = p->repeat,
			.round = p->round,
			.combo = p->combo,
			.want_client_os = p->client_os[0] ? p->client_os : NULL,
			.want_server_os = p->server_os[0] ? p->server_os : NULL,
			.client = p->client,
			.server = p->server,
			.link = p->link,
			.server_address = p->server_address,
			.protocol = tb_iperf_proto_name(p->p.proto),
			.direction = tb_iperf_dir_name(p->p.dir),
			.params = params[i],
		};
	}
	nrouters = tb_matrix_plan_routers(plan, routers);
	/* a host reserved by someone else: 409 now, not a matrix that waits (reserve.h) */
	for (int i = 0; i < plan->nruns && rc == 0; i++)
		if ((rc = tb_reserve_check(r->sv->reserve, plan->runs[i].client, actor, err)) == 0)
			rc = tb_reserve_check(r->sv->reserve, plan->runs[i].server, actor, err);
	for (int i = 0; i < nrouters && rc == 0; i++)
		rc = tb_reserve_check(r->sv->reserve, routers[i], actor, err);
	if (rc != 0 || (rc = tb_store_matrix_insert(r->sv->store, &m, rows, plan->nruns, id, err)) != 0)
		goto out;
	if ((q = queued_new(*id, plan->name, actor)) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		tb_store_matrix_update(r->sv->store, *id, "failed", 0, tb_now(), "internal", err->message, NULL);
		goto out;
	}
	for (int i = 0; i < plan->nruns; i++) {
		tb_rn_names_add(&q->ns, plan->runs[i].client);
		tb_rn_names_add(&q->ns, plan->runs[i].server);
	}
	for (int i = 0; i < nrouters; i++) /* its link profiles change them: no other matrix or action may */
		tb_rn_names_add(&q->ns, routers[i]);
	if ((rc = enqueue(r, q, err)) != 0)
		tb_store_matrix_update(r->sv->store, *id, "failed", 0, tb_now(), "conflict", err->message, NULL);
	else
		tb_rn_publish(r, *id);
out:
	if (params != NULL)
		for (int i = 0; i < plan->nruns; i++)
			free(params[i]);
	free(params);
	free(rows);
	free(spec);
	return rc;
}

static void read_state(void *cls, const struct tb_matrix_row *m)
{
	snprintf(cls, 16, "%s", m->state);
}

int tb_runner_cancel(struct tb_runner *r, int64_t id, struct tb_error *err)
{
	struct tb_rn_worker *w;
	char state[16];
	int rc, queued = 0;

	if ((rc = tb_store_matrix_get(r->sv->store, id, read_state, state, err)) != 0)
		return rc;
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->nqueue; i++) {
		if (r->queue[i]->id == id) {
			free(r->queue[i]);
			memmove(r->queue + i, r->queue + i + 1, (size_t)(r->nqueue - i - 1) * sizeof(r->queue[0]));
			r->nqueue--;
			r->dirty = 1; /* who waited behind it may start */
			pthread_cond_broadcast(&r->cond);
			queued = 1;
			break;
		}
	}
	if ((w = worker_of(r, id)) != NULL) {
		w->stoppers++; /* w stays this matrix's until the stop is done */
		pthread_mutex_unlock(&r->lock);
		stop_runs(w, TB_RUN_CANCEL);
		pthread_mutex_lock(&r->lock);
		w->stoppers--;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	pthread_mutex_unlock(&r->lock);
	if (!queued && strcmp(state, "queued") != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "id", "matrix %lld has ended (%s): nothing to cancel",
			       (long long)id, state);
	rc = tb_store_matrix_update(r->sv->store, id, "canceled", 0, tb_now(), "canceled",
				    "canceled before it started: resume runs it", err);
	tb_rn_publish(r, id);
	return rc;
}

struct mname {
	char name[TB_MATRIX_NAME_MAX + 1];
	char actor[64];
	char state[16];
};

static void read_name(void *cls, const struct tb_matrix_row *m)
{
	struct mname *mn = cls;

	snprintf(mn->name, sizeof(mn->name), "%s", m->name);
	snprintf(mn->actor, sizeof(mn->actor), "%s", m->actor != NULL ? m->actor : "");
	snprintf(mn->state, sizeof(mn->state), "%s", m->state);
}

/* A run to go of a resumed matrix: its ends, and the routers its link
 * profile changes (its stored params' link_profile.routers). */
static void add_hosts(void *cls, const struct tb_run_row *row)
{
	json_t *p = row->params != NULL ? json_loads(row->params, 0, NULL) : NULL;
	json_t *routers = json_object_get(json_object_get(p, "link_profile"), "routers"), *v;
	size_t i;

	tb_rn_names_add(cls, row->client);
	tb_rn_names_add(cls, row->server);
	json_array_foreach(routers, i, v)
	{
		if (json_is_string(v))
			tb_rn_names_add(cls, json_string_value(v));
	}
	json_decref(p);
}

int tb_runner_resume(struct tb_runner *r, int64_t id, struct tb_error *err)
{
	struct mname mn;
	struct tb_rn_queued *q;
	int rc, reset = 0, busy;

	if ((rc = tb_store_matrix_get(r->sv->store, id, read_name, &mn, err)) != 0)
		return rc;
	pthread_mutex_lock(&r->lock);
	busy = worker_of(r, id) != NULL;
	pthread_mutex_unlock(&r->lock);
	if (busy)
		return tb_fail(err, TB_ERR_CONFLICT, "id", "matrix %lld is running", (long long)id);
	if (strcmp(mn.state, "interrupted") != 0 && strcmp(mn.state, "canceled") != 0)
		return tb_fail(err, TB_ERR_CONFLICT, "id",
			       "matrix %lld is %s: only an interrupted or canceled matrix can be resumed"
			       " (rerun makes a new matrix from the same spec)",
			       (long long)id, mn.state);
	if ((q = queued_new(id, mn.name, mn.actor)) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_matrix_requeue(r->sv->store, id, &reset, err)) != 0 ||
	    (rc = tb_store_run_each(r->sv->store, id, "pending", add_hosts, &q->ns, err)) != 0) {
		free(q);
		return rc;
	}
	tb_info("runner", "matrix %lld resumed: %d run%s to go again", (long long)id, reset, reset == 1 ? "" : "s");
	if ((rc = enqueue(r, q, err)) != 0)
		return rc;
	tb_rn_publish(r, id);
	return 0;
}

int tb_runner_running(struct tb_runner *r, struct tb_mx_now *v, int max)
{
	const struct tb_rn_worker *ws[TB_RUNNER_WORKERS];
	int n = 0;

	if (r == NULL)
		return 0;
	pthread_mutex_lock(&r->lock);
	for (int k = 0; k < TB_RUNNER_WORKERS; k++) {
		const struct tb_rn_worker *w = &r->w[k];
		int at = n++;

		if (!w->busy || w->done) {
			n--;
			continue;
		}
		while (at > 0 && ws[at - 1]->started > w->started) { /* in the order they started */
			ws[at] = ws[at - 1];
			at--;
		}
		ws[at] = w;
	}
	for (int k = 0; k < n && k < max; k++) {
		v[k].matrix = ws[k]->id;
		v[k].seq = ws[k]->seq;
	}
	pthread_mutex_unlock(&r->lock);
	return n < max ? n : max;
}

_Static_assert(TB_RUNNER_WORKERS <= TB_MX_NOW_MAX, "results.h must hold every running matrix");

struct tb_results_src tb_runner_results_src(struct tb_runner *r, struct tb_store *st)
{
	struct tb_results_src src = {.store = st};

	src.nnow = tb_runner_running(r, src.now, TB_MX_NOW_MAX);
	return src;
}

void tb_runner_annotate(struct tb_runner *r, json_t *m)
{
	int64_t id = json_integer_value(json_object_get(m, "id"));
	json_t *p = json_object_get(m, "progress");
	struct tb_rn_worker *w;

	if (r == NULL || id <= 0)
		return;
	pthread_mutex_lock(&r->lock);
	if ((w = worker_of(r, id)) != NULL && json_is_object(p))
		json_object_set_new(p, "current_seq", w->seq >= 0 ? json_integer(w->seq) : json_null());
	for (int i = 0; i < r->nqueue; i++)
		if (r->queue[i]->id == id) {
			json_object_set_new(
				m, "queue",
				json_pack("{s:i, s:o}", "position", i + 1, "waiting_for",
					  r->queue[i]->why[0] ? json_string(r->queue[i]->why) : json_null()));
			break;
		}
	pthread_mutex_unlock(&r->lock);
}
