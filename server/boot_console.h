/*
 * boot_console.h - choosing an entry on GRUB's menu over the serial console
 * (a machine whose running OS cannot set the next boot: FreeBSD has no
 * grub-reboot), and the last console lines of a failed or slow action.
 *
 * The console path: take the console's writer lease as the action ("action
 * N"; a person holding it makes the boot fail naming them: never taken
 * over), mark the console's position, reboot, wait for GRUB's menu after the
 * mark ("GNU GRUB", its boxed entry lines and the help/timeout lines), send
 * Down/Up (VT100: ESC [ B, ESC [ A) from the highlighted entry to the wanted
 * one and Enter, give the lease back; the boot is then proven as every boot
 * is (the persona that answers and uname -s: boot.c).  GRUB needs
 * GRUB_TERMINAL="serial console", GRUB_SERIAL_COMMAND and a timeout > 0.
 *
 * The pure parts (parsing the menu from the console's bytes, the keys, the
 * text of the last lines) are unit-tested (tests/unit/test_boot_console.c).
 */
#ifndef TB_BOOT_CONSOLE_H
#define TB_BOOT_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "inventory.h"
#include "power.h"

struct tb_action;

/* ---- pure helpers ---- */

#define TB_GRUB_MENU_MAX 32
#define TB_GRUB_TITLE_MAX 96

/* GRUB's menu as the console showed it last (after the last "GNU GRUB"). */
struct tb_grub_menu {
	int n;                                           /* entries seen */
	char title[TB_GRUB_MENU_MAX][TB_GRUB_TITLE_MAX]; /* trimmed, a submenu's " >" kept */
	int highlighted;                                 /* '*' marked or reverse video; -1 none */
	int complete;                                    /* the box closed and the help or timeout line came */
	int timeout_s;                                   /* "executed automatically in Ns"; -1 not seen */
};

/* Parse the last GRUB menu in the console's bytes (control sequences
 * skipped; a cursor move starts a new line).  Returns 1 when a banner and
 * at least one entry were seen (out->complete says whether all of it), 0
 * when none. */
int tb_grub_menu_parse(const char *raw, size_t len, struct tb_grub_menu *out);

/* The entry of menu to choose: the one titled title (NULL: none known),
 * else the one titled entry, else entry as a top-level index ("2").  -1
 * when none fits (a submenu path "1>2" is not chosen here). */
int tb_grub_menu_pick(const struct tb_grub_menu *menu, const char *entry, const char *title);

/* The keys that move GRUB's highlight from entry from to entry to and boot
 * it: bytes (ESC [ B per Down, ESC [ A per Up, then CR) into keys (max),
 * their names ("Down Down Enter") into names.  Returns the byte count, -1
 * when they do not fit. */
int tb_grub_keys(int from, int to, char *keys, size_t max, char *names, size_t nmax);

/* The last nlines non-empty lines of the console's bytes as plain text
 * (escape sequences and control bytes other than newline and tab dropped,
 * CR LF as LF), each cut at 200 bytes, joined by '\n', into out (max).
 * Returns the length. */
size_t tb_console_text_tail(const char *raw, size_t len, int nlines, char *out, size_t max);

/* ---- in an action ---- */

/* 1 when m has a console testbedd reads (tcp, device) and it is connected
 * now, so GRUB's menu can be driven over it. */
int tb_boot_console_usable(struct tb_action *a, const struct tb_machine *m);

/* Refuse at once (TB_ERR_INVALID, field "os") when the last GRUB menu seen
 * on m's console had a timeout of 0 s: nothing can be chosen on it, and a
 * reboot would bring up GRUB's default.  why starts the message. */
int tb_boot_console_precheck(struct tb_action *a, const struct tb_machine *m, const char *why, struct tb_error *err);

/* Reboot m (from cur, by reboot(a, cls)) and choose os on GRUB's menu over
 * its console (entry: boot.entries' name of it), then wait until m answers
 * (tb_power_reboot_wait_for, expecting os); now_os (TB_NAME_MAX) gets the OS
 * that answers.  The console's lease is the action's from the start until
 * the keys are sent, kept from lapsing while the reboot and the menu take
 * their time.  TB_ERR_CONFLICT when a person holds the console's lease
 * (naming them; or an admin took it over meanwhile), TB_ERR_TIMEOUT when no
 * menu came, TB_ERR_REMOTE when the menu could not be used (timeout 0, no
 * such entry).  Blocks for a reboot. */
int tb_boot_console_reboot(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			   const char *cur, const char *os, const char *entry, tb_trigger_fn reboot, void *cls,
			   char *now_os, struct tb_error *err);

/* Add a step with the last 20 lines of host's console since mark (from
 * tb_console_mark; nothing when host has no console or printed nothing):
 * why says what went wrong ("the boot failed", "slow: ..."). */
void tb_boot_console_tail_step(struct tb_action *a, const char *host, int64_t mark, const char *why);

/* actions.h's on_begin/on_end hooks (app.c wires them; cls unused): a
 * power or boot action that fails, or takes over 1.5 times its host's mean
 * boot (as the store's boot times said when it began), gets the step above
 * ("the boot failed", "the power action failed", "slow: ..."). */
void *tb_boot_console_action_begin(void *cls, struct tb_action *a);
void tb_boot_console_action_end(void *cls, struct tb_action *a, void *begun, int rc, int64_t took_ms);

#endif /* TB_BOOT_CONSOLE_H */
