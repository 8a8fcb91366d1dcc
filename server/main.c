/* main.c - testbedd: parse the command line, start the app, wait for signals. */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "app.h"
#include "bmcwatch.h"
#include "http.h"
#include "inventory.h"
#include "log.h"

#ifndef TB_STATIC_DIR
#define TB_STATIC_DIR "/usr/local/share/testbedd/static"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: testbedd --inventory FILE [options]\n"
		"  --inventory FILE      the testbed description (YAML; see README.md)\n"
		"  --state-dir DIR       database and admin.token (default /var/lib/testbedd)\n"
		"  --listen ADDR         address to listen on (default 127.0.0.1)\n"
		"  --port N              port (default 8080; 0 picks a free one)\n"
		"  --port-file FILE      write the port listened on to FILE\n"
		"  --static DIR          web pages (default %s)\n"
		"  --tls-cert FILE       serve HTTPS with this PEM certificate (chain)\n"
		"  --tls-key FILE        and this PEM key (mode 0600)\n"
		"  --trusted-proxy ADDR[,ADDR]  reverse proxies (address or address/prefix) whose\n"
		"                        X-Forwarded-For and X-Forwarded-Proto are believed\n"
		"  --public-url URL      the http(s) URL people reach testbedd by (behind a proxy: its\n"
		"                        URL); notifications and reports link to pages under it\n"
		"  --probe-interval S    seconds between reachability probes (default 10)\n"
		"  --bmc-interval S      seconds between two readings of a BMC's chassis power\n"
		"                        (default 30, at least 5; 0: never read)\n"
		"  --connection-limit N  open connections at most (default 4000)\n"
		"  --per-ip-limit N      open connections per client address (default 128)\n"
		"  --http-threads N      HTTP worker threads (default 0: one per core, at least 4)\n"
		"  --streams-per-token N event streams one token may have open at once (default 16)\n"
		"  --log-level L         debug, info, warn or error (default info)\n"
		"  --check-config        check the inventory, print what is wrong, exit\n"
		"  --list-routes         print the API routes, one per line, exit\n"
		"  --version, --help\n"
		"Signals: SIGHUP reloads the inventory and the TLS certificate and key (a bad\n"
		"one is refused and the old kept; open connections keep theirs);\n"
		"SIGINT and SIGTERM stop.  Exit codes: 0 ok, 1 usage, 2 configuration, 3 start-up.\n",
		TB_STATIC_DIR);
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v > max || s[0] == '-')
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Options with a text value: where it goes. */
static const struct {
	const char *name;
	size_t off;
} text_opts[] = {
	{"--inventory", offsetof(struct tb_app_config, inventory_path)},
	{"--state-dir", offsetof(struct tb_app_config, state_dir)},
	{"--listen", offsetof(struct tb_app_config, listen_address)},
	{"--static", offsetof(struct tb_app_config, static_dir)},
	{"--tls-cert", offsetof(struct tb_app_config, tls_cert)},
	{"--tls-key", offsetof(struct tb_app_config, tls_key)},
	{"--trusted-proxy", offsetof(struct tb_app_config, trusted_proxy)},
	{"--port-file", offsetof(struct tb_app_config, port_file)},
};

/* Options with a number 0..max (min..max when min > 0): where it goes. */
static const struct {
	const char *name;
	unsigned int min, max;
	size_t off;
} number_opts[] = {
	{"--port", 0, 65535, offsetof(struct tb_app_config, port)},
	{"--probe-interval", 1, 1000000, offsetof(struct tb_app_config, probe_interval_s)},
	{"--connection-limit", 0, 1000000, offsetof(struct tb_app_config, connection_limit)},
	{"--per-ip-limit", 0, 1000000, offsetof(struct tb_app_config, per_ip_limit)},
	{"--http-threads", 0, 64, offsetof(struct tb_app_config, http_threads)},
	{"--streams-per-token", 1, 100000, offsetof(struct tb_app_config, streams_per_token)},
};

