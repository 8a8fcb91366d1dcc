/*
 * test_crypto_secret.c - the one reader of secret files (crypto_secret.h)
 * as a table of files -> what is read or the refusal's words, on real files
 * in a temporary directory; and the BMC password read through it
 * (power_secret.c): a file group or others may read is refused at call
 * time too, naming the machine and the file, never the password.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crypto_secret.h"
#include "inventory.h"
#include "power.h"

static char dir[64];

static void put(const char *name, const char *text, mode_t mode)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
	char path[128], to[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tbsecretXXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	put("ok", "s3cret-pw\n", 0600);
	put("crlf", "s3cret-pw\r\n", 0600);
	put("bare", "s3cret-pw", 0600);
	put("empty", "", 0600);
	put("two", "s3cret\npw\n", 0600);
	put("loose", "s3cret-pw\n", 0644);
	put("group", "s3cret-pw\n", 0640);
	put("long", "0123456789abcdef0123456789abcdef\n", 0600);
	snprintf(path, sizeof(path), "%s/link", dir);
	snprintf(to, sizeof(to), "%s/ok", dir);
	assert_int_equal(symlink(to, path), 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0); /* no writer: a blocking open would hang */
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	static const char *const names[] = {"ok",    "crlf", "bare", "empty", "two",  "loose",
					    "group", "long", "link", "fifo",  "sub/", NULL};
	char path[128];

	(void)state;
	for (size_t i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (remove(path) != 0)
			rmdir(path);
	}
	rmdir(dir);
	return 0;
}

static const struct {
	const char *name;
	unsigned flags;
	const char *read; /* NULL: refused */
	const char *words;
} cases[] = {
	{"ok", 0, "s3cret-pw", NULL},
	{"crlf", 0, "s3cret-pw", NULL},
	{"bare", TB_SECRET_NONEMPTY, "s3cret-pw", NULL},
	{"empty", 0, "", NULL},
	{"empty", TB_SECRET_NONEMPTY, NULL, "on one line (1.."},
	{"two", 0, NULL, "on one line"},
	{"long", 0, NULL, "at most 22 bytes"},
	{"loose", 0, NULL, "is open to group or others (mode 0644): chmod 600"},
	{"group", 0, NULL, "(mode 0640)"},
	{"link", 0, "s3cret-pw", NULL},
	{"link", TB_SECRET_NOFOLLOW, NULL, "is a symbolic link"},
	{"ok", TB_SECRET_OWNER | TB_SECRET_NOFOLLOW, "s3cret-pw", NULL},
	{"fifo", 0, NULL, "is not a regular file"},
	{"sub", 0, NULL, "is not a regular file"},
	{"missing", 0, NULL, "cannot read the test file"},
};

static void test_table(void **state)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(dfd >= 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[24] = "x", shown[128];
		struct tb_secret_file f = {dfd, cases[i].name, shown, "the test file", "f", cases[i].flags};
		struct tb_error e = {0};
		int rc;

		snprintf(shown, sizeof(shown), "%s/%s", dir, cases[i].name);
		rc = tb_secret_read(&f, buf, sizeof(buf), &e);
		if (cases[i].read != NULL) {
			if (rc != 0)
				fail_msg("%s (flags %u): %s", cases[i].name, cases[i].flags, e.message);
			assert_string_equal(buf, cases[i].read);
			continue;
		}
		assert_int_equal(rc, TB_ERR_CONFIG);
		assert_string_equal(e.field, "f");
		if (strstr(e.message, cases[i].words) == NULL || strstr(e.message, shown) == NULL)
			fail_msg("%s (flags %u): \"%s\" lacks \"%s\" or the path", cases[i].name, cases[i].flags,
				 e.message, cases[i].words);
		assert_null(strstr(e.message, "s3cret"));
		assert_null(strstr(buf, "s3cret")); /* a refused secret is wiped */
	}
	close(dfd);
}

/* The BMC password file: as before for a good one, and refused when
 * group or others may read it (the inventory checks at load; this is at
 * every call, after a chmod). */
static void test_bmc_password(void **state)
{
	char path[128], buf[64];
	struct tb_power_method pm = {.driver = TB_POWER_IPMI, .user = "ADMIN", .password_file = path};
	struct tb_machine m = {.name = "left"};
	struct tb_power_call call = {.m = &m, .pm = &pm};
	struct tb_error e = {0};

	(void)state;
	snprintf(path, sizeof(path), "%s/ok", dir);
	assert_int_equal(tb_power_read_password(&call, buf, sizeof(buf), &e), 0);
	assert_string_equal(buf, "s3cret-pw");
	snprintf(path, sizeof(path), "%s/loose", dir);
	assert_int_equal(tb_power_read_password(&call, buf, sizeof(buf), &e), TB_ERR_CONFIG);
	assert_string_equal(e.field, "password_file");
	assert_non_null(strstr(e.message, "left: the BMC password file"));
	assert_non_null(strstr(e.message, path));
	assert_null(strstr(e.message, "s3cret"));
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(tb_power_read_password(&call, buf, sizeof(buf), &e), TB_ERR_CONFIG);
	assert_non_null(strstr(e.message, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_bmc_password),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
