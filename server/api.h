/*
 * api.h - the API handlers, one file per resource (api_*.c).  Thin: parse
 * and validate the request, call the domain, shape the reply.  The routing
 * table that names them is routes.c.
 */
#ifndef TB_API_H
#define TB_API_H

#include "http.h"

int api_health(struct tb_request *rq, struct tb_reply *rp);
int api_whoami(struct tb_request *rq, struct tb_reply *rp);

int api_hosts_list(struct tb_request *rq, struct tb_reply *rp);
int api_host_get(struct tb_request *rq, struct tb_reply *rp);
int api_host_trust(struct tb_request *rq, struct tb_reply *rp);

int api_session_create(struct tb_request *rq, struct tb_reply *rp);
int api_session_delete(struct tb_request *rq, struct tb_reply *rp);
int api_sessions_delete_all(struct tb_request *rq, struct tb_reply *rp);
int api_sessions_list(struct tb_request *rq, struct tb_reply *rp);
int api_session_end(struct tb_request *rq, struct tb_reply *rp);
/* After a handler: a cookie caller whose remembered session's expiry moved
 * (tb_principal.renewed) gets its cookie again with the new Max-Age, unless
 * the handler set a cookie itself.  The edge calls it for JSON replies. */
void api_session_cookie_renew(struct tb_request *rq, struct tb_reply *rp);

int api_tokens_list(struct tb_request *rq, struct tb_reply *rp);
int api_token_create(struct tb_request *rq, struct tb_reply *rp);
int api_token_revoke(struct tb_request *rq, struct tb_reply *rp);

int api_audit_list(struct tb_request *rq, struct tb_reply *rp);

int api_host_power(struct tb_request *rq, struct tb_reply *rp);
int api_host_boot(struct tb_request *rq, struct tb_reply *rp);
int api_host_boot_entries(struct tb_request *rq, struct tb_reply *rp);

int api_console_stream(struct tb_request *rq, struct tb_reply *rp);
int api_console_input(struct tb_request *rq, struct tb_reply *rp);
int api_console_lease_take(struct tb_request *rq, struct tb_reply *rp);
int api_console_lease_drop(struct tb_request *rq, struct tb_reply *rp);
int api_console_logs(struct tb_request *rq, struct tb_reply *rp);
int api_console_log_get(struct tb_request *rq, struct tb_reply *rp);
int api_actions_list(struct tb_request *rq, struct tb_reply *rp);
int api_action_get(struct tb_request *rq, struct tb_reply *rp);
int api_action_cancel(struct tb_request *rq, struct tb_reply *rp);

int api_matrix_plan(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_create(struct tb_request *rq, struct tb_reply *rp);
int api_matrices_list(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_get(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_cancel(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_resume(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_rerun(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_results(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_compare(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_report(struct tb_request *rq, struct tb_reply *rp); /* api_reports.c */
int api_matrix_hosts(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_hosts_diff(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_hosts_raw(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_cell_history(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_os(struct tb_request *rq, struct tb_reply *rp);
/* The noisy_cv query parameter (absent: TB_STATS_NOISY_CV) into *cv; a 400
 * naming it when it is not a number 0..10. */
int api_noisy_cv(struct tb_request *rq, struct tb_reply *rp, double *cv);
/* The metric query parameter (absent: dflt, which may be NULL) into *metric;
 * a 400 naming it when it is not a cell statistic (tb_compare_metric_ok). */
int api_metric(struct tb_request *rq, struct tb_reply *rp, const char *dflt, const char **metric);
/* The matrix id of the path (rq->args[0]) into *id, named as the audit
 * target; a 400 naming "id" when it is not a positive whole number. */
int api_matrix_id(struct tb_request *rq, struct tb_reply *rp, int64_t *id);
int api_run_get(struct tb_request *rq, struct tb_reply *rp);
int api_run_raw(struct tb_request *rq, struct tb_reply *rp);
int api_run_samples(struct tb_request *rq, struct tb_reply *rp);
int api_run_latency(struct tb_request *rq, struct tb_reply *rp);
int api_run_profile(struct tb_request *rq, struct tb_reply *rp);
int api_run_flamegraph(struct tb_request *rq, struct tb_reply *rp);

int api_notify_list(struct tb_request *rq, struct tb_reply *rp);
int api_notify_create(struct tb_request *rq, struct tb_reply *rp);
int api_notify_get(struct tb_request *rq, struct tb_reply *rp);
int api_notify_update(struct tb_request *rq, struct tb_reply *rp);
int api_notify_delete(struct tb_request *rq, struct tb_reply *rp);
int api_notify_test(struct tb_request *rq, struct tb_reply *rp);
int api_notify_deliveries(struct tb_request *rq, struct tb_reply *rp);
int api_notify_recent(struct tb_request *rq, struct tb_reply *rp);

int api_inventory_get(struct tb_request *rq, struct tb_reply *rp); /* api_inventory.c */
int api_inventory_check(struct tb_request *rq, struct tb_reply *rp);
int api_inventory_reload(struct tb_request *rq, struct tb_reply *rp);

int api_reservations_list(struct tb_request *rq, struct tb_reply *rp); /* api_reserve.c */
int api_reservation_create(struct tb_request *rq, struct tb_reply *rp);
int api_reservation_delete(struct tb_request *rq, struct tb_reply *rp);
int api_tunables_journal(struct tb_request *rq, struct tb_reply *rp); /* api_tunables.c */

int api_spec_push(struct tb_request *rq, struct tb_reply *rp); /* api_specs.c */
int api_specs_list(struct tb_request *rq, struct tb_reply *rp);
int api_spec_get(struct tb_request *rq, struct tb_reply *rp);
int api_spec_version(struct tb_request *rq, struct tb_reply *rp);
int api_spec_diff(struct tb_request *rq, struct tb_reply *rp);
int api_spec_schedule_put(struct tb_request *rq, struct tb_reply *rp);
int api_spec_schedule_delete(struct tb_request *rq, struct tb_reply *rp);
int api_schedules_list(struct tb_request *rq, struct tb_reply *rp);
int api_matrix_gate(struct tb_request *rq, struct tb_reply *rp);

int api_events_stream(struct tb_request *rq, struct tb_reply *rp);
int api_metrics(struct tb_request *rq, struct tb_reply *rp);

#endif /* TB_API_H */
