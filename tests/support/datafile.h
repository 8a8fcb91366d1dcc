/* datafile.h - read a test's data file (captured tool output) whole; write a
 * file a test hands to the program under test. */
#ifndef TB_TEST_DATAFILE_H
#define TB_TEST_DATAFILE_H

#include <stddef.h>
#include <sys/types.h>

/* dir/name's bytes, NUL-terminated (malloc'd; free()), *len bytes (len may
 * be NULL); NULL when it cannot be read (errno says why). */
char *tb_test_read_file(const char *dir, const char *name, size_t *len);

/* Write text to path (created or truncated) with mode (set even on an
 * existing file).  0 or -1 (errno says why). */
int tb_test_write_file(const char *path, const char *text, mode_t mode);

/* tests/data/SUB of the source tree, into out: $TB_SOURCE_DIR/tests/data/SUB
 * when set (ctest sets it), else found from this file's own path. */
void tb_test_data_dir(const char *sub, char *out, size_t len);

#endif
