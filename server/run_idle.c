/* run_idle.c - the idle check before each run: see run_idle.h. */
#include "run_idle.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "metrics.h"
#include "run_exec.h"
#include "run_sample.h"
#include "services.h"
#include "ssh.h"
#include "store.h"
#include "timeutil.h"

#define WAIT_DEFAULT_S 30
#define LOOK_TIMEOUT_MS 15000
#define LOOK_OUT_MAX 65536

void tb_idle_opts_from_json(const json_t *idle, struct tb_idle_opts *out)
{
	const json_t *v;

	*out = (struct tb_idle_opts){.enabled = true, .max_load = -1, .max_softirq_pct = -1, .wait_s = WAIT_DEFAULT_S};
	if (json_is_false(idle)) {
		out->enabled = false;
		return;
	}
	if (!json_is_object(idle))
		return;
	if (json_is_number(v = json_object_get(idle, "max_load")))
		out->max_load = json_number_value(v);
	if (json_is_number(v = json_object_get(idle, "max_softirq_percent")))
		out->max_softirq_pct = json_number_value(v);
	if (json_is_integer(v = json_object_get(idle, "wait_s")))
		out->wait_s = (int)json_integer_value(v);
}

/* The strays: the tools' process names, their pid and args.  Linux: every
 * process's comm read by the shell itself (no pgrep: a fork, and procps 4
 * warns of a pattern longer than 15 characters); one in another network
 * namespace than the ssh session's is skipped (test -ef on the namespace
 * files: the same inode is the same namespace; an unreadable one counts);
 * its args from /proc (tr, only for a match); one gone meanwhile skipped.
 * The load and CPU lines read by the shell too.  The look runs beside each
 * run's start: every fork counts (5 ms here against 50 with pgrep,
 * readlink, ps, cat and grep). */
#define PROCS_LINUX                                                                                      \
	"echo @procs; for f in /proc/[0-9]*/comm; do read -r c 2>/dev/null <$f || continue; case $c in " \
	"iperf3|iperf|netperf|netserver) p=${f#/proc/}; p=${p%/comm}; [ ! -e /proc/self/ns/net ] || "    \
	"[ ! -e /proc/$p/ns/net ] || [ /proc/$p/ns/net -ef /proc/self/ns/net ] || continue; "            \
	"a=$(tr '\\0' ' ' </proc/$p/cmdline 2>/dev/null) && [ -n \"$a\" ] && echo \"$p ${a% }\";; esac; done; true"
/* FreeBSD: ps for the args (no procfs unless mounted); the same skip where
 * the namespace files exist (the sim's persona on Linux). */
#define PROCS                                                                                                      \
	"echo @procs; me=$(readlink /proc/self/ns/net 2>/dev/null); for p in $(pgrep -x "                          \
	"'iperf3|iperf|netperf|netserver'); do n=$(readlink /proc/$p/ns/net 2>/dev/null); [ -z \"$me\" ] || [ -z " \
	"\"$n\" ] || [ \"$n\" = \"$me\" ] || continue; a=$(ps -o args= -p $p 2>/dev/null) && [ -n \"$a\" ] "       \
	"&& echo \"$p $a\"; done; true"
#define LINUX_CPUS "while read -r c r; do case $c in cpu[0-9]*) echo \"$c $r\";; esac; done </proc/stat; "
#define LINUX_LOAD "echo @load; read -r l </proc/loadavg; echo \"$l\"; echo @cpu; " LINUX_CPUS
#define LINUX_CPU2 "sleep 0.25; echo @cpu; " LINUX_CPUS
/* FreeBSD: one sysctl for both, split into its words by a function's
 * arguments (vm.loadavg is "{ 1m 5m 15m }"); no newline in the script: a
 * standby shell reads it as one line (ssh.h) */
#define BSD_LOAD                                                                                              \
	"tbload() { echo @load; [ $# -ge 5 ] && echo \"$1 $2 $3 $4 $5\" && shift 5; echo @cpu; echo \"$*\"; " \
	"}; tbload $(sysctl -n vm.loadavg kern.cp_times 2>/dev/null); "
#define BSD_CPU2 "sleep 0.25; echo @cpu; sysctl -n kern.cp_times; "

const char *tb_idle_command(bool bsd, bool softirq)
{
	if (bsd)
		return softirq ? BSD_LOAD BSD_CPU2 PROCS : BSD_LOAD PROCS;
	return softirq ? LINUX_LOAD LINUX_CPU2 PROCS_LINUX : LINUX_LOAD PROCS_LINUX;
}

