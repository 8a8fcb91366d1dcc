/*
 * bootmenu.h - the GRUB menus the background prober read, per machine, so
 * that GET /hosts/{name}/boot-entries answers at once and never waits on
 * ssh (boot.h tb_boot_entries).
 *
 * The prober (hosts.c) asks tb_bootmenus_due after each probe of a machine
 * whose Linux persona answers; when due it reads /boot/grub/grub.cfg
 * (tb_boot_menu_read, boot.h) and stores the result with tb_bootmenus_put
 * or tb_bootmenus_failed.  A read is due when the machine has no menu yet,
 * when a request asked for one (tb_bootmenus_want), when the answering OS
 * changed or the machine came up since the last read (a reboot may follow
 * update-grub), or when the menu is older than TB_BOOTMENU_MAX_AGE_S.  A
 * failed read is tried again after TB_BOOTMENU_RETRY_S, or at once when
 * asked.
 *
 * Thread-safe (one mutex, held for copies only: nothing here blocks on the
 * network or a process).  Ownership: put steals the entries; get returns a
 * deep copy the caller owns.
 */
#ifndef TB_BOOTMENU_H
#define TB_BOOTMENU_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "validate.h"

#define TB_BOOTMENU_MAX_AGE_S 600
#define TB_BOOTMENU_RETRY_S 60

struct tb_bootmenus;

struct tb_bootmenus *tb_bootmenus_new(void);
void tb_bootmenus_free(struct tb_bootmenus *b);

/* Should the prober read machine's menu now?  os: the persona answering
 * (Linux), up_since: since when it answers (s), now (s).  Never blocks. */
int tb_bootmenus_due(struct tb_bootmenus *b, const char *machine, const char *os, int64_t up_since, int64_t now);

/* A menu read from machine's os at at (s): entries is stolen. */
void tb_bootmenus_put(struct tb_bootmenus *b, const char *machine, const char *os, json_t *entries, int64_t at);

/* A read of machine's menu from os failed at at (s) with e. */
void tb_bootmenus_failed(struct tb_bootmenus *b, const char *machine, const char *os, const struct tb_error *e,
			 int64_t at);

/* Ask for a read at the next probe of machine. */
void tb_bootmenus_want(struct tb_bootmenus *b, const char *machine);

/* What is known of machine's menu.  *entries: a deep copy (caller's) or
 * NULL when none was read; os (len bytes) the persona it was read from;
 * *read_at (s).  *pending: a read was asked for and has not happened yet.
 * *failed: the last read failed (after the menu, if any), its error into
 * *last (code 0 when none) at *failed_at.  Never blocks. */
struct tb_bootmenu_view {
	json_t *entries;
	char os[TB_NAME_MAX];
	int64_t read_at;
	int pending;
	int failed;
	struct tb_error last;
	int64_t failed_at;
};
void tb_bootmenus_get(struct tb_bootmenus *b, const char *machine, struct tb_bootmenu_view *v);

/* GRUB's saved default (grubenv's saved_entry), read by the prober at each
 * probe of a Linux persona and after a make-default: entry "" when grubenv
 * has none (then GRUB boots its menu's default).  At at (s). */
#define TB_BOOTMENU_ENTRY_MAX 128
void tb_bootmenus_put_saved(struct tb_bootmenus *b, const char *machine, const char *entry, int64_t at);

/* The OS GRUB boots by default on m: the OS whose boot.entries names the
 * saved entry (the same string, or the same index path in the menu read),
 * else the inventory's boot.default (the fallback: nothing read, no
 * saved_entry, or one no OS of the inventory names).  Returns 1 when the
 * saved entry decided it.  mismatch: it did, and differs from boot.default.
 * Never blocks. */
struct tb_machine;
struct tb_boot_default {
	char os[TB_NAME_MAX];                    /* the default to plan from */
	int read;                                /* grubenv was read */
	char saved_entry[TB_BOOTMENU_ENTRY_MAX]; /* as read ("" none) */
	char saved_os[TB_NAME_MAX];              /* the OS it names, "" none */
	int64_t read_at;                         /* s */
	int mismatch;
};
int tb_bootmenus_default(struct tb_bootmenus *b, const struct tb_machine *m, struct tb_boot_default *out);

#endif /* TB_BOOTMENU_H */
