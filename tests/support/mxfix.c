/* mxfix.c - fixtures of the matrix planner's unit tests: see mxfix.h. */
#include "mxfix.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The simulated testbed (deploy/sim): a dumbbell left -- router -- right, and a relay. */
static const char INV_SIM[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE("left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n" MACHINE(
	"right", "host",
	"198.18.0.12") "    links:\n      lan20: {address: 198.19.20.2/24}\n" MACHINE("router", "router",
										      "198.18.0.13") "    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n" MACHINE("relay",
																									    "relay",
																									    "198.18.0.14");

/* The same with right's links missing. */
static const char INV_NOLINKS[] = "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n" MACHINE(
	"left", "host", "198.18.0.11") "    links:\n      lan10: {address: 198.19.10.2/24}\n" MACHINE("right", "host",
												      "198.18.0.12")
	MACHINE("router", "router",
		"198.18.0.13") "    links:\n      lan10: {address: 198.19.10.1/24}\n      lan20: {address: 198.19.20.1/24}\n";

struct tb_inventory *mx_inv_sim, *mx_inv_nolinks;

struct tb_inventory *mx_load_inv(const char *text)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	if (tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err) != 0) {
		fprintf(stderr, "inventory: %s\n", err.message);
		return NULL;
	}
	return inv;
}

int mx_setup(void **state)
{
	(void)state;
	mx_inv_sim = mx_load_inv(INV_SIM);
	mx_inv_nolinks = mx_load_inv(INV_NOLINKS);
	return mx_inv_sim != NULL && mx_inv_nolinks != NULL ? 0 : -1;
}

int mx_teardown(void **state)
{
	(void)state;
	tb_inventory_free(mx_inv_sim);
	tb_inventory_free(mx_inv_nolinks);
	return 0;
}

/* JSON with ' for ". */
json_t *mx_spec_of(const char *text)
{
	char *s = strdup(text);
	json_error_t je;
	json_t *j;

	assert_non_null(s);
	for (char *p = s; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, s);
	free(s);
	assert_non_null(j);
	return j;
}

int mx_plan_text(const char *text, const struct tb_inventory *inv, uint64_t seed, struct tb_matrix_plan **plan,
		 struct tb_error *err)
{
	json_t *spec = mx_spec_of(text);
	int rc = tb_matrix_plan_make(spec, inv, seed, plan, err);

	json_decref(spec);
	return rc;
}

struct tb_matrix_plan *mx_plan_ok(const char *text, uint64_t seed)
{
	struct tb_matrix_plan *plan = NULL;
	struct tb_error err = {0};

	if (mx_plan_text(text, mx_inv_sim, seed, &plan, &err) != 0)
		fprintf(stderr, "unexpected error: %s: %s [%s]\n", err.field, err.message, text);
	assert_non_null(plan);
	return plan;
}

void mx_check_permutation(const struct tb_matrix_plan *plan)
{
	char *seen = calloc((size_t)plan->nruns, 1);

	assert_non_null(seen);
	for (int i = 0; i < plan->nruns; i++) {
		const struct tb_planned_run *r = &plan->runs[i];
		int k = r->cell * plan->repeats + r->repeat;

		assert_int_equal(r->seq, i);
		assert_true(r->cell >= 0 && r->cell < plan->ncells && r->repeat >= 0 && r->repeat < plan->repeats);
		assert_int_equal(seen[k], 0);
		seen[k] = 1;
	}
	free(seen);
}

static uint64_t rng_state = 0x1234567;

uint64_t mx_rnd(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

int mx_rnd_int(int n)
{
	return (int)(mx_rnd() % (uint64_t)n);
}

/* k distinct indices of 0..n-1 in random order */
void mx_pick(int n, int k, int *out)
{
	int v[16];

	for (int i = 0; i < n; i++)
		v[i] = i;
	for (int i = 0; i < k; i++) {
		int j = i + mx_rnd_int(n - i), t = v[i];

		v[i] = v[j];
		v[j] = t;
		out[i] = v[i];
	}
}

int mx_same_params(const struct tb_iperf_params *a, const struct tb_iperf_params *b)
{
	return a->proto == b->proto && a->dir == b->dir && a->duration_s == b->duration_s && a->omit_s == b->omit_s &&
	       a->parallel == b->parallel && a->length == b->length && a->window == b->window &&
	       strcmp(a->bitrate, b->bitrate) == 0 && strcmp(a->congestion, b->congestion) == 0 && a->tos == b->tos &&
	       a->zerocopy == b->zerocopy && strcmp(a->affinity, b->affinity) == 0 && a->interval_s == b->interval_s;
}

int mx_same_run(const struct tb_planned_run *a, const struct tb_planned_run *b)
{
	return strcmp(a->client, b->client) == 0 && strcmp(a->server, b->server) == 0 &&
	       strcmp(a->link, b->link) == 0 && strcmp(a->server_address, b->server_address) == 0 &&
	       mx_same_params(&a->p, &b->p);
}

void mx_roundtrip(const struct tb_iperf_params *p)
{
	struct tb_iperf_params q;
	struct tb_error err = {0};
	json_t *j = tb_matrix_params_json(p);

	assert_non_null(j);
	memset(&q, 0x5a, sizeof(q));
	if (tb_matrix_params_from_json(j, &q, &err) != 0) {
		char *t = json_dumps(j, 0);

		fprintf(stderr, "round trip: %s: %s\n", t, err.message);
		free(t);
	}
	assert_int_equal(err.code, 0);
	assert_true(mx_same_params(p, &q));
	json_decref(j);
}
