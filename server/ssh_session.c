/*
 * ssh_session.c - one SSH session: explicit libssh options, connect, host-key
 * pinning, public-key authentication, close.  See ssh.h and ssh_internal.h.
 */
#include "ssh_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fixed, so that the pinned fingerprint is always of the same key: the
 * ed25519 one when the server has it (libssh 0.10's own default order
 * prefers it too, and would also reorder by known_hosts, which we don't use). */
#define HOSTKEY_ALGOS                                          \
	"ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384," \
	"ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256"

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_rc;

static void lib_init_once(void)
{
	/* Needed when libssh is linked statically, harmless otherwise. */
	lib_rc = ssh_init();
}

int tb_ssh_lib_init(struct tb_error *err)
{
	pthread_once(&lib_once, lib_init_once);
	if (lib_rc != SSH_OK)
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "libssh failed to initialise");
	return 0;
}

/* Disconnect and free c's libssh session, if any; c itself stays. */
static void conn_end_session(struct conn *c)
{
	if (c->standby != NULL) { /* its shell reads EOF and exits 125 */
		ssh_channel_free(c->standby);
		c->standby = NULL;
	}
	if (c->s != NULL) {
		ssh_disconnect(c->s);
		ssh_free(c->s);
		c->s = NULL;
	}
}

void tb_ssh_conn_close(struct conn *c)
{
	if (c == NULL)
		return;
	conn_end_session(c);
	free(c->key);
	free(c);
}

static int load_key(const struct tb_ssh_target *t, ssh_key *key, struct tb_error *err)
{
	FILE *f;

	if (t->key_file == NULL || *t->key_file == '\0')
		return tb_fail(err, TB_ERR_CONFIG, "key_file", "%s (%s): no ssh key file is configured; set key_file",
			       mname(t), oname(t));
	/* libssh says only "SSH_EOF" for a missing file: ask the OS why. */
	f = fopen(t->key_file, "r");
	if (f == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "key_file",
			       "%s (%s): cannot read the ssh key file %s (%s); set key_file "
			       "to a private key readable by testbedd",
			       mname(t), oname(t), t->key_file, strerror(errno));
	fclose(f);
	if (ssh_pki_import_privkey_file(t->key_file, NULL, NULL, NULL, key) != SSH_OK)
		return tb_fail(err, TB_ERR_CONFIG, "key_file",
			       "%s (%s): %s is not an unencrypted private key; use a key "
			       "without passphrase (ssh-keygen -t ed25519 -N '')",
			       mname(t), oname(t), t->key_file);
	return 0;
}

static int set_options(ssh_session s, const struct tb_ssh_target *t)
{
	bool no = false;
	int verbosity = SSH_LOG_NOLOG, nodelay = 1;
	unsigned int port = port_of(t);
	long timeout = timeout_s_of(t);

	/* HOST first: it would take a "user@" prefix as the user. */
	if (ssh_options_set(s, SSH_OPTIONS_HOST, t->address) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_USER, uname_of(t)) < 0 || ssh_options_set(s, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_HOSTKEYS, HOSTKEY_ALGOS) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity) < 0)
		return -1;
	return 0;
}

/* Read the presented host key's fingerprint into fp ("SHA256:..."). */
static int server_fp(ssh_session s, const struct tb_ssh_target *t, char fp[TB_SSH_FP_MAX], struct tb_error *err)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *text = NULL;
	int rc = 0;

	if (ssh_get_server_publickey(s, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0 ||
	    (text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen)) == NULL)
		rc = tb_fail(err, TB_ERR_INTERNAL, mname(t), "%s (%s): cannot read the server's host key: %s", mname(t),
			     oname(t), ssh_get_error(s));
	else
		/* "SHA256:" + unpadded base64, exactly as ssh-keygen -lf prints */
		snprintf(fp, TB_SSH_FP_MAX, "%s", text);
	ssh_string_free_char(text);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

