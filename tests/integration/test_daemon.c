/*
 * test_daemon.c - testbedd as a process: a broken inventory stops it with
 * file:line:column, --check-config, SIGHUP reload (good and bad), the
 * failed-login limit, and the reachability prober against a real sshd on
 * loopback (which persona answers, a changed host key refused until an
 * admin trusts it).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "children.h"
#include "daemon.h"
#include "sshd.h"

char *mkdtemp(char *template);

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Run testbedd with args; exit status and stderr into err. */
static int run_testbedd(const char *const args[], char *err, size_t errlen)
{
	char exe[512], out[] = "/tmp/tbrun-XXXXXX";
	const char *argv[16];
	int fd = mkstemp(out), status, n = 0;
	pid_t pid;
	ssize_t got;

	snprintf(exe, sizeof(exe), "%s/testbedd", getenv("TB_BINARY_DIR"));
	argv[n++] = exe;
	for (size_t i = 0; args[i] != NULL; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		dup2(fd, 1);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	lseek(fd, 0, SEEK_SET);
	got = read(fd, err, errlen - 1);
	err[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_broken_inventory_stops_startup(void **state)
{
	char dir[] = "/tmp/tbbad-XXXXXX", inv[128], sd[128], out[4096];
	const char *args[] = {"--inventory", inv, "--state-dir", sd, "--port", "0", NULL};
	const char *check[] = {"--check-config", "--inventory", inv, NULL};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(inv, sizeof(inv), "%s/inv.yaml", dir);
	snprintf(sd, sizeof(sd), "%s/state", dir);
	write_text(
		inv,
		"version: 1\nmachines:\n  left:\n    role: host\n    os:\n      ubuntu: {address: 1.2.3.4, prot: 22}\n");
	assert_int_equal(run_testbedd(args, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "inv.yaml:6:34: machines.left.os.ubuntu.prot: unknown key"));
	assert_int_equal(run_testbedd(check, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "inv.yaml:6:34: machines.left.os.ubuntu.prot: unknown key"));
	/* nothing was started: no state directory */
	assert_int_equal(access(sd, F_OK), -1);
	write_text(
		inv,
		"version: 1\nmachines:\n  left:\n    role: host\n    os:\n      ubuntu: {address: 1.2.3.4, user: root, key_file: /nonexistent/key}\n");
	assert_int_equal(run_testbedd(check, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "inv.yaml:6:56: machines.left.os.ubuntu.key_file: cannot read /nonexistent/key"));
	unlink(inv);
	rmdir(dir);
}

static void test_check_config_ok(void **state)
{
	struct tb_test_daemon d;
	char out[4096];
	const char *check[] = {"--check-config", "--inventory", d.inventory, NULL};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(run_testbedd(check, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "ok, 2 machines"));
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

/* --public-url: an http(s) URL with a host and no query or fragment, or
 * testbedd does not start (saying so, naming the option). */
static void test_public_url_checked(void **state)
{
	static const char *const bad[] = {"ftp://tb.example.org",
					  "tb.example.org",
					  "https://",
					  "https:///path",
					  "https://tb.example.org/?x=1",
					  "https://tb.example.org/#/hosts",
					  "https://user@tb.example.org/",
					  "https://tb.example.org/a b"};
	struct tb_test_daemon d;
	char out[4096];
	const char *args[] = {"--check-config", "--inventory", d.inventory, "--public-url", NULL, NULL};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		args[4] = bad[i];
		assert_int_equal(run_testbedd(args, out, sizeof(out)), 1);
		assert_non_null(strstr(out, "--public-url must be an http:// or https:// URL"));
	}
	args[4] = "https://tb.example.org/lab/";
	assert_int_equal(run_testbedd(args, out, sizeof(out)), 0);
	args[4] = "http://10.0.0.5:8080";
	assert_int_equal(run_testbedd(args, out, sizeof(out)), 0);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static size_t count_hosts(struct tb_test_daemon *d)
{
	struct tb_test_resp r;
	char url[256], auth[200];
	const char *h[] = {auth, NULL};
	size_t n;

	snprintf(url, sizeof(url), "%s/api/v1/hosts", d->url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	n = json_array_size(json_object_get(r.json, "hosts"));
	tb_test_resp_free(&r);
	return n;
}

static void test_sighup_reload(void **state)
{
	struct tb_test_daemon d;
	char more[2048];

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(count_hosts(&d), 2);
	snprintf(more, sizeof(more),
		 "%s  router:\n    role: router\n    os:\n      freebsd: {address: 127.0.0.4, port: 9}\n",
		 tb_test_default_inventory);
	assert_int_equal(tb_test_daemon_write_inventory(&d, more), 0);
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 100 && count_hosts(&d) != 3; i++)
		sleep_ms(50);
	assert_int_equal(count_hosts(&d), 3);
	assert_int_equal(tb_test_daemon_write_inventory(&d, "version: 1\nmachines:\n  x: [\n"), 0);
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 100 && !tb_test_daemon_log_contains(&d, "reload refused"); i++)
		sleep_ms(50);
	assert_true(tb_test_daemon_log_contains(&d, "reload refused, keeping the old inventory"));
	assert_true(tb_test_daemon_log_contains(&d, "inventory.yaml:4:1"));
	assert_int_equal(count_hosts(&d), 3);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static void test_failed_login_limit(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char url[256], body[256], buf[64];
	const char *h[] = {"Content-Type: application/json", NULL};

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/api/v1/session", d.url);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(tb_test_http("POST", url, h, "{\"token\":\"tbk_1_guess\"}", 23, &r), 0);
		assert_int_equal(r.status, 401);
		tb_test_resp_free(&r);
	}
	/* the eleventh bad one is refused with the time left ... */
	assert_int_equal(tb_test_http("POST", url, h, "{\"token\":\"tbk_1_guess\"}", 23, &r), 0);
	assert_int_equal(r.status, 429);
	assert_string_equal(tb_test_error_code(&r), "rate_limited");
	assert_non_null(tb_test_header(&r, "Retry-After", buf, sizeof(buf)));
	assert_true(atoi(buf) > 0 && atoi(buf) <= 60);
	tb_test_resp_free(&r);
	/* ... but the right token still logs in: only failures are limited */
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", d.admin_token);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 200);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

static json_t *get_host(struct tb_test_daemon *d, const char *name)
{
	struct tb_test_resp r;
	char url[256], auth[200];
	const char *h[] = {auth, NULL};
	json_t *host;

	snprintf(url, sizeof(url), "%s/api/v1/hosts/%s", d->url, name);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	host = json_incref(json_object_get(r.json, "host"));
	tb_test_resp_free(&r);
	return host;
}

/* Wait until host's state matches reachability (and os when non-NULL). */
static json_t *wait_state(struct tb_test_daemon *d, const char *name, const char *reach, const char *os)
{
	for (int i = 0; i < 200; i++) {
		json_t *h = get_host(d, name), *st = json_object_get(h, "state");
		const char *r = json_string_value(json_object_get(st, "reachability"));
		const char *o = json_string_value(json_object_get(st, "os"));

		if (r != NULL && strcmp(r, reach) == 0 && (os == NULL || (o != NULL && strcmp(o, os) == 0)))
			return h;
		json_decref(h);
		sleep_ms(100);
	}
	fail_msg("%s never became %s %s", name, reach, os ? os : "");
	return NULL;
}

static long trust(struct tb_test_daemon *d, const char *name, const char *os, const char *fp)
{
	struct tb_test_resp r;
	char url[256], auth[200], body[256];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	long status;

	snprintf(url, sizeof(url), "%s/api/v1/hosts/%s/trust", d->url, name);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	snprintf(body, sizeof(body), "{\"os\":\"%s\",\"fingerprint\":\"%s\"}", os, fp);
	assert_int_equal(tb_test_http("POST", url, h, body, strlen(body), &r), 0);
	status = r.status;
	tb_test_resp_free(&r);
	return status;
}

static void test_prober_against_real_sshd(void **state)
{
	struct tb_test_daemon d;
	struct tb_sshd s;
	char inv[4096];
	const char *extra[] = {"--probe-interval", "1", NULL};
	json_t *h, *st, *presented;
	char newfp[128];

	(void)state;
	assert_int_equal(tb_sshd_start(&s, NULL), 0);
	/* left: ubuntu answers on 127.0.0.1 (pinned), freebsd's address has no sshd.
	 * right: nothing pinned: its key is refused and shown for an admin. */
	snprintf(
		inv, sizeof(inv),
		"version: 1\n"
		"ssh: {user: %s, key_file: %s, connect_timeout_s: 2}\n"
		"machines:\n"
		"  left:\n"
		"    role: host\n"
		"    os:\n"
		"      ubuntu: {address: 127.0.0.1, port: %u, host_key: \"%s\"}\n"
		"      freebsd: {address: 127.0.0.2, port: %u}\n"
		"  right:\n"
		"    role: host\n"
		"    os:\n"
		"      ubuntu: {address: 127.0.0.1, port: %u}\n"
		"  dual:\n"
		"    role: host\n"
		"    os:\n"
		"      ubuntu: {address: 127.0.0.1, port: %u, host_key: \"SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}\n"
		"      freebsd: {address: 127.0.0.1, port: %u, host_key: \"%s\"}\n",
		s.user, s.client_key, s.port, s.host_fp, s.port, s.port, s.port, s.port, s.host_fp);
	if (tb_test_daemon_start(&d, inv, extra) != 0) {
		tb_sshd_stop(&s);
		fail_msg("testbedd did not start");
	}

	h = wait_state(&d, "left", "up", "ubuntu");
	st = json_object_get(h, "state");
	assert_non_null(json_string_value(json_object_get(st, "since")));
	assert_true(json_is_null(json_object_get(st, "last_error")));
	json_decref(h);

	/* two personas at one address: the host key that answers tells which OS is up */
	h = wait_state(&d, "dual", "up", "freebsd");
	st = json_object_get(h, "state");
	assert_true(json_is_null(json_object_get(st, "last_error")));
	assert_true(json_is_null(json_object_get(st, "presented_host_key")));
	json_decref(h);

	h = wait_state(&d, "right", "down", NULL);
	for (int i = 0; i < 50 && json_is_null(json_object_get(json_object_get(h, "state"), "presented_host_key"));
	     i++) {
		json_decref(h);
		sleep_ms(100);
		h = get_host(&d, "right");
	}
	st = json_object_get(h, "state");
	presented = json_object_get(st, "presented_host_key");
	assert_string_equal(json_string_value(json_object_get(presented, "fingerprint")), s.host_fp);
	assert_string_equal(json_string_value(json_object_get(presented, "os")), "ubuntu");
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "last_error"), "code")),
			    "host_key_mismatch");
	json_decref(h);
	assert_int_equal(trust(&d, "right", "ubuntu", "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 409);
	assert_int_equal(trust(&d, "right", "ubuntu", s.host_fp), 200);
	json_decref(wait_state(&d, "right", "up", "ubuntu"));

	/* left's ubuntu gets a new host key: refused, shown, trusted, up again */
	assert_int_equal(tb_sshd_restart_new_host_key(&s), 0);
	snprintf(newfp, sizeof(newfp), "%s", s.host_fp);
	h = wait_state(&d, "left", "down", NULL);
	for (int i = 0; i < 50 && json_is_null(json_object_get(json_object_get(h, "state"), "presented_host_key"));
	     i++) {
		json_decref(h);
		sleep_ms(100);
		h = get_host(&d, "left");
	}
	presented = json_object_get(json_object_get(h, "state"), "presented_host_key");
	assert_string_equal(json_string_value(json_object_get(presented, "fingerprint")), newfp);
	json_decref(h);
	assert_int_equal(trust(&d, "left", "ubuntu", newfp), 200);
	h = wait_state(&d, "left", "up", "ubuntu");
	/* the host shows the pin in force now: the accepted key, not the inventory's */
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_object_get(h, "os"), "ubuntu"), "host_key")),
		newfp);
	json_decref(h);
	assert_true(tb_test_daemon_log_contains(&d, "accepted by admin"));

	assert_int_equal(tb_test_daemon_stop(&d), 0);
	tb_sshd_stop(&s);
}

