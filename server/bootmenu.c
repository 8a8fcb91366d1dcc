/* bootmenu.c - the GRUB menus the prober read, per machine: see bootmenu.h. */
#include "bootmenu.h"
#include "validate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grubcfg.h"
#include "inventory.h"

struct menu {
	char machine[TB_NAME_MAX];
	char os[TB_NAME_MAX]; /* read from */
	json_t *entries;      /* NULL: none read yet */
	int64_t read_at;
	int want;   /* a request asked for a read */
	int failed; /* the last read failed */
	char failed_os[TB_NAME_MAX];
	struct tb_error last;
	int64_t failed_at;
	int has_saved; /* grubenv was read */
	char saved[TB_BOOTMENU_ENTRY_MAX];
	int64_t saved_at;
};

struct tb_bootmenus {
	pthread_mutex_t lock;
	struct menu *m;
	size_t n;
};

struct tb_bootmenus *tb_bootmenus_new(void)
{
	struct tb_bootmenus *b = calloc(1, sizeof(*b));

	if (b != NULL)
		pthread_mutex_init(&b->lock, NULL);
	return b;
}

void tb_bootmenus_free(struct tb_bootmenus *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++)
		json_decref(b->m[i].entries);
	free(b->m);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* machine's slot (lock held), created when create; NULL when out of memory. */
static struct menu *slot(struct tb_bootmenus *b, const char *machine, int create)
{
	struct menu *grown;

	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->m[i].machine, machine) == 0)
			return &b->m[i];
	if (!create || (grown = realloc(b->m, (b->n + 1) * sizeof(*grown))) == NULL)
		return NULL;
	b->m = grown;
	memset(&b->m[b->n], 0, sizeof(b->m[0]));
	snprintf(b->m[b->n].machine, sizeof(b->m[0].machine), "%s", machine);
	return &b->m[b->n++];
}

int tb_bootmenus_due(struct tb_bootmenus *b, const char *machine, const char *os, int64_t up_since, int64_t now)
{
	struct menu *s;
	int due;

	pthread_mutex_lock(&b->lock);
	s = slot(b, machine, 0);
	if (s == NULL)
		due = 1;
	else if (s->want)
		due = 1;
	else if (s->failed && now - s->failed_at < TB_BOOTMENU_RETRY_S && strcmp(s->failed_os, os) == 0 &&
		 up_since <= s->failed_at)
		due = 0;
	else if (s->entries == NULL || s->failed)
		due = 1;
	else
		due = strcmp(s->os, os) != 0 || up_since > s->read_at || now - s->read_at >= TB_BOOTMENU_MAX_AGE_S;
	pthread_mutex_unlock(&b->lock);
	return due;
}

void tb_bootmenus_put(struct tb_bootmenus *b, const char *machine, const char *os, json_t *entries, int64_t at)
{
	struct menu *s;

	pthread_mutex_lock(&b->lock);
	if ((s = slot(b, machine, 1)) != NULL) {
		json_decref(s->entries);
		s->entries = entries;
		entries = NULL;
		snprintf(s->os, sizeof(s->os), "%s", os);
		s->read_at = at;
		s->want = 0;
		s->failed = 0;
	}
	pthread_mutex_unlock(&b->lock);
	json_decref(entries);
}

void tb_bootmenus_failed(struct tb_bootmenus *b, const char *machine, const char *os, const struct tb_error *e,
			 int64_t at)
{
	struct menu *s;

	pthread_mutex_lock(&b->lock);
	if ((s = slot(b, machine, 1)) != NULL) {
		s->want = 0;
		s->failed = 1;
		s->last = *e;
		s->failed_at = at;
		snprintf(s->failed_os, sizeof(s->failed_os), "%s", os);
	}
	pthread_mutex_unlock(&b->lock);
}

void tb_bootmenus_want(struct tb_bootmenus *b, const char *machine)
{
	struct menu *s;

	pthread_mutex_lock(&b->lock);
	if ((s = slot(b, machine, 1)) != NULL)
		s->want = 1;
	pthread_mutex_unlock(&b->lock);
}

void tb_bootmenus_get(struct tb_bootmenus *b, const char *machine, struct tb_bootmenu_view *v)
{
	struct menu *s;

	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&b->lock);
	if ((s = slot(b, machine, 0)) != NULL) {
		v->entries = s->entries != NULL ? json_deep_copy(s->entries) : NULL;
		snprintf(v->os, sizeof(v->os), "%s", s->os);
		v->read_at = s->read_at;
		v->pending = s->want;
		v->failed = s->failed;
		if (s->failed) {
			v->last = s->last;
			v->failed_at = s->failed_at;
		}
	}
	pthread_mutex_unlock(&b->lock);
}

void tb_bootmenus_put_saved(struct tb_bootmenus *b, const char *machine, const char *entry, int64_t at)
{
	struct menu *s;

	pthread_mutex_lock(&b->lock);
	if ((s = slot(b, machine, 1)) != NULL) {
		s->has_saved = 1;
		snprintf(s->saved, sizeof(s->saved), "%s", entry);
		s->saved_at = at;
	}
	pthread_mutex_unlock(&b->lock);
}

/* The OS whose inventory entry names the same GRUB entry as saved: the same
 * string, else the same index path in the menu read (lock held). */
static const char *os_of_entry(const struct menu *s, const struct tb_machine *m)
{
	char want[64], idx[64];
	int resolved = s->entries != NULL && tb_grubcfg_resolve(s->entries, s->saved, want, sizeof(want)) == 0;

	for (size_t i = 0; i < m->boot.nentries; i++)
		if (strcmp(m->boot.entries[i].entry, s->saved) == 0)
			return m->boot.entries[i].os;
	for (size_t i = 0; resolved && i < m->boot.nentries; i++)
		if (tb_grubcfg_resolve(s->entries, m->boot.entries[i].entry, idx, sizeof(idx)) == 0 &&
		    strcmp(idx, want) == 0)
			return m->boot.entries[i].os;
	return NULL;
}

int tb_bootmenus_default(struct tb_bootmenus *b, const struct tb_machine *m, struct tb_boot_default *out)
{
	struct menu *s;
	const char *os = NULL;

	memset(out, 0, sizeof(*out));
	snprintf(out->os, sizeof(out->os), "%s", m->boot.default_os != NULL ? m->boot.default_os : "");
	pthread_mutex_lock(&b->lock);
	s = slot(b, m->name, 0);
	if (s != NULL && s->has_saved) {
		out->read = 1;
		snprintf(out->saved_entry, sizeof(out->saved_entry), "%s", s->saved);
		out->read_at = s->saved_at;
		if (s->saved[0] != '\0' && (os = os_of_entry(s, m)) != NULL) {
			snprintf(out->saved_os, sizeof(out->saved_os), "%s", os);
			snprintf(out->os, sizeof(out->os), "%s", os);
		}
	}
	pthread_mutex_unlock(&b->lock);
	out->mismatch = out->saved_os[0] != '\0' && m->boot.default_os != NULL &&
			strcmp(out->saved_os, m->boot.default_os) != 0;
	return os != NULL;
}
