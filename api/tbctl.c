/*
 * tbctl.c - tbctl's main: the command line, the command table, exit codes.
 *
 * Options may stand anywhere on the line ("tbctl hosts --json" and
 * "tbctl --json hosts" are the same); "--opt=value" and "--opt value" both
 * work; "--" ends the options.  A token is never taken from the command line.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#define DEFAULT_TIMEOUT_S 30L
#define CONNECT_TIMEOUT_MS 5000L

static const char usage_commands[] =
	"usage: tbctl [--json] [--url URL] [--timeout SECONDS] COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  hosts                              every machine: which OS answers, since when,\n"
	"                                     its addresses and its last error\n"
	"  host NAME                          one machine in full: power, console, boot,\n"
	"                                     OS personas, links, state\n"
	"  host trust NAME [--os OS]          show the host key the OS persona presents and\n"
	"                                     how to accept it (exits 1: nothing changed)\n"
	"  host trust NAME --os OS --fingerprint SHA256:...\n"
	"                                     accept that key (admin)\n"
	"  token create NAME --role viewer|operator|admin\n"
	"                                     create an API token (admin); the secret is\n"
	"                                     printed once, alone on stdout:\n"
	"                                     (umask 077; tbctl token create ci --role operator > ci.token)\n"
	"  token list                         every token, revoked ones too (admin)\n"
	"  token revoke ID                    revoke a token (admin)\n"
	"  audit [--host H] [--actor A] [--since RFC3339] [--limit 1..1000]\n"
	"                                     who did what, newest first (admin)\n"
	"  whoami                             the token in use and its role\n"
	"  power HOST on|off|cycle|reset|soft [--wait]\n"
	"                                     switch a machine (operator); --wait follows\n"
	"                                     the action's steps to its end\n"
	"  boot HOST OS [--wait] [--make-default]\n"
	"                                     bring HOST up in OS through GRUB and verify\n"
	"                                     it (operator)\n"
	"  boot-entries HOST                  the GRUB menu read from HOST's Linux\n"
	"  console HOST [--watch]             HOST's serial console: the scrollback, then\n"
	"                                     live; typing (operator) takes its lease;\n"
	"                                     ~. leaves, ~B sends Break, ~~ a ~ (after Enter);\n"
	"                                     --watch: read-only\n"
	"  console HOST --log ID|list         a kept boot log as it came (list: the logs)\n"
	"  actions [--host H] [--limit N]     recent power and boot actions\n"
	"  action ID [--wait]                 one action with its steps and exact commands\n"
	"  action cancel ID                   stop a running action (operator)\n"
	"  events [--type T,...] [--host H] [--since ID]\n"
	"                                     follow the live event stream, one line per\n"
	"                                     event (--json: the event's JSON); resumes by\n"
	"                                     itself after a disconnect; Ctrl-C stops\n";

/* The matrix commands: ISO C limits one literal to 4095 bytes. */
static const char usage_matrix[] =
	"  matrix plan SPEC [--limit N|all]   the runs a matrix spec (a JSON file, - for\n"
	"                                     stdin) stands for, in order, and the estimate\n"
	"                                     (every run, page by page; --limit: the first N)\n"
	"  matrix run SPEC [--wait] [--quiet] [--baseline ID [--max-drop PCT]]\n"
	"                                     start a matrix (operator) and print its id;\n"
	"                                     --wait follows it as watch does; --quiet: the\n"
	"                                     id alone, and with --wait only the summary;\n"
	"                                     --baseline: then compare it (the CI gate)\n"
	"  matrix watch ID [--quiet]          follow a matrix: progress, live bitrate, a\n"
	"                                     line per finished run; ends with the matrix\n"
	"                                     and exits as --wait does; resumes by itself\n"
	"                                     after a disconnect; Ctrl-C stops watching only\n"
	"  matrix results ID [--runs] [--csv] medians per cell (--runs: every run); --csv:\n"
	"                                     the server's CSV as it sent it\n"
	"  matrix show ID                     state, progress and every run\n"
	"  matrix compare ID --baseline ID [--max-drop PCT] [--metric M] [--spread]\n"
	"                 [--junit FILE]      medians per cell against the baseline's; the\n"
	"                                     cells whose median fell by more than PCT\n"
	"                                     percent (default 5) fail the gate (exit 7);\n"
	"                                     --metric receiver_bps (default), sender_bps,\n"
	"                                     lost_percent, retransmits, jitter_ms (the last\n"
	"                                     three fail when they rise); --spread: both\n"
	"                                     IQRs and whether they overlap; --junit: a\n"
	"                                     JUnit XML file, a testcase per cell\n"
	"  matrix report ID [--baseline ID [--metric M]] [--format html|md] > FILE\n"
	"                                     a report to publish: one HTML file without\n"
	"                                     script (tables, SVG charts, commands, hosts,\n"
	"                                     spec) or Markdown; --baseline adds the A/B\n"
	"  matrix hosts ID [--diff ID]        what each host was (kernel, NIC, firmware,\n"
	"                                     TCP settings); --diff: what differs from\n"
	"                                     the hosts of another matrix\n"
	"  matrix list [--limit N]            recent matrices\n"
	"  matrix cancel ID                   stop a queued or running matrix (operator)\n"
	"  matrix resume ID [--wait]          run what a canceled or interrupted matrix\n"
	"                                     left (operator)\n"
	"  matrix rerun ID [--wait]           a new matrix from ID's spec (operator)\n"
	"  notify list                        notification rules (admin): sink, triggers, failing\n"
	"  notify add RULE.json | set ID RULE.json | rm ID\n"
	"                                     create, replace or delete a rule (the API's JSON)\n"
	"  notify test ID                     queue a sample message through its sink\n"
	"  notify deliveries ID               its delivery log: state, attempts, last error\n"
	"  health                             is testbedd up, and its version (no token)\n"
	"  help, --help, -h                   this text\n"
	"  version, --version                 tbctl's version\n";

