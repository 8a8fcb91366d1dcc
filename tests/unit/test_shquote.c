/*
 * test_shquote.c - tb_sh_quote_argv and tb_ssh_command_line against the real
 * shells: every case runs `printf '%s\0' ARGS...` through sh -c, bash -c and
 * tcsh -c (the FreeBSD root shell) and checks that ARGS arrive byte-exact.
 * Adding a case is adding a line to `cases`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shquote.h"

#define MAX_ARGS 300

struct qcase {
	const char *name;
	const char *args[16]; /* NULL-terminated */
};

static const struct qcase cases[] = {
	{"plain", {"hello", NULL}},
	{"empty", {"", NULL}},
	{"empties", {"", "", "x", "", NULL}},
	{"spaces", {"a b", "  lead", "trail  ", " ", NULL}},
	{"tabs", {"a\tb", "\t", NULL}},
	{"single quotes", {"'", "''", "it's", "'a'b'", NULL}},
	{"double quotes", {"\"", "say \"hi\"", "\"\"", NULL}},
	{"dollar", {"$HOME", "${HOME}", "$(id)", "$((1+1))", "$", "$1", "$@", "$*", "$#", "$?", "$$", "$!", NULL}},
	{"backquote", {"`id`", "`", "a`b", NULL}},
	{"backslash", {"\\", "\\\\", "a\\nb", "\\'", "\\\"", "x\\", "\\!", NULL}},
	{"separators", {";", "a;b", "|", "||", "&", "&&", "a|b&c;d", NULL}},
	{"redirections", {">", ">>", "<", "2>&1", "<<EOF", ">/tmp/x", NULL}},
	{"globs", {"*", "?", "[a-z]", "/*", "*.c", "{a,b}", "~", "~root", NULL}},
	{"comments and parens", {"#", "#x", "a#b", "(", ")", "()", "{", "}", NULL}},
	{"history", {"!", "!!", "!$", "a!b", "!-1", "!1", "^a^b", "!#", "!:0", NULL}},
	{"csh specials", {"$status", "~user/x", "$?HOME", "a:h", "%1", "@", "=", ":", NULL}},
	{"newlines", {"\n", "a\nb", "\n\n", "line\n", "\nlead", "a\n\nb", NULL}},
	{"newline and quote", {"'\n'", "!\n!", "$\n`", "\\\n", NULL}},
	{"cr and controls", {"\r", "a\r\nb", "\x01\x02\x1b[31m", "\x7f", NULL}},
	{"leading dash", {"-", "--", "-n", "-e", "--help", "-c", NULL}},
	{"printf specials", {"%s", "%d", "%%", "\\0", "\\n", NULL}},
	{"utf-8", {"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80 emoji", "\xe6\x97\xa5\xe6\x9c\xac", NULL}},
	{"invalid utf-8", {"\xff", "\xfe\xff", "\xc3", "\xe2\x82", "\x80\x80", "\xa0", NULL}},
	{"high bytes and quotes", {"\xff'\xff", "\xe9!\xe9", "\xa7\n", NULL}},
	{"assignments", {"a=b", "PATH=/x", "=x", NULL}},
	{"reserved words", {"if", "then", "fi", "!", "{", "case", "in", NULL}},
	{"long",
	 {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "'!'\n'!'\n$x`y`\\z aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  NULL}},
};

/* A shell to run a command line with: argv prefix, optional LC_ALL. */
struct shell {
	const char *name;
	const char *path;
	const char *lc_all; /* NULL: inherit */
};

static const struct shell posix_shells[] = {
	{"sh", "/bin/sh", NULL},
	{"bash", "bash", NULL},
};

static const struct shell login_shells[] = {
	{"sh", "/bin/sh", NULL},   {"bash", "bash", NULL},
	{"tcsh (C)", "tcsh", "C"}, {"tcsh (C.UTF-8)", "tcsh", "C.UTF-8"},
	{"csh", "csh", NULL},
};

/* Run `shell -c line`; return its stdout+stderr (malloc'd, *len bytes). */
static char *run_shell(const struct shell *sh, const char *line, size_t *len, int *status)
{
	int fd[2];
	pid_t pid;
	char *out = NULL;
	size_t cap = 0, n = 0;

	if (pipe(fd) != 0)
		fail_msg("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		if (sh->lc_all != NULL)
			setenv("LC_ALL", sh->lc_all, 1);
		execlp(sh->path, sh->path, "-c", line, (char *)NULL);
		fprintf(stderr, "exec %s: %s", sh->path, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			cap = cap * 2 + 4096;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		r = read(fd[0], out + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	*len = n;
	return out;
}

/* Printable rendering of n bytes for failure messages. */
static void render(const char *s, size_t n, char *dst, size_t dstlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < dstlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			dst[o++] = (char)c;
		else
			o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x", c);
	}
	dst[o] = '\0';
}

/* argv = printf '%s\0' args... ; expected = each arg followed by NUL. */
static const char **printf_argv(const char *const *args, char **expected, size_t *elen)
{
	static const char *argv[MAX_ARGS + 3];
	size_t n = 0, len = 0, na = 0;
	char *e;

	argv[n++] = "printf";
	argv[n++] = "%s\\0";
	for (na = 0; args[na] != NULL; na++) {
		assert_true(n < MAX_ARGS + 2);
		argv[n++] = args[na];
		len += strlen(args[na]) + 1;
	}
	argv[n] = NULL;
	e = malloc(len + 1);
	assert_non_null(e);
	len = 0;
	for (size_t i = 0; i < na; i++) {
		size_t l = strlen(args[i]);

		memcpy(e + len, args[i], l + 1);
		len += l + 1;
	}
	*expected = e;
	*elen = len;
	return argv;
}

/* Run line under shell and compare with the expected bytes. */
static void check_run(const struct shell *sh, const char *what, const char *line, const char *expected, size_t elen)
{
	size_t n;
	int status;
	char *out = run_shell(sh, line, &n, &status);

	if (n != elen || memcmp(out, expected, elen) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		static char a[8192], b[8192], l[8192];

		render(expected, elen, a, sizeof(a));
		render(out, n, b, sizeof(b));
		render(line, strlen(line), l, sizeof(l));
		free(out);
		fail_msg("%s under %s: status %d\n line:     %s\n expected: %s\n got:      %s", what, sh->name, status,
			 l, a, b);
	}
	free(out);
}

static void test_quote_argv_cases(void **state)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char *expected, *line;
		size_t elen;
		const char **argv = printf_argv(cases[c].args, &expected, &elen);
		struct tb_error err = {0};

		line = tb_sh_quote_argv(argv, &err);
		assert_non_null(line);
		for (size_t s = 0; s < sizeof(posix_shells) / sizeof(posix_shells[0]); s++)
			check_run(&posix_shells[s], cases[c].name, line, expected, elen);
		free(line);
		free(expected);
	}
}

static void test_ssh_line_cases(void **state)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char *expected, *line;
		size_t elen;
		const char **argv = printf_argv(cases[c].args, &expected, &elen);
		struct tb_error err = {0};

		line = tb_ssh_command_line(argv, &err);
		assert_non_null(line);
		assert_null(strchr(line, '\n'));
		for (size_t s = 0; s < sizeof(login_shells) / sizeof(login_shells[0]); s++)
			check_run(&login_shells[s], cases[c].name, line, expected, elen);
		free(line);
		free(expected);
	}
}

