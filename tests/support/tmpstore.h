/*
 * tmpstore.h - a real SQLite store in a new temporary directory, for the
 * unit tests that build a module from the services it uses: opened, and
 * removed with its -wal and -shm files afterwards.
 */
#ifndef TB_TEST_TMPSTORE_H
#define TB_TEST_TMPSTORE_H

struct tb_store;

struct tb_test_store {
	char dir[64];
	char path[128];
	struct tb_store *st;
};

/* mkdtemp under /tmp (prefix: a short name of the test) and open
 * DIR/testbedd.db: cmocka-fails when it cannot. */
void tb_test_store_open(struct tb_test_store *t, const char *prefix);
/* Open the same file again (after a close: a restart). */
void tb_test_store_reopen(struct tb_test_store *t);
/* Close the store (st NULL afterwards); nothing is removed. */
void tb_test_store_close(struct tb_test_store *t);
/* Close (when open) and remove the files and the directory. */
void tb_test_store_remove(struct tb_test_store *t);

#endif
