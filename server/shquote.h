/*
 * shquote.h - build shell command lines from argument vectors.
 *
 * Remote commands are kept as argv arrays inside testbedd and turned into
 * text only at the last moment, by these functions, so that no value (a host
 * name, a file name, a user's test label) is ever pasted into a command line
 * unquoted.
 *
 * Ownership: every function returns a malloc'd string that the caller frees
 * with free(); the argv arrays stay the caller's.  Pure functions: no I/O, no
 * locks, cost linear in the total argument length.
 */
#ifndef TB_SHQUOTE_H
#define TB_SHQUOTE_H

#include "error.h"

/*
 * A POSIX sh command line that, parsed by sh (dash, bash, FreeBSD sh, ksh),
 * runs exactly argv: every byte of every argument arrives unchanged (spaces,
 * quotes, $, `, \, ;, |, &, globs, newlines, UTF-8 and invalid UTF-8, a
 * leading '-', empty strings).  argv is NULL-terminated with at least one
 * element.
 *
 * Words made only of [A-Za-z0-9_@%+=:,./-] stay bare for readable logs; any
 * other word is single-quoted, a ' becoming '\''.  argv[0] is always quoted,
 * so that a command named "if", "!" or "a=b" cannot turn into sh syntax.
 *
 * Not for csh/tcsh, whose quoting differs: see tb_ssh_command_line.
 * Returns NULL and fills *err: TB_ERR_INVALID (empty argv), TB_ERR_NOMEM.
 */
char *tb_sh_quote_argv(const char *const argv[], struct tb_error *err);

/*
 * The string to send as an ssh "exec" request so that argv runs exactly,
 * whatever the remote login shell: sh, bash, dash, ksh, zsh or csh/tcsh (a
 * FreeBSD root shell).  sshd runs `$SHELL -c STRING`; the result has the shape
 *
 *	/bin/sh -c '<script>'
 *
 * where <script> is `exec ARGV`, quoted by tb_sh_quote_argv's rules: the
 * login shell sees one single-quoted word and /bin/sh does the real parsing,
 * then becomes the command (exec: the command keeps sh's pid, which
 * tb_ssh_spawn relies on).  Two characters mean something inside csh single
 * quotes; they are encoded so that every shell reads them the same:
 *
 *  - '!' (csh history expansion, active even in `tcsh -c`): the quote is
 *    closed and \! written outside it, which sh, bash and csh all read as !.
 *  - newline (csh refuses it inside quotes: "Unmatched '"): the script never
 *    contains one.  If an argument has one, the script starts with
 *	nl=$(printf '\nx'); nl=${nl%x};
 *    and "a<NL>b" is written 'a'"$nl"'b'.
 *
 * So no argument is refused for its content: the result contains no newline
 * and nothing csh expands (tested against sh, bash and tcsh for every byte
 * value 1..255).  Not supported: fish or other non-Bourne, non-csh shells.
 * Returns NULL and fills *err: TB_ERR_INVALID (empty argv, empty argv[0] or
 * an argv[0] starting with '-', which `exec` would take as an option),
 * TB_ERR_NOMEM.
 */
char *tb_ssh_command_line(const char *const argv[], struct tb_error *err);

/*
 * As tb_ssh_command_line, with a fixed sh snippet run before the exec, e.g.
 * "echo $$" (tb_ssh_spawn: print the pid that exec keeps).  prefix is
 * trusted sh text written by testbedd itself, never user input; it is
 * quoted like the rest, and only a newline in it is refused (TB_ERR_INVALID).
 * NULL or "" = no prefix, same as tb_ssh_command_line.
 */
char *tb_ssh_command_line_prefixed(const char *prefix, const char *const argv[], struct tb_error *err);

/* tb_ssh_command_line_prefixed in its two steps: the /bin/sh script (one
 * line: prefix, then `exec` and the quoted words), and the login shell's
 * line that runs a script as `/bin/sh -c '...'`.  NULL with *err as above. */
char *tb_ssh_script_prefixed(const char *prefix, const char *const argv[], struct tb_error *err);
char *tb_ssh_login_line(const char *script, struct tb_error *err);

#endif /* TB_SHQUOTE_H */
