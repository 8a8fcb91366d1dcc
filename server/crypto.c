/* crypto.c - hashes, MACs, random bytes and base64url from GnuTLS and
 * nettle, the maintained libraries libmicrohttpd and libcurl-gnutls already
 * load into the process: see crypto.h.  Nothing cryptographic is written here
 * by hand. */
#include "crypto.h"

#include <stdio.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nettle/base64.h>
#include <nettle/memops.h>

#include "error.h"
#include "wipe.h"

void tb_sha256(const void *data, size_t len, uint8_t out[TB_SHA256_LEN])
{
	/* gnutls_hash_fast fails only when SHA-256 is disabled (FIPS policies
	 * never do that); leave a digest that matches nothing then. */
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, out) != 0)
		tb_random_bytes(out, TB_SHA256_LEN);
}

int tb_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len, uint8_t out[TB_SHA256_LEN])
{
	return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, keylen, data, len, out) == 0 ? 0 : TB_ERR_INTERNAL;
}

int tb_random_bytes(void *buf, size_t len)
{
	/* GNUTLS_RND_KEY: the strongest level, meant for long-term keys */
	return gnutls_rnd(GNUTLS_RND_KEY, buf, len) == 0 ? 0 : TB_ERR_IO;
}

size_t tb_base64url(const uint8_t *in, size_t len, char *out)
{
	struct base64_encode_ctx ctx;
	size_t o;

	base64url_encode_init(&ctx);
	o = base64_encode_update(&ctx, out, len, in);
	o += base64_encode_final(&ctx, out + o);
	/* nettle pads with '='; tokens and cookies carry none */
	while (o > 0 && out[o - 1] == '=')
		o--;
	out[o] = '\0';
	return o;
}

size_t tb_b64_encode(const void *in, size_t len, char *out)
{
	size_t o = BASE64_ENCODE_RAW_LENGTH(len);

	base64_encode_raw(out, len, (const uint8_t *)in);
	out[o] = '\0';
	return o;
}

void tb_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

int tb_ct_equal(const void *a, const void *b, size_t len)
{
	return memeql_sec(a, b, len) != 0;
}

int tb_random_secret(const char *prefix, char *out, size_t outlen)
{
	uint8_t raw[32];
	char enc[48];
	int rc;

	if ((rc = tb_random_bytes(raw, sizeof(raw))) != 0)
		return rc;
	tb_base64url(raw, sizeof(raw), enc);
	tb_wipe(raw, sizeof(raw));
	rc = (size_t)snprintf(out, outlen, "%s%s", prefix, enc) >= outlen ? TB_ERR_INTERNAL : 0;
	tb_wipe(enc, sizeof(enc));
	return rc;
}
