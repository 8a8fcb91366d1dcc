/*
 * ratelimit.h - the limit on failed authentications per client address.
 *
 * A table of addresses that failed recently: an address that failed
 * TB_RATE_MAX_FAILURES times within TB_RATE_WINDOW_S (a window that starts at
 * its first failure) is limited until that window ends.  Only failures count:
 * the edge checks a credential first and refuses with 429 only one that does
 * not check out, so a good token is never locked out by a stranger sharing
 * its address (a reverse proxy, a NAT).
 *
 * Keys: an IPv4 address whole, an IPv6 address by its /64 (one host usually
 * owns a whole /64, so cycling addresses in it gains nothing).  The table
 * holds TB_RATE_SLOTS keys; a new key takes an empty or expired slot, else
 * the least recently failed slot that is not limited, else the limited slot
 * whose window ends first: an attacker must fail from TB_RATE_SLOTS other
 * keys within one window to free a limited one.
 *
 * Thread-safe (one mutex, a scan of the table: no I/O).
 */
#ifndef TB_RATELIMIT_H
#define TB_RATELIMIT_H

#include <stdint.h>

#include "error.h"

#define TB_RATE_MAX_FAILURES 10
#define TB_RATE_WINDOW_S 60
#define TB_RATE_SLOTS 1024

struct tb_ratelimit;

/* A limiter of max failures per window_s seconds; NULL on out of memory. */
struct tb_ratelimit *tb_ratelimit_new(int max_failures, int window_s);
void tb_ratelimit_free(struct tb_ratelimit *rl);

/* The key of a numeric address ("192.0.2.1", "2001:db8::1%eth0") into key:
 * IPv4 (also v4-mapped IPv6) whole, IPv6 as "<prefix>::/64"; anything else
 * as it is (truncated). */
void tb_ratelimit_key(const char *addr, char *key, size_t len);

/* 0 when addr may try again, else TB_ERR_RATE_LIMITED (err filled) and
 * *retry_after_s the seconds left in its window (at least 1). */
int tb_ratelimit_check(struct tb_ratelimit *rl, const char *addr, int *retry_after_s, struct tb_error *err);

/* Count a failure of addr.  Returns 1 when this failure is the one that made
 * addr limited (once per window: for a single log line or audit row), else 0;
 * *retry_after_s (may be NULL) gets the seconds left when addr is limited. */
int tb_ratelimit_failed(struct tb_ratelimit *rl, const char *addr, int *retry_after_s);

/* For tests: now in seconds as the limiter sees it (monotonic). */
int64_t tb_ratelimit_now(void);

#endif /* TB_RATELIMIT_H */
