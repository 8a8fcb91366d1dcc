/*
 * crypto_secret.h - the one reader of testbedd's secret files: a one-line
 * secret read from a file when it is used (a BMC password file, a
 * notification sink's key, token or URL file), never kept.  The opened file
 * must be a regular file that group and others can neither read nor write;
 * a caller may also refuse a symbolic link, a file owned by another user or
 * an empty secret, and may name the file relative to a directory's
 * descriptor (openat: a name confined to that directory).
 *
 * Blocks on file I/O (never on a FIFO: it is opened non-blocking and
 * refused); no allocation; thread-safe.  The caller wipes the buffer with
 * tb_wipe (wipe.h).  Messages name the file, never the secret.
 */
#ifndef TB_CRYPTO_SECRET_H
#define TB_CRYPTO_SECRET_H

#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

#define TB_SECRET_NOFOLLOW 1u /* the file itself may not be a symbolic link */
#define TB_SECRET_OWNER 2u    /* it must be owned by testbedd's effective user */
#define TB_SECRET_NONEMPTY 4u /* an empty secret is refused */
#define TB_SECRET_PUBLIC 8u   /* tb_secret_open: group and others may read it (a certificate) */

struct tb_secret_file {
	int dirfd;         /* AT_FDCWD, or the directory that name is in */
	const char *name;  /* the file to open */
	const char *shown; /* the file as messages name it */
	const char *what;  /* "the secret file", "the BMC password file" */
	const char *field; /* err's field */
	unsigned flags;    /* TB_SECRET_* */
};

/* Read f's secret into buf: its first line without the line end, at most
 * sz - 2 bytes (a longer one, a second line or a NUL byte is refused).
 * 0, or TB_ERR_CONFIG with a sentence naming f->shown. */
int tb_secret_read(const struct tb_secret_file *f, char *buf, size_t sz, struct tb_error *err);

/* Open f for reading and check the opened file (fstat of the descriptor,
 * not of the name: a file swapped in after a check is what is checked): a
 * regular file, and as f->flags say.  Opened non-blocking, so a FIFO
 * neither blocks the caller nor is accepted.  The descriptor (close-on-exec,
 * the caller's to close) with its status in *st, or TB_ERR_CONFIG (< 0)
 * with a sentence naming f->shown.  Blocks on file I/O only. */
int tb_secret_open(const struct tb_secret_file *f, struct stat *st, struct tb_error *err);

#endif /* TB_CRYPTO_SECRET_H */
