/*
 * matrix_internal.h - what matrix_spec.c (parse and check a spec) hands to
 * matrix.c (count, expand, order, JSON).  Not for other modules: their
 * contract is matrix.h.
 */
#ifndef TB_MATRIX_INTERNAL_H
#define TB_MATRIX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "matrix.h"
#include "validate.h"

#define TB_MX_SWEEP_MAX 64 /* values in one sweep list */
/* The limits of the oldest iperf3 supported (3.12): it refuses -O over 60
 * ("bogus value for --omit") and -w over 512 MiB ("socket buffer size too large"). */
#define TB_MX_OMIT_MAX 60
#define TB_MX_WINDOW_MAX 536870912L
#define TB_MX_PAIRS_MAX 64
#define TB_MX_COMBOS_MAX 16  /* OS combinations in a spec */
#define TB_MX_COMBO_HOSTS 16 /* machines named in one */
#define TB_MX_COMBOS_EXACT 8 /* up to this many the order is searched exhaustively */

/* The swept iperf keys in expansion order (outermost first).  BITRATE is
 * the axis of TCP cells, UDP_BITRATE the axis of UDP cells: a cell uses one
 * of the two, never both. */
enum tb_mx_axis {
	TB_MX_PARALLEL,
	TB_MX_LENGTH,
	TB_MX_WINDOW,
	TB_MX_BITRATE,
	TB_MX_UDP_BITRATE,
	TB_MX_OMIT,
	TB_MX_CONGESTION,
	TB_MX_TOS,
	TB_MX_ZEROCOPY,
	TB_MX_AFFINITY,
	TB_MX_FAMILY, /* the spec's top-level "family": "ipv4" (default) | "ipv6", the server's address6 */
	TB_MX_TOOL,   /* the spec's top-level "tool" (traffic.h), innermost: a cell's tools run side by side */
	TB_MX_NAXES
};

/* One value of an axis, normalised: num for the numeric keys (parallel,
 * length, window, omit_s, tos, zerocopy; the "unset" value of
 * struct tb_iperf_params when null), str for the string keys ("" = unset),
 * bps for bitrates (bits/s; 0 = unlimited, -1 = unset). */
struct tb_mx_value {
	long num;
	double bps;
	char str[24];
};

struct tb_mx_sweep {
	int n;       /* >= 1: an unset key is one null value */
	bool listed; /* given as a list: messages say key[i] */
	struct tb_mx_value v[TB_MX_SWEEP_MAX];
};

struct tb_mx_pair {
	char client[TB_NAME_MAX];
	char server[TB_NAME_MAX];
	char link[TB_NAME_MAX];
	char address[64];
	char address6[64]; /* the link's address6 ("" : none): IPv6 runs connect to it */
};

/* One OS combination: machine -> OS (the machines not named: as they are). */
struct tb_mx_combo {
	int n;
	char machine[TB_MX_COMBO_HOSTS][TB_NAME_MAX];
	char os[TB_MX_COMBO_HOSTS][TB_NAME_MAX];
};

/* One system-wide tunable swept per cell (matrix_tunables.c): a sysctl named
 * per OS family ([0] Linux, [1] FreeBSD; "" = not on that OS) or the MTU of
 * both ends' interfaces on the pair's link; each value per OS family. */
#define TB_MX_TUNABLES_MAX 8
#define TB_MX_TUNABLE_VALUES_MAX 16
#define TB_MX_TUNABLE_TEXT 64
#define TB_MX_TUNABLE_SETS_MAX 256 /* their cross product: the plan lists each set */
struct tb_mx_tunable {
	bool mtu;
	bool irq;        /* the interrupts of both ends' link interfaces: values are CPU lists */
	char offload[8]; /* a NIC offload ("tso", "lro"; "": not one): name[] has it for both families */
	char name[2][TB_MX_TUNABLE_TEXT];
	int n;
	char value[TB_MX_TUNABLE_VALUES_MAX][2][TB_MX_TUNABLE_TEXT];
};

/* One link profile (matrix_linkprof.c): applied on the routers of the
 * pairs' links before a cell's runs; none = the unshaped entry (null). */
