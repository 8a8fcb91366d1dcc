/*
 * shaper.h - a link profile as the commands that put it on a router and the
 * check of what the router reads back (issue 20 item 4): dummynet on a
 * FreeBSD router, tc on a Linux one.  Pure: the argv vectors and checks that
 * linkprof.c runs over ssh and matrix_linkprof.c lists in the plan.
 *
 * FreeBSD: pipe 1, `ipfw -q pipe 1 config bw Nbit/s [delay D] [plr P]
 * [queue Q]`, read back with `ipfw pipe 1 show` (hostmeta.h's parser);
 * the unshaped profile is `ipfw -q pipe 1 delete`.  The router's own
 * ruleset sends traffic into the pipe (testbedd adds no rule to someone's
 * firewall): `ipfw list` must show one, or the profile would shape nothing.
 *
 * Linux: the root qdisc of each of the router's link interfaces (egress:
 * both directions of a run through the router are shaped, as dummynet's
 * pipe on both ports):
 *   rate only:         tc qdisc replace dev IF root handle 1: tbf rate Nbit
 *                      burst B limit L   (B = rate/100 bytes, at least 32768;
 *                      L = queue (50) full-size frames + B)
 *   loss or delay:     tc qdisc replace dev IF root handle 1: netem
 *                      [delay Dms] [loss P%] [rate Nbit] [limit Q]
 *   unshaped/nothing:  tc qdisc del dev IF root  (its "handle of zero" error
 *                      when there is none is no failure: the read back says)
 * read back with `tc qdisc show` (hostmeta.h's parser, the "IF root" key:
 * `tc qdisc show dev IF` leaves the "dev IF" out).  netem needs the kernel's
 * sch_netem (the project's 6.18 kernel has none: tc answers "Specified qdisc
 * kind is unknown", which the run's error quotes).
 */
#ifndef TB_SHAPER_H
#define TB_SHAPER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "iperf.h" /* struct tb_argv */

struct tb_shape {
	bool none;    /* the unshaped profile */
	double bps;   /* 0: unlimited */
	double loss;  /* percent 0..100 */
	int delay_ms; /* 0: none */
	int queue;    /* slots (packets); 0: the default (dummynet's 50, netem's 1000) */
};

/* Whether the profile shapes nothing on a Linux router (no rate, loss or
 * delay): its root qdisc is deleted, as for the unshaped one. */
bool tb_shape_tc_empty(const struct tb_shape *s);

/* The dummynet command for s (its delete when s->none).  0, or -1 when out
 * won't hold it. */
int tb_shape_ipfw_argv(const struct tb_shape *s, struct tb_argv *out);
/* `tc qdisc replace ...` or `tc qdisc del dev IF root` for s on ifname. */
int tb_shape_tc_argv(const struct tb_shape *s, const char *ifname, struct tb_argv *out);

/* pipe: pipe 1 as read back (tb_hostmeta_ipfw_pipes' "1"; NULL: none).
 * 0 when it is what s sets, else -1 with msg saying what was read. */
int tb_shape_ipfw_check(const struct tb_shape *s, const json_t *pipe, char *msg, size_t len);
/* Whether `ipfw list` (text) has a rule that sends packets into pipe 1
 * ("00100 pipe 1 ip from any to any out xmit ix1"): a pipe without one
 * shapes nothing. */
bool tb_shape_ipfw_ruled(const char *text);
/* qdisc: IF's root qdisc as read back (tb_hostmeta_tc_qdisc's "IF root":
 * {"kind", "options"}; NULL: the kernel's default).  The rate tc prints
 * ("20Mbit", "123456Kbit") is compared within 0.5 %. */
int tb_shape_tc_check(const struct tb_shape *s, const char *ifname, const json_t *qdisc, char *msg, size_t len);

#endif /* TB_SHAPER_H */
