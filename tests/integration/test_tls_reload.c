/*
 * test_tls_reload.c - testbedd's own TLS certificate renewed by SIGHUP
 * (README "TLS"): the real daemon with a self-signed pair A made by openssl
 * now; the files replaced by pair B and SIGHUP sent:
 *   - a new connection gets B (its subject through CURLINFO_CERTINFO, and
 *     it verifies against B and no longer against A);
 *   - SIGHUP again with the same files (an inventory reload): "unchanged",
 *     no second copy of B kept;
 *   - a keep-alive connection opened under A is reused afterwards (not
 *     dropped), and an event stream opened under A goes on receiving;
 *   - a broken pair (a key of another certificate) is refused with a log
 *     line, B is kept, and no key material reaches the log;
 *   - a FIFO put in place of the certificate is refused (it is opened
 *     non-blocking and its opened file checked: a FIFO swapped in between a
 *     stat and an open would have blocked the signal loop for good) and
 *     the next SIGHUP is still handled;
 *   - a broken pair at start is a configuration error.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "daemon.h"

struct pki {
	char dir[64];
	char a_crt[128], a_key[128], b_crt[128], b_key[128];
	char cert[128], key[128]; /* what testbedd is told to read */
};

static void pki_make(struct pki *p)
{
	snprintf(p->dir, sizeof(p->dir), "/tmp/tbtlsr-XXXXXX");
	assert_non_null(mkdtemp(p->dir));
	snprintf(p->a_crt, sizeof(p->a_crt), "%s/a.crt", p->dir);
	snprintf(p->a_key, sizeof(p->a_key), "%s/a.key", p->dir);
	snprintf(p->b_crt, sizeof(p->b_crt), "%s/b.crt", p->dir);
	snprintf(p->b_key, sizeof(p->b_key), "%s/b.key", p->dir);
	snprintf(p->cert, sizeof(p->cert), "%s/cert.pem", p->dir);
	snprintf(p->key, sizeof(p->key), "%s/key.pem", p->dir);
	tb_test_self_signed("tb-cert-a", p->a_crt, p->a_key);
	tb_test_self_signed("tb-cert-b", p->b_crt, p->b_key);
}

static void pki_remove(struct pki *p)
{
	const char *f[] = {p->a_crt, p->a_key, p->b_crt, p->b_key, p->cert, p->key};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		unlink(f[i]);
	rmdir(p->dir);
}

/* Put src in place of dst as a renewal tool does: a new file renamed over. */
static void install(const char *src, const char *dst)
{
	char tmp[160], cmd[400];

	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 600 %s && mv %s %s", src, tmp, tmp, tmp, dst);
	assert_int_equal(system(cmd), 0);
}

static size_t discard(char *p, size_t sz, size_t n, void *cls)
{
	(void)p;
	(void)cls;
	return sz * n;
}

/* GET path over TLS on handle c (kept by the caller: its connection is
 * reused when it can be), verifying against cafile.  The status (0: no
 * reply, e.g. the certificate did not verify), the server certificate's
 * subject into subject, *fresh 1 when a new connection was made. */
static long get(CURL *c, unsigned int port, const char *path, const char *cafile, char *subject, size_t len,
		long *fresh)
{
	char url[160];
	struct curl_certinfo *ci = NULL;
	long status = 0, conns = 0;

	subject[0] = '\0';
	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
	curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (curl_easy_perform(c) != CURLE_OK)
		return 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &conns);
	*fresh = conns;
	if (curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci != NULL && ci->num_of_certs > 0)
		for (struct curl_slist *s = ci->certinfo[0]; s != NULL; s = s->next)
			if (strncmp(s->data, "Subject:", 8) == 0)
				snprintf(subject, len, "%s", s->data + 8);
	return status;
}

/* The subject a new connection sees (verified against cafile), or "". */
static long fresh_subject(unsigned int port, const char *cafile, char *subject, size_t len)
{
	CURL *c = curl_easy_init();
	long fresh = 0, st = get(c, port, "/api/v1/health", cafile, subject, len, &fresh);

	curl_easy_cleanup(c);
	return st;
}

