/*
 * test_tbctl.c - the real tbctl binary against the real testbedd.
 *
 * The daemon runs on 127.0.0.1, port 0, with a temp state dir
 * (tests/support/daemon.h) and an inventory made here in the reference
 * testbed's shape (left, right, pokeitwithastick, openwrt) but with loopback
 * addresses only: nothing leaves this machine.  The persona left/ubuntu is a
 * real sshd on loopback (tests/support/sshd.h) whose host key is not pinned,
 * so that `tbctl host trust` has a key to show and accept.
 *
 * Cases are tables: argv, which token file, which URL -> exit code and the
 * text expected on stdout / stderr.  tbctl is run with a clean environment
 * (TESTBEDD_* set only as the case says) and its --timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#if defined(__has_include)
#if __has_include("daemon.h")
#include "daemon.h"
#define HAVE_TEST_DAEMON 1
#endif
#endif
#include "sshd.h"

extern char **environ;

#define OUT_MAX (256 * 1024)

struct run {
	int status; /* exit code, -1 when it died by a signal */
	char out[OUT_MAX];
	char err[OUT_MAX];
};

/* Which token file a case uses. */
enum tok { TOK_NONE, TOK_ADMIN, TOK_LOOSE_MODE, TOK_BOGUS, TOK_MISSING_FILE, TOK_DIR, TOK_VIEWER };
/* Which URL a case uses. */
enum url { URL_DAEMON, URL_REFUSED };

struct fixture {
#ifdef HAVE_TEST_DAEMON
	struct tb_test_daemon daemon;
#endif
	struct tb_sshd sshd;
	char dir[256]; /* our temp dir: inventory, token files */
	char tbctl[512];
	char inventory[4096]; /* the inventory's text */
	char refused_url[64];
	char tok[8][1024]; /* by enum tok */
	const char *url;
};

static struct fixture fx;

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f == NULL)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static int write_file(const char *path, mode_t mode, const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || fchmod(fd, mode) != 0)
		return -1;
	f = fdopen(fd, "w");
	if (f == NULL) {
		close(fd);
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f);
}

/* Run tbctl with argv (NULL-terminated, without argv[0]). */
static void tbctl(struct run *r, enum tok tok, enum url url, const char *const *argv)
{
	char out_path[320], err_path[320], env_url[600], env_tok[1100];
	const char *args[32];
	char *envp[256];
	size_t n = 0, e = 0, i;
	pid_t pid;
	int st;

	snprintf(out_path, sizeof out_path, "%s/tbctl.out", fx.dir);
	snprintf(err_path, sizeof err_path, "%s/tbctl.err", fx.dir);
	args[n++] = fx.tbctl;
	args[n++] = "--timeout";
	args[n++] = "20";
	for (i = 0; argv[i] != NULL && n < 31; i++)
		args[n++] = argv[i];
	args[n] = NULL;

	for (i = 0; environ[i] != NULL && e < 250; i++)
		if (strncmp(environ[i], "TESTBEDD_", 9) != 0 && strncmp(environ[i], "http_proxy=", 11) != 0 &&
		    strncmp(environ[i], "HTTP_PROXY=", 11) != 0)
			envp[e++] = environ[i];
	snprintf(env_url, sizeof env_url, "TESTBEDD_URL=%s", url == URL_DAEMON ? fx.url : fx.refused_url);
	envp[e++] = env_url;
	if (tok != TOK_NONE) {
		snprintf(env_tok, sizeof env_tok, "TESTBEDD_TOKEN_FILE=%s", fx.tok[tok]);
		envp[e++] = env_tok;
	}
	envp[e] = NULL;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		if (o < 0 || er < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(er, 2) < 0)
			_exit(127);
		execve(fx.tbctl, (char *const *)args, envp);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(out_path, r->out, sizeof r->out);
	slurp(err_path, r->err, sizeof r->err);
}

static void show(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s", what, r->status, r->out, r->err);
}

