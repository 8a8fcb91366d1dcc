/* rfmock.c - the Redfish mock for tests: see rfmock.h. */
#include "rfmock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "children.h"
#include "proc.h"
#include "timeutil.h"

char *mkdtemp(char *template);

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int run(const char *const argv[])
{
	struct tb_proc_result r;
	struct tb_error e = {0};
	int rc = tb_proc_run(argv, NULL, 30000, 65536, NULL, &r, &e);

	if (rc != 0 || r.exit_status != 0)
		fprintf(stderr, "%s failed (%d, exit %d): %s %s\n", argv[0], rc, r.exit_status, e.message,
			r.err != NULL ? r.err : "");
	rc = rc == 0 && r.exit_status == 0 ? 0 : -1;
	tb_proc_result_free(&r);
	return rc;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static const char *python(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* A CA, a server certificate for IP 127.0.0.1 signed by it, and a self-signed one (EC P-256). */
static int make_certs(struct tb_rfmock *m)
{
	char csr[128], ext[128], serial[128], cakey[128];
	const char *ca[] = {"openssl",
			    "req",
			    "-x509",
			    "-newkey",
			    "ec",
			    "-pkeyopt",
			    "ec_paramgen_curve:prime256v1",
			    "-nodes",
			    "-keyout",
			    cakey,
			    "-out",
			    m->ca,
			    "-days",
			    "2",
			    "-subj",
			    "/CN=testbedd test CA",
			    NULL};
	const char *req[] = {"openssl",       "req",     "-newkey", "ec",   "-pkeyopt", "ec_paramgen_curve:prime256v1",
			     "-nodes",        "-keyout", m->key,    "-out", csr,        "-subj",
			     "/CN=127.0.0.1", NULL};
	const char *sign[] = {"openssl", "x509",   "-req",  "-in",       csr,        "-CA",
			      m->ca,     "-CAkey", cakey,   "-CAserial", serial,     "-CAcreateserial",
			      "-out",    m->cert,  "-days", "2",         "-extfile", ext,
			      NULL};
	const char *self[] = {"openssl",
			      "req",
			      "-x509",
			      "-newkey",
			      "ec",
			      "-pkeyopt",
			      "ec_paramgen_curve:prime256v1",
			      "-nodes",
			      "-keyout",
			      m->ss_key,
			      "-out",
			      m->ss_cert,
			      "-days",
			      "2",
			      "-subj",
			      "/CN=127.0.0.1",
			      "-addext",
			      "subjectAltName=IP:127.0.0.1",
			      NULL};

	snprintf(csr, sizeof(csr), "%s/srv.csr", m->dir);
	snprintf(ext, sizeof(ext), "%s/ext.cnf", m->dir);
	snprintf(serial, sizeof(serial), "%s/ca.srl", m->dir);
	snprintf(cakey, sizeof(cakey), "%s/ca.key", m->dir);
	if (write_file(ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
		       0600) != 0)
		return -1;
	return run(ca) == 0 && run(req) == 0 && run(sign) == 0 && run(self) == 0 ? 0 : -1;
}

/* Start one mock; *pid and url ("https://127.0.0.1:PORT") filled. */
static int start_one(struct tb_rfmock *m, const char *cert, const char *key, const char *log, pid_t *pid, char *url,
		     size_t urlsz)
{
	const char *top = getenv("TB_SOURCE_DIR");
	char script[512], portfile[160], line[32] = "";
	FILE *f;

	snprintf(script, sizeof(script), "%s/tests/redfish/redfish_mock.py", top != NULL ? top : "../..");
	snprintf(portfile, sizeof(portfile), "%s.port", log);
	*pid = fork();
	if (*pid < 0)
		return -1;
	if (*pid == 0) {
		tb_test_child_init();
		execlp(python(), python(), script, "--cert", cert, "--key", key, "--password-file", m->pwfile, "--log",
		       log, "--port-file", portfile, (char *)NULL);
		_exit(127);
	}
	tb_test_child_track(*pid, "the Redfish mock");
	for (int i = 0; i < 200; i++) {
		if ((f = fopen(portfile, "r")) != NULL) {
			if (fgets(line, sizeof(line), f) == NULL)
				line[0] = '\0';
			fclose(f);
			if (atoi(line) > 0) {
				snprintf(url, urlsz, "https://127.0.0.1:%d", atoi(line));
				return 0;
			}
		}
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			tb_test_child_untrack(*pid);
			*pid = 0;
			break;
		}
		sleep_ms(50);
	}
	fprintf(stderr, "the Redfish mock did not start\n");
	return -1;
}

static void stop_one(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
		tb_test_child_untrack(*pid);
		*pid = 0;
	}
}

