/* run_latency.c - an RTT stream beside a run.  See run_latency.h. */
#include "run_latency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "services.h"
#include "shquote.h"
#include "store.h"
#include "timeutil.h"

#define IRTT_PORT_OFFSET 1000 /* the run's iperf3 port + this: distinct per run like it */
#define IDLE_S 2
#define BIN_S 1.0

/* The publisher of one reader: which tool's lines it reads. */
struct pubctx {
	struct run_latency *l;
	enum tb_rtt_tool tool;
};

static const char *tool_name(enum tb_rtt_tool t)
{
	return t == TB_RTT_IRTT ? "irtt" : "ping";
}

static double interval_of(enum tb_rtt_tool t)
{
	return t == TB_RTT_IRTT ? 0.1 : 0.2;
}

/* A bin: a run.rtt event, placed on testbedd's clock (at_ms) so that the
 * run page lines it up with the intervals. */
static void publish_bin(struct run_latency *l, enum tb_rtt_tool tool, json_t *bin)
{
	double t = json_number_value(json_object_get(bin, "t"));
	int k = strcmp(l->phase, "idle") == 0 ? 0 : 1;

	pthread_mutex_lock(&l->lock);
	if (l->bins[k] == NULL)
		l->bins[k] = json_array();
	json_array_append_new(l->bins[k], json_deep_copy(bin));
	pthread_mutex_unlock(&l->lock);
	l->published++;
	tb_events_publish(l->sv->events, "run.rtt", l->client, l->r->matrix_id,
			  json_pack("{s:I, s:I, s:i, s:i, s:s, s:s, s:s, s:s, s:I, s:o}", "matrix",
				    (json_int_t)l->r->matrix_id, "run", (json_int_t)l->r->id, "seq", l->r->seq,
				    "attempt", l->r->attempts, "host", l->client, "server", l->server, "tool",
				    tool_name(tool), "phase", l->phase, "at_ms",
				    (json_int_t)(l->t0_ms + (int64_t)(t * 1000)), "bin", bin));
}

static void on_bin(void *cls, json_t *bin)
{
	struct pubctx *p = cls;

	publish_bin(p->l, p->tool, bin);
}

static void on_load_bin(void *cls, json_t *bin)
{
	struct run_latency *l = cls;

	publish_bin(l, l->tool, bin);
}

/* The spec's "latency" ("" when none). */
static void read_opt(void *cls, const struct tb_matrix_row *m)
{
	json_t *spec = json_loads(m->spec, 0, NULL);
	const char *v = json_string_value(json_object_get(spec, "latency"));

	snprintf(cls, 8, "%s", v != NULL ? v : "");
	json_decref(spec);
}

static int on_spid(void *cls, long pid)
{
	struct run_latency *l = cls;

	pthread_mutex_lock(&l->lock);
	l->spid = pid;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

static int on_cpid(void *cls, long pid)
{
	struct run_latency *l = cls;

	pthread_mutex_lock(&l->lock);
	l->cpid = pid;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

static int drop_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	(void)cls;
	(void)stream;
	(void)data;
	(void)len;
	return 0;
}

/* The irtt server on the server host, until killed by pid (or its
 * watchdog: the run's length and a minute). */
static void *server_thread(void *arg)
{
	struct run_latency *l = arg;
	const char *argv[] = {"irtt", "server", "-b", l->dest, NULL};
	struct tb_error e = {0};
	int rc = tb_ssh_spawn(tb_hosts_pool(l->sv->hosts), &l->st, argv, (l->load_s + IDLE_S + 60) * 1000, on_spid,
			      drop_output, l, NULL, &e);

	if (rc != 0 && rc != TB_ERR_TIMEOUT && rc != TB_ERR_CANCELED)
		tb_info("runner", "run %lld: irtt server on %s: %s", (long long)l->r->id, l->server, e.message);
	return NULL;
}

static int stream_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_latency *l = cls;

	if (stream == TB_SSH_STDOUT)
		tb_rtt_feed(l->reader, data, len);
	return 0;
}

/* The loaded stream on the client host, for the run's length and a second,
 * or until killed by pid with the run. */
