/*
 * tbctl_cmd_matrix.c - tbctl matrix plan, run, watch, results, show, list,
 * cancel, resume, rerun: matrices of iperf3 runs (server/matrix.h has the
 * spec, server/results.c the JSON shapes).
 *
 * Following a matrix (watch, and run/resume/rerun --wait) reads the event
 * stream GET /api/v1/events?matrix=ID through libcurl's multi interface, so
 * that between reads it can redraw the progress line and ask the API
 * (blocking GETs, never from inside a curl callback):
 *
 *  - before following, GET the matrix: one that has ended is summed up at
 *    once; the run list (when the matrix has at most TABLE_MAX runs) names
 *    each run's pair and says which runs had finished already;
 *  - each time the stream is (re)established, GET it again: a matrix that
 *    ended while no stream was open (a testbedd restart marks its matrices
 *    interrupted without an event) is noticed there;
 *  - a matrix started by this tbctl is followed from event 0 (the stream
 *    replays it), so that no run is missed; others from now on;
 *  - after a disconnect it resumes with Last-Event-ID, as tbctl events does;
 *  - when it ends, GET it with its runs once more: finished runs no event
 *    told about are printed then, and the failed ones are listed.
 *
 * On a terminal the progress is one line redrawn with \r; otherwise a line
 * each time the progress changes and at most one every 10 s while a run
 * goes on.  Ctrl-C stops watching (the default action of SIGINT), never the
 * matrix.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "tbctl_table.h"

#define TABLE_MAX 10000          /* runs fetched with the matrix for a watch */
#define PLAIN_EVERY_MS 10000     /* not a tty: a live line at most this often */
#define BAR_WIDTH 16

static int nomem(void)
{
	fprintf(stderr, "tbctl: out of memory\n");
	return TBCTL_EXIT_SERVER;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = tbctl_jstr(obj, key);

	return s != NULL ? s : dflt;
}

/* The number at key, or dflt when missing or null. */
static double jnum(const json_t *obj, const char *key, double dflt)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int parse_id(const char *s, long long *id)
{
	char *end;

	*id = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || *id <= 0) {
		fprintf(stderr, "tbctl: a matrix id is a positive whole number, got \"%s\"\n", s);
		return -1;
	}
	return 0;
}

/* ---- formatting ---- */

/* 9.41 Gbit/s: three significant digits, as iperf3 prints them; "-" for none. */
static void fmt_bps(char *buf, size_t n, double bps)
{
	static const char *const unit[] = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
	int u = 0, prec;

	if (bps < 0) {
		snprintf(buf, n, "-");
		return;
	}
	while (bps >= 999.5 && u < 4) {
		bps /= 1000.0;
		u++;
	}
	prec = bps >= 99.95 || u == 0 ? 0 : bps >= 9.995 ? 1 : 2;
	snprintf(buf, n, "%.*f %s", prec, bps, unit[u]);
}

/* 42s, 3m05s, 2h10m; "-" for a negative time. */
static void fmt_dur(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);

	if (s < 0)
		snprintf(buf, n, "-");
	else if (t < 60)
		snprintf(buf, n, "%lds", t);
	else if (t < 3600)
		snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, n, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

/* A whole number as such, else one decimal ("-" for none). */
static void fmt_count(char *buf, size_t n, double v)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else if (v == (double)(long long)v)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "%.1f", v);
}

static void fmt_percent(char *buf, size_t n, double v)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f%%", v);
}

/* The median of a stats object {n,mean,median,...} (null when no data): -1. */
static double median_of(const json_t *cell, const char *key)
{
	return jnum(json_object_get(cell, key), "median", -1);
}

/* A run's parameters the way iperf3 takes them: "-t 10 -P 4 -b 1G". */
static void fmt_params(char *buf, size_t n, const json_t *p)
{
	size_t used = 0;
	const char *s;

	buf[0] = '\0';
#define ADD(...)                                                                   \
	do {                                                                       \
		if (used < n) {                                                    \
			int w_ = snprintf(buf + used, n - used, __VA_ARGS__);      \
			if (w_ > 0)                                                \
				used += (size_t)w_;                                \
		}                                                                  \
	} while (0)
	if (tbctl_jint(p, "duration_s", 0) > 0)
		ADD("-t %lld", tbctl_jint(p, "duration_s", 0));
	if (tbctl_jint(p, "omit_s", 0) > 0)
		ADD(" -O %lld", tbctl_jint(p, "omit_s", 0));
	if (tbctl_jint(p, "parallel", 1) > 1)
		ADD(" -P %lld", tbctl_jint(p, "parallel", 1));
	if ((s = tbctl_jstr(p, "bitrate")) != NULL)
		ADD(" -b %s", s);
	if (tbctl_jint(p, "length", 0) > 0)
		ADD(" -l %lld", tbctl_jint(p, "length", 0));
	if (tbctl_jint(p, "window", 0) > 0)
		ADD(" -w %lld", tbctl_jint(p, "window", 0));
	if ((s = tbctl_jstr(p, "congestion")) != NULL)
		ADD(" -C %s", s);
	if (tbctl_jint(p, "tos", -1) >= 0)
		ADD(" -S %lld", tbctl_jint(p, "tos", -1));
	if (json_is_true(json_object_get(p, "zerocopy")))
		ADD(" -Z");
	if ((s = tbctl_jstr(p, "affinity")) != NULL)
		ADD(" -A %s", s);
#undef ADD
	if (buf[0] == ' ')
		memmove(buf, buf + 1, strlen(buf));
}

/* "left@ubuntu": the machine, and the OS it ran in when known. */
static void fmt_host(char *buf, size_t n, const json_t *o, const char *name_key, const char *os_key)
{
	const char *os = tbctl_jstr(o, os_key);

	snprintf(buf, n, "%s%s%s", str_or(o, name_key, "?"), os ? "@" : "", os ? os : "");
}

static void fmt_pair(char *buf, size_t n, const json_t *o)
{
	char c[96], s[96];

	fmt_host(c, sizeof(c), o, "client", "client_os");
	fmt_host(s, sizeof(s), o, "server", "server_os");
	snprintf(buf, n, "%s -> %s", c, s);
}

