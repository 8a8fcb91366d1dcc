/* hostsnap.c - take, store and compare the host metadata of a matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services.h"
#include "validate.h"
#include "hostmeta.h"
#include "hosts.h"
#include "hostsnap.h"
#include "inventory.h"
#include "events.h"
#include "log.h"
#include "ssh.h"
#include "store.h"
#include "timeutil.h"

#define SNAP_TIMEOUT_MS 20000
#define SNAP_MAX_BYTES (256 * 1024)

const char *tb_hostsnap_iface(const struct tb_machine *m, const char *os, const char *link)
{
	const struct tb_link *l = NULL;

	for (size_t i = 0; i < m->nlinks && l == NULL; i++)
		if (link != NULL && strcmp(m->links[i].name, link) == 0)
			l = &m->links[i];
	if (l == NULL && m->nlinks > 0)
		l = &m->links[0];
	return tb_link_ifname(l, os);
}

char *tb_hostsnap_script(const struct tb_machine *m, const char *os, const char **iface)
{
	char *script = tb_hostmeta_script_any(*iface);

	if (script == NULL && *iface != NULL) {
		/* a name the script refuses (the inventory allows more): no NIC part */
		tb_warn("hostsnap", "%s (%s): interface name \"%s\" is not described", m->name, os, *iface);
		*iface = NULL;
		script = tb_hostmeta_script_any(NULL);
	}
	return script;
}

int tb_hostsnap_store(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m, const struct tb_persona *p,
		      const char *os, const char *iface, const char *const argv[], const char *out, size_t len,
		      struct tb_error *err)
{
	const char *kind = tb_hostmeta_kind(out, len);
	struct tb_snapshot_row row = {0};
	char *command = NULL, *data = NULL;
	json_t *meta = NULL;
	int rc;