static void *stream_thread(void *arg)
{
	struct run_latency *l = arg;
	char d[24], c[24];
	const char *irtt[] = {"irtt", "client", "-i", "100ms", "-d", d, l->dest, NULL};
	const char *ping[] = {"ping", "-n", "-i", "0.2", "-c", c, l->addr, NULL};
	struct tb_error e = {0};
	int rc;

	snprintf(d, sizeof(d), "%lds", l->load_s + 1);
	snprintf(c, sizeof(c), "%ld", (l->load_s + 1) * 5);
	rc = tb_ssh_spawn(tb_hosts_pool(l->sv->hosts), &l->ct, l->tool == TB_RTT_IRTT ? irtt : ping,
			  (l->load_s + 30) * 1000, on_cpid, stream_output, l, NULL, &e);
	if (rc != 0 && rc != TB_ERR_TIMEOUT && rc != TB_ERR_CANCELED)
		tb_info("runner", "run %lld: latency stream on %s: %s", (long long)l->r->id, l->client, e.message);
	return NULL;
}

struct idle {
	struct tb_rtt_reader *rd[2]; /* irtt's lines, ping's */
};

static int idle_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct idle *i = cls;

	if (stream == TB_SSH_STDOUT) {
		tb_rtt_feed(i->rd[0], data, len);
		tb_rtt_feed(i->rd[1], data, len);
	}
	return 0;
}

/* The idle probe on the client host: irtt (tried again while its server
 * starts, 3 s at most) or, where irtt is missing or never answered, ping.
 * Its bins go out as phase "idle"; the tool that answered is the stream's.
 * 0, or -1 when neither answered. */
static int idle_probe(struct run_latency *l, bool irtt)
{
	struct pubctx pc[2] = {{l, TB_RTT_IRTT}, {l, TB_RTT_PING}};
	const char *qa[] = {l->addr, NULL}, *qd[] = {l->dest, NULL};
	char *a = tb_sh_quote_argv(qa, NULL), *d = tb_sh_quote_argv(qd, NULL), *script = NULL;
	struct idle i = {{NULL, NULL}};
	struct tb_error e = {0};
	int rc = -1;
	size_t n;

	if (a == NULL || d == NULL)
		goto out;
	n = strlen(a) + strlen(d) + 400;
	if ((script = malloc(n)) == NULL)
		goto out;
	snprintf(script, n, "exec ping -n -i 0.2 -c %d %s", IDLE_S * 5, a);
	if (irtt)
		snprintf(script, n,
			 "if command -v irtt >/dev/null 2>&1; then i=0; while [ $i -lt 30 ]; do"
			 " irtt client -i 100ms -d %ds %s 2>/dev/null && exit 0; sleep 0.1; i=$((i+1)); done; fi;"
			 " exec ping -n -i 0.2 -c %d %s",
			 IDLE_S, d, IDLE_S * 5, a);
	i.rd[0] = tb_rtt_reader_new(TB_RTT_IRTT, interval_of(TB_RTT_IRTT), BIN_S, on_bin, &pc[0]);
	i.rd[1] = tb_rtt_reader_new(TB_RTT_PING, interval_of(TB_RTT_PING), BIN_S, on_bin, &pc[1]);
	if (i.rd[0] == NULL || i.rd[1] == NULL)
		goto out;
	{
		const char *argv[] = {"sh", "-c", script, NULL};

		l->phase = "idle";
		l->t0_ms = tb_now_ms();
		rc = tb_ssh_exec(tb_hosts_pool(l->sv->hosts), &l->ct, argv, (IDLE_S + 20) * 1000L, idle_output, &i,
				 NULL, &e);
	}
	if (rc != 0)
		tb_info("runner", "run %lld: idle latency probe on %s: %s", (long long)l->r->id, l->client, e.message);
	/* irtt's first packet may have waited for its server: its bins are
	 * placed from the probe's own start, close enough for an idle figure */
	tb_rtt_finish(i.rd[0]);
	tb_rtt_finish(i.rd[1]);
	rc = -1;
	if (tb_rtt_received(i.rd[0]) > 0) {
		l->tool = TB_RTT_IRTT;
		rc = 0;
	} else if (tb_rtt_received(i.rd[1]) > 0) {
		l->tool = TB_RTT_PING;
		rc = 0;
	}
out:
	tb_rtt_reader_free(i.rd[0]);
	tb_rtt_reader_free(i.rd[1]);
	free(script);
	free(a);
	free(d);
	return rc;
}