/* Every byte value 1..255 as its own argument "X<b>Y", and all in one. */
static void test_every_byte(void **state)
{
	static char words[255][4];
	static char all[256];
	const char *args[MAX_ARGS];
	char *expected, *line;
	size_t elen, n = 0;
	const char **argv;

	for (int b = 1; b <= 255; b++) {
		words[b - 1][0] = 'X';
		words[b - 1][1] = (char)b;
		words[b - 1][2] = 'Y';
		words[b - 1][3] = '\0';
		args[n++] = words[b - 1];
		all[b - 1] = (char)b;
	}
	all[255] = '\0';
	args[n++] = all;
	args[n] = NULL;
	argv = printf_argv(args, &expected, &elen);

	line = tb_sh_quote_argv(argv, NULL);
	assert_non_null(line);
	for (size_t s = 0; s < sizeof(posix_shells) / sizeof(posix_shells[0]); s++)
		check_run(&posix_shells[s], "every byte (sh quoting)", line, expected, elen);
	free(line);

	line = tb_ssh_command_line(argv, NULL);
	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	for (size_t s = 0; s < sizeof(login_shells) / sizeof(login_shells[0]); s++)
		check_run(&login_shells[s], "every byte (ssh line)", line, expected, elen);
	free(line);
	free(expected);
}

