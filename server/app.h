/*
 * app.h - one running testbedd: its configuration and the parts it is made
 * of (store, auth, hosts, HTTP edge), started and stopped in order.
 *
 * The inventory can be replaced while running (SIGHUP): readers take a
 * reference with tb_app_inventory_get and give it back with
 * tb_app_inventory_put; an old inventory is freed when its last reader is done.
 */
#ifndef TB_APP_H
#define TB_APP_H

#include <pthread.h>

#include "auth.h"
#include "error.h"
#include "inventory.h"
#include "store.h"

struct tb_actions;
struct tb_bmcwatch;
struct tb_events;
struct tb_hosts;
struct tb_http;
struct tb_idle;
struct tb_wake;
struct tb_metrics;
struct tb_runner;

struct tb_app_config {
	const char *inventory_path;
	const char *state_dir;
	const char *static_dir;       /* NULL: none */
	const char *listen_address;   /* "127.0.0.1" */
	unsigned int port;            /* 0: any free port */
	const char *port_file;        /* NULL, or write the bound port there */
	unsigned int probe_interval_s;
	unsigned int connection_limit;
	unsigned int per_ip_limit;
	unsigned int http_threads;    /* 0: one per core, at least 4 (tb_http_threads) */
	const char *tls_cert;         /* NULL: plain HTTP */
	const char *tls_key;          /* must be readable by its owner only */
	unsigned int bmc_interval_s;  /* between two BMC readings of one machine; 0: none */
	unsigned int bmc_floor_s;     /* the shortest bmc_interval_s (0: TB_BMC_FLOOR_S; tests lower it) */
	unsigned int idle_minute_s;   /* seconds in an idle_poweroff_min minute (0: 60; tests shorten it) */
};

struct tb_app {
	struct tb_app_config cfg;
	struct tb_store *store;
	struct tb_auth *auth;
	struct tb_events *events;
	struct tb_metrics *metrics;
	struct tb_hosts *hosts;
	struct tb_actions *actions;
	struct tb_runner *runner;
	struct tb_bmcwatch *bmcwatch;
	struct tb_idle *idle;
	struct tb_wake *wake;      /* the wake schedule */
	struct tb_http *http;
	struct tb_inv_current *invs;  /* the inventory in force (inventory.h) */
};

/* Load the inventory, open the store, create the first admin token if
 * needed, start the prober and the HTTP edge.  Blocking; a config mistake
 * fails with file:line:column. */
int tb_app_start(const struct tb_app_config *cfg, struct tb_app **out, struct tb_error *err);

/* Stop serving, stop the prober, close everything. */
void tb_app_stop(struct tb_app *app);

/* Re-read the inventory; on a mistake keep the old one and say why. */
int tb_app_reload(struct tb_app *app, struct tb_error *err);

/* The current inventory, with a reference (never NULL while running). */
struct tb_inventory *tb_app_inventory_get(struct tb_app *app);
void tb_app_inventory_put(struct tb_app *app, struct tb_inventory *inv);

#endif /* TB_APP_H */
