/* api_tunables.c - GET /tunables: the tunables journal (tunables.h). */
#include "api.h"

#include <string.h>

#include "services.h"
#include "tunables.h"

/* The rows still to restore (?all=1: the last 500 of every state). Reads the store only. */
int api_tunables_journal(struct tb_request *rq, struct tb_reply *rp)
{
	const char *all = tb_req_query(rq, "all");
	json_t *j;

	if (all != NULL && strcmp(all, "0") != 0 && strcmp(all, "1") != 0)
		return tb_fail(&rp->err, TB_ERR_INVALID, "all", "all must be 0 or 1");
	if ((j = tb_tun_journal_json(rq->sv, all != NULL && strcmp(all, "1") == 0)) == NULL)
		return tb_fail(&rp->err, TB_ERR_IO, "", "the tunables journal could not be read");
	return tb_reply_json(rp, 200, j);
}
