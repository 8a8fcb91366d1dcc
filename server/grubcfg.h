/*
 * grubcfg.h - the boot menu of a grub.cfg: what `grub-reboot ENTRY` can
 * name.  Each entry has its index path ("4", or "1>0" inside a submenu, as
 * GRUB joins them), its title and its id (--id or $menuentry_id_option).
 * Pure parsing of text, no I/O; handles the shapes update-grub writes.
 */
#ifndef TB_GRUBCFG_H
#define TB_GRUBCFG_H

#include <jansson.h>

/* A JSON array of {"index","id","title","submenu"} in menu order (new
 * reference; NULL on out of memory).  Unknown lines are ignored. */
json_t *tb_grubcfg_entries(const char *text);

/* The index path of the entry that ENTRY (an index path, an id or a title,
 * as grub-reboot takes it) names, into out; -1 when it names none. */
int tb_grubcfg_resolve(const json_t *entries, const char *entry, char *out, size_t len);

#endif /* TB_GRUBCFG_H */