static void stop_server(struct run_latency *l)
{
	long pid;

	if (!l->sstarted)
		return;
	pthread_mutex_lock(&l->lock);
	pid = l->spid;
	pthread_mutex_unlock(&l->lock);
	if (pid > 1) {
		struct tb_error e = {0};

		tb_ssh_kill(tb_hosts_pool(l->sv->hosts), &l->st, pid, "TERM", &e);
	}
	pthread_join(l->sth, NULL);
	l->sstarted = false;
}

int run_latency_start(struct run_latency *l, struct tb_services *sv, const struct tb_run_host *ch,
		      const struct tb_run_host *sh, const struct tb_run_row *r, long load_s)
{
	char want[8] = "";
	bool irtt;

	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	l->sv = sv;
	l->r = r;
	l->client = ch->m->name;
	l->server = sh->m->name;
	l->load_s = load_s;
	tb_store_matrix_get(sv->store, r->matrix_id, read_opt, want, NULL);
	if (want[0] == '\0' || r->server_address == NULL)
		return 0;
	irtt = strcmp(want, "irtt") == 0;
	snprintf(l->addr, sizeof(l->addr), "%s", r->server_address);
	snprintf(l->dest, sizeof(l->dest), strchr(l->addr, ':') != NULL ? "[%s]:%d" : "%s:%d", l->addr,
		 r->port + IRTT_PORT_OFFSET);
	tb_hosts_target(sv->hosts, ch->m, ch->p, &l->ct, l->cpin, sizeof(l->cpin));
	tb_hosts_target(sv->hosts, sh->m, sh->p, &l->st, l->spin, sizeof(l->spin));
	if (irtt && pthread_create(&l->sth, NULL, server_thread, l) == 0)
		l->sstarted = true;
	if (idle_probe(l, irtt) != 0) {
		tb_info("runner", "run %lld: no latency: neither irtt nor ping answered from %s to %s",
			(long long)l->r->id, l->client, l->addr);
		stop_server(l);
		return -1;
	}
	if (l->tool != TB_RTT_IRTT)
		stop_server(l);
	l->phase = "load";
	if ((l->reader = tb_rtt_reader_new(l->tool, interval_of(l->tool), BIN_S, on_load_bin, l)) == NULL) {
		stop_server(l);
		return -1;
	}
	l->t0_ms = tb_now_ms();
	if (pthread_create(&l->cth, NULL, stream_thread, l) != 0) {
		stop_server(l);
		return -1;
	}
	l->cstarted = true;
	return 0;
}

void run_latency_stop(struct run_latency *l)
{
	if (l->sv == NULL)
		return; /* never started (zeroed) */
	if (l->cstarted) {
		long pid;

		pthread_mutex_lock(&l->lock);
		pid = l->cpid;
		pthread_mutex_unlock(&l->lock);
		if (pid > 1) {
			struct tb_error e = {0};

			tb_ssh_kill(tb_hosts_pool(l->sv->hosts), &l->ct, pid, "TERM", &e);
		}
		pthread_join(l->cth, NULL);
		l->cstarted = false;
	}
	if (l->reader != NULL)
		tb_rtt_finish(l->reader); /* the last second out */
	tb_rtt_reader_free(l->reader);
	l->reader = NULL;
	stop_server(l);
	if (l->bins[0] != NULL || l->bins[1] != NULL) {
		json_t *none = json_array(),
		       *s = tb_rtt_summary(l->bins[0] ? l->bins[0] : none, l->bins[1] ? l->bins[1] : none);

		if (s != NULL && json_object_set_new(s, "tool", json_string(tool_name(l->tool))) == 0 &&
		    json_object_set_new(s, "client", json_string(l->client)) == 0 &&
		    json_object_set_new(s, "server", json_string(l->server)) == 0)
			l->summary = s;
		else
			json_decref(s);
		json_decref(none);
	}
	json_decref(l->bins[0]);
	json_decref(l->bins[1]);
	l->bins[0] = l->bins[1] = NULL;
	pthread_mutex_destroy(&l->lock);
	l->sv = NULL;
}
