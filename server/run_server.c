/* run_server.c - the traffic tool's server of one run.  See run_internal.h. */
#include "run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services.h"
#include "hosts.h"
#include "run_idle.h"
#include "shquote.h"
#include "store.h"
#include "timeutil.h"

static void line_of(struct run_server *s, const char *line, size_t len)
{
	if (len > 6 && strncmp(line, "tbpid ", 6) == 0) {
		pthread_mutex_lock(&s->lock);
		s->pid = strtol(line + 6, NULL, 10);
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (len == 11 && strncmp(line, "tblistening", 11) == 0) {
		pthread_mutex_lock(&s->lock);
		s->listening = 1;
		/* a server with nothing to report (netperf's: the client has
		 * both ends) is done as soon as it listens */
		if (s->drv->server_stays && s->parser != NULL && s->drv->parser_done(s->parser))
			s->final_seen = 1;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (len == 10 && strncmp(line, "tbnolisten", 10) == 0) {
		pthread_mutex_lock(&s->lock);
		s->listening = -1;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (len > 7 && strncmp(line, "tbexit ", 7) == 0) {
		s->exit_code = (int)strtol(line + 7, NULL, 10);
		pthread_mutex_lock(&s->lock);
		if (s->listening == 0 && s->drv->listen_line != NULL) { /* it ended before it listened */
			s->listening = -1;
			pthread_cond_broadcast(&s->cond);
		}
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (s->drv->listen_line != NULL && strncmp(line, s->drv->listen_line, strlen(s->drv->listen_line)) == 0) {
		pthread_mutex_lock(&s->lock);
		if (s->listening == 0) {
			s->listening = 1;
			pthread_cond_broadcast(&s->cond);
		}
		pthread_mutex_unlock(&s->lock);
	}
	tb_outbuf_add(&s->out, line, len);
	tb_outbuf_add(&s->out, "\n", 1);
	pthread_mutex_lock(&s->lock);
	if (s->parser == NULL) { /* started ahead of its run: the run's parser comes later */
		tb_outbuf_add(&s->held, line, len);
		tb_outbuf_add(&s->held, "\n", 1);
		pthread_mutex_unlock(&s->lock);
		return;
	}
	pthread_mutex_unlock(&s->lock);
	s->drv->parser_feed(s->parser, line, len);
	s->drv->parser_feed(s->parser, "\n", 1);
	if (s->drv->server_stays && !s->final_seen && s->drv->parser_done(s->parser)) {
		pthread_mutex_lock(&s->lock);
		s->final_seen = 1;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
}

void run_server_set_parser(struct run_server *s, struct tb_traffic_parser *parser)
{
	/* under the lock: the server's thread sees the parser, or holds its line
	 * for it, never both; the held lines come first */
	pthread_mutex_lock(&s->lock);
	if (parser != NULL && s->held.len > 0)
		s->drv->parser_feed(parser, tb_outbuf_str(&s->held), s->held.len);
	s->held.len = 0;
	s->parser = parser;
	pthread_mutex_unlock(&s->lock);
}

static int server_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_server *s = cls;

	if (stream == TB_SSH_STDERR) {
		tb_outbuf_add(&s->errb, data, len);
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n') {
			line_of(s, tb_outbuf_str(&s->line), s->line.len);
			s->line.len = 0;
		} else {
			tb_outbuf_add(&s->line, &data[i], 1);
		}
	}
	return 0;
}

static void *server_thread(void *arg)
{
	struct run_server *s = arg;
	const char *argv[] = {"sh", "-c", s->script, NULL};
	struct tb_ssh_result res;
	int rc = s->before.script != NULL ? tb_ssh_exec_before(tb_hosts_pool(s->sv->hosts), &s->t, &s->before, argv,
							       s->timeout_ms, server_output, s, &res, &s->err)
					  : tb_ssh_exec(tb_hosts_pool(s->sv->hosts), &s->t, argv, s->timeout_ms,
							server_output, s, &res, &s->err);

	if (s->line.len > 0) {
		line_of(s, tb_outbuf_str(&s->line), s->line.len);
		s->line.len = 0;
	}
	pthread_mutex_lock(&s->lock);
	s->rc = rc;
	s->ended = 1;
	if (s->listening == 0)
		s->listening = -1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Wait on s->cond (s->lock held) for at most 50 ms. */
static void wait_50ms(struct run_server *s)
{
	struct timespec ts;

	ts = tb_cond_deadline(50);
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

void run_server_wait_pid(struct run_server *s, int wait_ms)
{
	int64_t until = tb_monotonic_ms() + wait_ms;

	pthread_mutex_lock(&s->lock);
	while (s->pid <= 1 && !s->ended && s->listening == 0 && tb_monotonic_ms() < until)
		wait_50ms(s);
	pthread_mutex_unlock(&s->lock);
}

int run_client_gate(void *cls)
{
	struct run_gate *g = cls;
	int st;
	long pid;

	int looked = g->look != NULL ? run_idle_look_verdict(g->look) : 1;

	pthread_mutex_lock(&g->s->lock);
	st = g->s->listening;
	pid = g->s->pid;
	pthread_mutex_unlock(&g->s->lock);
	if (looked < 0) {
		st = -2;
	} else if ((st == 0 || looked == 0) && tb_monotonic_ms() >= g->until) {
		st = st == 1 ? -2 : -1; /* a look that never ended counts as one that failed */
	}
	g->listening = st;
	if (g->ctl->stop || st < 0)
		return -1;
	if (st == 0 || looked == 0)
		return 0;
	g->r->server_pid = pid;
	tb_store_run_update(g->store, g->r, NULL);
	if (g->go != NULL)
		g->go(g->go_cls);
	return 1;
}

/* Wait for the server's ssh command to end; stop it by pid if it does not. */
void run_server_finish(struct run_server *s, int wait_ms)
{
	int64_t until = tb_monotonic_ms() + wait_ms;
	int ended;

	/* woken by server_run the moment the server's session ends */
	pthread_mutex_lock(&s->lock);
	while (!s->ended && !s->final_seen && tb_monotonic_ms() < until) {
		wait_50ms(s);
	}
	ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	if (!ended && s->pid > 1) {
		struct tb_error e = {0};

		s->killed = 1;
		tb_ssh_kill(tb_hosts_pool(s->sv->hosts), &s->t, s->pid, "TERM", &e);
	}
	if (s->started)
		pthread_join(s->th, NULL);
	s->started = false;
}

void run_server_free(struct run_server *s)
{
	tb_outbuf_free(&s->line);
	tb_outbuf_free(&s->held);
	tb_outbuf_free(&s->out);
	tb_outbuf_free(&s->errb);
	free(s->script);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
}

/* The script that runs the server and says when it listens:
 *   timeout --foreground W TOOL -s ... & p=$!; echo tbpid $p; [POLL] wait $p; echo tbexit $?
 * POLL: the driver's listen check until it holds (then tblistening), or the
 * server gone (tbnolisten); none when the tool says so itself (listen_line). */
static char *server_script(const struct tb_run_host *h, const struct tb_traffic_driver *drv,
			   const struct tb_iperf_params *p, unsigned int port, long wall_s, struct tb_error *err)
{
	struct tb_argv av;
	const char *argv[TB_ARGV_MAX + 4];
	char wall[24], poll[448] = "", *q, *script;
	size_t need;
	int n = 0;

	if (drv->server_argv(&h->tools, p, port, (int)(wall_s > 60 ? 60 : wall_s), &av, err) != 0)
		return NULL;
	snprintf(wall, sizeof(wall), "%ld", wall_s);
	argv[n++] = "timeout";
	argv[n++] = "--foreground";
	argv[n++] = wall;
	for (int i = 0; i < av.n && n < TB_ARGV_MAX + 3; i++)
		argv[n++] = av.v[i];
	argv[n] = NULL;
	if ((q = tb_sh_quote_argv(argv, err)) == NULL)
		return NULL;
	if (drv->listen_line == NULL) {
		char check[160];

		drv->listen_check(h->bsd, p, port, check, sizeof(check));
		snprintf(poll, sizeof(poll),
			 "n=0; until %s; do n=$((n+1)); if [ $n -ge 1000 ] || ! kill -0 $p 2>/dev/null; then echo "
			 "tbnolisten; n=-1; break; fi; sleep 0.002; done; [ $n -ge 0 ] && echo tblistening; ",
			 check);
	}
	need = strlen(q) + strlen(poll) + 64;
	if ((script = malloc(need)) == NULL) {
		free(q);
		tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		return NULL;
	}
	snprintf(script, need, "%s & p=$!; echo tbpid $p; %swait $p; echo tbexit $?", q, poll);
	free(q);
	return script;
}

int run_server_init(struct run_server *s, struct tb_services *sv, const struct tb_run_host *sh,
		    const struct tb_run_row *r, const struct tb_traffic_driver *drv, const struct tb_iperf_params *p,
		    long wall_s, struct tb_error *err)
{
	memset(s, 0, sizeof(*s));
	s->sv = sv;
	s->r = r;
	s->drv = drv;
	s->out.max = RUN_OUT_MAX;
	s->errb.max = RUN_ERR_MAX;
	s->line.max = 65536;
	s->held.max = 65536;
	s->exit_code = -1;
	pthread_mutex_init(&s->lock, NULL);
	tb_cond_init(&s->cond);
	tb_hosts_target(sv->hosts, sh->m, sh->p, &s->t, s->pin, sizeof(s->pin));
	s->timeout_ms = (wall_s + 10) * 1000;
	s->script = server_script(sh, drv, p, (unsigned int)r->port, wall_s + 5, err);
	return s->script != NULL ? 0 : -1;
}

int run_server_start(struct run_server *s, const struct tb_ssh_before *before)
{
	if (before != NULL)
		s->before = *before;
	s->started = pthread_create(&s->th, NULL, server_thread, s) == 0;
	return s->started ? 0 : -1;
}
