/* api_reports.c - GET /api/v1/matrices/{id}/report: a matrix as a document
 * to publish (report.h), served as an attachment with a CSP of its own. */
#include "api.h"

#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "report.h"
#include "results.h"
#include "runner.h"
#include "services.h"
#include "validate.h"

/* GET /api/v1/matrices/{id}/report?format=html|md&baseline=ID&metric=M: reads the
 * store (as results do), renders in memory; never waits on anything else. */
int api_matrix_report(struct tb_request *rq, struct tb_reply *rp)
{
	const char *format = tb_req_query(rq, "format"), *b = tb_req_query(rq, "baseline");
	const char *metric;
	struct tb_results_src src = {0};
	struct tb_report r;
	int64_t id, base = 0;
	int md, rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0)
		return rc;
	if (format != NULL && strcmp(format, "html") != 0 && strcmp(format, "md") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "format", "format must be html or md, got \"%.16s\"", format);
	md = format != NULL && strcmp(format, "md") == 0;
	if (b != NULL && tb_parse_id(b, 1, &base) != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "baseline",
			       "baseline must be a matrix id (a positive whole number), got \"%.20s\"", b);
	if ((rc = api_metric(rq, rp, NULL, &metric)) != 0)
		return rc;
	src = tb_runner_results_src(rq->sv->runner, rq->sv->store);
	if ((rc = tb_report_gather(rq->sv, &src, id, base, metric, &r, &rp->err)) != 0)
		return rc;
	rc = (md ? tb_report_md : tb_report_html)(&r, &rp->text, &rp->text_len);
	tb_report_free(&r);
	if (rc != 0)
		return tb_fail(&rp->err, TB_ERR_NOMEM, "", "out of memory");
	rp->status = 200;
	rp->content_type = md ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8";
	rp->csp = TB_REPORT_CSP;
	if (base > 0)
		snprintf(rp->disposition, sizeof(rp->disposition),
			 "attachment; filename=\"matrix-%lld-vs-%lld-report.%s\"", (long long)id, (long long)base,
			 md ? "md" : "html");
	else
		snprintf(rp->disposition, sizeof(rp->disposition), "attachment; filename=\"matrix-%lld-report.%s\"",
			 (long long)id, md ? "md" : "html");
	return 0;
}
