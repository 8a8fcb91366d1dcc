/*
 * smtprx.h - a small SMTP receiver on 127.0.0.1 for the email sink's tests:
 * it speaks enough SMTP (EHLO, MAIL, RCPT, DATA, QUIT, RSET, NOOP) to take a
 * mail from libcurl, records each mail's envelope and text, and offers no
 * STARTTLS and no AUTH (a client that insists on TLS must fail).  One
 * connection at a time, in its own thread.
 */
#ifndef TB_TEST_SMTPRX_H
#define TB_TEST_SMTPRX_H

#include <stddef.h>

#define TB_SMTPRX_MAX 32

struct tb_smtprx_mail {
	char from[300];
	char rcpt[1024]; /* "<a@b> <c@d>" */
	char *data;      /* the text after DATA, without the final "." line */
};

struct tb_smtprx;

int tb_smtprx_start(struct tb_smtprx **out, unsigned int *port);
/* Connections accepted so far (a client that gave up counts too). */
size_t tb_smtprx_sessions(struct tb_smtprx *rx);
size_t tb_smtprx_count(struct tb_smtprx *rx);
/* Wait until at least n mails arrived, for at most ms.  0 or -1. */
int tb_smtprx_wait(struct tb_smtprx *rx, size_t n, long ms);
const struct tb_smtprx_mail *tb_smtprx_get(struct tb_smtprx *rx, size_t i);
void tb_smtprx_stop(struct tb_smtprx *rx);

#endif /* TB_TEST_SMTPRX_H */
