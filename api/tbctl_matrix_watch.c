/*
 * tbctl_matrix_watch.c - following a matrix: tbctl matrix watch, and run,
 * resume and rerun with --wait.
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
#include "tbctl_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tbctl_sse.h"
#include "tbctl_table.h"

#include <curl/curl.h>

#define TABLE_MAX 10000      /* runs fetched with the matrix for a watch */
#define PLAIN_EVERY_MS 10000 /* not a tty: a live line at most this often */
#define BAR_WIDTH 16

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
	char what[200]; /* "right -> left tcp forward" */
	int seen;       /* its end was printed (or it had ended before the watch) */
};

struct mx_watch {
	const struct tbctl_ctx *ctx;
	long long id;
	int tty, quiet, json;
	char name[80];
	char state[16];
	char waiting[200]; /* why a queued matrix waits, "" */
	/* progress as of prog_ms */
	long long total, done, ok, failed, canceled;
	double elapsed_s, remaining_s;
	long long prog_ms;
	/* the run in progress */
	long long cur_seq; /* -1: none */
	char cur_what[200];
	double bps[2]; /* latest interval, client and server side; -1: none */
	int omitted;
	/* the run list, by seq; NULL when the matrix has more than TABLE_MAX runs */
	struct runinfo *runs;
	size_t nruns;
	int ended;
	int bar_shown; /* a tty line holds the progress */
	long long drawn_ms;
	char last_plain[256]; /* not a tty: the state of the last progress line */
	long long plain_ms;
	/* the stream */
	struct tbctl_sse *sse;
	long long first_id; /* where the first stream starts; -1: from now */
};

static struct runinfo *run_at(struct mx_watch *w, long long seq)
{
	return w->runs != NULL && seq >= 0 && (size_t)seq < w->nruns ? &w->runs[seq] : NULL;
}

/* "right -> left tcp forward" from an event or a run; the run list fills in
 * what a short event leaves out. */
static void describe(struct mx_watch *w, const json_t *o, char *buf, size_t n)
{
	struct runinfo *ri = run_at(w, tbctl_jint(o, "seq", -1));

	if (tbctl_jstr(o, "client") != NULL) {
		char pair[200];

		mx_fmt_pair(pair, sizeof(pair), o);
		snprintf(buf, n, "%s %s %s", pair, mx_str_or(o, "protocol", ""), mx_str_or(o, "direction", ""));
	} else {
		snprintf(buf, n, "%s", ri != NULL ? ri->what : "");
	}
}

static void set_progress(struct mx_watch *w, const json_t *p)
{
	if (!json_is_object(p))
		return;
	w->total = tbctl_jint(p, "total", w->total);
	w->done = tbctl_jint(p, "done", w->done);
	w->ok = tbctl_jint(p, "ok", w->ok);
	w->failed = tbctl_jint(p, "failed", w->failed);
	w->canceled = tbctl_jint(p, "canceled", w->canceled);
	w->elapsed_s = mx_jnum(p, "elapsed_s", w->elapsed_s);
	w->remaining_s = mx_jnum(p, "remaining_s", w->remaining_s);
	w->prog_ms = mx_now_ms();
}

void mx_watch_set_matrix(struct mx_watch *w, const json_t *m)
{
	if (tbctl_jstr(m, "name") != NULL)
		snprintf(w->name, sizeof(w->name), "%s", tbctl_jstr(m, "name"));
	if (tbctl_jstr(m, "state") != NULL)
		snprintf(w->state, sizeof(w->state), "%s", tbctl_jstr(m, "state"));
	set_progress(w, json_object_get(m, "progress"));
	w->ended = in(w->state, final_states);
}

/* The progress line, without the bar when plain. */
static void progress_text(struct mx_watch *w, char *buf, size_t n, int bar)
{
	long long since = w->prog_ms > 0 ? mx_now_ms() - w->prog_ms : 0;
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
	mx_fmt_dur(e, sizeof(e), el);
	mx_fmt_dur(l, sizeof(l), left > 0 ? left : 0);
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
			/* only the sides that report: iperf3 before 3.17 gives the
			 * client's intervals only at the end */
			mx_fmt_bps(c, sizeof(c), w->bps[0]);
			mx_fmt_bps(s, sizeof(s), w->bps[1]);
			used += (size_t)snprintf(buf + used, n - used, "%s%s%s%s%s", w->bps[0] >= 0 ? " client " : "",
						 w->bps[0] >= 0 ? c : "", w->bps[1] >= 0 ? " server " : "",
						 w->bps[1] >= 0 ? s : "", w->omitted ? " (omitted)" : "");
		}
		if (used < n)
			snprintf(buf + used, n - used, "  %s", w->cur_what);
	}
}