#define TB_MX_LPROFS_MAX 8
#define TB_MX_LPROF_NAME 32
#define TB_MX_LPROF_ROUTERS TB_MATRIX_ROUTERS_MAX
#define TB_MX_LPROF_IFS 8 /* a Linux router's link interfaces shaped (linkprof.c: as many) */
#define TB_MX_SHAPE_IPFW 1u
#define TB_MX_SHAPE_TC 2u
struct tb_mx_lprof {
	bool none;
	char name[TB_MX_LPROF_NAME + 1];
	double bps;  /* 0: unlimited */
	double loss; /* percent 0..100 */
	int delay_ms;
	int queue; /* dummynet slots; 0: its default */
};

struct tb_mx_spec {
	char name[TB_MATRIX_NAME_MAX + 1];
	int npairs;
	struct tb_mx_pair pairs[TB_MX_PAIRS_MAX];
	int nprotos;
	enum tb_iperf_proto protos[2];
	int ndirs;
	enum tb_iperf_dir dirs[3];
	int ndurations;
	int durations[TB_MX_SWEEP_MAX];
	struct tb_mx_sweep axes[TB_MX_NAXES];
	int repeats;
	enum tb_matrix_order order;
	uint64_t seed; /* shuffled: the seed used; else 0 */
	int pause_ms;
	bool one_at_a_time; /* concurrency "none": no two runs at once */
	bool by_pair;       /* concurrency "pairs": one run of each pair at once, hosts shared */
	int ncombos;        /* 0: no "os" (the hosts as they are) */
	struct tb_mx_combo combos[TB_MX_COMBOS_MAX];
	bool leave_os;         /* os_after "leave": do not boot back */
	long long cap_total_s; /* 0: no cap */
	int ntunables;         /* 0: none */
	struct tb_mx_tunable tunables[TB_MX_TUNABLES_MAX];
	int ntsets;  /* the cross product of the tunables' values: >= 1 (1: none) */
	int nlprofs; /* link profiles: 0 none; a factor inside the tunable sets */
	struct tb_mx_lprof lprofs[TB_MX_LPROFS_MAX];
	int nlprouters; /* the routers on the pairs' links */
	char lprouters[TB_MX_LPROF_ROUTERS][TB_NAME_MAX];
	/* each one's shapers by the personas it has: TB_MX_SHAPE_IPFW (freebsd,
	 * dummynet) and/or TB_MX_SHAPE_TC (a Linux one, on these interfaces) */
	unsigned lprouter_shapers[TB_MX_LPROF_ROUTERS];
	int lprouter_nifs[TB_MX_LPROF_ROUTERS];
	char lprouter_ifs[TB_MX_LPROF_ROUTERS][TB_MX_LPROF_IFS][TB_NAME_MAX];
	json_t *stored; /* the spec as stored (owned) */
};

/* One run of a plan, compactly (matrix.c): cell (of all combinations),
 * repeat, round and OS combination; the rest is decoded from the spec. */
struct tb_mx_slot {
	int32_t cell;
	int32_t repeat;
	int32_t round;
	int32_t combo;
};

/* omit + duration of run i of plan, in ms. */
int64_t tb_mx_run_ms(const struct tb_matrix_plan *plan, int i);

/* Check spec against the grammar and inv, and fill *out (which the caller
 * allocates: it is large).  Every check that needs only the spec is here;
 * the run count and the caps.total_s estimate are matrix.c's.  On success
 * out->stored is a new reference the caller owns; on failure it is NULL. */
int tb_mx_spec_parse(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset, struct tb_mx_spec *out,
		     struct tb_error *err);

/* The grammar of single values (matrix_values.c), shared with tb_matrix_params_from_json.
 * Each returns 0 or TB_ERR_INVALID with field and a message naming the
 * allowed values; v is a scalar (not null, not a list). */
int tb_mx_value_parse(enum tb_mx_axis axis, const json_t *v, const char *field, struct tb_mx_value *out,
		      struct tb_error *err);

/* "\"abc\"", "12", "a list", ... for messages; control characters shown as '?'. */
void tb_mx_describe(const json_t *v, char *buf, size_t len);

