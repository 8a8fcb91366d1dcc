/*
 * children.h - the long-lived helper processes a C test starts (testbedd, sshd,
 * the Redfish mock, powermand): none outlives the test program, even when a
 * failed cmocka assertion jumps past the code that would have stopped it.
 */
#ifndef TB_TEST_CHILDREN_H
#define TB_TEST_CHILDREN_H

#include <sys/types.h>

/* In the child, between fork and exec: SIGTERM when the test program dies
 * (also when it is killed and no exit handler runs). */
void tb_test_child_init(void);

/* In the parent, after fork: pid is stopped at exit unless untracked first.
 * what names it in the message printed then ("testbedd"). */
void tb_test_child_track(pid_t pid, const char *what);

/* The test stopped pid itself. */
void tb_test_child_untrack(pid_t pid);

#endif
