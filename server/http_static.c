/* http_static.c - the web pages from the static directory.  See http_edge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_edge.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{".html", "text/html; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"},
		{".mjs", "text/javascript; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},
		{".json", "application/json"},
		{".map", "application/json"},
		{".svg", "image/svg+xml"},
		{".png", "image/png"},
		{".ico", "image/x-icon"},
		{".woff2", "font/woff2"},
		{".txt", "text/plain; charset=utf-8"},
		{".webmanifest", "application/manifest+json"},
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i][0]) == 0)
			return types[i][1];
	return "application/octet-stream";
}

/* Does the client take gzip?  (A token of Accept-Encoding, without q=0.) */
static int accepts_gzip(struct MHD_Connection *conn)
{
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *p = ae != NULL ? strstr(ae, "gzip") : NULL;

	return p != NULL && strncmp(p + 4, ";q=0,", 5) != 0 && strcmp(p + 4, ";q=0") != 0;
}

/* NAME.gz in the directory dir when it is a regular file at least as new as
 * NAME; -1 otherwise. */
static int open_gz_twin(int dir, const char *name, const struct stat *st, struct stat *gzst)
{
	char path[NAME_MAX + 8];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s.gz", name) >= sizeof(path) ||
	    (fd = openat(dir, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)) < 0)
		return -1;
	if (fstat(fd, gzst) != 0 || !S_ISREG(gzst->st_mode) || gzst->st_mtime < st->st_mtime) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Files of the web pages' build that are not pages: npm's manifests and the
 * lockfiles of every package manager (they list what and which versions). */
static int private_name(const char *name)
{
	static const char *const names[] = {"package.json", "package-lock.json", "npm-shrinkwrap.json",
					    "yarn.lock",    "pnpm-lock.yaml",    "bun.lockb",
					    "bun.lock"};
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return n >= 5 && strcmp(name + n - 5, ".lock") == 0;
}

/* Open root/seg[0]/.../seg[n-1] one component at a time, none of them a
 * symbolic link (O_NOFOLLOW on every one: a link to a directory outside the
 * root, or inside it, is not followed).  The file's descriptor, and its
 * directory's in *dir (the caller closes both); -1 when any part is missing,
 * a link, or not what it should be. */
static int open_under(const char *root, char *seg[], size_t n, int *dir)
{
	int d = open(root, O_RDONLY | O_DIRECTORY), fd;

	*dir = -1;
	if (d < 0)
		return -1;
	for (size_t i = 0; i + 1 < n; i++) {
		int next = openat(d, seg[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

		close(d);
		if (next < 0)
			return -1;
		d = next;
	}
	/* O_NONBLOCK: a FIFO put there must not hang the thread (fstat refuses it) */
	fd = openat(d, seg[n - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		close(d);
		return -1;
	}
	*dir = d;
	return fd;
}

static enum MHD_Result send_not_modified(struct MHD_Connection *conn, const char *etag)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	edge_add_headers(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	ret = MHD_queue_response(conn, MHD_HTTP_NOT_MODIFIED, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result edge_serve_static(struct tb_http *h, struct conn_state *cs, const char *method, char *seg[],
				  size_t nseg)
{
	static char index_name[] = "index.html";
	char etag[64], *index_seg[1] = {index_name};
	const char *inm;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st, gzst;
	int fd, gz, dir;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		const char *const extra[][2] = {{MHD_HTTP_HEADER_ALLOW, "GET, HEAD"}};

		return edge_send_json(cs->conn, 405,
				      json_pack("{s:{s:s, s:s, s:s}}", "error", "code", "method_not_allowed", "message",
						"static files are read-only", "field", ""),
				      extra, 1);
	}
	if (!h->have_static)
		return edge_fail(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	for (size_t i = 0; i < nseg; i++)
		if (seg[i][0] == '.' || strcmp(seg[i], "node_modules") == 0 || private_name(seg[i]))
			return edge_fail(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	if (nseg == 0) {
		seg = index_seg;
		nseg = 1;
	}
	/* split_path refused "..", "." and encoded slashes, no segment here
	 * starts with a dot, and no component may be a symbolic link: what is
	 * served is a regular file under the static root. */
	fd = open_under(h->static_root, seg, nseg, &dir);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		if (dir >= 0)
			close(dir);
		return edge_fail(cs->conn, TB_ERR_NOT_FOUND, "", "no such file");
	}
	/* revalidation: the pages change only when files do */
	snprintf(etag, sizeof(etag), "\"%llx-%llx\"", (unsigned long long)st.st_mtime, (unsigned long long)st.st_size);
	inm = MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (inm != NULL && strcmp(inm, etag) == 0) {
		close(fd);
		close(dir);
		return send_not_modified(cs->conn, etag);
	}
	/* a precompressed twin (deploy/setup gzips the vendored chart library) */
	gz = accepts_gzip(cs->conn) ? open_gz_twin(dir, seg[nseg - 1], &st, &gzst) : -1;
	close(dir);
	if (gz >= 0) {
		close(fd);
		fd = gz;
	}
	r = MHD_create_response_from_fd((uint64_t)(gz >= 0 ? gzst.st_size : st.st_size), fd);
	if (r == NULL) {
		close(fd);
		return MHD_NO;
	}
	edge_add_headers(r);
	if (nseg == 1 && strcmp(seg[0], "console.html") == 0)
		edge_allow_inline_styles(r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(seg[nseg - 1]));
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gz >= 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	ret = MHD_queue_response(cs->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}
