/*
 * validate.h - predicates for the values testbedd accepts from its
 * inventory and its API: names, addresses, paths, fingerprints.  Each
 * returns 1 when s has the shape, else 0.  Pure functions, no allocation.
 */
#ifndef TB_VALIDATE_H
#define TB_VALIDATE_H

int tb_valid_name(const char *s); /* machine, OS, link: [a-z0-9][a-z0-9_-]{0,31} */

/* A buffer for such a name (1..32 characters) with its NUL: every buffer
 * that keeps a machine, OS or link name is this size. */
#define TB_NAME_MAX 40
int tb_valid_user(const char *s); /* a login name */
int tb_valid_ipv4(const char *s);
int tb_valid_address(const char *s); /* IPv4, IPv6 or a DNS name */
int tb_valid_cidr(const char *s);    /* address/prefix */
/* Why the IPv6 address of s ("addr" or "addr/len") cannot carry a run to or
 * from a host, or NULL when it can: an IPv4-mapped or -compatible one goes
 * over IPv4 on the wire, a link-local one needs a zone, :: and multicast
 * groups are no host; "not an IPv6 address" when it is none. */
const char *tb_ipv6_unusable(const char *s);
int tb_valid_path(const char *s);        /* absolute, no control characters */
int tb_valid_env(const char *s);         /* an environment variable name */
int tb_valid_fingerprint(const char *s); /* "SHA256:" + 43 base64 characters */
int tb_valid_mac(const char *s);         /* aa:bb:cc:dd:ee:ff */
int tb_valid_ifname(const char *s);      /* 1..15 of A-Z a-z 0-9 . _ - */
int tb_valid_entry(const char *s);       /* a GRUB entry: 1..128 printable, tb_text_refused */

/*
 * Free text a person typed (a matrix name, a GRUB title): the code point of
 * the first character s[0..len) must not hold, or -1 when it holds none.
 * Refused: C0 and NUL, DEL, C1 (U+0080..U+009F), and the Unicode format
 * characters that hide or reorder text: U+200B..U+200F, U+202A..U+202E,
 * U+2066..U+2069, U+FEFF.  s is UTF-8 (jansson and libyaml check that).
 */
#include <stddef.h>
long tb_text_refused(const char *s, size_t len);

/* A decimal id: digits only, min..INT64_MAX; 0 or -1. */
#include <stdint.h>
int tb_parse_id(const char *s, int64_t min, int64_t *out);

/* The value of a hex digit, or -1. */
int tb_hexval(int c);

/* Checks of a parsed JSON object (a request body), naming the field on
 * failure (error.h). */
#include <jansson.h>

struct tb_error;

/* Refuse body fields not in allowed (NULL-terminated), naming the first one. */
int tb_json_only(const json_t *body, const char *const allowed[], struct tb_error *err);

/* A required string field; TB_ERR_INVALID naming it when absent or not a string. */
int tb_json_string(const json_t *body, const char *key, int required, const char **out, struct tb_error *err);

#endif /* TB_VALIDATE_H */
