/*
 * rfmock.h - tests/redfish/redfish_mock.py for integration tests: a test CA
 * and certificates made with openssl, and two mocks on 127.0.0.1 (one with
 * a certificate for IP 127.0.0.1 signed by that CA, one self-signed), each
 * logging every request to a JSON-lines file.
 *
 * A mock because no Redfish BMC emulator is packaged for Debian (DMTF's
 * Redfish-Mockup-Server and sushy-tools are pip-only).  The mocks' pids are
 * kept and tb_rfmock_stop ends them by pid.  Everything lives in a fresh
 * 0700 directory under /tmp, removed by stop.  Blocking; not thread-safe
 * except tb_rfmock_log / tb_rfmock_control, which may be called from the
 * test's thread while a driver runs in another.
 */
#ifndef TB_TEST_RFMOCK_H
#define TB_TEST_RFMOCK_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct tb_rfmock {
	char dir[64];
	char ca[128];                   /* the test CA (PEM) */
	char cert[128], key[128];       /* the CA-signed server certificate */
	char ss_cert[128], ss_key[128]; /* the self-signed one */
	char pwfile[128];               /* 0600, the password the mocks accept for user admin */
	char badpw[128];                /* 0600, another password */
	char password[64];
	char log[128], sslog[128]; /* each mock's request log */
	char base[64], ssbase[64]; /* "https://127.0.0.1:PORT" of each */
	pid_t pid, ss_pid;
	char tokens[64][64]; /* session tokens the mocks issued (read from the logs) */
	int ntokens;
};

/* Make the certificates and start both mocks.  0; 1 when python3 or
 * openssl is missing (skip); -1 on failure (printed). */
int tb_rfmock_start(struct tb_rfmock *m);

/* Stop both mocks (SIGTERM by pid, waited for) and remove the directory. */
void tb_rfmock_stop(struct tb_rfmock *m);

/* POST /mock/config with body (JSON), or GET /mock/state when body is NULL,
 * on the CA-signed mock: its state, a new reference; NULL on failure. */
json_t *tb_rfmock_control(struct tb_rfmock *m, const char *body);

/* Default behaviour (every ResetType allowed, no delay, stable ETags) and an empty log. */
int tb_rfmock_reset(struct tb_rfmock *m);

/* The CA-signed mock's PowerState now ("On", "Off"; "" on failure). */
const char *tb_rfmock_power(struct tb_rfmock *m);

/* The requests in log (m->log or m->sslog) as a JSON array, a new reference;
 * adds the session tokens it shows to m->tokens. */
json_t *tb_rfmock_log(struct tb_rfmock *m, const char *log);

/* The ResetType values POSTed since the last reset, joined with ",". */
void tb_rfmock_resets(struct tb_rfmock *m, char *out, size_t sz);

#endif /* TB_TEST_RFMOCK_H */
