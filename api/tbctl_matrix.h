/*
 * tbctl_matrix.h - what the tbctl matrix files share: formatting of
 * bitrates, durations and cells (tbctl_matrix_fmt.c) and following a matrix
 * live over the event stream (tbctl_matrix_watch.c).  The commands are in
 * tbctl_cmd_matrix.c.
 */
#ifndef TBCTL_MATRIX_H
#define TBCTL_MATRIX_H

#include <stddef.h>

#include <jansson.h>

#include "tbctl.h"

/* ---- tbctl_matrix_fmt.c ---- */
int mx_nomem(void);
long long mx_now_ms(void);
void mx_sleep_ms(long ms);
const char *mx_str_or(const json_t *obj, const char *key, const char *dflt);
double mx_jnum(const json_t *obj, const char *key, double dflt);
int mx_parse_id(const char *s, long long *id);
void mx_fmt_bps(char *buf, size_t n, double bps);
void mx_fmt_dur(char *buf, size_t n, double s);
void mx_fmt_count(char *buf, size_t n, double v);
void mx_fmt_percent(char *buf, size_t n, double v);
double mx_median_of(const json_t *cell, const char *key);
void mx_fmt_params(char *buf, size_t n, const json_t *p);
void mx_fmt_host(char *buf, size_t n, const json_t *o, const char *name_key, const char *os_key);
void mx_fmt_pair(char *buf, size_t n, const json_t *o);
json_t *mx_load_spec(const char *path);
char *mx_matrix_path(long long id, const char *tail);
size_t mx_columns(void);             /* the terminal's width, else 80 */
void mx_print_boot(const json_t *d); /* a matrix.boot event's data as a line */

void mx_fmt_metric(char *buf, size_t n, const char *metric, double v); /* by the metric's unit */

/* ---- tbctl_matrix_compare.c ---- */
/* 1 when metric is NULL or a cell statistic the API compares on, else 0
 * after saying so on stderr (checked before it goes into a URL). */
int mx_metric_ok(const char *metric);
/* --baseline, --max-drop and --metric as "/compare?..." into q, or -1 after
 * saying why on stderr. */
int mx_gate_query(const struct tbctl_args *a, char *q, size_t n);
/* GET .../compare and print it (--spread: both IQRs; --junit: the XML file);
 * TBCTL_EXIT_DROPPED when the gate fails. */
int mx_compare(const struct tbctl_ctx *ctx, long long id, const char *query);

/* ---- tbctl_matrix_watch.c ---- */
struct mx_watch;

void mx_watch_set_matrix(struct mx_watch *w, const json_t *m);
int mx_watch_load(struct mx_watch *w, int with_runs, int mark_seen, json_t **out);
int mx_watch_follow(struct mx_watch *w);
struct mx_watch *mx_watch_new(const struct tbctl_ctx *ctx, long long id);
void mx_watch_free(struct mx_watch *w);
int mx_watch_follow_new(const struct tbctl_ctx *ctx, long long id);
int mx_watch_load_kept(struct mx_watch *w);

#endif /* TBCTL_MATRIX_H */