	if (kind == NULL)
		return tb_fail(err, TB_ERR_REMOTE, "", "%s (%s): the metadata script printed no kind line: \"%.*s\"",
			       m->name, os, (int)(len > 80 ? 80 : strcspn(out, "\n")), out);
	if (tb_hostmeta_parse(kind, iface, out, len, &meta) != 0 || (data = json_dumps(meta, JSON_COMPACT)) == NULL ||
	    (command = tb_hosts_command_shown(p, argv)) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	row.matrix_id = matrix_id;
	row.host = m->name;
	row.os = os;
	row.taken_at = tb_now();
	row.interface = iface;
	row.command = command;
	row.data = data;
	row.raw = out;
	row.raw_len = len;
	rc = tb_store_snapshot_put(sv->store, &row, err);
	if (rc == 0)
		tb_events_publish(
			sv->events, "matrix.host", m->name, matrix_id,
			json_pack("{s:I, s:s, s:s}", "matrix", (json_int_t)matrix_id, "host", m->name, "os", os));
out:
	json_decref(meta);
	free(command);
	free(data);
	return rc;
}

/* One exec of the either-OS script (prefix before it, "" for none) on m as
 * persona p, and its output stored. */
static int take(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m, const struct tb_persona *p,
		const char *os, const char *prefix, const char *iface, struct tb_error *err)
{
	struct tb_ssh_target t;
	struct tb_ssh_capture cap = {0};
	char pin[96], *script, *full;
	const char *argv[4] = {"sh", "-c", NULL, NULL};
	size_t n;
	int has = 0, rc;

	if ((rc = tb_store_snapshot_has(sv->store, matrix_id, m->name, os, &has, err)) != 0 || has)
		return rc;
	script = tb_hostsnap_script(m, os, &iface);
	n = strlen(prefix) + (script != NULL ? strlen(script) : 0) + 1;
	if (script == NULL || (full = malloc(n)) == NULL) {
		free(script);
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	snprintf(full, n, "%s%s", prefix, script);
	argv[2] = full;
	tb_hosts_target(sv->hosts, m, p, &t, pin, sizeof(pin));
	rc = tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, argv, SNAP_TIMEOUT_MS, SNAP_MAX_BYTES, &cap, err);
	if (rc == 0)
		rc = tb_hostsnap_store(sv, matrix_id, m, p, os, iface, argv, cap.out, cap.out_len, err);
	tb_ssh_capture_free(&cap);
	free(script);
	free(full);
	return rc;
}

int tb_hostsnap_take(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m, const struct tb_persona *p,
		     const char *os, bool bsd, const char *iface, struct tb_error *err)
{
	return take(sv, matrix_id, m, p, os,
		    bsd ? TB_HOSTMETA_KERNEL_VAR "=FreeBSD; " : TB_HOSTMETA_KERNEL_VAR "=Linux; ", iface, err);
}

int tb_hostsnap_take_machine(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m,
			     struct tb_error *err)
{
	const struct tb_persona *p = NULL;
	char os[TB_NAME_MAX];
	/* the persona that answered last, at once; a probe only when none did or it is gone */
	bool guessed = tb_hosts_answering(sv->hosts, m->name, os, sizeof(os)) &&
		       (p = tb_machine_persona(m, os)) != NULL;
	if (guessed && take(sv, matrix_id, m, p, os, "", tb_hostsnap_iface(m, os, NULL), err) == 0)
		return 0;
	if (!tb_hosts_probe_one(sv->hosts, m, os, sizeof(os)))
		return tb_fail(err, TB_ERR_UNREACHABLE, "", "%s does not answer ssh in any of its OS personas",
			       m->name);
	if ((p = tb_machine_persona(m, os)) == NULL)
		return tb_fail(err, TB_ERR_INTERNAL, "", "%s answers as %s, which it has no persona for", m->name, os);
	return take(sv, matrix_id, m, p, os, "", tb_hostsnap_iface(m, os, NULL), err);
}

/* ---- views ---- */

struct collect {
	json_t *hosts;
	int oom;
};

static void collect_one(void *cls, const struct tb_snapshot_row *r)
{
	struct collect *c = cls;
	json_t *meta = json_loads(r->data, 0, NULL);
	json_t *o = json_pack("{s:s, s:s, s:I, s:s?, s:s, s:o}", "host", r->host, "os", r->os, "taken_at",
			      (json_int_t)r->taken_at, "interface", r->interface, "command", r->command, "metadata",
			      meta != NULL ? meta : json_object());

	c->oom |= o == NULL || json_array_append_new(c->hosts, o) != 0;
}

static int snapshots(struct tb_services *sv, int64_t id, json_t **hosts, struct tb_error *err)
{
	struct collect c = {json_array(), 0};
	int rc;

	*hosts = NULL;
	if ((rc = tb_store_matrix_exists(sv->store, id, err)) != 0) {
		json_decref(c.hosts);
		return rc;
	}
	if (c.hosts == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if ((rc = tb_store_snapshot_each(sv->store, id, 0, collect_one, &c, err)) != 0 || c.oom) {
		json_decref(c.hosts);
		return rc != 0 ? rc : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	*hosts = c.hosts;
	return 0;
}

int tb_hostsnap_json(struct tb_services *sv, int64_t id, json_t **out, struct tb_error *err)
{
	json_t *hosts;
	int rc;

	*out = NULL;
	if ((rc = snapshots(sv, id, &hosts, err)) != 0)
		return rc;
	*out = json_pack("{s:I, s:o}", "matrix", (json_int_t)id, "hosts", hosts);
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

/* Append path -> (a, b) to diffs for every leaf where a and b differ. */
static int diff_values(const char *path, const json_t *a, const json_t *b, json_t *diffs)
{
	char sub[512];

	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;
		int rc = 0;

		json_object_foreach((json_t *)a, k, v)
		{
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
			rc |= diff_values(sub, v, json_object_get(b, k), diffs);
		}
		json_object_foreach((json_t *)b, k, v)
		{
			if (json_object_get(a, k) != NULL)
				continue;
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
			rc |= diff_values(sub, NULL, v, diffs);
		}
		return rc;
	}
	if (a != NULL && b != NULL && json_equal(a, b))
		return 0;
	return json_array_append_new(diffs, json_pack("{s:s, s:O?, s:O?}", "path", path, "matrix", a, "other", b));
}

static const json_t *find(const json_t *hosts, const char *host, const char *os)
{
	size_t i;
	json_t *h;

	json_array_foreach(hosts, i, h) if (strcmp(json_string_value(json_object_get(h, "host")), host) == 0 &&
					    strcmp(json_string_value(json_object_get(h, "os")), os) == 0) return h;
	return NULL;
}

/* The metadata without the members that are not compared. */
static json_t *comparable(const json_t *h)
{
	json_t *m = json_deep_copy(json_object_get(h, "metadata"));

	if (m != NULL) {
		json_object_del(m, "sysctl");
		json_object_del(m, "errors");
		json_object_del(m, "uname"); /* host name and build date: release says the rest */
	}
	return m;
}

static int diff_entry(json_t *out, const json_t *h, const json_t *other_h, const char *in)
{
	json_t *diffs = json_array(), *a = NULL, *b = NULL;
	int rc = diffs == NULL;

	if (other_h != NULL && h != NULL) {
		a = comparable(h);
		b = comparable(other_h);
		rc |= a == NULL || b == NULL || diff_values("", a, b, diffs) != 0;
	}
	json_decref(a);
	json_decref(b);
	rc |= json_array_append_new(out, json_pack("{s:O, s:O, s:s, s:o}", "host",
						   json_object_get(h != NULL ? h : other_h, "host"), "os",
						   json_object_get(h != NULL ? h : other_h, "os"), "in", in,
						   "differences", diffs)) != 0;
	return rc;
}

int tb_hostsnap_diff(struct tb_services *sv, int64_t id, int64_t other, json_t **out, struct tb_error *err)
{
	json_t *mine = NULL, *theirs = NULL, *hosts = NULL, *h;
	size_t i;
	int rc, oom = 0;

	*out = NULL;
	if ((rc = snapshots(sv, id, &mine, err)) != 0)
		return rc;
	if ((rc = snapshots(sv, other, &theirs, err)) != 0) {
		json_decref(mine);
		if (rc == TB_ERR_NOT_FOUND)
			snprintf(err->field, sizeof(err->field), "other");
		return rc;
	}
	if ((hosts = json_array()) == NULL)
		oom = 1;
	json_array_foreach(mine, i, h)
	{
		const json_t *o = find(theirs, json_string_value(json_object_get(h, "host")),
				       json_string_value(json_object_get(h, "os")));

		oom |= diff_entry(hosts, h, o, o != NULL ? "both" : "matrix");
	}
	json_array_foreach(theirs, i, h) if (find(mine, json_string_value(json_object_get(h, "host")),
						  json_string_value(json_object_get(h, "os"))) == NULL)
		oom |= diff_entry(hosts, NULL, h, "other");
	json_decref(mine);
	json_decref(theirs);
	if (!oom)
		*out = json_pack("{s:I, s:I, s:o}", "matrix", (json_int_t)id, "other", (json_int_t)other, "hosts",
				 hosts);
	else
		json_decref(hosts);
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

struct rawfind {
	const char *host, *os;
	char *data;
	size_t len;
	int found, oom;
};

static void raw_one(void *cls, const struct tb_snapshot_row *r)
{
	struct rawfind *f = cls;

	if (f->found || strcmp(r->host, f->host) != 0 || strcmp(r->os, f->os) != 0)
		return;
	f->found = 1;
	if ((f->data = malloc(r->raw_len + 1)) == NULL) {
		f->oom = 1;
		return;
	}
	if (r->raw_len > 0)
		memcpy(f->data, r->raw, r->raw_len);
	f->data[r->raw_len] = '\0';
	f->len = r->raw_len;
}

int tb_hostsnap_raw(struct tb_services *sv, int64_t id, const char *host, const char *os, char **out, size_t *len,
		    struct tb_error *err)
{
	struct rawfind f = {host, os, NULL, 0, 0, 0};
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = tb_store_matrix_exists(sv->store, id, err)) != 0)
		return rc;
	if ((rc = tb_store_snapshot_each(sv->store, id, 1, raw_one, &f, err)) != 0)
		return rc;
	if (f.oom)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (!f.found)
		return tb_fail(err, TB_ERR_NOT_FOUND, "host", "matrix %lld has no snapshot of %s as %s", (long long)id,
			       host, os);
	*out = f.data;
	*len = f.len;
	return 0;
}
