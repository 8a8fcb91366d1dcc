/* http_tls.c - testbedd's own TLS certificate and key, read at start and
 * again on SIGHUP (renewal): see http_edge.h.
 *
 * libmicrohttpd 0.9.75 takes a certificate once, at start
 * (MHD_OPTION_HTTPS_MEM_CERT/KEY), and has no call to change it.  Instead
 * the daemon is started with MHD_OPTION_HTTPS_CERT_CALLBACK: GnuTLS asks
 * pick_pair for the certificate at every handshake, and pick_pair answers
 * with the newest pair.  A connection keeps the pair of its handshake; a
 * replaced pair is kept until the edge stops (GnuTLS holds the pointers we
 * handed out while its session lives, and a renewal every few weeks costs a
 * few kilobytes).  The retrieve callback has no argument of ours, so the
 * pairs hang off one static: one TLS edge per process. */
#include "http_edge.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "crypto_secret.h"
#include "log.h"
#include "wipe.h"

#define TLS_CHAIN_MAX 8
#define TLS_FP_LEN 96 /* a SHA-256 as AB:CD:..., and its NUL */

/* One certificate chain and its key, as GnuTLS wants them. */
struct tls_pair {
	gnutls_pcert_st pcert[TLS_CHAIN_MAX];
	unsigned int npcert;
	gnutls_privkey_t key;
	struct tls_pair *older; /* the pairs this one replaced, kept until the edge stops */
};

struct tb_tls {
	const char *cert_path, *key_path; /* the configuration's strings */
	struct tls_pair *current;         /* guarded by active_mu */
};

static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tb_tls *active; /* the edge's, while it runs */

/* Read a PEM file whole (malloc'd, NUL-ended); a key must be readable by
 * its owner only.  The checks are tb_secret_open's, on the opened file (a
 * FIFO swapped in after a check cannot block the signal loop).  Messages
 * name the path, never the content. */
static int read_pem(const char *path, int secret, char **out, size_t *len, struct tb_error *err)
{
	struct tb_secret_file sf = {.dirfd = AT_FDCWD,
				    .name = path,
				    .shown = path,
				    .what = secret ? "the TLS key" : "the TLS certificate",
				    .field = "tls",
				    .flags = secret ? 0u : TB_SECRET_PUBLIC};
	struct stat st;
	char *buf;
	size_t n = 0;
	ssize_t k;
	int fd;

	*out = NULL;
	if ((fd = tb_secret_open(&sf, &st, err)) < 0)
		return fd;
	if (st.st_size <= 0 || st.st_size > 1024 * 1024) {
		close(fd);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s is empty or too large for a PEM file", path);
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "cannot read %s", path);
	}
	while (n < (size_t)st.st_size &&
	       ((k = read(fd, buf + n, (size_t)st.st_size - n)) > 0 || (k < 0 && errno == EINTR)))
		n += k > 0 ? (size_t)k : 0;
	close(fd);
	buf[n] = '\0';
	if (strstr(buf, "-----BEGIN ") == NULL) {
		tb_wipe(buf, n);
		free(buf);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s is not a PEM file", path);
	}
	*out = buf;
	*len = n;
	return 0;
}

static void pair_free(struct tls_pair *p)
{
	while (p != NULL) {
		struct tls_pair *older = p->older;

		for (unsigned int i = 0; i < p->npcert; i++)
			gnutls_pcert_deinit(&p->pcert[i]);
		if (p->key != NULL)
			gnutls_privkey_deinit(p->key); /* GnuTLS clears the key's numbers */
		free(p);
		p = older;
	}
}

/* 1 when key is the private half of the certificate's public key. */
static int key_matches(gnutls_privkey_t key, gnutls_pubkey_t cert_pub)
{
	unsigned char a[64], b[64];
	size_t la = sizeof(a), lb = sizeof(b);
	gnutls_pubkey_t pub;
	int ok;

	if (gnutls_pubkey_init(&pub) < 0)
		return 0;
	ok = gnutls_pubkey_import_privkey(pub, key, 0, 0) >= 0 &&
	     gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a, &la) >= 0 &&
	     gnutls_pubkey_get_key_id(cert_pub, GNUTLS_KEYID_USE_SHA256, b, &lb) >= 0 && la == lb &&
	     memcmp(a, b, la) == 0;
	gnutls_pubkey_deinit(pub);
	return ok;
}

/* Parse the PEM texts into a pair whose key belongs to its (first)
 * certificate.  The texts stay the caller's. */
static int pair_parse(const struct tb_tls *t, char *cert, size_t clen, char *key, size_t klen, struct tls_pair **out,
		      struct tb_error *err)
{
	struct tls_pair *p = calloc(1, sizeof(*p));
	gnutls_datum_t cd = {(unsigned char *)cert, (unsigned int)clen};
	gnutls_datum_t kd = {(unsigned char *)key, (unsigned int)klen};
	int rc;

	*out = NULL;
	if (p == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	p->npcert = TLS_CHAIN_MAX;
	if ((rc = gnutls_pcert_list_import_x509_raw(p->pcert, &p->npcert, &cd, GNUTLS_X509_FMT_PEM, 0)) < 0 ||
	    p->npcert == 0) {
		p->npcert = 0;
		pair_free(p);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s: no certificate chain (at most %d) in PEM: %s",
			       t->cert_path, TLS_CHAIN_MAX, gnutls_strerror(rc));
	}
	if ((rc = gnutls_privkey_init(&p->key)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		pair_free(p);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "%s: not a private key in PEM without a passphrase: %s",
			       t->key_path, gnutls_strerror(rc));
	}
	if (!key_matches(p->key, p->pcert[0].pubkey)) {
		pair_free(p);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "the key in %s does not belong to the certificate in %s",
			       t->key_path, t->cert_path);
	}
	*out = p;
	return 0;
}

