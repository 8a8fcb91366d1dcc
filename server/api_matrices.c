/* api_matrices.c - matrices: plan, start, list, get, cancel, resume, rerun,
 * results; runs and their raw output. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "services.h"
#include "inventory.h"
#include "log.h"
#include "compare.h"
#include "history.h"
#include "hostsnap.h"
#include "matrix_boot.h"
#include "matrix.h"
#include "results.h"
#include "runner.h"
#include "schedule.h"
#include "store.h"
#include "timeutil.h"
#include "validate.h"

static uint64_t fresh_seed(void)
{
	uint64_t s = (uint64_t)tb_now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)rand();

	return s & ((1ULL << 53) - 1); /* exact in JSON numbers */
}

/* The plan of spec knowing the hosts now; lean: without the runs array
 * (a reply shows a page of them). */
static int plan_of(struct tb_request *rq, const json_t *spec, int lean, struct tb_matrix_plan **plan,
		   struct tb_error *err)
{
	struct tb_matrix_host_now *hosts = NULL;
	struct tb_matrix_now now;
	struct tb_inventory *inv;
	int rc;

	if ((rc = tb_matrix_now_collect(rq->sv, &hosts, &now, err)) != 0)
		return rc;
	inv = tb_inv_current_get(rq->sv->invs);
	rc = (lean ? tb_matrix_plan_make_lean : tb_matrix_plan_make_now)(spec, inv, fresh_seed(), &now, plan, err);
	if (rc == 0)
		tb_matrix_plan_paths(rq->sv, inv, *plan); /* how each boot will switch its host */
	tb_inv_current_put(rq->sv->invs, inv);
	free(hosts);
	return rc;
}

/* Where results come from: the store, and what the runner says runs now
 * (results never ask the runner themselves). */
static struct tb_results_src results_src(struct tb_request *rq)
{
	return tb_runner_results_src(rq->sv->runner, rq->sv->store);
}

int api_matrix_id(struct tb_request *rq, struct tb_reply *rp, int64_t *id)
{
	snprintf(rp->audit_target, sizeof(rp->audit_target), "matrix %.40s", rq->args[0]);
	if (tb_parse_id(rq->args[0], 1, id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a matrix id is a positive whole number");
	return 0;
}

static int reply_matrix(struct tb_request *rq, struct tb_reply *rp, unsigned int status, int64_t id, int with_runs)
{
	struct tb_results_src src = results_src(rq);
	unsigned int parts = (with_runs ? TB_MX_JSON_RUNS : 0u) | TB_MX_JSON_BOOTS;
	json_t *j;
	int rc;

	struct tb_error e = {0};
	json_t *gate = NULL;

	if ((rc = tb_results_matrix_json(&src, id, parts, &j, &rp->err)) != 0)
		return rc;
	tb_runner_annotate(rq->sv->runner, j); /* a queued matrix's position and reason */
	/* a scheduled matrix's gate (schedule.h); null for the others, or when it cannot be read */
	if (tb_schedule_gate_json(rq->sv->store, id, &gate, &e) != 0 && e.code != TB_ERR_NOT_FOUND)
		tb_warn("api", "matrix %lld: its gate: %s", (long long)id, e.message);
	json_object_set_new(j, "gate", gate != NULL ? gate : json_null());
	return tb_reply_json(rp, status, json_pack("{s:o}", "matrix", j));
}

/* ?name=N, a whole number lo..hi, else dflt. */
static int query_int(struct tb_request *rq, const char *name, int64_t lo, int64_t hi, int64_t dflt, int64_t *out,
		     struct tb_error *err)
{
	const char *v = tb_req_query(rq, name);

	*out = dflt;
	if (v != NULL && (tb_parse_id(v, 0, out) != 0 || *out < lo || *out > hi))
		return tb_fail(err, TB_ERR_INVALID, name, "%s must be a whole number %lld..%lld", name, (long long)lo,
			       (long long)hi);
	return 0;
}

/* The plan's summary, boots and runs offset..offset+limit-1 (default the
 * first TB_MATRIX_PAGE_DEFAULT, at most TB_MATRIX_PAGE_MAX): the reply and
 * the planner's memory stay bounded whatever the spec (a few MB for
 * TB_MATRIX_MAX_RUNS runs). */
int api_matrix_plan(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_matrix_plan *plan;
	int64_t offset, limit;
	json_t *j;
	int rc;

	if ((rc = query_int(rq, "offset", 0, TB_MATRIX_MAX_RUNS, 0, &offset, &rp->err)) != 0 ||
	    (rc = query_int(rq, "limit", 0, TB_MATRIX_PAGE_MAX, TB_MATRIX_PAGE_DEFAULT, &limit, &rp->err)) != 0)
		return rc;
	if ((rc = plan_of(rq, rq->body, 1, &plan, &rp->err)) != 0)
		return rc;
	j = tb_matrix_plan_page_json(plan, (int)offset, (int)limit);
	tb_matrix_plan_free(plan);
	if (j == NULL)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	return tb_reply_json(rp, 200, json_pack("{s:o}", "plan", j));
}

static int submit(struct tb_request *rq, struct tb_reply *rp, const json_t *spec, int64_t rerun_of)
{
	struct tb_matrix_plan *plan;
	int64_t id;
	int rc;

	if ((rc = plan_of(rq, spec, 0, &plan, &rp->err)) != 0)
		return rc;
	rc = tb_runner_submit(rq->sv->runner, plan, rq->who->name, rerun_of, &id, &rp->err);
	tb_matrix_plan_free(plan);
	if (rc != 0)
		return rc;
	snprintf(rp->audit_target, sizeof(rp->audit_target), "matrix %lld", (long long)id);
	return reply_matrix(rq, rp, 201, id, 0);
}

int api_matrix_create(struct tb_request *rq, struct tb_reply *rp)
{
	return submit(rq, rp, rq->body, 0);
}

/* GET /api/v1/matrices?name=&state=&since=&offset=&limit= (history.h) */
int api_matrices_list(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	struct tb_matrix_filter f = {0};
	int64_t offset, limit;
	json_t *list;
	int total = 0, rc;

	if ((rc = query_int(rq, "offset", 0, 1000000000, 0, &offset, &rp->err)) != 0 ||
	    (rc = query_int(rq, "limit", 1, 1000, 50, &limit, &rp->err)) != 0 ||
	    (rc = tb_history_filter_parse(tb_req_query(rq, "name"), tb_req_query(rq, "state"),
					  tb_req_query(rq, "since"), &f, &rp->err)) != 0)
		return rc;
	f.offset = (int)offset;
	f.limit = (int)limit;
	if ((rc = tb_history_matrices_json(&src, &f, &list, &total, &rp->err)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(list); i++)
		tb_runner_annotate(rq->sv->runner, json_array_get(list, i)); /* ?state=queued: the queue */
	return tb_reply_json(rp, 200,
			     json_pack("{s:o, s:i, s:I, s:I}", "matrices", list, "total", total, "offset",
				       (json_int_t)offset, "limit", (json_int_t)limit));
}

int api_matrix_get(struct tb_request *rq, struct tb_reply *rp)
{
	const char *runs = tb_req_query(rq, "runs");
	int64_t id;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0)
		return rc;
	if (runs != NULL && strcmp(runs, "0") != 0 && strcmp(runs, "1") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "runs", "runs must be 0 or 1");
	return reply_matrix(rq, rp, 200, id, runs == NULL || strcmp(runs, "1") == 0);
}

int api_matrix_cancel(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = tb_runner_cancel(rq->sv->runner, id, &rp->err)) != 0)
		return rc;
	return reply_matrix(rq, rp, 200, id, 0);
}

