/*
 * run_profile.h - flame graphs of a run (issue 20 item 2): when the run's
 * matrix spec says "profile": {"side": "sender"|"receiver"|"both",
 * "frequency": N (1..10000, default 99)}, the chosen end(s) are profiled
 * system-wide for the run's length:
 *   - Linux: `perf record -a -g -F N -o DIR/perf.data -- sleep WALL` (DIR
 *     from mktemp -d on the host), started just before the client and
 *     stopped with the run by its pid (SIGINT: perf writes its file), then
 *     `perf script -i DIR/perf.data` read over ssh and DIR removed;
 *   - FreeBSD: `dtrace -q -n 'profile-N { @[stack()] = count(); }
 *     tick-WALLs { exit(0); }'`, stopped by its pid (SIGINT), its printed
 *     aggregation read.
 * The stacks are folded by flame.h as they arrive.  A host without the
 * profiler (perf or dtrace not on PATH) or the permission (not root and
 * kernel.perf_event_paranoid above 0; dtrace needs root) is not profiled:
 * the reason, exactly, is kept instead.  Nothing of it fails the run.
 * The sender is the client unless the run's direction is "reverse"
 * ("bidir": the client is the sender, the server the receiver).
 *
 * Kept as a file per run under the state dir, STATE/profiles/run-ID.json
 * (written whole, then renamed; the last attempt's): {"run", "profiles":
 * [{host, side, role, os, tool, frequency, command, state: "ok"|
 * "unavailable"|"failed", reason, samples, stacks, folded}]}.  On a
 * sim or any host where several ends share a kernel, perf -a sees all of
 * them: the flame graph is the machine's, not one namespace's.
 *
 * Used by the run's thread; a thread per profiled end reads its profiler.
 * No request string reaches a shell: the commands are built from integers.
 */
#ifndef TB_RUN_PROFILE_H
#define TB_RUN_PROFILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "outbuf.h"
#include "run_exec.h"
#include "ssh.h"

struct tb_services;
struct tb_run_row;
struct tb_flame_folder;

struct run_profile_end {
	struct run_profile *p;
	const char *host, *side, *role;
	bool bsd;
	struct tb_ssh_target t;
	char pin[96];
	pthread_t th;
	bool started;
	pthread_mutex_t lock;
	long pid;              /* the profiler's remote pid, once known (lock) */
	char dir[64];          /* perf: its mktemp -d directory ("" until said) */
	struct tb_outbuf out;  /* perf record's stdout (the directory line) */
	struct tb_outbuf errb; /* the profiler's stderr (a reason) */
	struct tb_flame_folder *folder;
	char command[300];
	const char *state; /* "ok", "unavailable", "failed" */
	char reason[400];
	int exit_status;
};

struct run_profile {
	struct tb_services *sv;
	const struct tb_run_row *r;
	long frequency, wall_s;
	int n;
	struct run_profile_end e[2];
};

/* Start profiling for run r between client ch and server sh (each end at
 * most wall_s seconds) as the run's spec asks; does nothing when it asks for
 * none.  Never blocks on ssh (the profilers start on their own threads).
 * p is zeroed first. */
void run_profile_start(struct run_profile *p, struct tb_services *sv, const struct tb_run_host *ch,
		       const struct tb_run_host *sh, const struct tb_run_row *r, long wall_s);
/* Stop each profiler by pid, read and fold its stacks (perf script: a few
 * seconds), write STATE/profiles/run-ID.json.  Safe after any start.
 * read false (the run is canceled or testbedd stops): perf's recording is
 * removed unread, at once (one short ssh command), and the reason says so:
 * a cancel never waits for perf script. */
void run_profile_stop(struct run_profile *p, bool read);

/* The stored profiles of run id: a new reference to the file's JSON, or
 * NULL with TB_ERR_NOT_FOUND (none kept: the spec asked for none, or the
 * run has not ended) or another error.  Reads one file. */
json_t *run_profile_load(const char *state_dir, int64_t id, struct tb_error *err);

#endif /* TB_RUN_PROFILE_H */