/* Read both files into a checked pair; its SHA-256 fingerprint into fp. */
static int pair_load(const struct tb_tls *t, struct tls_pair **out, char fp[TLS_FP_LEN], struct tb_error *err)
{
	char *cert = NULL, *key = NULL;
	size_t clen = 0, klen = 0, n;
	unsigned char md[32];
	int rc;

	if ((rc = read_pem(t->cert_path, 0, &cert, &clen, err)) != 0 ||
	    (rc = read_pem(t->key_path, 1, &key, &klen, err)) != 0) {
		free(cert);
		return rc;
	}
	rc = pair_parse(t, cert, clen, key, klen, out, err);
	tb_wipe(key, klen);
	free(key);
	free(cert);
	fp[0] = '\0';
	n = sizeof(md);
	/* "AB:CD:...": 3 characters a byte, the last one's ':' is the NUL */
	if (rc == 0 && gnutls_fingerprint(GNUTLS_DIG_SHA256, &(*out)->pcert[0].cert, md, &n) >= 0)
		for (size_t i = 0; i < n && i < sizeof(md); i++)
			snprintf(fp + 3 * i, TLS_FP_LEN - 3 * i, "%02X%s", md[i], i + 1 < n ? ":" : "");
	return rc;
}

/* GnuTLS's question at each handshake: the newest pair. */
static int pick_pair(gnutls_session_t s, const gnutls_datum_t *req_ca_dn, int nreqs, const gnutls_pk_algorithm_t *algos,
		     int nalgos, gnutls_pcert_st **pcert, unsigned int *npcert, gnutls_privkey_t *key)
{
	int rc = -1;

	(void)s;
	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	pthread_mutex_lock(&active_mu);
	if (active != NULL && active->current != NULL) {
		*pcert = active->current->pcert;
		*npcert = active->current->npcert;
		*key = active->current->key;
		rc = 0;
	}
	pthread_mutex_unlock(&active_mu);
	return rc;
}

int edge_tls_open(const char *cert_path, const char *key_path, struct tb_tls **out, struct tb_error *err)
{
	struct tb_tls *t;
	char fp[TLS_FP_LEN];
	int rc;

	*out = NULL;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
	    MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)
		return tb_fail(err, TB_ERR_CONFIG, "tls",
			       "this libmicrohttpd was built without TLS or its certificate callback");
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	t->cert_path = cert_path;
	t->key_path = key_path;
	if ((rc = pair_load(t, &t->current, fp, err)) != 0) {
		free(t);
		return rc;
	}
	pthread_mutex_lock(&active_mu);
	if (active != NULL) {
		pthread_mutex_unlock(&active_mu);
		pair_free(t->current);
		free(t);
		return tb_fail(err, TB_ERR_CONFIG, "tls", "one TLS edge per process");
	}
	active = t;
	pthread_mutex_unlock(&active_mu);
	tb_info("http", "TLS certificate %s (SHA-256 %s)", cert_path, fp);
	*out = t;
	return 0;
}

void edge_tls_option(struct MHD_OptionItem *opt)
{
	/* MHD reads the option's pointer as the callback (POSIX: a function
	 * pointer fits a void *; the union spares ISO C's cast warning) */
	union {
		gnutls_certificate_retrieve_function2 *fn;
		void *ptr;
	} u = {.fn = pick_pair};

	*opt = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, u.ptr};
}

/* 1 when a and b hold the same certificate chain (then the same key: each
 * key belongs to its first certificate). */
static int same_chain(const struct tls_pair *a, const struct tls_pair *b)
{
	if (a->npcert != b->npcert)
		return 0;
	for (unsigned int i = 0; i < a->npcert; i++)
		if (a->pcert[i].cert.size != b->pcert[i].cert.size ||
		    memcmp(a->pcert[i].cert.data, b->pcert[i].cert.data, a->pcert[i].cert.size) != 0)
			return 0;
	return 1;
}

int edge_tls_reload(struct tb_tls *t, struct tb_error *err)
{
	struct tls_pair *p;
	char fp[TLS_FP_LEN];
	int rc, same;

	if ((rc = pair_load(t, &p, fp, err)) != 0) {
		tb_error("http", "TLS renewal refused, keeping the old certificate: %s", err->message);
		return rc;
	}
	/* every SIGHUP (an inventory reload too) reads the files: the same
	 * pair again is not kept beside the one in use (the replaced pairs are
	 * kept until the edge stops) */
	pthread_mutex_lock(&active_mu);
	if (!(same = same_chain(t->current, p))) {
		p->older = t->current;
		t->current = p;
	}
	pthread_mutex_unlock(&active_mu);
	if (same) {
		pair_free(p);
		tb_info("http", "TLS certificate unchanged in %s (SHA-256 %s)", t->cert_path, fp);
		return 0;
	}
	tb_info("http", "TLS certificate renewed from %s (SHA-256 %s): new connections use it", t->cert_path, fp);
	return 0;
}

void edge_tls_close(struct tb_tls *t)
{
	if (t == NULL)
		return;
	pthread_mutex_lock(&active_mu);
	if (active == t)
		active = NULL;
	pthread_mutex_unlock(&active_mu);
	pair_free(t->current);
	free(t);
}