/* GET or POST over HTTPS trusting cafile; status, headers into hdr, body
 * into out (4 KiB each). */
static long https(const char *url, const char *cafile, const char *body, char *hdr, char *out)
{
	const char *h[] = {"Content-Type: application/json", NULL};
	struct tb_test_resp r;
	long status;

	hdr[0] = out[0] = '\0';
	if (tb_test_https(cafile, body != NULL ? "POST" : "GET", url, h, body, body != NULL ? strlen(body) : 0, &r) !=
	    0) {
		tb_test_resp_free(&r);
		return 0;
	}
	status = r.status;
	snprintf(hdr, 4096, "%s", r.headers);
	snprintf(out, 4096, "%s", r.body);
	tb_test_resp_free(&r);
	return status;
}

/* SIGTERM while the first probe round runs (it starts at once and reads the
 * holders, actions.c): the prober must end before the actions are freed.  A
 * race, so it is tried many times; under ASan (./deploy/check runs this file
 * so) a use after free exits 1 and fails the test.  Found by CI in
 * test_hostile, 2 in 30 runs. */
static void test_stop_during_first_probe(void **state)
{
	(void)state;
	for (int i = 0; i < 30; i++) {
		struct tb_test_daemon d;

		assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
		assert_int_equal(tb_test_daemon_stop(&d), 0);
	}
}