/* The nth (0-based) section named tag ("@cpu") of text, malloc'd without
 * its tag line; NULL when there is none or on no memory. */
static char *section(const char *text, const char *tag, int nth)
{
	size_t k = strlen(tag);
	const char *p = text, *end;
	char *s;

	for (;;) {
		if (strncmp(p, tag, k) == 0 && p[k] == '\n' && nth-- == 0)
			break;
		if ((p = strchr(p, '\n')) == NULL)
			return NULL;
		p++;
	}
	p += k + 1;
	for (end = p; *end != '\0' && !(*end == '@' && (end == p || end[-1] == '\n')); end++)
		;
	if ((s = malloc((size_t)(end - p) + 1)) == NULL)
		return NULL;
	memcpy(s, p, (size_t)(end - p));
	s[end - p] = '\0';
	return s;
}

/* Softirq (FreeBSD: interrupt) ticks and all ticks of one reading. */
static int cpu_reading(bool bsd, const char *text, int nth, uint64_t *soft, uint64_t *all)
{
	char *s = section(text, "@cpu", nth);
	struct tb_sample_frame *f = malloc(sizeof(*f));
	int rc = -1;

	*soft = *all = 0;
	if (s != NULL && f != NULL && tb_sample_parse(bsd ? TB_SAMPLE_FREEBSD : TB_SAMPLE_LINUX, s, f, NULL) == 0) {
		for (size_t i = 0; i < f->ncpu; i++) {
			const struct tb_cpu_ticks *c = &f->cpu[i];

			*soft += bsd ? c->interrupt : c->softirq;
			*all += c->user + c->nice + c->system + c->interrupt + c->softirq + c->idle + c->iowait +
				c->steal;
		}
		rc = 0;
	}
	free(s);
	free(f);
	return rc;
}

static void stray_line(const char *p, struct tb_idle_seen *out)
{
	char *end;
	long pid = strtol(p, &end, 10);
	size_t i = 0;
	int k = out->nstrays;

	if (end == p || pid <= 0)
		return;
	out->nstrays++;
	if (k >= TB_IDLE_STRAYS_MAX)
		return;
	out->stray_pid[k] = pid;
	while (*end == ' ')
		end++;
	/* the host's text: printable bytes only */
	for (; end[i] != '\0' && end[i] != '\n' && i + 1 < sizeof(out->stray_args[k]); i++)
		out->stray_args[k][i] = end[i] >= 0x20 && end[i] < 0x7f ? end[i] : '?';
	out->stray_args[k][i] = '\0';
}

int tb_idle_parse(bool bsd, const char *text, struct tb_idle_seen *out, struct tb_error *err)
{
	char *load = section(text, "@load", 0), *procs = section(text, "@procs", 0);
	uint64_t s0, a0, s1, a1;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->load1 = out->softirq_pct = -1;
	if (procs == NULL) {
		rc = tb_fail(err, TB_ERR_INVALID, "", "the idle check's output has no process list");
		goto out;
	}
	if (load != NULL) {
		const char *p = load;
		char *end;
		double d;

		while (*p == ' ' || *p == '{') /* FreeBSD: "{ 0.52 0.58 0.59 }" */
			p++;
		d = strtod(p, &end);
		if (end != p && d >= 0)
			out->load1 = d;
	}
	if (cpu_reading(bsd, text, 0, &s0, &a0) == 0 && cpu_reading(bsd, text, 1, &s1, &a1) == 0 && a1 > a0 && s1 >= s0)
		out->softirq_pct = 100.0 * (double)(s1 - s0) / (double)(a1 - a0);
	for (const char *p = procs; *p != '\0';) {
		stray_line(p, out);
		p = strchr(p, '\n');
		if (p == NULL)
			break;
		p++;
	}
out:
	free(load);
	free(procs);
	return rc;
}

/* Drop the kept strays for which drop(cls, i) says so (nstrays counts them out). */
static void drop_where(struct tb_idle_seen *seen, bool (*drop)(const struct tb_idle_seen *, int, const void *),
		       const void *cls)
{
	int kept = seen->nstrays < TB_IDLE_STRAYS_MAX ? seen->nstrays : TB_IDLE_STRAYS_MAX, k = 0;

	for (int i = 0; i < kept; i++) {
		if (drop(seen, i, cls)) {
			seen->nstrays--;
			continue;
		}
		if (k != i) {
			seen->stray_pid[k] = seen->stray_pid[i];
			memcpy(seen->stray_args[k], seen->stray_args[i], sizeof(seen->stray_args[k]));
		}
		k++;
	}
}

