/*
 * matrix.h - a matrix spec (JSON, api/openapi.yaml MatrixSpec) checked
 * against the inventory and a fixed grammar, expanded into the ordered list
 * of runs it stands for, with an estimated duration.  No side effects: the
 * runner (runner.h) executes what this plans.
 *
 * A spec (every key but name and pairs is optional):
 *
 *  {"name": "baseline",
 *   "pairs": [{"client": "left", "server": "right", "link": "lan20"}],
 *   "protocols": ["tcp", "udp"],                 default ["tcp"]
 *   "directions": ["forward", "reverse", "bidir"], default ["forward"]
 *   "duration_s": 10 | [5, 10],                   default 10
 *   "repeats": 3,                                  default 1, 1..1000
 *   "order": "sequential" | "interleaved" | "shuffled",  default "sequential"
 *   "seed": 42,                                    shuffled only; absent: chosen and stored
 *   "pause_s": 0.5,                                between runs, 0..3600
 *   "caps": {"total_s": 3600, "duration_s": 60, "bitrate": "10G"},
 *   "iperf": {"udp_bitrate": "0", "bitrate": null, "parallel": 1,
 *             "length": null, "window": null, "omit_s": 0,
 *             "congestion": null, "tos": null, "zerocopy": false,
 *             "affinity": null},
 *   "tool": "iperf3" | "iperf2" | ["iperf3", "iperf2"]}   default "iperf3"
 *
 * tool: the traffic tool of each run (traffic.h): a list compares the tools
 * cell by cell (the innermost sweep, so a cell's tools run side by side).
 * iperf2 runs reverse as its own -R and refuses bidir, omit_s, zerocopy and
 * affinity (matrix_tool.c).
 *
 * Sweeps: duration_s and every "iperf" value may be a list; the runs are the
 * cross product pairs x protocols x directions x every swept value, each
 * done `repeats` times.  A "cell" is one combination (all but the repeat).
 * udp_bitrate applies to UDP runs (iperf3's default there is 1M), bitrate to
 * TCP runs (default: unlimited).
 *
 * link: the name of one of the server's links; the client connects to that
 * link's address.  Default: the first link the two machines share by name,
 * else the server's first link (a routed dumbbell).
 *
 * order: sequential = each cell's repeats back to back; interleaved = round
 * r runs every cell once, r = 1..repeats; shuffled = a Fisher-Yates shuffle
 * of all runs with the seed's PRNG (xorshift64*), so a stored seed gives the
 * same order again.
 *
 * concurrency: "disjoint" (default) = runs whose hosts are disjoint
 * go at once: the ordered runs are cut into rounds by list scheduling (each
 * round takes, in order, every run whose client and server are free and not
 * waited for by an earlier run left out of it, so each host keeps its runs'
 * order), and seq numbers the runs round by round; "none" = one run at a
 * time (round = seq).  No host is ever in two runs at once.
 *
 * os: a list of OS combinations [{"left": "freebsd", "right": "ubuntu"}, ...]
 * naming machines of the pairs (the others run as they are).  Every run is
 * done in every combination; the combinations go one after the other, in
 * the order that needs the fewest boots from the hosts' OSes now (and back
 * at the end unless "os_after": "leave"), searched exhaustively up to
 * TB_MX_COMBOS_EXACT combinations, nearest-first beyond.  A combination's
 * runs keep the spec's order; cells are numbered combination by
 * combination.  The plan lists the boots with their estimated times.
 *
 * tunables: system-wide sysctls and the MTU swept per cell, outermost in a
 * combination (matrix_tunables.c has the grammar; tunables.c applies them):
 * [{"linux": "net.ipv4.tcp_congestion_control", "freebsd":
 * "net.inet.tcp.cc.algorithm", "values": ["cubic", {"linux": "reno",
 * "freebsd": "newreno"}]}, {"mtu": true, "values": [1500, 9000]}].
 *
 * link_profiles: the routers' shaping swept per cell, inside a tunable set
 * (matrix_linkprof.c): [{"name": "20M", "rate": "20M", "loss_percent": 0.5,
 * "delay_ms": 0, "queue": 50}, null] (null: unshaped); linkprof.c applies
 * them (dummynet pipe 1 on a FreeBSD router), reads them back, removes them.
 *
 * Every mistake is TB_ERR_INVALID (or TB_ERR_UNKNOWN_FIELD) with err->field
 * the JSON path of the value ("iperf.parallel[1]", "pairs[0].server") and a
 * message that names the allowed values.  Nothing is half-built.
 *
 * Ownership: a struct tb_matrix_plan owns everything in it; free it with
 * tb_matrix_plan_free.  The spec json passed in stays the caller's.
 */
