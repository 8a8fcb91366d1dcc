/*
 * app.h - the composition root: one running testbedd made of its parts
 * (store, auth, bus, hosts, actions, runner, the background policies, the
 * HTTP edge), created, started, reloaded (SIGHUP) and stopped in order.
 * Only main.c and tests call it; modules get the services (services.h), never
 * the app.
 */
#ifndef TB_APP_H
#define TB_APP_H

#include "error.h"
#include "services.h"

struct tb_http;

struct tb_app {
	struct tb_app_config cfg;
	struct tb_services sv; /* what the modules get: &sv */
	struct tb_http *http;
};

/* Load the inventory, open the store, create the first admin token if
 * needed, start the prober and the HTTP edge.  Blocking; a config mistake
 * fails with file:line:column. */
int tb_app_start(const struct tb_app_config *cfg, struct tb_app **out, struct tb_error *err);

/* Stop serving, stop the prober, close everything. */
void tb_app_stop(struct tb_app *app);

/* Re-read the inventory; on a mistake keep the old one and say why. */
int tb_app_reload(struct tb_app *app, struct tb_error *err);
/* Read the TLS certificate and key again (SIGHUP: renewal; http.h).  0
 * without TLS; a refused pair keeps the old one. */
int tb_app_reload_tls(struct tb_app *app, struct tb_error *err);

#endif /* TB_APP_H */