/* The spawn prefix runs before the exec, in the same process. */
static void test_prefix(void **state)
{
	const char *argv[] = {"sh", "-c", "echo \"$$\"", NULL};
	char *line = tb_ssh_command_line_prefixed("echo $$", argv, NULL);

	assert_non_null(line);
	for (size_t s = 0; s < sizeof(login_shells) / sizeof(login_shells[0]); s++) {
		size_t n;
		int status;
		char *out = run_shell(&login_shells[s], line, &n, &status);
		char *nl;

		assert_int_equal(status, 0);
		assert_non_null(out);
		assert_true(n < 4096);
		out[n - 1] = '\0';
		nl = strchr(out, '\n');
		assert_non_null(nl);
		*nl = '\0';
		/* the pid printed before exec is the pid of the command */
		assert_string_equal(out, nl + 1);
		assert_true(atol(out) > 1);
		free(out);
	}
	free(line);
}

/* Readable output for the common case; exact shape is part of the contract. */
static void test_shapes(void **state)
{
	const char *a1[] = {"iperf3", "-c", "10.0.0.2", "--json", "-t", "5", NULL};
	const char *a2[] = {"echo", "it's", "a b", NULL};
	const char *a3[] = {"echo", "!", "a\nb", NULL};
	char *s;

	s = tb_sh_quote_argv(a1, NULL);
	assert_string_equal(s, "'iperf3' -c 10.0.0.2 --json -t 5");
	free(s);
	s = tb_sh_quote_argv(a2, NULL);
	assert_string_equal(s, "'echo' 'it'\\''s' 'a b'");
	free(s);
	s = tb_ssh_command_line(a1, NULL);
	assert_string_equal(s, "/bin/sh -c 'exec '\\''iperf3'\\'' -c 10.0.0.2 --json -t 5'");
	free(s);
	s = tb_ssh_command_line(a3, NULL);
	assert_string_equal(s, "/bin/sh -c 'nl=$(printf '\\''\\nx'\\''); nl=${nl%x}; "
			       "exec '\\''echo'\\'' '\\'''\\!''\\'' '\\''a'\\''\"$nl\"'\\''b'\\'''");
	free(s);
}

struct bad_case {
	const char *name;
	const char *prefix;
	const char *args[4];
	bool sh_ok; /* tb_sh_quote_argv accepts it */
};

static const struct bad_case bad_cases[] = {
	{"empty argv", NULL, {NULL}, false},
	{"empty command", NULL, {"", "x", NULL}, true},
	{"dash command", NULL, {"-x", NULL}, true},
	{"newline in prefix", "echo\n", {"true", NULL}, true},
};

static void test_invalid(void **state)
{
	struct tb_error err;

	tb_error_clear(&err);
	assert_null(tb_sh_quote_argv(NULL, &err));
	assert_int_equal(err.code, TB_ERR_INVALID);
	assert_null(tb_ssh_command_line(NULL, NULL));

	for (size_t c = 0; c < sizeof(bad_cases) / sizeof(bad_cases[0]); c++) {
		char *s;

		tb_error_clear(&err);
		s = tb_ssh_command_line_prefixed(bad_cases[c].prefix, bad_cases[c].args, &err);
		if (s != NULL)
			fail_msg("%s: accepted as %s", bad_cases[c].name, s);
		assert_int_equal(err.code, TB_ERR_INVALID);
		assert_true(err.message[0] != '\0');
		s = tb_sh_quote_argv(bad_cases[c].args, NULL);
		assert_int_equal(s != NULL, bad_cases[c].sh_ok);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),           cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_quote_argv_cases), cmocka_unit_test(test_ssh_line_cases),
		cmocka_unit_test(test_every_byte),       cmocka_unit_test(test_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
