/* console_internal.h - what console.c (the service, viewers, lease) and
 * console_io.c (the reader threads) share.  Private to console*.c. */
#ifndef TB_CONSOLE_INTERNAL_H
#define TB_CONSOLE_INTERNAL_H

#include <limits.h>
#include <pthread.h>

#include "console.h"
#include "feed.h"
#include "inventory.h"

struct console;

/* A viewer's stream (the tb_feed the edge holds). */
struct cfeed {
	struct tb_feed f; /* first: the edge's pointer is ours */
	struct console *c;
	struct cfeed *next;
	void (*wake)(void *cls);
	void *wake_cls;
	uint64_t pos;      /* next byte to send */
	unsigned seen_gen; /* the state generation last sent */
	int told_end;      /* the "end" event was sent (the console stopped) */
};

/* ---- telnet (console_telnet.c, pure, unit-tested) ---- */

/* What one telnet connection knows: where the decoder is, and the options
 * in force (us: what we do, him: what the server does). */
struct tb_telnet {
	int state;
	unsigned char cmd;
	unsigned char us[256];
	unsigned char him[256];
};
/* Breaks that may wait to be sent (more: 409). */
#define TB_CONSOLE_BREAKS_MAX 4
/* The most console_io.c reads from the line at once. */
#define TB_CONSOLE_READ_MAX 4096
/* Answers to the server's negotiation, to write back: room for the answers
 * to one read of the line (each 3 bytes for the 3 it answers; the 2 bytes of
 * a command cut by the read before are answered in this one). */
struct tb_telnet_out {
	unsigned char buf[TB_CONSOLE_READ_MAX + 2];
	size_t len;
};
/* Reset t for a new connection; out gets what the client says first (WILL
 * and DO BINARY, WILL COM-PORT-OPTION).  Returns its length. */
size_t tb_telnet_hello(struct tb_telnet *t, unsigned char out[9]);
/* The data bytes of n bytes from the server into data (room for n): IAC
 * commands taken out, IAC IAC made one 255, CR NUL one CR; answers to
 * negotiations appended to reply.  Returns the data length. */
size_t tb_telnet_decode(struct tb_telnet *t, const unsigned char *in, size_t n, unsigned char *data,
			struct tb_telnet_out *reply);
/* n data bytes for the wire into out (room for 2n): 255 doubled, a bare CR
 * as CR NUL unless we send binary.  Returns the length. */
size_t tb_telnet_encode(const struct tb_telnet *t, const unsigned char *in, size_t n, unsigned char *out);
/* RFC 2217 SET-CONTROL BREAK ON (on) or OFF into out.  Returns 7. */
size_t tb_telnet_break(int on, unsigned char out[7]);
/* 1 while the COM-PORT-OPTION is in force as far as t knows (asked for in
 * the hello; 0 once the server said DONT: it speaks no RFC 2217). */
int tb_telnet_comport(const struct tb_telnet *t);

struct console {
	/* This console's own view of the service: state_dir, idle and
	 * lease_idle_s copied from it, and closing set when this console stops
	 * (a reload removed or changed it, or the service closes), which is
	 * what its thread and its viewers' feeds look at.  Its c and n are
	 * empty: the list is the service's (console.c). */
	struct tb_consoles *cs;
	char name[64];
	enum tb_console_type type;
	enum tb_console_protocol protocol; /* tcp: raw or telnet */
	char address[256];
	unsigned int port;
	char device[256];
	unsigned int speed;
	/* ipmi-sol: the machine's first ipmi power entry (the password is read at
	 * each start, from the file or testbedd's environment variable) */
	char bmc_address[256];
	unsigned int bmc_port;
	char bmc_user[64];
	char bmc_password_file[512]; /* "" none */
	char bmc_password_env[128];  /* "" none */
	int bmc_cipher_suite;
	struct tb_telnet tn; /* the reader thread's only */
	pthread_t thread;
	int started;
	int pipe[2]; /* pokes the thread: input queued, stop */

