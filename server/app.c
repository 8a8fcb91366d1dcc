/* app.c - the composition root: make, start, reload and stop one testbedd,
 * and wire its parts together (see app.h). */
#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions.h"
#include "auth.h"
#include "bmcwatch.h"
#include "console.h"
#include "boot.h"
#include "boot_console.h"
#include "idle.h"
#include "runner.h"
#include "wake.h"
#include "events.h"
#include "hosts.h"
#include "inventory.h"
#include "invadmin.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "reserve.h"
#include "schedule.h"
#include "store.h"

static int write_port_file(const char *path, unsigned int port, struct tb_error *err)
{
	char tmp[1024], text[16];
	int fd, n, e = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(text, sizeof(text), "%u\n", port);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return tb_fail(err, TB_ERR_IO, "", "cannot write port file %s: %s", path, strerror(errno));
	/* the descriptor is closed whatever write() did */
	errno = 0;
	if (write(fd, text, (size_t)n) != n)
		e = errno != 0 ? errno : EIO;
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename(tmp, path) != 0)
		e = errno;
	if (e != 0) {
		unlink(tmp);
		return tb_fail(err, TB_ERR_IO, "", "cannot write port file %s: %s", path, strerror(e));
	}
	return 0;
}

/* The state directory holds the database and admin.token: whoever can
 * write to it can swap them, so one that group or others can write is
 * refused (testbedd creates it 0700). */
static int check_state_dir(const char *dir, struct tb_error *err)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return tb_fail(err, TB_ERR_IO, "state-dir", "cannot read state directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tb_fail(err, TB_ERR_IO, "state-dir", "state directory %s is not a directory", dir);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return tb_fail(err, TB_ERR_IO, "state-dir",
			       "state directory %s is writable by group or others (mode %04o): refusing to keep "
			       "the database and admin.token there; chmod go-w %s (testbedd creates it 0700)",
			       dir, (unsigned)(st.st_mode & 07777), dir);
	return 0;
}

/* actions -> idle: a host taken or let go is a use (wired here, so that
 * actions need not know idle power-off exists) */
static void idle_use(void *cls, const char *host)
{
	tb_idle_touch(cls, host);
}

/* actions -> hosts: who holds a host is part of its state (held_by) */
static void hosts_held(void *cls, const char *host, const struct tb_hold_info *h)
{
	tb_hosts_set_held(cls, host, h);
}

/* actions -> reserve: a reserved host is held by its owner only */
static int reserve_may_hold(void *cls, const char *host, const char *by, struct tb_error *err)
{
	return tb_reserve_check(cls, host, by, err);
}

static int reload_inventory(void *cls, struct tb_error *err);

