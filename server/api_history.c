/* api_history.c - a cell of a matrix across every matrix that has it
 * (history.h). */
#include "api.h"

#include <stdio.h>
#include <string.h>

#include "history.h"
#include "results.h"
#include "runner.h"
#include "services.h"
#include "store.h"
#include "validate.h"

/* GET /api/v1/matrices/{id}/cells/{n}/history?metric=&limit=&name=&state=&since= */
int api_matrix_cell_history(struct tb_request *rq, struct tb_reply *rp)
{
	struct tb_results_src src = {0};
	struct tb_matrix_filter f = {0};
	const char *metric, *limit = tb_req_query(rq, "limit");
	int64_t id, cell, n = TB_HISTORY_DEFAULT;
	json_t *j;
	int rc;

	if ((rc = api_matrix_id(rq, rp, &id)) != 0)
		return rc;
	if (tb_parse_id(rq->args[1], 0, &cell) != 0 || cell > 1000000)
		return tb_fail(&rp->err, TB_ERR_INVALID, "cell", "a cell is a whole number 0..1000000");
	if ((rc = api_metric(rq, rp, "receiver_bps", &metric)) != 0)
		return rc;
	if (limit != NULL && (tb_parse_id(limit, 1, &n) != 0 || n > TB_HISTORY_MAX))
		return tb_fail(&rp->err, TB_ERR_INVALID, "limit", "limit must be a whole number 1..%d", TB_HISTORY_MAX);
	if ((rc = tb_history_filter_parse(tb_req_query(rq, "name"), tb_req_query(rq, "state"),
					  tb_req_query(rq, "since"), &f, &rp->err)) != 0)
		return rc;
	f.limit = (int)n;
	src = tb_runner_results_src(rq->sv->runner, rq->sv->store);
	if ((rc = tb_history_cell_json(&src, id, (int)cell, metric, &f, &j, &rp->err)) != 0)
		return rc;
	return tb_reply_json(rp, 200, json_pack("{s:o}", "history", j));
}
