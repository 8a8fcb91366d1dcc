/* results.c - matrices, runs and results tables for the API.  See results.h. */
#include "results.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "matrix.h"
#include "outbuf.h"
#include "run_load.h"
#include "stats.h"
#include "store.h"
#include "timeutil.h"

static json_t *str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *num_or_null(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

static json_t *ms_time(int64_t ms)
{
	char buf[TB_TIME_MAX];

	if (ms <= 0)
		return json_null();
	tb_time_format_ms(ms, buf);
	return json_string(buf);
}

/* ---- matrices ---- */

struct mctx {
	const struct tb_results_src *src;
	json_t *out; /* one matrix, or the list */
	int list;
};

static json_t *matrix_json(const struct tb_results_src *src, const struct tb_matrix_row *m)
{
	json_t *j = json_object(), *p = json_object();
	int done = m->nok + m->nfailed + m->ncanceled;
	int64_t now = tb_now(), end = m->finished_at ? m->finished_at : now;
	int running = strcmp(m->state, "running") == 0;
	double remaining = running || strcmp(m->state, "queued") == 0
				   ? (double)(m->pending_ms + (int64_t)m->pending_rounds * TB_MATRIX_RUN_OVERHEAD_MS) /
					     1000.0
				   : 0.0;

	if (j == NULL || p == NULL) {
		json_decref(j);
		json_decref(p);
		return NULL;
	}
	json_object_set_new(j, "id", json_integer(m->id));
	json_object_set_new(j, "name", json_string(m->name));
	json_object_set_new(j, "state", json_string(m->state));
	json_object_set_new(j, "actor", json_string(m->actor));
	json_object_set_new(j, "created_at", tb_time_json(m->created_at));
	json_object_set_new(j, "started_at", tb_time_json(m->started_at));
	json_object_set_new(j, "finished_at", tb_time_json(m->finished_at));
	json_object_set_new(j, "estimated_s", json_real((double)m->estimated_ms / 1000.0));
	json_object_set_new(j, "rerun_of", m->rerun_of ? json_integer(m->rerun_of) : json_null());
	json_object_set_new(j, "spec", json_loads(m->spec, 0, NULL));
	{
		/* as in the plan: the seed only where the order uses one */
		const char *order = json_string_value(json_object_get(json_object_get(j, "spec"), "order"));
		bool shuffled = order != NULL && strcmp(order, "shuffled") == 0;

		json_object_set_new(j, "seed", shuffled ? json_integer(m->seed) : json_null());
	}
	json_object_set_new(j, "error",
			    m->error_code != NULL ? json_pack("{s:s, s:s}", "code", m->error_code, "message",
							      m->error_message ? m->error_message : "")
						  : json_null());
	json_object_set_new(p, "total", json_integer(m->nruns));
	json_object_set_new(p, "done", json_integer(done));
	json_object_set_new(p, "ok", json_integer(m->nok));
	json_object_set_new(p, "failed", json_integer(m->nfailed));
	json_object_set_new(p, "canceled", json_integer(m->ncanceled));
	json_object_set_new(p, "interrupted", json_integer(m->ninterrupted));
	json_object_set_new(p, "pending", json_integer(m->npending));
	json_object_set_new(p, "running", json_integer(m->nrunning));
	{
		int seq = -1;

		for (int k = 0; k < src->nnow && k < TB_MX_NOW_MAX; k++)
			if (src->now[k].matrix == m->id)
				seq = src->now[k].seq;

		json_object_set_new(p, "current_seq", seq >= 0 ? json_integer(seq) : json_null());
	}
	json_object_set_new(p, "elapsed_s", json_integer(m->started_at ? end - m->started_at : 0));
	json_object_set_new(p, "remaining_s", json_real(remaining));
	json_object_set_new(j, "progress", p);
	return j;
}

static void on_matrix(void *cls, const struct tb_matrix_row *m)
{
	struct mctx *c = cls;
	json_t *j = matrix_json(c->src, m);

	if (c->list)
		json_array_append_new(c->out, j);
	else
		c->out = j;
}

static json_t *run_brief(const struct tb_run_row *r)
{
	json_t *j = json_object();

	if (j == NULL)
		return NULL;
	json_object_set_new(j, "id", json_integer(r->id));
	json_object_set_new(j, "matrix", json_integer(r->matrix_id));
	json_object_set_new(j, "seq", json_integer(r->seq));
	json_object_set_new(j, "cell", json_integer(r->cell));
	json_object_set_new(j, "repeat", json_integer(r->repeat));
	json_object_set_new(j, "round", json_integer(r->round));
	json_object_set_new(j, "combo", json_integer(r->combo));
	json_object_set_new(j, "want_client_os", r->want_client_os ? json_string(r->want_client_os) : json_null());
	json_object_set_new(j, "want_server_os", r->want_server_os ? json_string(r->want_server_os) : json_null());
	json_object_set_new(j, "client", json_string(r->client));
	json_object_set_new(j, "server", json_string(r->server));
	json_object_set_new(j, "link", json_string(r->link));
	json_object_set_new(j, "server_address", json_string(r->server_address));
	json_object_set_new(j, "protocol", json_string(r->protocol));
	json_object_set_new(j, "direction", json_string(r->direction));
	{
		json_t *pj = json_loads(r->params, 0, NULL);
		const char *tool = json_string_value(json_object_get(pj, "tool"));     /* absent: iperf3 */
		const char *family = json_string_value(json_object_get(pj, "family")); /* absent: ipv4 */

		json_object_set_new(j, "tool", json_string(tool != NULL ? tool : "iperf3"));
		json_object_set_new(j, "family", json_string(family != NULL ? family : "ipv4"));
		json_object_set_new(j, "params", pj);
	}
	json_object_set_new(j, "state", json_string(r->state));
	json_object_set_new(j, "error_class", str_or_null(r->error_class));
	json_object_set_new(j, "error_message", str_or_null(r->error_message));
	json_object_set_new(j, "client_os", str_or_null(r->client_os));
	json_object_set_new(j, "server_os", str_or_null(r->server_os));
	json_object_set_new(j, "sender_bps", num_or_null(r->sender_bps));
	json_object_set_new(j, "receiver_bps", num_or_null(r->receiver_bps));
	json_object_set_new(j, "retransmits", r->retransmits >= 0 ? json_integer(r->retransmits) : json_null());
	json_object_set_new(j, "lost_percent", num_or_null(r->lost_percent));
	json_object_set_new(j, "started_at", ms_time(r->started_ms));
	json_object_set_new(j, "finished_at", ms_time(r->finished_ms));
	json_object_set_new(j, "attempts", json_integer(r->attempts));
	return j;
}

static void on_run_brief(void *cls, const struct tb_run_row *r)
{
	json_array_append_new(cls, run_brief(r));
}

static void on_boot(void *cls, const struct tb_matrix_boot_row *b)
{
	json_array_append_new(cls,
			      json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "host", b->host, "from",
					b->from_os ? json_string(b->from_os) : json_null(), "to", b->to_os, "action",
					b->action_id > 0 ? json_integer(b->action_id) : json_null(), "started_at",
					ms_time(b->started_ms), "finished_at", ms_time(b->finished_ms), "state",
					b->state, "error", b->error ? json_string(b->error) : json_null(), "before_seq",
					b->before_seq >= 0 ? json_integer(b->before_seq) : json_null(), "path",
					b->path != NULL ? json_string(b->path) : json_null()));
}

