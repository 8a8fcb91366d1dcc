/* shquote.c - argv to sh / ssh command lines: see shquote.h. */
#include "shquote.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

/* The text of b, or NULL with err when an allocation failed on the way. */
static char *sb_finish(struct tb_outbuf *b, struct tb_error *err)
{
	char *p = tb_outbuf_take(b);

	if (p == NULL)
		tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory building a command line");
	return p;
}

/* Characters that never need quoting in sh (nor inside csh single quotes). */
static bool is_bare(const char *w)
{
	if (*w == '\0')
		return false;
	for (; *w != '\0'; w++) {
		unsigned char c = (unsigned char)*w;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			continue;
		if (strchr("_@%+=:,./-", c) == NULL)
			return false;
	}
	return true;
}

/* 'w' with ' written as '\'' ; n bytes of w. */
static void quote_span(struct tb_outbuf *b, const char *w, size_t n)
{
	tb_outbuf_add(b, "'", 1);
	for (size_t i = 0; i < n; i++) {
		if (w[i] == '\'')
			tb_outbuf_add(b, "'\\''", 4);
		else
			tb_outbuf_add(b, &w[i], 1);
	}
	tb_outbuf_add(b, "'", 1);
}

/*
 * One word.  With nl_var, a newline is written as "$nl" outside quotes so
 * that the text holds no newline (see tb_ssh_command_line).
 */
static void quote_word(struct tb_outbuf *b, const char *w, bool force, bool nl_var)
{
	const char *nl;

	if (!force && is_bare(w)) {
		tb_outbuf_puts(b, w);
		return;
	}
	if (!nl_var || *w == '\0') {
		quote_span(b, w, strlen(w));
		return;
	}
	while ((nl = strchr(w, '\n')) != NULL) {
		if (nl > w)
			quote_span(b, w, (size_t)(nl - w));
		tb_outbuf_puts(b, "\"$nl\"");
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
	struct tb_outbuf b = {0};

	if (check_argv(argv, err) != 0)
		return NULL;
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			tb_outbuf_add(&b, " ", 1);
		quote_word(&b, argv[i], i == 0, false);
	}
	return sb_finish(&b, err);
}

char *tb_ssh_script_prefixed(const char *prefix, const char *const argv[], struct tb_error *err)
{
	struct tb_outbuf script = {0};
	bool has_nl = false;

	if (check_argv(argv, err) != 0)
		return NULL;
	if (argv[0][0] == '\0' || argv[0][0] == '-') {
		/* `exec -x` would be read as an option of exec (bash). */
		tb_fail(err, TB_ERR_INVALID, "argv", "the command name '%s' is empty or starts with '-'", argv[0]);
		return NULL;
	}
	if (prefix != NULL && strchr(prefix, '\n') != NULL) {
		tb_fail(err, TB_ERR_INVALID, "prefix", "a command prefix must not contain a newline");
		return NULL;
	}
	for (size_t i = 0; argv[i] != NULL; i++)
		if (strchr(argv[i], '\n') != NULL)
			has_nl = true;

	/* The script for /bin/sh, free of newlines. */
	if (has_nl)
		tb_outbuf_puts(&script, "nl=$(printf '\\nx'); nl=${nl%x}; ");
	if (prefix != NULL && *prefix != '\0') {
		tb_outbuf_puts(&script, prefix);
		tb_outbuf_puts(&script, "; ");
	}
	tb_outbuf_puts(&script, "exec");
	for (size_t i = 0; argv[i] != NULL; i++) {
		tb_outbuf_add(&script, " ", 1);
		quote_word(&script, argv[i], i == 0, true);
	}
	return sb_finish(&script, err);
}

char *tb_ssh_login_line(const char *script, struct tb_error *err)
{
	struct tb_outbuf line = {0};

	/*
	 * The login shell's view: one single-quoted word.  ' -> '\'' and
	 * ! -> '\!' read the same in sh, bash and csh; inside csh quotes
	 * everything else is literal once newlines are gone.
	 */
	tb_outbuf_puts(&line, "/bin/sh -c '");
	for (const char *p = script; *p != '\0'; p++) {
		if (*p == '\'')
			tb_outbuf_add(&line, "'\\''", 4);
		else if (*p == '!')
			tb_outbuf_add(&line, "'\\!'", 4);
		else
			tb_outbuf_add(&line, p, 1);
	}
	tb_outbuf_add(&line, "'", 1);
	return sb_finish(&line, err);
}

char *tb_ssh_command_line_prefixed(const char *prefix, const char *const argv[], struct tb_error *err)
{
	char *script = tb_ssh_script_prefixed(prefix, argv, err), *line;

	if (script == NULL)
		return NULL;
	line = tb_ssh_login_line(script, err);
	free(script);
	return line;
}

char *tb_ssh_command_line(const char *const argv[], struct tb_error *err)
{
	return tb_ssh_command_line_prefixed(NULL, argv, err);
}