/* Test-only timing (tests/sim/test_bmc_idle.sh): a lower floor for
 * --bmc-interval, and shorter idle "minutes".  Never set in service.
 * 0, or -1 after saying what is wrong. */
static int test_timing(struct tb_app_config *cfg)
{
	const char *v;

	if ((v = getenv("TESTBEDD_TEST_BMC_FLOOR_S")) != NULL &&
	    (parse_uint(v, 3600, &cfg->bmc_floor_s) != 0 || cfg->bmc_floor_s == 0)) {
		fprintf(stderr, "testbedd: TESTBEDD_TEST_BMC_FLOOR_S must be 1..3600, got \"%s\"\n", v);
		return -1;
	}
	if ((v = getenv("TESTBEDD_TEST_IDLE_MINUTE_S")) != NULL &&
	    (parse_uint(v, 60, &cfg->idle_minute_s) != 0 || cfg->idle_minute_s == 0)) {
		fprintf(stderr, "testbedd: TESTBEDD_TEST_IDLE_MINUTE_S must be 1..60, got \"%s\"\n", v);
		return -1;
	}
	return 0;
}

/* --public-url: an http(s) URL with a host, a path at most, no query,
 * fragment, user or control character; kept without its trailing slashes
 * (in a static buffer).  0, or -1 after saying what is wrong. */
static int public_url(const char *v, struct tb_app_config *cfg)
{
	static char buf[512];
	const char *host = NULL;
	size_t n = strlen(v), hl;

	if (strncmp(v, "https://", 8) == 0)
		host = v + 8;
	else if (strncmp(v, "http://", 7) == 0)
		host = v + 7;
	hl = host != NULL ? strcspn(host, "/") : 0;
	for (size_t i = 0; host != NULL && i < n; i++)
		if ((unsigned char)v[i] <= 0x20 || v[i] == 0x7f || v[i] == '?' || v[i] == '#' || v[i] == '"' ||
		    v[i] == '<' || v[i] == '>' || v[i] == '\\')
			host = NULL;
	if (host == NULL || hl == 0 || memchr(host, '@', hl) != NULL || host[0] == ':' || n >= sizeof(buf)) {
		fprintf(stderr,
			"testbedd: --public-url must be an http:// or https:// URL with a host and no query or "
			"fragment (e.g. https://testbed.example.org/tb), got \"%.200s\"\n",
			v);
		return -1;
	}
	memcpy(buf, v, n + 1);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	cfg->public_url = buf;
	return 0;
}

/* An option a with value v into cfg: 1 taken, 0 not an option with a value,
 * -1 after saying what is wrong. */
static int value_option(const char *a, const char *v, struct tb_app_config *cfg)
{
	unsigned int n;

	for (size_t i = 0; i < sizeof(text_opts) / sizeof(text_opts[0]); i++)
		if (strcmp(a, text_opts[i].name) == 0) {
			*(const char **)(void *)((char *)cfg + text_opts[i].off) = v;
			return 1;
		}
	for (size_t i = 0; i < sizeof(number_opts) / sizeof(number_opts[0]); i++) {
		if (strcmp(a, number_opts[i].name) != 0)
			continue;
		if (parse_uint(v, number_opts[i].max, &n) != 0 || n < number_opts[i].min) {
			fprintf(stderr, "testbedd: %s needs a number %u..%u, got \"%s\"\n", a, number_opts[i].min,
				number_opts[i].max, v);
			return -1;
		}
		*(unsigned int *)(void *)((char *)cfg + number_opts[i].off) = n;
		return 1;
	}
	if (strcmp(a, "--public-url") == 0)
		return public_url(v, cfg) == 0 ? 1 : -1;
	if (strcmp(a, "--log-level") == 0) {
		static const char *const levels[] = {"debug", "info", "warn", "error"};

		for (int l = 0; l < 4; l++)
			if (strcmp(v, levels[l]) == 0) {
				tb_log_set_level((enum tb_log_level)l);
				return 1;
			}
		fprintf(stderr, "testbedd: --log-level must be debug, info, warn or error\n");
		return -1;
	}
	if (strcmp(a, "--bmc-interval") == 0) {
		unsigned int floor = cfg->bmc_floor_s != 0 ? cfg->bmc_floor_s : TB_BMC_FLOOR_S;

		if (parse_uint(v, 86400, &n) != 0 || (n != 0 && n < floor)) {
			fprintf(stderr, "testbedd: --bmc-interval needs 0 (never) or seconds %u..86400, got \"%s\"\n",
				floor, v);
			return -1;
		}
		cfg->bmc_interval_s = n;
		return 1;
	}
	return 0;
}