/* Assert, printing the run when it fails. */
#define check(cond, what, r)                             \
	do {                                             \
		if (!(cond)) {                           \
			show(what, r);                   \
			fail_msg("%s: %s", what, #cond); \
		}                                        \
	} while (0)

/* ---- set-up ------------------------------------------------------------ */

/* A port on 127.0.0.1 where nothing listens: bound, then closed. */
static unsigned int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int port = 0;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

static int write_inventory(void)
{
	char keyfile[320], passfile[320];
	unsigned int dead = free_port();
	int n;

	snprintf(keyfile, sizeof keyfile, "%s", fx.sshd.client_key);
	snprintf(passfile, sizeof passfile, "%s/left-bmc.pass", fx.dir);
	if (write_file(passfile, 0600, "not-a-real-password\n") != 0)
		return -1;
	/* The reference testbed's shape (deploy/examples/reference.yaml) on
	 * loopback: left/ubuntu is the real sshd, everything else a closed port. */
	n = snprintf(fx.inventory, sizeof fx.inventory,
		     "version: 1\n"
		     "ssh:\n"
		     "  user: %s\n"
		     "  port: %u\n"
		     "  key_file: %s\n"
		     "  connect_timeout_s: 2\n"
		     "  command_timeout_s: 5\n"
		     "machines:\n"
		     "  left:\n"
		     "    role: host\n"
		     "    mac: \"a8:a1:59:95:87:60\"\n"
		     "    power:\n"
		     "      - driver: ipmi\n"
		     "        address: 127.0.0.1\n"
		     "        port: %u\n"
		     "        user: ADMIN\n"
		     "        password_file: %s\n"
		     "        cipher_suite: 3\n"
		     "      - driver: wol\n"
		     "        via: relay\n"
		     "        relay: openwrt\n"
		     "        interface: br-lan\n"
		     "        command: etherwake\n"
		     "    console: {type: tcp, address: 127.0.0.1, port: %u}\n"
		     "    boot:\n"
		     "      loader: grub\n"
		     "      default: ubuntu\n"
		     "      entries: {ubuntu: \"0\", freebsd: \"4\"}\n"
		     "    os:\n"
		     "      ubuntu:\n"
		     "        address: 127.0.0.1\n"
		     "        port: %u\n"
		     "      freebsd:\n"
		     "        address: 127.0.0.2\n"
		     "        host_key: \"SHA256:Q0l3tO8zq7N5D3fQkx4m1m7x0E6H1b7m2Wk5YtH3c8U\"\n"
		     "    links:\n"
		     "      lan10:\n"
		     "        address: 10.0.10.2/24\n"
		     "        ifname: {freebsd: mlxen0, ubuntu: enp9s0}\n"
		     "    idle_poweroff_min: 60\n"
		     "    wake_schedule: \"0 7 * * 1\"\n"
		     "  right:\n"
		     "    role: host\n"
		     "    mac: \"a8:a1:59:95:87:61\"\n"
		     "    power:\n"
		     "      - {driver: wol, via: relay, relay: openwrt, interface: br-lan, command: etherwake}\n"
		     "    os:\n"
		     "      ubuntu: {address: 127.0.0.3}\n"
		     "      freebsd: {address: 127.0.0.4}\n"
		     "  pokeitwithastick:\n"
		     "    role: router\n"
		     "    os:\n"
		     "      freebsd: {address: 127.0.0.5}\n"
		     "  openwrt:\n"
		     "    role: relay\n"
		     "    os:\n"
		     "      openwrt: {address: 127.0.0.6}\n",
		     fx.sshd.user, dead, keyfile, dead, passfile, dead, fx.sshd.port);
	return n > 0 && (size_t)n < sizeof fx.inventory ? 0 : -1;
}

static int setup(void **state)
{
	const char *bin = getenv("TB_BINARY_DIR");
	const char *tmp = getenv("TMPDIR");
	unsigned int refused;

	(void)state;
#ifndef HAVE_TEST_DAEMON
	(void)bin;
	(void)tmp;
	(void)refused;
	(void)write_inventory;
	fprintf(stderr, "tests/support/daemon.h is missing: cannot start testbedd\n");
	return -1;
#else
	memset(&fx, 0, sizeof fx);
	if (bin == NULL) {
		fprintf(stderr, "TB_BINARY_DIR is not set (ctest sets it)\n");
		return -1;
	}
	snprintf(fx.tbctl, sizeof fx.tbctl, "%s/tbctl", bin);
	if (access(fx.tbctl, X_OK) != 0) {
		fprintf(stderr, "%s: %s; build the tbctl target\n", fx.tbctl, strerror(errno));
		return -1;
	}
	snprintf(fx.dir, sizeof fx.dir, "%s/tbctl-test-XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(fx.dir) == NULL)
		return -1;
	if (tb_sshd_start(&fx.sshd, NULL) != 0)
		return -1;
	if (write_inventory() != 0)
		return -1;
	{
		/* Probe often, so that left/ubuntu's host key shows up soon. */
		static const char *const extra[] = {"--probe-interval", "1", NULL};

		if (tb_test_daemon_start(&fx.daemon, fx.inventory, extra) != 0) {
			fprintf(stderr, "testbedd did not start with:\n%s", fx.inventory);
			return -1;
		}
	}
	fx.url = fx.daemon.url;
	refused = free_port();
	snprintf(fx.refused_url, sizeof fx.refused_url, "http://127.0.0.1:%u", refused);

	snprintf(fx.tok[TOK_ADMIN], sizeof fx.tok[0], "%s", fx.daemon.admin_token_file);
	snprintf(fx.tok[TOK_LOOSE_MODE], sizeof fx.tok[0], "%s/loose.token", fx.dir);
	snprintf(fx.tok[TOK_BOGUS], sizeof fx.tok[0], "%s/bogus.token", fx.dir);
	snprintf(fx.tok[TOK_MISSING_FILE], sizeof fx.tok[0], "%s/no-such.token", fx.dir);
	snprintf(fx.tok[TOK_DIR], sizeof fx.tok[0], "%s", fx.dir);
	snprintf(fx.tok[TOK_VIEWER], sizeof fx.tok[0], "%s/viewer.token", fx.dir);
	{
		char admin[512];

		slurp(fx.daemon.admin_token_file, admin, sizeof admin);
		/* The real admin token, but readable by all: must be refused. */
		if (write_file(fx.tok[TOK_LOOSE_MODE], 0644, "%s", admin) != 0 ||
		    write_file(fx.tok[TOK_BOGUS], 0600, "tbk_0000000000000000000000000000000000000000\n") != 0)
			return -1;
	}
	return 0;
#endif
}

static int teardown(void **state)
{
	char path[320];
	size_t i;
	static const char *const files[] = {
		"tbctl.out", "tbctl.err", "left-bmc.pass", "loose.token", "bogus.token", "viewer.token",
	};

	(void)state;
#ifdef HAVE_TEST_DAEMON
	tb_test_daemon_stop(&fx.daemon);
#endif
	tb_sshd_stop(&fx.sshd);
	if (fx.dir[0] != '\0') {
		for (i = 0; i < sizeof files / sizeof files[0]; i++) {
			snprintf(path, sizeof path, "%s/%s", fx.dir, files[i]);
			unlink(path);
		}
		rmdir(fx.dir);
	}
	return 0;
}

/* ---- the table --------------------------------------------------------- */

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})
#define MAXWANT 5

