/*
 * services.h - the services a module may use: plain pointers to what the
 * composition root (app.c) made, and the settings testbedd was started
 * with.  No lifecycle here: nothing is created, started, reloaded or stopped
 * through this header (app.c does all of that, in order).
 *
 * A module gets a struct tb_services * when it is made and keeps it; the
 * pointers are set before any thread that reads them starts and never change
 * while testbedd runs.  Each service is as thread-safe as its own header
 * says.  The inventory in force is read through invs (inventory.h:
 * tb_inv_current_get/put).
 */
#ifndef TB_SERVICES_H
#define TB_SERVICES_H

struct tb_actions;
struct tb_auth;
struct tb_bmcwatch;
struct tb_consoles;
struct tb_events;
struct tb_hosts;
struct tb_idle;
struct tb_inv_current;
struct tb_invadmin;
struct tb_metrics;
struct tb_notify;
struct tb_reserve;
struct tb_runner;
struct tb_schedule;
struct tb_store;
struct tb_wake;

struct tb_app_config {
	const char *inventory_path;
	const char *state_dir;
	const char *static_dir;     /* NULL: none */
	const char *listen_address; /* "127.0.0.1" */
	unsigned int port;          /* 0: any free port */
	const char *port_file;      /* NULL, or write the bound port there */
	unsigned int probe_interval_s;
	unsigned int connection_limit;
	unsigned int per_ip_limit;
	unsigned int http_threads;      /* 0: one per core, at least 4 (tb_http_threads) */
	unsigned int streams_per_token; /* open event streams per token (0: TB_EVENTS_PER_TOKEN) */
	const char *tls_cert;           /* NULL: plain HTTP */
	const char *tls_key;            /* must be readable by its owner only */
	const char *trusted_proxy;      /* "ADDR[,ADDR]": peers whose X-Forwarded-* count (proxy.h) */
	const char *public_url; /* "https://HOST[/PATH]" people reach testbedd by, no trailing slash; NULL: unknown */
	unsigned int bmc_interval_s; /* between two BMC readings of one machine; 0: none */
	unsigned int bmc_floor_s;    /* the shortest bmc_interval_s (0: TB_BMC_FLOOR_S; tests lower it) */
	unsigned int idle_minute_s;  /* seconds in an idle_poweroff_min minute (0: 60; tests shorten it) */
};

struct tb_services {
	const struct tb_app_config *cfg;
	struct tb_store *store;
	struct tb_auth *auth;
	struct tb_events *events;
	struct tb_metrics *metrics;
	struct tb_inv_current *invs;  /* the inventory in force */
	struct tb_invadmin *invadmin; /* its file, load time, last reload (invadmin.h) */
	struct tb_hosts *hosts;
	struct tb_actions *actions;
	struct tb_runner *runner;
	struct tb_bmcwatch *bmcwatch;
	struct tb_idle *idle;
	struct tb_wake *wake;         /* the wake schedule */
	struct tb_consoles *consoles; /* serial consoles (console.h) */
	struct tb_notify *notify;     /* notification rules and their sending */
	struct tb_reserve *reserve;   /* reservations of hosts (reserve.h) */
	struct tb_schedule *schedule; /* recurring matrices and their gate (schedule.h) */
};

#endif /* TB_SERVICES_H */