/* Two strings: ISO C limits one literal to 4095 bytes. */
static const char usage_shared[] =
	"  reserve HOST... --for 2h [--note T] [--wait]\n"
	"                                     reserve hosts for a while (operator): granted\n"
	"                                     now or queued first come first served; --wait:\n"
	"                                     until granted.  Others' actions and matrices\n"
	"                                     on them get 409 meanwhile\n"
	"  release [ID]                       end a reservation (no ID: all of yours); an\n"
	"                                     admin may break another's\n"
	"  reservations                       granted ones, then the queue\n"
	"  inventory show                     the inventory loaded: file, load time, last\n"
	"                                     reload, machines (admin)\n"
	"  inventory check FILE               check a proposed inventory on the server\n"
	"                                     (FILE:LINE:COL as --check-config; \"-\": stdin)\n"
	"  inventory reload                   re-read the inventory file, as SIGHUP; a bad\n"
	"                                     one is refused and the old kept (admin)\n"
	"  spec push NAME FILE                store a matrix spec as NAME's next version\n"
	"                                     (operator); spec list, spec show NAME [V],\n"
	"                                     spec diff NAME A B (one line per change)\n"
	"  schedule set NAME CRON [--baseline latest-passing|ID] [--metric M]\n"
	"               [--max-drop PCT]      start NAME's latest version when CRON comes\n"
	"                                     due (five fields, testbedd's time zone) and\n"
	"                                     gate it against the baseline (operator);\n"
	"                                     schedule rm NAME stops it\n"
	"  schedules                          each schedule, its next time and its last\n"
	"                                     verdicts, newest right (P pass, F fail,\n"
	"                                     n no baseline, E error, . running)\n";

