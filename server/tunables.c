/* tunables.c - a matrix's tunables applied, verified and restored.  See tunables.h. */
#include "tunables.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "hosts.h"
#include "hostsnap.h"
#include "inventory.h"
#include "log.h"
#include "run_exec.h"
#include "services.h"
#include "ssh.h"
#include "store_tunables.h"
#include "timeutil.h"

#define CMD_TIMEOUT_MS 15000
#define VALUE_MAX 256
#define JOURNAL_SHOWN 500

/* What a tunable is (the journal's kind). */
enum kind { K_SYSCTL, K_MTU, K_OFFLOAD, K_IRQ };

static const char *const kind_names[] = {"sysctl", "mtu", "offload", "irq"};
static const char *const kind_labels[] = {"", "mtu of ", "offload ", "interrupts of "}; /* before the name */

static enum kind kind_of(const char *k)
{
	for (int i = K_MTU; k != NULL && i <= K_IRQ; i++)
		if (strcmp(k, kind_names[i]) == 0)
			return (enum kind)i;
	return K_SYSCTL;
}

/* Where a tunable lives: the machine, the persona it answers as, the OS family. */
struct where {
	const struct tb_machine *m;
	const struct tb_persona *p;
	const char *os;
	bool bsd;
};

/* s with runs of blanks as one space, no blank at either end (sysctl -n of a
 * vector prints tabs; what was written had spaces). */
static void squeeze(const char *s, char *out, size_t len)
{
	size_t n = 0;
	bool blank = false;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	for (; *s != '\0' && n + 1 < len; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			blank = true;
			continue;
		}
		if (blank)
			out[n++] = ' ';
		blank = false;
		if (n + 1 < len)
			out[n++] = *s;
	}
	out[n] = '\0';
}

/* argv on w (through "sudo -n" when root and the persona is not root's); 0
 * when it exited 0, with its stdout squeezed into out; else -1 and msg. */
static int remote(struct tb_services *sv, const struct where *w, const char *const argv[], bool root, char *out,
		  size_t len, char *msg, size_t mlen)
{
	const char *full[12];
	const char *const *cmd = argv;
	struct tb_ssh_target t;
	struct tb_ssh_capture cap = {0};
	struct tb_error e = {0};
	char pin[96];
	int rc;

	if (root) {
		tb_persona_as_root(w->p, argv, full, sizeof(full) / sizeof(full[0]));
		cmd = full;
	}
	tb_hosts_target(sv->hosts, w->m, w->p, &t, pin, sizeof(pin));
	rc = tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, cmd, CMD_TIMEOUT_MS, 8192, &cap, &e);
	if (rc != 0)
		snprintf(msg, mlen, "%s", e.message);
	else if (cap.res.exit_status != 0)
		snprintf(msg, mlen, "%s (%s): %s exited with %d: %.200s", w->m->name, w->os, argv[0],
			 cap.res.exit_status, cap.err != NULL ? cap.err : "");
	else if (out != NULL)
		squeeze(cap.out != NULL ? cap.out : "", out, len);
	rc = rc != 0 || cap.res.exit_status != 0 ? -1 : 0;
	tb_ssh_capture_free(&cap);
	return rc;
}

/*
 * An interface's interrupts, "N=LIST N=LIST" (cpulist.h), and setting them:
 * Linux, its device's MSI vectors (/sys/class/net/IF/device/msi_irqs, else
 * its legacy irq) and /proc/irq/N/smp_affinity_list; FreeBSD, the lines of
 * `vmstat -ai` named "IF:..." and `cpuset -g -x N` / `cpuset -l LIST -x N`.
 * VALUE is one list for every IRQ or "N=LIST ..." IRQ by IRQ (a restore).
 * "none" when the interface has none (a virtual one).
 */
static const char IRQS_LINUX[] =
	"d=/sys/class/net/$1/device; if [ -d $d/msi_irqs ]; then irqs=$(ls $d/msi_irqs); "
	"elif [ -r $d/irq ]; then irqs=$(cat $d/irq); else irqs=; fi; [ -n \"$irqs\" ] || { echo none; exit 0; }; ";