static void test_tls(void **state)
{
	char dir[] = "/tmp/tbtls-XXXXXX", cert[96], key[96], url[128], body[256];
	static char hdr[4096], out[4096];
	const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
	struct tb_test_daemon d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	tb_test_self_signed("127.0.0.1", cert, key);
	chmod(key, 0644);
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), -1); /* a readable key is refused */
	chmod(key, 0600);
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/api/v1/health", d.port);
	assert_int_equal(https(url, cert, NULL, hdr, out), 200);
	assert_non_null(strstr(out, "\"status\":\"ok\""));
	/* the session cookie is Secure under TLS */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/api/v1/session", d.port);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"}", d.admin_token);
	assert_int_equal(https(url, cert, body, hdr, out), 200);
	assert_non_null(strstr(hdr, "; Secure"));
	/* plain HTTP to the TLS port gets no HTTP answer */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/health", d.port);
	assert_int_not_equal(https(url, cert, NULL, hdr, out), 200);
	assert_true(tb_test_daemon_log_contains(&d, "serving https://"));
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	unlink(cert);
	unlink(key);
	rmdir(dir);
}

/* An action running when testbedd dies is marked failed ("interrupted")
 * when it starts again, never left "running".  The machine is woken by a
 * UDP magic packet to the loopback broadcast (nothing leaves this machine)
 * and never answers, so the action is still waiting when testbedd dies. */