static const char usage_options[] = "\n"
				    "Options:\n"
				    "  --json             print the server's JSON reply instead of a table\n"
				    "                     (on an API error, the error object too)\n"
				    "  --url URL          testbedd's address (default: $TESTBEDD_URL, else\n"
				    "                     " TBCTL_DEFAULT_URL ")\n"
				    "  --timeout SECONDS  give up on a request after this long (default 30;\n"
				    "                     connecting gives up after 5 s)\n"
				    "\n"
				    "Environment:\n"
				    "  TESTBEDD_URL         testbedd's address when --url is not given\n"
				    "  TESTBEDD_CA_FILE     a PEM file of CAs to trust for an https URL (a testbedd\n"
				    "                       with a self-signed certificate: ./deploy/demo --tls)\n"
				    "  TESTBEDD_TOKEN_FILE  the file that holds the API token (one line). It must be\n"
				    "                       a regular file that only its owner may use (chmod 600);\n"
				    "                       tbctl never takes a token on the command line. The daemon\n"
				    "                       writes the first admin token to STATE_DIR/admin.token.\n"
				    "\n"
				    "Exit codes:\n"
				    "  0  success\n"
				    "  1  usage: bad arguments, or a local problem such as a missing token file or\n"
				    "     one that group or others may read; also 'host trust' without --fingerprint\n"
				    "  2  the API refused the request (HTTP 4xx other than 401/403: bad input,\n"
				    "     not found, conflict, rate limited); the server's message is printed\n"
				    "  3  server error or no answer: HTTP 5xx, connection refused, timeout, a reply\n"
				    "     that is not testbedd's JSON\n"
				    "  4  unauthorized or forbidden (HTTP 401 or 403): the token is missing,\n"
				    "     revoked or its role is too low\n"
				    "  5  --wait: the action failed (its reason is printed); a matrix (--wait,\n"
				    "     watch) failed: a run failed, or the matrix did not succeed\n"
				    "  6  --wait: the action was canceled; a matrix (--wait, watch) was canceled\n"
				    "     or interrupted by a testbedd restart ('matrix resume ID' goes on)\n"
				    "  7  matrix compare, matrix run --baseline: a cell dropped by more than\n"
				    "     --max-drop against the baseline, or has no result where it had one\n";

static void usage(FILE *out)
{
	fputs(usage_commands, out);
	fputs(usage_matrix, out);
	fputs(usage_shared, out);
	fputs(usage_options, out);
}

typedef int (*cmd_fn)(const struct tbctl_ctx *ctx);

struct command {
	const char *name;
	const char *sub;      /* second word, or NULL */
	int min_pos, max_pos; /* operands counted with the command words */
	unsigned opts;        /* enum tbctl_opt bits allowed */
	int needs_token;
	cmd_fn fn;
	const char *usage;
};

/* First match wins: "host trust NAME" before "host NAME" (a host named
 * "trust" is still shown by "tbctl host trust"). */
