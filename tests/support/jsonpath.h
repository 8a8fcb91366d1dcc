/* jsonpath.h - a test's walk down a JSON value by a path of keys and [i]. */
#ifndef TB_TEST_JSONPATH_H
#define TB_TEST_JSONPATH_H

#include <jansson.h>

/* The value at path in j: keys separated by sep ('.' or '/'), array items
 * as [i] ("end.streams[0].sender" with '.'); NULL when a step is missing,
 * malformed, or a key is longer than 127 bytes.  Borrowed from j. */
const json_t *tb_test_walk(const json_t *j, const char *path, char sep);

#endif
