/*
 * mxfix.h - fixtures of the matrix planner's unit tests (unit/test_matrix.c,
 * unit/test_matrix_plan.c): the simulated testbed's inventory, specs written
 * with ' for ", a seeded random source for the property tests, and the
 * comparisons they share.
 */
#ifndef TB_TEST_MXFIX_H
#define TB_TEST_MXFIX_H

#include <stdint.h>

#include <jansson.h>

#include "inventory.h"
#include "matrix.h"

#define MACHINE(name, role, addr) "  " name ":\n    role: " role "\n    os: {ubuntu: {address: " addr "}}\n"

/* The simulated testbed (left -- router -- right, a relay), and the same with right's links missing:
 * loaded by mx_setup, freed by mx_teardown (the group's setup and teardown). */
extern struct tb_inventory *mx_inv_sim, *mx_inv_nolinks;
int mx_setup(void **state);
int mx_teardown(void **state);

/* An inventory from text, or NULL (the error printed). */
struct tb_inventory *mx_load_inv(const char *text);
/* JSON with ' for " (fails the test when it does not parse). */
json_t *mx_spec_of(const char *text);
/* tb_matrix_plan_make of the spec text against inv. */
int mx_plan_text(const char *text, const struct tb_inventory *inv, uint64_t seed, struct tb_matrix_plan **plan,
		 struct tb_error *err);
/* The plan of a spec that must plan against mx_inv_sim. */
struct tb_matrix_plan *mx_plan_ok(const char *text, uint64_t seed);
/* Every (cell, repeat) exactly once, seq in order. */
void mx_check_permutation(const struct tb_matrix_plan *plan);

/* A seeded random source (splitmix64): the same sequence every run. */
uint64_t mx_rnd(void);
int mx_rnd_int(int n);
/* k distinct indices of 0..n-1 (n <= 16) in random order. */
void mx_pick(int n, int k, int *out);

int mx_same_params(const struct tb_iperf_params *a, const struct tb_iperf_params *b);
int mx_same_run(const struct tb_planned_run *a, const struct tb_planned_run *b);
/* p -> JSON -> params gives p again. */
void mx_roundtrip(const struct tb_iperf_params *p);

#endif
