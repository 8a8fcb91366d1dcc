/*
 * tunables.h - a matrix's system-wide tunables on its hosts (issue 20 item
 * 3): before a run, the run's tunable set (matrix.h tb_matrix_tunables_set_json,
 * stored in the run's params under "tunables") is made the one in force on
 * each end: every value found is written to the journal (store_tunables.h)
 * BEFORE it is changed, then set (Linux `sysctl -w name=value`, `ip link set
 * dev IF mtu N`; FreeBSD `sysctl name=value`, `ifconfig IF mtu N`; through
 * `sudo -n` when the persona does not log in as root; every argument one argv
 * word through the ssh layer's quoting), then read back.  The originals go
 * back when a host's next run wants another set or none, before a boot, when
 * the matrix ends however it ends, and at start-up for whatever a crash left
 * (once the host answers in the OS the row was changed in; until then the
 * row stays open and is shown by GET /api/v1/tunables).
 *
 * Blocking: a few short ssh commands per tunable (each bounded by 15 s).
 * Called from the runner's threads; each host is touched by one thread at a
 * time (the runner's rounds have disjoint hosts).
 */
#ifndef TB_TUNABLES_H
#define TB_TUNABLES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct tb_services;
struct tb_run_host;

/*
 * Make set (the run's params' "tunables", NULL: none) the set in force on h
 * (answering in h->os; its interface for an MTU is its link named link, else
 * its first).  0, or -1 with msg naming the tunable ("tunables[0]
 * (net.ipv4.tcp_congestion_control) on left (ubuntu): set to \"reno\", read
 * back \"cubic\""); on failure what was changed on h is restored already.
 */
int tb_tun_ensure(struct tb_services *sv, int64_t matrix_id, int seq, struct tb_run_host *h, const json_t *set,
		  const char *link, char *msg, size_t len);

/* Restore on h every journal row still open that was changed in h->os
 * (newest first).  0, or -1 with the first failure in msg (the rows that
 * could not be restored stay open). */
int tb_tun_restore_host(struct tb_services *sv, struct tb_run_host *h, char *msg, size_t len);

/* Start-up and before each matrix: restore every open journal row whose
 * host answers in the OS the row was changed in (a probe per host); the
 * others stay open and are logged.  Cheap when the journal has none open. */
void tb_tun_restore_pending(struct tb_services *sv);

/* The journal as JSON for GET /api/v1/tunables: {"open": N, "rows":
 * [{"id","matrix","seq","host","os","family","kind","name","original",
 * "applied","state","error","created_at","restored_at"}]}, the open rows
 * (all: the last 500 of every state).  New reference, NULL on a store error. */
json_t *tb_tun_journal_json(struct tb_services *sv, int all);

#endif /* TB_TUNABLES_H */