/* Wipe the tty's progress line, so that a whole line can be printed. */
static void clear_bar(struct mx_watch *w)
{
	if (w->bar_shown) {
		fputs("\r\033[K", stdout);
		fflush(stdout); /* before a message on stderr */
		w->bar_shown = 0;
	}
}

static void draw(struct mx_watch *w, int changed)
{
	char buf[512];

	if (w->quiet || w->json)
		return;
	if (w->tty) {
		size_t max = mx_columns() - 1, k = 0, cut = 0;

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
		w->drawn_ms = mx_now_ms();
	} else {
		char key[256];

		/* a line when the state changes, and now and then while it runs:
		 * the lines of the runs that end say the rest */
		snprintf(key, sizeof(key), "%s %s", w->state, w->waiting);
		if (!(changed && strcmp(key, w->last_plain) != 0) &&
		    !(strcmp(w->state, "running") == 0 && mx_now_ms() - w->plain_ms >= PLAIN_EVERY_MS))
			return;
		snprintf(w->last_plain, sizeof(w->last_plain), "%s", key);
		w->plain_ms = mx_now_ms();
		progress_text(w, buf, sizeof(buf), 0);
		fputs("progress: ", stdout);
		tbctl_print_safe(stdout, buf);
		fputc('\n', stdout);
	}
	fflush(stdout);
}

/* One line for a run that ended: from a run.state event or a run of the list. */
static void print_run_end(struct mx_watch *w, const json_t *r)
{
	struct runinfo *ri = run_at(w, tbctl_jint(r, "seq", -1));
	const char *state = mx_str_or(r, "state", "?"), *klass = tbctl_jstr(r, "error_class");
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
		mx_fmt_bps(snd, sizeof(snd), mx_jnum(r, "sender_bps", -1));
		mx_fmt_bps(rcv, sizeof(rcv), mx_jnum(r, "receiver_bps", -1));
		snprintf(line, sizeof(line), "#%-4lld %-11s %s  sender %s  receiver %s", tbctl_jint(r, "seq", -1),
			 state, what, snd, rcv);
	} else {
		snprintf(line, sizeof(line), "#%-4lld %-11s %s  %s%s%s", tbctl_jint(r, "seq", -1), state, what,
			 klass ? klass : "", klass && tbctl_jstr(r, "error_message") ? ": " : "",
			 mx_str_or(r, "error_message", ""));
	}
	clear_bar(w);
	tbctl_print_safe(stdout, line);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Fill the run list from a matrix's "runs"; mark_seen: runs that ended are
 * not reported again. */
