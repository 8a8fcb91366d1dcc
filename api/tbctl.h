/*
 * tbctl.h - what tbctl's files share: exit codes, parsed arguments, the call
 * that turns an API reply into an exit code, and the commands.
 *
 * Layout: tbctl.c parses the command line and dispatches (the only file that
 * exits); tbctl_api.c loads the token and calls the API; tbctl_http.c speaks
 * HTTP; tbctl_table.c prints tables; tbctl_cmd_hosts.c and tbctl_cmd_admin.c
 * hold one function per command; tbctl_cmd_events.c follows the event stream;
 * tbctl_cmd_matrix.c plans, runs, tabulates and compares iperf3 matrices
 * (tbctl_matrix_watch.c follows one live, tbctl_matrix_fmt.c formats).
 *
 * Ownership: a command borrows the context; every json_t a command receives
 * from tbctl_api_call() is the command's to json_decref().
 */
#ifndef TBCTL_H
#define TBCTL_H

#include <jansson.h>

#include "tbctl_http.h"

/* Exit codes, documented in `tbctl --help`. */
enum tbctl_exit {
	TBCTL_EXIT_OK = 0,
	TBCTL_EXIT_USAGE = 1,    /* bad arguments or local setup (token file) */
	TBCTL_EXIT_REFUSED = 2,  /* the API refused the request (4xx) */
	TBCTL_EXIT_SERVER = 3,   /* 5xx, no reply, timeout, not JSON */
	TBCTL_EXIT_AUTH = 4,     /* 401 or 403 */
	TBCTL_EXIT_FAILED = 5,   /* --wait: the action or matrix failed (a run failed) */
	TBCTL_EXIT_CANCELED = 6, /* --wait: canceled; a matrix also when interrupted */
	TBCTL_EXIT_DROPPED = 7,  /* matrix compare, run --baseline: a cell dropped below its baseline */
};

#define TBCTL_DEFAULT_URL "http://127.0.0.1:8080"
#define TBCTL_MAX_POS 8

/* Options, one bit each, so that a command can say which ones it takes. */
enum tbctl_opt {
	TBCTL_OPT_OS = 1 << 0,
	TBCTL_OPT_FINGERPRINT = 1 << 1,
	TBCTL_OPT_ROLE = 1 << 2,
	TBCTL_OPT_HOST = 1 << 3,
	TBCTL_OPT_ACTOR = 1 << 4,
	TBCTL_OPT_SINCE = 1 << 5,
	TBCTL_OPT_LIMIT = 1 << 6,
	TBCTL_OPT_TYPE = 1 << 7,
	TBCTL_OPT_WAIT = 1 << 8,
	TBCTL_OPT_MAKE_DEFAULT = 1 << 9,
	TBCTL_OPT_QUIET = 1 << 10,
	TBCTL_OPT_CSV = 1 << 11,
	TBCTL_OPT_RUNS = 1 << 12,
	TBCTL_OPT_CELLS = 1 << 13,
	TBCTL_OPT_BASELINE = 1 << 14,
	TBCTL_OPT_MAX_DROP = 1 << 15,
	TBCTL_OPT_DIFF = 1 << 16,
	TBCTL_OPT_METRIC = 1 << 17, /* --metric M (matrix compare) */
	TBCTL_OPT_SPREAD = 1 << 18, /* --spread (matrix compare) */
	TBCTL_OPT_JUNIT = 1 << 19,  /* --junit FILE (matrix compare) */
	TBCTL_OPT_FORMAT = 1 << 20, /* --format md|html (matrix report) */
	TBCTL_OPT_WATCH = 1 << 21,  /* --watch (console: read-only) */
	TBCTL_OPT_LOG = 1 << 22,    /* --log ID|list (console: a kept boot log) */
	TBCTL_OPT_FOR = 1 << 23,    /* --for DURATION (reserve) */
	TBCTL_OPT_NOTE = 1 << 24,   /* --note TEXT (reserve) */
};
#define TBCTL_OPT_LAST TBCTL_OPT_NOTE

/* Flags without a field of their own (--quiet, --csv, --runs, --cells) are
 * read from struct tbctl_args.seen. */

struct tbctl_args {
	int json;         /* --json: print the server's JSON */
	int wait;         /* --wait: follow an action to its end */
	int make_default; /* --make-default */
	const char *url;  /* --url, else TESTBEDD_URL, else default */
	long timeout_s;   /* --timeout, total time per request */
	unsigned seen;    /* enum tbctl_opt bits given */
	const char *os, *fingerprint, *role, *host, *actor, *since, *limit, *type;
	const char *baseline, *max_drop; /* --baseline ID, --max-drop PCT */
	const char *diff;                /* --diff ID (matrix hosts) */
	const char *metric, *junit;      /* --metric M, --junit FILE (matrix compare) */
	const char *format;              /* --format md|html (matrix report) */
	const char *log;                 /* --log ID|list (console) */
	const char *duration, *note;     /* --for DURATION, --note TEXT (reserve) */
	const char *pos[TBCTL_MAX_POS];  /* the command and its operands */
	int npos;
};

