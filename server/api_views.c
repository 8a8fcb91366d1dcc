/* api_views.c - views computed over a matrix's results: the OS side by side
 * (osview.h), and the query parameters the views over results share
 * (noisy_cv, metric; api.h). */
#include "api.h"

#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "osview.h"
#include "results.h"
#include "runner.h"
#include "services.h"
#include "stats.h"
#include "validate.h"

int api_noisy_cv(struct tb_request *rq, struct tb_reply *rp, double *cv)
{
	const char *s = tb_req_query(rq, "noisy_cv");
	char *end = NULL;

	*cv = TB_STATS_NOISY_CV;
	if (s == NULL)
		return 0;
	*cv = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(*cv) || *cv < 0 || *cv > 10)
		return tb_fail(&rp->err, TB_ERR_INVALID, "noisy_cv",
			       "noisy_cv must be a number 0..10 (a coefficient of variation: 0.05 is 5 %%), got "
			       "\"%.20s\"",
			       s);
	return 0;
}

int api_metric(struct tb_request *rq, struct tb_reply *rp, const char *dflt, const char **metric)
{
	const char *s = tb_req_query(rq, "metric");

	*metric = s != NULL ? s : dflt;
	if (s != NULL && !tb_compare_metric_ok(s))
		return tb_fail(&rp->err, TB_ERR_INVALID, "metric",
			       "metric must be receiver_bps, sender_bps, lost_percent, retransmits or jitter_ms, got "
			       "\"%.20s\"",
			       s);
	return 0;
}

/* GET /api/v1/matrices/{id}/os?a=C/S&b=C/S&metric=M&noisy_cv=X */
int api_matrix_os(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = {0};
	const char *a = tb_req_query(rq, "a"), *b = tb_req_query(rq, "b"), *metric;
	double cv;
	int64_t id;
	json_t *t, *j;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0)
		return rc;
	if (a != NULL && !tb_osview_pair_ok(a))
		return tb_fail(&rp->err, TB_ERR_INVALID, "a",
			       "a must be an OS pair client_os/server_os (e.g. ubuntu/ubuntu), got \"%.40s\"", a);
	if (b != NULL && !tb_osview_pair_ok(b))
		return tb_fail(&rp->err, TB_ERR_INVALID, "b",
			       "b must be an OS pair client_os/server_os (e.g. freebsd/freebsd), got \"%.40s\"", b);
	if ((rc = api_metric(rq, rp, "receiver_bps", &metric)) != 0 || (rc = api_noisy_cv(rq, rp, &cv)) != 0)
		return rc;
	src = tb_runner_results_src(rq->sv->runner, rq->sv->store);
	if ((rc = tb_results_table_json_cv(&src, id, cv, &t, &rp->err)) != 0)
		return rc;
	rc = tb_osview_json(t, a, b, metric, cv, &j, &rp->err);
	json_decref(t);
	if (rc != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "os", j));
}