static const char IRQS_FREEBSD[] =
	"irqs=$(vmstat -ai | awk -v d=\"$1:\" 'index($2, d) == 1 { sub(/^irq/, \"\", $1); sub(/:$/, \"\", $1); "
	"print $1 }'); [ -n \"$irqs\" ] || { echo none; exit 0; }; ";
static const char IRQ_PICK[] = "l=$2; case \" $2\" in *\" $i=\"*) l=\" $2\"; l=${l#*\" $i=\"}; l=${l%% *};; esac; ";

/* The interrupts of interface ifn on w, "N=LIST ...", into out. */
static int read_irqs(struct tb_services *sv, const struct where *w, const char *ifn, char *out, size_t len, char *msg,
		     size_t mlen)
{
	char script[1024];
	const char *argv[] = {"sh", "-c", script, "sh", ifn, NULL};

	snprintf(script, sizeof(script), "%sfor i in $irqs; do printf '%%s=%%s ' $i \"$(%s)\"; done; echo",
		 w->bsd ? IRQS_FREEBSD : IRQS_LINUX,
		 w->bsd ? "cpuset -g -x $i | sed 's/.*mask: //; s/ //g'" : "cat /proc/irq/$i/smp_affinity_list");
	if (remote(sv, w, argv, false, out, len, msg, mlen) != 0)
		return -1;
	if (strcmp(out, "none") == 0 || out[0] == '\0') {
		snprintf(msg, mlen,
			 "%s (%s): %s has no interrupts of its own (%s): a virtual interface has none to place",
			 w->m->name, w->os, ifn,
			 w->bsd ? "no line of vmstat -ai names it" : "no /sys/class/net/IF/device/msi_irqs or irq");
		return -1;
	}
	return 0;
}

/* value (one CPU list, or "N=LIST ..." IRQ by IRQ) onto ifn's interrupts on w. */
static int write_irqs(struct tb_services *sv, const struct where *w, const char *ifn, const char *value, char *msg,
		      size_t mlen)
{
	char script[1024];
	const char *argv[] = {"sh", "-c", script, "sh", ifn, value, NULL};

	snprintf(script, sizeof(script), "%sfor i in $irqs; do %s%s || exit 1; done",
		 w->bsd ? IRQS_FREEBSD : IRQS_LINUX, IRQ_PICK,
		 w->bsd ? "cpuset -l \"$l\" -x $i" : "echo \"$l\" > /proc/irq/$i/smp_affinity_list");
	return remote(sv, w, argv, true, NULL, 0, msg, mlen);
}

/* Whether now (read back) is want: the same CPUs for interrupts, else the same text. */
static bool same_value(enum kind k, const char *now, const char *want)
{
	return k == K_IRQ ? tb_cpulist_irqs_match(now, want) : strcmp(now, want) == 0;
}

/* An offload's name in the journal, "IF/feature", split. */
static void offload_split(const char *name, char *ifn, size_t n, const char **feat)
{
	const char *slash = strchr(name, '/');

	snprintf(ifn, n, "%.*s", slash != NULL ? (int)(slash - name) : (int)strlen(name), name);
	*feat = slash != NULL ? slash + 1 : "";
}

/* The offload name ("IF/tso", "IF/lro") in force on w: "on" or "off".
 * Linux: ethtool -k's "tcp-segmentation-offload: on" (or "... off [fixed]");
 * FreeBSD: ifconfig's options=...<...,TSO4,...,LRO,...>. */
