/*
 * console.h - serial consoles: one always-on reader per console of the
 * inventory (a TCP console server such as ser2net in raw mode, or a local
 * serial device with termios), its scrollback, a log file per boot, a
 * writer lease, and the viewers' streams.
 *
 * Each console has a thread that connects, reads and writes; it reconnects
 * by itself with a backoff (1 s doubling to 8 s) and keeps its state
 * (connected, since, last error) for the host JSON.  What it reads goes to
 * a ring of TB_CONSOLE_RING bytes (the scrollback), to the boot's log file
 * under STATE_DIR/console/HOST/ and to every viewer's stream; a boot starts
 * a new log file at a power or boot action (tb_console_boot_mark) or when a
 * GRUB banner ("GNU GRUB") is seen on the line.  Log files are kept
 * TB_CONSOLE_KEEP_DAYS days, at most TB_CONSOLE_KEEP_FILES per console, each
 * at most TB_CONSOLE_LOG_MAX bytes.  Console bytes never go on the global
 * event bus.
 *
 * Typing needs the console's lease: one writer at a time, taken and given
 * back by the caller, taken over by an admin, gone after
 * TB_CONSOLE_LEASE_IDLE_S seconds without input.  Input is queued (at most
 * TB_CONSOLE_INPUT_MAX bytes a call, TB_CONSOLE_QUEUE_MAX waiting) and
 * written by the console's thread: no caller waits on a console.
 *
 * The consoles follow the inventory: tb_consoles_reload (an inventory
 * reload) starts readers for new consoles, stops those of consoles that went
 * away (their viewers' streams end with an "end" event saying why, their
 * lease goes) and restarts a reader whose definition changed (type,
 * address, port, device, speed, protocol, the BMC of an ipmi-sol: its
 * viewers' streams end likewise, the new reader keeps the scrollback, its
 * offsets and the lease); an unchanged console's reader runs on untouched.  Thread-safe: the list is behind a
 * read-write lock that a reload takes for writing only to swap it (no
 * thread is waited for there: a stopped reader is joined at a later reload
 * once it returned, or at the close).  No function here blocks on I/O
 * except tb_consoles_close/free (join the threads) and the log
 * listing/reading (local files).
 */
#ifndef TB_CONSOLE_H
#define TB_CONSOLE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <jansson.h>

#include "crypto.h"
#include "error.h"

struct tb_consoles;
struct tb_idle;
struct tb_inv_current;
struct tb_feed;

#define TB_CONSOLE_RING (64 * 1024)
#define TB_CONSOLE_INPUT_MAX 4096
#define TB_CONSOLE_QUEUE_MAX 16384
#define TB_CONSOLE_LOG_MAX (4 * 1024 * 1024)
#define TB_CONSOLE_KEEP_DAYS 14
#define TB_CONSOLE_KEEP_FILES 50
#define TB_CONSOLE_LEASE_IDLE_S 900
#define TB_CONSOLE_VIEWERS 16 /* streams per console */

/* Make a console for every machine of the inventory in force in invs that
 * has one of a kind read here (tcp, device) and start its thread.  Log files
 * go under state_dir/console/ (copied); idle (kept, may be NULL for none) is
 * touched on every use of a console. */
int tb_consoles_start(const char *state_dir, struct tb_inv_current *invs, struct tb_idle *idle,
		      struct tb_consoles **out, struct tb_error *err);
/* Make the consoles follow the inventory now in force in invs (see above;
 * the start is the first of these).  A console that cannot be made (its log
 * directory, memory) is logged and not read, the others are; the first
 * such error is returned.  Never waits for a reader. */
int tb_consoles_reload(struct tb_consoles *cs, struct tb_inv_current *invs, struct tb_error *err);
/* End every viewer's stream (they read end of stream) and stop the threads;
 * the feeds stay valid until the edge closes them. */
void tb_consoles_close(struct tb_consoles *cs);
/* Free (after the HTTP edge stopped: no feed left).  NULL is allowed. */
void tb_consoles_free(struct tb_consoles *cs);

/* The "console_state" object of host for GET /hosts (new reference): json
 * null when it has no console read here, else {"connected", "since",
 * "last_error", "last_error_at", "lease": {"holder", "since"}|null,
 * "viewers"}. */
json_t *tb_console_state_json(struct tb_consoles *cs, const char *host);

/* A boot of host begins now (a power or boot action): the next bytes go to a
 * new log file named for why ("power", "boot"). */
void tb_console_boot_mark(struct tb_consoles *cs, const char *host, const char *why);

/* Who types: the caller's name and token (one principal). */
struct tb_console_who {
	const char *name;
	int64_t token_id;
	int admin;
};

/* A viewer's stream: scrollback from byte offset from (-1: all kept), then
 * live.  Events: "output" (data: the bytes in base64, id: the offset after
 * them), "state" (data: tb_console_state_json) and, last, "end" (data:
 * {"reason"}) when a reload stopped the console's reader.  TB_ERR_NOT_FOUND (no
 * console), TB_ERR_RATE_LIMITED (TB_CONSOLE_VIEWERS open). */
int tb_console_open_feed(struct tb_consoles *cs, const char *host, int64_t from, struct tb_feed **out,
			 struct tb_error *err);

