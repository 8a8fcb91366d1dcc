/*
 * hostsnap.h - the host metadata of a matrix: once per host and OS, the
 * hostmeta.h script runs over ssh and its parsed output and raw text are
 * stored with the command as it ran; the views for the API (the snapshots
 * of a matrix, and the differences between two matrices).
 */
#ifndef TB_HOSTSNAP_H
#define TB_HOSTSNAP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tb_services;
struct tb_machine;
struct tb_persona;

/* The data-plane interface of machine m in OS os for a run on link (the
 * run's link when m has it, else m's first link): its name, or NULL. */
const char *tb_hostsnap_iface(const struct tb_machine *m, const char *os, const char *link);

/* The script that takes a snapshot (tb_hostmeta_script_any) about *iface,
 * without the NIC part (*iface set to NULL, a warning logged) when the
 * script refuses that name; NULL when out of memory. */
char *tb_hostsnap_script(const struct tb_machine *m, const char *os, const char **iface);

/* Store the snapshot of m (persona p, OS os) for matrix_id from the output
 * (out, len bytes) of a tb_hostsnap_script that ran as argv (stored as the
 * command, as shown to a user), and publish matrix.host.  0, or
 * TB_ERR_REMOTE when out has no kind line, or the store's error. */
int tb_hostsnap_store(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m, const struct tb_persona *p,
		      const char *os, const char *iface, const char *const argv[], const char *out, size_t len,
		      struct tb_error *err);

/*
 * Take the snapshot of m (answering as persona p, OS os; bsd: FreeBSD
 * userland) for matrix_id unless it has one for that OS: one ssh exec of at
 * most 20 s.  A failing command only leaves its part out (and in "errors");
 * 0, or the ssh or store error.
 */
int tb_hostsnap_take(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m, const struct tb_persona *p,
		     const char *os, bool bsd, const char *iface, struct tb_error *err);

/* The same for a machine that runs no iperf3 (a router), in the persona
 * that answered last (one ssh exec); when none did, or that exec fails, a
 * probe finds the one that answers and the exec is made there. */
int tb_hostsnap_take_machine(struct tb_services *sv, int64_t matrix_id, const struct tb_machine *m,
			     struct tb_error *err);

/* {"matrix", "hosts": [{"host", "os", "taken_at", "interface", "command",
 * "metadata"}]} for matrix id (TB_ERR_NOT_FOUND field "id" when none). */
int tb_hostsnap_json(struct tb_services *sv, int64_t id, json_t **out, struct tb_error *err);

/* The differences between the snapshots of matrix id and those of other,
 * host by host and OS by OS: {"matrix", "other", "hosts": [{"host", "os",
 * "in": "both"|"matrix"|"other", "differences": [{"path", "matrix",
 * "other"}]}]} (paths like "tcp.congestion_control", "nic.offloads.TSO4",
 * "shaping.pipes.1" for a router's new dummynet pipe, "shaping.pipes.1.plr";
 * the raw sysctl map and errors are left out: every sysctl that matters is
 * in a named member). */
int tb_hostsnap_diff(struct tb_services *sv, int64_t id, int64_t other, json_t **out, struct tb_error *err);

/* The raw output of one snapshot: *out malloc'd, *len bytes. */
int tb_hostsnap_raw(struct tb_services *sv, int64_t id, const char *host, const char *os, char **out, size_t *len,
		    struct tb_error *err);

#endif