struct tbctl_ctx {
	const struct tbctl_args *args;
	struct tbctl_http http; /* base_url and token set by tbctl.c */
	const char *token_file; /* for messages; NULL if none was needed */
};

/*
 * Load the bearer token from the file named by TESTBEDD_TOKEN_FILE into a
 * malloc'ed string (*token, the caller wipes and frees it with
 * tbctl_token_free).  Refuses a missing variable, a file that is not a regular
 * file, one that group or other may access, and an empty or malformed token,
 * printing what to do on stderr.  Returns TBCTL_EXIT_OK or TBCTL_EXIT_USAGE.
 */
int tbctl_token_load(const char **path, char **token);
void tbctl_token_free(char *token);

/*
 * Call the API: METHOD path (already escaped) with an optional JSON body.
 * On a 2xx reply stores the parsed body in *out (NULL for 204 or when out is
 * NULL) and, with --json, prints the body as the server sent it.  Otherwise
 * prints the server's error (or why no reply came) on stderr, stores nothing
 * and returns the exit code of enum tbctl_exit.  Blocks up to the timeouts.
 */
int tbctl_api_call(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body, json_t **out);

/* Same, but --json printing is left to the caller (used when a command
 * needs to inspect a reply before deciding what to print). */
int tbctl_api_call_quiet(const struct tbctl_ctx *ctx, const char *method, const char *path, const json_t *body,
			 json_t **out);

/* GET path and hand over the reply's body as it came (CSV, text) in *text
 * (malloc'ed, NUL-terminated, NULL when empty; the caller frees it) and
 * *len.  Errors as tbctl_api_call. */
int tbctl_api_get_text(const struct tbctl_ctx *ctx, const char *path, char **text, size_t *len);

/* Print j indented, with one trailing newline (for replies that tbctl
 * inspected before printing). */
void tbctl_print_json(const json_t *j);

/* Small accessors that tolerate missing or mistyped members:
 * the string at key, or NULL; the integer at key, or dflt. */
const char *tbctl_jstr(const json_t *obj, const char *key);
long long tbctl_jint(const json_t *obj, const char *key, long long dflt);

/* A host's state.held_by as a person reads it: "action 12 by admin since
 * 2026-12-04T09:20:01Z", "matrix 7 by alice since ...", the holder's name for
 * another holder; "" when held is not an object.  Into buf (len bytes). */
void tbctl_held_by_text(const json_t *held, char *buf, size_t len);

/* Commands: each returns an enum tbctl_exit. */
int tbctl_cmd_hosts(const struct tbctl_ctx *ctx);
int tbctl_cmd_host(const struct tbctl_ctx *ctx);
int tbctl_cmd_host_trust(const struct tbctl_ctx *ctx);
int tbctl_cmd_token_create(const struct tbctl_ctx *ctx);
int tbctl_cmd_token_list(const struct tbctl_ctx *ctx);
int tbctl_cmd_token_revoke(const struct tbctl_ctx *ctx);
int tbctl_cmd_audit(const struct tbctl_ctx *ctx);
int tbctl_cmd_whoami(const struct tbctl_ctx *ctx);
int tbctl_cmd_console(const struct tbctl_ctx *ctx); /* tbctl_cmd_console.c */
int tbctl_cmd_health(const struct tbctl_ctx *ctx);
int tbctl_cmd_events(const struct tbctl_ctx *ctx);
int tbctl_cmd_power(const struct tbctl_ctx *ctx);
int tbctl_cmd_boot(const struct tbctl_ctx *ctx);
int tbctl_cmd_boot_entries(const struct tbctl_ctx *ctx);
int tbctl_cmd_actions(const struct tbctl_ctx *ctx);
int tbctl_cmd_action(const struct tbctl_ctx *ctx);
int tbctl_cmd_action_cancel(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_plan(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_run(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_watch(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_results(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_cancel(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_resume(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_rerun(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_list(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_show(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_compare(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_report(const struct tbctl_ctx *ctx);
int tbctl_cmd_matrix_hosts(const struct tbctl_ctx *ctx);
int tbctl_cmd_notify(const struct tbctl_ctx *ctx);
int tbctl_cmd_inventory(const struct tbctl_ctx *ctx); /* tbctl_cmd_inventory.c */
int tbctl_cmd_spec(const struct tbctl_ctx *ctx);      /* tbctl_cmd_spec.c */
int tbctl_cmd_schedule(const struct tbctl_ctx *ctx);  /* tbctl_cmd_schedule.c */
int tbctl_cmd_schedules(const struct tbctl_ctx *ctx);
int tbctl_cmd_reserve(const struct tbctl_ctx *ctx); /* tbctl_cmd_reserve.c */
int tbctl_cmd_release(const struct tbctl_ctx *ctx);
int tbctl_cmd_reservations(const struct tbctl_ctx *ctx);

#endif /* TBCTL_H */
