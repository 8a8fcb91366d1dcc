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

/* The first line is "tbpid N" (the loop's shell); the rest goes to the reader. */
static int on_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_sampler *s = cls;
	size_t i = 0;

	if (stream != TB_SSH_STDOUT)
		return 0;
	while (!s->past_pid && i < len) {
		char c = data[i++];

		if (c != '\n') {
			if (s->line_len < sizeof(s->line) - 1)
				s->line[s->line_len++] = c;
			continue;
		}
		s->line[s->line_len] = '\0';
		s->past_pid = true;
		if (strncmp(s->line, "tbpid ", 6) == 0) {
			pthread_mutex_lock(&s->lock);
			s->pid = strtol(s->line + 6, NULL, 10);
			pthread_mutex_unlock(&s->lock);
		}
	}
	if (i < len)
		tb_sample_feed(s->reader, data + i, len - i);
	return 0;
}

struct start {
	struct run_sampler *s;
	char *script;
	long timeout_ms;
};

static void *sampler_thread(void *arg)
{
	struct start *st = arg;
	struct run_sampler *s = st->s;
	const char *argv[] = {"sh", "-c", st->script, NULL};
	struct tb_error e = {0};
	int rc = tb_ssh_exec(tb_hosts_pool(s->sv->hosts), &s->t, argv, st->timeout_ms, on_output, s, NULL, &e);

	if (rc != 0 && rc != TB_ERR_TIMEOUT && rc != TB_ERR_CANCELED)
		tb_info("runner", "run %lld: sampling %s: %s", (long long)s->r->id, s->host, e.message);
	free(st->script);
	free(st);
	return NULL;
}

int run_sampler_start(struct run_sampler *s, struct tb_services *sv, const struct tb_run_host *h,
		      const struct tb_run_row *r, const char *side, long wall_s)
{
	struct start *st;
	const char *loop = tb_sample_command(h->bsd ? TB_SAMPLE_FREEBSD : TB_SAMPLE_LINUX);
	size_t need = strlen(loop) + 32;

	memset(s, 0, sizeof(*s));
	s->sv = sv;
	s->r = r;
	s->side = side;
	s->host = h->m->name;
	pthread_mutex_init(&s->lock, NULL);
	tb_hosts_target(sv->hosts, h->m, h->p, &s->t, s->pin, sizeof(s->pin));
	s->reader = tb_sample_reader_new(h->bsd ? TB_SAMPLE_FREEBSD : TB_SAMPLE_LINUX, on_sample, s);
	st = malloc(sizeof(*st));
	if (s->reader == NULL || st == NULL || (st->script = malloc(need)) == NULL) {
		free(st);
		return -1;
	}
	/* the shell says its pid, then runs the loop (a constant: nothing of a request) */
	snprintf(st->script, need, "echo tbpid $$; %s", loop);
	st->s = s;
	st->timeout_ms = (wall_s + 10) * 1000;
	if (pthread_create(&s->th, NULL, sampler_thread, st) != 0) {
		free(st->script);
		free(st);
		return -1;
	}
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
