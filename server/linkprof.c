/* linkprof.c - link profiles on the routers (linkprof.h). */
#include "linkprof.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmeta.h"
#include "hosts.h"
#include "inventory.h"
#include "log.h"
#include "services.h"
#include "ssh.h"
#include "store.h"
#include "timeutil.h"

#define CMD_TIMEOUT_MS 15000
#define SLOTS 8 /* matrices with a profile at once (TB_RUNNER_WORKERS is 4) */
#define ROUTERS 8

/* What one matrix has in force: the profile index (-1: none yet, -2:
 * unknown after a failure) and the routers it touched. */
struct slot {
	int64_t matrix_id; /* 0: free */
	int index;
	int nrouters;
	char routers[ROUTERS][64];
	int64_t jid[ROUTERS]; /* its open journal row per router, 0: none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];

/* The slot of matrix_id (made when create; NULL: none or all taken). */
static struct slot *slot_of(int64_t matrix_id, bool create)
{
	struct slot *free_slot = NULL;

	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].matrix_id == matrix_id)
			return &slots[i];
		if (slots[i].matrix_id == 0 && free_slot == NULL)
			free_slot = &slots[i];
	}
	if (!create || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->matrix_id = matrix_id;
	free_slot->index = -1;
	return free_slot;
}

/* argv as root on router name's FreeBSD persona: its exit status (-1: not
 * run, with msg), stdout into *out (malloc'd) when out. */
static int on_router(struct tb_services *sv, const char *name, const char *const argv[], char **out, char *msg,
		     size_t len)
{
	struct tb_inventory *inv = tb_inv_current_get(sv->invs);
	const struct tb_machine *m = tb_inventory_find(inv, name);
	const struct tb_persona *p = m != NULL ? tb_machine_persona(m, "freebsd") : NULL;
	const char *full[16];
	struct tb_ssh_target t;
	struct tb_ssh_capture cap = {0};
	struct tb_error e = {0};
	char os[64], pin[96];
	int rc = -1;

	if (m == NULL || p == NULL) {
		snprintf(msg, len, "router %s: %s", name,
			 m == NULL ? "no longer in the inventory" : "has no freebsd persona");
		goto out;
	}
	if ((!tb_hosts_answering(sv->hosts, name, os, sizeof(os)) || strcmp(os, "freebsd") != 0) &&
	    (!tb_hosts_probe_one(sv->hosts, m, os, sizeof(os)) || strcmp(os, "freebsd") != 0)) {
		snprintf(msg, len, "router %s does not answer as freebsd (dummynet)", name);
		goto out;
	}
	tb_persona_as_root(p, argv, full, sizeof(full) / sizeof(full[0]));
	tb_hosts_target(sv->hosts, m, p, &t, pin, sizeof(pin));
	if (tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, full, CMD_TIMEOUT_MS, 8192, &cap, &e) != 0) {
		snprintf(msg, len, "router %s: %s", name, e.message);
		goto out;
	}
	rc = cap.res.exit_status;
	if (rc != 0)
		snprintf(msg, len, "router %s (freebsd): %s exited with %d: %.200s", name, argv[0], rc,
			 cap.err != NULL ? cap.err : "");
	if (out != NULL && (*out = strdup(cap.out != NULL ? cap.out : "")) == NULL) {
		snprintf(msg, len, "out of memory");
		rc = -1;
	}
out:
	tb_ssh_capture_free(&cap);
	tb_inv_current_put(sv->invs, inv);
	return rc;
}

/* Pipe 1 as `ipfw pipe 1 show` says on router name: *pipe a new reference
 * (NULL: no pipe 1); 0 or -1 with msg. */
static int read_back(struct tb_services *sv, const char *name, json_t **pipe, char *msg, size_t len)
{
	static const char *const show[] = {"ipfw", "pipe", "1", "show", NULL};
	char *text = NULL;
	json_t *all;

	*pipe = NULL;
	if (on_router(sv, name, show, &text, msg, len) != 0) {
		free(text);
		return -1;
	}
	all = tb_hostmeta_ipfw_pipes(text);
	free(text);
	*pipe = json_incref(json_object_get(all, "1"));
	json_decref(all);
	return 0;
}

static double dabs(double x)
{
	return x < 0 ? -x : x;
}