static void wait_log(const struct tb_test_daemon *d, const char *needle)
{
	for (int i = 0; i < 200 && !tb_test_daemon_log_contains(d, needle); i++) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	if (!tb_test_daemon_log_contains(d, needle))
		fail_msg("no \"%s\" in the log", needle);
}

/* How many lines of the daemon's log hold needle. */
static int log_count(const struct tb_test_daemon *d, const char *needle)
{
	FILE *f = fopen(d->log, "r");
	char line[4096];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* An event stream over TLS, driven by hand through a multi handle. */
struct stream {
	CURLM *m;
	CURL *c;
	struct curl_slist *h;
	char buf[65536];
	size_t len;
};

static size_t keep(char *p, size_t sz, size_t n, void *cls)
{
	struct stream *s = cls;
	size_t k = sz * n;

	if (k > sizeof(s->buf) - 1 - s->len)
		k = sizeof(s->buf) - 1 - s->len;
	memcpy(s->buf + s->len, p, k);
	s->len += k;
	s->buf[s->len] = '\0';
	return sz * n;
}

/* Drive the stream until needle arrives (1), or it ends or 10 s pass (0). */
static int stream_until(struct stream *s, const char *needle)
{
	for (int i = 0; i < 1000 && strstr(s->buf, needle) == NULL; i++) {
		int running = 0, left;
		CURLMsg *msg;

		curl_multi_perform(s->m, &running);
		while ((msg = curl_multi_info_read(s->m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE)
				return 0; /* the stream ended */
		if (strstr(s->buf, needle) == NULL)
			curl_multi_poll(s->m, NULL, 0, 10, NULL);
	}
	return strstr(s->buf, needle) != NULL;
}

static void stream_open(struct stream *s, const struct tb_test_daemon *d, const char *cafile)
{
	char url[160], auth[200];

	memset(s, 0, sizeof(*s));
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/api/v1/events", d->port);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	s->h = curl_slist_append(NULL, auth);
	s->c = curl_easy_init();
	s->m = curl_multi_init();
	curl_easy_setopt(s->c, CURLOPT_URL, url);
	curl_easy_setopt(s->c, CURLOPT_CAINFO, cafile);
	curl_easy_setopt(s->c, CURLOPT_HTTPHEADER, s->h);
	curl_easy_setopt(s->c, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(s->c, CURLOPT_WRITEDATA, s);
	curl_multi_add_handle(s->m, s->c);
	assert_true(stream_until(s, "event: stream\n"));
}

static void stream_close(struct stream *s)
{
	curl_multi_remove_handle(s->m, s->c);
	curl_easy_cleanup(s->c);
	curl_multi_cleanup(s->m);
	curl_slist_free_all(s->h);
}

/* An event on the bus: a token created over TLS (a new connection). */
static void make_event(const struct tb_test_daemon *d, const char *cafile, const char *name)
{
	char url[160], auth[200], body[128];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	struct tb_test_resp r;

	snprintf(url, sizeof(url), "https://127.0.0.1:%u/api/v1/tokens", d->port);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d->admin_token);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"viewer\"}", name);
	assert_int_equal(tb_test_https(cafile, "POST", url, h, body, strlen(body), &r), 0);
	assert_int_equal(r.status, 201);
	tb_test_resp_free(&r);
}

/* The SHA-256 fingerprint of a certificate file as openssl prints it
 * ("AB:CD:..."), into fp. */
static void fingerprint(const char *crt, char *fp, size_t len)
{
	char cmd[256], line[256], *eq;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "openssl x509 -noout -fingerprint -sha256 -in %s", crt);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	line[strcspn(line, "\r\n")] = '\0';
	eq = strchr(line, '=');
	assert_non_null(eq);
	snprintf(fp, len, "%s", eq + 1);
}

/* 1 when a line of the key file (its base64 body) is in the daemon's log. */
static int key_in_log(const struct tb_test_daemon *d, const char *keyfile)
{
	char line[256];
	FILE *f = fopen(keyfile, "r");
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] != '-' && strlen(line) >= 16)
			found = tb_test_daemon_log_contains(d, line);
	}
	fclose(f);
	return found || tb_test_daemon_log_contains(d, "PRIVATE KEY");
}

