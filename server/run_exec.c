/* run_exec.c - one traffic tool run between two hosts.  See run_exec.h. */
#include "run_exec.h"
#include "run_beside.h"
#include "run_early.h"
#include "run_idle.h"
#include "netperf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services.h"
#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "matrix.h"
#include "run_internal.h"
#include "store.h"
#include "timeutil.h"
#include "iperf2.h"

#define LISTEN_WAIT_MS 8000 /* server started -> listening */
#define BUSY_TRIES 4
#define LOST_TRIES 2     /* a client stopped by timeout(1) with no stream connected */
#define TIMEOUT_EXIT 124 /* timeout(1): the command ran out of time */

/* ---- events ---- */

struct pub {
	struct tb_services *sv;
	const struct tb_run_row *r;
	const char *side;
	const char *host;
	int n;
	struct run_beside *beside; /* the server's: its kick_at-th interval kicks the next run's shells */
	int kick_at;
};

static void publish_interval(void *cls, json_t *interval)
{
	struct pub *pb = cls;

	tb_events_publish(pb->sv->events, "run.interval", pb->host, pb->r->matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:i, s:o}", "matrix", (json_int_t)pb->r->matrix_id, "run",
				    (json_int_t)pb->r->id, "seq", pb->r->seq, "side", pb->side, "n", pb->n++,
				    "interval", interval));
	if (pb->beside != NULL && pb->n == pb->kick_at)
		run_beside_ahead(pb->beside); /* the test's last second */
}

static void publish_run(struct tb_services *sv, const struct tb_run_row *r)
{
	json_t *j = json_pack("{s:I, s:I, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s}", "matrix", (json_int_t)r->matrix_id,
			      "run", (json_int_t)r->id, "seq", r->seq, "cell", r->cell, "repeat", r->repeat, "state",
			      r->state, "client", r->client, "server", r->server, "protocol", r->protocol, "direction",
			      r->direction);

	if (j == NULL)
		return;
	json_object_set_new(j, "error_class", r->error_class ? json_string(r->error_class) : json_null());
	json_object_set_new(j, "error_message", r->error_message ? json_string(r->error_message) : json_null());
	json_object_set_new(j, "client_command", r->client_command ? json_string(r->client_command) : json_null());
	json_object_set_new(j, "server_command", r->server_command ? json_string(r->server_command) : json_null());
	json_object_set_new(j, "sender_bps", r->sender_bps >= 0 ? json_real(r->sender_bps) : json_null());
	json_object_set_new(j, "receiver_bps", r->receiver_bps >= 0 ? json_real(r->receiver_bps) : json_null());
	json_object_set_new(j, "retransmits", r->retransmits >= 0 ? json_integer(r->retransmits) : json_null());
	json_object_set_new(j, "lost_percent", r->lost_percent >= 0 ? json_real(r->lost_percent) : json_null());
	tb_events_publish(sv->events, "run.state", r->client, r->matrix_id, j);
}

static void target_of(struct tb_services *sv, const struct tb_run_host *h, struct tb_ssh_target *t, char *pin,
		      size_t pinlen)
{
	tb_hosts_target(sv->hosts, h->m, h->p, t, pin, pinlen);
}

/* ---- the client side ---- */

struct client {
	struct tb_run_ctl *ctl;
	struct tb_store *store;
	struct tb_run_row *r;
	struct tb_outbuf out, errb;
	const struct tb_traffic_driver *drv;
	struct tb_traffic_parser *parser; /* the client's output, live */
};

static int client_pid(void *cls, long pid)
{
	struct client *c = cls;

	pthread_mutex_lock(&c->ctl->lock);
	c->ctl->client_pid = pid;
	pthread_mutex_unlock(&c->ctl->lock);
	c->r->client_pid = pid;
	/* a client whose shell waits for the go while the first look runs is stored with
	 * the run when it is let go (go_running): until then the run is pending, its
	 * commands not run */
	if (c->r->state != NULL && strcmp(c->r->state, "running") == 0)
		tb_store_run_update(c->store, c->r, NULL);
	return 0;
}