/* ---- the spec ---- */

/* The spec in path ("-": stdin) as JSON, or NULL after saying why. */
static json_t *load_spec(const char *path)
{
	int is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "stdin" : path;
	json_error_t e;
	json_t *j = is_stdin ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &e)
			     : json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (j == NULL) {
		fprintf(stderr, "tbctl: %s", name);
		if (e.line > 0)
			fprintf(stderr, ":%d:%d", e.line, e.column);
		fputs(": ", stderr);
		tbctl_print_safe(stderr, e.text);
		fputc('\n', stderr);
		if (e.line > 0)
			fputs("tbctl: a matrix spec is one JSON object (deploy/examples/baseline.json is one)\n",
			      stderr);
		return NULL;
	}
	if (!json_is_object(j)) {
		fprintf(stderr, "tbctl: %s: a matrix spec is one JSON object {\"name\": ..., \"pairs\": [...]}\n",
			name);
		json_decref(j);
		return NULL;
	}
	return j;
}

int tbctl_cmd_matrix_plan(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"SEQ", "CELL", "CLIENT -> SERVER", "LINK", "PROTOCOL", "DIRECTION",
					     "IPERF ARGS"};
	json_t *spec = load_spec(ctx->args->pos[2]), *reply = NULL, *plan, *r;
	struct tbctl_table *t;
	char est[32];
	size_t i;
	int rc;

	if (spec == NULL)
		return TBCTL_EXIT_USAGE;
	rc = tbctl_api_call(ctx, "POST", "/api/v1/matrices/plan", spec, &reply);
	json_decref(spec);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	plan = json_object_get(reply, "plan");
	if ((t = tbctl_table_new(7, header)) == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(json_object_get(plan, "plan"), i, r) {
		char seq[24], cell[24], pair[200], link[128];
		const char *cells[7];

		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(cell, sizeof(cell), "%lld", tbctl_jint(r, "cell", 0));
		snprintf(pair, sizeof(pair), "%s -> %s", str_or(r, "client", "?"), str_or(r, "server", "?"));
		snprintf(link, sizeof(link), "%s (%s)", str_or(r, "link", "?"), str_or(r, "server_address", "?"));
		cells[0] = seq;
		cells[1] = cell;
		cells[2] = pair;
		cells[3] = link;
		cells[4] = tbctl_jstr(r, "protocol");
		cells[5] = tbctl_jstr(r, "direction");
		cells[6] = tbctl_jstr(r, "iperf_args");
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			json_decref(reply);
			return nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	fmt_dur(est, sizeof(est), jnum(plan, "estimated_s", -1));
	fputs("plan \"", stdout);
	tbctl_print_safe(stdout, str_or(plan, "name", ""));
	printf("\": %lld run%s in %lld cell%s, order %s", tbctl_jint(plan, "runs", 0),
	       tbctl_jint(plan, "runs", 0) == 1 ? "" : "s", tbctl_jint(plan, "cells", 0),
	       tbctl_jint(plan, "cells", 0) == 1 ? "" : "s", str_or(plan, "order", "?"));
	if (json_is_integer(json_object_get(plan, "seed")))
		printf(" (seed %lld)", tbctl_jint(plan, "seed", 0));
	printf(", estimated %s; nothing was started\n", est);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* ---- following a matrix ---- */

static const char *const final_states[] = {"succeeded", "failed", "canceled", "interrupted", NULL};
static const char *const run_final_states[] = {"ok", "failed", "canceled", "interrupted", NULL};

static int in(const char *s, const char *const *set)
{
	for (; s != NULL && *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

struct runinfo {
	long long id;
	char what[200];            /* "right -> left tcp forward" */
	int seen;                  /* its end was printed (or it had ended before the watch) */
};

struct watch {
	const struct tbctl_ctx *ctx;
	long long id;
	int tty, quiet, json;
	char name[80];
	char state[16];
	char waiting[200];         /* why a queued matrix waits, "" */
	/* progress as of prog_ms */
	long long total, done, ok, failed, canceled;
	double elapsed_s, remaining_s;
	long long prog_ms;
	/* the run in progress */
	long long cur_seq;         /* -1: none */
	char cur_what[200];
	double bps[2];             /* latest interval, client and server side; -1: none */
	int omitted;
	/* the run list, by seq; NULL when the matrix has more than TABLE_MAX runs */
	struct runinfo *runs;
	size_t nruns;
	int ended;
	int bar_shown;             /* a tty line holds the progress */
	long long drawn_ms;
	char last_plain[256];      /* not a tty: the state of the last progress line */
	long long plain_ms;
	/* the stream */
	char line[65536];
	size_t len;
	int overflow;
	long long ev_id;
	char ev_type[64];
	char *ev_data;
	long long last_id;         /* where to resume; -1: from now */
	long status;
	int headers_done;
	char err_body[1024];
	size_t err_len;
};

static struct runinfo *run_at(struct watch *w, long long seq)
{
	return w->runs != NULL && seq >= 0 && (size_t)seq < w->nruns ? &w->runs[seq] : NULL;
}

/* "right -> left tcp forward" from an event or a run; the run list fills in
 * what a short event leaves out. */
static void describe(struct watch *w, const json_t *o, char *buf, size_t n)
{
	struct runinfo *ri = run_at(w, tbctl_jint(o, "seq", -1));

	if (tbctl_jstr(o, "client") != NULL) {
		char pair[200];

		fmt_pair(pair, sizeof(pair), o);
		snprintf(buf, n, "%s %s %s", pair, str_or(o, "protocol", ""), str_or(o, "direction", ""));
	} else {
		snprintf(buf, n, "%s", ri != NULL ? ri->what : "");
	}
}

static void set_progress(struct watch *w, const json_t *p)
{
	if (!json_is_object(p))
		return;
	w->total = tbctl_jint(p, "total", w->total);
	w->done = tbctl_jint(p, "done", w->done);
	w->ok = tbctl_jint(p, "ok", w->ok);
	w->failed = tbctl_jint(p, "failed", w->failed);
	w->canceled = tbctl_jint(p, "canceled", w->canceled);
	w->elapsed_s = jnum(p, "elapsed_s", w->elapsed_s);
	w->remaining_s = jnum(p, "remaining_s", w->remaining_s);
	w->prog_ms = now_ms();
}

static void set_matrix(struct watch *w, const json_t *m)
{
	if (tbctl_jstr(m, "name") != NULL)
		snprintf(w->name, sizeof(w->name), "%s", tbctl_jstr(m, "name"));
	if (tbctl_jstr(m, "state") != NULL)
		snprintf(w->state, sizeof(w->state), "%s", tbctl_jstr(m, "state"));
	set_progress(w, json_object_get(m, "progress"));
	w->ended = in(w->state, final_states);
}

/* The progress line, without the bar when plain. */
static void progress_text(struct watch *w, char *buf, size_t n, int bar)
{
	long long since = w->prog_ms > 0 ? now_ms() - w->prog_ms : 0;
	int running = strcmp(w->state, "running") == 0;
	double el = w->elapsed_s + (running ? (double)since / 1000.0 : 0);
	double left = w->remaining_s - (running ? (double)since / 1000.0 : 0);
	char e[32], l[32];
	size_t used = 0;

	buf[0] = '\0';
	if (bar) {
		long long fill = w->total > 0 ? w->done * BAR_WIDTH / w->total : 0;

		buf[used++] = '[';
		for (long long i = 0; i < BAR_WIDTH && used + 2 < n; i++)
			buf[used++] = i < fill ? '#' : '.';
		buf[used++] = ']';
		buf[used++] = ' ';
		buf[used] = '\0';
	}
	fmt_dur(e, sizeof(e), el);
	fmt_dur(l, sizeof(l), left > 0 ? left : 0);
	if (strcmp(w->state, "queued") == 0) {
		snprintf(buf + used, n - used, "%lld/%lld runs, queued%s%s", w->done, w->total,
			 w->waiting[0] ? ": " : "", w->waiting);
		return;
	}
	used += (size_t)snprintf(buf + used, n - used, "%lld/%lld runs", w->done, w->total);
	if (w->failed > 0 && used < n)
		used += (size_t)snprintf(buf + used, n - used, ", %lld failed", w->failed);
	if (used < n)
		used += (size_t)snprintf(buf + used, n - used, ", %s in, ~%s left", e, l);
	/* the bitrate before the pair: a narrow terminal cuts the end off */
	if (w->cur_seq >= 0 && used < n) {
		char c[32], s[32];

		used += (size_t)snprintf(buf + used, n - used, "  #%lld", w->cur_seq);
		if ((w->bps[0] >= 0 || w->bps[1] >= 0) && used < n) {
			fmt_bps(c, sizeof(c), w->bps[0]);
			fmt_bps(s, sizeof(s), w->bps[1]);
			used += (size_t)snprintf(buf + used, n - used, " client %s server %s%s", c, s,
						 w->omitted ? " (omitted)" : "");
		}
		if (used < n)
			snprintf(buf + used, n - used, "  %s", w->cur_what);
	}
}

static size_t columns(void)
{
#ifdef TIOCGWINSZ
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
#endif
	return 80;
}

/* Wipe the tty's progress line, so that a whole line can be printed. */
static void clear_bar(struct watch *w)
{
	if (w->bar_shown) {
		fputs("\r\033[K", stdout);
		fflush(stdout);    /* before a message on stderr */
		w->bar_shown = 0;
	}
}

static void draw(struct watch *w, int changed)
{
	char buf[512];

	if (w->quiet || w->json)
		return;
	if (w->tty) {
		size_t max = columns() - 1, k = 0, cut = 0;

		progress_text(w, buf, sizeof(buf), 1);
		/* one screen line, or \r cannot redraw it: cut at a code point */
		for (size_t i = 0; buf[i] != '\0'; i++)
			if (((unsigned char)buf[i] & 0xC0) != 0x80 && k++ == max) {
				cut = i;
				break;
			}
		if (cut > 0)
			buf[cut] = '\0';
		fputs("\r", stdout);
		tbctl_print_safe(stdout, buf);
		fputs("\033[K", stdout);
		w->bar_shown = 1;
		w->drawn_ms = now_ms();
	} else {
		char key[256];

		/* a line when the state changes, and now and then while it runs:
		 * the lines of the runs that end say the rest */
		snprintf(key, sizeof(key), "%s %s", w->state, w->waiting);
		if (!(changed && strcmp(key, w->last_plain) != 0) &&
		    !(strcmp(w->state, "running") == 0 && now_ms() - w->plain_ms >= PLAIN_EVERY_MS))
			return;
		snprintf(w->last_plain, sizeof(w->last_plain), "%s", key);
		w->plain_ms = now_ms();
		progress_text(w, buf, sizeof(buf), 0);
		fputs("progress: ", stdout);
		tbctl_print_safe(stdout, buf);
		fputc('\n', stdout);
	}
	fflush(stdout);
}

/* One line for a run that ended: from a run.state event or a run of the list. */
static void print_run_end(struct watch *w, const json_t *r)
{
	struct runinfo *ri = run_at(w, tbctl_jint(r, "seq", -1));
	const char *state = str_or(r, "state", "?"), *klass = tbctl_jstr(r, "error_class");
	char what[200], snd[32], rcv[32], line[1024];

	if (ri != NULL) {
		if (ri->seen)
			return;
		ri->seen = 1;
	}
	if (w->quiet || w->json)
		return;
	describe(w, r, what, sizeof(what));
	if (strcmp(state, "ok") == 0) {
		fmt_bps(snd, sizeof(snd), jnum(r, "sender_bps", -1));
		fmt_bps(rcv, sizeof(rcv), jnum(r, "receiver_bps", -1));
		snprintf(line, sizeof(line), "#%-4lld %-11s %s  sender %s  receiver %s", tbctl_jint(r, "seq", -1), state,
			 what, snd, rcv);
	} else {
		snprintf(line, sizeof(line), "#%-4lld %-11s %s  %s%s%s", tbctl_jint(r, "seq", -1), state, what,
			 klass ? klass : "", klass && tbctl_jstr(r, "error_message") ? ": " : "",
			 str_or(r, "error_message", ""));
	}
	clear_bar(w);
	tbctl_print_safe(stdout, line);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Fill the run list from a matrix's "runs"; mark_seen: runs that ended are
 * not reported again. */
static int set_runs(struct watch *w, const json_t *runs, int mark_seen)
{
	size_t i, n = 0;
	json_t *r;

	json_array_foreach(runs, i, r) {
		long long seq = tbctl_jint(r, "seq", -1);

		if (seq >= 0 && (size_t)seq + 1 > n)
			n = (size_t)seq + 1;
	}
	if (w->runs == NULL || w->nruns < n) {
		struct runinfo *v = realloc(w->runs, (n ? n : 1) * sizeof(*v));

		if (v == NULL)
			return -1;
		memset(v + w->nruns, 0, (n - w->nruns) * sizeof(*v));
		w->runs = v;
		w->nruns = n;
	}
	json_array_foreach(runs, i, r) {
		struct runinfo *ri = run_at(w, tbctl_jint(r, "seq", -1));
		char pair[200];

		if (ri == NULL)
			continue;
		ri->id = tbctl_jint(r, "id", 0);
		/* the pair as planned: the OS is that of the run, not known beforehand */
		snprintf(pair, sizeof(pair), "%s -> %s", str_or(r, "client", "?"), str_or(r, "server", "?"));
		snprintf(ri->what, sizeof(ri->what), "%s %s %s", pair, str_or(r, "protocol", ""),
			 str_or(r, "direction", ""));
		if (mark_seen && in(tbctl_jstr(r, "state"), run_final_states))
			ri->seen = 1;
	}
	return 0;
}

static char *matrix_path(long long id, const char *tail)
{
	char *p = malloc(96);

	if (p != NULL)
		snprintf(p, 96, "/api/v1/matrices/%lld%s", id, tail);
	return p;
}

/* GET the matrix (with its runs when there are few enough) into w; *out
 * gets the reply when out is not NULL. */
static int load(struct watch *w, int with_runs, int mark_seen, json_t **out)
{
	char path[96];
	json_t *reply = NULL, *m;
	int rc;

	if (out != NULL)
		*out = NULL;
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld?runs=0", w->id);
	if ((rc = tbctl_api_call_quiet(w->ctx, "GET", path, NULL, &reply)) != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	set_matrix(w, m);
	if (with_runs && w->total <= TABLE_MAX) {
		json_decref(reply);
		reply = NULL;
		snprintf(path, sizeof(path), "/api/v1/matrices/%lld?runs=1", w->id);
		if ((rc = tbctl_api_call_quiet(w->ctx, "GET", path, NULL, &reply)) != TBCTL_EXIT_OK)
			return rc;
		m = json_object_get(reply, "matrix");
		set_matrix(w, m);
		if (set_runs(w, json_object_get(m, "runs"), mark_seen) != 0) {
			json_decref(reply);
			return nomem();
		}
	}
	if (out != NULL)
		*out = reply;
	else
		json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* Has the matrix ended?  A GET right after subscribing: whatever happens
 * from now on comes as events.  Replaying (resumed), the progress the
 * events bring is older than the GET's, so only an end is taken from it. */
static int check_end(struct watch *w, int resumed)
{
	char path[96];
	json_t *reply = NULL, *m;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld?runs=0", w->id);
	if ((rc = tbctl_api_call_quiet(w->ctx, "GET", path, NULL, &reply)) != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	if (!resumed || in(tbctl_jstr(m, "state"), final_states))
		set_matrix(w, m);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* The matrix has ended: print what no event said, sum it up, exit code. */
static int finish(struct watch *w)
{
	static const char *const header[] = {"SEQ", "RUN", "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "ERROR",
					     "MESSAGE"};
	json_t *reply = NULL, *m, *runs, *r;
	struct tbctl_table *t = NULL;
	const json_t *err;
	char el[32];
	size_t i;
	int rc;

	clear_bar(w);
	if ((rc = load(w, 1, 0, &reply)) != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	runs = json_object_get(m, "runs");
	json_array_foreach(runs, i, r)
		if (in(tbctl_jstr(r, "state"), run_final_states))
			print_run_end(w, r);
	if (w->json) {
		/* the events were the output; the end is the last matrix.state */
		json_decref(reply);
		goto code;
	}
	fmt_dur(el, sizeof(el), w->elapsed_s);
	printf("matrix %lld \"", w->id);
	tbctl_print_safe(stdout, w->name);
	printf("\" %s: %lld of %lld runs done, %lld ok, %lld failed, %lld canceled; %s\n", w->state, w->done, w->total,
	       w->ok, w->failed, w->canceled, el);
	json_array_foreach(runs, i, r) {
		char seq[24], id[24], pair[200];
		const char *cells[7];

		if (strcmp(str_or(r, "state", ""), "failed") != 0)
			continue;
		if (t == NULL && (t = tbctl_table_new(7, header)) == NULL) {
			json_decref(reply);
			return nomem();
		}
		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(id, sizeof(id), "%lld", tbctl_jint(r, "id", 0));
		fmt_pair(pair, sizeof(pair), r);
		cells[0] = seq;
		cells[1] = id;
		cells[2] = pair;
		cells[3] = tbctl_jstr(r, "protocol");
		cells[4] = tbctl_jstr(r, "direction");
		cells[5] = tbctl_jstr(r, "error_class");
		cells[6] = tbctl_jstr(r, "error_message");
		tbctl_table_add(t, cells);
	}
	if (t != NULL) {
		printf("failed runs (tbctl matrix show %lld; GET /api/v1/runs/RUN has their commands):\n", w->id);
		tbctl_table_print(t, stdout);
		tbctl_table_free(t);
	}
	err = json_object_get(m, "error");
	if (strcmp(w->state, "succeeded") != 0) {
		fprintf(stderr, "tbctl: matrix %lld %s", w->id, w->state);
		if (json_is_object(err) && tbctl_jstr(err, "message") != NULL) {
			fputs(": ", stderr);
			tbctl_print_safe(stderr, tbctl_jstr(err, "message"));
		}
		fputc('\n', stderr);
	}
	json_decref(reply);
code:
	if (strcmp(w->state, "succeeded") == 0 && w->failed == 0)
		return TBCTL_EXIT_OK;
	if (strcmp(w->state, "canceled") == 0 || strcmp(w->state, "interrupted") == 0)
		return TBCTL_EXIT_CANCELED;
	return TBCTL_EXIT_FAILED;
}

static void on_event(struct watch *w)
{
	json_t *j = json_loads(w->ev_data, 0, NULL), *d = json_object_get(j, "data");
	int changed = 0;

	if (w->json) {
		fputs(w->ev_data, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	if (strcmp(w->ev_type, "reset") == 0) {
		clear_bar(w);
		fprintf(stderr, "tbctl: events up to %lld are no longer kept: some runs may be reported at the end\n",
			tbctl_jint(j, "oldest", 0) - 1);
	} else if (strcmp(w->ev_type, "matrix.state") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		const char *wf = tbctl_jstr(d, "waiting_for");

		snprintf(w->waiting, sizeof(w->waiting), "%s", wf ? wf : "");
		set_matrix(w, d);
		changed = 1;
	} else if (strcmp(w->ev_type, "run.state") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		long long seq = tbctl_jint(d, "seq", -1);
		const char *state = tbctl_jstr(d, "state");

		if (state != NULL && strcmp(state, "running") == 0) {
			w->cur_seq = seq;
			describe(w, d, w->cur_what, sizeof(w->cur_what));
			w->bps[0] = w->bps[1] = -1;
			w->omitted = 0;
		} else if (in(state, run_final_states)) {
			struct runinfo *ri = run_at(w, seq);

			if (ri == NULL || !ri->seen) {
				/* counted now; the matrix.state that follows says it exactly */
				w->done++;
				w->ok += strcmp(state, "ok") == 0;
				w->failed += strcmp(state, "failed") == 0;
			}
			print_run_end(w, d);
			if (seq == w->cur_seq)
				w->cur_seq = -1;
		}
		changed = 1;
	} else if (strcmp(w->ev_type, "run.interval") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		const json_t *iv = json_object_get(d, "interval");
		long long seq = tbctl_jint(d, "seq", -1);
		int side = strcmp(str_or(d, "side", ""), "server") == 0;

		if (seq != w->cur_seq) {
			w->cur_seq = seq;
			describe(w, d, w->cur_what, sizeof(w->cur_what));
			w->bps[0] = w->bps[1] = -1;
		}
		w->bps[side] = jnum(json_object_get(iv, "sum"), "bits_per_second", -1);
		w->omitted = json_is_true(json_object_get(iv, "omitted"));
	}
	json_decref(j);
	draw(w, changed);
}

/* One line of the stream (without its newline): SSE records. */
static void on_line(struct watch *w, char *line)
{
	if (line[0] == '\0') {          /* end of a record */
		if (w->ev_data != NULL && !w->ended &&
		    (w->ev_id > w->last_id || strcmp(w->ev_type, "reset") == 0)) {
			on_event(w);
			if (w->ev_id > 0)
				w->last_id = w->ev_id;
		}
		free(w->ev_data);
		w->ev_data = NULL;
		w->ev_id = 0;
		w->ev_type[0] = '\0';
		return;
	}
	if (line[0] == ':')
		return;                 /* heartbeat */
	if (strncmp(line, "id: ", 4) == 0)
		w->ev_id = strtoll(line + 4, NULL, 10);
	else if (strncmp(line, "event: ", 7) == 0)
		snprintf(w->ev_type, sizeof(w->ev_type), "%s", line + 7);
	else if (strncmp(line, "data: ", 6) == 0) {
		free(w->ev_data);
		w->ev_data = strdup(line + 6);
	}
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *cls)
{
	struct watch *w = cls;
	size_t n = size * nmemb;

	if (w->status != 200) {         /* an error reply: keep its body */
		size_t room = sizeof(w->err_body) - 1 - w->err_len, k = n < room ? n : room;

		memcpy(w->err_body + w->err_len, data, k);
		w->err_len += k;
		w->err_body[w->err_len] = '\0';
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			w->line[w->len] = '\0';
			if (!w->overflow)
				on_line(w, w->line);
			w->len = 0;
			w->overflow = 0;
		} else if (w->len < sizeof(w->line) - 1) {
			w->line[w->len++] = data[i];
		} else {
			w->overflow = 1;   /* a line longer than 64 KiB: dropped */
		}
	}
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *cls)
{
	struct watch *w = cls;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		const char *sp = memchr(data, ' ', n);

		w->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
		w->headers_done = 0;
	} else if ((n == 2 && data[0] == '\r') || (n == 1 && data[0] == '\n')) {
		w->headers_done = 1;
	}
	return n;
}

/* One connection to the stream, until it ends, the matrix ends (w->ended)
 * or an API call fails (*rc).  *cr says how the transfer ended. */
static void stream_once(struct watch *w, const char *auth, CURLcode *cr, int *rc)
{
	CURL *c = curl_easy_init();
	CURLM *m = curl_multi_init();
	struct curl_slist *h = NULL;
	char url[1024], last[64];
	int running = 1, checked = 0, resumed = w->last_id >= 0;

	*cr = CURLE_OK;
	*rc = TBCTL_EXIT_OK;
	if (c == NULL || m == NULL) {
		*rc = nomem();
		goto out;
	}
	snprintf(url, sizeof(url), "%s/api/v1/events?matrix=%lld", w->ctx->http.base_url, w->id);
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Accept: text/event-stream");
	if (w->last_id >= 0) {
		snprintf(last, sizeof(last), "Last-Event-ID: %lld", w->last_id);
		h = curl_slist_append(h, last);
	}
	if (h == NULL) {
		*rc = nomem();
		goto out;
	}
	w->status = 0;
	w->headers_done = 0;
	w->len = 0;
	w->overflow = 0;
	w->err_len = 0;
	w->err_body[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	tbctl_http_tls(c);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, w->ctx->http.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	/* A proxy from the environment would see the bearer token. */
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	/* an idle stream carries a heartbeat every 15 s: 40 s of silence is a dead one */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 40L);
	curl_multi_add_handle(m, c);
	while (running && !w->ended) {
		CURLMsg *msg;
		int q;

		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(m, &q)) != NULL)
			if (msg->msg == CURLMSG_DONE)
				*cr = msg->data.result;
		/* subscribed: did the matrix end while no stream was open? */
		if (w->headers_done && w->status == 200 && !checked && !w->ended) {
			checked = 1;
			if ((*rc = check_end(w, resumed)) != TBCTL_EXIT_OK)
				break;
			draw(w, 1);
		}
		if (w->ended || !running)
			break;
		if (w->tty && now_ms() - w->drawn_ms >= 1000)
			draw(w, 0);
		else if (!w->tty)
			draw(w, 0);
#if LIBCURL_VERSION_NUM >= 0x074200 /* 7.66.0 */
		curl_multi_poll(m, NULL, 0, 500, NULL);
#else
		curl_multi_wait(m, NULL, 0, 500, NULL);
#endif
	}
	curl_multi_remove_handle(m, c);
out:
	curl_slist_free_all(h);
	if (c != NULL)
		curl_easy_cleanup(c);
	if (m != NULL)
		curl_multi_cleanup(m);
}

/* Follow w->id until it ends; the exit code. */
static int follow(struct watch *w)
{
	char auth[256];
	long wait_s = 1;
	int rc = TBCTL_EXIT_OK;

	if (w->ended)
		return finish(w);
	if (!w->quiet && !w->json) {
		printf("following matrix %lld \"", w->id);
		tbctl_print_safe(stdout, w->name);
		printf("\" (%lld runs); Ctrl-C stops watching, not the matrix\n", w->total);
		fflush(stdout);
		draw(w, 1);
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", w->ctx->http.token ? w->ctx->http.token : "");
	for (;;) {
		CURLcode cr;

		stream_once(w, auth, &cr, &rc);
		if (rc != TBCTL_EXIT_OK)
			break;
		if (w->ended)
			return finish(w);
		if (w->status == 401 || w->status == 403 || w->status == 400 || w->status == 404) {
			json_t *e = json_loads(w->err_body, 0, NULL);
			const char *msg = tbctl_jstr(json_object_get(e, "error"), "message");

			clear_bar(w);
			fprintf(stderr, "tbctl: the server refused the event stream (HTTP %ld): ", w->status);
			tbctl_print_safe(stderr, msg != NULL ? msg : w->err_body);
			fputc('\n', stderr);
			json_decref(e);
			rc = w->status == 400 || w->status == 404 ? TBCTL_EXIT_REFUSED : TBCTL_EXIT_AUTH;
			break;
		}
		if (w->status == 200)
			wait_s = 1;   /* it was up: retry soon */
		clear_bar(w);
		fprintf(stderr, "tbctl: event stream %s (%s); resuming", w->status == 200 ? "lost" : "unavailable",
			cr != CURLE_OK ? curl_easy_strerror(cr) : "closed");
		if (w->last_id >= 0)
			fprintf(stderr, " after event %lld", w->last_id);
		fprintf(stderr, " in %ld s\n", wait_s);
		for (long i = 0; i < wait_s * 10; i++) {
			sleep_ms(100);
			if (w->tty && i % 10 == 9)
				draw(w, 0);
		}
		wait_s = wait_s * 2 > 10 ? 10 : wait_s * 2;
	}
	clear_bar(w);
	fflush(stdout);
	return rc;
}

static struct watch *watch_new(const struct tbctl_ctx *ctx, long long id)
{
	struct watch *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->ctx = ctx;
	w->id = id;
	w->tty = isatty(STDOUT_FILENO);
	w->quiet = (ctx->args->seen & TBCTL_OPT_QUIET) != 0;
	w->json = ctx->args->json;
	w->cur_seq = -1;
	w->bps[0] = w->bps[1] = -1;
	w->last_id = -1;
	snprintf(w->state, sizeof(w->state), "queued");
	return w;
}

static void watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	free(w->ev_data);
	free(w->runs);
	free(w);
}

/* Follow a matrix this tbctl just created: from its first event on. */
static int follow_new(const struct tbctl_ctx *ctx, long long id)
{
	struct watch *w = watch_new(ctx, id);
	int rc;

	if (w == NULL)
		return nomem();
	w->last_id = 0;            /* the stream replays every event of the matrix */
	if ((rc = load(w, 1, 0, NULL)) == TBCTL_EXIT_OK)
		rc = follow(w);
	watch_free(w);
	return rc;
}

int tbctl_cmd_matrix_watch(const struct tbctl_ctx *ctx)
{
	struct watch *w;
	json_t *reply = NULL;
	long long id;
	int rc;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((w = watch_new(ctx, id)) == NULL)
		return nomem();
	rc = load(w, 1, 1, &reply);
	if (rc == TBCTL_EXIT_OK && w->ended && w->json) {
		tbctl_print_json(reply);   /* ended already: its JSON is the answer */
		w->quiet = 1;
	}
	json_decref(reply);
	if (rc == TBCTL_EXIT_OK)
		rc = follow(w);
	watch_free(w);
	return rc;
}

/* ---- starting ---- */

/* After POST path (body may be NULL) that answered {"matrix": ...}: print
 * the id, or follow the matrix with --wait. */
static int started(const struct tbctl_ctx *ctx, const char *path, json_t *body, const char *what,
		   struct watch *resumed)
{
	const struct tbctl_args *a = ctx->args;
	int quiet = (a->seen & TBCTL_OPT_QUIET) != 0;
	json_t *reply = NULL, *m;
	long long id;
	char est[32];
	int rc;

	rc = a->wait ? tbctl_api_call_quiet(ctx, "POST", path, body, &reply)
		     : tbctl_api_call(ctx, "POST", path, body, &reply);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	id = tbctl_jint(m, "id", 0);
	fmt_dur(est, sizeof(est), jnum(m, "estimated_s", -1));
	if (quiet && !a->json) {
		printf("%lld\n", id);
	} else if (!a->json) {
		printf("matrix %lld \"", id);
		tbctl_print_safe(stdout, str_or(m, "name", ""));
		printf("\" %s%s: %lld runs, estimated %s\n", str_or(m, "state", "?"), what,
		       tbctl_jint(json_object_get(m, "progress"), "total", 0), est);
		if (!a->wait)
			printf("follow it with: tbctl matrix watch %lld\n", id);
	}
	fflush(stdout);
	if (a->wait && resumed != NULL) {
		set_matrix(resumed, m);
		rc = follow(resumed);
	} else if (a->wait) {
		rc = follow_new(ctx, id);
	}
	json_decref(reply);
	return rc;
}

int tbctl_cmd_matrix_run(const struct tbctl_ctx *ctx)
{
	json_t *spec = load_spec(ctx->args->pos[2]);
	int rc;

	if (spec == NULL)
		return TBCTL_EXIT_USAGE;
	rc = started(ctx, "/api/v1/matrices", spec, "", NULL);
	json_decref(spec);
	return rc;
}

int tbctl_cmd_matrix_rerun(const struct tbctl_ctx *ctx)
{
	char *path, what[64];
	long long id;
	int rc;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = matrix_path(id, "/rerun")) == NULL)
		return nomem();
	snprintf(what, sizeof(what), " (a rerun of %lld)", id);
	rc = started(ctx, path, NULL, what, NULL);
	free(path);
	return rc;
}

int tbctl_cmd_matrix_resume(const struct tbctl_ctx *ctx)
{
	struct watch *w = NULL;
	char *path;
	long long id;
	int rc = TBCTL_EXIT_OK;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = matrix_path(id, "/resume")) == NULL)
		return nomem();
	if (ctx->args->wait) {
		/* the runs it kept, before they start again: not reported as news */
		if ((w = watch_new(ctx, id)) == NULL) {
			free(path);
			return nomem();
		}
		rc = load(w, 1, 1, NULL);
		w->ended = 0;
	}
	if (rc == TBCTL_EXIT_OK)
		rc = started(ctx, path, NULL, " again", w);
	watch_free(w);
	free(path);
	return rc;
}

int tbctl_cmd_matrix_cancel(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL;
	char *path;
	long long id;
	int rc;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = matrix_path(id, "/cancel")) == NULL)
		return nomem();
	rc = tbctl_api_call(ctx, "POST", path, NULL, &reply);
	free(path);
	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		printf("matrix %lld: cancel requested (it was %s); resume runs what is left\n", id,
		       str_or(json_object_get(reply, "matrix"), "state", "?"));
	json_decref(reply);
	return rc;
}

/* ---- looking ---- */

int tbctl_cmd_matrix_list(const struct tbctl_ctx *ctx)
{
	static const char *const header[] = {"ID", "NAME", "STATE", "DONE", "FAILED", "BY", "CREATED", "ELAPSED"};
	char path[128];
	json_t *reply = NULL, *m;
	struct tbctl_table *t;
	size_t i;
	int rc;

	if (ctx->args->limit != NULL && strspn(ctx->args->limit, "0123456789") != strlen(ctx->args->limit)) {
		fprintf(stderr, "tbctl: --limit is a whole number 1..1000, got \"%s\"\n", ctx->args->limit);
		return TBCTL_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/api/v1/matrices?limit=%s", ctx->args->limit ? ctx->args->limit : "50");
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	if ((t = tbctl_table_new(8, header)) == NULL) {
		json_decref(reply);
		return nomem();
	}
	json_array_foreach(json_object_get(reply, "matrices"), i, m) {
		const json_t *p = json_object_get(m, "progress");
		char id[24], done[48], failed[24], el[32];
		const char *cells[8];

		snprintf(id, sizeof(id), "%lld", tbctl_jint(m, "id", 0));
		snprintf(done, sizeof(done), "%lld/%lld", tbctl_jint(p, "done", 0), tbctl_jint(p, "total", 0));
		snprintf(failed, sizeof(failed), "%lld", tbctl_jint(p, "failed", 0));
		fmt_dur(el, sizeof(el), jnum(p, "elapsed_s", -1));
		cells[0] = id;
		cells[1] = tbctl_jstr(m, "name");
		cells[2] = tbctl_jstr(m, "state");
		cells[3] = done;
		cells[4] = failed;
		cells[5] = tbctl_jstr(m, "actor");
		cells[6] = tbctl_jstr(m, "created_at");
		cells[7] = el;
		tbctl_table_add(t, cells);
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* Every run: state, results, error. */
static int runs_table(const json_t *runs)
{
	static const char *const header[] = {"SEQ", "RUN", "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "PARAMS",
					     "STATE", "SENDER", "RECEIVER", "RETRANS", "LOSS", "ERROR"};
	struct tbctl_table *t = tbctl_table_new(12, header);
	const json_t *r;
	size_t i;

	if (t == NULL)
		return nomem();
	json_array_foreach(runs, i, r) {
		char seq[24], id[24], pair[200], params[256], snd[32], rcv[32], rtx[32], loss[32];
		const char *cells[12];

		if (!json_is_object(r))
			continue;
		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(id, sizeof(id), "%lld", tbctl_jint(r, "id", 0));
		fmt_pair(pair, sizeof(pair), r);
		fmt_params(params, sizeof(params), json_object_get(r, "params"));
		fmt_bps(snd, sizeof(snd), jnum(r, "sender_bps", -1));
		fmt_bps(rcv, sizeof(rcv), jnum(r, "receiver_bps", -1));
		fmt_count(rtx, sizeof(rtx), jnum(r, "retransmits", -1));
		fmt_percent(loss, sizeof(loss), jnum(r, "lost_percent", -1));
		cells[0] = seq;
		cells[1] = id;
		cells[2] = pair;
		cells[3] = tbctl_jstr(r, "protocol");
		cells[4] = tbctl_jstr(r, "direction");
		cells[5] = params;
		cells[6] = tbctl_jstr(r, "state");
		cells[7] = snd;
		cells[8] = rcv;
		cells[9] = rtx;
		cells[10] = loss;
		cells[11] = tbctl_jstr(r, "error_class");
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

/* Per cell: the medians of its repeats. */
static int cells_table(const json_t *cells_json)
{
	static const char *const header[] = {"CELL", "CLIENT -> SERVER", "PROTOCOL", "DIRECTION", "PARAMS", "N",
					     "FAILED", "SENDER", "RECEIVER", "RETRANS", "LOSS"};
	struct tbctl_table *t = tbctl_table_new(11, header);
	const json_t *c;
	size_t i;

	if (t == NULL)
		return nomem();
	json_array_foreach(cells_json, i, c) {
		char cell[24], pair[200], params[256], n[48], failed[24], snd[32], rcv[32], rtx[32], loss[32];
		const char *cells[11];

		if (!json_is_object(c))
			continue;       /* a cell no run of which is stored */
		snprintf(cell, sizeof(cell), "%lld", tbctl_jint(c, "cell", 0));
		fmt_pair(pair, sizeof(pair), c);
		fmt_params(params, sizeof(params), json_object_get(c, "params"));
		snprintf(n, sizeof(n), "%lld/%lld", tbctl_jint(c, "n", 0), tbctl_jint(c, "runs", 0));
		snprintf(failed, sizeof(failed), "%lld", tbctl_jint(c, "failed", 0));
		fmt_bps(snd, sizeof(snd), median_of(c, "sender_bps"));
		fmt_bps(rcv, sizeof(rcv), median_of(c, "receiver_bps"));
		fmt_count(rtx, sizeof(rtx), median_of(c, "retransmits"));
		fmt_percent(loss, sizeof(loss), median_of(c, "lost_percent"));
		cells[0] = cell;
		cells[1] = pair;
		cells[2] = tbctl_jstr(c, "protocol");
		cells[3] = tbctl_jstr(c, "direction");
		cells[4] = params;
		cells[5] = n;
		cells[6] = failed;
		cells[7] = snd;
		cells[8] = rcv;
		cells[9] = rtx;
		cells[10] = loss;
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_matrix_results(const struct tbctl_ctx *ctx)
{
	unsigned seen = ctx->args->seen;
	int by_run = (seen & TBCTL_OPT_RUNS) != 0, rc;
	json_t *reply = NULL;
	char path[160];
	long long id;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if (by_run && (seen & TBCTL_OPT_CELLS)) {
		fprintf(stderr, "tbctl: --runs and --cells are two views: choose one (default: --cells)\n");
		return TBCTL_EXIT_USAGE;
	}
	if ((seen & TBCTL_OPT_CSV) && ctx->args->json) {
		fprintf(stderr, "tbctl: --csv and --json are two outputs: choose one\n");
		return TBCTL_EXIT_USAGE;
	}
	if (seen & TBCTL_OPT_CSV) {
		char *text;
		size_t len;

		snprintf(path, sizeof(path), "/api/v1/matrices/%lld/results?format=csv&view=%s", id,
			 by_run ? "runs" : "cells");
		if ((rc = tbctl_api_get_text(ctx, path, &text, &len)) != TBCTL_EXIT_OK)
			return rc;
		if (len > 0)
			fwrite(text, 1, len, stdout);   /* as the server sent it */
		free(text);
		return TBCTL_EXIT_OK;
	}
	snprintf(path, sizeof(path), "/api/v1/matrices/%lld/results", id);
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	printf("matrix %lld \"", id);
	tbctl_print_safe(stdout, str_or(reply, "name", ""));
	printf("\": %s; %s\n", str_or(reply, "state", "?"),
	       by_run ? "every run" : "per cell, the median of its ok runs (N: ok/all)");
	rc = by_run ? runs_table(json_object_get(reply, "runs")) : cells_table(json_object_get(reply, "cells"));
	json_decref(reply);
	return rc;
}

int tbctl_cmd_matrix_show(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL, *m, *p, *err;
	char *path, el[32], left[32];
	long long id;
	int rc;

	if (parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((path = matrix_path(id, "?runs=1")) == NULL)
		return nomem();
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	free(path);
	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	m = json_object_get(reply, "matrix");
	p = json_object_get(m, "progress");
	err = json_object_get(m, "error");
	fmt_dur(el, sizeof(el), jnum(p, "elapsed_s", -1));
	fmt_dur(left, sizeof(left), jnum(p, "remaining_s", -1));
	printf("matrix %lld \"", id);
	tbctl_print_safe(stdout, str_or(m, "name", ""));
	printf("\": %s, by %s, created %s, started %s, finished %s", str_or(m, "state", "?"), str_or(m, "actor", "?"),
	       str_or(m, "created_at", "-"), str_or(m, "started_at", "-"), str_or(m, "finished_at", "-"));
	if (json_is_integer(json_object_get(m, "rerun_of")))
		printf(", a rerun of %lld", tbctl_jint(m, "rerun_of", 0));
	printf("\nprogress: %lld/%lld done: %lld ok, %lld failed, %lld canceled; %lld running, %lld pending; "
	       "%s elapsed, ~%s left\n",
	       tbctl_jint(p, "done", 0), tbctl_jint(p, "total", 0), tbctl_jint(p, "ok", 0), tbctl_jint(p, "failed", 0),
	       tbctl_jint(p, "canceled", 0), tbctl_jint(p, "running", 0), tbctl_jint(p, "pending", 0), el, left);
	if (json_is_object(err)) {
		printf("error: %s: ", str_or(err, "code", "?"));
		tbctl_print_safe(stdout, str_or(err, "message", ""));
		fputc('\n', stdout);
	}
	rc = runs_table(json_object_get(m, "runs"));
	json_decref(reply);
	return rc;
}