static const struct command commands[] = {
	{"hosts", NULL, 1, 1, 0, 1, tbctl_cmd_hosts, "hosts"},
	{"host", "trust", 3, 3, TBCTL_OPT_OS | TBCTL_OPT_FINGERPRINT, 1, tbctl_cmd_host_trust,
	 "host trust NAME --os OS [--fingerprint SHA256:...]"},
	{"host", NULL, 2, 2, 0, 1, tbctl_cmd_host, "host NAME"},
	{"token", "create", 3, 3, TBCTL_OPT_ROLE, 1, tbctl_cmd_token_create,
	 "token create NAME --role viewer|operator|admin"},
	{"token", "list", 2, 2, 0, 1, tbctl_cmd_token_list, "token list"},
	{"token", "revoke", 3, 3, 0, 1, tbctl_cmd_token_revoke, "token revoke ID"},
	{"audit", NULL, 1, 1, TBCTL_OPT_HOST | TBCTL_OPT_ACTOR | TBCTL_OPT_SINCE | TBCTL_OPT_LIMIT, 1, tbctl_cmd_audit,
	 "audit [--host H] [--actor A] [--since RFC3339] [--limit N]"},
	{"whoami", NULL, 1, 1, 0, 1, tbctl_cmd_whoami, "whoami"},
	{"power", NULL, 3, 3, TBCTL_OPT_WAIT, 1, tbctl_cmd_power, "power HOST on|off|cycle|reset|soft [--wait]"},
	{"boot", NULL, 3, 3, TBCTL_OPT_WAIT | TBCTL_OPT_MAKE_DEFAULT, 1, tbctl_cmd_boot,
	 "boot HOST OS [--wait] [--make-default]"},
	{"boot-entries", NULL, 2, 2, 0, 1, tbctl_cmd_boot_entries, "boot-entries HOST"},
	{"console", NULL, 2, 2, TBCTL_OPT_WATCH | TBCTL_OPT_LOG, 1, tbctl_cmd_console,
	 "console HOST [--watch] [--log ID|list]"},
	{"actions", NULL, 1, 1, TBCTL_OPT_HOST | TBCTL_OPT_LIMIT, 1, tbctl_cmd_actions,
	 "actions [--host H] [--limit N]"},
	{"action", "cancel", 3, 3, 0, 1, tbctl_cmd_action_cancel, "action cancel ID"},
	{"action", NULL, 2, 2, TBCTL_OPT_WAIT, 1, tbctl_cmd_action, "action ID [--wait]"},
	{"events", NULL, 1, 1, TBCTL_OPT_TYPE | TBCTL_OPT_HOST | TBCTL_OPT_SINCE, 1, tbctl_cmd_events,
	 "events [--type T,...] [--host H] [--since ID]"},
	{"matrix", "plan", 3, 3, TBCTL_OPT_LIMIT, 1, tbctl_cmd_matrix_plan, "matrix plan SPEC [--limit N|all]"},
	{"matrix", "run", 3, 3, TBCTL_OPT_WAIT | TBCTL_OPT_QUIET | TBCTL_OPT_BASELINE | TBCTL_OPT_MAX_DROP, 1,
	 tbctl_cmd_matrix_run, "matrix run SPEC [--wait] [--quiet] [--baseline ID [--max-drop PCT]]"},
	{"matrix", "watch", 3, 3, TBCTL_OPT_QUIET, 1, tbctl_cmd_matrix_watch, "matrix watch ID [--quiet]"},
	{"matrix", "results", 3, 3, TBCTL_OPT_CSV | TBCTL_OPT_RUNS | TBCTL_OPT_CELLS, 1, tbctl_cmd_matrix_results,
	 "matrix results ID [--runs|--cells] [--csv]"},
	{"matrix", "show", 3, 3, 0, 1, tbctl_cmd_matrix_show, "matrix show ID"},
	{"matrix", "compare", 3, 3,
	 TBCTL_OPT_BASELINE | TBCTL_OPT_MAX_DROP | TBCTL_OPT_METRIC | TBCTL_OPT_SPREAD | TBCTL_OPT_JUNIT, 1,
	 tbctl_cmd_matrix_compare,
	 "matrix compare ID --baseline ID [--max-drop PCT] [--metric M] [--spread] [--junit FILE]"},
	{"matrix", "report", 3, 3, TBCTL_OPT_BASELINE | TBCTL_OPT_FORMAT | TBCTL_OPT_METRIC, 1, tbctl_cmd_matrix_report,
	 "matrix report ID [--baseline ID [--metric M]] [--format html|md]"},
	{"matrix", "hosts", 3, 3, TBCTL_OPT_DIFF, 1, tbctl_cmd_matrix_hosts, "matrix hosts ID [--diff ID]"},
	{"matrix", "list", 2, 2, TBCTL_OPT_LIMIT, 1, tbctl_cmd_matrix_list, "matrix list [--limit N]"},
	{"matrix", "cancel", 3, 3, 0, 1, tbctl_cmd_matrix_cancel, "matrix cancel ID"},
	{"matrix", "resume", 3, 3, TBCTL_OPT_WAIT | TBCTL_OPT_QUIET, 1, tbctl_cmd_matrix_resume,
	 "matrix resume ID [--wait] [--quiet]"},
	{"matrix", "rerun", 3, 3, TBCTL_OPT_WAIT | TBCTL_OPT_QUIET, 1, tbctl_cmd_matrix_rerun,
	 "matrix rerun ID [--wait] [--quiet]"},
	{"notify", NULL, 2, 4, 0, 1, tbctl_cmd_notify,
	 "notify list|add RULE.json|set ID RULE.json|rm ID|test ID|deliveries ID"},
	{"inventory", NULL, 2, 3, 0, 1, tbctl_cmd_inventory, "inventory show|check FILE|reload"},
	{"spec", NULL, 2, 5, 0, 1, tbctl_cmd_spec, "spec push NAME FILE | list | show NAME [V] | diff NAME A B"},
	{"schedule", NULL, 3, 4, TBCTL_OPT_BASELINE | TBCTL_OPT_METRIC | TBCTL_OPT_MAX_DROP, 1, tbctl_cmd_schedule,
	 "schedule set NAME CRON [--baseline latest-passing|ID] [--metric M] [--max-drop PCT] | rm NAME"},
	{"schedules", NULL, 1, 1, 0, 1, tbctl_cmd_schedules, "schedules"},
	{"reserve", NULL, 2, TBCTL_MAX_POS, TBCTL_OPT_FOR | TBCTL_OPT_NOTE | TBCTL_OPT_WAIT, 1, tbctl_cmd_reserve,
	 "reserve HOST... --for DURATION [--note TEXT] [--wait]"},
	{"release", NULL, 1, 2, 0, 1, tbctl_cmd_release, "release [ID]"},
	{"reservations", NULL, 1, 1, 0, 1, tbctl_cmd_reservations, "reservations"},
	{"health", NULL, 1, 1, 0, 0, tbctl_cmd_health, "health"},
};