/* Profile lp on router name, read back. */
static int apply_one(struct tb_services *sv, const json_t *lp, const char *name, char *msg, size_t len)
{
	static const char *const del[] = {"ipfw", "-q", "pipe", "1", "delete", NULL};
	double bps = json_number_value(json_object_get(lp, "rate_bps"));
	double plr = json_number_value(json_object_get(lp, "loss_percent")) / 100.0;
	const json_t *queue = json_object_get(lp, "queue");
	const char *argv[12] = {"ipfw", "-q", "pipe", "1", "config", "bw"};
	char bw[40], plrs[32], qs[16];
	json_t *got = NULL;
	double gbw, gplr;
	int n = 6;

	if (json_is_null(json_object_get(lp, "name"))) { /* unshaped: no pipe 1 (deleting none is fine) */
		(void)on_router(sv, name, del, NULL, msg, len);
		if (read_back(sv, name, &got, msg, len) != 0)
			return -1;
		if (got != NULL) {
			snprintf(msg, len, "router %s: ipfw pipe 1 show still lists pipe 1 after its delete", name);
			json_decref(got);
			return -1;
		}
		return 0;
	}
	snprintf(bw, sizeof(bw), "%.0fbit/s", bps);
	argv[n++] = bw;
	if (plr > 0) {
		snprintf(plrs, sizeof(plrs), "%.6f", plr);
		argv[n++] = "plr";
		argv[n++] = plrs;
	}
	if (json_is_integer(queue)) {
		snprintf(qs, sizeof(qs), "%lld", (long long)json_integer_value(queue));
		argv[n++] = "queue";
		argv[n++] = qs;
	}
	argv[n] = NULL;
	if (on_router(sv, name, argv, NULL, msg, len) != 0 || read_back(sv, name, &got, msg, len) != 0)
		return -1;
	gbw = json_number_value(json_object_get(got, "bw_bps"));
	gplr = json_number_value(json_object_get(got, "plr"));
	if (got == NULL || dabs(gbw - bps) > bps * 0.001 + 0.5 || dabs(gplr - plr) > 1e-6) {
		snprintf(msg, len,
			 "router %s: ipfw pipe 1 show reads back %s (bw %.0f bit/s, plr %g) where bw %.0f bit/s, "
			 "plr %g was set",
			 name, got == NULL ? "no pipe 1" : "pipe 1", gbw, gplr, bps, plr);
		json_decref(got);
		return -1;
	}
	json_decref(got);
	return 0;
}

/* The journal row of router k of s open before its pipe is configured
 * (only the matrix's own thread touches s's rows). */
static int journal_open(struct tb_services *sv, struct slot *s, int k, char *msg, size_t len)
{
	struct tb_error e = {0};

	if (s->jid[k] != 0)
		return 0;
	if (tb_store_linkprof_open(sv->store, s->matrix_id, s->routers[k], 1, tb_now(), &s->jid[k], &e) != 0) {
		snprintf(msg, len, "the link profiles journal: %s", e.message);
		return -1;
	}
	return 0;
}

/* Router k's row closed (error NULL: removed) or its failure recorded. */
static void journal_done(struct tb_services *sv, struct slot *s, int k, const char *error)
{
	struct tb_error e = {0};

	if (s->jid[k] == 0)
		return;
	if (tb_store_linkprof_done(sv->store, s->jid[k], error, tb_now(), &e) != 0)
		tb_warn("linkprof", "the journal: %s", e.message);
	if (error == NULL)
		s->jid[k] = 0;
}

static int router_index(const struct slot *s, const char *name)
{
	for (int k = 0; name != NULL && k < s->nrouters; k++)
		if (strcmp(s->routers[k], name) == 0)
			return k;
	return -1;
}

int tb_lp_ensure(struct tb_services *sv, int64_t matrix_id, const json_t *lp, char *msg, size_t len)
{
	const json_t *routers = json_object_get(lp, "routers"), *r;
	int index = (int)json_integer_value(json_object_get(lp, "index"));
	const char *name = json_string_value(json_object_get(lp, "name"));
	struct slot *s;
	size_t i;
	int rc = 0;

	if (lp == NULL || !json_is_object(lp))
		return 0;
	pthread_mutex_lock(&lock);
	s = slot_of(matrix_id, true);
	if (s != NULL && s->index == index) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	for (i = 0; s != NULL && i < json_array_size(routers); i++) {
		const char *rn = json_string_value(json_array_get(routers, i));
		int seen = 0;

		for (int k = 0; rn != NULL && k < s->nrouters; k++)
			seen |= strcmp(s->routers[k], rn) == 0;
		if (rn != NULL && !seen && s->nrouters < ROUTERS)
			snprintf(s->routers[s->nrouters++], sizeof(s->routers[0]), "%s", rn);
	}
	pthread_mutex_unlock(&lock);
	if (s == NULL) {
		snprintf(msg, len, "link_profiles: more than %d matrices shape routers at once", SLOTS);
		return -1;
	}
	json_array_foreach(routers, i, r)
	{
		char why[400] = "";
		int k = router_index(s, json_string_value(r));

		if (k >= 0 && name != NULL && journal_open(sv, s, k, why, sizeof(why)) != 0) {
			snprintf(msg, len, "link_profiles[%d] (%s): %s", index, name, why);
			rc = -1;
			break;
		}
		if (apply_one(sv, lp, json_string_value(r), why, sizeof(why)) != 0) {
			snprintf(msg, len, "link_profiles[%d] (%s): %s", index, name != NULL ? name : "unshaped", why);
			rc = -1;
			break;
		}
		if (k >= 0 && name == NULL)
			journal_done(sv, s, k, NULL); /* unshaped: no pipe left to remove */
	}
	pthread_mutex_lock(&lock);
	s->index = rc == 0 ? index : -2;
	pthread_mutex_unlock(&lock);
	if (rc == 0)
		tb_info("linkprof", "matrix %lld: link_profiles[%d] (%s) in force", (long long)matrix_id, index,
			name != NULL ? name : "unshaped");
	return rc;
}

