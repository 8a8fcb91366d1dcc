/* jsonpath.c - see jsonpath.h. */
#include "jsonpath.h"

#include <stdlib.h>
#include <string.h>

const json_t *tb_test_walk(const json_t *j, const char *path, char sep)
{
	char key[128], stops[3] = {sep, '[', '\0'};

	while (*path != '\0' && j != NULL) {
		if (*path == sep)
			path++;
		if (*path == '[') {
			char *end;
			long i = strtol(path + 1, &end, 10);

			if (*end != ']' || i < 0)
				return NULL;
			j = json_array_get(j, (size_t)i);
			path = end + 1;
		} else {
			size_t n = strcspn(path, stops);

			if (n >= sizeof(key))
				return NULL;
			memcpy(key, path, n);
			key[n] = '\0';
			j = json_object_get(j, key);
			path += n;
		}
	}
	return j;
}
