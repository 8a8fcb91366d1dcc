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

struct console {
	/* This console's own view of the service: state_dir, idle and
	 * lease_idle_s copied from it, and closing set when this console stops
	 * (a reload removed or changed it, or the service closes), which is
	 * what its thread and its viewers' feeds look at.  Its c and n are
	 * empty: the list is the service's (console.c). */
	struct tb_consoles *cs;
	char name[64];
	enum tb_console_type type;
	char address[256];
	unsigned int port;
	char device[256];
	unsigned int speed;
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
	int brk;         /* a Break is asked for */
	char holder[64]; /* the lease: "" none */
	int64_t holder_token;
	int64_t holder_since;  /* unix s */
	int64_t holder_use_ms; /* monotonic: last take or input */
	struct cfeed *feeds;
	unsigned nfeeds;
	int exited;                   /* its thread returned (console.c's wrapper) */
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