static int read_offload(struct tb_services *sv, const struct where *w, const char *name, char *out, size_t len,
			char *msg, size_t mlen)
{
	char ifn[VALUE_MAX], key[64], *text = malloc(16384);
	const char *feat, *at;
	const char *lin[] = {"ethtool", "-k", ifn, NULL};
	const char *bsd[] = {"ifconfig", ifn, NULL};
	int rc = -1;

	offload_split(name, ifn, sizeof(ifn), &feat);
	if (text == NULL || remote(sv, w, w->bsd ? bsd : lin, false, text, 16384, msg, mlen) != 0)
		goto out;
	if (!w->bsd) {
		snprintf(key, sizeof(key),
			 "%s: ", strcmp(feat, "tso") == 0 ? "tcp-segmentation-offload" : "large-receive-offload");
		if ((at = strstr(text, key)) == NULL) {
			snprintf(msg, mlen, "%s (%s): ethtool -k %s says nothing of %.*s", w->m->name, w->os, ifn,
				 (int)strlen(key) - 2, key);
			goto out;
		}
		at += strlen(key);
		snprintf(out, len, "%.*s", (int)strcspn(at, " "), at);
	} else {
		const char *opt = strstr(text, "options="), *lt = opt != NULL ? strchr(opt, '<') : NULL;
		const char *gt = lt != NULL ? strchr(lt, '>') : NULL;
		const char *flag = strcmp(feat, "tso") == 0 ? "TSO4" : "LRO";
		size_t fl = strlen(flag);
		bool on = false;

		for (at = lt; gt != NULL && at != NULL && at < gt; at = strchr(at + 1, ','))
			on |= strncmp(at + 1, flag, fl) == 0 && (at[1 + fl] == ',' || at[1 + fl] == '>');
		snprintf(out, len, "%s", on ? "on" : "off");
	}
	rc = 0;
out:
	free(text);
	return rc;
}

/* The value of sysctl, interface (MTU) or offload name in force on w into out. */
static int read_value(struct tb_services *sv, const struct where *w, enum kind k, const char *name, char *out,
		      size_t len, char *msg, size_t mlen)
{
	const char *sys[] = {"sysctl", "-n", name, NULL};
	const char *lin[] = {"ip", "-o", "link", "show", "dev", name, NULL};
	const char *bsd[] = {"ifconfig", name, NULL};
	char text[VALUE_MAX * 4];
	const char *at;

	if (k == K_OFFLOAD)
		return read_offload(sv, w, name, out, len, msg, mlen);
	if (k == K_IRQ)
		return read_irqs(sv, w, name, out, len, msg, mlen);
	if (k == K_SYSCTL)
		return remote(sv, w, sys, false, out, len, msg, mlen);
	if (remote(sv, w, w->bsd ? bsd : lin, false, text, sizeof(text), msg, mlen) != 0)
		return -1;
	/* both print "... mtu N ..." on the interface's first line */
	if ((at = strstr(text, " mtu ")) == NULL) {
		snprintf(msg, mlen, "%s (%s): no \"mtu\" in what %s said of %s", w->m->name, w->os,
			 w->bsd ? "ifconfig" : "ip link", name);
		return -1;
	}
	snprintf(out, len, "%.*s", (int)strspn(at + 5, "0123456789"), at + 5);
	return 0;
}

static int write_value(struct tb_services *sv, const struct where *w, enum kind k, const char *name, const char *value,
		       char *msg, size_t mlen)
{
	char assign[2 * VALUE_MAX], ifn[VALUE_MAX], flag[16];
	const char *feat;
	const char *loff[] = {"ethtool", "-K", ifn, "", value, NULL};
	const char *boff[] = {"ifconfig", ifn, flag, NULL};
	const char *lsys[] = {"sysctl", "-w", assign, NULL};
	const char *bsys[] = {"sysctl", assign, NULL};
	const char *lmtu[] = {"ip", "link", "set", "dev", name, "mtu", value, NULL};
	const char *bmtu[] = {"ifconfig", name, "mtu", value, NULL};

	snprintf(assign, sizeof(assign), "%s=%s", name, value);
	if (k == K_OFFLOAD) { /* ethtool -K IF tso off; ifconfig IF -tso */
		offload_split(name, ifn, sizeof(ifn), &feat);
		loff[3] = feat;
		snprintf(flag, sizeof(flag), "%s%s", strcmp(value, "on") == 0 ? "" : "-", feat);
		return remote(sv, w, w->bsd ? boff : loff, true, NULL, 0, msg, mlen);
	}
	if (k == K_MTU)
		return remote(sv, w, w->bsd ? bmtu : lmtu, true, NULL, 0, msg, mlen);
	if (k == K_IRQ)
		return write_irqs(sv, w, name, value, msg, mlen);
	return remote(sv, w, w->bsd ? bsys : lsys, true, NULL, 0, msg, mlen);
}

/* ---- restoring ---- */