int tb_results_matrix_json(const struct tb_results_src *src, int64_t id, unsigned int parts, json_t **out,
			   struct tb_error *err)
{
	struct mctx c = {src, NULL, 0};
	int rc;

	*out = NULL;
	if ((rc = tb_store_matrix_get(src->store, id, on_matrix, &c, err)) != 0)
		return rc;
	if (c.out == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (parts & TB_MX_JSON_RUNS) {
		json_t *runs = json_array();

		if ((rc = tb_store_run_each(src->store, id, NULL, on_run_brief, runs, err)) != 0) {
			json_decref(runs);
			json_decref(c.out);
			return rc;
		}
		json_object_set_new(c.out, "runs", runs);
	}
	if (parts & TB_MX_JSON_BOOTS) {
		json_t *boots = json_array();

		if (boots == NULL)
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		else
			rc = tb_store_matrix_boot_each(src->store, id, on_boot, boots, err);
		if (rc != 0) {
			json_decref(boots);
			json_decref(c.out);
			return rc;
		}
		json_object_set_new(c.out, "boots", boots);
	}
	*out = c.out;
	return 0;
}

int tb_results_matrix_find_json(const struct tb_results_src *src, const struct tb_matrix_filter *f, json_t **out,
				int *total, struct tb_error *err)
{
	struct mctx c = {src, json_array(), 1};
	int rc;

	*out = NULL;
	if (c.out == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_matrix_find(src->store, f, on_matrix, &c, total, err)) != 0) {
		json_decref(c.out);
		return rc;
	}
	*out = c.out;
	return 0;
}

