/* report.c - what a report shows, read from the store, and the helpers its
 * renderers share (report.h, report_internal.h). */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "hostsnap.h"
#include "report_internal.h"
#include "results.h"
#include "services.h"
#include "store.h"
#include "timeutil.h"

#ifndef TB_VERSION
#define TB_VERSION "unknown"
#endif

const struct rp_metric rp_metrics[] = {
	{"receiver_bps", "receiver bitrate"}, {"sender_bps", "sender bitrate"}, {"lost_percent", "lost"},
	{"retransmits", "retransmits"},       {"jitter_ms", "jitter"},          {NULL, NULL},
};

/* ---- the helpers ---- */

void rp_esc(struct tb_outbuf *b, const char *s)
{
	const char *run = s != NULL ? s : "";

	for (const char *p = run; *p; p++) {
		const char *ent = *p == '&'    ? "&amp;"
				  : *p == '<'  ? "&lt;"
				  : *p == '>'  ? "&gt;"
				  : *p == '"'  ? "&quot;"
				  : *p == '\'' ? "&#39;"
					       : NULL;

		if (ent == NULL)
			continue;
		tb_outbuf_add(b, run, (size_t)(p - run));
		tb_outbuf_puts(b, ent);
		run = p + 1;
	}
	tb_outbuf_puts(b, run);
}