int tb_rfmock_start(struct tb_rfmock *m)
{
	const char *chk[] = {python(), "-c", "import ssl, http.server", NULL};
	const char *ossl[] = {"openssl", "version", NULL};

	memset(m, 0, sizeof(*m));
	if (run(chk) != 0 || run(ossl) != 0)
		return 1;
	snprintf(m->dir, sizeof(m->dir), "/tmp/tbrf-XXXXXX");
	if (mkdtemp(m->dir) == NULL)
		return -1;
	snprintf(m->ca, sizeof(m->ca), "%s/ca.pem", m->dir);
	snprintf(m->cert, sizeof(m->cert), "%s/srv.pem", m->dir);
	snprintf(m->key, sizeof(m->key), "%s/srv.key", m->dir);
	snprintf(m->ss_cert, sizeof(m->ss_cert), "%s/ss.pem", m->dir);
	snprintf(m->ss_key, sizeof(m->ss_key), "%s/ss.key", m->dir);
	snprintf(m->pwfile, sizeof(m->pwfile), "%s/bmc.pass", m->dir);
	snprintf(m->badpw, sizeof(m->badpw), "%s/bad.pass", m->dir);
	snprintf(m->log, sizeof(m->log), "%s/requests.jsonl", m->dir);
	snprintf(m->sslog, sizeof(m->sslog), "%s/ss-requests.jsonl", m->dir);
	snprintf(m->password, sizeof(m->password), "Rf-pw-%ld-%d", (long)getpid(), (int)(tb_monotonic_ms() % 100000));
	if (write_file(m->pwfile, m->password, 0600) != 0 || write_file(m->badpw, "not-the-password\n", 0600) != 0 ||
	    make_certs(m) != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	if (start_one(m, m->cert, m->key, m->log, &m->pid, m->base, sizeof(m->base)) != 0 ||
	    start_one(m, m->ss_cert, m->ss_key, m->sslog, &m->ss_pid, m->ssbase, sizeof(m->ssbase)) != 0) {
		tb_rfmock_stop(m);
		return -1;
	}
	return 0;
}

void tb_rfmock_stop(struct tb_rfmock *m)
{
	const char *rm[] = {"rm", "-rf", m->dir, NULL};

	stop_one(&m->pid);
	stop_one(&m->ss_pid);
	if (m->dir[0] != '\0')
		run(rm);
	m->dir[0] = '\0';
}

static size_t sink(char *d, size_t s, size_t n, void *cls)
{
	json_t **out = cls;

	json_decref(*out);
	*out = json_loadb(d, s * n, 0, NULL);
	return s * n;
}

json_t *tb_rfmock_control(struct tb_rfmock *m, const char *body)
{
	CURL *c = curl_easy_init();
	char url[128];
	json_t *j = NULL;

	if (c == NULL)
		return NULL;
	snprintf(url, sizeof(url), "%s/mock/%s", m->base, body != NULL ? "config" : "state");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, m->ca);
	if (body != NULL)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &j);
	if (curl_easy_perform(c) != CURLE_OK) {
		json_decref(j);
		j = NULL;
	}
	curl_easy_cleanup(c);
	return j;
}

int tb_rfmock_reset(struct tb_rfmock *m)
{
	json_t *j = tb_rfmock_control(m, "{\"allowed\":[\"On\",\"ForceOff\",\"GracefulShutdown\",\"GracefulRestart\","
					 "\"ForceRestart\",\"ForceOn\",\"PowerCycle\",\"Nmi\"],\"slow_ms\":0,"
					 "\"slow_match\":\"\",\"stale_etag\":false,"
					 "\"session_location\":\"path\",\"read_only\":false,\"busy\":0}");

	json_decref(j);
	if (j == NULL || (truncate(m->log, 0) != 0 && errno != ENOENT)) /* no request logged yet */
		return -1;
	return 0;
}

const char *tb_rfmock_power(struct tb_rfmock *m)
{
	static char p[16];
	json_t *j = tb_rfmock_control(m, NULL);
	const char *s = json_string_value(json_object_get(j, "power"));

	snprintf(p, sizeof(p), "%s", s != NULL ? s : "");
	json_decref(j);
	return p;
}

json_t *tb_rfmock_log(struct tb_rfmock *m, const char *log)
{
	json_t *a = json_array();
	char line[8192];
	FILE *f = fopen(log, "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		json_t *j = json_loads(line, 0, NULL);
		const char *tok = json_string_value(json_object_get(j, "issued_token"));
		int known = 0;

		if (j == NULL)
			continue;
		for (int i = 0; tok != NULL && i < m->ntokens; i++)
			known |= strcmp(m->tokens[i], tok) == 0;
		if (tok != NULL && !known && m->ntokens < 64)
			snprintf(m->tokens[m->ntokens++], sizeof(m->tokens[0]), "%s", tok);
		json_array_append_new(a, j);
	}
	if (f != NULL)
		fclose(f);
	return a;
}

void tb_rfmock_resets(struct tb_rfmock *m, char *out, size_t sz)
{
	json_t *log = tb_rfmock_log(m, m->log), *r;
	size_t i, len = 0;

	out[0] = '\0';
	json_array_foreach(log, i, r)
	{
		const char *method = json_string_value(json_object_get(r, "method"));
		const char *path = json_string_value(json_object_get(r, "path"));
		json_t *b;

		if (method == NULL || path == NULL || strcmp(method, "POST") != 0 ||
		    strstr(path, "ComputerSystem.Reset") == NULL)
			continue;
		b = json_loads(json_string_value(json_object_get(r, "body")), 0, NULL);
		if (len < sz)
			len += (size_t)snprintf(out + len, sz - len, "%s%s", len > 0 ? "," : "",
						json_string_value(json_object_get(b, "ResetType")) != NULL
							? json_string_value(json_object_get(b, "ResetType"))
							: "?");
		json_decref(b);
	}
	json_decref(log);
}