struct option_def {
	const char *name; /* without the leading "--" */
	unsigned bit;     /* enum tbctl_opt, 0 for global options */
	int takes_value;
};

static const struct option_def options[] = {
	{"json", 0, 0},
	{"url", 0, 1},
	{"timeout", 0, 1},
	{"help", 0, 0},
	{"version", 0, 0},
	{"os", TBCTL_OPT_OS, 1},
	{"fingerprint", TBCTL_OPT_FINGERPRINT, 1},
	{"role", TBCTL_OPT_ROLE, 1},
	{"host", TBCTL_OPT_HOST, 1},
	{"actor", TBCTL_OPT_ACTOR, 1},
	{"since", TBCTL_OPT_SINCE, 1},
	{"limit", TBCTL_OPT_LIMIT, 1},
	{"type", TBCTL_OPT_TYPE, 1},
	{"wait", TBCTL_OPT_WAIT, 0},
	{"make-default", TBCTL_OPT_MAKE_DEFAULT, 0},
	{"quiet", TBCTL_OPT_QUIET, 0},
	{"csv", TBCTL_OPT_CSV, 0},
	{"runs", TBCTL_OPT_RUNS, 0},
	{"cells", TBCTL_OPT_CELLS, 0},
	{"baseline", TBCTL_OPT_BASELINE, 1},
	{"max-drop", TBCTL_OPT_MAX_DROP, 1},
	{"diff", TBCTL_OPT_DIFF, 1},
	{"metric", TBCTL_OPT_METRIC, 1},
	{"spread", TBCTL_OPT_SPREAD, 0},
	{"junit", TBCTL_OPT_JUNIT, 1},
	{"format", TBCTL_OPT_FORMAT, 1},
	{"watch", TBCTL_OPT_WATCH, 0},
	{"log", TBCTL_OPT_LOG, 1},
	{"for", TBCTL_OPT_FOR, 1},
	{"note", TBCTL_OPT_NOTE, 1},
};

enum parse_result { PARSE_OK, PARSE_HELP, PARSE_VERSION, PARSE_ERROR };

static void usage_hint(void)
{
	fprintf(stderr, "tbctl: run 'tbctl --help' for the commands and options\n");
}

static int set_option(struct tbctl_args *a, const struct option_def *o, const char *value)
{
	const char **slot = NULL;

	if (strcmp(o->name, "json") == 0) {
		a->json = 1;
		return 0;
	}
	if (o->bit != 0 && !o->takes_value) { /* a flag */
		a->wait |= o->bit == TBCTL_OPT_WAIT;
		a->make_default |= o->bit == TBCTL_OPT_MAKE_DEFAULT;
		a->seen |= o->bit;
		return 0;
	}
	if (strcmp(o->name, "url") == 0) {
		if (*value == '\0') {
			fprintf(stderr, "tbctl: --url needs a value such as %s\n", TBCTL_DEFAULT_URL);
			return -1;
		}
		a->url = value;
		return 0;
	}
	if (strcmp(o->name, "timeout") == 0) {
		char *end;
		long v = strtol(value, &end, 10);

		if (*value == '\0' || *end != '\0' || v < 1 || v > 3600) {
			fprintf(stderr,
				"tbctl: --timeout must be a number of seconds "
				"1..3600, got \"%s\"\n",
				value);
			return -1;
		}
		a->timeout_s = v;
		return 0;
	}
	switch (o->bit) {
	case TBCTL_OPT_OS: slot = &a->os; break;
	case TBCTL_OPT_FINGERPRINT: slot = &a->fingerprint; break;
	case TBCTL_OPT_ROLE: slot = &a->role; break;
	case TBCTL_OPT_HOST: slot = &a->host; break;
	case TBCTL_OPT_ACTOR: slot = &a->actor; break;
	case TBCTL_OPT_SINCE: slot = &a->since; break;
	case TBCTL_OPT_LIMIT: slot = &a->limit; break;
	case TBCTL_OPT_TYPE: slot = &a->type; break;
	case TBCTL_OPT_BASELINE: slot = &a->baseline; break;
	case TBCTL_OPT_MAX_DROP: slot = &a->max_drop; break;
	case TBCTL_OPT_DIFF: slot = &a->diff; break;
	case TBCTL_OPT_METRIC: slot = &a->metric; break;
	case TBCTL_OPT_JUNIT: slot = &a->junit; break;
	case TBCTL_OPT_FORMAT: slot = &a->format; break;
	case TBCTL_OPT_LOG: slot = &a->log; break;
	case TBCTL_OPT_FOR: slot = &a->duration; break;
	case TBCTL_OPT_NOTE: slot = &a->note; break;
	default: return -1;
	}
	if (*value == '\0') {
		fprintf(stderr, "tbctl: --%s needs a value\n", o->name);
		return -1;
	}
	*slot = value;
	a->seen |= o->bit;
	return 0;
}