void rp_fmt(char *buf, size_t n, const char *metric, double v)
{
	if (isnan(v))
		snprintf(buf, n, "—");
	else if (strcmp(metric, "lost_percent") == 0)
		snprintf(buf, n, "%.2f %%", v);
	else if (strcmp(metric, "retransmits") == 0)
		snprintf(buf, n, "%.0f", v);
	else if (strcmp(metric, "jitter_ms") == 0)
		snprintf(buf, n, "%.3f ms", v);
	else if (v >= 1e9)
		snprintf(buf, n, "%.2f Gbit/s", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.2f Mbit/s", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, n, "%.2f kbit/s", v / 1e3);
	else
		snprintf(buf, n, "%.0f bit/s", v);
}

double rp_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *rp_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

void rp_pair(char *buf, size_t n, const json_t *c)
{
	const char *cos = rp_str(c, "client_os"), *sos = rp_str(c, "server_os");

	snprintf(buf, n, "%s%s%s%s → %s%s%s%s", rp_str(c, "client"), *cos ? " (" : "", cos, *cos ? ")" : "",
		 rp_str(c, "server"), *sos ? " (" : "", sos, *sos ? ")" : "");
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void rp_params(char *buf, size_t n, const json_t *params)
{
	const char *keys[32], *k;
	size_t nk = 0, used = 0;
	json_t *v;

	buf[0] = '\0';
	json_object_foreach((json_t *)params, k, v)
	{
		/* unset (null, false) and what has a column of its own are left out */
		if (json_is_null(v) || json_is_false(v) || strcmp(k, "protocol") == 0 || strcmp(k, "direction") == 0)
			continue;
		if (nk < sizeof(keys) / sizeof(keys[0]))
			keys[nk++] = k;
	}
	qsort(keys, nk, sizeof(keys[0]), cmp_key);
	for (size_t i = 0; i < nk && used < n; i++) {
		char val[64];

		v = json_object_get(params, keys[i]);
		if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(val, sizeof(val), "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(val, sizeof(val), "%g", json_real_value(v));
		else
			snprintf(val, sizeof(val), "%s", json_is_true(v) ? "true" : json_is_false(v) ? "false" : "…");
		used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", used > 0 ? " " : "", keys[i], val);
	}
}

void rp_label(char *buf, size_t n, const json_t *c)
{
	char pair[200], params[200];
	const json_t *cell = json_object_get(c, "cell");

	rp_pair(pair, sizeof(pair), c);
	rp_params(params, sizeof(params), json_object_get(c, "params"));
	if (json_is_integer(cell))
		snprintf(buf, n, "#%lld %s %s %s%s%s", (long long)json_integer_value(cell), pair, rp_str(c, "protocol"),
			 rp_str(c, "direction"), *params ? " " : "", params);
	else
		snprintf(buf, n, "%s %s %s%s%s", pair, rp_str(c, "protocol"), rp_str(c, "direction"),
			 *params ? " " : "", params);
}

const char *const rp_cell_cols[] = {"cell", "client → server",   "protocol", "direction", "params",
				    "n",    "receiver (median)", "IQR",      "CV",        "sender (median)",
				    "lost", "retransmits",       "jitter",   NULL};

int rp_cell_num(int col)
{
	return col == 0 || col >= 5;
}

/* "q1 – q3" of metric's values in o (prefix "baseline_" or ""). */
static void iqr(char *buf, size_t n, const json_t *o, const char *q1key, const char *q3key, const char *metric)
{
	char x[48], y[48];

	rp_fmt(x, sizeof(x), metric, rp_num(o, q1key));
	rp_fmt(y, sizeof(y), metric, rp_num(o, q3key));
	snprintf(buf, n, "%s – %s", x, y);
}

int rp_cell_row(const json_t *c, const char *noisy_mark, char vals[RP_CELL_NCOLS][RP_TEXT])
{
	static const char *const medians[] = {"sender_bps", "lost_percent", "retransmits", "jitter_ms"};
	const json_t *rx = json_object_get(c, "receiver_bps");
	int noisy = json_is_true(json_object_get(rx, "noisy"));

	snprintf(vals[0], RP_TEXT, "%lld", (long long)json_integer_value(json_object_get(c, "cell")));
	rp_pair(vals[1], RP_TEXT, c);
	snprintf(vals[2], RP_TEXT, "%s", rp_str(c, "protocol"));
	snprintf(vals[3], RP_TEXT, "%s", rp_str(c, "direction"));
	rp_params(vals[4], RP_TEXT, json_object_get(c, "params"));
	snprintf(vals[5], RP_TEXT, "%lld of %lld", (long long)json_integer_value(json_object_get(c, "n")),
		 (long long)json_integer_value(json_object_get(c, "runs")));
	rp_fmt(vals[6], RP_TEXT, "receiver_bps", rp_num(rx, "median"));
	iqr(vals[7], RP_TEXT, rx, "q1", "q3", "receiver_bps");
	if (isnan(rp_num(rx, "cv")))
		snprintf(vals[8], RP_TEXT, "—");
	else
		snprintf(vals[8], RP_TEXT, "%.1f %%%s", rp_num(rx, "cv") * 100, noisy ? noisy_mark : "");
	for (int k = 0; k < 4; k++)
		rp_fmt(vals[9 + k], RP_TEXT, medians[k], rp_num(json_object_get(c, medians[k]), "median"));
	return noisy;
}

const char *const rp_ab_cols[] = {"cell", "what",   "baseline (median)", "baseline IQR", "now (median)",
				  "IQR",  "change", "IQRs overlap",      "verdict",      NULL};

int rp_ab_num(int col)
{
	return col == 0 || (col >= 2 && col <= 6);
}

int rp_ab_row(const json_t *row, const char *metric, char vals[RP_AB_NCOLS][RP_TEXT])
{
	const json_t *ov = json_object_get(row, "overlap");
	const char *v = rp_str(row, "verdict"), *sp;
	char label[RP_TEXT];

	if (json_is_integer(json_object_get(row, "cell")))
		snprintf(vals[0], RP_TEXT, "%lld", (long long)json_integer_value(json_object_get(row, "cell")));
	else
		snprintf(vals[0], RP_TEXT, "—");
	rp_label(label, sizeof(label), row); /* without its "#N " */
	sp = label[0] == '#' ? strchr(label, ' ') : NULL;
	snprintf(vals[1], RP_TEXT, "%s", sp != NULL ? sp + 1 : label);
	rp_fmt(vals[2], RP_TEXT, metric, rp_num(row, "baseline_median"));
	iqr(vals[3], RP_TEXT, row, "baseline_q1", "baseline_q3", metric);
	rp_fmt(vals[4], RP_TEXT, metric, rp_num(row, "median"));
	iqr(vals[5], RP_TEXT, row, "q1", "q3", metric);
	if (isnan(rp_num(row, "change_pct")))
		snprintf(vals[6], RP_TEXT, "—");
	else
		snprintf(vals[6], RP_TEXT, "%+.2f %%", rp_num(row, "change_pct"));
	snprintf(vals[7], RP_TEXT, "%s",
		 json_is_true(ov)                                      ? "yes"
		 : !json_is_false(ov)                                  ? "—"
		 : json_is_true(json_object_get(row, "beyond_spread")) ? "no: beyond the spread"
								       : "no (a change within the allowed)");
	snprintf(vals[8], RP_TEXT, "%s", v);
	return strcmp(v, "dropped") == 0 || strcmp(v, "failed") == 0;
}

const char *const rp_host_cols[] = {"host",     "OS",  "kernel",     "CPU",     "memory",      "NIC driver",
				    "firmware", "MTU", "congestion", "buffers", "offloads on", NULL};

/* A JSON value as text into buf ("" for none). */
static void text_of(char *buf, size_t n, const json_t *v)
{
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, n, "%g", json_real_value(v));
	else
		buf[0] = '\0';
}

/* Columns 1.. of rp_host_cols (0, the host, is the caller's). */
void rp_host_values(const json_t *meta, char vals[][160])
{
	const json_t *nic = json_object_get(meta, "nic"), *tcp = json_object_get(meta, "tcp"), *v;
	const char *k;
	size_t used = 0;

	snprintf(vals[1], 160, "%s", rp_str(json_object_get(meta, "os"), "name"));
	snprintf(vals[2], 160, "%s %s", rp_str(meta, "kernel"), rp_str(meta, "release"));
	if (json_object_get(meta, "freebsd_version") != NULL)
		snprintf(vals[2], 160, "%s %s", rp_str(meta, "kernel"),
			 rp_str(json_object_get(meta, "freebsd_version"), "kernel"));
	snprintf(vals[3], 160, "%s%s", rp_str(json_object_get(meta, "cpu"), "model"),
		 json_is_integer(json_object_get(json_object_get(meta, "cpu"), "count")) ? " ×" : "");
	if (json_is_integer(json_object_get(json_object_get(meta, "cpu"), "count")))
		snprintf(vals[3] + strlen(vals[3]), 160 - strlen(vals[3]), "%lld",
			 (long long)json_integer_value(json_object_get(json_object_get(meta, "cpu"), "count")));
	if (json_is_number(json_object_get(meta, "memory_bytes")))
		snprintf(vals[4], 160, "%.1f GiB", rp_num(meta, "memory_bytes") / 1073741824.0);
	else
		vals[4][0] = '\0';
	snprintf(vals[5], 160, "%s%s%s%s%s", rp_str(nic, "interface"), *rp_str(nic, "interface") ? ": " : "",
		 rp_str(nic, "driver"), *rp_str(nic, "driver_version") ? " " : "", rp_str(nic, "driver_version"));
	text_of(vals[6], 160, json_object_get(nic, "firmware"));
	text_of(vals[7], 160, json_object_get(nic, "mtu"));
	text_of(vals[8], 160, json_object_get(tcp, "congestion_control"));
	vals[9][0] = '\0';
	json_object_foreach((json_t *)tcp, k, v)
	{
		if (json_is_number(v) && used < 150 && (strstr(k, "max") != NULL || strstr(k, "space") != NULL))
			used += (size_t)snprintf(vals[9] + used, 160 - used, "%s%s=%lld", used ? " " : "", k,
						 (long long)json_number_value(v));
	}
	used = 0;
	vals[10][0] = '\0';
	json_object_foreach((json_t *)json_object_get(nic, "offloads"), k, v)
	{
		if (json_is_true(v) && used < 150)
			used += (size_t)snprintf(vals[10] + used, 160 - used, "%s%s", used ? " " : "", k);
	}
}

/* ---- gathering ---- */

/* A cell's first run and its commands onto the report's list, or counted
 * in commands_left past TB_REPORT_MAX_COMMANDS (a failed append leaves
 * nomem set). */
struct commands_ctx {
	struct tb_report *r;
	int nomem;
};

static void on_commands(void *cls, const struct tb_run_commands *c)
{
	struct commands_ctx *x = cls;

	if (json_array_size(x->r->commands) >= TB_REPORT_MAX_COMMANDS) {
		x->r->commands_left++;
		return;
	}
	x->nomem |= json_array_append_new(x->r->commands,
					  json_pack("{s:i, s:I, s:s?, s:s?}", "cell", c->cell, "run",
						    (json_int_t)c->run_id, "client_command", c->client_command,
						    "server_command", c->server_command)) != 0;
}

/* The commands of the first run of each cell, cell order, at most
 * TB_REPORT_MAX_COMMANDS: one store query for them all. */
static int commands_of(const struct tb_results_src *src, int64_t id, struct tb_report *r, struct tb_error *err)
{
	struct commands_ctx x = {r, 0};
	int rc;

	if ((r->commands = json_array()) == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_run_first_commands(src->store, id, on_commands, &x, err)) != 0)
		return rc;
	return x.nomem ? tb_fail(err, TB_ERR_NOMEM, "", "out of memory") : 0;
}

int tb_report_gather(struct tb_services *sv, const struct tb_results_src *src, int64_t id, int64_t baseline,
		     const char *metric, struct tb_report *r, struct tb_error *err)
{
	json_t *snaps = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->version = TB_VERSION;
	r->link_base = sv->cfg != NULL ? sv->cfg->public_url : NULL;
	tb_time_format(tb_now(), r->generated);
	if ((rc = tb_results_matrix_json(src, id, 0, &r->matrix, err)) != 0 ||
	    (rc = tb_results_table_json(src, id, &r->table, err)) != 0 ||
	    (rc = tb_hostsnap_json(sv, id, &snaps, err)) != 0 || (rc = commands_of(src, id, r, err)) != 0)
		goto fail;
	r->hosts = json_incref(json_object_get(snaps, "hosts"));
	json_decref(snaps);
	snaps = NULL;
	rp_gather_flames(sv->cfg != NULL ? sv->cfg->state_dir : NULL, r);
	if (baseline > 0) {
		json_t *base = NULL;

		/* this matrix's table is r->table: only the baseline's is read */
		if ((rc = tb_results_table_json(src, baseline, &base, err)) == 0)
			rc = tb_compare_tables(r->table, base, 5.0, metric != NULL ? metric : "receiver_bps",
					       &r->compare, err);
		json_decref(base);
		if (rc == 0)
			rc = tb_hostsnap_diff(sv, id, baseline, &r->diff, err);
		if (rc != 0) {
			if (rc == TB_ERR_NOT_FOUND)
				snprintf(err->field, sizeof(err->field), "baseline");
			goto fail;
		}
	}
	if (r->hosts == NULL)
		r->hosts = json_array();
	return 0;
fail:
	json_decref(snaps);
	tb_report_free(r);
	return rc;
}

void tb_report_free(struct tb_report *r)
{
	json_decref(r->matrix);
	json_decref(r->table);
	json_decref(r->hosts);
	json_decref(r->commands);
	json_decref(r->compare);
	json_decref(r->diff);
	json_decref(r->flames);
	memset(r, 0, sizeof(*r));
}

void rp_href(char *buf, size_t n, const char *base, long long matrix, long long cell, long long run)
{
	if (run > 0)
		snprintf(buf, n, "%s/#/runs/%lld", base, run);
	else if (cell >= 0)
		snprintf(buf, n, "%s/#/matrices/%lld?cell=%lld", base, matrix, cell);
	else
		snprintf(buf, n, "%s/#/matrices/%lld", base, matrix);
}
