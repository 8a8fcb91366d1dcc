/*
 * crypto.h - the little cryptography testbedd needs for its own secrets:
 * SHA-256 (tokens and sessions are stored as hashes), HMAC-SHA256, random
 * bytes, base64url and a constant-time comparison.  All of it comes from
 * GnuTLS (hash, MAC, random) and nettle (base64url, comparison): nothing
 * cryptographic is hand-written.  Wiping secrets: wipe.h.  No allocation;
 * thread-safe; nothing blocks.
 */
#ifndef TB_CRYPTO_H
#define TB_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define TB_SHA256_LEN 32

void tb_sha256(const void *data, size_t len, uint8_t out[TB_SHA256_LEN]);

/* HMAC-SHA256 of data under key.  0 or TB_ERR_INTERNAL. */
int tb_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len, uint8_t out[TB_SHA256_LEN]);

/* Fill buf with len random bytes (gnutls_rnd, key level).  0 or TB_ERR_IO. */
int tb_random_bytes(void *buf, size_t len);

/* Standard base64 with padding (console bytes, data: URIs): out holds
 * 4*((len+2)/3)+1 bytes; returns the length. */
size_t tb_b64_encode(const void *in, size_t len, char *out);
/* base64url without padding; out must hold 4*ceil(len/3)+1 bytes.  Returns length. */
size_t tb_base64url(const uint8_t *in, size_t len, char *out);

/* Lower-case hex; out must hold 2*len+1 bytes. */
void tb_hex(const uint8_t *in, size_t len, char *out);

/* 1 when a and b (both len bytes) are equal; time depends only on len. */
int tb_ct_equal(const void *a, const void *b, size_t len);

/* A new random secret: prefix followed by 43 base64url characters (256 bits). */
int tb_random_secret(const char *prefix, char *out, size_t outlen);

#endif /* TB_CRYPTO_H */