struct tcase {
	const char *name;
	const char *const *argv;
	enum tok tok;
	enum url url;
	int exit;
	const char *out[MAXWANT]; /* each must appear on stdout */
	const char *err[MAXWANT]; /* each must appear on stderr */
	const char *not_out;      /* must not appear on stdout */
};

static const char sha_a[] = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

static const struct tcase cases[] = {
	{"hosts table lists every machine",
	 A("hosts"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"NAME", "left", "right", "pokeitwithastick", "openwrt"},
	 {NULL},
	 NULL},
	{"hosts table has its columns",
	 A("hosts"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"ROLE", "ANSWERS", "SINCE", "ADDRESSES", "LAST-ERROR"},
	 {NULL},
	 NULL},
	{"hosts shows the personas' addresses",
	 A("hosts"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"freebsd=127.0.0.2", "openwrt=127.0.0.6", "relay", "router"},
	 {NULL},
	 NULL},
	{"host shows one machine in full",
	 A("host", "left"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"lan10", "enp9s0", "driver=ipmi", "etherwake", "127.0.0.2"},
	 {NULL},
	 "left-bmc.pass"},
	{"host shows the BMC's view and the idle power-off",
	 A("host", "left"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"bmc", "(ipmi", "idle off", "after 60 min unused"},
	 {NULL},
	 "left-bmc.pass"},
	{"host shows the wake schedule and its next time",
	 A("host", "left"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"wakes", "0 7 * * 1; next 20"},
	 {NULL},
	 NULL},
	{"--json host never shows a secret's path",
	 A("--json", "host", "left"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"\"left\""},
	 {NULL},
	 "left-bmc.pass"},
	{"unknown host is refused with exit 2",
	 A("host", "lfet"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 2,
	 {NULL},
	 {"not_found", "404"},
	 NULL},
	{"health needs no token", A("health"), TOK_NONE, URL_DAEMON, 0, {"ok", "0.1.0"}, {NULL}, NULL},
	{"whoami names the admin token", A("whoami"), TOK_ADMIN, URL_DAEMON, 0, {"admin", "bearer"}, {NULL}, NULL},
	{"--json whoami", A("whoami", "--json"), TOK_ADMIN, URL_DAEMON, 0, {"\"via\"", "\"role\""}, {NULL}, NULL},
	{"audit table",
	 A("audit", "--limit", "10"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 0,
	 {"ACTOR", "ACTION", "RESULT"},
	 {NULL},
	 NULL},
	{"no token file named", A("hosts"), TOK_NONE, URL_DAEMON, 1, {NULL}, {"TESTBEDD_TOKEN_FILE"}, NULL},
	{"token file readable by others is refused",
	 A("hosts"),
	 TOK_LOOSE_MODE,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"0644", "chmod 600"},
	 "left"},
	{"missing token file", A("hosts"), TOK_MISSING_FILE, URL_DAEMON, 1, {NULL}, {"no-such.token"}, NULL},
	{"a directory is not a token file", A("hosts"), TOK_DIR, URL_DAEMON, 1, {NULL}, {"not a regular file"}, NULL},
	{"unknown token gets exit 4", A("hosts"), TOK_BOGUS, URL_DAEMON, 4, {NULL}, {"401"}, NULL},
	{"unreachable URL gets exit 3", A("hosts"), TOK_ADMIN, URL_REFUSED, 3, {NULL}, {"TESTBEDD_URL"}, NULL},
	{"unreachable URL, health", A("health"), TOK_NONE, URL_REFUSED, 3, {NULL}, {"no reply"}, NULL},
	{"unknown command", A("frobnicate"), TOK_ADMIN, URL_DAEMON, 1, {NULL}, {"unknown command"}, NULL},
	{"no command", A("--json"), TOK_ADMIN, URL_DAEMON, 1, {NULL}, {"usage"}, NULL},
	{"a token on the command line is refused",
	 A("hosts", "--token", "tbk_x"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"never takes a token"},
	 NULL},
	{"unknown option", A("hosts", "--colour"), TOK_ADMIN, URL_DAEMON, 1, {NULL}, {"unknown option --colour"}, NULL},
	{"option of another command",
	 A("hosts", "--role", "admin"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"does not apply"},
	 NULL},
	{"bad role",
	 A("token", "create", "x", "--role", "root"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"viewer, operator or admin"},
	 NULL},
	{"create without role", A("token", "create", "x"), TOK_ADMIN, URL_DAEMON, 1, {NULL}, {"--role"}, NULL},
	{"audit limit out of range",
	 A("audit", "--limit", "5000"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"1..1000"},
	 NULL},
	{"audit since not RFC 3339 is refused by the API",
	 A("audit", "--since", "yesterday"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 2,
	 {NULL},
	 {"since"},
	 NULL},
	{"revoke a token that does not exist",
	 A("token", "revoke", "999999"),
	 TOK_ADMIN,
	 URL_DAEMON,
	 2,
	 {NULL},
	 {"404"},
	 NULL},
	{"revoke takes a number", A("token", "revoke", "ci"), TOK_ADMIN, URL_DAEMON, 1, {NULL}, {"numeric ID"}, NULL},
	{"trust an OS the host does not have",
	 A("host", "trust", "left", "--os", "windows", "--fingerprint", sha_a),
	 TOK_ADMIN,
	 URL_DAEMON,
	 2,
	 {NULL},
	 {"404"},
	 NULL},
	{"trust a key nobody presented",
	 A("host", "trust", "right", "--os", "ubuntu", "--fingerprint", sha_a),
	 TOK_ADMIN,
	 URL_DAEMON,
	 2,
	 {NULL},
	 {"409"},
	 NULL},
	{"trust needs --os with --fingerprint",
	 A("host", "trust", "left", "--fingerprint", sha_a),
	 TOK_ADMIN,
	 URL_DAEMON,
	 1,
	 {NULL},
	 {"--os"},
	 NULL},
	{"--help documents the exit codes",
	 A("--help"),
	 TOK_NONE,
	 URL_DAEMON,
	 0,
	 {"Exit codes", "TESTBEDD_TOKEN_FILE", "4  unauthorized"},
	 {NULL},
	 NULL},
	{"--version", A("--version"), TOK_NONE, URL_DAEMON, 0, {"tbctl 0.1.0"}, {NULL}, NULL},
};

static void run_case(const struct tcase *c)
{
	static struct run r;
	size_t i;

	tbctl(&r, c->tok, c->url, c->argv);
	check(r.status == c->exit, c->name, &r);
	for (i = 0; i < MAXWANT && c->out[i] != NULL; i++)
		check(strstr(r.out, c->out[i]) != NULL, c->name, &r);
	for (i = 0; i < MAXWANT && c->err[i] != NULL; i++)
		check(strstr(r.err, c->err[i]) != NULL, c->name, &r);
	if (c->not_out != NULL)
		check(strstr(r.out, c->not_out) == NULL, c->name, &r);
	if (c->exit != 0 && c->argv[0] != NULL && strcmp(c->argv[0], "--json") != 0)
		check(r.err[0] != '\0', c->name, &r); /* a failure always says why */
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fprintf(stderr, "case: %s\n", cases[i].name);
		run_case(&cases[i]);
	}
}

/* --json hosts is the server's JSON: it parses and names every machine. */
static void test_hosts_json(void **state)
{
	static struct run r;
	static const char *const want[] = {"left", "right", "pokeitwithastick", "openwrt"};
	json_error_t jerr;
	json_t *j, *hosts, *h;
	size_t i, k;
	int found;

	(void)state;
	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("--json", "hosts"));
	check(r.status == 0, "--json hosts", &r);
	j = json_loads(r.out, 0, &jerr);
	check(j != NULL, "--json hosts parses", &r);
	hosts = json_object_get(j, "hosts");
	check(json_is_array(hosts) && json_array_size(hosts) == 4, "--json hosts has 4 hosts", &r);
	for (k = 0; k < 4; k++) {
		found = 0;
		json_array_foreach(hosts, i, h) if (strcmp(json_string_value(json_object_get(h, "name"))
								   ? json_string_value(json_object_get(h, "name"))
								   : "",
							   want[k]) == 0) found = 1;
		check(found, want[k], &r);
	}
	check(strstr(r.out, "password") == NULL && strstr(r.out, "key_file") == NULL,
	      "--json hosts shows no secret or secret path", &r);
	json_decref(j);
}