struct open_row {
	int64_t id;
	char host[TB_NAME_MAX], os[TB_NAME_MAX];
	bool bsd;
	enum kind kind;
	char name[VALUE_MAX], original[VALUE_MAX];
	char answers[TB_NAME_MAX]; /* restore_pending: the OS the host answered in ("": none) */
};

struct open_rows {
	struct open_row *v;
	int n, cap, oom;
};

static void collect_open(void *cls, const struct tb_tunable_row *r)
{
	struct open_rows *rs = cls;
	struct open_row *o;

	if (rs->n == rs->cap) {
		int cap = rs->cap ? rs->cap * 2 : 16;
		struct open_row *v = realloc(rs->v, (size_t)cap * sizeof(*v));

		if (v == NULL) {
			rs->oom = 1;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	o = &rs->v[rs->n++];
	o->id = r->id;
	snprintf(o->host, sizeof(o->host), "%s", r->host);
	snprintf(o->os, sizeof(o->os), "%s", r->os);
	o->bsd = strcmp(r->family, "freebsd") == 0;
	o->kind = kind_of(r->kind);
	snprintf(o->name, sizeof(o->name), "%s", r->name);
	snprintf(o->original, sizeof(o->original), "%s", r->original);
}

/* Put o's original back on w, read it back, close the row. */
static int restore_row(struct tb_services *sv, const struct where *w, const struct open_row *o, char *msg, size_t mlen)
{
	char now[VALUE_MAX], want[VALUE_MAX];

	squeeze(o->original, want, sizeof(want));
	if (write_value(sv, w, o->kind, o->name, o->original, msg, mlen) != 0 ||
	    read_value(sv, w, o->kind, o->name, now, sizeof(now), msg, mlen) != 0)
		goto failed;
	if (!same_value(o->kind, now, want)) {
		snprintf(msg, mlen, "%s (%s): %s%s restored to \"%s\", read back \"%s\"", w->m->name, w->os,
			 o->kind == K_SYSCTL ? "sysctl " : kind_labels[o->kind], o->name, want, now);
		goto failed;
	}
	tb_store_tunable_state(sv->store, o->id, "restored", NULL, tb_now(), NULL);
	tb_info("tunables", "%s (%s): %s%s back to %s", w->m->name, w->os, kind_labels[o->kind], o->name, want);
	return 0;
failed:
	tb_store_tunable_state(sv->store, o->id, "applied", msg, 0, NULL);
	tb_warn("tunables", "%s", msg);
	return -1;
}

int tb_tun_restore_host(struct tb_services *sv, struct tb_run_host *h, char *msg, size_t len)
{
	struct open_rows rs = {0};
	struct tb_error e = {0};
	struct where w = {h->m, h->p, h->os, h->bsd};
	int rc = 0;

	if (tb_store_tunable_open(sv->store, h->m->name, collect_open, &rs, &e) != 0 || rs.oom) {
		snprintf(msg, len, "the tunables journal: %s", rs.oom ? "out of memory" : e.message);
		free(rs.v);
		return -1;
	}
	for (int i = 0; i < rs.n; i++) {
		char m[400];

		/* a row of another OS waits until the host answers in it again */
		if (strcmp(rs.v[i].os, h->os) != 0 || h->p == NULL)
			continue;
		w.bsd = rs.v[i].bsd;
		if (restore_row(sv, &w, &rs.v[i], m, sizeof(m)) != 0 && rc == 0) {
			snprintf(msg, len, "%s", m);
			rc = -1;
		}
	}
	free(rs.v);
	if (rc == 0)
		h->tun_set = 0;
	return rc;
}

void tb_tun_restore_pending(struct tb_services *sv)
{
	struct open_rows rs = {0};
	struct tb_error e = {0};
	struct tb_inventory *inv;

	if (tb_store_tunable_open(sv->store, NULL, collect_open, &rs, &e) != 0 || rs.oom || rs.n == 0) {
		if (rs.oom || e.message[0] != '\0')
			tb_warn("tunables", "the journal: %s", rs.oom ? "out of memory" : e.message);
		free(rs.v);
		return;
	}
	inv = tb_inv_current_get(sv->invs);
	for (int i = 0; i < rs.n; i++) {
		const struct tb_machine *m = tb_inventory_find(inv, rs.v[i].host);
		char os[TB_NAME_MAX] = "", msg[400];
		struct where w = {m, NULL, rs.v[i].os, rs.v[i].bsd};
		int k;

		if (m == NULL) {
			tb_warn("tunables", "journal row %lld: %s is no longer in the inventory: %s stays changed",
				(long long)rs.v[i].id, rs.v[i].host, rs.v[i].name);
			continue;
		}
		/* one probe per host: an earlier row of the same host has its answer */
		for (k = 0; k < i && strcmp(rs.v[k].host, rs.v[i].host) != 0; k++)
			;
		if (k < i)
			snprintf(os, sizeof(os), "%s", rs.v[k].answers);
		else if (!tb_hosts_probe_one(sv->hosts, m, os, sizeof(os)))
			os[0] = '\0';
		snprintf(rs.v[i].answers, sizeof(rs.v[i].answers), "%s", os);
		if (strcmp(os, rs.v[i].os) != 0 || (w.p = tb_machine_persona(m, rs.v[i].os)) == NULL) {
			tb_warn("tunables", "%s does not answer as %s: %s stays %s (journal row %lld) until it does",
				m->name, rs.v[i].os, rs.v[i].name, "changed", (long long)rs.v[i].id);
			continue;
		}
		restore_row(sv, &w, &rs.v[i], msg, sizeof(msg));
	}
	tb_inv_current_put(sv->invs, inv);
	free(rs.v);
}

/* ---- applying ---- */

/* Value of one entry of a set on family f: the name (NULL: none for f) and the value. */
static int entry_of(const json_t *x, int f, enum kind *k, const char **name, const char **value, int *index)
{
	const char *fam = f ? "freebsd" : "linux";

	*k = kind_of(json_string_value(json_object_get(x, "kind")));
	*name = json_string_value(json_object_get(x, fam));
	*value = json_string_value(json_object_get(json_object_get(x, "value"), fam));
	*index = (int)json_integer_value(json_object_get(x, "tunable"));
	return *value != NULL ? 0 : -1;
}

/* One tunable of the set on h: journal, set, read back. */
static int apply_one(struct tb_services *sv, int64_t matrix_id, int seq, struct tb_run_host *h, const json_t *x,
		     const char *link, char *msg, size_t len)
{
	struct where w = {h->m, h->p, h->os, h->bsd};
	const char *fam = h->bsd ? "freebsd" : "linux", *name, *value;
	char orig[VALUE_MAX], now[VALUE_MAX], want[VALUE_MAX], label[160], ofl[VALUE_MAX];
	struct tb_error e = {0};
	enum kind k;
	int idx;
	int64_t id;

	if (entry_of(x, h->bsd, &k, &name, &value, &idx) != 0) {
		snprintf(msg, len, "tunables[%d].values: no %s value for %s (%s)", idx, fam, h->m->name, h->os);
		return -1;
	}
	if (k != K_SYSCTL) { /* on the link's interface; an offload's journal name is "IF/feature" */
		const char *ifn = tb_hostsnap_iface(h->m, h->os, link), *feat = name;

		name = ifn;
		if (ifn != NULL && k == K_OFFLOAD) {
			snprintf(ofl, sizeof(ofl), "%s/%s", ifn, feat != NULL ? feat : "");
			name = ofl;
		}
	}
	if (name == NULL) {
		if (k != K_SYSCTL)
			snprintf(msg, len,
				 "tunables[%d] (%s): %s has no interface name for its link %s in %s in the inventory",
				 idx, kind_names[k], h->m->name, link, h->os);
		else
			snprintf(msg, len, "tunables[%d].%s: the tunable names no %s sysctl, and %s answers as %s", idx,
				 fam, fam, h->m->name, h->os);
		return -1;
	}
	snprintf(label, sizeof(label), "tunables[%d] (%s%s) on %s (%s)", idx, kind_labels[k], name, h->m->name, h->os);
	if (read_value(sv, &w, k, name, orig, sizeof(orig), msg, len) != 0) {
		char m[400];

		snprintf(m, sizeof(m), "%s", msg);
		snprintf(msg, len, "%s: cannot read it: %s", label, m);
		return -1;
	}
	{
		struct tb_tunable_row row = {.matrix_id = matrix_id,
					     .seq = seq,
					     .host = h->m->name,
					     .os = h->os,
					     .family = fam,
					     .kind = kind_names[k],
					     .name = name,
					     .original = orig,
					     .applied = value,
					     .created_at = tb_now()};

		/* the original is in the store before anything changes */
		if (tb_store_tunable_insert(sv->store, &row, &id, &e) != 0) {
			snprintf(msg, len, "%s: not changed: the journal: %s", label, e.message);
			return -1;
		}
	}
	squeeze(value, want, sizeof(want));
	if (write_value(sv, &w, k, name, value, now, sizeof(now)) != 0) {
		snprintf(msg, len, "%s: setting \"%s\" failed: %s", label, value, now);
		return -1;
	}
	if (read_value(sv, &w, k, name, now, sizeof(now), msg, len) != 0)
		return -1;
	if (!same_value(k, now, want)) {
		snprintf(msg, len, "%s: set to \"%s\", read back \"%s\"", label, want, now);
		return -1;
	}
	tb_store_tunable_state(sv->store, id, "applied", NULL, 0, NULL);
	return 0;
}

int tb_tun_ensure(struct tb_services *sv, int64_t matrix_id, int seq, struct tb_run_host *h, const json_t *set,
		  const char *link, char *msg, size_t len)
{
	int want = set != NULL ? 1 + (int)json_integer_value(json_object_get(set, "set")) : 0;
	const json_t *x;
	size_t i;

	if (h->tun_set == want)
		return 0;
	if (h->tun_set != 0 && tb_tun_restore_host(sv, h, msg, len) != 0)
		return -1;
	h->tun_set = 0;
	if (want == 0)
		return 0;
	/* from here on h has rows to restore, whatever happens */
	h->tun_set = -1;
	json_array_foreach(json_object_get(set, "values"), i, x)
	{
		if (apply_one(sv, matrix_id, seq, h, x, link, msg, len) != 0) {
			char m[400];

			tb_warn("tunables", "matrix %lld run %d: %s", (long long)matrix_id, seq, msg);
			if (tb_tun_restore_host(sv, h, m, sizeof(m)) != 0)
				tb_warn("tunables", "%s", m);
			return -1;
		}
	}
	h->tun_set = want;
	tb_info("tunables", "matrix %lld run %d: %s (%s) has tunable set %d", (long long)matrix_id, seq, h->m->name,
		h->os, want - 1);
	return 0;
}

/* ---- the journal shown ---- */

static void row_json(void *cls, const struct tb_tunable_row *r)
{
	/* times as every other reply has them (RFC 3339), not Unix seconds */
	json_t *o = json_pack("{s:I, s:I, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:o, s:o}", "id",
			      (json_int_t)r->id, "matrix", (json_int_t)r->matrix_id, "seq", r->seq, "host", r->host,
			      "os", r->os, "family", r->family, "kind", r->kind, "name", r->name, "original",
			      r->original, "applied", r->applied, "state", r->state, "error", r->error, "created_at",
			      tb_time_json(r->created_at), "restored_at",
			      r->restored_at > 0 ? tb_time_json(r->restored_at) : json_null());

	if (o != NULL)
		json_array_append_new(cls, o);
}

json_t *tb_tun_journal_json(struct tb_services *sv, int all)
{
	json_t *rows = json_array();
	struct tb_error e = {0};
	size_t i, open = 0;
	json_t *x;

	if (rows == NULL)
		return NULL;
	if ((all ? tb_store_tunable_recent(sv->store, JOURNAL_SHOWN, row_json, rows, &e)
		 : tb_store_tunable_open(sv->store, NULL, row_json, rows, &e)) != 0) {
		json_decref(rows);
		return NULL;
	}
	json_array_foreach(rows, i, x) open += strcmp(json_string_value(json_object_get(x, "state")), "restored") != 0;
	return json_pack("{s:I, s:o}", "open", (json_int_t)open, "rows", rows);
}