static enum parse_result parse_args(int argc, char **argv, struct tbctl_args *a)
{
	int i, only_operands = 0;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct option_def *o = NULL;
		const char *value = NULL, *eq;
		size_t k, nlen;

		if (only_operands || arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (a->npos == TBCTL_MAX_POS) {
				fprintf(stderr, "tbctl: too many arguments\n");
				return PARSE_ERROR;
			}
			a->pos[a->npos++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (strcmp(arg, "-h") == 0)
			return PARSE_HELP;
		if (arg[1] != '-') {
			fprintf(stderr, "tbctl: unknown option %s\n", arg);
			usage_hint();
			return PARSE_ERROR;
		}
		eq = strchr(arg + 2, '=');
		nlen = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
		if ((nlen == 5 && strncmp(arg + 2, "token", 5) == 0) ||
		    (nlen == 10 && strncmp(arg + 2, "token-file", 10) == 0)) {
			fprintf(stderr, "tbctl: tbctl never takes a token on the command "
					"line (it would show in ps and shell history); write it to "
					"a file, chmod 600 it and set TESTBEDD_TOKEN_FILE\n");
			return PARSE_ERROR;
		}
		for (k = 0; k < sizeof options / sizeof options[0]; k++)
			if (strlen(options[k].name) == nlen && strncmp(options[k].name, arg + 2, nlen) == 0)
				o = &options[k];
		if (o == NULL) {
			fprintf(stderr, "tbctl: unknown option --%.*s\n", (int)nlen, arg + 2);
			usage_hint();
			return PARSE_ERROR;
		}
		if (strcmp(o->name, "help") == 0)
			return PARSE_HELP;
		if (strcmp(o->name, "version") == 0)
			return PARSE_VERSION;
		if (o->takes_value) {
			if (eq != NULL) {
				value = eq + 1;
			} else if (i + 1 < argc) {
				value = argv[++i];
			} else {
				fprintf(stderr, "tbctl: --%s needs a value\n", o->name);
				return PARSE_ERROR;
			}
		} else if (eq != NULL) {
			fprintf(stderr, "tbctl: --%s takes no value\n", o->name);
			return PARSE_ERROR;
		}
		if (set_option(a, o, value) != 0)
			return PARSE_ERROR;
	}
	return PARSE_OK;
}

static const char *option_name(unsigned bit)
{
	size_t k;

	for (k = 0; k < sizeof options / sizeof options[0]; k++)
		if (options[k].bit == bit)
			return options[k].name;
	return "?";
}

/* The command the operands name, or NULL after saying why on stderr. */
static const struct command *find_command(const struct tbctl_args *a)
{
	const struct command *named = NULL;
	size_t k, n = sizeof commands / sizeof commands[0];
	unsigned bit;

	for (k = 0; k < n; k++) {
		const struct command *c = &commands[k];

		if (strcmp(c->name, a->pos[0]) != 0)
			continue;
		if (c->sub != NULL && (a->npos < 2 || strcmp(c->sub, a->pos[1]) != 0))
			continue;
		if (a->npos < c->min_pos || a->npos > c->max_pos)
			continue;
		for (bit = 1; bit <= TBCTL_OPT_LAST; bit <<= 1) {
			if ((a->seen & bit) && !(c->opts & bit)) {
				fprintf(stderr,
					"tbctl: option --%s does not apply to "
					"'tbctl %s'\n",
					option_name(bit), c->usage);
				return NULL;
			}
		}
		return c;
	}
	/* No exact match: find the usage line to show. */
	for (k = 0; k < n && named == NULL; k++)
		if (strcmp(commands[k].name, a->pos[0]) == 0 && commands[k].sub != NULL && a->npos > 1 &&
		    strcmp(commands[k].sub, a->pos[1]) == 0)
			named = &commands[k];
	for (k = 0; k < n && named == NULL; k++)
		if (strcmp(commands[k].name, a->pos[0]) == 0 && commands[k].sub == NULL)
			named = &commands[k];
	if (named != NULL) {
		fprintf(stderr, "tbctl: wrong number of arguments; usage: tbctl %s\n", named->usage);
		return NULL;
	}
	for (k = 0; k < n; k++) {
		if (strcmp(commands[k].name, a->pos[0]) == 0) {
			fprintf(stderr, "tbctl: '%s' takes one of:", a->pos[0]);
			for (; k < n; k++)
				if (strcmp(commands[k].name, a->pos[0]) == 0)
					fprintf(stderr, "\n  tbctl %s", commands[k].usage);
			fputc('\n', stderr);
			return NULL;
		}
	}
	fprintf(stderr, "tbctl: unknown command \"%s\"\n", a->pos[0]);
	usage_hint();
	return NULL;
}

/* Base URL without trailing slashes, in *out (malloc'ed). */
static int base_url(const struct tbctl_args *a, char **out)
{
	const char *url = a->url;
	size_t len;

	if (url == NULL)
		url = getenv("TESTBEDD_URL");
	if (url == NULL || *url == '\0')
		url = TBCTL_DEFAULT_URL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		fprintf(stderr,
			"tbctl: the URL must start with http:// or https://, "
			"got \"%s\" (from %s)\n",
			url, a->url ? "--url" : "TESTBEDD_URL");
		return TBCTL_EXIT_USAGE;
	}
	len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		len--;
	*out = malloc(len + 1);
	if (*out == NULL) {
		fprintf(stderr, "tbctl: out of memory\n");
		return TBCTL_EXIT_SERVER;
	}
	memcpy(*out, url, len);
	(*out)[len] = '\0';
	return TBCTL_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct tbctl_args args;
	struct tbctl_ctx ctx;
	const struct command *cmd;
	char *url = NULL, *token = NULL;
	int rc;