static int set_runs(struct mx_watch *w, const json_t *runs, int mark_seen)
{
	size_t i, n = 0;
	json_t *r;

	json_array_foreach(runs, i, r)
	{
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
	json_array_foreach(runs, i, r)
	{
		struct runinfo *ri = run_at(w, tbctl_jint(r, "seq", -1));
		char pair[200];

		if (ri == NULL)
			continue;
		ri->id = tbctl_jint(r, "id", 0);
		/* the pair as planned: the OS is that of the run, not known beforehand */
		snprintf(pair, sizeof(pair), "%s -> %s", mx_str_or(r, "client", "?"), mx_str_or(r, "server", "?"));
		snprintf(ri->what, sizeof(ri->what), "%s %s %s", pair, mx_str_or(r, "protocol", ""),
			 mx_str_or(r, "direction", ""));
		if (mark_seen && in(tbctl_jstr(r, "state"), run_final_states))
			ri->seen = 1;
	}
	return 0;
}

/* GET the matrix (with its runs when there are few enough) into w; *out
 * gets the reply when out is not NULL. */
int mx_watch_load(struct mx_watch *w, int with_runs, int mark_seen, json_t **out)
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
	mx_watch_set_matrix(w, m);
	if (with_runs && w->total <= TABLE_MAX) {
		json_decref(reply);
		reply = NULL;
		snprintf(path, sizeof(path), "/api/v1/matrices/%lld?runs=1", w->id);
		if ((rc = tbctl_api_call_quiet(w->ctx, "GET", path, NULL, &reply)) != TBCTL_EXIT_OK)
			return rc;
		m = json_object_get(reply, "matrix");
		mx_watch_set_matrix(w, m);
		if (set_runs(w, json_object_get(m, "runs"), mark_seen) != 0) {
			json_decref(reply);
			return mx_nomem();
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
static int check_end(struct mx_watch *w, int resumed)
{
	char path[96];
	json_t *reply = NULL, *m;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/matrices/%lld?runs=0", w->id);
	if ((rc = tbctl_api_call_quiet(w->ctx, "GET", path, NULL, &reply)) != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	if (!resumed || in(tbctl_jstr(m, "state"), final_states))
		mx_watch_set_matrix(w, m);
	json_decref(reply);
	return TBCTL_EXIT_OK;
}

/* The matrix has ended: print what no event said, sum it up, exit code. */
static int finish(struct mx_watch *w)
{
	static const char *const header[] = {"SEQ",       "RUN",   "CLIENT -> SERVER", "PROTOCOL",
					     "DIRECTION", "ERROR", "MESSAGE"};
	json_t *reply = NULL, *m, *runs, *r;
	struct tbctl_table *t = NULL;
	const json_t *err;
	char el[32];
	size_t i;
	int rc;

	clear_bar(w);
	if ((rc = mx_watch_load(w, 1, 0, &reply)) != TBCTL_EXIT_OK)
		return rc;
	m = json_object_get(reply, "matrix");
	runs = json_object_get(m, "runs");
	json_array_foreach(runs, i, r) if (in(tbctl_jstr(r, "state"), run_final_states)) print_run_end(w, r);
	if (w->json) {
		/* the events were the output; the end is the last matrix.state */
		json_decref(reply);
		goto code;
	}
	mx_fmt_dur(el, sizeof(el), w->elapsed_s);
	printf("matrix %lld \"", w->id);
	tbctl_print_safe(stdout, w->name);
	printf("\" %s: %lld of %lld runs done, %lld ok, %lld failed, %lld canceled; %s\n", w->state, w->done, w->total,
	       w->ok, w->failed, w->canceled, el);
	json_array_foreach(runs, i, r)
	{
		char seq[24], id[24], pair[200];
		const char *cells[7];

		if (strcmp(mx_str_or(r, "state", ""), "failed") != 0)
			continue;
		if (t == NULL && (t = tbctl_table_new(7, header)) == NULL) {
			json_decref(reply);
			return mx_nomem();
		}
		snprintf(seq, sizeof(seq), "%lld", tbctl_jint(r, "seq", 0));
		snprintf(id, sizeof(id), "%lld", tbctl_jint(r, "id", 0));
		mx_fmt_pair(pair, sizeof(pair), r);
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

static void on_event(void *cls, const char *type, long long id, const char *data)
{
	struct mx_watch *w = cls;
	json_t *j, *d;
	int changed = 0;

	(void)id;
	if (w->ended)
		return; /* the rest of a record batch after the end */
	j = json_loads(data, 0, NULL);
	d = json_object_get(j, "data");
	if (w->json) {
		fputs(data, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	if (strcmp(type, "reset") == 0) {
		clear_bar(w);
		fprintf(stderr, "tbctl: events up to %lld are no longer kept: some runs may be reported at the end\n",
			tbctl_jint(j, "oldest", 0) - 1);
	} else if (strcmp(type, "matrix.state") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		const char *wf = tbctl_jstr(d, "waiting_for");

		snprintf(w->waiting, sizeof(w->waiting), "%s", wf ? wf : "");
		mx_watch_set_matrix(w, d);
		changed = 1;
	} else if (strcmp(type, "matrix.boot") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		clear_bar(w);
		mx_print_boot(d);
		changed = 1;
	} else if (strcmp(type, "run.state") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
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
	} else if (strcmp(type, "run.interval") == 0 && tbctl_jint(d, "matrix", 0) == w->id) {
		const json_t *iv = json_object_get(d, "interval");
		long long seq = tbctl_jint(d, "seq", -1);
		int side = strcmp(mx_str_or(d, "side", ""), "server") == 0;

		if (seq != w->cur_seq) {
			w->cur_seq = seq;
			describe(w, d, w->cur_what, sizeof(w->cur_what));
			w->bps[0] = w->bps[1] = -1;
		}
		w->bps[side] = mx_jnum(json_object_get(iv, "sum"), "bits_per_second", -1);
		w->omitted = json_is_true(json_object_get(iv, "omitted"));
	}
	json_decref(j);
	draw(w, changed);
}

/* One connection to the stream, until it ends, the matrix ends (w->ended)
 * or an API call fails (*rc).  *cr says how the transfer ended. */
static void stream_once(struct mx_watch *w, CURLcode *cr, int *rc)
{
	CURL *c;
	CURLM *m = curl_multi_init();
	char query[64];
	int running = 1, checked = 0, resumed = tbctl_sse_last_id(w->sse) >= 0;

	*cr = CURLE_OK;
	*rc = TBCTL_EXIT_OK;
	snprintf(query, sizeof(query), "matrix=%lld", w->id);
	c = m != NULL ? tbctl_sse_begin(w->sse, w->ctx, query) : NULL;
	if (c == NULL) {
		*rc = mx_nomem();
		goto out;
	}
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
		if (tbctl_sse_subscribed(w->sse) && !checked && !w->ended) {
			checked = 1;
			if ((*rc = check_end(w, resumed)) != TBCTL_EXIT_OK)
				break;
			draw(w, 1);
		}
		if (w->ended || !running)
			break;
		if (w->tty && mx_now_ms() - w->drawn_ms >= 1000)
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
	tbctl_sse_end(w->sse, c);
	if (m != NULL)
		curl_multi_cleanup(m);
}

/* Follow w->id until it ends; the exit code. */
int mx_watch_follow(struct mx_watch *w)
{
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
	if (w->sse == NULL && (w->sse = tbctl_sse_new(on_event, w, w->first_id)) == NULL)
		return mx_nomem();
	for (;;) {
		CURLcode cr;

		stream_once(w, &cr, &rc);
		if (rc != TBCTL_EXIT_OK)
			break;
		if (w->ended)
			return finish(w);
		clear_bar(w);
		if ((rc = tbctl_sse_refused(w->sse)) != TBCTL_EXIT_OK)
			break;
		if (tbctl_sse_status(w->sse) == 200)
			wait_s = 1; /* it was up: retry soon */
		fprintf(stderr, "tbctl: event stream %s (%s)", tbctl_sse_status(w->sse) == 200 ? "lost" : "unavailable",
			cr != CURLE_OK ? curl_easy_strerror(cr) : "closed");
		if (tbctl_sse_why(w->sse)[0] != '\0') {
			fputs(": ", stderr);
			tbctl_print_safe(stderr, tbctl_sse_why(w->sse));
		}
		fputs("; resuming", stderr);
		if (tbctl_sse_last_id(w->sse) >= 0)
			fprintf(stderr, " after event %lld", tbctl_sse_last_id(w->sse));
		fprintf(stderr, " in %ld s\n", wait_s);
		for (long i = 0; i < wait_s * 10; i++) {
			mx_sleep_ms(100);
			if (w->tty && i % 10 == 9)
				draw(w, 0);
		}
		wait_s = wait_s * 2 > 10 ? 10 : wait_s * 2;
	}
	clear_bar(w);
	fflush(stdout);
	return rc;
}

struct mx_watch *mx_watch_new(const struct tbctl_ctx *ctx, long long id)
{
	struct mx_watch *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->ctx = ctx;
	w->id = id;
	w->tty = isatty(STDOUT_FILENO);
	w->quiet = (ctx->args->seen & TBCTL_OPT_QUIET) != 0;
	w->json = ctx->args->json;
	w->cur_seq = -1;
	w->bps[0] = w->bps[1] = -1;
	w->first_id = -1;
	snprintf(w->state, sizeof(w->state), "queued");
	return w;
}

void mx_watch_free(struct mx_watch *w)
{
	if (w == NULL)
		return;
	tbctl_sse_free(w->sse);
	free(w->runs);
	free(w);
}

/* Follow a matrix this tbctl just created: from its first event on. */
int mx_watch_follow_new(const struct tbctl_ctx *ctx, long long id)
{
	struct mx_watch *w = mx_watch_new(ctx, id);
	int rc;

	if (w == NULL)
		return mx_nomem();
	w->first_id = 0; /* the stream replays every event of the matrix */
	if ((rc = mx_watch_load(w, 1, 0, NULL)) == TBCTL_EXIT_OK)
		rc = mx_watch_follow(w);
	mx_watch_free(w);
	return rc;
}

int tbctl_cmd_matrix_watch(const struct tbctl_ctx *ctx)
{
	struct mx_watch *w;
	json_t *reply = NULL;
	long long id;
	int rc;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0)
		return TBCTL_EXIT_USAGE;
	if ((w = mx_watch_new(ctx, id)) == NULL)
		return mx_nomem();
	rc = mx_watch_load(w, 1, 1, &reply);
	if (rc == TBCTL_EXIT_OK && w->ended && w->json) {
		tbctl_print_json(reply); /* ended already: its JSON is the answer */
		w->quiet = 1;
	}
	json_decref(reply);
	if (rc == TBCTL_EXIT_OK)
		rc = mx_watch_follow(w);
	mx_watch_free(w);
	return rc;
}

int mx_watch_load_kept(struct mx_watch *w)
{
	int rc = mx_watch_load(w, 1, 1, NULL);

	w->ended = 0;
	return rc;
}
