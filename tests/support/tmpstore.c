/* tmpstore.c - see tmpstore.h. */
#include "tmpstore.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store.h"

char *mkdtemp(char *template);

void tb_test_store_open(struct tb_test_store *t, const char *prefix)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/tb%.16s-XXXXXX", prefix);
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/testbedd.db", t->dir);
	tb_test_store_reopen(t);
}

void tb_test_store_reopen(struct tb_test_store *t)
{
	struct tb_error err = {0};

	if (tb_store_open(t->path, &t->st, &err) != 0)
		fail_msg("cannot open the store %s: %s", t->path, err.message);
}

void tb_test_store_close(struct tb_test_store *t)
{
	tb_store_close(t->st);
	t->st = NULL;
}

void tb_test_store_remove(struct tb_test_store *t)
{
	char p[160];

	if (t->st != NULL)
		tb_test_store_close(t);
	unlink(t->path);
	snprintf(p, sizeof(p), "%s-wal", t->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", t->path);
	unlink(p);
	rmdir(t->dir);
}