static bool on_port(const struct tb_idle_seen *seen, int i, const void *cls)
{
	char want[24];
	const char *a = seen->stray_args[i], *at;
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), " -p %d", *(const int *)cls);
	for (at = strstr(a, want); at != NULL; at = strstr(at + 1, want))
		if (at[n] == '\0' || at[n] == ' ')
			return true;
	return false;
}

void tb_idle_drop_port(struct tb_idle_seen *seen, int port)
{
	drop_where(seen, on_port, &port);
}

struct own_list {
	const long *pid;
	int n;
};

static bool is_own(const struct tb_idle_seen *seen, int i, const void *cls)
{
	const struct own_list *o = cls;

	for (int j = 0; j < o->n; j++)
		if (o->pid[j] > 0 && o->pid[j] == seen->stray_pid[i])
			return true;
	return false;
}

void tb_idle_drop_own(struct tb_idle_seen *seen, const long *own, int n)
{
	drop_where(seen, is_own, &(struct own_list){own, n});
}

bool tb_idle_busy(const struct tb_idle_opts *o, const struct tb_idle_seen *seen, const char *host, char *msg,
		  size_t len)
{
	if (seen->nstrays > 0) {
		char more[48] = "";
		const char *args = seen->stray_args[0];
		const char *name = args[0] != '\0' ? args : "traffic tool";
		size_t w = strcspn(name, " ");

		if (seen->nstrays > 1)
			snprintf(more, sizeof(more), " (and %d more)", seen->nstrays - 1);
		snprintf(msg, len, "%s: a stray %.*s (pid %ld: %s) is running%s", host, (int)(w > 40 ? 40 : w), name,
			 seen->stray_pid[0], args, more);
		return true;
	}
	if (o->max_load >= 0 && seen->load1 > o->max_load) {
		snprintf(msg, len, "%s: load %.2f > %.2f", host, seen->load1, o->max_load);
		return true;
	}
	if (o->max_softirq_pct >= 0 && seen->softirq_pct > o->max_softirq_pct) {
		snprintf(msg, len, "%s: softirq %.1f %% > %.1f %%", host, seen->softirq_pct, o->max_softirq_pct);
		return true;
	}
	return false;
}

/* ---- looking at both ends ---- */

#define OWN_MAX 16 /* the last runs' pids on each end: a server still exiting is one of them */

/* What on each end is testbedd's own, not a stray: the remote pids the last
 * runs of the matrix started, and the run's server on port (0: none yet). */
struct own {
	long pid[2][OWN_MAX];
	int n[2];
	int port;
	int also_port; /* the run before's, still running (run_idle_look_also_port); 0: none */
};

struct look {
	struct tb_services *sv;
	const struct tb_run_host *h;
	const struct tb_idle_opts *o;
	struct tb_ssh_capture cap;
	struct tb_error e;
	int rc;
};

static void *look_run(void *cls)
{
	struct look *l = cls;
	const char *argv[] = {"sh", "-c", tb_idle_command(l->h->bsd, l->o->max_softirq_pct >= 0), NULL};
	struct tb_ssh_target t;
	char pin[96];

	tb_hosts_target(l->sv->hosts, l->h->m, l->h->p, &t, pin, sizeof(pin));
	l->rc = tb_ssh_run_capture(tb_hosts_pool(l->sv->hosts), &t, argv, LOOK_TIMEOUT_MS, LOOK_OUT_MAX, &l->cap,
				   &l->e);
	return NULL;
}

/* The verdict of end i's look (its output text, or rc/e when its ssh failed):
 * 1 busy, 0 idle, -1 the look failed (msg says which, either way). */
static int verdict_of(const struct tb_idle_opts *o, const struct own *own, int i, const struct tb_run_host *h, int rc,
		      const struct tb_error *e, const char *text, int exit_status, const char *errtext, char *msg,
		      size_t len)
{
	struct tb_idle_seen seen;
	struct tb_error pe = {0};

	if (rc != 0) {
		snprintf(msg, len, "idle check on %s: %s", h->m->name, e->message);
		return -1;
	}
	if (tb_idle_parse(h->bsd, text, &seen, &pe) != 0) {
		snprintf(msg, len, "idle check on %s: %s (exit %d): %.200s", h->m->name, pe.message, exit_status,
			 errtext != NULL ? errtext : "");
		return -1;
	}
	tb_idle_drop_own(&seen, own->pid[i], own->n[i]);
	if (own->port > 0)
		tb_idle_drop_port(&seen, own->port);
	if (own->also_port > 0)
		tb_idle_drop_port(&seen, own->also_port);
	return tb_idle_busy(o, &seen, h->m->name, msg, len) ? 1 : 0;
}