int api_matrix_resume(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = tb_runner_resume(rq->sv->runner, id, &rp->err)) != 0)
		return rc;
	return reply_matrix(rq, rp, 200, id, 0);
}

int api_matrix_rerun(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	json_t *m;
	int64_t id;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = tb_results_matrix_json(&src, id, 0, &m, &rp->err)) != 0)
		return rc;
	rc = submit(rq, rp, json_object_get(m, "spec"), id);
	json_decref(m);
	return rc;
}

/* ?format= json (the default) or csv: 1 for csv, 0 for json, or an error. */
static int csv_format(struct tb_request *rq, struct tb_reply *rp, int *csv)
{
	const char *format = tb_req_query(rq, "format");

	*csv = format != NULL && strcmp(format, "csv") == 0;
	if (format != NULL && !*csv && strcmp(format, "json") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "format", "format must be json or csv, got \"%.16s\"", format);
	return 0;
}

int api_matrix_results(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	const char *view = tb_req_query(rq, "view");
	double cv;
	int64_t id;
	int rc, csv;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = api_noisy_cv(rq, rp, &cv)) != 0 ||
	    (rc = csv_format(rq, rp, &csv)) != 0)
		return rc;
	if (view != NULL && strcmp(view, "runs") != 0 && strcmp(view, "cells") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "view", "view must be runs or cells, got \"%.16s\"", view);
	if (csv) {
		if ((rc = tb_results_table_csv_cv(&src, id, view != NULL && strcmp(view, "cells") == 0, cv, &rp->text,
						  &rp->text_len, &rp->err)) != 0)
			return rc;
		rp->status = 200;
		rp->content_type = "text/csv; charset=utf-8; header=present";
		return 0;
	}
	{
		json_t *t;

		if ((rc = tb_results_table_json_cv(&src, id, cv, &t, &rp->err)) != 0)
			return rc;
		return tb_reply_json(rp, 200, t);
	}
}

/* Reply j (stolen) as CSV by to_csv, or under key as JSON. */
static int reply_json_or_csv(struct tb_reply *rp, int csv, const char *key, json_t *j,
			     int (*to_csv)(const json_t *, char **, size_t *))
{
	int rc;

	if (!csv)
		return tb_reply_json(rp, 200, json_pack("{s:o}", key, j));
	rc = to_csv(j, &rp->text, &rp->text_len);
	json_decref(j);
	if (rc != 0)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	rp->status = 200;
	rp->content_type = "text/csv; charset=utf-8; header=present";
	return 0;
}