/* The command line into cfg: -1 to go on, else the exit code (after --help,
 * --version, --list-routes, or a mistake said on stderr). */
static int parse_args(int argc, char **argv, struct tb_app_config *cfg, int *check_only)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int taken;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("testbedd %s\n", TB_VERSION);
			return 0;
		} else if (strcmp(a, "--check-config") == 0) {
			*check_only = 1;
		} else if (strcmp(a, "--list-routes") == 0) {
			for (const struct tb_route *r = tb_routes; r->method != NULL; r++)
				printf("%s %s\n", r->method, r->pattern);
			return 0;
		} else if (v == NULL) {
			fprintf(stderr, "testbedd: unknown option or missing value: %s\n", a);
			usage(stderr);
			return 1;
		} else if ((taken = value_option(a, v, cfg)) < 0) {
			return 1;
		} else if (taken) {
			i++;
		} else {
			fprintf(stderr, "testbedd: unknown option: %s\n", a);
			usage(stderr);
			return 1;
		}
	}
	if (cfg->inventory_path == NULL) {
		fprintf(stderr, "testbedd: --inventory FILE is required\n");
		usage(stderr);
		return 1;
	}
	return -1;
}

/* --check-config: the exit code. */
static int check_config(const struct tb_app_config *cfg)
{
	struct tb_inventory *inv;
	struct tb_error err = {0};

	if (tb_inventory_load(cfg->inventory_path, TB_INV_CHECK_FILES, &inv, &err) != 0) {
		fprintf(stderr, "%s\n", err.message);
		return 2;
	}
	printf("%s: ok, %zu machines\n", cfg->inventory_path, inv->nmachines);
	tb_inventory_free(inv);
	return 0;
}

/* Start, reload on SIGHUP, stop on SIGINT or SIGTERM: the exit code. */
static int serve(const struct tb_app_config *cfg)
{
	struct tb_error err = {0};
	struct tb_app *app;
	sigset_t set;
	int sig;

	/* Signals are taken by sigwait below; every thread inherits the mask. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	raise_nofile();

	if (tb_app_start(cfg, &app, &err) != 0) {
		tb_error("main", "%s", err.message);
		return err.code == TB_ERR_CONFIG ? 2 : 3;
	}
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			tb_app_reload(app, &err);
			tb_app_reload_tls(app, &err); /* a renewed certificate; logged either way */
			continue;
		}
		tb_info("main", "signal %d: stopping", sig);
		break;
	}
	tb_app_stop(app);
	return 0;
}

int main(int argc, char **argv)
{
	struct tb_app_config cfg = {
		.state_dir = "/var/lib/testbedd",
		.static_dir = TB_STATIC_DIR,
		.listen_address = "127.0.0.1",
		.port = 8080,
		.probe_interval_s = 10,
		.bmc_interval_s = TB_BMC_INTERVAL_S,
		.connection_limit = 4000,
		.per_ip_limit = 128,
	};
	int check_only = 0, rc;

	if (test_timing(&cfg) != 0)
		return 1;
	if ((rc = parse_args(argc, argv, &cfg, &check_only)) >= 0)
		return rc;
	return check_only ? check_config(&cfg) : serve(&cfg);
}
