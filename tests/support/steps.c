/* steps.c - the test step recorder: see steps.h. */
#include "steps.h"

#include <stdio.h>

void tb_test_step(void *cls, const char *what, const char *command, int status, const char *output)
{
	struct tb_test_steps *s = cls;

	if (s->n >= TB_TEST_STEPS_MAX)
		return;
	snprintf(s->what[s->n], sizeof(s->what[0]), "%s", what);
	snprintf(s->command[s->n], sizeof(s->command[0]), "%s", command != NULL ? command : "");
	s->status[s->n] = status;
	snprintf(s->output[s->n], sizeof(s->output[0]), "%s", output != NULL ? output : "");
	s->n++;
}