/* GET /api/v1/matrices/{id}/compare?baseline=ID&max_drop=PCT&metric=M&format=json|csv */
int api_matrix_compare(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	const char *b = tb_req_query(rq, "baseline"), *drop = tb_req_query(rq, "max_drop"), *metric;
	int csv;
	double max_drop = 5.0;
	int64_t id, base;
	json_t *j;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = csv_format(rq, rp, &csv)) != 0)
		return rc;
	if (b == NULL)
		return tb_fail(&rp->err, TB_ERR_INVALID, "baseline",
			       "baseline is required: the id of the matrix to compare against");
	if (tb_parse_id(b, 1, &base) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "baseline",
			       "baseline must be a matrix id (a positive whole "
			       "number), got \"%.20s\"",
			       b);
	if (drop != NULL) {
		char *end = NULL;

		max_drop = strtod(drop, &end);
		if (end == drop || *end != '\0' || !(max_drop >= 0 && max_drop <= 100))
			return tb_fail(&rp->err, TB_ERR_INVALID, "max_drop",
				       "max_drop must be a percentage 0..100 (a drop of the median by more fails the "
				       "gate), got \"%.20s\"",
				       drop);
	}
	if ((rc = api_metric(rq, rp, "receiver_bps", &metric)) != 0)
		return rc;
	if ((rc = tb_compare_json(&src, id, base, max_drop, metric, &j, &rp->err)) != 0)
		return rc;
	return reply_json_or_csv(rp, csv, "compare", j, tb_compare_csv);
}

/* GET /api/v1/matrices/{id}/hosts: what each host was (once per host and OS) */
int api_matrix_hosts(struct tb_request *rq, struct tb_reply *rp)
{
	int64_t id;
	json_t *j;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = tb_hostsnap_json(rq->sv, id, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, j);
}

/* GET /api/v1/matrices/{id}/hosts/diff?other=ID&format=json|csv */
int api_matrix_hosts_diff(struct tb_request *rq, struct tb_reply *rp)
{
	const char *o = tb_req_query(rq, "other");
	int64_t id, other;
	json_t *j;
	int rc, csv;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0 || (rc = csv_format(rq, rp, &csv)) != 0)
		return rc;
	if (o == NULL)
		return tb_fail(&rp->err, TB_ERR_INVALID, "other",
			       "other is required: the id of the matrix to compare with");
	if (tb_parse_id(o, 1, &other) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "other",
			       "other must be a matrix id (a positive whole number), "
			       "got \"%.20s\"",
			       o);
	if ((rc = tb_hostsnap_diff(rq->sv, id, other, &j, &rp->err)) != 0)
		return rc;
	return reply_json_or_csv(rp, csv, "diff", j, tb_compare_hosts_diff_csv);
}

/* GET /api/v1/matrices/{id}/hosts/raw?host=H&os=OS: the snapshot command's output */
int api_matrix_hosts_raw(struct tb_request *rq, struct tb_reply *rp)
{
	const char *host = tb_req_query(rq, "host"), *os = tb_req_query(rq, "os");
	int64_t id;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0)
		return rc;
	if (host == NULL || *host == '\0')
		return tb_fail(&rp->err, TB_ERR_INVALID, "host", "host is required: a machine of the matrix");
	if (os == NULL || *os == '\0')
		return tb_fail(&rp->err, TB_ERR_INVALID, "os", "os is required: the OS the machine ran");
	if ((rc = tb_hostsnap_raw(rq->sv, id, host, os, &rp->text, &rp->text_len, &rp->err)) != 0)
		return rc;
	rp->status = 200;
	rp->content_type = "text/plain; charset=utf-8";
	return 0;
}

static int run_id(struct tb_request *rq, struct tb_reply *rp, int64_t *id)
{
	if (tb_parse_id(rq->args[0], 1, id) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "id", "a run id is a positive whole number");
	return 0;
}

int api_run_get(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	json_t *j;
	int64_t id;
	int rc;

	if ((rc = run_id(rq, rp, &id)) != 0 || (rc = tb_results_run_json(&src, id, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "run", j));
}

int api_run_raw(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = results_src(rq);
	const char *side = tb_req_query(rq, "side"), *stream = tb_req_query(rq, "stream");
	int64_t id;
	int rc;

	if ((rc = run_id(rq, rp, &id)) != 0)
		return rc;
	if (side == NULL)
		side = "client";
	if (stream == NULL)
		stream = "stdout";
	if (strcmp(side, "client") != 0 && strcmp(side, "server") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "side", "side must be client or server, got \"%.16s\"", side);
	if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "stream", "stream must be stdout or stderr, got \"%.16s\"",
			       stream);
	if ((rc = tb_results_raw(&src, id, side, stream, &rp->text, &rp->text_len, &rp->err)) != 0)
		return rc;
	rp->status = 200;
	rp->content_type = "text/plain; charset=utf-8";
	return 0;
}
