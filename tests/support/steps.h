/* steps.h - a tb_step_fn (power.h) for tests: each step a driver records, kept. */
#ifndef TB_TEST_STEPS_H
#define TB_TEST_STEPS_H

#define TB_TEST_STEPS_MAX 16

struct tb_test_steps {
	int n; /* steps kept (at most TB_TEST_STEPS_MAX; later ones dropped) */
	char what[TB_TEST_STEPS_MAX][512];
	char command[TB_TEST_STEPS_MAX][1024];
	int status[TB_TEST_STEPS_MAX];
	char output[TB_TEST_STEPS_MAX][512];
};

/* cls is a struct tb_test_steps; NULL command or output kept as "". */
void tb_test_step(void *cls, const char *what, const char *command, int status, const char *output);

#endif
