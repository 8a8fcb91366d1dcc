/* run_profile.c - a profiler beside a run, its stacks folded and kept.
 * See run_profile.h. */
#include "run_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flame.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "matrix_profile.h"
#include "services.h"
#include "shquote.h"
#include "store.h"

#define OUT_MAX 4096
#define ERR_MAX 4096
#define SCRIPT_TIMEOUT_MS 120000L /* perf script over a run's samples: seconds here */

/* The spec's "profile" (side, frequency) into cls. */
struct want {
	bool on;
	const char *side;
	long freq;
};

static void read_opt(void *cls, const struct tb_matrix_row *m)
{
	struct want *w = cls;
	json_t *spec = json_loads(m->spec, 0, NULL);

	w->on = tb_mx_profile_of(spec, &w->side, &w->freq);
	json_decref(spec);
}

static int on_pid(void *cls, long pid)
{
	struct run_profile_end *e = cls;

	pthread_mutex_lock(&e->lock);
	e->pid = pid;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

/* The profiler's output: stdout kept (its TBPROF lines) and, for dtrace,
 * folded as it comes; stderr kept for a reason. */
static int on_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_profile_end *e = cls;

	if (stream == TB_SSH_STDOUT) {
		tb_outbuf_add(&e->out, data, len);
		if (e->bsd)
			tb_flame_feed(e->folder, data, len);
	} else {
		tb_outbuf_add(&e->errb, data, len);
	}
	return 0;
}

/* The profiler on the end until it is stopped by pid (or its own end: the
 * run's length, then the watchdog a minute later). */
static void *profile_thread(void *arg)
{
	struct run_profile_end *e = arg;
	struct run_profile *p = e->p;
	char *script = tb_mx_profile_script(e->bsd, p->frequency, p->wall_s);
	const char *argv[] = {"sh", "-c", script, NULL};
	struct tb_ssh_result res = {0};
	struct tb_error err = {0};
	int rc;

	if (script == NULL) {
		e->exit_status = -1;
		snprintf(e->reason, sizeof(e->reason), "out of memory");
		return NULL;
	}
	rc = tb_ssh_spawn(tb_hosts_pool(p->sv->hosts), &e->t, argv, (p->wall_s + 60) * 1000, on_pid, on_output, e, &res,
			  &err);
	e->exit_status = res.exit_status;
	if (rc != 0 && rc != TB_ERR_TIMEOUT && rc != TB_ERR_CANCELED)
		snprintf(e->reason, sizeof(e->reason), "ssh: %s", err.message);
	free(script);
	return NULL;
}

/* The value after "TBPROF KEY " in the profiler's stdout, into buf ("" when
 * absent). */
static void tbprof(const struct run_profile_end *e, const char *key, char *buf, size_t len)
{
	char pat[32];
	const char *s = tb_outbuf_str(&e->out), *at;

	snprintf(pat, sizeof(pat), "TBPROF %s ", key);
	buf[0] = '\0';
	if ((at = strstr(s, pat)) != NULL)
		snprintf(buf, len, "%.*s", (int)strcspn(at + strlen(pat), "\r\n"), at + strlen(pat));
}

static void end_start(struct run_profile *p, struct run_profile_end *e, const struct tb_run_host *h, const char *side,
		      const char *role)
{
	char *cmd;

	e->p = p;
	e->host = h->m->name;
	e->side = side;
	e->role = role;
	e->bsd = h->bsd;
	e->state = "failed";
	e->out.max = OUT_MAX;
	e->errb.max = ERR_MAX;
	pthread_mutex_init(&e->lock, NULL);
	if ((cmd = tb_mx_profile_command(e->bsd, p->frequency, p->wall_s)) != NULL)
		snprintf(e->command, sizeof(e->command), "%s", cmd);
	free(cmd);
	tb_hosts_target(p->sv->hosts, h->m, h->p, &e->t, e->pin, sizeof(e->pin));
	e->folder = tb_flame_folder_new(e->bsd ? TB_FLAME_DTRACE : TB_FLAME_PERF);
	if (e->folder != NULL && pthread_create(&e->th, NULL, profile_thread, e) == 0)
		e->started = true;
	else
		snprintf(e->reason, sizeof(e->reason), "out of memory or threads");
}

