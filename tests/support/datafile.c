/* datafile.c - read a test's data file whole: see datafile.h. */
#include "datafile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tb_test_data_dir(const char *sub, char *out, size_t len)
{
	const char *src = getenv("TB_SOURCE_DIR");

	if (src != NULL && src[0] != '\0') {
		snprintf(out, len, "%s/tests/data/%s", src, sub);
	} else {
		/* __FILE__ is .../tests/support/datafile.c */
		const char *f = __FILE__, *slash = strrchr(f, '/');
		int n = slash != NULL ? (int)(slash - f) : 0;

		snprintf(out, len, "%.*s/../data/%s", n, f, sub);
	}
}

char *tb_test_read_file(const char *dir, const char *name, size_t *len)
{
	char path[1200];
	FILE *f;
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	for (;;) {
		if (n + 4097 > cap) {
			cap = cap * 2 + 8192;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		if ((r = fread(buf + n, 1, cap - n - 1, f)) == 0)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

int tb_test_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	size_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len || fchmod(fd, mode) != 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}
