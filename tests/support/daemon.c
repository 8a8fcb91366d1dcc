/* daemon.c - run the real testbedd for a test: see daemon.h. */
#include "daemon.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "children.h"
#include "datafile.h"

char *mkdtemp(char *template);

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

const char tb_test_default_inventory[] =
	"# loopback inventory for tests: nothing listens on port 9\n"
	"version: 1\n"
	"ssh:\n"
	"  user: root\n"
	"  key_file: %s\n"
	"  connect_timeout_s: 2\n"
	"machines:\n"
	"  left:\n"
	"    role: host\n"
	"    mac: \"02:00:00:00:00:01\"\n"
	"    boot: {loader: grub, default: ubuntu, entries: {ubuntu: \"0\", freebsd: \"freebsd\"}}\n"
	"    os:\n"
	"      ubuntu: {address: 127.0.0.1, port: 9}\n"
	"      freebsd: {address: 127.0.0.2, port: 9}\n"
	"    links:\n"
	"      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: data0, freebsd: data0}}\n"
	"  right:\n"
	"    role: host\n"
	"    os:\n"
	"      ubuntu: {address: 127.0.0.3, port: 9}\n";

int tb_test_daemon_write_inventory(struct tb_test_daemon *d, const char *inventory)
{
	char *text;
	size_t n;
	int rc;

	if (inventory == NULL)
		inventory = tb_test_default_inventory;
	n = strlen(inventory) + strlen(d->key_file) + 1;
	text = malloc(n);
	if (text == NULL)
		return -1;
	if (strstr(inventory, "%s") != NULL)
		snprintf(text, n, inventory, d->key_file);
	else
		snprintf(text, n, "%s", inventory);
	rc = tb_test_write_file(d->inventory, text, 0644);
	free(text);
	return rc;
}

static void print_log(const struct tb_test_daemon *d)
{
	char buf[4096];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (f == NULL)
		return;
	fprintf(stderr, "---- testbedd log ----\n");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

int tb_test_daemon_start(struct tb_test_daemon *d, const char *inventory, const char *const extra[])
{
	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/tbtest-XXXXXX");
	if (mkdtemp(d->dir) == NULL)
		return -1;
	snprintf(d->state_dir, sizeof(d->state_dir), "%s/state", d->dir);
	snprintf(d->inventory, sizeof(d->inventory), "%s/inventory.yaml", d->dir);
	snprintf(d->key_file, sizeof(d->key_file), "%s/id_test", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/testbedd.log", d->dir);
	snprintf(d->admin_token_file, sizeof(d->admin_token_file), "%s/admin.token", d->state_dir);
	if (tb_test_write_file(d->key_file, "not a key: nothing listens where it would be used\n", 0600) != 0 ||
	    tb_test_daemon_write_inventory(d, inventory) != 0)
		return -1;
	return tb_test_daemon_launch(d, extra, 0);
}

int tb_test_daemon_launch(struct tb_test_daemon *d, const char *const extra[], unsigned int port)
{
	const char *bindir = getenv("TB_BINARY_DIR");
	char exe[512], portfile[400], portarg[16];
	const char *argv[40];
	int argc = 0;

	snprintf(portfile, sizeof(portfile), "%s/port", d->dir);
	snprintf(portarg, sizeof(portarg), "%u", port);
	snprintf(exe, sizeof(exe), "%s/testbedd", bindir != NULL ? bindir : ".");
	unlink(portfile);
	d->port = 0;
	argv[argc++] = exe;
	argv[argc++] = "--inventory";
	argv[argc++] = d->inventory;
	argv[argc++] = "--state-dir";
	argv[argc++] = d->state_dir;
	argv[argc++] = "--port";
	argv[argc++] = portarg;
	argv[argc++] = "--port-file";
	argv[argc++] = portfile;
	for (size_t i = 0; extra != NULL && extra[i] != NULL && argc < 38; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;

	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		tb_test_child_init();
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
			close(fd);
		}
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	tb_test_child_track(d->pid, "testbedd");
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(portfile, "r");
		int status;

		if (f != NULL) {
			if (fscanf(f, "%u", &d->port) == 1 && d->port > 0) {
				fclose(f);
				break;
			}
			fclose(f);
		}
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			tb_test_child_untrack(d->pid);
			d->pid = 0;
			print_log(d);
			return -1;
		}
		sleep_ms(50);
	}
	if (d->port == 0) {
		print_log(d);
		tb_test_daemon_stop(d);
		return -1;
	}
	snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%u", d->port);
	{
		FILE *f = fopen(d->admin_token_file, "r");

		if (f != NULL) {
			if (fgets(d->admin_token, sizeof(d->admin_token), f) != NULL)
				d->admin_token[strcspn(d->admin_token, "\n")] = '\0';
			fclose(f);
		}
	}
	return 0;
}

