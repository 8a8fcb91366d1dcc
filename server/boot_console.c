/* boot_console.c - GRUB's menu driven over the serial console, and the last
 * console lines of an action: see boot_console.h. */
#include "boot_console.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "bootmenu.h"
#include "console.h"
#include "grubcfg.h"
#include "hosts.h"
#include "services.h"
#include "store.h"
#include "timeutil.h"

#define HL '\001' /* reverse video began on this line (GRUB's highlight on a VT100) */
#define TAIL_LINES 20

/* ---- pure helpers ---- */

/* raw as text into out (at most len bytes): escape sequences and control
 * bytes dropped, CR LF as LF, a lone CR or a cursor move to another row as
 * LF; with hl, HL where reverse video (SGR 7) begins.  Returns the length. */
static size_t to_text(const char *raw, size_t len, char *out, int hl)
{
	size_t o = 0;
	int row = -1;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)raw[i];

		if (c == 033 && i + 1 < len && raw[i + 1] == '[') {
			size_t j = i + 2;
			int seven = 0, num = 0, first = -1;

			for (; j < len && ((unsigned char)raw[j] < 0x40 || (unsigned char)raw[j] > 0x7e); j++) {
				if (raw[j] >= '0' && raw[j] <= '9') {
					/* the console's bytes: a run of digits stops at 100000 */
					num = num >= 10000 ? 100000 : num * 10 + (raw[j] - '0');
				} else {
					seven |= num == 7;
					first = first < 0 ? num : first;
					num = 0;
				}
			}
			seven |= num == 7;
			first = first < 0 ? num : first;
			if (j < len && (raw[j] == 'H' || raw[j] == 'f') && first != row) {
				if (o > 0 && out[o - 1] != '\n')
					out[o++] = '\n';
				row = first;
			}
			if (j < len && raw[j] == 'm' && seven && hl)
				out[o++] = HL;
			i = j;
		} else if (c == 033 && i + 1 < len && raw[i + 1] == ']') {
			for (i += 2;
			     i < len && raw[i] != '\007' && !(raw[i] == 033 && i + 1 < len && raw[i + 1] == '\\');)
				i++;
			if (i < len && raw[i] == 033)
				i++;
		} else if (c == 033) {
			i++; /* a two-byte escape */
		} else if (c == '\r') {
			if (i + 1 >= len || raw[i + 1] != '\n')
				out[o++] = '\n';
			row = -1;
		} else if (c == '\n') {
			out[o++] = '\n';
			row = -1;
		} else if (c == '\t' || (c >= 0x20 && c != 0x7f)) {
			out[o++] = (char)c;
		}
	}
	return o;
}