/* ---- one run ---- */

struct run_full {
	json_t *j;
	int64_t started_ms;
};

static void on_run_full(void *cls, const struct tb_run_row *r)
{
	struct run_full *f = cls;
	json_t *j = run_brief(r);

	if (j == NULL)
		return;
	f->started_ms = r->started_ms;
	json_object_set_new(j, "client_command", str_or_null(r->client_command));
	json_object_set_new(j, "server_command", str_or_null(r->server_command));
	json_object_set_new(j, "client_version", str_or_null(r->client_version));
	json_object_set_new(j, "server_version", str_or_null(r->server_version));
	json_object_set_new(j, "port", r->port ? json_integer(r->port) : json_null());
	json_object_set_new(j, "client_pid", r->client_pid ? json_integer(r->client_pid) : json_null());
	json_object_set_new(j, "server_pid", r->server_pid ? json_integer(r->server_pid) : json_null());
	json_object_set_new(j, "cookie", str_or_null(r->cookie));
	json_object_set_new(j, "client_exit", r->client_exit >= 0 ? json_integer(r->client_exit) : json_null());
	json_object_set_new(j, "server_exit", r->server_exit >= 0 ? json_integer(r->server_exit) : json_null());
	json_object_set_new(j, "summary", r->summary != NULL ? json_loads(r->summary, 0, NULL) : json_null());
	f->j = j;
}

static void on_interval(void *cls, const struct tb_interval_row *iv)
{
	json_t *by_side = cls;
	json_t *a = json_object_get(by_side, iv->side);

	if (a != NULL)
		json_array_append_new(a, json_loads(iv->data, 0, NULL));
}

/* A run.interval event of a running run: its interval, appended to its side. */
static void on_interval_event(void *cls, const struct tb_event_row *ev)
{
	json_t *by_side = cls, *e = json_loads(ev->json, 0, NULL);
	json_t *d = json_object_get(e, "data");
	json_t *a = json_object_get(by_side, json_string_value(json_object_get(d, "side")));
	json_t *iv = json_object_get(d, "interval");

	if (a != NULL && iv != NULL)
		json_array_append(a, iv);
	json_decref(e);
}

/*
 * A running run's intervals are stored when it ends; until then they are
 * its run.interval events (of this attempt: published since it started),
 * so that a late viewer gets the history before the live tail.
 */
static int live_intervals(const struct tb_results_src *src, json_t *run, int64_t started_ms, json_t *by_side,
			  struct tb_error *err)
{
	const char *state = json_string_value(json_object_get(run, "state"));
	int64_t matrix = json_integer_value(json_object_get(run, "matrix"));
	int64_t id = json_integer_value(json_object_get(run, "id"));

	if (state == NULL || strcmp(state, "running") != 0 || started_ms <= 0)
		return 0;
	json_object_set_new(run, "intervals_live", json_true());
	return tb_store_run_interval_events(src->store, matrix, id, started_ms / 1000, on_interval_event, by_side, err);
}

