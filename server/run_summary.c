/* run_summary.c - a run's figures, interval rows and summary from its tool's results (run_summary.h). */
#include "run_summary.h"

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : -1;
}

void tb_run_figures(struct tb_run_row *r, const json_t *result, bool stopped)
{
	const json_t *end = json_object_get(result, "end");
	const json_t *snd = json_object_get(end, "sender"), *rcv = json_object_get(end, "receiver");

	r->sender_bps = num(snd, "bits_per_second");
	r->receiver_bps = num(rcv, "bits_per_second");
	r->retransmits = (int64_t)num(snd, "retransmits");
	r->lost_percent = num(rcv, "lost_percent");
	/* a client stopped by SIGINT never hears the server's figures: its
	 * receiver side says 0, which is not a measurement */
	if (stopped && num(rcv, "bytes") == 0) {
		r->receiver_bps = -1;
		r->lost_percent = -1;
	}
}

void tb_run_merge_ends(json_t *client_result, const json_t *server_result)
{
	json_t *cend = json_object_get(client_result, "end");
	const json_t *send = json_object_get(server_result, "end");
	static const char *const sides[] = {"sender", "receiver"};

	if (!json_is_object(send) || client_result == NULL)
		return;
	if (!json_is_object(cend)) {
		cend = json_object();
		if (cend == NULL || json_object_set_new(client_result, "end", cend) != 0)
			return;
	}
	for (int i = 0; i < 2; i++)
		if (json_object_get(cend, sides[i]) == NULL && json_object_get(send, sides[i]) != NULL)
			json_object_set(cend, sides[i], json_object_get(send, sides[i]));
}

size_t tb_run_interval_rows(const json_t *result, const char *side, struct tb_interval_row *rows, size_t at, size_t max)
{
	const json_t *iv = json_object_get(result, "intervals");
	size_t i;
	json_t *v;

	json_array_foreach(iv, i, v)
	{
		if (at >= max)
			break;
		rows[at].side = side;
		rows[at].seq = (int)i;
		rows[at].data = json_dumps(v, JSON_COMPACT);
		if (rows[at].data != NULL)
			at++;
	}
	return at;
}

char *tb_run_summary(const json_t *client_result, const json_t *server_result, const char *tool, const json_t *idle,
		     const json_t *latency)
{
	static const char *const keep[] = {"cookie", "version", "system_info", "timesecs", "test_start", "error", NULL};
	json_t *sum = json_object();
	const json_t *cend = json_object_get(client_result, "end");
	const json_t *send = json_object_get(server_result, "end");
	const json_t *se = json_object_get(server_result, "error");
	char *text;

	if (sum == NULL)
		return NULL;
	json_object_set(sum, "client", cend != NULL ? (json_t *)cend : json_null());
	json_object_set(sum, "server", send != NULL ? (json_t *)send : json_null());
	for (int i = 0; client_result != NULL && keep[i] != NULL; i++) {
		json_t *v = json_object_get(client_result, keep[i]);

		if (v != NULL)
			json_object_set(sum, keep[i], v);
	}
	json_object_set_new(sum, "server_error", se != NULL ? json_incref((json_t *)se) : json_null());
	if (tool != NULL)
		json_object_set_new(sum, "tool", json_string(tool));
	if (idle != NULL)
		json_object_set(sum, "idle", (json_t *)idle);
	if (latency != NULL)
		json_object_set(sum, "latency", (json_t *)latency);
	text = json_dumps(sum, JSON_COMPACT);
	json_decref(sum);
	return text;
}