int tb_app_start(const struct tb_app_config *cfg, struct tb_app **out, struct tb_error *err)
{
	struct tb_app *app = calloc(1, sizeof(*app));
	struct tb_inventory *inv = NULL;
	struct tb_http_config hc;
	char dbpath[1024];
	struct stat st;
	int rc;

	*out = NULL;
	if (app == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	app->cfg = *cfg;
	if (app->cfg.idle_minute_s == 0)
		app->cfg.idle_minute_s = 60;
	app->sv.cfg = &app->cfg;
	if ((rc = tb_inventory_load(cfg->inventory_path, TB_INV_CHECK_FILES, &inv, err)) != 0)
		goto fail;
	if ((app->sv.invs = tb_inv_current_new(inv)) == NULL) {
		tb_inventory_free(inv);
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto fail;
	}
	if ((app->sv.invadmin = tb_invadmin_new(cfg->inventory_path)) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto fail;
	}
	tb_invadmin_set_reload(app->sv.invadmin, reload_inventory, app);
	if (stat(cfg->state_dir, &st) != 0 && mkdir(cfg->state_dir, 0700) != 0) {
		rc = tb_fail(err, TB_ERR_IO, "state-dir", "cannot create state directory %s: %s", cfg->state_dir,
			     strerror(errno));
		goto fail;
	}
	if ((rc = check_state_dir(cfg->state_dir, err)) != 0)
		goto fail;
	snprintf(dbpath, sizeof(dbpath), "%s/testbedd.db", cfg->state_dir);
	if ((rc = tb_store_open(dbpath, &app->sv.store, err)) != 0 ||
	    (rc = tb_auth_new(app->sv.store, &app->sv.auth, err)) != 0 ||
	    (rc = tb_auth_bootstrap(app->sv.auth, cfg->state_dir, err)) != 0 ||
	    (rc = tb_events_new(app->sv.store, &app->sv.events, err)) != 0)
		goto fail;
	tb_events_set_per_token(app->sv.events, cfg->streams_per_token);
	if ((app->sv.metrics = tb_metrics_new()) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto fail;
	}
	/* idle first: actions touch it when they hold and release a host */
	if ((rc = tb_hosts_start(&app->sv, tb_boot_menu_refresh, &app->sv.hosts, err)) != 0 ||
	    (rc = tb_idle_new(&app->sv, &app->sv.idle, err)) != 0 ||
	    (rc = tb_reserve_new(app->sv.events, app->sv.store, &app->sv.reserve, err)) != 0 ||
	    (rc = tb_actions_new(app->sv.store, app->sv.events, &app->sv,
				 &(struct tb_actions_hooks){idle_use, app->sv.idle, hosts_held, app->sv.hosts,
							    reserve_may_hold, app->sv.reserve,
							    tb_boot_console_action_begin, tb_boot_console_action_end,
							    NULL},
				 &app->sv.actions, err)) != 0 ||
	    (rc = tb_reserve_start(app->sv.reserve, err)) != 0 ||
	    (rc = tb_runner_new(&app->sv, &app->sv.runner, err)) != 0 ||
	    (rc = tb_bmcwatch_start(&app->sv, &app->sv.bmcwatch, err)) != 0 ||
	    (rc = tb_idle_start(app->sv.idle, err)) != 0 || (rc = tb_wake_new(&app->sv, &app->sv.wake, err)) != 0 ||
	    (rc = tb_wake_start(app->sv.wake, err)) != 0 || (rc = tb_notify_new(&app->sv, &app->sv.notify, err)) != 0 ||
	    (rc = tb_notify_start(app->sv.notify, err)) != 0 ||
	    (rc = tb_schedule_new(&app->sv, &app->sv.schedule, err)) != 0 ||
	    (rc = tb_schedule_start(app->sv.schedule, err)) != 0 ||
	    (rc = tb_consoles_start(app->cfg.state_dir, app->sv.invs, app->sv.idle, &app->sv.consoles, err)) != 0)
		goto fail;
	hc = (struct tb_http_config){
		.bind_address = cfg->listen_address,
		.port = cfg->port,
		.static_dir = cfg->static_dir,
		.connection_limit = cfg->connection_limit,
		.per_ip_limit = cfg->per_ip_limit,
		.threads = cfg->http_threads,
		.timeout_s = 60,
		.body_limit = 256 * 1024,
		.tls_cert = cfg->tls_cert,
		.tls_key = cfg->tls_key,
		.trusted_proxy = cfg->trusted_proxy,
	};
	if ((rc = tb_http_start(&app->sv, &hc, &app->http, err)) != 0)
		goto fail;
	if (cfg->port_file != NULL && (rc = write_port_file(cfg->port_file, tb_http_port(app->http), err)) != 0)
		goto fail;
	tb_info("app", "testbedd %s serving %s://%s:%u/ with %zu machines from %s", TB_VERSION,
		cfg->tls_cert != NULL ? "https" : "http", cfg->listen_address, tb_http_port(app->http), inv->nmachines,
		cfg->inventory_path);
	*out = app;
	return 0;
fail:
	tb_app_stop(app);
	return rc;
}

/* The one reload (SIGHUP and POST /inventory/reload), run by invadmin one
 * at a time: read the file, swap it in, probe again. */
static int reload_inventory(void *cls, struct tb_error *err)
{
	struct tb_app *app = cls;
	struct tb_inventory *inv;
	size_t n;
	int rc;

	if ((rc = tb_inventory_load(app->cfg.inventory_path, TB_INV_CHECK_FILES, &inv, err)) != 0) {
		tb_error("app", "reload refused, keeping the old inventory: %s", err->message);
		return rc;
	}
	n = inv->nmachines;
	tb_inv_current_swap(app->sv.invs, inv);
	tb_hosts_inventory_changed(app->sv.hosts);
	/* readers for new consoles, changed ones restarted, gone ones stopped;
	 * one that cannot start is logged there and the reload stands */
	(void)tb_consoles_reload(app->sv.consoles, app->sv.invs, &(struct tb_error){0});
	tb_info("app", "reloaded %s: %zu machines", app->cfg.inventory_path, n);
	return 0;
}

int tb_app_reload(struct tb_app *app, struct tb_error *err)
{
	return tb_invadmin_reload(app->sv.invadmin, "SIGHUP", err);
}

int tb_app_reload_tls(struct tb_app *app, struct tb_error *err)
{
	return tb_http_reload_tls(app->http, err);
}

void tb_app_stop(struct tb_app *app)
{
	if (app == NULL)
		return;
	/* Close the bus first: it wakes every event stream, so that no
	 * connection is left suspended when the HTTP edge stops. */
	tb_events_close(app->sv.events);
	tb_consoles_close(app->sv.consoles); /* ends the console streams likewise */
	tb_http_stop(app->http);
	tb_notify_stop(app->sv.notify);     /* it reads the holders */
	tb_schedule_stop(app->sv.schedule); /* it submits to the runner */
	tb_runner_stop(app->sv.runner);
	tb_idle_stop(app->sv.idle);         /* it starts actions and reads the BMC view */
	tb_wake_stop(app->sv.wake);         /* as idle */
	tb_bmcwatch_stop(app->sv.bmcwatch); /* it reads the holders */
	tb_hosts_halt(app->sv.hosts);       /* its rounds read the holders too */
	tb_actions_stop(app->sv.actions);
	tb_reserve_free(app->sv.reserve); /* after the actions that ask it */
	tb_hosts_stop(app->sv.hosts);
	tb_idle_free(app->sv.idle); /* after every hold is released */
	tb_wake_free(app->sv.wake);
	tb_consoles_free(app->sv.consoles); /* after the edge closed every console stream */
	tb_notify_free(app->sv.notify);
	tb_schedule_free(app->sv.schedule);
	tb_events_free(app->sv.events);
	tb_metrics_free(app->sv.metrics);
	tb_auth_free(app->sv.auth);
	tb_store_close(app->sv.store);
	tb_inv_current_free(app->sv.invs);
	tb_invadmin_free(app->sv.invadmin);
	free(app);
}