/* One look at both ends (the server's in a thread): 1 when one is busy
 * (msg says which), 0 when both are idle, -1 when a look failed (msg). */
static int look_both(struct tb_services *sv, const struct tb_idle_opts *o, const struct own *own,
		     const struct tb_run_host *ch, const struct tb_run_host *sh, char *msg, size_t len)
{
	struct look l[2] = {{.sv = sv, .h = ch, .o = o}, {.sv = sv, .h = sh, .o = o}};
	pthread_t th;
	bool threaded = pthread_create(&th, NULL, look_run, &l[1]) == 0;
	int verdict = 0;

	tb_metrics_idle_look(sv->metrics, 0);
	look_run(&l[0]);
	if (threaded)
		pthread_join(th, NULL);
	else
		look_run(&l[1]);
	for (int i = 0; i < 2 && verdict == 0; i++)
		verdict = verdict_of(o, own, i, l[i].h, l[i].rc, &l[i].e, l[i].cap.out, l[i].cap.res.exit_status,
				     l[i].cap.err, msg, len);
	tb_ssh_capture_free(&l[0].cap);
	tb_ssh_capture_free(&l[1].cap);
	return verdict;
}

static void read_idle_opt(void *cls, const struct tb_matrix_row *m)
{
	json_t *spec = json_loads(m->spec, 0, NULL);

	tb_idle_opts_from_json(json_object_get(spec, "idle"), cls);
	json_decref(spec);
}

/* The check of run r: the options of its matrix into o (false: "idle":
 * false), and what on each end is its own into own: the pids its matrix's
 * last runs recorded (none known on a store error: none dropped) and the
 * run's port (an attempt's server, starting or going). */
static bool check_setup(struct tb_services *sv, const struct tb_run_row *r, const struct tb_run_host *ch,
			const struct tb_run_host *sh, struct tb_idle_opts *o, struct own *own)
{
	tb_idle_opts_from_json(NULL, o);
	tb_store_matrix_get(sv->store, r->matrix_id, read_idle_opt, o, NULL);
	if (!o->enabled)
		return false;
	*own = (struct own){.port = r->port};
	tb_store_run_recent_pids(sv->store, r->matrix_id, ch->m->name, own->pid[0], OWN_MAX, &own->n[0], NULL);
	tb_store_run_recent_pids(sv->store, r->matrix_id, sh->m->name, own->pid[1], OWN_MAX, &own->n[1], NULL);
	return true;
}

/* The run r waits: a run.waiting event (host: its client) saying what is
 * busy and for how long it may wait, so that a person sees why nothing runs. */
static void publish_waiting(struct tb_services *sv, const struct tb_run_row *r, const struct tb_run_host *ch,
			    const char *busy, int wait_s)
{
	tb_events_publish(sv->events, "run.waiting", ch->m->name, r->matrix_id,
			  json_pack("{s:I, s:I, s:i, s:s, s:i}", "matrix", (json_int_t)r->matrix_id, "run",
				    (json_int_t)r->id, "seq", r->seq, "busy", busy, "wait_s", wait_s));
}

void run_idle_wait(struct tb_services *sv, struct tb_run_ctl *ctl, const struct tb_run_row *r,
		   const struct tb_run_host *ch, const struct tb_run_host *sh, struct run_idle_result *out)
{
	struct tb_idle_opts o;
	char msg[sizeof(out->message)], first[sizeof(out->message)] = "";
	int64_t start = tb_monotonic_ms(), until;
	struct own own;
	int v;

	memset(out, 0, sizeof(*out));
	if (!check_setup(sv, r, ch, sh, &o, &own))
		return;
	until = start + (int64_t)o.wait_s * 1000;
	while ((v = look_both(sv, &o, &own, ch, sh, msg, sizeof(msg))) == 1) {
		if (first[0] == '\0') {
			snprintf(first, sizeof(first), "%s", msg);
			publish_waiting(sv, r, ch, msg, o.wait_s);
		}
		if (ctl->stop || tb_monotonic_ms() + 1000 > until)
			break;
		for (int t = 0; t < 1000 && !ctl->stop; t += 50)
			tb_sleep_ms(50, NULL);
	}
	out->waited_ms = (long)(tb_monotonic_ms() - start);
	if (ctl->stop) {
		out->klass = ctl->stop == TB_RUN_CANCEL ? "canceled" : "interrupted";
		snprintf(out->message, sizeof(out->message), "stopped while waiting for idle hosts: %s", first);
	} else if (v == 1) {
		out->klass = "busy_host";
		snprintf(out->message, sizeof(out->message), "%s (still busy after waiting %d s)", msg, o.wait_s);
	} else if (v < 0) {
		out->klass = "ssh_error";
		snprintf(out->message, sizeof(out->message), "%s", msg);
	} else if (first[0] != '\0') {
		snprintf(out->message, sizeof(out->message), "%s", first);
		tb_info("runner", "matrix %lld run %d: waited %.1f s for idle hosts: %s", (long long)r->matrix_id,
			r->seq, (double)out->waited_ms / 1000.0, first);
	} else {
		out->waited_ms = 0;
	}
}

