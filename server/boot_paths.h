/*
 * boot_paths.h - the ways a dual-boot machine can be sent into an OS, as a
 * table (like power_drivers.c): one row per path saying from which OS kinds
 * it works, what it needs from the inventory/host and how many reboots it
 * costs.  tb_boot_path_choose picks the row of fewest reboots that can run
 * (a tie: the order of the table: a plain reboot into GRUB's default first,
 * then UEFI BootNext, grub-reboot, the console).  Pure: no I/O, no
 * allocation.  Also the parser of efibootmgr's output (efi-bootnext's read
 * back).
 */
#ifndef TB_BOOT_PATHS_H
#define TB_BOOT_PATHS_H

#include <stddef.h>

/* The kind of OS the host is in now. */
enum tb_boot_from {
	TB_BOOT_FROM_LINUX = 1u << 0,
	TB_BOOT_FROM_FREEBSD = 1u << 1,
	TB_BOOT_FROM_OTHER = 1u << 2, /* any other OS, or none answering */
};
#define TB_BOOT_FROM_ANY (TB_BOOT_FROM_LINUX | TB_BOOT_FROM_FREEBSD | TB_BOOT_FROM_OTHER)

/* What a path needs. */
enum tb_boot_need {
	TB_BOOT_NEED_GRUB_ENTRY = 1u << 0,     /* the inventory maps the target OS to a GRUB entry */
	TB_BOOT_NEED_EFI = 1u << 1,            /* boot.efi names the target OS's Boot#### */
	TB_BOOT_NEED_CONSOLE = 1u << 2,        /* a serial console reaches GRUB's menu */
	TB_BOOT_NEED_TARGET_DEFAULT = 1u << 3, /* the target is GRUB's default */
	TB_BOOT_NEED_DEFAULT_LINUX = 1u << 4,  /* GRUB's default is a Linux (to grub-reboot from) */
	TB_BOOT_NEED_ESP_GRUBENV = 1u << 5,    /* boot.esp_grubenv says where the OS now mounts GRUB's ESP block */
	TB_BOOT_NEED_BMC = 1u << 6,            /* boot.bmc names the target's boot device and a BMC can set it */
};

/* What the host offers now: from is one enum tb_boot_from bit, have a set
 * of enum tb_boot_need bits. */
struct tb_boot_have {
	unsigned int from;
	unsigned int have;
};

/* A row's run: the switch r describes (boot_internal.h: the machine, the
 * OS wanted, the one answering), done this path's way: write what must be
 * written, read it back, reboot, wait; r->cur gets the OS that answers.
 * Each lives in its own server/boot_path_*.c (the acting layer: linked,
 * not included, so this table stays pure). */
struct tb_boot_run;
struct tb_error;
typedef int (*tb_boot_path_fn)(struct tb_boot_run *r, struct tb_error *err);

int tb_boot_path_reboot_default(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_efi_bootnext(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_grub_reboot(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_grub_console(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_default_then(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_grubenv_esp(struct tb_boot_run *r, struct tb_error *err);
int tb_boot_path_bmc_bootdev(struct tb_boot_run *r, struct tb_error *err);

struct tb_boot_path {
	const char *name;   /* "efi-bootnext", "grub-reboot", ... (in steps and the plan) */
	unsigned int from;  /* enum tb_boot_from bits it works from */
	unsigned int needs; /* enum tb_boot_need bits, all required */
	int reboots;        /* reboots it costs */
	const char *how;    /* the command it runs, for the steps */
	tb_boot_path_fn run;
};

/* The table, in order of preference on a tie; *n gets its length. */
const struct tb_boot_path *tb_boot_paths(size_t *n);

/* The row of fewest reboots usable with h (a tie: the table's order), or
 * NULL when none is. */
const struct tb_boot_path *tb_boot_path_choose(const struct tb_boot_have *h);

/* What efibootmgr printed, Linux's (`BootNext: 0002`, `BootCurrent: 0001`)
 * or FreeBSD's (`BootNext : 0002`, `BootCurrent: 0001`, lower-case hex):
 * each four hex digits in upper case, "" when the line is not there (no
 * BootNext line: BootNext is not set). */
struct tb_efi_vars {
	char next[5];
	char current[5];
};

/* Parse efibootmgr's output into *v.  0 when it had a BootNext or
 * BootCurrent line, -1 when neither (not efibootmgr's output: *v empty). */
int tb_efi_vars_parse(const char *out, struct tb_efi_vars *v);

/* The POSIX sh script (a constant) that grubenv-esp runs as
 * `sh -c SCRIPT tb-grubenv PATH ENTRY`: it rewrites the GRUB environment
 * block at PATH (on the EFI system partition) keeping its other variables,
 * with next_entry=ENTRY, padded with '#' to GRUB's 1024 bytes, through a
 * file beside it and mv; no grub-editenv (FreeBSD has none), only sh,
 * printf, grep, wc, tr, dd, mv.  Exits 1 saying why when the block would
 * not fit.  The values come as arguments: nothing is pasted into it. */
extern const char tb_grubenv_esp_script[];

/* Does blk (a GRUB environment block as read back, len bytes) hold
 * name=value?  0 yes; -1 not a block (not 1024 bytes, or not starting with
 * "# GRUB Environment Block\n"); -2 a block without that line. */
int tb_grubenv_block_has(const char *blk, size_t len, const char *name, const char *value);

/* A boot.bmc device ("disk", "pxe", "cdrom", "bios") as Redfish's
 * BootSourceOverrideTarget ("Hdd", "Pxe", "Cd", "BiosSetup") and as
 * ipmitool's `chassis bootparam get 5` shows it selected ("Force PXE",
 * ...); NULL for anything else. */
const char *tb_boot_redfish_target(const char *dev);
const char *tb_boot_ipmi_selector(const char *dev);

#endif /* TB_BOOT_PATHS_H */
