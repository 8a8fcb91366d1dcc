/* shquote.c - argv to sh / ssh command lines: see shquote.h. */
#include "shquote.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A growable string; the first failed allocation sticks in .nomem. */
struct sbuf {
	char *p;
	size_t len;
	size_t cap;
	bool nomem;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->nomem)
		return;
	if (n >= b->cap - b->len || b->p == NULL) {
		size_t cap = b->cap != 0 ? b->cap : 64;
		char *q;

		while (cap - b->len <= n) {
			if (cap > (size_t)-1 / 2) {
				b->nomem = true;
				return;
			}
			cap *= 2;
		}
		q = realloc(b->p, cap);
		if (q == NULL) {
			b->nomem = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static char *sb_finish(struct sbuf *b, struct tb_error *err)
{
	if (b->nomem || b->p == NULL) {
		free(b->p);
		tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory building a command line");
		return NULL;
	}
	return b->p;
}

/* Characters that never need quoting in sh (nor inside csh single quotes). */
static bool is_bare(const char *w)
{
	if (*w == '\0')
		return false;
	for (; *w != '\0'; w++) {
		unsigned char c = (unsigned char)*w;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (strchr("_@%+=:,./-", c) == NULL)
			return false;
	}
	return true;
}

/* 'w' with ' written as '\'' ; n bytes of w. */
static void quote_span(struct sbuf *b, const char *w, size_t n)
{
	sb_add(b, "'", 1);
	for (size_t i = 0; i < n; i++) {
		if (w[i] == '\'')
			sb_add(b, "'\\''", 4);
		else
			sb_add(b, &w[i], 1);
	}
	sb_add(b, "'", 1);
}

/*
 * One word.  With nl_var, a newline is written as "$nl" outside quotes so
 * that the text holds no newline (see tb_ssh_command_line).
 */
static void quote_word(struct sbuf *b, const char *w, bool force, bool nl_var)
{
	const char *nl;

	if (!force && is_bare(w)) {
		sb_puts(b, w);
		return;
	}
	if (!nl_var || *w == '\0') {
		quote_span(b, w, strlen(w));
		return;
	}
	while ((nl = strchr(w, '\n')) != NULL) {
		if (nl > w)
			quote_span(b, w, (size_t)(nl - w));
		sb_puts(b, "\"$nl\"");
		w = nl + 1;
	}
	if (*w != '\0')
		quote_span(b, w, strlen(w));
}

static int check_argv(const char *const argv[], struct tb_error *err)
{
	if (argv == NULL || argv[0] == NULL)
		return tb_fail(err, TB_ERR_INVALID, "argv", "the command is empty");
	return 0;
}

char *tb_sh_quote_argv(const char *const argv[], struct tb_error *err)
{
	struct sbuf b = {0};

	if (check_argv(argv, err) != 0)
		return NULL;
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			sb_add(&b, " ", 1);
		quote_word(&b, argv[i], i == 0, false);
	}
	return sb_finish(&b, err);
}

char *tb_ssh_command_line_prefixed(const char *prefix, const char *const argv[],
				   struct tb_error *err)
{
	struct sbuf script = {0}, line = {0};
	bool has_nl = false;

	if (check_argv(argv, err) != 0)
		return NULL;
	if (argv[0][0] == '\0' || argv[0][0] == '-') {
		/* `exec -x` would be read as an option of exec (bash). */
		tb_fail(err, TB_ERR_INVALID, "argv",
			"the command name '%s' is empty or starts with '-'", argv[0]);
		return NULL;
	}
	if (prefix != NULL && strchr(prefix, '\n') != NULL) {
		tb_fail(err, TB_ERR_INVALID, "prefix",
			"a command prefix must not contain a newline");
		return NULL;
	}
	for (size_t i = 0; argv[i] != NULL; i++)
		if (strchr(argv[i], '\n') != NULL)
			has_nl = true;

	/* The script for /bin/sh, free of newlines. */
	if (has_nl)
		sb_puts(&script, "nl=$(printf '\\nx'); nl=${nl%x}; ");
	if (prefix != NULL && *prefix != '\0') {
		sb_puts(&script, prefix);
		sb_puts(&script, "; ");
	}
	sb_puts(&script, "exec");
	for (size_t i = 0; argv[i] != NULL; i++) {
		sb_add(&script, " ", 1);
		quote_word(&script, argv[i], i == 0, true);
	}
	if (script.nomem)
		return sb_finish(&script, err);

	/*
	 * The login shell's view: one single-quoted word.  ' -> '\'' and
	 * ! -> '\!' read the same in sh, bash and csh; inside csh quotes
	 * everything else is literal once newlines are gone.
	 */
	sb_puts(&line, "/bin/sh -c '");
	for (size_t i = 0; i < script.len; i++) {
		if (script.p[i] == '\'')
			sb_add(&line, "'\\''", 4);
		else if (script.p[i] == '!')
			sb_add(&line, "'\\!'", 4);
		else
			sb_add(&line, &script.p[i], 1);
	}
	sb_add(&line, "'", 1);
	free(script.p);
	return sb_finish(&line, err);
}

char *tb_ssh_command_line(const char *const argv[], struct tb_error *err)
{
	return tb_ssh_command_line_prefixed(NULL, argv, err);
}