/* ---- the first look, made by the run's own commands ---- */

struct look_end {
	struct run_idle_look *l;
	int side; /* 0 client, 1 server */
};

struct run_idle_look {
	struct tb_metrics *metrics;
	const struct tb_run_host *h[2]; /* client, server */
	struct tb_idle_opts o;
	struct own own;
	struct look_end end[2];
	pthread_mutex_t lock;
	char *text[2]; /* each end's look output once its script ended (lock) */
	bool nomem;    /* a copy failed: the look counts as failed */
	int verdict;   /* 0: not yet; 1 both idle; -1 busy or failed */
	char msg[512];
};

/* A tb_ssh_before's done (on the exec's thread): an end's look ended. */
static void look_done(void *cls, const char *text, size_t len)
{
	struct look_end *e = cls;
	struct run_idle_look *l = e->l;
	char *copy = malloc(len + 1);

	if (copy != NULL)
		memcpy(copy, text, len + 1);
	pthread_mutex_lock(&l->lock);
	free(l->text[e->side]);
	l->text[e->side] = copy;
	l->nomem |= copy == NULL;
	pthread_mutex_unlock(&l->lock);
}

struct run_idle_look *run_idle_look_new(struct tb_services *sv, const struct tb_run_row *r,
					const struct tb_run_host *ch, const struct tb_run_host *sh)
{
	struct run_idle_look *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	if (!check_setup(sv, r, ch, sh, &l->o, &l->own)) {
		free(l);
		return NULL;
	}
	l->metrics = sv->metrics;
	l->h[0] = ch;
	l->h[1] = sh;
	for (int i = 0; i < 2; i++)
		l->end[i] = (struct look_end){l, i};
	pthread_mutex_init(&l->lock, NULL);
	return l;
}

void run_idle_look_before(struct run_idle_look *l, int side, struct tb_ssh_before *b)
{
	*b = (struct tb_ssh_before){.script = tb_idle_command(l->h[side]->bsd, l->o.max_softirq_pct >= 0),
				    .done = look_done,
				    .cls = &l->end[side]};
}

int run_idle_look_verdict(struct run_idle_look *l)
{
	char *text[2];
	bool nomem;

	if (l->verdict != 0)
		return l->verdict;
	pthread_mutex_lock(&l->lock);
	text[0] = l->text[0];
	text[1] = l->text[1];
	nomem = l->nomem;
	pthread_mutex_unlock(&l->lock);
	if (nomem) {
		snprintf(l->msg, sizeof(l->msg), "idle check: out of memory");
		l->verdict = -1;
	} else if (text[0] != NULL && text[1] != NULL) {
		/* written once each (the exec's thread), read here after both came */
		tb_metrics_idle_look(l->metrics, 1);
		l->verdict = 1;
		for (int i = 0; i < 2 && l->verdict == 1; i++) {
			struct tb_error none = {0};

			if (verdict_of(&l->o, &l->own, i, l->h[i], 0, &none, text[i], 0, "", l->msg, sizeof(l->msg)) !=
			    0)
				l->verdict = -1;
		}
	}
	if (l->verdict < 0)
		tb_debug("runner", "the first look at the run's ends: %s", l->msg);
	return l->verdict;
}

bool run_idle_look_strays_only(const struct run_idle_look *l)
{
	return l->o.max_load < 0 && l->o.max_softirq_pct < 0;
}

void run_idle_look_also_port(struct run_idle_look *l, int port)
{
	l->own.also_port = port;
}

void run_idle_look_free(struct run_idle_look *l)
{
	if (l == NULL)
		return;
	free(l->text[0]);
	free(l->text[1]);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