static int client_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct client *c = cls;

	if (stream == TB_SSH_STDERR) {
		tb_outbuf_add(&c->errb, data, len);
		return 0;
	}
	tb_outbuf_add(&c->out, data, len);
	c->drv->parser_feed(c->parser, data, len);
	return 0;
}

void tb_run_ctl_stop(struct tb_services *sv, struct tb_run_ctl *ctl, int why)
{
	struct tb_ssh_target t;
	long pid;

	pthread_mutex_lock(&ctl->lock);
	if (ctl->stop == TB_RUN_GO || why == TB_RUN_SHUTDOWN)
		ctl->stop = why;
	pid = ctl->client_pid;
	t = ctl->client_t;
	if (pid > 1)
		ctl->signaled = 1;
	pthread_mutex_unlock(&ctl->lock);
	if (pid > 1) {
		struct tb_error e = {0};

		/* SIGINT: iperf3 prints its partial result and exits (timeout(1) passes it on) */
		tb_ssh_kill(tb_hosts_pool(sv->hosts), &t, pid, "INT", &e);
	}
}

/* ---- one attempt, then the outcome ---- */

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/* Figures of the run from a normalised result: sender/receiver bitrate, ... */
static void figures(struct tb_run_row *r, const json_t *result, bool stopped)
{
	const json_t *end = json_object_get(result, "end");
	const json_t *snd = json_object_get(end, "sender"), *rcv = json_object_get(end, "receiver");

	r->sender_bps = num(snd, "bits_per_second");
	r->receiver_bps = num(rcv, "bits_per_second");
	r->retransmits = (int64_t)num(snd, "retransmits");
	r->lost_percent = num(rcv, "lost_percent");
	/* a client stopped by SIGINT never hears the server's figures: its
	 * receiver side says 0, which is not a measurement */
	if (stopped && num(rcv, "bytes") == 0) {
		r->receiver_bps = -1;
		r->lost_percent = -1;
	}
}

static void outcome_free(struct outcome *o)
{
	json_decref(o->client_result);
	json_decref(o->server_result);
	json_decref(o->idle);
	json_decref(o->latency);
	tb_outbuf_free(&o->cout);
	tb_outbuf_free(&o->cerr);
	tb_outbuf_free(&o->sout);
	tb_outbuf_free(&o->serr);
	free(o->client_cmd);
	free(o->server_cmd);
	memset(o, 0, sizeof(*o));
}

