/* run_load.c - a run's and a cell's load figures: see run_load.h. */
#include "run_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irtt_parse.h"
#include "run_sample.h"
#include "store_samples.h"

const char *const tb_run_load_figures[] = {
	"client_busiest_mean",     "client_busiest_max",      "client_busy_mean",        "client_interrupt_share",
	"client_mem_used_max_pct", "server_busiest_mean",     "server_busiest_max",      "server_busy_mean",
	"server_interrupt_share",  "server_mem_used_max_pct", "router_busiest_mean",     "router_busiest_max",
	"router_busy_mean",        "router_interrupt_share",  "router_mem_used_max_pct", "latency_idle_median_ms",
	"latency_idle_p95_ms",     "latency_load_median_ms",  "latency_load_p95_ms",     NULL,
};

/* The summary's scalar figures as PREFIX_name members of out. */
static void put_host(json_t *out, const char *prefix, const json_t *sum)
{
	static const char *const keys[] = {"busiest",         "busiest_mean",     "busiest_max", "busy_mean",
					   "interrupt_share", "mem_used_max_pct", NULL};
	char name[64];

	for (int k = 0; keys[k] != NULL; k++) {
		const json_t *v = json_object_get(sum, keys[k]);

		snprintf(name, sizeof(name), "%s_%s", prefix, keys[k]);
		if (json_is_number(v))
			json_object_set(out, name, (json_t *)v);
	}
}

/* A phase's median and p95 as latency_PHASE_median_ms / _p95_ms. */
static int put_phase(json_t *out, const char *phase, const json_t *bins)
{
	json_t *s = json_array_size(bins) > 0 ? tb_rtt_phase_summary(bins) : NULL;
	char name[64];
	int any = 0;

	if (json_is_number(json_object_get(s, "median"))) {
		snprintf(name, sizeof(name), "latency_%s_median_ms", phase);
		json_object_set(out, name, json_object_get(s, "median"));
		snprintf(name, sizeof(name), "latency_%s_p95_ms", phase);
		json_object_set(out, name, json_object_get(s, "p95"));
		any = 1;
	}
	json_decref(s);
	return any;
}

