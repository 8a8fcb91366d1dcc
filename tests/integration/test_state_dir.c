/*
 * test_state_dir.c - what testbedd keeps in its state directory is private:
 * the database and its -wal/-shm, and admin.token, are mode 0600 when the
 * daemon runs under umask 022 (as by hand); a database left 0644 by an older
 * testbedd is tightened; a state directory that group or others can write is
 * refused at start with a message saying so. The real daemon on port 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static unsigned mode_of(const struct tb_test_daemon *d, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", d->state_dir, name);
	if (stat(p, &st) != 0) {
		printf("# %s: missing\n", name);
		return 0;
	}
	printf("# %s: %04o\n", name, (unsigned)(st.st_mode & 07777));
	return (unsigned)(st.st_mode & 07777);
}

static void test_files_private_under_umask_022(void **state)
{
	struct tb_test_daemon d;
	char p[512];
	mode_t old = umask(022);

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	/* a write, so that the -wal and -shm files exist while it runs */
	assert_int_equal(tb_test_create_token(&d, "ci", "operator", NULL, 0), 201);
	assert_int_equal(mode_of(&d, "."), 0700);
	assert_int_equal(mode_of(&d, "testbedd.db"), 0600);
	assert_int_equal(mode_of(&d, "testbedd.db-wal"), 0600);
	assert_int_equal(mode_of(&d, "testbedd.db-shm"), 0600);
	assert_int_equal(mode_of(&d, "admin.token"), 0600);

	/* a database an older testbedd left 0644 is made private at start */
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	snprintf(p, sizeof(p), "%s/testbedd.db", d.state_dir);
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	assert_int_equal(tb_test_create_token(&d, "ci2", "operator", NULL, 0), 201);
	assert_int_equal(mode_of(&d, "testbedd.db"), 0600);
	assert_int_equal(mode_of(&d, "testbedd.db-wal"), 0600);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
	umask(old);
}

static void test_loose_state_dir_refused(void **state)
{
	static const unsigned loose[] = {0777, 0770, 0702, 01777};
	struct tb_test_daemon d;

	(void)state;
	assert_int_equal(tb_test_daemon_start(&d, NULL, NULL), 0);
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	for (size_t i = 0; i < sizeof(loose) / sizeof(loose[0]); i++) {
		char want[400];

		assert_int_equal(chmod(d.state_dir, (mode_t)loose[i]), 0);
		printf("# state dir %04o: refused\n", loose[i]);
		assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), -1);
		snprintf(want, sizeof(want), "state directory %s is writable by group or others (mode %04o)",
			 d.state_dir, loose[i]);
		assert_true(tb_test_daemon_log_contains(&d, want));
		assert_true(tb_test_daemon_log_contains(&d, "chmod go-w"));
	}
	/* readable by others but writable by its owner only: starts */
	assert_int_equal(chmod(d.state_dir, 0755), 0);
	assert_int_equal(tb_test_daemon_launch(&d, NULL, 0), 0);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_private_under_umask_022),
		cmocka_unit_test(test_loose_state_dir_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