#ifndef TB_MATRIX_H
#define TB_MATRIX_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "validate.h"
#include "inventory.h"
#include "iperf.h"

#define TB_MATRIX_MAX_RUNS 100000
#define TB_MATRIX_NAME_MAX 64
#define TB_MATRIX_HOSTS_MAX 64  /* machines a matrix's pairs may name: the runner holds each */
#define TB_MATRIX_ROUTERS_MAX 8 /* routers its link profiles may change: held too */

enum tb_matrix_order { TB_ORDER_SEQUENTIAL, TB_ORDER_INTERLEAVED, TB_ORDER_SHUFFLED };

struct tb_planned_run {
	int seq;                  /* 0-based position in the order */
	int cell;                 /* 0-based cell index (cells in expansion order) */
	int repeat;               /* 0-based */
	char client[TB_NAME_MAX]; /* machine names */
	char server[TB_NAME_MAX];
	char link[TB_NAME_MAX];      /* the server's link used */
	char server_address[64];     /* that link's address, no prefix length */
	struct tb_iperf_params p;    /* proto, dir and every parameter */
	int round;                   /* runs of one round go at once (disjoint hosts) */
	int combo;                   /* index into the spec's "os" list; 0 without one */
	char client_os[TB_NAME_MAX]; /* the OS the combination wants ("" : as it is) */
	char server_os[TB_NAME_MAX];
	int tset;  /* the spec's tunable set this run is in (-1: the spec has no "tunables") */
	int lprof; /* the spec's link profile this run is in (-1: the spec has no "link_profiles") */
};

/* A boot the plan needs: before run seq (in its round), or after the last
 * run (seq -1: booting back into the OS the host was in). */
struct tb_planned_boot {
	int seq, round;
	char machine[TB_NAME_MAX];
	char from[TB_NAME_MAX]; /* "" when off or unknown */
	char to[TB_NAME_MAX];
	int64_t estimated_ms; /* measured for this machine, else TB_MATRIX_BOOT_DEFAULT_MS */
	const char *path;     /* the boot path it will take (boot_paths.h's name, static), NULL unknown */
};

/* What the planner knows of the hosts now: the OS each answers in ("" when
 * off or unknown) and how long a boot took it (0: never measured). */
struct tb_matrix_host_now {
	char machine[TB_NAME_MAX];
	char os[TB_NAME_MAX];
	int64_t boot_ms;
};

struct tb_matrix_now {
	int n;
	const struct tb_matrix_host_now *hosts;
};

#define TB_MATRIX_BOOT_DEFAULT_MS 120000

struct tb_mx_slot;
struct tb_mx_spec;

struct tb_matrix_plan {
	char name[TB_MATRIX_NAME_MAX + 1];
	enum tb_matrix_order order;
	uint64_t seed; /* the seed used (shuffled), else 0 */
	int pause_ms;
	int repeats;
	int ncells;
	int nrounds;
	bool one_at_a_time; /* concurrency "none" */
	bool by_pair;       /* concurrency "pairs": a round takes one run of each pair; hosts may be shared */
	int ncombos;        /* OS combinations (0: none given) */
	bool restore_os;    /* boot the hosts back at the end */
	struct tb_planned_boot *boots;
	int nboots;
	struct tb_planned_run *runs; /* every run, in order; NULL in a lean plan
				      * (tb_matrix_plan_make_lean): use tb_matrix_plan_run */
	int nruns;
	/* the planner's own view (matrix.c): each run compactly, 16 bytes, and
	 * what decodes it; the same in a lean plan and a full one */
	struct tb_mx_slot *slots;
	struct tb_mx_spec *sp;
	int base_cells;       /* cells of one OS combination */
	int64_t *cell_ms;     /* per cell of one combination: omit + duration, ms */
	int64_t estimated_ms; /* per round its longest (omit + duration) + TB_MATRIX_RUN_OVERHEAD_MS;
				    * plus the pauses between rounds; plus per round the longest of the
				    * boots before it (they go at once), and the longest boot back */
	json_t *spec;         /* the spec as stored: the input with defaults
				    * filled in and the seed set (owned) */
};

/* Fixed per-run overhead the estimate adds (start server, wait, exit). */
#define TB_MATRIX_RUN_OVERHEAD_MS 600

/* Check spec against the inventory and expand it.  Blocking: none (pure,
 * linear in the number of runs).  seed_if_unset is used when the spec asks
 * for "shuffled" without a seed. */