/* ---- matrix_values.c (with tb_mx_value_parse and tb_mx_describe above) ---- */

/* src, at most max bytes, into dst with control and format characters (tb_text_refused) as '?'. */
void tb_mx_sanitize(char *dst, size_t len, const char *src, size_t max);

/* v a whole number lo..hi into *out, else TB_ERR_INVALID: "FIELD must be lo..hi UNIT, got ...". */
int tb_mx_get_int(const json_t *v, const char *field, long long lo, long long hi, const char *unit, long long *out,
		  struct tb_error *err);
/* The "unset" value of an axis: what struct tb_iperf_params means by unset. */
void tb_mx_value_unset(enum tb_mx_axis axis, struct tb_mx_value *x);
/* Whether a and b are the same value of axis (bitrates by bits/s). */
int tb_mx_value_same(enum tb_mx_axis axis, const struct tb_mx_value *a, const struct tb_mx_value *b);

/* ---- matrix_tool.c ---- */

/* TB_ERR_INVALID naming "tool[i]" when a tool the spec lists cannot do what
 * the rest of it asks (iperf2: bidir, omit_s, zerocopy, affinity). */
int tb_mx_check_tool(const struct tb_mx_spec *sp, struct tb_error *err);

/* ---- matrix_family.c ---- */

/* TB_ERR_INVALID naming "family[i]" (and the host and inventory field)
 * when the spec runs IPv6 on a pair whose server link, or whose client,
 * has no address6; inv gives the client's links. */
int tb_mx_check_family(const struct tb_mx_spec *sp, const struct tb_inventory *inv, struct tb_error *err);

/* ---- matrix_groups.c ---- */

/* spec with its "groups" (mesh, disjoint) expanded into "pairs": *out is a
 * new reference (spec itself when it has no groups). */
int tb_mx_expand_groups(const json_t *spec, const struct tb_inventory *inv, json_t **out, struct tb_error *err);

/* ---- matrix_os.c ---- */

/* "os" and "os_after" of spec (after the pairs are parsed) into sp. */
int tb_mx_parse_os(const json_t *spec, const struct tb_inventory *inv, struct tb_mx_spec *sp, struct tb_error *err);
/* The combinations as stored (new reference; NULL: out of memory). */
json_t *tb_mx_os_stored(const struct tb_mx_spec *sp);
/* The order of sp's combinations (indexes into order[ncombos]) that needs the
 * fewest boots from now (and back, unless leave_os); returns that count. */
int tb_mx_order_combos(const struct tb_mx_spec *sp, const struct tb_matrix_now *now, int order[]);
/* plan->boots from the runs' wanted OSes, in run order; 0 or -1 (memory). */
int tb_mx_plan_boots(struct tb_matrix_plan *plan, const struct tb_mx_spec *sp, const struct tb_matrix_now *now);

/* ---- matrix_tunables.c ---- */

/* "tunables" of spec into sp (ntsets always set, 1 without any). */
int tb_mx_parse_tunables(const json_t *spec, struct tb_mx_spec *sp, struct tb_error *err);
/* The tunables as stored (new reference; NULL: none or out of memory). */
json_t *tb_mx_tunables_stored(const struct tb_mx_spec *sp);
/* The plan's "tunables": every set with its changes and their restore (new reference). */
json_t *tb_mx_tunables_plan_json(const struct tb_matrix_plan *plan);

/* ---- matrix_linkprof.c ---- */

/* "link_profiles" of spec (after the pairs) into sp, checked against the
 * routers of inv on the pairs' links (nlprofs 0 without any). */
int tb_mx_parse_linkprof(const json_t *spec, const struct tb_inventory *inv, struct tb_mx_spec *sp,
			 struct tb_error *err);
/* The profiles as stored (new reference; NULL: out of memory). */
json_t *tb_mx_linkprof_stored(const struct tb_mx_spec *sp);
/* The plan's "link_profiles": routers, each profile with its commands and runs, the removal (new reference). */
json_t *tb_mx_linkprof_plan_json(const struct tb_matrix_plan *plan);

#endif /* TB_MATRIX_INTERNAL_H */