int tb_results_run_json(const struct tb_results_src *src, int64_t run_id, json_t **out, struct tb_error *err)
{
	struct run_full f = {NULL, 0};
	json_t *j, *iv;
	int rc;

	*out = NULL;
	if ((rc = tb_store_run_get(src->store, run_id, on_run_full, &f, err)) != 0)
		return rc;
	j = f.j;
	if (j == NULL || (iv = json_pack("{s:[], s:[]}", "client", "server")) == NULL) {
		json_decref(j);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	if ((rc = tb_store_interval_each(src->store, run_id, on_interval, iv, err)) != 0 ||
	    (rc = live_intervals(src, j, f.started_ms, iv, err)) != 0) {
		json_decref(iv);
		json_decref(j);
		return rc;
	}
	json_object_set_new(j, "intervals", iv);
	*out = j;
	return 0;
}

struct raw {
	char *p;
	size_t len;
};

static void on_raw(void *cls, const struct tb_raw_row *r)
{
	struct raw *x = cls;

	if ((x->p = malloc(r->len + 1)) != NULL) {
		memcpy(x->p, r->data, r->len);
		x->p[r->len] = '\0';
		x->len = r->len;
	}
}

int tb_results_raw(const struct tb_results_src *src, int64_t run_id, const char *side, const char *stream, char **out,
		   size_t *len, struct tb_error *err)
{
	struct raw x = {0};
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = tb_store_raw_get(src->store, run_id, side, stream, on_raw, &x, err)) != 0)
		return rc;
	if (x.p == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	*out = x.p;
	*len = x.len;
	return 0;
}

/* ---- the results table ---- */

/* The receiver's UDP jitter from a stored summary (-1: none). */
static double jitter_of(const char *summary)
{
	json_t *s = summary != NULL ? json_loads(summary, 0, NULL) : NULL;
	json_t *v = json_object_get(json_object_get(json_object_get(s, "client"), "receiver"), "jitter_ms");
	double j = json_is_number(v) ? json_number_value(v) : -1;

	json_decref(s);
	return j;
}

struct table {
	json_t *runs;  /* NULL: the cells only */
	json_t *cells; /* array indexed by cell */
};

static void add_cell_value(json_t *cell, const char *key, double v)
{
	if (v >= 0)
		json_array_append_new(json_object_get(cell, key), json_real(v));
}

static void on_row(void *cls, const struct tb_run_row *r)
{
	struct table *t = cls;
	json_t *row, *cell;
	double jit = jitter_of(r->summary);

	if (t->runs != NULL) {
		if ((row = run_brief(r)) == NULL)
			return;
		json_object_del(row, "error_message");
		json_object_set_new(row, "error_message", str_or_null(r->error_message));
		json_object_set_new(row, "jitter_ms", num_or_null(jit));
		json_object_set_new(row, "cookie", str_or_null(r->cookie));
		json_array_append_new(t->runs, row);
	}
	while ((int)json_array_size(t->cells) <= r->cell)
		json_array_append_new(t->cells, json_null());
	cell = json_array_get(t->cells, (size_t)r->cell);
	if (json_is_null(cell)) {
		cell = json_pack(
			"{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:i, "
			"s:i, s:i}",
			"cell", r->cell, "client", r->client, "server", r->server, "link", r->link, "server_address",
			r->server_address, "protocol", r->protocol, "direction", r->direction, "params",
			json_loads(r->params, 0, NULL), "client_os", "server_os", "sender_bps", "receiver_bps",
			"retransmits", "lost_percent", "jitter_ms", "runs", 0, "failed", 0, "stopped", 0);
		if (cell == NULL)
			return;
		json_array_set_new(t->cells, (size_t)r->cell, cell);
		{ /* the address family as its own column, like protocol (params has it only when ipv6) */
			const char *fam = json_string_value(json_object_get(json_object_get(cell, "params"), "family"));

			json_object_set_new(cell, "family", json_string(fam != NULL ? fam : "ipv4"));
		}
	}
	json_object_set_new(cell, "runs", json_integer(json_integer_value(json_object_get(cell, "runs")) + 1));
	if (strcmp(r->state, "failed") == 0)
		json_object_set_new(cell, "failed",
				    json_integer(json_integer_value(json_object_get(cell, "failed")) + 1));
	if (strcmp(r->state, "canceled") == 0 || strcmp(r->state, "interrupted") == 0)
		json_object_set_new(cell, "stopped",
				    json_integer(json_integer_value(json_object_get(cell, "stopped")) + 1));
	if (r->client_os != NULL)
		json_array_append_new(json_object_get(cell, "client_os"), json_string(r->client_os));
	if (r->server_os != NULL)
		json_array_append_new(json_object_get(cell, "server_os"), json_string(r->server_os));
	if (strcmp(r->state, "ok") != 0)
		return;
	add_cell_value(cell, "sender_bps", r->sender_bps);
	add_cell_value(cell, "receiver_bps", r->receiver_bps);
	add_cell_value(cell, "retransmits", r->retransmits >= 0 ? (double)r->retransmits : -1);
	add_cell_value(cell, "lost_percent", r->lost_percent);
	add_cell_value(cell, "jitter_ms", jit);
}