int tb_matrix_plan_make(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			struct tb_matrix_plan **out, struct tb_error *err);
/* The same knowing the hosts' state now (NULL: unknown), which orders the OS
 * combinations for the fewest boots and estimates them. */
int tb_matrix_plan_make_now(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			    const struct tb_matrix_now *now, struct tb_matrix_plan **out, struct tb_error *err);
/* The same without the array of runs (plan->runs NULL): a few MB for the
 * largest plan (TB_MATRIX_MAX_RUNS: about 2 MB) where the full array takes
 * about 45 MB.  For replies that show a page of runs. */
int tb_matrix_plan_make_lean(const json_t *spec, const struct tb_inventory *inv, uint64_t seed_if_unset,
			     const struct tb_matrix_now *now, struct tb_matrix_plan **out, struct tb_error *err);
void tb_matrix_plan_free(struct tb_matrix_plan *plan);

/* Run i (0 <= i < nruns) of a plan, lean or not, decoded from the spec into
 * *out.  Costs a few string copies; no allocation. */
void tb_matrix_plan_run(const struct tb_matrix_plan *plan, int i, struct tb_planned_run *out);

/* One run as JSON: {"seq","cell","repeat","client","server","link",
 * "server_address","protocol","direction","tool","params":{...},"iperf_args":"-t 10 -u -b 0"}
 * (iperf_args: the options of the run's tool; params has "tool" unless iperf3)
 * (new reference). */
json_t *tb_matrix_run_json(const struct tb_planned_run *r);

/* A run's params as JSON ({"duration_s":10,"omit_s":0,"parallel":1,...},
 * unset values as null) and back; tb_matrix_params_from_json is the exact
 * inverse (the runner reads stored runs with it). */
json_t *tb_matrix_params_json(const struct tb_iperf_params *p);
int tb_matrix_params_from_json(const json_t *j, struct tb_iperf_params *p, struct tb_error *err);

/* The whole plan: {"name","order","seed","concurrency","runs":N,"cells":N,
 * "rounds":N,"estimated_s":X,"spec":{...},"plan":[run...],"timeline":
 * [{"round","start_s","end_s","runs":[seq...]}], "combinations", "boots",
 * "page"} (new reference; NULL: out of memory).  Its size grows with the
 * runs: a reply uses tb_matrix_plan_page_json. */
json_t *tb_matrix_plan_json(const struct tb_matrix_plan *plan);

/* The same with only runs offset..offset+limit-1 in "plan" (clamped to the
 * runs there are), the timeline's rounds that hold them (each round whole,
 * its times from the start of the matrix), every boot, and "page":
 * {"offset","limit","returned","next_offset": N | null}.  Time linear in
 * the runs (the timeline's times), memory in limit. */
#define TB_MATRIX_PAGE_DEFAULT 200
#define TB_MATRIX_PAGE_MAX 1000
json_t *tb_matrix_plan_page_json(const struct tb_matrix_plan *plan, int offset, int limit);

/* Tunable set `set` of plan (0 <= set < its sets) as a run stores it in its
 * params under "tunables": {"set": N, "values": [{"tunable": i, "kind":
 * "sysctl" | "mtu", "linux": name | null, "freebsd": name | null, "value":
 * {"linux": v, "freebsd": v}}]} (new reference; NULL: no tunables or out of
 * memory).  tunables.c applies it. */
json_t *tb_matrix_tunables_set_json(const struct tb_matrix_plan *plan, int set);

/* Link profile i of plan as a run stores it in its params under
 * "link_profile": {"index", "name" (null: unshaped), "rate_bps",
 * "loss_percent", "delay_ms", "queue", "routers": [names], "pipe": 1}
 * (new reference; NULL: none or out of memory).  linkprof.c applies it. */
json_t *tb_matrix_linkprof_json(const struct tb_matrix_plan *plan, int i);

/* The routers plan's link profiles are applied to (the runner holds them
 * beside the pairs' ends), at most TB_MATRIX_ROUTERS_MAX, into out (valid
 * while plan is); how many (0: no link_profiles). */
int tb_matrix_plan_routers(const struct tb_matrix_plan *plan, const char *out[TB_MATRIX_ROUTERS_MAX]);

const char *tb_iperf_proto_name(enum tb_iperf_proto p); /* "tcp", "udp" */
const char *tb_iperf_dir_name(enum tb_iperf_dir d);     /* "forward", "reverse", "bidir" */

#endif /* TB_MATRIX_H */