static void test_renewal(void **state)
{
	struct pki p;
	struct tb_test_daemon d;
	struct stream s;
	char subject[256], fp[128];
	const char *extra[] = {"--tls-cert", p.cert, "--tls-key", p.key, NULL};
	CURL *kept;
	long fresh = 0;

	(void)state;
	pki_make(&p);
	install(p.a_crt, p.cert);
	install(p.a_key, p.key);
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), 0);

	/* under A: a kept connection and an event stream */
	kept = curl_easy_init();
	assert_int_equal(get(kept, d.port, "/api/v1/health", p.a_crt, subject, sizeof(subject), &fresh), 200);
	assert_non_null(strstr(subject, "tb-cert-a"));
	assert_int_equal(fresh, 1);
	stream_open(&s, &d, p.a_crt);

	/* renewal: B in place, SIGHUP */
	install(p.b_crt, p.cert);
	install(p.b_key, p.key);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "TLS certificate renewed");
	/* the log names the new certificate by its fingerprint */
	fingerprint(p.b_crt, fp, sizeof(fp));
	assert_true(tb_test_daemon_log_contains(&d, fp));
	/* a SIGHUP with the same files (an inventory reload) keeps no second
	 * copy of B: "unchanged", not another renewal */
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "TLS certificate unchanged");
	assert_int_equal(log_count(&d, "TLS certificate renewed"), 1);

	/* a new connection gets B: it verifies against B, not against A */
	assert_int_equal(fresh_subject(d.port, p.b_crt, subject, sizeof(subject)), 200);
	assert_non_null(strstr(subject, "tb-cert-b"));
	assert_int_equal(fresh_subject(d.port, p.a_crt, subject, sizeof(subject)), 0);

	/* what was open under A goes on: the kept connection is reused, the
	 * stream receives an event published after the renewal */
	assert_int_equal(get(kept, d.port, "/api/v1/health", p.a_crt, subject, sizeof(subject), &fresh), 200);
	assert_int_equal(fresh, 0);
	make_event(&d, p.b_crt, "after-renewal");
	assert_true(stream_until(&s, "after-renewal"));

	/* a broken pair (B's certificate with A's key) is refused, B kept */
	install(p.a_key, p.key);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "TLS renewal refused");
	assert_true(tb_test_daemon_log_contains(&d, "does not belong to the certificate"));
	assert_int_equal(fresh_subject(d.port, p.b_crt, subject, sizeof(subject)), 200);
	assert_non_null(strstr(subject, "tb-cert-b"));
	/* so is a file that is not PEM at all */
	install("/dev/null", p.key);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "is empty or too large");
	assert_int_equal(fresh_subject(d.port, p.b_crt, subject, sizeof(subject)), 200);

	/* a FIFO as the certificate is refused and does not block the signal
	 * loop (it is opened non-blocking and checked after opening): B kept,
	 * and the next SIGHUP is still handled */
	install(p.b_key, p.key);
	{
		char fifo[160];

		snprintf(fifo, sizeof(fifo), "%s.fifo", p.cert);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(rename(fifo, p.cert), 0);
	}
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "is not a regular file");
	assert_int_equal(fresh_subject(d.port, p.b_crt, subject, sizeof(subject)), 200);
	assert_non_null(strstr(subject, "tb-cert-b"));
	install(p.b_crt, p.cert);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	wait_log(&d, "TLS certificate unchanged");

	/* the stream is still there, and the keys never reached the log */
	make_event(&d, p.b_crt, "after-refusal");
	assert_true(stream_until(&s, "after-refusal"));
	assert_false(key_in_log(&d, p.a_key));
	assert_false(key_in_log(&d, p.b_key));

	stream_close(&s);
	curl_easy_cleanup(kept);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	pki_remove(&p);
}

/* A pair whose key belongs to another certificate does not start. */
static void test_broken_pair_at_start(void **state)
{
	struct pki p;
	struct tb_test_daemon d;
	const char *extra[] = {"--tls-cert", p.cert, "--tls-key", p.key, NULL};

	(void)state;
	pki_make(&p);
	install(p.a_crt, p.cert);
	install(p.b_key, p.key);
	assert_int_equal(tb_test_daemon_start(&d, NULL, extra), -1);
	pki_remove(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_renewal),
		cmocka_unit_test(test_broken_pair_at_start),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