void run_profile_start(struct run_profile *p, struct tb_services *sv, const struct tb_run_host *ch,
		       const struct tb_run_host *sh, const struct tb_run_row *r, long wall_s)
{
	struct want w = {0};
	bool reverse;

	memset(p, 0, sizeof(*p));
	tb_store_matrix_get(sv->store, r->matrix_id, read_opt, &w, NULL);
	if (!w.on)
		return;
	p->sv = sv;
	p->r = r;
	p->frequency = w.freq;
	p->wall_s = wall_s;
	reverse = r->direction != NULL && strcmp(r->direction, "reverse") == 0;
	if (strcmp(w.side, "receiver") != 0) /* sender or both */
		end_start(p, &p->e[p->n++], reverse ? sh : ch, "sender", reverse ? "server" : "client");
	if (strcmp(w.side, "sender") != 0) /* receiver or both */
		end_start(p, &p->e[p->n++], reverse ? ch : sh, "receiver", reverse ? "client" : "server");
}

static int script_output(void *cls, enum tb_ssh_stream stream, const char *data, size_t len)
{
	struct run_profile_end *e = cls;

	if (stream == TB_SSH_STDOUT)
		tb_flame_feed(e->folder, data, len);
	else
		tb_outbuf_add(&e->errb, data, len);
	return 0;
}

/* perf script over the end's recording (read false: not read), then its
 * directory removed.  The directory came from the host: only mktemp's shape
 * is used, quoted. */
static void perf_script(struct run_profile_end *e, bool read)
{
	char dir[64], *q = NULL, *script = NULL;
	const char *qa[] = {dir, NULL};
	struct tb_error err = {0};
	struct tb_ssh_result res = {0};
	size_t n;
	int rc;

	tbprof(e, "dir", dir, sizeof(dir));
	if (strncmp(dir, "/tmp/testbedd-perf.", 19) != 0 || dir[19] == '\0' ||
	    strspn(dir + 19, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != strlen(dir + 19))
		return; /* perf never started */
	if ((q = tb_sh_quote_argv(qa, &err)) == NULL)
		return;
	n = strlen(q) * 2 + 200;
	if ((script = malloc(n)) != NULL) {
		const char *argv[] = {"sh", "-c", script, NULL};

		if (read)
			snprintf(script, n, "d=%s; perf script -i \"$d/perf.data\"; rc=$?; rm -rf \"$d\"; exit $rc", q);
		else
			snprintf(script, n, "rm -rf %s", q);
		rc = tb_ssh_exec(tb_hosts_pool(e->p->sv->hosts), &e->t, argv, SCRIPT_TIMEOUT_MS, script_output, e, &res,
				 &err);
		if (!read)
			snprintf(e->reason, sizeof(e->reason),
				 "%s: the run was stopped: its recording was removed unread", e->host);
		else if (rc != 0)
			snprintf(e->reason, sizeof(e->reason), "perf script: %s", err.message);
	}
	free(script);
	free(q);
}

/* The last non-empty line of text (a profiler's complaint), into buf. */
static void last_line(const char *text, char *buf, size_t len)
{
	size_t n = strlen(text), end;

	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	end = n;
	while (n > 0 && text[n - 1] != '\n')
		n--;
	snprintf(buf, len, "%.*s", (int)(end - n), text + n);
}

/* The end's record for the file (folded stolen into it). */
static json_t *end_json(struct run_profile_end *e, const char *folded, long samples)
{
	size_t stacks = 0;

	for (const char *s = folded; s != NULL && *s != '\0'; s++)
		stacks += *s == '\n';
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s?, s:I, s:I, s:s}", "host", e->host, "side",
			 e->side, "role", e->role, "os", e->bsd ? "freebsd" : "linux", "tool",
			 e->bsd ? "dtrace" : "perf", "frequency", (json_int_t)e->p->frequency, "command", e->command,
			 "state", e->state, "reason", e->reason[0] != '\0' ? e->reason : NULL, "samples",
			 (json_int_t)samples, "stacks", (json_int_t)stacks, "folded", folded != NULL ? folded : "");
}