/* Replace a list of values by its statistics and their spread (noisy by
 * noisy_cv). */
static void summarise(json_t *cell, const char *key, double noisy_cv)
{
	json_t *a = json_object_get(cell, key);
	size_t n = json_array_size(a), i;
	double *v = malloc((n + 1) * sizeof(*v));
	struct tb_stats s;
	json_t *x, *o;

	if (v == NULL)
		return;
	json_array_foreach(a, i, x) v[i] = json_number_value(x);
	tb_stats_compute(v, (int)n, &s);
	o = tb_stats_json(&s);
	if (n > 0)
		tb_stats_json_spread(o, &s, v, (int)n, noisy_cv);
	json_object_set_new(cell, key, o);
	free(v);
}

/* The OS a cell ran in: the one value seen, "a+b" when runs differed, null when none ran. */
static void os_of(json_t *cell, const char *key)
{
	json_t *a = json_object_get(cell, key), *x;
	char buf[128] = "";
	size_t i;

	json_array_foreach(a, i, x)
	{
		const char *s = json_string_value(x);

		if (strstr(buf, s) == NULL)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", buf[0] ? "+" : "", s);
	}
	json_object_set_new(cell, key, buf[0] ? json_string(buf) : json_null());
}

/* Each cell's lists of values replaced by their statistics (noisy by
 * noisy_cv), its OS lists by the OS it ran in. */
static void summarise_cells(json_t *cells, double noisy_cv)
{
	size_t i;
	json_t *cell;

	json_array_foreach(cells, i, cell)
	{
		if (json_is_null(cell))
			continue;
		json_object_set_new(cell, "n",
				    json_integer((json_int_t)json_array_size(json_object_get(cell, "sender_bps"))));
		summarise(cell, "sender_bps", noisy_cv);
		summarise(cell, "receiver_bps", noisy_cv);
		summarise(cell, "retransmits", noisy_cv);
		summarise(cell, "lost_percent", noisy_cv);
		summarise(cell, "jitter_ms", noisy_cv);
		os_of(cell, "client_os");
		os_of(cell, "server_os");
	}
}

/* Each run's load (run_load.h: CPU of its ends and routers, latency idle
 * and loaded) as its "load" (null: none measured), each cell's as the
 * median over its ok runs ("load", null: none). */
static int add_loads(const struct tb_results_src *src, int64_t id, struct table *t, struct tb_error *err)
{
	json_t *loads, *per_cell = json_array(), *row, *cell;
	size_t i;
	int rc;

	if (per_cell == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_run_load_of_matrix(src->store, id, &loads, err)) != 0) {
		json_decref(per_cell);
		return rc;
	}
	json_array_foreach(t->runs, i, row)
	{
		char key[24];
		json_t *l;
		size_t c = (size_t)json_integer_value(json_object_get(row, "cell"));

		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(row, "id")));
		l = json_object_get(loads, key);
		json_object_set_new(row, "load", l != NULL ? json_incref(l) : json_null());
		if (l == NULL || strcmp(json_string_value(json_object_get(row, "state")), "ok") != 0)
			continue;
		while (json_array_size(per_cell) <= c)
			json_array_append_new(per_cell, json_array());
		json_array_append(json_array_get(per_cell, c), l);
	}
	json_array_foreach(t->cells, i, cell)
	{
		json_t *l = i < json_array_size(per_cell) ? tb_run_load_cell(json_array_get(per_cell, i)) : NULL;

		if (json_is_object(cell))
			json_object_set_new(cell, "load", l != NULL ? l : json_null());
	}
	json_decref(per_cell);
	json_decref(loads);
	return 0;
}

static int build_table(const struct tb_results_src *src, int64_t id, double noisy_cv, struct table *t,
		       struct tb_error *err)
{
	int rc;

	t->runs = json_array();
	t->cells = json_array();
	if (t->runs == NULL || t->cells == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_run_each(src->store, id, NULL, on_row, t, err)) != 0 ||
	    (rc = add_loads(src, id, t, err)) != 0)
		return rc;
	summarise_cells(t->cells, noisy_cv);
	return 0;
}