	pthread_mutex_t mu; /* guards everything below */
	struct tb_ring ring;
	struct tb_conlog log;
	char grub_tail[16];
	size_t grub_tlen;
	int connected;
	int64_t since;         /* unix s: connected since, or disconnected since */
	char last_error[200];  /* "" none yet */
	int64_t last_error_at; /* unix s */
	unsigned gen;          /* bumped on every change of state or lease */
	unsigned char inq[TB_CONSOLE_QUEUE_MAX];
	size_t inlen;
	int brk;         /* Breaks asked for, not sent yet (at most TB_CONSOLE_BREAKS_MAX) */
	int comport;     /* telnet: the server has not refused RFC 2217 (the reader's tn, copied) */
	int bol;         /* ipmi-sol: what went to ipmitool ended a line (its ~ escapes work only there) */
	char holder[64]; /* the lease: "" none */
	int64_t holder_token;
	int64_t holder_since;  /* unix s */
	int64_t holder_use_ms; /* monotonic: last take or input */
	struct cfeed *feeds;
	unsigned nfeeds;
	int exited;                   /* its thread returned (console.c's wrapper) */
	struct console *prev;         /* a reload's: the reader it replaces (console_list.c) */
	int successor_waits;          /* a new reader waits for this one's end: not freed */
	char end_reason[160];         /* why it stopped, the viewers' last event; "" none */
	struct console *retired_next; /* in the service's retired list */
};

struct tb_consoles {
	char state_dir[PATH_MAX]; /* logs under state_dir/console/ */
	struct tb_idle *idle;     /* told of every use */
	int lease_idle_s;         /* a lease lapses after this long without input */
	volatile int closing;
	/* The service only (console.c): the consoles in force, and those a
	 * reload stopped whose thread or viewers are not gone yet.  lock is
	 * written by a reload and the close; every use of the list reads it. */
	pthread_rwlock_t lock;
	struct console **c;
	size_t n;
	struct console *retired;
};

/* console_list.c: with c->mu held, free c's scrollback once nothing can
 * read it any more: c stopped (a reload retired it, or the service closes),
 * its thread returned, no viewer left and no successor still to copy it.
 * The struct itself waits for the next reload's reaping; the scrollback,
 * the bulk of it, goes at once. */
void console_shed_locked(struct console *c);

/* console_io.c: what console.c asks of the kinds of console. */
/* 1 when m has a console of a kind read here (tcp, device, ipmi-sol). */
int console_reads(const struct tb_machine *m);
/* Copy what c's kind needs of m (the protocol, the BMC of an ipmi-sol). */
void console_setup_kind(struct console *c, const struct tb_machine *m);
/* "tcp", "telnet"... : the console_state's type ("tcp", "device", "ipmi-sol"). */
const char *console_type_name(const struct console *c);
/* 0 when c can send a Break now, else TB_ERR_INVALID saying why (raw TCP has
 * none) or TB_ERR_CONFLICT (telnet: the server refused RFC 2217; ipmi-sol:
 * not at the start of a line).  Locks c->mu. */
int console_break_check(struct console *c, struct tb_error *err);

/* console_sol.c: one ipmitool SOL session of c, from start to end: returns
 * 1 when it was connected (the backoff starts again), 0 when not; why gets
 * the reason it ended. */
int console_sol_session(struct console *c, char *why, size_t whylen);

/* console_io.c: the reader thread of c (started by console.c). */
void *console_thread(void *arg);
/* Under c->mu: call every attached viewer's wake. */
void console_wake_all(struct console *c);
/* Poke c's thread (input queued, stop). */
void console_poke(struct console *c);
/* Under c->mu: the connection state changed (a new state event). */
void console_set_state(struct console *c, int connected, const char *error);
/* Under c->mu: bytes read from the console. */
void console_got(struct console *c, const unsigned char *data, size_t len);

#endif /* TB_CONSOLE_INTERNAL_H */