static void test_action_interrupted_by_a_crash(void **state)
{
	static const char inv[] =
		"version: 1\n"
		"ssh: {user: root, key_file: %s, connect_timeout_s: 1}\n"
		"machines:\n"
		"  sleeper:\n"
		"    role: host\n"
		"    mac: \"02:00:00:00:00:09\"\n"
		"    boot_timeout_s: 600\n"
		"    power:\n"
		"      - {driver: wol, via: broadcast, target: 127.255.255.255, source: 127.0.0.1, port: 9}\n"
		"    os:\n"
		"      ubuntu: {address: 127.0.0.1, port: 9}\n";
	struct tb_test_daemon d;
	struct tb_test_resp r;
	char url[256], auth[200];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	long long id;
	int status;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, inv, NULL), 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);
	snprintf(url, sizeof(url), "%s/api/v1/hosts/sleeper/power", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{\"action\":\"on\"}", 15, &r), 0);
	assert_int_equal(r.status, 202);
	id = json_integer_value(json_object_get(json_object_get(r.json, "action"), "id"));
	tb_test_resp_free(&r);
	snprintf(url, sizeof(url), "%s/api/v1/actions/%lld", d.url, id);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
		if (strstr(r.body, "UDP magic packet") != NULL)
			break;
		tb_test_resp_free(&r);
		sleep_ms(100);
	}
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "action"), "state")), "running");
	tb_test_resp_free(&r);
	/* a crash, not a stop: nothing gets to mark the action */
	kill(d.pid, SIGKILL);
	waitpid(d.pid, &status, 0);
	tb_test_child_untrack(d.pid);
	d.pid = 0;
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	snprintf(url, sizeof(url), "%s/api/v1/actions/%lld", d.url, id);
	assert_int_equal(tb_test_http("GET", url, h, NULL, 0, &r), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "action"), "state")), "failed");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_object_get(r.json, "action"), "error"), "code")),
		"interrupted");
	tb_test_resp_free(&r);
	/* and the host is free again */
	snprintf(url, sizeof(url), "%s/api/v1/hosts/sleeper/power", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{\"action\":\"off\"}", 16, &r), 0);
	assert_int_equal(r.status, 202);
	tb_test_resp_free(&r);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broken_inventory_stops_startup),
		cmocka_unit_test(test_check_config_ok),
		cmocka_unit_test(test_public_url_checked),
		cmocka_unit_test(test_sighup_reload),
		cmocka_unit_test(test_failed_login_limit),
		cmocka_unit_test(test_prober_against_real_sshd),
		cmocka_unit_test(test_stop_during_first_probe),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_action_interrupted_by_a_crash),
	};

	return cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
}