/* Find the id of the token called name in `tbctl --json token list`. */
static long long token_id(const char *name, int *revoked)
{
	static struct run r;
	json_t *j, *toks, *t;
	size_t i;
	long long id = -1;

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("--json", "token", "list"));
	check(r.status == 0, "--json token list", &r);
	j = json_loads(r.out, 0, NULL);
	check(j != NULL, "--json token list parses", &r);
	toks = json_object_get(j, "tokens");
	json_array_foreach(toks, i, t)
	{
		const char *n = json_string_value(json_object_get(t, "name"));

		if (n != NULL && strcmp(n, name) == 0) {
			id = (long long)json_integer_value(json_object_get(t, "id"));
			*revoked = json_is_true(json_object_get(t, "revoked"));
		}
	}
	json_decref(j);
	return id;
}

/* create -> use -> list -> revoke -> refused with exit 4. */
static void test_token_lifecycle(void **state)
{
	static struct run r;
	char secret[512], id[32];
	long long tid;
	int revoked = -1;
	size_t len;

	(void)state;
	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("token", "create", "ci-viewer", "--role", "viewer"));
	check(r.status == 0, "token create", &r);
	check(strncmp(r.out, "tbk_", 4) == 0, "token create prints the secret alone", &r);
	check(strstr(r.err, "shown only this once") != NULL, "token create says once", &r);
	len = strlen(r.out);
	check(len < sizeof secret, "the secret is short", &r);
	if (len >= sizeof secret)
		len = sizeof secret - 1;
	memcpy(secret, r.out, len);
	secret[len] = '\0';
	check(len > 5 && secret[len - 1] == '\n' && strchr(secret, '\n') == secret + len - 1, "the secret is one line",
	      &r);
	assert_int_equal(write_file(fx.tok[TOK_VIEWER], 0600, "%s", secret), 0);
	secret[len - 1] = '\0';

	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("whoami"));
	check(r.status == 0 && strstr(r.out, "viewer") != NULL, "whoami as viewer", &r);
	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("hosts"));
	check(r.status == 0 && strstr(r.out, "left") != NULL, "hosts as viewer", &r);
	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("token", "list"));
	check(r.status == 4 && strstr(r.err, "403") != NULL, "token list as viewer is forbidden", &r);
	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("token", "create", "x", "--role", "admin"));
	check(r.status == 4, "a viewer cannot create tokens", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("token", "list"));
	check(r.status == 0 && strstr(r.out, "ci-viewer") != NULL && strstr(r.out, "viewer") != NULL,
	      "token list shows the new token", &r);
	check(strstr(r.out, secret) == NULL, "token list shows no secret", &r);

	tid = token_id("ci-viewer", &revoked);
	assert_true(tid > 0);
	assert_int_equal(revoked, 0);
	snprintf(id, sizeof id, "%lld", tid);
	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("token", "revoke", id));
	check(r.status == 0 && strstr(r.out, "revoked") != NULL, "token revoke", &r);

	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("hosts"));
	check(r.status == 4 && strstr(r.err, "401") != NULL, "a revoked token gets exit 4", &r);
	tbctl(&r, TOK_VIEWER, URL_DAEMON, A("whoami"));
	check(r.status == 4, "a revoked token gets exit 4 (whoami)", &r);
	tid = token_id("ci-viewer", &revoked);
	assert_int_equal(revoked, 1);
	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("token", "list"));
	check(strstr(r.out, "revoked") != NULL, "token list marks it revoked", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("audit", "--actor", "admin"));
	check(r.status == 0 && strstr(r.out, "/api/v1/tokens") != NULL, "the audit log has the token's creation", &r);
}

