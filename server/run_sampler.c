/* run_sampler.c - sampling a host during a run.  See run_sampler.h. */
#include "run_sampler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "services.h"
#include "store.h"
#include "store_samples.h"
#include "timeutil.h"

/* The samples read and not stored yet, in one transaction (a failure is
 * logged: the events still have them until the retention). */
static void flush(struct run_sampler *s)
{
	struct tb_sample_row rows[RUN_SAMPLE_BATCH];
	struct tb_error e = {0};
	int k = 0;

	for (int i = 0; i < s->npend; i++)
		if (s->pend_json[i] != NULL)
			rows[k++] = (struct tb_sample_row){.run_id = s->r->id,
							   .host = s->host,
							   .side = s->side,
							   .n = s->stored + i,
							   .at_ms = s->pend_at[i],
							   .json = s->pend_json[i]};
	if (k > 0 && tb_store_samples_add(s->sv->store, rows, (size_t)k, &e) != 0)
		tb_info("runner", "run %lld: storing samples of %s: %s", (long long)s->r->id, s->host, e.message);
	for (int i = 0; i < s->npend; i++) {
		free(s->pend_json[i]);
		s->pend_json[i] = NULL;
	}
	s->stored += s->npend;
	s->npend = 0;
}

/* A sample from the reader: published beside the run's intervals. */
static void on_sample(void *cls, json_t *sample)
{
	struct run_sampler *s = cls;

	s->published++;
	s->pend_at[s->npend] = tb_now_ms();
	s->pend_json[s->npend++] = json_dumps(sample, JSON_COMPACT);
	if (s->npend == RUN_SAMPLE_BATCH)
		flush(s);
	tb_events_publish(s->sv->events, "run.sample", s->host, s->r->matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:s, s:i, s:o}", "matrix", (json_int_t)s->r->matrix_id, "run",
				    (json_int_t)s->r->id, "seq", s->r->seq, "side", s->side, "host", s->host, "n",
				    s->published - 1, "sample", sample));
}

/* The loop's remote pid (tb_ssh_spawn: before any of its output). */
static int on_pid(void *cls, long pid)
{
	struct run_sampler *s = cls;

	pthread_mutex_lock(&s->lock);
	s->pid = pid;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The loop's output, to the reader. */
static int on_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_sampler *s = cls;

	if (stream == TB_SSH_STDOUT)
		tb_sample_feed(s->reader, data, len);
	return 0;
}

/* The sampler's thread: the loop (a constant: nothing of a request) until
 * it is killed by pid or its time is up. */
static void *sampler_thread(void *arg)
{
	struct run_sampler *s = arg;
	const char *argv[] = {"sh", "-c", tb_sample_command(s->os), NULL};
	struct tb_error e = {0};
	int rc = tb_ssh_spawn(tb_hosts_pool(s->sv->hosts), &s->t, argv, s->timeout_ms, on_pid, on_output, s, NULL, &e);

	if (rc != 0 && rc != TB_ERR_TIMEOUT && rc != TB_ERR_CANCELED)
		tb_info("runner", "run %lld: sampling %s: %s", (long long)s->r->id, s->host, e.message);
	return NULL;
}

int run_sampler_start(struct run_sampler *s, struct tb_services *sv, const struct tb_run_host *h,
		      const struct tb_run_row *r, const char *side, long wall_s)
{
	memset(s, 0, sizeof(*s));
	s->sv = sv;
	s->r = r;
	s->side = side;
	s->host = h->m->name;
	s->os = h->bsd ? TB_SAMPLE_FREEBSD : TB_SAMPLE_LINUX;
	s->timeout_ms = (wall_s + 10) * 1000;
	pthread_mutex_init(&s->lock, NULL);
	tb_hosts_target(sv->hosts, h->m, h->p, &s->t, s->pin, sizeof(s->pin));
	s->reader = tb_sample_reader_new(s->os, on_sample, s);
	if (s->reader == NULL || pthread_create(&s->th, NULL, sampler_thread, s) != 0)
		return -1;
	s->started = true;
	return 0;
}

void run_sampler_stop(struct run_sampler *s)
{
	long pid;

	if (s->started) {
		pthread_mutex_lock(&s->lock);
		pid = s->pid;
		pthread_mutex_unlock(&s->lock);
		if (pid > 1) {
			struct tb_error e = {0};

			tb_ssh_kill(tb_hosts_pool(s->sv->hosts), &s->t, pid, "TERM", &e);
		}
		pthread_join(s->th, NULL);
		s->started = false;
	}
	flush(s);
	tb_sample_reader_free(s->reader);
	s->reader = NULL;
	pthread_mutex_destroy(&s->lock);
}

size_t run_sample_routers(const struct tb_inventory *inv, const char *link, const struct tb_machine **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; link != NULL && i < inv->nmachines && n < max; i++) {
		const struct tb_machine *m = &inv->machines[i];
		int on = 0;

		for (size_t k = 0; m->role == TB_ROLE_ROUTER && k < m->nlinks; k++)
			on |= strcmp(m->links[k].name, link) == 0;
		if (on)
			out[n++] = m;
	}
	return n;
}

/* Router m as a run host: the persona it answers as now (the prober's
 * last word: no waiting here).  0, or -1 when it answers as none. */
static int router_host(struct tb_services *sv, const struct tb_machine *m, struct tb_run_host *h)
{
	const struct tb_persona *p;
	char os[TB_NAME_MAX];

	if (!tb_hosts_answering(sv->hosts, m->name, os, sizeof(os)) || (p = tb_machine_persona(m, os)) == NULL)
		return -1;
	memset(h, 0, sizeof(*h));
	h->m = m;
	h->p = p;
	snprintf(h->os, sizeof(h->os), "%s", os);
	h->bsd = strcmp(os, "freebsd") == 0;
	return 0;
}

void run_samplers_start(struct run_samplers *set, struct tb_services *sv, const struct tb_run_host *ch,
			const struct tb_run_host *sh, const struct tb_run_row *r, long wall_s)
{
	const struct tb_machine *rm[RUN_SAMPLE_ROUTERS];
	size_t nr;

	memset(set, 0, sizeof(*set));
	set->sv = sv;
	if (run_sampler_start(&set->s[set->n], sv, ch, r, "client", wall_s) == 0)
		set->n++;
	else
		run_sampler_stop(&set->s[set->n]);
	if (run_sampler_start(&set->s[set->n], sv, sh, r, "server", wall_s) == 0)
		set->n++;
	else
		run_sampler_stop(&set->s[set->n]);
	set->inv = tb_inv_current_get(sv->invs);
	nr = run_sample_routers(set->inv, r->link, rm, RUN_SAMPLE_ROUTERS);
	for (size_t i = 0; i < nr; i++) {
		struct tb_run_host *h = &set->routers[i];

		if (router_host(sv, rm[i], h) != 0) {
			tb_info("runner", "run %lld: router %s answers as no OS of its own: not sampled",
				(long long)r->id, rm[i]->name);
			continue;
		}
		if (run_sampler_start(&set->s[set->n], sv, h, r, "router", wall_s) == 0)
			set->n++;
		else
			run_sampler_stop(&set->s[set->n]);
	}
}

void run_samplers_stop(struct run_samplers *set)
{
	for (int i = 0; i < set->n; i++)
		run_sampler_stop(&set->s[i]);
	set->n = 0;
	if (set->inv != NULL)
		tb_inv_current_put(set->sv->invs, set->inv);
	set->inv = NULL;
}
