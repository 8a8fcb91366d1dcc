/* console_telnet.c - the little telnet (RFC 854) a console reader speaks to
 * a console server in telnet mode (ser2net's telnet(rfc2217) accepter):
 * IAC escaping both ways, a sensible answer to each option, and RFC 2217's
 * COM-PORT-OPTION SET-CONTROL for Break.  Pure functions (no I/O), unit-tested
 * in tests/unit/test_console_telnet.c.  See console_internal.h. */
#include "console_internal.h"

#include <string.h>

enum { SE = 240, SB = 250, WILL = 251, WONT = 252, DO = 253, DONT = 254, IAC = 255 };
enum { OPT_BINARY = 0, OPT_ECHO = 1, OPT_SGA = 3, OPT_COMPORT = 44 };
enum { S_DATA, S_IAC, S_OPT, S_SB, S_SB_IAC, S_CR };

/* Append to the reply when it fits (it does for the answers to one read of
 * at most TB_CONSOLE_READ_MAX bytes: see struct tb_telnet_out). */
static void put3(struct tb_telnet_out *o, unsigned char a, unsigned char b, unsigned char cc)
{
	if (o->len + 3 <= sizeof(o->buf)) {
		o->buf[o->len++] = a;
		o->buf[o->len++] = b;
		o->buf[o->len++] = cc;
	}
}

size_t tb_telnet_hello(struct tb_telnet *t, unsigned char out[9])
{
	static const unsigned char hello[9] = {IAC, WILL, OPT_BINARY, IAC, DO, OPT_BINARY, IAC, WILL, OPT_COMPORT};

	memset(t, 0, sizeof(*t));
	/* asked for: the answers confirm, and are not answered again */
	t->us[OPT_BINARY] = t->him[OPT_BINARY] = t->us[OPT_COMPORT] = 1;
	memcpy(out, hello, sizeof(hello));
	return sizeof(hello);
}

/* What we do (WILL) ourselves: binary and the COM port option. */
static int we_will(unsigned char opt)
{
	return opt == OPT_BINARY || opt == OPT_COMPORT;
}

/* What we let the server do: binary, echo and suppress-go-ahead. */
static int he_may(unsigned char opt)
{
	return opt == OPT_BINARY || opt == OPT_ECHO || opt == OPT_SGA;
}

/* One negotiation: answer only a change of state (RFC 854's rule against
 * loops). */
static void negotiate(struct tb_telnet *t, unsigned char cmd, unsigned char opt, struct tb_telnet_out *o)
{
	switch (cmd) {
	case DO:
		if (we_will(opt) && !t->us[opt]) {
			t->us[opt] = 1;
			put3(o, IAC, WILL, opt);
		} else if (!we_will(opt)) {
			put3(o, IAC, WONT, opt);
		}
		break;
	case DONT:
		if (t->us[opt]) {
			t->us[opt] = 0;
			put3(o, IAC, WONT, opt);
		}
		break;
	case WILL:
		if (he_may(opt) && !t->him[opt]) {
			t->him[opt] = 1;
			put3(o, IAC, DO, opt);
		} else if (!he_may(opt)) {
			put3(o, IAC, DONT, opt);
		}
		break;
	case WONT:
		if (t->him[opt]) {
			t->him[opt] = 0;
			put3(o, IAC, DONT, opt);
		}
		break;
	default: break;
	}
}

size_t tb_telnet_decode(struct tb_telnet *t, const unsigned char *in, size_t n, unsigned char *data,
			struct tb_telnet_out *reply)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = in[i];

		switch (t->state) {
		case S_CR: /* NVT: CR NUL is a bare CR (not in binary mode) */
			t->state = S_DATA;
			if (ch == 0)
				break;
			/* fall through */
		case S_DATA:
			if (ch == IAC) {
				t->state = S_IAC;
			} else {
				data[k++] = ch;
				if (ch == '\r' && !t->him[OPT_BINARY])
					t->state = S_CR;
			}
			break;
		case S_IAC:
			if (ch == IAC) { /* an escaped 255 */
				data[k++] = ch;
				t->state = S_DATA;
			} else if (ch == WILL || ch == WONT || ch == DO || ch == DONT) {
				t->cmd = ch;
				t->state = S_OPT;
			} else if (ch == SB) {
				t->state = S_SB;
			} else { /* NOP, GA, BRK, ...: nothing for a reader */
				t->state = S_DATA;
			}
			break;
		case S_OPT:
			negotiate(t, t->cmd, ch, reply);
			t->state = S_DATA;
			break;
		case S_SB: /* a subnegotiation (the server's COM-PORT answers): skipped */
			if (ch == IAC)
				t->state = S_SB_IAC;
			break;
		case S_SB_IAC: t->state = ch == SE ? S_DATA : S_SB; break;
		default: t->state = S_DATA; break;
		}
	}
	return k;
}

size_t tb_telnet_encode(const struct tb_telnet *t, const unsigned char *in, size_t n, unsigned char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		out[k++] = in[i];
		if (in[i] == IAC)
			out[k++] = IAC;
		else if (in[i] == '\r' && !t->us[OPT_BINARY] && (i + 1 >= n || in[i + 1] != '\n'))
			out[k++] = 0; /* NVT: a bare CR is CR NUL */
	}
	return k;
}

size_t tb_telnet_break(int on, unsigned char out[7])
{
	/* RFC 2217: IAC SB COM-PORT-OPTION SET-CONTROL(5) value IAC SE;
	 * value 5 is BREAK ON, 6 BREAK OFF */
	const unsigned char b[7] = {IAC, SB, OPT_COMPORT, 5, (unsigned char)(on ? 5 : 6), IAC, SE};

	memcpy(out, b, sizeof(b));
	return sizeof(b);
}

int tb_telnet_comport(const struct tb_telnet *t)
{
	return t->us[OPT_COMPORT];
}
