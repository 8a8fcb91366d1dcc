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
#include "shaper.h"
#include "ssh.h"
#include "store.h"
#include "timeutil.h"

#define CMD_TIMEOUT_MS 15000
#define SLOTS 8 /* matrices with a profile at once (TB_RUNNER_WORKERS is 4) */
#define ROUTERS 8
#define ROUTER_IFS 8 /* a Linux router's link interfaces shaped */

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

/* A router as it answers now: its persona, and for a Linux one the
 * interfaces of its links (the inventory held until router_close). */
struct router {
	struct tb_inventory *inv;
	const struct tb_machine *m;
	const struct tb_persona *p;
	bool bsd;
	int nifs;
	const char *ifs[ROUTER_IFS];
};

static void router_close(struct tb_services *sv, struct router *r)
{
	if (r->inv != NULL)
		tb_inv_current_put(sv->invs, r->inv);
	r->inv = NULL;
}

/* Router name as it answers (asked when the prober has not seen it). */
static int router_open(struct tb_services *sv, const char *name, struct router *r, char *msg, size_t len)
{
	char os[64];

	memset(r, 0, sizeof(*r));
	r->inv = tb_inv_current_get(sv->invs);
	r->m = tb_inventory_find(r->inv, name);
	if (r->m == NULL) {
		snprintf(msg, len, "router %s: no longer in the inventory", name);
		return -1;
	}
	if (!tb_hosts_answering(sv->hosts, name, os, sizeof(os)) &&
	    !tb_hosts_probe_one(sv->hosts, r->m, os, sizeof(os))) {
		snprintf(msg, len, "router %s does not answer", name);
		return -1;
	}
	r->p = tb_machine_persona(r->m, os);
	r->bsd = strcmp(os, "freebsd") == 0;
	if (r->p != NULL && !r->bsd)
		r->nifs = tb_machine_ifnames(r->m, os, r->ifs, ROUTER_IFS);
	if (r->p == NULL || (!r->bsd && r->nifs == 0)) {
		snprintf(msg, len, "router %s answers as %s, %s", name, os,
			 r->p == NULL ? "not a persona of its inventory entry"
				      : "whose links name no interface (links.NAME.ifname) to shape");
		return -1;
	}
	return 0;
}

/* argv as root on r: its exit status (-1: not run, with msg), stdout into
 * *out (malloc'd) when out. */
static int on_router(struct tb_services *sv, const struct router *r, const char *const argv[], char **out, char *msg,
		     size_t len)
{
	const char *full[TB_ARGV_MAX + 4];
	struct tb_ssh_target t;
	struct tb_ssh_capture cap = {0};
	struct tb_error e = {0};
	char pin[96];
	int rc = -1;

	tb_persona_as_root(r->p, argv, full, sizeof(full) / sizeof(full[0]));
	tb_hosts_target(sv->hosts, r->m, r->p, &t, pin, sizeof(pin));
	if (tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, full, CMD_TIMEOUT_MS, 16384, &cap, &e) != 0) {
		snprintf(msg, len, "router %s: %s", r->m->name, e.message);
		goto out;
	}
	rc = cap.res.exit_status;
	if (rc != 0)
		snprintf(msg, len, "router %s (%s): %s %s exited with %d: %.200s", r->m->name, r->p->os, argv[0],
			 argv[1], rc, cap.err != NULL ? cap.err : "");
	if (out != NULL && (*out = strdup(cap.out != NULL ? cap.out : "")) == NULL) {
		snprintf(msg, len, "out of memory");
		rc = -1;
	}
out:
	tb_ssh_capture_free(&cap);
	return rc;
}

/* Whether r's ruleset sends packets into pipe 1: testbedd configures the
 * pipe, the operator's rules use it. */
static int ruled(struct tb_services *sv, const struct router *r, char *msg, size_t len)
{
	static const char *const list[] = {"ipfw", "list", NULL};
	char *text = NULL;
	int rc = on_router(sv, r, list, &text, msg, len) != 0 ? -1 : 0;

	if (rc == 0 && !tb_shape_ipfw_ruled(text)) {
		snprintf(msg, len,
			 "router %s (freebsd): no ipfw rule sends packets into pipe 1 (`ipfw list` has no \"pipe 1\" "
			 "action), so the profile would shape nothing: add one on the router, e.g. `ipfw add 100 pipe "
			 "1 ip from any to any out xmit IF` for the pair's interfaces",
			 r->m->name);
		rc = -1;
	}
	free(text);
	return rc;
}

