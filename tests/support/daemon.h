/*
 * daemon.h - run the real testbedd for a test: a fresh temp directory with an
 * inventory and a state dir, listening on 127.0.0.1 port 0; and a small
 * libcurl client to talk to it.
 */
#ifndef TB_TEST_DAEMON_H
#define TB_TEST_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct tb_test_daemon {
	pid_t pid;
	unsigned int port;
	char url[64];  /* "http://127.0.0.1:PORT" */
	char dir[256]; /* temp dir holding everything below */
	char state_dir[320];
	char inventory[320];
	char key_file[320]; /* a 0600 file the default inventory names */
	char admin_token[128];
	char admin_token_file[320];
	char log[320]; /* the daemon's stderr */
};

/* A loopback inventory: machines whose personas listen nowhere
 * (127.0.0.1 port 9, the discard port, nothing there). "%s" = key file. */
extern const char tb_test_default_inventory[];

/* Start testbedd with inventory text (NULL: the default; "%s" in it is
 * replaced by the key file path) and extra arguments (NULL-terminated, may
 * be NULL).  Waits until it listens.  0 or -1 (then the log is printed). */
int tb_test_daemon_start(struct tb_test_daemon *d, const char *inventory, const char *const extra[]);

/* (Re)start the daemon on the same directories; port 0 picks a free one. */
int tb_test_daemon_launch(struct tb_test_daemon *d, const char *const extra[], unsigned int port);

/* SIGTERM and wait, keeping the directories (for a restart); exit status as stop. */
int tb_test_daemon_kill(struct tb_test_daemon *d);

/* Rewrite the inventory file (for SIGHUP tests). */
int tb_test_daemon_write_inventory(struct tb_test_daemon *d, const char *inventory);

/* SIGTERM, wait, remove the temp dir.  Returns the daemon's exit status
 * (0 for a clean stop; under AddressSanitizer a leak makes it non-zero, and
 * the log is printed). */
int tb_test_daemon_stop(struct tb_test_daemon *d);

/* 1 when the log contains needle. */
int tb_test_daemon_log_contains(const struct tb_test_daemon *d, const char *needle);

struct tb_test_resp {
	long status;
	char *body;
	size_t len;
	char *headers; /* raw response headers */
	json_t *json;  /* parsed body or NULL */
};

/* One request.  headers: NULL-terminated "Name: value" strings (may be NULL);
 * body may be NULL.  0 or -1 (transport error). */
int tb_test_http(const char *method, const char *url, const char *const headers[], const char *body, size_t body_len,
		 struct tb_test_resp *out);
/* tb_test_http from the local address src (e.g. "127.0.0.2": loopback holds
 * all of 127/8; NULL: the system's choice). */
int tb_test_http_from(const char *src, const char *method, const char *url, const char *const headers[],
		      const char *body, size_t body_len, struct tb_test_resp *out);
/* tb_test_http over TLS, the server's certificate verified against cafile. */
int tb_test_https(const char *cafile, const char *method, const char *url, const char *const headers[],
		  const char *body, size_t body_len, struct tb_test_resp *out);
/* A self-signed EC certificate for cn (its subjectAltName 127.0.0.1) into
 * crt, its key (mode 0600) into key, by openssl; fails the test otherwise. */
void tb_test_self_signed(const char *cn, const char *crt, const char *key);
void tb_test_resp_free(struct tb_test_resp *r);

/* METHOD d->url + path as token (NULL: the admin's) with an optional JSON
 * body (sent as application/json); the reply in r (free it).  Fails the test
 * on a transport error.  Returns the status. */
long tb_test_api(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
		 const char *body, struct tb_test_resp *r);

/* tb_test_api, and fails the test (method, path, status and body shown)
 * unless the status is want.  Returns r->json (NULL for a reply that is not JSON). */
json_t *tb_test_api_expect(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
			   const char *body, long want, struct tb_test_resp *r);

/* tb_test_api_expect, then the integer field of the reply's object (a
 * created row's "id", a test message's "delivery"): no reply to free. */
long long tb_test_api_int(const struct tb_test_daemon *d, const char *token, const char *method, const char *path,
			  const char *body, long want, const char *field);

/* Fails the test (what names the request) unless r's error is
 * {"code": "invalid_field", "field": field}. */
void tb_test_expect_field(const struct tb_test_resp *r, const char *what, const char *field);

/* The value of a response header (case-insensitive name) into buf, or NULL. */
const char *tb_test_header(const struct tb_test_resp *r, const char *name, char *buf, size_t len);

/* POST /api/v1/tokens as the admin: a token named name with role; its
 * secret into secret (may be NULL).  Returns the HTTP status. */
long tb_test_create_token(const struct tb_test_daemon *d, const char *name, const char *role, char *secret, size_t len);

/* GET /api/v1/actions/ID as the admin until the action is neither queued (its
 * thread has not started it) nor running, for at most ms: its state into st,
 * the last reply left in r (free it).  0, or -1 when it had not ended. */
int tb_test_wait_action(const struct tb_test_daemon *d, long long id, long ms, char *st, size_t stsz,
			struct tb_test_resp *r);

/* A tbctl started by tb_test_tbctl_spawn. */
struct tb_test_tbctl {
	pid_t pid;
	char out_path[400]; /* its stdout and stderr */
};

/* Start the real tbctl (TB_BINARY_DIR/tbctl) with argv (NULL-terminated, at
 * most 30) against d as token (NULL: the admin's), through TESTBEDD_URL and a
 * 0600 TESTBEDD_TOKEN_FILE of its own, no proxy; its stdout and stderr go to a
 * file of its own under d->dir, so several may run at once.  Fails the test
 * when it cannot start it. */
void tb_test_tbctl_spawn(const struct tb_test_daemon *d, const char *token, const char *const argv[],
			 struct tb_test_tbctl *t);
/* Wait for t: its output into out (fails the test when it does not fit in
 * outsz); its exit status, or -1 when it did not exit. */
int tb_test_tbctl_wait(struct tb_test_tbctl *t, char *out, size_t outsz);
/* Spawn and wait: tbctl's exit status, its output in out. */
int tb_test_tbctl(const struct tb_test_daemon *d, const char *token, const char *const argv[], char *out, size_t outsz);

/* error.code of a JSON error reply, or "". */
const char *tb_test_error_code(const struct tb_test_resp *r);

#endif /* TB_TEST_DAEMON_H */