static void remove_tree(const char *dir)
{
	pid_t p = fork();

	if (p == 0) {
		execl("/bin/rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

int tb_test_daemon_stop(struct tb_test_daemon *d)
{
	int rc = tb_test_daemon_kill(d);

	if (d->dir[0] != '\0' && getenv("TB_KEEP_TMP") == NULL)
		remove_tree(d->dir);
	d->dir[0] = '\0';
	return rc;
}

int tb_test_daemon_kill(struct tb_test_daemon *d)
{
	int rc = 0;

	if (d->pid > 0) {
		int status = 0;

		kill(d->pid, SIGTERM);
		for (int i = 0; i < 100; i++) {
			if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
				tb_test_child_untrack(d->pid);
				d->pid = 0;
				rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
				break;
			}
			sleep_ms(50);
		}
		if (d->pid > 0) {
			fprintf(stderr, "testbedd did not stop on SIGTERM within 5 s; killing it\n");
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			tb_test_child_untrack(d->pid);
			d->pid = 0;
			rc = 137;
		}
		if (rc != 0) {
			fprintf(stderr, "testbedd exited with status %d\n", rc);
			print_log(d);
		}
	}
	return rc;
}

int tb_test_daemon_log_contains(const struct tb_test_daemon *d, const char *needle)
{
	FILE *f = fopen(d->log, "r");
	char *buf;
	long n;
	int found = 0;

	if (f == NULL)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n)
		found = strstr(buf, needle) != NULL;
	free(buf);
	fclose(f);
	return found;
}

struct grow {
	char *p;
	size_t len;
};

static size_t collect(char *data, size_t size, size_t n, void *cls)
{
	struct grow *g = cls;
	size_t add = size * n;
	char *p = realloc(g->p, g->len + add + 1);

	if (p == NULL)
		return 0;
	memcpy(p + g->len, data, add);
	g->len += add;
	p[g->len] = '\0';
	g->p = p;
	return add;
}

int tb_test_http(const char *method, const char *url, const char *const headers[], const char *body, size_t body_len,
		 struct tb_test_resp *out)
{
	return tb_test_http_from(NULL, method, url, headers, body, body_len, out);
}

/* One request from src (NULL: any) trusting cafile (NULL: the system's). */
static int request(const char *src, const char *cafile, const char *method, const char *url,
		   const char *const headers[], const char *body, size_t body_len, struct tb_test_resp *out)
{
	CURL *c = curl_easy_init();
	struct curl_slist *hl = NULL;
	struct grow b = {0}, h = {0};
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	if (c == NULL)
		return -1;
	for (size_t i = 0; headers != NULL && headers[i] != NULL; i++)
		hl = curl_slist_append(hl, headers[i]);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	if (src != NULL)
		curl_easy_setopt(c, CURLOPT_INTERFACE, src);
	if (cafile != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	out->body = b.p != NULL ? b.p : strdup("");
	out->len = b.len;
	out->headers = h.p != NULL ? h.p : strdup("");
	if (b.len > 0)
		out->json = json_loadb(b.p, b.len, 0, NULL);
	return rc == CURLE_OK ? 0 : -1;
}

int tb_test_http_from(const char *src, const char *method, const char *url, const char *const headers[],
		      const char *body, size_t body_len, struct tb_test_resp *out)
{
	return request(src, NULL, method, url, headers, body, body_len, out);
}

int tb_test_https(const char *cafile, const char *method, const char *url, const char *const headers[],
		  const char *body, size_t body_len, struct tb_test_resp *out)
{
	return request(NULL, cafile, method, url, headers, body, body_len, out);
}

void tb_test_self_signed(const char *cn, const char *crt, const char *key)
{
	char cmd[768];

	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
		 "-subj /CN=%s -addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s 2>/dev/null",
		 cn, key, crt);
	if (system(cmd) != 0 || chmod(key, 0600) != 0)
		fail_msg("openssl could not make a certificate for %s into %s", cn, crt);
}

void tb_test_resp_free(struct tb_test_resp *r)
{
	free(r->body);
	free(r->headers);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

long tb_test_api(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
		 const char *body, struct tb_test_resp *r)
{
	char url[1024], auth[256];
	const char *h[] = {auth, "Content-Type: application/json", NULL};

	snprintf(url, sizeof(url), "%s%s", d->url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token != NULL ? token : d->admin_token);
	if (tb_test_http(method, url, h, body, body != NULL ? strlen(body) : 0, r) != 0)
		fail_msg("%s %s: no reply", method, path);
	return r->status;
}

json_t *tb_test_api_expect(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
			   const char *body, long want, struct tb_test_resp *r)
{
	if (tb_test_api(d, token, method, path, body, r) != want)
		fail_msg("%s %s: status %ld, want %ld: %.300s", method, path, r->status, want, r->body);
	return r->json;
}

long long tb_test_api_int(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
			  const char *body, long want, const char *field)
{
	struct tb_test_resp r;
	json_t *v;
	long long n;

	v = json_object_get(tb_test_api_expect(d, token, method, path, body, want, &r), field);
	if (!json_is_integer(v))
		fail_msg("%s %s: no integer %s in %.300s", method, path, field, r.body);
	n = (long long)json_integer_value(v);
	tb_test_resp_free(&r);
	return n;
}

void tb_test_expect_field(const struct tb_test_resp *r, const char *what, const char *field)
{
	json_t *e = json_object_get(r->json, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *got = json_string_value(json_object_get(e, "field"));

	if (code == NULL || strcmp(code, "invalid_field") != 0)
		fail_msg("%s: error code %s, want invalid_field: %.300s", what, code != NULL ? code : "(none)",
			 r->body);
	if (got == NULL || strcmp(got, field) != 0)
		fail_msg("%s: field %s, want %s", what, got != NULL ? got : "(none)", field);
}

const char *tb_test_header(const struct tb_test_resp *r, const char *name, char *buf, size_t len)
{
	const char *p = r->headers;
	size_t nlen = strlen(name);

	while (p != NULL && *p) {
		const char *eol = strstr(p, "\r\n");
		size_t l = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (l > nlen && strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			const char *v = p + nlen + 1;

			while (*v == ' ')
				v++;
			snprintf(buf, len, "%.*s", (int)(l - (size_t)(v - p)), v);
			return buf;
		}
		p = eol != NULL ? eol + 2 : NULL;
	}
	return NULL;
}

const char *tb_test_error_code(const struct tb_test_resp *r)
{
	json_t *e = json_object_get(json_object_get(r->json, "error"), "code");

	return json_is_string(e) ? json_string_value(e) : "";
}

long tb_test_create_token(const struct tb_test_daemon *d, const char *name, const char *role, char *secret, size_t len)
{
	struct tb_test_resp r;
	char url[256], auth[200], body[256];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	long status;

	snprintf(url, sizeof(url), "%s/api/v1/tokens", d->url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"%s\"}", name, role);
	if (tb_test_http("POST", url, h, body, strlen(body), &r) != 0)
		return 0;
	status = r.status;
	if (secret != NULL && len > 0)
		snprintf(secret, len, "%s",
			 json_string_value(json_object_get(r.json, "secret"))
				 ? json_string_value(json_object_get(r.json, "secret"))
				 : "");
	tb_test_resp_free(&r);
	return status;
}

int tb_test_wait_action(const struct tb_test_daemon *d, long long id, long ms, char *st, size_t stsz,
			struct tb_test_resp *r)
{
	char url[256], auth[200];
	const char *h[] = {auth, NULL};

	snprintf(url, sizeof(url), "%s/api/v1/actions/%lld", d->url, id);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	for (long waited = 0;; waited += 100) {
		const char *state;

		if (tb_test_http("GET", url, h, NULL, 0, r) != 0) {
			snprintf(st, stsz, "(no reply)");
			return -1;
		}
		state = json_string_value(json_object_get(json_object_get(r->json, "action"), "state"));
		snprintf(st, stsz, "%s", state != NULL ? state : "(no state)");
		if (state == NULL || (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0))
			return 0;
		if (waited >= ms)
			return -1;
		tb_test_resp_free(r);
		sleep_ms(100);
	}
}

void tb_test_tbctl_spawn(const struct tb_test_daemon *d, const char *token, const char *const argv[],
			 struct tb_test_tbctl *t)
{
	static unsigned int seq;
	const char *bin = getenv("TB_BINARY_DIR");
	const char *args[32];
	char exe[512], tok[400];
	size_t n = 0;
	int fd;

	if (bin == NULL)
		fail_msg("TB_BINARY_DIR is not set (ctest sets it)");
	snprintf(exe, sizeof(exe), "%s/tbctl", bin);
	seq++;
	snprintf(tok, sizeof(tok), "%s/tbctl-%u.tok", d->dir, seq);
	snprintf(t->out_path, sizeof(t->out_path), "%s/tbctl-%u.out", d->dir, seq);
	if (token != NULL) {
		fd = open(tok, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, token, strlen(token)) != (ssize_t)strlen(token) || close(fd) != 0)
			fail_msg("%s: %s", tok, strerror(errno));
	} else {
		snprintf(tok, sizeof(tok), "%s", d->admin_token_file);
	}
	args[n++] = exe;
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (n + 1 >= sizeof(args) / sizeof(args[0]))
			fail_msg("tbctl: too many arguments");
		args[n++] = argv[i];
	}
	args[n] = NULL;
	fflush(NULL);
	t->pid = fork();
	if (t->pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (t->pid == 0) {
		int o = open(t->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
			_exit(127);
		setenv("TESTBEDD_URL", d->url, 1);
		setenv("TESTBEDD_TOKEN_FILE", tok, 1);
		unsetenv("http_proxy");
		unsetenv("HTTP_PROXY");
		execv(exe, (char *const *)args);
		_exit(127);
	}
}

int tb_test_tbctl_wait(struct tb_test_tbctl *t, char *out, size_t outsz)
{
	FILE *f;
	size_t n;
	int st = 0;

	if (waitpid(t->pid, &st, 0) != t->pid)
		fail_msg("waitpid %d: %s", (int)t->pid, strerror(errno));
	f = fopen(t->out_path, "r");
	if (f == NULL)
		fail_msg("%s: %s", t->out_path, strerror(errno));
	n = fread(out, 1, outsz - 1, f);
	out[n] = '\0';
	if (fgetc(f) != EOF)
		fail_msg("tbctl's output is longer than %zu bytes", outsz - 1);
	fclose(f);
	unlink(t->out_path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int tb_test_tbctl(const struct tb_test_daemon *d, const char *token, const char *const argv[], char *out, size_t outsz)
{
	struct tb_test_tbctl t;

	tb_test_tbctl_spawn(d, token, argv, &t);
	return tb_test_tbctl_wait(&t, out, outsz);
}
