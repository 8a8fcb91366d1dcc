/*
 * linkprof.h - a matrix's link profiles on the routers of its pairs' links
 * (issue 20 item 4): before a run, the run's profile (matrix.h
 * tb_matrix_linkprof_json, stored in the run's params under "link_profile")
 * is made the one in force on each router, as root (`sudo -n` when the
 * persona is not root's), by the OS it answers as: FreeBSD's dummynet pipe 1
 * (`ipfw -q pipe 1 config ...`, or its delete for the unshaped profile),
 * read back with `ipfw pipe 1 show` (hostmeta.h's parser); a Linux router's
 * root qdisc on each of its link interfaces (`tc qdisc replace dev IF root
 * ...` or `tc qdisc del dev IF root`), read back with `tc qdisc show`.
 * shaper.h has the commands and the checks; the read back must show what
 * was set.  When the matrix ends, however it ends, what it set is removed on
 * every router it touched.  A journal row (store.h tb_store_linkprof_*) is
 * written BEFORE a router is first shaped and closed once its shaping is
 * removed: what a crash leaves open is removed at start-up
 * (tb_lp_remove_pending; on a Linux router every link interface's root
 * qdisc).
 *
 * Blocking: two or three short ssh commands per router when the profile
 * changes (each bounded by 15 s); nothing when it does not.  Called from a
 * matrix's worker thread; a matrix with link profiles runs one run at a time
 * on the router (matrix_linkprof.c refuses two pairs at once).  Matrices
 * side by side are not kept off each other's router yet.
 */
#ifndef TB_LINKPROF_H
#define TB_LINKPROF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct tb_services;

/* Make lp (the run's params' "link_profile"; NULL: the matrix has none, a
 * no-op) the profile in force on its routers for matrix_id.  0, or -1 with
 * msg naming the profile, router and what failed or was read back. */
int tb_lp_ensure(struct tb_services *sv, int64_t matrix_id, const json_t *lp, char *msg, size_t len);

/* Remove the pipe matrix_id configured from every router it touched (a
 * failure is logged) and forget the matrix.  A no-op for a matrix that
 * never applied one. */
void tb_lp_end(struct tb_services *sv, int64_t matrix_id);

/* Start-up: remove the shaping of every journal row a crash left open (its
 * router asked once; a router that does not answer keeps its row open,
 * logged).  Cheap when the journal has none open. */
void tb_lp_remove_pending(struct tb_services *sv);

#endif /* TB_LINKPROF_H */
