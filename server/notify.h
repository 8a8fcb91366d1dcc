/*
 * notify.h - notifications: admin rules that pick events off the bus (a
 * matrix ended or failed, a host went down, a BMC mismatch, ...) and send a
 * message to one sink each (a webhook: generic JSON, ntfy, Slack, Matrix).
 *
 * Messages go out from one background thread (never an HTTP thread): a
 * matching event is written to the store's outbox first, then sent, per
 * rule in order, retried with jittered exponential backoff; what was not
 * sent when testbedd stopped goes out after it starts again.  The notifier
 * keeps its place on the bus in the store, so events published while it was
 * behind or stopping are not lost.  A rule whose messages keep failing is
 * marked failing (cleared by the next message that goes through).
 *
 * Sinks reach http(s) URLs only; an address that resolves to loopback,
 * link-local (the cloud metadata range) or "this host" is refused when
 * connecting (notify_guard.c), unless the rule names that host in
 * allow_private_host.  Secrets (HMAC key, bearer token, a secret URL) are
 * read at send time from 0600 files the rule names, which must be in the
 * secrets directory (STATE_DIR/notify-secrets: an admin cannot make a rule
 * send testbedd's other secret files), never stored, served back or logged.
 *
 * Thread-safe.  Layout: notify_rules.c (rules: parse, show, match, the
 * message), notify_worker.c (the thread: bus, outbox, retries),
 * notify_sink.c (a message as the request a template wants, signing),
 * notify_guard.c (the HTTP call behind the connect guard),
 * notify_secret.c (secret files).
 */
#ifndef TB_NOTIFY_H
#define TB_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_notify;
struct tb_notify_rule_row;

#define TB_NOTIFY_MAX_ATTEMPTS 8        /* then the message is given up on (state failed) */
#define TB_NOTIFY_BACKOFF_MS 5000       /* first retry after 2.5..5 s, doubling ... */
#define TB_NOTIFY_BACKOFF_MAX_MS 900000 /* ... up to 7.5..15 min */
#define TB_NOTIFY_KEEP 200              /* finished deliveries kept per rule */

/* Make the notifier (not started).  TESTBEDD_TEST_NOTIFY_BACKOFF_MS (1..60000,
 * for tests only) shortens the first retry. */
int tb_notify_new(struct tb_services *sv, struct tb_notify **out, struct tb_error *err);
/* Start its thread: it reads the bus from where it stopped (from now on,
 * the first time) and sends what is pending. */
int tb_notify_start(struct tb_notify *n, struct tb_error *err);
/* Stop the thread (a send in progress is aborted) and leave the bus.
 * NULL or not started is fine. */
void tb_notify_stop(struct tb_notify *n);
void tb_notify_free(struct tb_notify *n);

/* Validate a rule body (POST/PUT) into the stored spec (a new reference,
 * the caller's) and its name (borrowed from body).  Checks the URL, the
 * triggers, the filters and that each secret file exists in secrets_dir
 * with mode 0600. */
int tb_notify_rule_parse(const json_t *body, const char *secrets_dir, json_t **spec, const char **name,
			 struct tb_error *err);
/* The secrets directory of a testbedd: STATE_DIR/notify-secrets (into buf). */
void tb_notify_secrets_dir(const char *state_dir, char *buf, size_t len);
/* A rule as the API shows it (new reference, NULL on no memory). */
json_t *tb_notify_rule_json(const struct tb_notify_rule_row *r);

/* Queue a sample message for rule id and wake the thread; its delivery id
 * into *delivery.  TB_ERR_NOT_FOUND when there is no such rule.  Blocks on
 * the store only. */
int tb_notify_test(struct tb_notify *n, int64_t id, const char *actor, int64_t *delivery, struct tb_error *err);
/* A rule changed: the thread reads the rules again (it reads them only
 * then) and wakes. */
void tb_notify_kick(struct tb_notify *n);

/* GET /metrics' notification families, appended to out: sent, failed
 * attempts and given up (counted by the thread since start), pending per
 * sink kind (json, ntfy, slack, matrix, email; one query of the rules with
 * their pending counts) and the oldest pending message's age (from the
 * thread's last round).  Blocks on the store. */
struct tb_outbuf;
void tb_notify_metrics(struct tb_notify *n, struct tb_outbuf *out);

#endif /* TB_NOTIFY_H */