/* The cells of one pair's runs, matrix by matrix (rows come by matrix). */
struct pair_cells {
	json_t *by_id; /* "ID" -> cells */
	int64_t id;    /* the matrix whose rows come now, 0: none yet */
	struct table t;
	int nomem;
};

/* The cells of the matrix whose rows came, summarised, into by_id. */
static void pair_flush(struct pair_cells *x)
{
	char key[24];

	if (x->t.cells == NULL)
		return;
	summarise_cells(x->t.cells, TB_STATS_NOISY_CV);
	snprintf(key, sizeof(key), "%lld", (long long)x->id);
	x->nomem |= json_object_set_new(x->by_id, key, x->t.cells) != 0;
	x->t.cells = NULL;
}

static void on_pair_row(void *cls, const struct tb_run_row *r)
{
	struct pair_cells *x = cls;

	if (r->matrix_id != x->id) {
		pair_flush(x);
		x->id = r->matrix_id;
		x->nomem |= (x->t.cells = json_array()) == NULL;
	}
	if (x->t.cells != NULL)
		on_row(&x->t, r);
}

int tb_results_pair_cells(const struct tb_results_src *src, const struct tb_matrix_filter *f, const char *client,
			  const char *server, const char *protocol, const char *direction, int64_t lo, int64_t hi,
			  json_t **out, struct tb_error *err)
{
	struct pair_cells x = {json_object(), 0, {NULL, NULL}, 0};
	int rc;

	*out = NULL;
	if (x.by_id == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	rc = tb_store_run_each_pair(src->store, f, client, server, protocol, direction, lo, hi, on_pair_row, &x, err);
	pair_flush(&x);
	if (rc == 0 && x.nomem)
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (rc != 0) {
		json_decref(x.by_id);
		return rc;
	}
	*out = x.by_id;
	return 0;
}

int tb_results_table_json(const struct tb_results_src *src, int64_t id, json_t **out, struct tb_error *err)
{
	return tb_results_table_json_cv(src, id, TB_STATS_NOISY_CV, out, err);
}

/* A matrix's brief as {"name","state"}. */
static void on_brief(void *cls, const struct tb_matrix_brief *b)
{
	*(json_t **)cls = json_pack("{s:s, s:s}", "name", b->name, "state", b->state);
}

int tb_results_table_json_cv(const struct tb_results_src *src, int64_t id, double noisy_cv, json_t **out,
			     struct tb_error *err)
{
	struct table t = {0};
	json_t *m = NULL;
	int rc;

	*out = NULL;
	if ((rc = tb_store_matrix_brief_get(src->store, id, on_brief, &m, err)) != 0)
		return rc;
	if (m == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = build_table(src, id, noisy_cv, &t, err)) != 0) {
		json_decref(t.runs);
		json_decref(t.cells);
		json_decref(m);
		return rc;
	}
	*out = json_pack("{s:I, s:O, s:O, s:o, s:o}", "matrix", (json_int_t)id, "name", json_object_get(m, "name"),
			 "state", json_object_get(m, "state"), "runs", t.runs, "cells", t.cells);
	json_decref(m);
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

/* ---- CSV ---- */

static const json_t *path_get(const json_t *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	return json_object_get(o, path);
}

/* The rows under cols; the load.* columns only when a row has a load (a
 * matrix that sampled and measured nothing keeps the columns it had). */
static void csv_rows(struct tb_outbuf *c, const json_t *rows, const char *const cols[])
{
	const char *use[160];
	size_t i, n = 0;
	json_t *row;
	int load = 0;

	json_array_foreach(rows, i, row) load |= json_is_object(json_object_get(row, "load"));
	for (int k = 0; cols[k] != NULL && n + 1 < sizeof(use) / sizeof(use[0]); k++)
		if (load || strncmp(cols[k], "load.", 5) != 0)
			use[n++] = cols[k];
	use[n] = NULL;
	tb_csv_header(c, use);
	json_array_foreach(rows, i, row)
	{
		if (json_is_null(row))
			continue;
		for (size_t k = 0; use[k] != NULL; k++)
			tb_csv_field(c, path_get(row, use[k]), use[k + 1] == NULL);
	}
}

int tb_results_table_csv(const struct tb_results_src *src, int64_t id, int cells, char **out, size_t *len,
			 struct tb_error *err)
{
	return tb_results_table_csv_cv(src, id, cells, TB_STATS_NOISY_CV, out, len, err);
}

/* The columns of the runs' and the cells' CSV (dotted: a member's member). */
static const char *const run_cols[] = {"id",
				       "seq",
				       "cell",
				       "repeat",
				       "client",
				       "client_os",
				       "server",
				       "server_os",
				       "link",
				       "protocol",
				       "direction",
				       "family",
				       "params.duration_s",
				       "params.omit_s",
				       "params.parallel",
				       "params.bitrate",
				       "params.length",
				       "params.window",
				       "params.congestion",
				       "params.tos",
				       "state",
				       "error_class",
				       "sender_bps",
				       "receiver_bps",
				       "retransmits",
				       "lost_percent",
				       "jitter_ms",
				       "started_at",
				       "finished_at",
				       "cookie",
				       "load.client_busiest",
				       "load.client_busiest_mean",
				       "load.client_busiest_max",
				       "load.client_busy_mean",
				       "load.client_interrupt_share",
				       "load.client_mem_used_max_pct",
				       "load.server_busiest",
				       "load.server_busiest_mean",
				       "load.server_busiest_max",
				       "load.server_busy_mean",
				       "load.server_interrupt_share",
				       "load.server_mem_used_max_pct",
				       "load.router",
				       "load.router_busiest",
				       "load.router_busiest_mean",
				       "load.router_busiest_max",
				       "load.router_busy_mean",
				       "load.router_interrupt_share",
				       "load.router_mem_used_max_pct",
				       "load.latency_idle_median_ms",
				       "load.latency_idle_p95_ms",
				       "load.latency_load_median_ms",
				       "load.latency_load_p95_ms",
				       NULL};
static const char *const cell_cols[] = {"cell",
					"client",
					"client_os",
					"server",
					"server_os",
					"link",
					"protocol",
					"direction",
					"family",
					"params.duration_s",
					"params.parallel",
					"params.bitrate",
					"runs",
					"failed",
					"stopped",
					"n",
					"sender_bps.mean",
					"sender_bps.median",
					"sender_bps.stdev",
					"sender_bps.min",
					"sender_bps.max",
					"receiver_bps.mean",
					"receiver_bps.median",
					"receiver_bps.stdev",
					"receiver_bps.min",
					"receiver_bps.max",
					"retransmits.median",
					"lost_percent.median",
					"jitter_ms.median",
					"sender_bps.q1",
					"sender_bps.q3",
					"sender_bps.cv",
					"sender_bps.noisy",
					"sender_bps.values",
					"receiver_bps.q1",
					"receiver_bps.q3",
					"receiver_bps.cv",
					"receiver_bps.noisy",
					"receiver_bps.values",
					"load.client_busiest_mean",
					"load.client_busiest_max",
					"load.client_busy_mean",
					"load.client_interrupt_share",
					"load.client_mem_used_max_pct",
					"load.server_busiest_mean",
					"load.server_busiest_max",
					"load.server_busy_mean",
					"load.server_interrupt_share",
					"load.server_mem_used_max_pct",
					"load.router_busiest_mean",
					"load.router_busiest_max",
					"load.router_busy_mean",
					"load.router_interrupt_share",
					"load.router_mem_used_max_pct",
					"load.latency_idle_median_ms",
					"load.latency_idle_p95_ms",
					"load.latency_load_median_ms",
					"load.latency_load_p95_ms",
					NULL};

int tb_results_table_csv_cv(const struct tb_results_src *src, int64_t id, int cells, double noisy_cv, char **out,
			    size_t *len, struct tb_error *err)
{
	struct table t = {0};
	struct tb_outbuf c = {0};
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = tb_store_matrix_exists(src->store, id, err)) != 0)
		return rc;
	if ((rc = build_table(src, id, noisy_cv, &t, err)) == 0) {
		csv_rows(&c, cells ? t.cells : t.runs, cells ? cell_cols : run_cols);
		if (tb_csv_take(&c, out, len) != 0)
			rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	json_decref(t.runs);
	json_decref(t.cells);
	tb_outbuf_free(&c);
	if (rc != 0)
		*len = 0;
	return rc;
}