static void outcome_set(struct outcome *o, const char *klass, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* The class and message of an attempt's outcome. */
static void outcome_set(struct outcome *o, const char *klass, const char *fmt, ...)
{
	va_list ap;

	o->klass = klass;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

/* s set up for r (unless ready: started ahead for it, run_early.h), the
 * client's command line (timeout(1) around iperf3) into cargv, both
 * commands as they will be shown (mark_running stores and publishes them). */
static int prepare(struct tb_services *sv, struct tb_run_row *r, const struct tb_traffic_driver *drv,
		   const struct tb_iperf_params *p, struct tb_run_host *ch, struct tb_run_host *sh,
		   struct run_server *s, bool ready, struct tb_argv *cav, const char **cargv, char *wall,
		   struct outcome *o)
{
	long wall_s = p->omit_s + p->duration_s + SLACK_S;
	struct tb_error e = {0};
	char why[160];
	int n = 0;

	if ((!ready && run_server_init(s, sv, sh, r, drv, p, wall_s, &e) != 0) ||
	    drv->client_argv(&ch->tools, r->server_address, (unsigned int)r->port, p, cav, &e) != 0) {
		outcome_set(o, "iperf_error", "%s", e.message);
		return -1;
	}
	for (int side = 0; side < 2; side++) {
		const struct tb_run_host *h = side == 0 ? ch : sh;

		if (!drv->available(&h->tools, why, sizeof(why))) {
			outcome_set(o, "iperf_error", "%s %s (%s): %s", side == 0 ? "client" : "server", h->m->name,
				    h->os, why);
			return -1;
		}
	}
	snprintf(wall, 24, "%ld", wall_s);
	cargv[n++] = "timeout";
	cargv[n++] = "--foreground";
	cargv[n++] = wall;
	for (int i = 0; i < cav->n && n < TB_ARGV_MAX + 3; i++)
		cargv[n++] = cav->v[i];
	cargv[n] = NULL;
	{
		const char *sargv[] = {"sh", "-c", s->script, NULL};

		o->server_cmd = tb_hosts_command_shown(sh->p, sargv);
		o->client_cmd = tb_hosts_command_shown(ch->p, cargv);
	}
	r->server_command = o->server_cmd;
	r->client_command = o->client_cmd;
	return 0;
}

/* r runs (its commands as prepare() made them): stored and published. */
static void mark_running(struct tb_services *sv, struct tb_run_row *r)
{
	r->state = "running";
	r->started_ms = tb_now_ms();
	tb_store_run_update(sv->store, r, NULL);
	publish_run(sv, r);
}

/* The gate's go (struct run_gate): the run is running from now, then what
 * starts beside it (run_beside.h). */
static void go_running(void *cls)
{
	struct run_beside *b = cls;

	mark_running(b->sv, b->r);
	run_beside_start(b);
}

/* The client, under the ssh watchdog (and timeout(1) on the host), opened
 * now (with look, the client end's look run first in its shell) and let go
 * the moment the server listens and both ends are idle (b then started).
 * *listening: what the gate saw (1: the client ran; -2: an end was busy). */
static int run_client(struct tb_services *sv, struct tb_run_ctl *ctl, struct tb_run_row *r, struct tb_run_host *ch,
		      struct run_server *s, const char **cargv, long wall_s, struct client *c,
		      struct run_idle_look *look, struct run_beside *b, struct tb_ssh_result *res, int *listening,
		      struct tb_error *e)
{
	struct tb_ssh_target t;
	struct tb_ssh_before before;
	struct run_gate g = {.s = s,
			     .ctl = ctl,
			     .store = sv->store,
			     .r = r,
			     .until = tb_monotonic_ms() + LISTEN_WAIT_MS,
			     .look = look,
			     .go = go_running,
			     .go_cls = b};
	int rc;

	if (look != NULL)
		run_idle_look_before(look, 0, &before);
	pthread_mutex_lock(&ctl->lock);
	target_of(sv, ch, &ctl->client_t, ctl->client_pin, sizeof(ctl->client_pin));
	ctl->client_pid = 0;
	ctl->signaled = 0;
	t = ctl->client_t;
	pthread_mutex_unlock(&ctl->lock);
	if (ctl->stop)
		rc = TB_ERR_CANCELED;
	else
		rc = tb_ssh_spawn_gated(tb_hosts_pool(sv->hosts), &t, cargv, LISTEN_WAIT_MS + (wall_s + 5) * 1000,
					run_client_gate, &g, look != NULL ? &before : NULL, client_pid, client_output,
					c, res, e);
	*listening = g.listening;
	pthread_mutex_lock(&ctl->lock);
	ctl->client_pid = 0;
	pthread_mutex_unlock(&ctl->lock);
	return rc;
}

/* The client never ran: why the server did not listen, or the stop. */
static void never_ran(struct tb_services *sv, struct tb_run_ctl *ctl, struct tb_run_row *r, struct tb_run_host *ch,
		      struct tb_run_host *sh, struct run_server *s, int ln, const struct tb_error *e, struct outcome *o)
{
	pthread_mutex_lock(&s->lock);
	r->server_pid = s->pid;
	if (ln == 0 && s->listening != 0)
		ln = s->listening;
	pthread_mutex_unlock(&s->lock);
	tb_store_run_update(sv->store, r, NULL);
	run_server_finish(s, ln == 0 && ctl->stop ? 0 : 3000);
	if (ctl->stop) {
		outcome_set(o, ctl->stop == TB_RUN_CANCEL ? "canceled" : "interrupted",
			    "stopped before the client started");
	} else if (s->rc != 0) {
		outcome_set(o, "ssh_error", "server %s: %s", sh->m->name, s->err.message);
	} else if (ln == 0) {
		outcome_set(o, "ssh_error", "client %s: %s", ch->m->name, e->message);
	} else {
		outcome_set(o, "iperf_error", "the %s server on %s did not listen on port %d: %.300s", s->drv->name,
			    sh->m->name, r->port, s->out.len ? tb_outbuf_str(&s->out) : tb_outbuf_str(&s->errb));
		/* the port is taken ("Address already in use", on stderr): the next try takes another */
		o->retry_busy = strstr(tb_outbuf_str(&s->out), "in use") != NULL ||
				strstr(tb_outbuf_str(&s->errb), "in use") != NULL;
	}
}

/* The client's result: its driver's parser, fed live or given the whole
 * output now (iperf3 -J). */
static void parse_client(struct client *c, int rc, struct outcome *o)
{
	struct tb_error pe = {0};

	if (c->drv->parser_finish(c->parser, tb_outbuf_str(&c->out), c->out.len, &o->client_result, &pe) != 0 &&
	    rc == 0)
		outcome_set(o, "parse_error", "client output: %s", pe.message);
	c->parser = NULL;
}

/* The client's timeout(1) stopped it (exit 124): that is the cause, with
 * iperf3's own words (its "interrupt - the client has terminated" is the
 * SIGTERM) and whether any stream connected (none: iperf3 waited for its UDP
 * connect datagram's reply, or a stream's connect, until the end; nothing was
 * measured and one datagram lost on a lossy link is chance: tried again). */
static void timed_out(struct outcome *o, long wall_s)
{
	const char *etext = json_string_value(json_object_get(o->client_result, "error"));
	const json_t *conn = json_object_get(o->client_result, "connected");
	char was[200] = "";

	if (etext != NULL)
		snprintf(was, sizeof(was), "; %s: %s", o->tool, etext);
	else if (o->klass != NULL)
		snprintf(was, sizeof(was), "; %s", o->message);
	o->retry_lost = json_is_integer(conn) && json_integer_value(conn) == 0;
	outcome_set(o, "timeout", "the client was stopped by timeout after %ld s (exit %d)%s%s", wall_s, TIMEOUT_EXIT,
		    o->retry_lost ? " with no stream connected" : "", was);
}

/* The class of a run whose client ran: the ssh result, timeout(1), then
 * iperf3's error. */
static void classify(const struct tb_run_ctl *ctl, const struct tb_run_host *ch, int rc, const struct tb_error *e,
		     const struct tb_ssh_result *res, const struct client *c, long wall_s, struct outcome *o)
{
	const char *k;
	bool retry = false;
	char msg[sizeof(o->message)];

	if (rc == TB_ERR_CANCELED && ctl->stop) {
		outcome_set(o, ctl->stop == TB_RUN_CANCEL ? "canceled" : "interrupted",
			    "stopped before the client started");
	} else if (rc == TB_ERR_TIMEOUT) {
		outcome_set(o, "timeout", "the client did not end within %ld s: %s", wall_s + 5, e->message);
	} else if (rc != 0) {
		outcome_set(o, "ssh_error", "client %s: %s", ch->m->name, e->message);
	} else if (res->exit_status == TIMEOUT_EXIT && !ctl->signaled &&
		   (o->klass == NULL || strcmp(o->klass, "parse_error") == 0)) {
		timed_out(o, wall_s);
	} else if (ctl->signaled && o->client_result == NULL &&
		   (o->klass == NULL || strcmp(o->klass, "parse_error") == 0)) {
		/* stopped before iperf3 printed a whole result (SIGINT right at its
		 * start): that is the stop, not a parse error; resume runs it again */
		outcome_set(o, ctl->stop == TB_RUN_SHUTDOWN ? "interrupted" : "canceled",
			    "%s: the client got SIGINT before it printed a result (exit %d)",
			    ctl->stop == TB_RUN_SHUTDOWN ? "testbedd stopped" : "canceled", res->exit_status);
	} else if (o->klass == NULL && o->client_result == NULL) {
		outcome_set(o, "parse_error", "the client printed nothing (exit %d): %.300s", res->exit_status,
			    tb_outbuf_str(&c->errb));
	} else if (o->klass == NULL) {
		k = c->drv->error_class(o->client_result, msg, sizeof(msg), &retry);
		if (ctl->signaled && (k == NULL || strcmp(k, "interrupted") == 0)) {
			outcome_set(o, ctl->stop == TB_RUN_SHUTDOWN ? "interrupted" : "canceled",
				    "%s: the client got SIGINT; its partial result is kept",
				    ctl->stop == TB_RUN_SHUTDOWN ? "testbedd stopped" : "canceled");
		} else if (k != NULL) {
			outcome_set(o, k, "%s", msg);
			o->retry_busy = retry;
		}
	}
}

/* The server's ssh session broke (sshd gone, host down): that is the cause,
 * whatever the client then said ("the server has terminated"). */
static void server_broke(const struct run_server *s, const struct tb_run_host *sh, struct outcome *o)
{
	char was[200];

	if ((o->klass != NULL && strcmp(o->klass, "iperf_error") != 0) || s->rc == 0 || s->rc == TB_ERR_CANCELED ||
	    s->rc == TB_ERR_TIMEOUT || s->killed)
		return;
	snprintf(was, sizeof(was), "%s", o->klass != NULL ? o->message : "");
	outcome_set(o, "ssh_error", "server %s: %s%s%s", sh->m->name, s->err.message, was[0] ? "; " : "", was);
}

/* Both sides' parsers finished and their output moved into the outcome. */
static void collect(struct run_server *s, struct client *c, struct outcome *o)
{
	if (s->parser != NULL)
		s->drv->parser_finish(s->parser, tb_outbuf_str(&s->out), s->out.len, &o->server_result, NULL);
	s->parser = NULL;
	if (c->parser != NULL) {
		json_t *late = NULL;

		c->drv->parser_finish(c->parser, tb_outbuf_str(&c->out), c->out.len, &late, NULL);
		if (o->client_result == NULL)
			o->client_result = late;
		else
			json_decref(late);
	}
	c->parser = NULL;
	o->cout = c->out;
	o->cerr = c->errb;
	o->sout = s->out;
	o->serr = s->errb;
	s->out = (struct tb_outbuf){0};
	s->errb = (struct tb_outbuf){0};
	run_server_free(s);
}

/* Whether the run's matrix asks for CPU/memory samples (its spec's "sample"). */
static void read_sample_opt(void *cls, const struct tb_matrix_row *m)
{
	json_t *spec = json_loads(m->spec, 0, NULL);

	*(bool *)cls = json_array_size(json_object_get(spec, "sample")) > 0;
	json_decref(spec);
}

/* The first idle look (made by the run's own commands) found an end busy: the
 * server stopped by pid once it has one (it is starting), the client never
 * run; o says so (idle_busy) for tb_run_execute to wait as run_idle.h says. */
static void stop_for_idle(struct run_server *s, struct outcome *o)
{
	run_server_wait_pid(s, LISTEN_WAIT_MS);
	run_server_finish(s, 0);
	o->idle_busy = true;
	outcome_set(o, "busy_host", "an end was busy at the run's start");
}

/* One attempt at run r: the server started and the client opened at once
 * (with look, each end's first look made first in its shell), the client
 * let go when the server listens and both ends are idle, both outputs
 * parsed, the outcome classified into o. */
static void attempt(struct tb_services *sv, struct tb_run_ctl *ctl, struct tb_run_row *r,
		    const struct tb_traffic_driver *drv, const struct tb_iperf_params *p, struct tb_run_host *ch,
		    struct tb_run_host *sh, bool sample, struct run_idle_look *look, struct run_early *early,
		    struct outcome *o)
{
	struct run_server own, *s = early != NULL ? run_early_server(early) : &own; /* early's: started ahead */
	struct run_beside b = {.sv = sv,
			       .ctl = ctl,
			       .r = r,
			       .ch = ch,
			       .sh = sh,
			       .load_s = p->omit_s + p->duration_s,
			       .wall_s = p->omit_s + p->duration_s + SLACK_S,
			       .sample = sample};
	struct client c = {.ctl = ctl,
			   .store = sv->store,
			   .r = r,
			   .out = {.max = RUN_OUT_MAX},
			   .errb = {.max = RUN_ERR_MAX},
			   .drv = drv};
	struct pub spub = {sv,
			   r,
			   "server",
			   sh->m->name,
			   0,
			   &b,
			   p->omit_s + p->duration_s > 1 ? p->omit_s + p->duration_s - 1 : 1},
		   cpub = {sv, r, "client", ch->m->name, 0, NULL, 0};
	struct tb_error e = {0};
	struct tb_argv cav;
	struct tb_ssh_before sbefore;
	const char *cargv[TB_ARGV_MAX + 4];
	char wall[24];
	long wall_s = p->omit_s + p->duration_s + SLACK_S;
	int ln = 0, rc;
	struct tb_ssh_result res = {0};

	memset(o, 0, sizeof(*o));
	o->tool = drv->name;
	if (prepare(sv, r, drv, p, ch, sh, s, early != NULL, &cav, cargv, wall, o) != 0) {
		run_server_wait_pid(s, s->started ? LISTEN_WAIT_MS : 0); /* one started ahead: stopped */
		run_server_finish(s, 0);
		run_server_free(s);
		run_early_free(early);
		return;
	}
	if (look != NULL)
		run_idle_look_before(look, 1, &sbefore);
	run_server_set_parser(s, drv->parser_new(&sh->tools, p, false, publish_interval, &spub));
	c.parser = drv->parser_new(&ch->tools, p, true, publish_interval, &cpub);
	run_beside_init(&b);
	if (s->parser == NULL || c.parser == NULL ||
	    (!s->started && run_server_start(s, look != NULL ? &sbefore : NULL) != 0)) {
		outcome_set(o, "iperf_error", "out of memory or threads");
		run_server_wait_pid(s, s->started ? LISTEN_WAIT_MS : 0);
		run_server_finish(s, 0);
		collect(s, &c, o);
		run_beside_free(&b);
		run_early_free(early);
		return;
	}
	rc = run_client(sv, ctl, r, ch, s, cargv, wall_s, &c, look, &b, &res, &ln, &e);
	run_beside_stop(&b, ctl->stop == 0, &o->latency); /* a stopped run's profile is not read */
	if (ln == -2 && !ctl->stop) {                     /* the look found an end busy: the client never ran */
		stop_for_idle(s, o);
	} else if (ln != 1) {
		never_ran(sv, ctl, r, ch, sh, s, ln == -2 ? 0 : ln, &e, o);
	} else {
		r->client_exit = rc == 0 ? res.exit_status : -1;
		/* a -1 server ends by itself after the test, one that stays (iperf2)
		 * prints its summary: give it a moment, then stop it */
		run_server_finish(s, 3000);
		r->server_exit = s->exit_code;
		parse_client(&c, rc, o);
		classify(ctl, ch, rc, &e, &res, &c, wall_s, o);
		server_broke(s, sh, o);
	}
	collect(s, &c, o); /* the server's thread (which may kick b's ahead) joined */
	run_beside_free(&b);
	run_early_free(early);
}

/* A tool whose client reports only its own side (iperf2): the other side's
 * end (the receiver's, or with -R the sender's) from the server's result,
 * into the client's end, where figures() reads both. */
static void merge_ends(struct outcome *o)
{
	json_t *cend = json_object_get(o->client_result, "end");
	json_t *send = json_object_get(o->server_result, "end");
	static const char *const sides[] = {"sender", "receiver"};

	if (!json_is_object(send) || o->client_result == NULL)
		return;
	if (!json_is_object(cend)) {
		cend = json_object();
		if (cend == NULL || json_object_set_new(o->client_result, "end", cend) != 0)
			return;
	}
	for (int i = 0; i < 2; i++)
		if (json_object_get(cend, sides[i]) == NULL && json_object_get(send, sides[i]) != NULL)
			json_object_set(cend, sides[i], json_object_get(send, sides[i]));
}

/* The first look found an end busy (o->idle_busy): the run, still pending
 * (its commands were not run), waits as run_idle.h says, into idle. */
static void idle_again(struct tb_services *sv, struct tb_run_ctl *ctl, struct tb_run_row *r, struct tb_run_host *ch,
		       struct tb_run_host *sh, struct outcome *o, struct run_idle_result *idle)
{
	outcome_free(o); /* the run was not marked running: it stays pending */
	r->client_command = r->server_command = NULL;
	r->server_pid = 0;
	run_idle_wait(sv, ctl, r, ch, sh, idle);
}

/* One attempt of r with the idle check (run_idle.h): the first look beside
 * the first attempt's start (*looked: made), the wait when it found an end
 * busy.  1: the attempt was stopped for the look and both ends are idle now
 * (again, not counted); -1: the run ends with o's class (still busy, stopped,
 * the look failed); 0: the attempt ran, o is its outcome. */
static int attempt_idle(struct tb_services *sv, struct tb_run_ctl *ctl, struct tb_run_row *r,
			const struct tb_traffic_driver *drv, const struct tb_iperf_params *p, struct tb_run_host *ch,
			struct tb_run_host *sh, bool sample, int *looked, struct run_idle_result *idle,
			struct outcome *o)
{
	struct run_idle_look *look = NULL;
	struct run_early *early = NULL;

	if (!*looked) {
		*looked = 1;
		/* the server started ahead for this attempt, its look with it (run_early.h) */
		if ((early = run_early_take(ctl, r, sh)) != NULL)
			look = run_early_look(early);
		/* "idle": false: the wait returns at once; no memory: it waits before, as it did.  The
		 * runs of a round start at once and may share a host (concurrency pairs): each looks
		 * before its server starts, so that none sees another's server as a stray */
		if (look == NULL &&
		    (ctl->in_round || early != NULL || (look = run_idle_look_new(sv, r, ch, sh)) == NULL))
			run_idle_wait(sv, ctl, r, ch, sh, idle);
		tb_run_round_looked(ctl); /* no server of the round starts before all have looked */
	}
	if (idle->klass == NULL)
		attempt(sv, ctl, r, drv, p, ch, sh, sample, look, early, o); /* early: freed there */
	else
		run_early_drop(ctl, &early);
	run_idle_look_free(look);
	if (idle->klass == NULL && o->idle_busy) {
		if (ctl->stop) {
			outcome_set(o, ctl->stop == TB_RUN_CANCEL ? "canceled" : "interrupted",
				    "stopped before the client started");
			return -1;
		}
		idle_again(sv, ctl, r, ch, sh, o, idle);
		if (idle->klass == NULL)
			return 1;
	}
	if (idle->klass != NULL) {
		o->klass = idle->klass;
		snprintf(o->message, sizeof(o->message), "%s", idle->message);
		return -1;
	}
	return 0;
}

int tb_run_execute(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *planned,
		   struct tb_run_host *client, struct tb_run_host *server, const char **state_out,
		   const char **class_out, struct tb_error *err)
{
	struct tb_run_row r = *planned;
	struct tb_iperf_params p;
	struct outcome o = {0};
	struct run_idle_result idle = {0};
	struct tb_error e = {0};
	json_t *pj = json_loads(planned->params, 0, NULL);
	long backoff = 500;
	bool sample = false;
	const struct tb_traffic_driver *drv = &tb_traffic_iperf3;
	int rc, max;

	r.client_os = client->os;
	r.server_os = server->os;
	r.client_exit = r.server_exit = -1;
	r.sender_bps = r.receiver_bps = r.lost_percent = -1;
	r.retransmits = -1;
	r.attempts = 0;
	rc = pj != NULL ? tb_matrix_params_from_json(pj, &p, &e) : tb_fail(&e, TB_ERR_INVALID, "params", "not JSON");
	json_decref(pj);
	if (rc == 0 && (drv = tb_traffic_driver_for(p.tool)) == NULL)
		rc = tb_fail(&e, TB_ERR_INVALID, "tool", "tool %d is none testbedd knows", p.tool);
	r.client_version = drv->version(&client->tools);
	r.server_version = drv->version(&server->tools);
	tb_store_matrix_get(sv->store, planned->matrix_id, read_sample_opt, &sample, NULL);
	if (rc != 0) {
		o.klass = "iperf_error";
		snprintf(o.message, sizeof(o.message), "stored parameters: %s", e.message);
	}
	/* the spec's "idle": the first look beside the first attempt's start
	 * (run_idle.h); an end busy there: the wait, then the attempt again */
	for (int tries = 1, looked = 0, extra = 0, v; rc == 0; tries++) {
		r.attempts = tries;
		r.port = run_port(r.id, tries);
		if ((v = attempt_idle(sv, ctl, &r, drv, &p, client, server, sample, &looked, &idle, &o)) < 0)
			break;
		if (v > 0) {
			extra++; /* the attempt stopped for the look does not count */
			continue;
		}
		max = o.retry_busy ? BUSY_TRIES : o.retry_lost ? LOST_TRIES : 1;
		if (tries >= max + extra || ctl->stop)
			break;
		{
			long wait = backoff / 2 + rand() % (backoff + 1);

			tb_info("runner", "matrix %lld run %d: %s; retrying in %ld ms (attempt %d of %d)",
				(long long)r.matrix_id, r.seq, o.message, wait, tries, max);
			outcome_free(&o);
			for (long t = 0; t < wait && !ctl->stop; t += 50)
				tb_sleep_ms(50, NULL);
			backoff *= 2;
		}
	}
	if (idle.waited_ms > 0)
		o.idle = json_pack("{s:f, s:s}", "waited_s", (double)idle.waited_ms / 1000.0, "busy", idle.message);
	r.client_command = o.client_cmd;
	r.server_command = o.server_cmd;
	r.error_class = o.klass;
	r.error_message = o.klass != NULL ? o.message : NULL;
	r.cookie = json_string_value(json_object_get(o.client_result, "cookie"));
	if (drv->merge_ends)
		merge_ends(&o);
	figures(&r, o.client_result,
		o.klass != NULL && (strcmp(o.klass, "canceled") == 0 || strcmp(o.klass, "interrupted") == 0));
	if (o.klass == NULL)
		r.state = "ok";
	else if (strcmp(o.klass, "canceled") == 0)
		r.state = "canceled";
	else if (strcmp(o.klass, "interrupted") == 0)
		r.state = "interrupted";
	else
		r.state = "failed";
	r.finished_ms = tb_now_ms();
	if (r.started_ms == 0)
		r.started_ms = r.finished_ms;
	rc = run_commit(sv, &r, &o, err);
	publish_run(sv, &r);
	*state_out = r.state;
	*class_out = r.error_class;
	outcome_free(&o);
	return rc;
}
