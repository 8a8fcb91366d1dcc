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

#endif /* TB_BOOTMENU_H */