	memset(&args, 0, sizeof args);
	memset(&ctx, 0, sizeof ctx);
	args.timeout_s = DEFAULT_TIMEOUT_S;
	switch (parse_args(argc, argv, &args)) {
	case PARSE_HELP: usage(stdout); return TBCTL_EXIT_OK;
	case PARSE_VERSION: printf("tbctl %s\n", TB_VERSION); return TBCTL_EXIT_OK;
	case PARSE_ERROR: return TBCTL_EXIT_USAGE;
	case PARSE_OK: break;
	}
	if (args.npos == 0) {
		usage(stderr);
		return TBCTL_EXIT_USAGE;
	}
	if (strcmp(args.pos[0], "help") == 0 && args.npos == 1) {
		usage(stdout);
		return TBCTL_EXIT_OK;
	}
	if (strcmp(args.pos[0], "version") == 0 && args.npos == 1) {
		printf("tbctl %s\n", TB_VERSION);
		return TBCTL_EXIT_OK;
	}
	cmd = find_command(&args);
	if (cmd == NULL)
		return TBCTL_EXIT_USAGE;
	rc = base_url(&args, &url);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	if (cmd->needs_token) {
		rc = tbctl_token_load(&ctx.token_file, &token);
		if (rc != TBCTL_EXIT_OK) {
			free(url);
			return rc;
		}
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "tbctl: libcurl failed to start\n");
		tbctl_token_free(token);
		free(url);
		return TBCTL_EXIT_SERVER;
	}
	ctx.args = &args;
	ctx.http.base_url = url;
	ctx.http.token = token;
	ctx.http.connect_timeout_ms = CONNECT_TIMEOUT_MS;
	ctx.http.timeout_ms = args.timeout_s * 1000L;
	rc = cmd->fn(&ctx);
	curl_global_cleanup();
	tbctl_token_free(token);
	free(url);
	if (fflush(stdout) != 0 && rc == TBCTL_EXIT_OK) {
		perror("tbctl: writing the output");
		rc = TBCTL_EXIT_USAGE;
	}
	return rc;
}
