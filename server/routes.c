/* routes.c - the routing table: every API path, its role and its handler.
 * api/openapi.yaml must describe each line (tests/api/test_openapi.mjs). */
#include "api.h"

const struct tb_route tb_routes[] = {
	{"GET", "/api/v1/health", TB_LEVEL_NONE, TB_ROUTE_PUBLIC, NULL, api_health},
	{"GET", "/api/v1/whoami", TB_LEVEL_VIEWER, 0, NULL, api_whoami},
	{"GET", "/api/v1/hosts", TB_LEVEL_VIEWER, 0, NULL, api_hosts_list},
	{"GET", "/api/v1/hosts/{name}", TB_LEVEL_VIEWER, 0, NULL, api_host_get},
	{"POST", "/api/v1/hosts/{name}/trust", TB_LEVEL_ADMIN, TB_ROUTE_BODY, "host.trust", api_host_trust},
	{"POST", "/api/v1/hosts/{name}/power", TB_LEVEL_OPERATOR, TB_ROUTE_BODY, "host.power", api_host_power},
	{"POST", "/api/v1/hosts/{name}/boot", TB_LEVEL_OPERATOR, TB_ROUTE_BODY, "host.boot", api_host_boot},
	{"GET", "/api/v1/hosts/{name}/boot-entries", TB_LEVEL_VIEWER, 0, NULL, api_host_boot_entries},
	{"GET", "/api/v1/actions", TB_LEVEL_VIEWER, 0, NULL, api_actions_list},
	{"GET", "/api/v1/actions/{id}", TB_LEVEL_VIEWER, 0, NULL, api_action_get},
	{"POST", "/api/v1/actions/{id}/cancel", TB_LEVEL_OPERATOR, 0, "action.cancel", api_action_cancel},
	{"POST", "/api/v1/session", TB_LEVEL_NONE, TB_ROUTE_PUBLIC | TB_ROUTE_BODY | TB_ROUTE_LOGIN,
	 "session.create", api_session_create},
	{"DELETE", "/api/v1/session", TB_LEVEL_VIEWER, 0, "session.delete", api_session_delete},
	{"GET", "/api/v1/tokens", TB_LEVEL_ADMIN, 0, NULL, api_tokens_list},
	{"POST", "/api/v1/tokens", TB_LEVEL_ADMIN, TB_ROUTE_BODY, "token.create", api_token_create},
	{"DELETE", "/api/v1/tokens/{id}", TB_LEVEL_ADMIN, 0, "token.revoke", api_token_revoke},
	{"GET", "/api/v1/audit", TB_LEVEL_ADMIN, 0, NULL, api_audit_list},
	{"GET", "/api/v1/events", TB_LEVEL_VIEWER, 0, NULL, api_events_stream},
	{"GET", "/metrics", TB_LEVEL_VIEWER, 0, NULL, api_metrics},
	{NULL, NULL, TB_LEVEL_NONE, 0, NULL, NULL},
};