/*
 * left/ubuntu is a real sshd whose key is pinned nowhere: the daemon's prober
 * must refuse it and report the key it saw; tbctl shows it (exit 1), a wrong
 * fingerprint is a conflict (exit 2), the right one is accepted (exit 0).
 */
static void test_host_trust(void **state)
{
	static struct run r;
	time_t deadline = time(NULL) + 60;

	(void)state;
	for (;;) {
		tbctl(&r, TOK_ADMIN, URL_DAEMON, A("host", "trust", "left", "--os", "ubuntu"));
		if (r.status == 1 && strstr(r.out, fx.sshd.host_fp) != NULL)
			break;
		if (time(NULL) > deadline) {
			show("host trust left --os ubuntu", &r);
			fail_msg("within 60 s the daemon did not report left/ubuntu's host key %s", fx.sshd.host_fp);
		}
		sleep(1);
	}
	check(strstr(r.err, "--fingerprint") != NULL, "host trust says how to accept", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("host", "left"));
	check(r.status == 0 && strstr(r.out, fx.sshd.host_fp) != NULL, "host left shows the presented key", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("host", "trust", "left", "--os", "ubuntu", "--fingerprint", sha_a));
	check(r.status == 2 && strstr(r.err, "409") != NULL, "a wrong fingerprint is a conflict", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON,
	      A("host", "trust", "left", "--os", "ubuntu", "--fingerprint", fx.sshd.host_fp));
	check(r.status == 0 && strstr(r.out, "accepted") != NULL, "the right one is accepted", &r);

	tbctl(&r, TOK_ADMIN, URL_DAEMON, A("--json", "host", "left"));
	check(r.status == 0 && strstr(r.out, fx.sshd.host_fp) != NULL, "the key is pinned for left/ubuntu", &r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_hosts_json),
		cmocka_unit_test(test_token_lifecycle),
		cmocka_unit_test(test_host_trust),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
