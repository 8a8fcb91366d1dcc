/* console_ring.c - the pure parts of consoles: the scrollback ring, base64,
 * the per-boot log files and the GRUB banner.  See console.h. */
#include "console.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/base64.h>

/* ---- ring ---- */

int tb_ring_init(struct tb_ring *r, size_t cap)
{
	r->buf = malloc(cap);
	r->cap = cap;
	r->end = 0;
	return r->buf == NULL ? TB_ERR_NOMEM : 0;
}

void tb_ring_free(struct tb_ring *r)
{
	free(r->buf);
	r->buf = NULL;
}

uint64_t tb_ring_start(const struct tb_ring *r)
{
	return r->end > r->cap ? r->end - r->cap : 0;
}

void tb_ring_append(struct tb_ring *r, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (r->buf == NULL)
		return;
	if (len > r->cap) { /* only the last cap bytes can stay */
		r->end += len - r->cap;
		p += len - r->cap;
		len = r->cap;
	}
	while (len > 0) {
		size_t at = (size_t)(r->end % r->cap), n = r->cap - at;

		if (n > len)
			n = len;
		memcpy(r->buf + at, p, n);
		r->end += n;
		p += n;
		len -= n;
	}
}

size_t tb_ring_read(const struct tb_ring *r, uint64_t *pos, void *out, size_t max)
{
	unsigned char *o = out;
	size_t done = 0;

	if (r->buf == NULL) /* freed (console_shed_locked): nothing to read */
		return 0;
	if (*pos < tb_ring_start(r))
		*pos = tb_ring_start(r);
	while (done < max && *pos < r->end) {
		size_t at = (size_t)(*pos % r->cap), n = r->cap - at;

		if (n > max - done)
			n = max - done;
		if (n > r->end - *pos)
			n = (size_t)(r->end - *pos);
		memcpy(o + done, r->buf + at, n);
		done += n;
		*pos += n;
	}
	return done;
}

/* ---- base64 decoding, strict (the encoder, nettle's, is crypto.c's tb_b64_encode) ---- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

long tb_b64_decode(const char *s, unsigned char *out)
{
	struct base64_decode_ctx ctx;
	size_t n = strlen(s), o = 0;

	while (n > 0 && s[n - 1] == '=')
		n--;
	/* nettle skips blanks and takes '=' inside: here only the alphabet, and
	 * no length that leaves a lone 6 bits */
	if (n % 4 == 1 || strspn(s, B64) != n)
		return -1;
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &o, out, n, s))
		return -1;
	return (long)o; /* not _final: the padding is optional */
}

/* ---- log files ---- */

int tb_conlog_valid_id(const char *id)
{
	const char *p = id;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == id || p - id > 19 || *p != '-' || p[1] == '\0')
		return 0;
	for (p++; *p; p++)
		if (*p < 'a' || *p > 'z')
			return 0;
	return strlen(id) < 40;
}

static int mkdir_p(const char *dir)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int tb_conlog_init(struct tb_conlog *l, const char *dir, struct tb_error *err)
{
	memset(l, 0, sizeof(*l));
	if (strlen(dir) >= sizeof(l->dir))
		return tb_fail(err, TB_ERR_INVALID, "state-dir", "console log directory too long: %s", dir);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	snprintf(l->reason, sizeof(l->reason), "start");
	l->keep_days = TB_CONSOLE_KEEP_DAYS;
	l->keep_files = TB_CONSOLE_KEEP_FILES;
	l->max_bytes = TB_CONSOLE_LOG_MAX;
	if (mkdir_p(dir) != 0)
		return tb_fail(err, TB_ERR_IO, "state-dir", "cannot create %s: %s", dir, strerror(errno));
	return 0;
}

void tb_conlog_close(struct tb_conlog *l)
{
	if (l->f != NULL)
		fclose(l->f);
	l->f = NULL;
}

void tb_conlog_rotate(struct tb_conlog *l, const char *why)
{
	tb_conlog_close(l);
	snprintf(l->reason, sizeof(l->reason), "%s", why);
}

int tb_conlog_write(struct tb_conlog *l, const void *data, size_t len, int64_t now_ms)
{
	if (l->f == NULL) {
		char path[600];

		tb_conlog_prune(l->dir, l->keep_days, l->keep_files > 0 ? l->keep_files - 1 : 0, now_ms);
		snprintf(path, sizeof(path), "%s/%lld-%s.log", l->dir, (long long)now_ms, l->reason);
		if ((l->f = fopen(path, "wx")) == NULL)
			return TB_ERR_IO;
		l->bytes = 0;
	}
	if (l->bytes >= l->max_bytes)
		return 0;
	if (len > l->max_bytes - l->bytes)
		len = l->max_bytes - l->bytes;
	if (fwrite(data, 1, len, l->f) != len || fflush(l->f) != 0)
		return TB_ERR_IO;
	l->bytes += len;
	return 0;
}

static int cmp_desc(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

int tb_conlog_prune(const char *dir, int keep_days, int keep_files, int64_t now_ms)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long long *t = NULL, cutoff = (long long)now_ms - (long long)keep_days * 86400000LL;
	size_t n = 0, cap = 0;
	int gone = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char id[64];
		size_t len = strlen(e->d_name);

		if (len < 5 || len >= sizeof(id) + 4 || strcmp(e->d_name + len - 4, ".log") != 0)
			continue;
		memcpy(id, e->d_name, len - 4);
		id[len - 4] = '\0';
		if (!tb_conlog_valid_id(id))
			continue;
		if (n == cap) {
			long long *nt = realloc(t, (cap = cap ? 2 * cap : 64) * sizeof(*t));

			if (nt == NULL)
				break;
			t = nt;
		}
		t[n++] = atoll(id);
	}
	if (n > 0)
		qsort(t, n, sizeof(*t), cmp_desc);
	for (size_t i = 0; i < n; i++) {
		if ((int)i < keep_files && t[i] >= cutoff)
			continue;
		/* every file of that start time (any reason) */
		rewinddir(d);
		while ((e = readdir(d)) != NULL) {
			char prefix[32], path[800];

			snprintf(prefix, sizeof(prefix), "%lld-", t[i]);
			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (unlink(path) == 0)
				gone++;
		}
	}
	free(t);
	closedir(d);
	return gone;
}

/* ---- GRUB banner ---- */

long tb_console_grub_banner(char tail[16], size_t *tlen, const unsigned char *data, size_t len)
{
	static const char banner[] = "GNU GRUB";
	const size_t bl = sizeof(banner) - 1;
	char joined[16 + 4096];
	long at = -1;
	size_t t = *tlen, n = len > 4096 ? 4096 : len;

	/* only the first 4 KiB of a chunk are searched (a banner is at a boot's start) */
	memcpy(joined, tail, t);
	memcpy(joined + t, data, n);
	for (size_t i = 0; i + bl <= t + n; i++) {
		if (memcmp(joined + i, banner, bl) == 0) {
			at = i < t ? 0 : (long)(i - t);
			break;
		}
	}
	/* keep the last bl-1 bytes: a banner split over two reads is found */
	if (len >= bl - 1) {
		memcpy(tail, data + len - (bl - 1), bl - 1);
		*tlen = bl - 1;
	} else {
		size_t keep = t + len > bl - 1 ? bl - 1 - len : t;

		memmove(tail, tail + t - keep, keep);
		memcpy(tail + keep, data, len);
		*tlen = keep + len;
	}
	return at;
}