json_t *tb_run_load_make(const json_t *hosts, const json_t *idle_bins, const json_t *load_bins)
{
	json_t *out = json_pack("{s:{}}", "hosts"), *h;
	const char *name, *router = NULL;
	double router_top = -1.0;
	int any = 0;

	if (out == NULL)
		return NULL;
	json_object_foreach((json_t *)hosts, name, h)
	{
		const char *side = json_string_value(json_object_get(h, "side"));
		json_t *sum = tb_sample_summary(json_object_get(h, "samples"));
		double top = json_number_value(json_object_get(sum, "busiest_mean"));

		if (sum == NULL || side == NULL) {
			json_decref(sum);
			continue;
		}
		any = 1;
		if (strcmp(side, "router") != 0)
			put_host(out, side, sum);
		else if (top > router_top) {
			router_top = top;
			router = name;
			put_host(out, "router", sum);
		}
		json_object_set_new(json_object_get(out, "hosts"), name,
				    json_pack("{s:s, s:o}", "side", side, "summary", sum));
	}
	if (router != NULL)
		json_object_set_new(out, "router", json_string(router));
	any |= put_phase(out, "idle", idle_bins);
	any |= put_phase(out, "load", load_bins);
	if (!any) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

json_t *tb_run_load_cell(const json_t *loads)
{
	size_t n = json_array_size(loads), i;
	double *v = n > 0 ? malloc(n * sizeof(*v)) : NULL;
	json_t *out = json_object(), *l;
	int any = 0;

	if (v == NULL || out == NULL) {
		free(v);
		json_decref(out);
		return NULL;
	}
	for (int k = 0; tb_run_load_figures[k] != NULL; k++) {
		size_t m = 0;

		json_array_foreach(loads, i, l)
		{
			const json_t *x = json_object_get(l, tb_run_load_figures[k]);

			if (json_is_number(x))
				v[m++] = json_number_value(x);
		}
		if (m == 0)
			continue;
		qsort(v, m, sizeof(*v), cmp_double);
		json_object_set_new(out, tb_run_load_figures[k],
				    json_real(m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2.0));
		any = 1;
	}
	free(v);
	if (!any) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* ---- a matrix's runs, from the store ---- */
struct acc {
	json_t *runs; /* "RUN_ID" -> {"hosts", "idle", "load", "attempt"} */
	int nomem;
};

static json_t *entry(struct acc *a, int64_t run_id)
{
	char key[24];
	json_t *e;

	snprintf(key, sizeof(key), "%lld", (long long)run_id);
	if ((e = json_object_get(a->runs, key)) == NULL) {
		e = json_pack("{s:{}, s:[], s:[], s:I}", "hosts", "idle", "load", "attempt", (json_int_t)0);
		if (e == NULL || json_object_set_new(a->runs, key, e) != 0) {
			a->nomem = 1;
			return NULL;
		}
	}
	return e;
}

static void on_sample(void *cls, const struct tb_sample_row *row)
{
	struct acc *a = cls;
	json_t *e = entry(a, row->run_id), *hosts = json_object_get(e, "hosts"), *h;
	json_t *sample = json_loads(row->json, 0, NULL);

	if (e == NULL || !json_is_object(sample)) {
		json_decref(sample);
		return;
	}
	if ((h = json_object_get(hosts, row->host)) == NULL) {
		h = json_pack("{s:s, s:[]}", "side", row->side, "samples");
		json_object_set_new(hosts, row->host, h);
	}
	json_array_append_new(json_object_get(h, "samples"), sample);
}

/* A run.rtt event: its bin to its run's phase (a later attempt's stream
 * replaces an earlier one's, as GET /runs/{id}/latency has it). */
static void on_rtt(void *cls, const struct tb_event_row *ev)
{
	struct acc *a = cls;
	json_t *o = json_loads(ev->json, 0, NULL), *d = json_object_get(o, "data"), *e;
	const char *phase = json_string_value(json_object_get(d, "phase"));
	json_int_t attempt = json_integer_value(json_object_get(d, "attempt"));
	json_int_t run = json_integer_value(json_object_get(d, "run"));
	const json_t *bin = json_object_get(d, "bin");

	if (run > 0 && phase != NULL && json_is_object(bin) && (e = entry(a, run)) != NULL) {
		json_int_t had = json_integer_value(json_object_get(e, "attempt"));

		if (attempt > had) {
			json_array_clear(json_object_get(e, "idle"));
			json_array_clear(json_object_get(e, "load"));
			json_object_set_new(e, "attempt", json_integer(attempt));
		}
		if (attempt >= had)
			json_array_append(json_object_get(e, strcmp(phase, "idle") == 0 ? "idle" : "load"),
					  (json_t *)bin);
	}
	json_decref(o);
}

int tb_run_load_of_matrix(struct tb_store *st, int64_t matrix_id, json_t **out, struct tb_error *err)
{
	struct acc a = {json_object(), 0};
	const char *key;
	json_t *e;
	int rc;

	*out = NULL;
	if (a.runs == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_samples_of_matrix(st, matrix_id, on_sample, &a, err)) != 0 ||
	    (rc = tb_store_samples_rtt_events(st, matrix_id, on_rtt, &a, err)) != 0) {
		json_decref(a.runs);
		return rc;
	}
	if (a.nomem || (*out = json_object()) == NULL) {
		json_decref(a.runs);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	json_object_foreach(a.runs, key, e)
	{
		json_t *l = tb_run_load_make(json_object_get(e, "hosts"), json_object_get(e, "idle"),
					     json_object_get(e, "load"));

		if (l != NULL)
			json_object_set_new(*out, key, l);
	}
	json_decref(a.runs);
	return 0;
}