/* dummynet pipe 1 for s on r, read back. */
static int apply_ipfw(struct tb_services *sv, const struct router *r, const struct tb_shape *s, char *msg, size_t len)
{
	static const char *const show[] = {"ipfw", "pipe", "1", "show", NULL};
	struct tb_argv a;
	char *text = NULL, why[300] = "";
	json_t *all = NULL;
	int rc;

	if (tb_shape_ipfw_argv(s, &a) != 0) {
		snprintf(msg, len, "router %s: the ipfw command is too long", r->m->name);
		return -1;
	}
	/* deleting a pipe that is not there fails: the read back says whether it is gone */
	if (on_router(sv, r, a.v, NULL, msg, len) != 0 && !s->none)
		return -1;
	if (on_router(sv, r, show, &text, msg, len) != 0) {
		free(text);
		return -1;
	}
	all = tb_hostmeta_ipfw_pipes(text);
	free(text);
	rc = tb_shape_ipfw_check(s, json_object_get(all, "1"), why, sizeof(why));
	json_decref(all);
	if (rc != 0) {
		snprintf(msg, len, "router %s (freebsd): %s", r->m->name, why);
		return rc;
	}
	return s->none ? 0 : ruled(sv, r, msg, len);
}

/* s as the root qdisc of each of r's link interfaces, read back. */
static int apply_tc(struct tb_services *sv, const struct router *r, const struct tb_shape *s, char *msg, size_t len)
{
	static const char *const show[] = {"tc", "qdisc", "show", NULL};
	struct tb_argv a;
	char *text = NULL, why[300] = "", key[64];
	json_t *all;
	int rc = 0;

	for (int i = 0; i < r->nifs; i++) {
		if (tb_shape_tc_argv(s, r->ifs[i], &a) != 0) {
			snprintf(msg, len, "router %s: the tc command is too long", r->m->name);
			return -1;
		}
		/* a delete where the kernel's default is in force fails ("handle of zero"): read back */
		if (on_router(sv, r, a.v, NULL, msg, len) != 0 && !tb_shape_tc_empty(s))
			return -1;
	}
	if (on_router(sv, r, show, &text, msg, len) != 0) {
		free(text);
		return -1;
	}
	all = tb_hostmeta_tc_qdisc(text);
	free(text);
	for (int i = 0; rc == 0 && i < r->nifs; i++) {
		snprintf(key, sizeof(key), "%s root", r->ifs[i]);
		if ((rc = tb_shape_tc_check(s, r->ifs[i], json_object_get(all, key), why, sizeof(why))) != 0)
			snprintf(msg, len, "router %s (%s): %s", r->m->name, r->p->os, why);
	}
	json_decref(all);
	return rc;
}

/* Shape s on router name (s->none: remove it), read back. */
static int apply_one(struct tb_services *sv, const struct tb_shape *s, const char *name, char *msg, size_t len)
{
	struct router r;
	int rc = router_open(sv, name, &r, msg, len);

	if (rc == 0)
		rc = r.bsd ? apply_ipfw(sv, &r, s, msg, len) : apply_tc(sv, &r, s, msg, len);
	router_close(sv, &r);
	return rc;
}

/* What a matrix set on router name removed, read back. */
static int remove_one(struct tb_services *sv, const char *name, char *msg, size_t len)
{
	const struct tb_shape none = {.none = true};

	return apply_one(sv, &none, name, msg, len);
}

/* The shape of lp (a run's params' "link_profile"). */
static struct tb_shape shape_of(const json_t *lp)
{
	const json_t *queue = json_object_get(lp, "queue");

	return (struct tb_shape){
		.none = json_is_null(json_object_get(lp, "name")),
		.bps = json_number_value(json_object_get(lp, "rate_bps")),
		.loss = json_number_value(json_object_get(lp, "loss_percent")),
		.delay_ms = (int)json_number_value(json_object_get(lp, "delay_ms")),
		.queue = json_is_integer(queue) ? (int)json_integer_value(queue) : 0,
	};
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
	const struct tb_shape shape = shape_of(lp);
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
		if (apply_one(sv, &shape, json_string_value(r), why, sizeof(why)) != 0) {
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

		if (remove_one(sv, copy.routers[i], msg, sizeof(msg)) != 0) {
			tb_warn("linkprof",
				"matrix %lld: the link profile on %s not removed: %s (the journal keeps it: removed "
				"at the next start)",
				(long long)matrix_id, copy.routers[i], msg);
			journal_done(sv, &copy, i, msg);
		} else {
			tb_info("linkprof", "matrix %lld: the link profile removed on %s", (long long)matrix_id,
				copy.routers[i]);
			journal_done(sv, &copy, i, NULL);
		}
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

		snprintf(one.routers[0], sizeof(one.routers[0]), "%s", rs.v[i].router);
		if (remove_one(sv, rs.v[i].router, msg, sizeof(msg)) != 0) {
			tb_warn("linkprof",
				"journal row %lld (matrix %lld): the link profile on %s stays until the next start: "
				"%s",
				(long long)rs.v[i].id, (long long)rs.v[i].matrix_id, rs.v[i].router, msg);
			journal_done(sv, &one, 0, msg);
		} else {
			tb_info("linkprof",
				"journal row %lld: the link profile of matrix %lld removed on %s after a crash",
				(long long)rs.v[i].id, (long long)rs.v[i].matrix_id, rs.v[i].router);
			journal_done(sv, &one, 0, NULL);
		}
	}
	free(rs.v);
}