/* TCP connect and key exchange; fills c->s and c->host_fp. */
static int conn_handshake(struct conn *c, const struct tb_ssh_target *t, struct tb_error *err)
{
	int rc;

	if ((rc = tb_ssh_lib_init(err)) != 0)
		return rc;
	if (t->address == NULL || *t->address == '\0')
		return tb_fail(err, TB_ERR_CONFIG, "address", "%s (%s): no address to connect to; set its address",
			       mname(t), oname(t));
	c->s = ssh_new();
	if (c->s == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory for an ssh session");
	c->timeout_s = timeout_s_of(t);
	if (set_options(c->s, t) != 0)
		return tb_fail(err, TB_ERR_INTERNAL, mname(t), "%s (%s): libssh refused an option: %s", mname(t),
			       oname(t), ssh_get_error(c->s));
	if (ssh_connect(c->s) != SSH_OK)
		return tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			       "%s (%s) at %s port %u does not answer ssh (%s); check that it "
			       "is on, booted into %s and running sshd",
			       mname(t), oname(t), t->address, port_of(t), ssh_get_error(c->s), oname(t));
	return server_fp(c->s, t, c->host_fp, err);
}

/* A new authenticated session, host key checked against the pin. */
int tb_ssh_conn_open(struct conn *c, const struct tb_ssh_target *t, struct tb_ssh_result *res, struct tb_error *err)
{
	ssh_key key = NULL;
	int rc;

	if (t->pinned_fp != NULL && strncmp(t->pinned_fp, "SHA256:", 7) != 0)
		return tb_fail(err, TB_ERR_CONFIG, "pinned_fp",
			       "%s (%s): the pinned host key '%s' is not of the form "
			       "SHA256:... that ssh-keygen -lf prints; fix it or trust the "
			       "host again with tbctl host trust %s",
			       mname(t), oname(t), t->pinned_fp, mname(t));
	/* The key first: a config mistake should not cost a handshake. */
	if ((rc = load_key(t, &key, err)) != 0)
		return rc;
	if ((rc = conn_handshake(c, t, err)) != 0)
		goto out;
	snprintf(res->host_fp, sizeof(res->host_fp), "%s", c->host_fp);
	if (t->pinned_fp == NULL) {
		rc = tb_fail(err, TB_ERR_HOSTKEY, mname(t),
			     "%s (%s) presented host key %s, and no host key is pinned for "
			     "it; an admin can accept it with tbctl host trust %s",
			     mname(t), oname(t), c->host_fp, mname(t));
		goto out;
	}
	if (strcmp(t->pinned_fp, c->host_fp) != 0) {
		rc = tb_fail(err, TB_ERR_HOSTKEY, mname(t),
			     "%s (%s) presented host key %s, which is not the pinned %s; an "
			     "admin can accept it with tbctl host trust %s",
			     mname(t), oname(t), c->host_fp, t->pinned_fp, mname(t));
		goto out;
	}
	switch (ssh_userauth_publickey(c->s, NULL, key)) {
	case SSH_AUTH_SUCCESS: rc = 0; break;
	case SSH_AUTH_DENIED:
	case SSH_AUTH_PARTIAL:
		rc = tb_fail(err, TB_ERR_UNAUTHORIZED, mname(t),
			     "%s (%s) refused the key %s for user %s; add %s.pub to that "
			     "user's authorized_keys on %s, or set key_file to the right key",
			     mname(t), oname(t), t->key_file, uname_of(t), t->key_file, mname(t));
		break;
	default:
		rc = tb_fail(err, TB_ERR_UNREACHABLE, mname(t),
			     "%s (%s): logging in as %s failed (%s); check the host and "
			     "its sshd log",
			     mname(t), oname(t), uname_of(t), ssh_get_error(c->s));
		break;
	}
out:
	ssh_key_free(key);
	return rc;
}

int tb_ssh_host_key(const struct tb_ssh_target *t, char fp[TB_SSH_FP_MAX], struct tb_error *err)
{
	struct conn c;
	int rc;

	fp[0] = '\0';
	if (t == NULL)
		return tb_fail(err, TB_ERR_INVALID, NULL, "no ssh target given");
	memset(&c, 0, sizeof(c));
	rc = conn_handshake(&c, t, err);
	if (rc == 0)
		snprintf(fp, TB_SSH_FP_MAX, "%s", c.host_fp);
	conn_end_session(&c);
	return rc;
}
