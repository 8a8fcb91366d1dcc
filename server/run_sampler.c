/* run_sampler.c - sampling a host during a run.  See run_sampler.h. */
#include "run_sampler.h"

#include <string.h>

#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "services.h"
#include "store.h"

/* A sample from the reader: published beside the run's intervals. */
static void on_sample(void *cls, json_t *sample)
{
	struct run_sampler *s = cls;

	s->published++;
	tb_events_publish(s->sv->events, "run.sample", s->host, s->r->matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:s, s:o}", "matrix", (json_int_t)s->r->matrix_id, "run",
				    (json_int_t)s->r->id, "seq", s->r->seq, "side", s->side, "host", s->host, "sample",
				    sample));
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
	tb_sample_reader_free(s->reader);
	s->reader = NULL;
	pthread_mutex_destroy(&s->lock);
}