/* Stop end e, read its stacks (read false: not), decide its state and
 * reason. */
static json_t *end_stop(struct run_profile_end *e, bool read)
{
	char un[sizeof(e->reason)], *folded = NULL;
	long pid, samples = 0;
	json_t *j;

	if (e->started) {
		pthread_mutex_lock(&e->lock);
		pid = e->pid;
		pthread_mutex_unlock(&e->lock);
		if (pid > 1) {
			struct tb_error err = {0};

			/* SIGINT: perf writes its file, dtrace prints its aggregation */
			tb_ssh_kill(tb_hosts_pool(e->p->sv->hosts), &e->t, pid, "INT", &err);
		}
		pthread_join(e->th, NULL);
		e->started = false;
		if (!e->bsd)
			perf_script(e, read);
	}
	tbprof(e, "unavailable", un, sizeof(un));
	if (e->folder != NULL)
		folded = tb_flame_finish(e->folder, &samples);
	if (un[0] != '\0') {
		e->state = "unavailable";
		snprintf(e->reason, sizeof(e->reason), "%s: %s", e->host, un);
	} else if (samples > 0) {
		e->state = "ok";
	} else if (e->reason[0] == '\0') {
		char last[300];

		last_line(tb_outbuf_str(&e->errb), last, sizeof(last));
		snprintf(e->reason, sizeof(e->reason), "%s: %s recorded no stacks%s%s", e->host,
			 e->bsd ? "dtrace" : "perf", last[0] != '\0' ? ": " : "", last);
	}
	j = end_json(e, folded, samples);
	free(folded);
	tb_flame_folder_free(e->folder);
	e->folder = NULL;
	tb_outbuf_free(&e->out);
	tb_outbuf_free(&e->errb);
	pthread_mutex_destroy(&e->lock);
	return j;
}

/* STATE/profiles/run-ID.json (and its directory), written whole. */
static void save(struct run_profile *p, json_t *doc)
{
	char dir[1024], path[1100], tmp[1110];

	snprintf(dir, sizeof(dir), "%s/profiles", p->sv->cfg->state_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		tb_warn("runner", "run %lld: profiles: cannot make %s: %s", (long long)p->r->id, dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/run-%lld.json", dir, (long long)p->r->id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_dump_file(doc, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0) {
		tb_warn("runner", "run %lld: profiles: cannot write %s", (long long)p->r->id, path);
		remove(tmp);
	}
}

void run_profile_stop(struct run_profile *p, bool read)
{
	json_t *doc, *arr;

	if (p->sv == NULL)
		return; /* the spec asked for none */
	arr = json_array();
	for (int i = 0; i < p->n; i++) {
		json_t *j = end_stop(&p->e[i], read);

		if (j != NULL && arr != NULL)
			json_array_append_new(arr, j);
		else
			json_decref(j);
		if (strcmp(p->e[i].state, "ok") != 0)
			tb_info("runner", "run %lld: no flame graph of %s: %s", (long long)p->r->id, p->e[i].host,
				p->e[i].reason);
	}
	doc = json_pack("{s:I, s:o*}", "run", (json_int_t)p->r->id, "profiles", arr);
	if (doc != NULL)
		save(p, doc);
	json_decref(doc);
	p->sv = NULL;
}

json_t *run_profile_load(const char *state_dir, int64_t id, struct tb_error *err)
{
	char path[1100];
	json_error_t je;
	json_t *doc;

	snprintf(path, sizeof(path), "%s/profiles/run-%lld.json", state_dir, (long long)id);
	if ((doc = json_load_file(path, 0, &je)) != NULL)
		return doc;
	if (errno == ENOENT || strstr(je.text, "unable to open") != NULL)
		tb_fail(err, TB_ERR_NOT_FOUND, "id",
			"run %lld has no profile (its matrix did not ask for one, or the run has not ended)",
			(long long)id);
	else
		tb_fail(err, TB_ERR_INTERNAL, "", "run %lld: its profile file cannot be read: %s", (long long)id,
			je.text);
	return NULL;
}