void tb_lp_end(struct tb_services *sv, int64_t matrix_id)
{
	static const char *const del[] = {"ipfw", "-q", "pipe", "1", "delete", NULL};
	struct slot copy;
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = slot_of(matrix_id, false);
	if (s != NULL) {
		copy = *s;
		s->matrix_id = 0;
	}
	pthread_mutex_unlock(&lock);
	if (s == NULL)
		return;
	for (int i = 0; i < copy.nrouters; i++) {
		char msg[400] = "";
		json_t *got = NULL;

		(void)on_router(sv, copy.routers[i], del, NULL, msg, sizeof(msg));
		if (read_back(sv, copy.routers[i], &got, msg, sizeof(msg)) != 0 || got != NULL) {
			if (got != NULL)
				snprintf(msg, sizeof(msg), "ipfw pipe 1 show still lists it");
			tb_warn("linkprof",
				"matrix %lld: pipe 1 on %s not removed: %s (the journal keeps it: removed at "
				"the next start)",
				(long long)matrix_id, copy.routers[i], msg);
			journal_done(sv, &copy, i, msg);
		} else {
			tb_info("linkprof", "matrix %lld: pipe 1 removed on %s", (long long)matrix_id, copy.routers[i]);
			journal_done(sv, &copy, i, NULL);
		}
		json_decref(got);
	}
}

/* ---- after a crash ---- */

struct open_row {
	int64_t id, matrix_id;
	char router[64];
};

struct open_rows {
	struct open_row *v;
	int n, cap, oom;
};

static void collect_open(void *cls, int64_t id, int64_t matrix_id, const char *router, int pipe)
{
	struct open_rows *rs = cls;

	(void)pipe; /* always 1 */
	if (rs->n == rs->cap) {
		int cap = rs->cap ? rs->cap * 2 : 8;
		struct open_row *v = realloc(rs->v, (size_t)cap * sizeof(*v));

		if (v == NULL) {
			rs->oom = 1;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n].id = id;
	rs->v[rs->n].matrix_id = matrix_id;
	snprintf(rs->v[rs->n].router, sizeof(rs->v[0].router), "%s", router);
	rs->n++;
}

void tb_lp_remove_pending(struct tb_services *sv)
{
	static const char *const del[] = {"ipfw", "-q", "pipe", "1", "delete", NULL};
	struct open_rows rs = {0};
	struct tb_error e = {0};

	if (tb_store_linkprof_each_open(sv->store, collect_open, &rs, &e) != 0 || rs.oom) {
		tb_warn("linkprof", "the journal: %s", rs.oom ? "out of memory" : e.message);
		free(rs.v);
		return;
	}
	for (int i = 0; i < rs.n; i++) {
		struct slot one = {.matrix_id = rs.v[i].matrix_id, .nrouters = 1, .jid = {rs.v[i].id}};
		char msg[400] = "";
		json_t *got = NULL;

		snprintf(one.routers[0], sizeof(one.routers[0]), "%s", rs.v[i].router);
		(void)on_router(sv, rs.v[i].router, del, NULL, msg, sizeof(msg));
		if (read_back(sv, rs.v[i].router, &got, msg, sizeof(msg)) != 0 || got != NULL) {
			if (got != NULL)
				snprintf(msg, sizeof(msg), "ipfw pipe 1 show still lists it");
			tb_warn("linkprof",
				"journal row %lld (matrix %lld): pipe 1 on %s stays until the next start: %s",
				(long long)rs.v[i].id, (long long)rs.v[i].matrix_id, rs.v[i].router, msg);
			journal_done(sv, &one, 0, msg);
		} else {
			tb_info("linkprof", "journal row %lld: pipe 1 of matrix %lld removed on %s after a crash",
				(long long)rs.v[i].id, (long long)rs.v[i].matrix_id, rs.v[i].router);
			journal_done(sv, &one, 0, NULL);
		}
		json_decref(got);
	}
	free(rs.v);
}
