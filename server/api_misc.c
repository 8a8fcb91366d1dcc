/* api_misc.c - health and whoami. */
#include "api.h"

int api_health(struct tb_request *rq, struct tb_reply *rp)
{
	(void)rq;
	return tb_reply_json(rp, 200, json_pack("{s:s, s:s}", "status", "ok", "version", TB_VERSION));
}

int api_whoami(struct tb_request *rq, struct tb_reply *rp)
{
	return tb_reply_json(rp, 200,
			     json_pack("{s:{s:I, s:s, s:s}, s:s}", "token", "id", (json_int_t)rq->who->token_id, "name",
				       rq->who->name, "role", tb_level_name(rq->who->level), "via",
				       rq->who->via_cookie ? "cookie" : "bearer"));
}