/* The line at *p (up to '\n' or end) into buf trimmed of spaces; *p moves past it. */
static void next_line(const char **p, const char *end, char *buf, size_t max)
{
	const char *s = *p, *e = s;
	size_t n;

	while (e < end && *e != '\n')
		e++;
	*p = e < end ? e + 1 : e;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = (size_t)(e - s) < max - 1 ? (size_t)(e - s) : max - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* An entry line "|*Title   |" (or with HL) into menu. */
static void add_entry(struct tb_grub_menu *menu, char *l)
{
	char *s = l + 1, *e = l + strlen(l);
	int hl = 0;

	if (e > s && e[-1] == '|')
		*--e = '\0';
	for (char *q = s; *q; q++)
		if (*q == HL) {
			hl = 1;
			memmove(q, q + 1, strlen(q + 1) + 1);
			q--;
		}
	if (*s == '*') {
		hl = 1;
		s++;
	}
	while (*s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && e[-1] == ' ')
		*--e = '\0';
	if (*s == '\0' || menu->n >= TB_GRUB_MENU_MAX)
		return;
	if (hl)
		menu->highlighted = menu->n;
	snprintf(menu->title[menu->n++], TB_GRUB_TITLE_MAX, "%s", s);
}

/* The seconds of GRUB's countdown at s ("5s"), 0..INT_MAX (the console's
 * bytes: no number is 0, a huge one INT_MAX). */
static int countdown(const char *s)
{
	long v = strtol(s, NULL, 10);

	return v < 0 ? 0 : v > INT_MAX ? INT_MAX : (int)v;
}

int tb_grub_menu_parse(const char *raw, size_t len, struct tb_grub_menu *out)
{
	char *text = malloc(len + 1), line[256];
	const char *p = NULL, *end;
	size_t n;
	int borders = 0;

	memset(out, 0, sizeof(*out));
	out->highlighted = -1;
	out->timeout_s = -1;
	if (text == NULL)
		return 0;
	n = to_text(raw, len, text, 1);
	text[n] = '\0';
	end = text + n;
	for (const char *q = text; (q = strstr(q, "GNU GRUB")) != NULL; q++)
		p = q;
	while (p != NULL && p < end) {
		const char *at;

		next_line(&p, end, line, sizeof(line));
		if (line[0] == '+' && strstr(line, "--") != NULL) {
			borders++;
		} else if (borders == 1 && line[0] == '|') {
			add_entry(out, line);
		} else if (borders >= 2 && (at = strstr(line, "automatically in ")) != NULL) {
			for (const char *q = at; (q = strstr(q + 1, "automatically in ")) != NULL;)
				at = q; /* rewritten in place: the last */
			out->timeout_s = countdown(at + strlen("automatically in "));
			out->complete = 1;
		} else if (borders >= 2 && strstr(line, "command-line") != NULL) {
			out->complete = 1;
		}
	}
	free(text);
	return out->n > 0;
}

static int same_title(const char *shown, const char *want)
{
	size_t n = strlen(want);

	if (strcmp(shown, want) == 0)
		return 1;
	/* a submenu shows as "Title >" */
	return strncmp(shown, want, n) == 0 && strcmp(shown + n, " >") == 0;
}

int tb_grub_menu_pick(const struct tb_grub_menu *menu, const char *entry, const char *title)
{
	char *end;
	long k;

	for (int pass = 0; pass < 2; pass++) {
		const char *want = pass == 0 ? title : entry;

		for (int i = 0; want != NULL && *want && i < menu->n; i++)
			if (same_title(menu->title[i], want))
				return i;
	}
	if (entry == NULL || *entry < '0' || *entry > '9')
		return -1;
	k = strtol(entry, &end, 10);
	return *end == '\0' && k < menu->n ? (int)k : -1;
}

int tb_grub_keys(int from, int to, char *keys, size_t max, char *names, size_t nmax)
{
	int steps = to > from ? to - from : from - to;
	const char *seq = to > from ? "\033[B" : "\033[A", *name = to > from ? "Down " : "Up ";
	size_t k = 0, w = 0;

	if (from < 0 || to < 0 || (size_t)steps * 3 + 1 > max || (size_t)steps * 5 + 6 > nmax)
		return -1;
	for (int i = 0; i < steps; i++) {
		memcpy(keys + k, seq, 3);
		k += 3;
		w += (size_t)snprintf(names + w, nmax - w, "%s", name);
	}
	keys[k++] = '\r';
	snprintf(names + w, nmax - w, "Enter");
	return (int)k;
}

size_t tb_console_text_tail(const char *raw, size_t len, int nlines, char *out, size_t max)
{
	char *text = malloc(len + 1), line[201];
	const char *p, *end, *start;
	size_t n, o = 0;
	int seen = 0;

	if (max == 0)
		return 0;
	out[0] = '\0';
	if (text == NULL)
		return 0;
	n = to_text(raw, len, text, 0);
	end = text + n;
	/* back from the end over nlines non-empty lines */
	start = end;
	while (start > text && seen < nlines) {
		const char *q = start - 1, *b;
		int blank = 1;

		while (q > text && q[-1] != '\n')
			q--;
		for (b = q; b < start; b++)
			if (*b != ' ' && *b != '\t' && *b != '\n')
				blank = 0;
		seen += !blank;
		start = q;
	}
	for (p = start; p < end && o + 1 < max;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((e != NULL ? e : end) - p), k;
		int blank = 1;

		if (l > 200)
			l = 200;
		memcpy(line, p, l);
		line[l] = '\0';
		for (k = 0; k < l; k++)
			if (line[k] != ' ' && line[k] != '\t')
				blank = 0;
		p = e != NULL ? e + 1 : end;
		if (!blank)
			o += (size_t)snprintf(out + o, max - o, "%s%s", o > 0 ? "\n" : "", line);
	}
	if (o >= max)
		o = max - 1;
	free(text);
	return o;
}

/* ---- in an action ---- */

int tb_boot_console_usable(struct tb_action *a, const struct tb_machine *m)
{
	json_t *st = tb_console_state_json(tb_action_services(a)->consoles, m->name);
	int ok = json_is_true(json_object_get(st, "connected"));

	json_decref(st);
	return ok;
}

int tb_boot_console_precheck(struct tb_action *a, const struct tb_machine *m, const char *why, struct tb_error *err)
{
	char *buf = malloc(TB_CONSOLE_RING);
	struct tb_grub_menu menu;
	size_t n;
	int zero;

	if (buf == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	n = tb_console_read_since(tb_action_services(a)->consoles, m->name, 0, buf, TB_CONSOLE_RING);
	zero = tb_grub_menu_parse(buf, n, &menu) && menu.timeout_s == 0;
	free(buf);
	if (zero)
		return tb_fail(err, TB_ERR_INVALID, "os",
			       "%s, and the last GRUB menu on %s's console had a timeout of 0 s: nothing can be chosen "
			       "on it (set GRUB_TIMEOUT > 0 with GRUB_TERMINAL=\"serial console\")",
			       why, m->name);
	return 0;
}

struct pick {
	struct tb_consoles *cs;
	const struct tb_machine *m;
	const char *os, *entry;
	char title[TB_GRUB_TITLE_MAX]; /* of the entry in the menu read from Linux, "" unknown */
	char idx[64];                  /* its index path there, "" unknown */
	struct tb_console_who who;
	tb_trigger_fn reboot;
	void *cls;
};

/* Hold the console's lease on: taken again (which counts as a use), so that
 * it does not lapse (TB_CONSOLE_LEASE_IDLE_S without input) while the action
 * waits for the reboot and the menu, and is ours when the keys go (it may
 * have lapsed in a long reboot: then it is taken anew).  TB_ERR_CONFLICT
 * naming whoever holds it now. */
static int keep_lease(struct pick *p, struct tb_error *err)
{
	char taken[64];

	return tb_console_lease_take(p->cs, p->m->name, &p->who, 0, taken, err);
}

/* Wait (until the boot timeout) for a complete menu after mark into *menu,
 * the lease kept meanwhile. */
static int wait_menu(struct tb_action *a, struct pick *p, int64_t mark, struct tb_grub_menu *menu, struct tb_error *err)
{
	int64_t until = tb_monotonic_ms() + (int64_t)(p->m->shutdown_timeout_s + p->m->boot_timeout_s) * 1000;
	char *buf = malloc(TB_CONSOLE_RING);
	int rc = TB_ERR_TIMEOUT, settle = 0;

	if (buf == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	while (!tb_action_canceled(a) && tb_monotonic_ms() < until) {
		size_t n = tb_console_read_since(p->cs, p->m->name, mark, buf, TB_CONSOLE_RING);

		if ((rc = keep_lease(p, err)) != 0) {
			free(buf);
			return rc;
		}
		rc = TB_ERR_TIMEOUT;
		if (tb_grub_menu_parse(buf, n, menu) && menu->complete && (menu->timeout_s >= 0 || settle++ >= 2)) {
			rc = 0;
			break;
		}
		tb_sleep_ms(menu->complete ? 100 : 200, tb_action_cancel_flag(a));
	}
	free(buf);
	if (rc == 0)
		return 0;
	if (tb_action_canceled(a))
		return tb_fail(err, TB_ERR_CANCELED, "", "canceled while waiting for GRUB's menu");
	return tb_fail(err, TB_ERR_TIMEOUT, "",
		       "no GRUB menu on %s's console within %d s of the reboot (GRUB_TERMINAL=\"serial console\" "
		       "and GRUB_SERIAL_COMMAND in /etc/default/grub?)",
		       p->m->name, p->m->shutdown_timeout_s + p->m->boot_timeout_s);
}

/* The reboot, then the menu and the keys (the trigger of the reboot wait). */
static int pick_trigger(struct tb_action *a, void *cls, struct tb_error *err)
{
	struct pick *p = cls;
	int64_t mark = tb_console_mark(p->cs, p->m->name);
	struct tb_grub_menu menu;
	char keys[3 * TB_GRUB_MENU_MAX + 2], names[6 * TB_GRUB_MENU_MAX + 8];
	struct tb_error e = {0};
	int rc, want, from, nk;

	if ((rc = p->reboot(a, p->cls, err)) != 0 || (rc = wait_menu(a, p, mark, &menu, err)) != 0)
		return rc;
	want = tb_grub_menu_pick(&menu, p->idx[0] && strchr(p->idx, '>') == NULL ? p->idx : p->entry, p->title);
	from = menu.highlighted >= 0 ? menu.highlighted : 0;
	tb_action_note(a, "menu seen on the console: %d entries, '%s' highlighted, timeout %d s; choosing %d '%s'",
		       menu.n, menu.title[from], menu.timeout_s, want, want >= 0 ? menu.title[want] : "?");
	if (menu.timeout_s == 0)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "GRUB's menu on %s's console has a timeout of 0 s: it booted its default before a key "
			       "could choose %s (set GRUB_TIMEOUT > 0)",
			       p->m->name, p->os);
	if (want < 0)
		return tb_fail(err, TB_ERR_REMOTE, "",
			       "GRUB's menu on %s's console has no entry for %s (boot.entries.%s = \"%s\"%s%s%s): it "
			       "shows %d entries, first '%s'",
			       p->m->name, p->os, p->os, p->entry, p->title[0] ? ", titled '" : "", p->title,
			       p->title[0] ? "'" : "", menu.n, menu.title[0]);
	if ((nk = tb_grub_keys(from, want, keys, sizeof(keys), names, sizeof(names))) < 0)
		return tb_fail(err, TB_ERR_INTERNAL, "", "too many keys");
	if ((rc = keep_lease(p, err)) == 0)
		rc = tb_console_input(p->cs, p->m->name, &p->who, keys, (size_t)nk, err);
	tb_console_lease_drop(p->cs, p->m->name, &p->who, &e);
	if (rc != 0)
		return rc;
	tb_action_note(a, "sent: %s (on the console, as %s)", names, p->who.name);
	return 0;
}

/* The title and index path of entry in the menu read from Linux, if any. */
static void menu_title(struct tb_action *a, struct pick *p)
{
	struct tb_bootmenu_view v;

	tb_bootmenus_get(tb_hosts_menus(tb_action_services(a)->hosts), p->m->name, &v);
	if (v.entries != NULL && tb_grubcfg_resolve(v.entries, p->entry, p->idx, sizeof(p->idx)) == 0) {
		size_t i;
		json_t *e;

		json_array_foreach(v.entries, i, e)
		{
			/* an entry without an index or a title (not a string) is
			 * skipped: json_string_value gives NULL for it */
			const char *ix = json_string_value(json_object_get(e, "index"));
			const char *title = json_string_value(json_object_get(e, "title"));

			if (ix != NULL && title != NULL && strcmp(ix, p->idx) == 0)
				snprintf(p->title, sizeof(p->title), "%s", title);
		}
	}
	json_decref(v.entries);
}

int tb_boot_console_reboot(struct tb_action *a, const struct tb_inventory *inv, const struct tb_machine *m,
			   const char *cur, const char *os, const char *entry, tb_trigger_fn reboot, void *cls,
			   char *now_os, struct tb_error *err)
{
	struct pick p = {
		.cs = tb_action_services(a)->consoles, .m = m, .os = os, .entry = entry, .reboot = reboot, .cls = cls};
	char who[64], taken[64], msg[sizeof(err->message)];
	struct tb_error e = {0};
	int rc;

	snprintf(who, sizeof(who), "action %lld", (long long)tb_action_id(a));
	p.who = (struct tb_console_who){.name = who, .token_id = -tb_action_id(a), .admin = 0};
	if ((rc = tb_console_lease_take(p.cs, m->name, &p.who, 0, taken, err)) != 0) {
		snprintf(msg, sizeof(msg), "%s", err->message);
		return tb_fail(err, rc, "",
			       "cannot choose %s on GRUB's menu: %s (the boot types on the console and "
			       "takes no lease over)",
			       os, msg);
	}
	menu_title(a, &p);
	tb_action_note(a,
		       "%s has no grub-reboot: choosing %s on GRUB's menu over the console (its lease held by %s "
		       "until the keys are sent)",
		       cur, os, who);
	rc = tb_power_reboot_wait_for(a, inv, m, cur, os, pick_trigger, &p, now_os, err);
	tb_console_lease_drop(p.cs, m->name, &p.who, &e); /* when the trigger did not */
	return rc;
}

void tb_boot_console_tail_step(struct tb_action *a, const char *host, int64_t mark, const char *why)
{
	char *buf, out[TAIL_LINES * 202], what[256];
	size_t n;

	if (mark < 0 || (buf = malloc(TB_CONSOLE_RING)) == NULL)
		return;
	n = tb_console_read_since(tb_action_services(a)->consoles, host, mark, buf, TB_CONSOLE_RING);
	n = tb_console_text_tail(buf, n, TAIL_LINES, out, sizeof(out));
	free(buf);
	if (n == 0)
		return;
	snprintf(what, sizeof(what), "last console lines of %s since the action began (%s)", host, why);
	tb_action_step(a, what, NULL, -1, out);
}

/* What an action's end needs of its beginning. */
struct action_begun {
	int64_t mark;    /* the console's position then */
	int64_t mean_ms; /* the host's mean boot then (0: none recorded) */
	const char *host;
};

static void mean_of(void *cls, const char *host, int64_t mean_ms, int n)
{
	struct action_begun *b = cls;

	(void)n;
	if (strcmp(host, b->host) == 0)
		b->mean_ms = mean_ms;
}

void *tb_boot_console_action_begin(void *cls, struct tb_action *a)
{
	struct tb_services *sv = tb_action_services(a);
	const char *kind = tb_action_kind(a);
	struct action_begun *b;

	(void)cls;
	if ((strcmp(kind, "power") != 0 && strcmp(kind, "boot") != 0) || (b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->host = tb_action_host(a);
	b->mark = tb_console_mark(sv->consoles, b->host);
	if (b->mark >= 0) /* before this action's boot counts */
		tb_store_boot_times(sv->store, mean_of, b, NULL);
	return b;
}

void tb_boot_console_action_end(void *cls, struct tb_action *a, void *begun, int rc, int64_t took_ms)
{
	struct action_begun *b = begun;
	char why[96];

	(void)cls;
	if (b == NULL)
		return;
	if (b->mark >= 0 && rc != 0 && rc != TB_ERR_CANCELED) {
		snprintf(why, sizeof(why), "the %s failed",
			 strcmp(tb_action_kind(a), "boot") == 0 ? "boot" : "power action");
		tb_boot_console_tail_step(a, b->host, b->mark, why);
	} else if (b->mark >= 0 && rc == 0 && b->mean_ms > 0 && took_ms > b->mean_ms * 3 / 2) {
		snprintf(why, sizeof(why), "slow: %.1f s, its boots take %.1f s", (double)took_ms / 1000.0,
			 (double)b->mean_ms / 1000.0);
		tb_boot_console_tail_step(a, b->host, b->mark, why);
	}
	free(b);
}