/* Take the lease (again, when the caller holds it).  Held by another:
 * TB_ERR_CONFLICT naming the holder, unless takeover and who->admin; then
 * *taken_from gets the former holder ("" otherwise). */
int tb_console_lease_take(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, int takeover,
			  char taken_from[64], struct tb_error *err);
/* Give the lease back (the holder, or an admin).  Not held: 0. */
int tb_console_lease_drop(struct tb_consoles *cs, const char *host, const struct tb_console_who *who,
			  struct tb_error *err);
/* The lease as JSON (new reference): {"holder","since"} or null. */
json_t *tb_console_lease_json(struct tb_consoles *cs, const char *host);

/* Queue bytes for the console (the caller must hold the lease):
 * TB_ERR_CONFLICT (no lease, another's, not connected, queue full),
 * TB_ERR_TOO_LARGE (over TB_CONSOLE_INPUT_MAX). */
int tb_console_input(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, const void *data,
		     size_t len, struct tb_error *err);
/* Send a Break (a device console: tcsendbreak); TB_ERR_INVALID where the
 * transport has none (raw TCP). */
int tb_console_break(struct tb_consoles *cs, const char *host, const struct tb_console_who *who, struct tb_error *err);

/* The kept boot logs of host, newest first (new reference):
 * [{"id","started","reason","bytes"}].  Reads a directory. */
int tb_console_logs_json(struct tb_consoles *cs, const char *host, json_t **out, struct tb_error *err);
/* The bytes of log id of host (malloc'd, *len); TB_ERR_NOT_FOUND. */
int tb_console_log_read(struct tb_consoles *cs, const char *host, const char *id, char **data, size_t *len,
			struct tb_error *err);

/* ---- pure helpers (console_ring.c, unit-tested) ---- */

/* A ring of the last cap bytes of a stream; offsets count every byte ever
 * appended. */
struct tb_ring {
	unsigned char *buf;
	size_t cap;
	uint64_t end; /* offset after the last byte */
};
int tb_ring_init(struct tb_ring *r, size_t cap); /* TB_ERR_NOMEM */
void tb_ring_free(struct tb_ring *r);
void tb_ring_append(struct tb_ring *r, const void *data, size_t len);
uint64_t tb_ring_start(const struct tb_ring *r); /* oldest offset kept */
/* Copy up to max bytes from *pos (moved up to the oldest kept when older;
 * a freed ring reads nothing, and an append to it is dropped);
 * *pos moves past them.  Returns the count. */
size_t tb_ring_read(const struct tb_ring *r, uint64_t *pos, void *out, size_t max);

/* base64 encoding: crypto.h's tb_b64_encode. */
/* Decode standard base64 (padding optional) into out (holds 3*(strlen/4)+3);
 * -1 when s is not base64. */
long tb_b64_decode(const char *s, unsigned char *out);

/* The log files of one console in dir: "<start ms>-<reason>.log". */
struct tb_conlog {
	char dir[512];
	FILE *f;          /* the current boot's file, or NULL until bytes come */
	char reason[16];  /* of the next file */
	size_t bytes;     /* in the current file */
	int keep_days;    /* prune: older files go ... */
	int keep_files;   /* ... and all but this many newest */
	size_t max_bytes; /* per file; past it the rest of the boot is dropped */
};
/* Set up (mkdir -p dir, mode 0700); no file yet. */
int tb_conlog_init(struct tb_conlog *l, const char *dir, struct tb_error *err);
/* The next bytes start a new file named for why. */
void tb_conlog_rotate(struct tb_conlog *l, const char *why);
/* Append (opening a new file when none is open, pruning then); now_ms names it. */
int tb_conlog_write(struct tb_conlog *l, const void *data, size_t len, int64_t now_ms);
void tb_conlog_close(struct tb_conlog *l);
/* Remove files older than keep_days (by their name's time) and all but the
 * keep_files newest.  Returns how many went. */
int tb_conlog_prune(const char *dir, int keep_days, int keep_files, int64_t now_ms);
/* 1 when id is a log id ("<digits>-<a-z>"). */
int tb_conlog_valid_id(const char *id);
/* Where "GNU GRUB" begins in tail (len tlen, the last bytes seen before) +
 * data: an offset into data, 0 when it began in tail, -1 when absent.
 * tail is updated with the last bytes of data. */
long tb_console_grub_banner(char tail[16], size_t *tlen, const unsigned char *data, size_t len);

/* ---- for an action that reads and types on a console (boot_console.c) ---- */

/* The position of host's console now: the offset after the last byte read
 * (what a later tb_console_read_since starts from); -1 when host has no
 * console read here.  Never blocks. */
int64_t tb_console_mark(struct tb_consoles *cs, const char *host);
/* Copy the bytes read on host's console since offset from into buf (at most
 * max): when more came, the LAST max bytes; bytes no longer kept are
 * skipped.  Returns the count (0: none, or no console).  Never blocks.  To
 * type, an action takes the lease as a principal of its own (a who whose
 * name says "action N" and whose token_id is negative: no token has one),
 * so a person's lease is never taken over and the holder is shown. */
size_t tb_console_read_since(struct tb_consoles *cs, const char *host, int64_t from, char *buf, size_t max);

#endif /* TB_CONSOLE_H */
