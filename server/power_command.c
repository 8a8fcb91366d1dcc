/*
 * power_command.c - the "command" power driver: a local program per action,
 * for power switches and tools testbedd has no driver for (powerman's pm,
 * a PDU's CLI, a smart plug's script).
 *
 * The inventory gives an argv template per action (on, off, cycle, reset,
 * soft, status); the method can do exactly the actions it has.  {host},
 * {mac} and {bmc} are replaced inside each element by the machine's name,
 * its mac and the method's address: a value with spaces, quotes or `;`
 * stays one argument, because the program runs from argv through
 * tb_proc_run (proc.h), never through a shell.  The step shows the argv as
 * run, each element quoted for sh.
 *
 * The action's outcome is the exit status (0: done; else TB_ERR_REMOTE with
 * the end of stderr, or of stdout when stderr is empty).  status reads stdout: on_pattern / off_pattern are
 * POSIX extended regular expressions, ^ and $ matching at each line.
 *
 * The child gets the fixed environment of proc.h (PATH, LC_ALL=C) only;
 * there is no way to pass it a secret other than on its command line, so
 * a template must not hold one (the README says so).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "outbuf.h"
#include "power.h"
#include "proc.h"

#define COMMAND_MAX_OUTPUT 65536u
#define STEP_OUTPUT_MAX 400
#define ERR_TAIL_MAX 300

/* s with every {host}, {mac}, {bmc} replaced; malloc'd, NULL on out of memory. */
static char *substitute(const char *s, const char *host, const char *mac, const char *bmc)
{
	static const char *const names[] = {"{host}", "{mac}", "{bmc}"};
	const char *values[] = {host, mac, bmc};
	struct tb_outbuf out = {0};

	while (*s != '\0') {
		const char *v = NULL;
		size_t skip = 1;

		for (int i = 0; i < 3 && *s == '{'; i++)
			if (strncmp(s, names[i], strlen(names[i])) == 0) {
				v = values[i] != NULL ? values[i] : "";
				skip = strlen(names[i]);
			}
		if (v != NULL)
			tb_outbuf_puts(&out, v);
		else
			tb_outbuf_add(&out, s, 1);
		s += skip;
	}
	return tb_outbuf_take(&out);
}

static void free_argv(char **argv)
{
	for (size_t i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* The last max bytes of s, from a line start when there is one, trimmed. */
static void tail(const char *s, size_t max, char *out, size_t outsz)
{
	size_t n = strlen(s);
	const char *p = s;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	if (n > max) {
		const char *nl;

		p = s + n - max;
		if ((nl = memchr(p, '\n', max)) != NULL && nl + 1 < s + n)
			p = nl + 1;
	}
	snprintf(out, outsz, "%.*s", (int)(s + n - p), p);
}

/* 1 when re matches somewhere in text (^/$ at every line), 0 when not, -1 when re is bad. */
static int matches(const char *re, const char *text)
{
	regex_t rx;
	int rc;

	if (regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0)
		return -1;
	rc = regexec(&rx, text, 0, NULL, 0) == 0;
	regfree(&rx);
	return rc;
}

/* From the status command's stdout: *is_on, or TB_ERR_REMOTE when it says neither. */
static int read_status(const struct tb_power_call *call, const char *out, const char *shown, int *is_on,
		       struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	int on = pm->on_pattern != NULL ? matches(pm->on_pattern, out) : -2;
	int off = pm->off_pattern != NULL ? matches(pm->off_pattern, out) : -2;
	int v;

	if (on == -1 || off == -1)
		return tb_fail(err, TB_ERR_CONFIG, "on_pattern",
			       "%s: on_pattern or off_pattern of the command "
			       "method is not a POSIX extended regular expression",
			       call->m->name);
	if (on == 1 && off == 1)
		return tb_fail(err, TB_ERR_REMOTE, "power",
			       "%s: the status command's output \"%s\" matches both "
			       "on_pattern /%s/ and off_pattern /%s/",
			       call->m->name, shown, pm->on_pattern, pm->off_pattern);
	if (on == 1)
		v = 1;
	else if (off == 1)
		v = 0;
	else if (on == 0 && off == -2)
		v = 0; /* only on_pattern: anything else means off */
	else if (off == 0 && on == -2)
		v = 1;
	else
		return tb_fail(err, TB_ERR_REMOTE, "power",
			       "%s: the status command's output \"%s\" matches "
			       "neither on_pattern /%s/ nor off_pattern /%s/",
			       call->m->name, shown, pm->on_pattern, pm->off_pattern);
	if (is_on != NULL)
		*is_on = v;
	return 0;
}

static int command_run(const struct tb_power_call *call, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const struct tb_machine *m = call->m;
	char **tmpl = op < TB_POWER_COMMAND_SLOTS ? pm->argv[op] : NULL;
	char what[300], output[STEP_OUTPUT_MAX + 1], errtail[ERR_TAIL_MAX + 1];
	struct tb_proc_result r = {0};
	struct tb_error perr = {0};
	char **argv = NULL, *cmd = NULL;
	long timeout_ms = (long)pm->timeout_s * 1000;
	size_t n = 0;
	int rc;

	if (tmpl == NULL)
		return tb_fail(err, TB_ERR_INVALID, "action", "%s: the command power method has no %s: command",
			       m->name, tb_power_op_name(op));
	for (size_t i = 0; tmpl[i] != NULL; i++) {
		if (strstr(tmpl[i], "{mac}") != NULL && m->mac == NULL)
			return tb_fail(err, TB_ERR_CONFIG, "mac",
				       "%s: the %s command uses {mac} but the machine "
				       "has no mac in the inventory",
				       m->name, tb_power_op_name(op));
		if (strstr(tmpl[i], "{bmc}") != NULL && pm->address == NULL)
			return tb_fail(err, TB_ERR_CONFIG, "address",
				       "%s: the %s command uses {bmc} but the "
				       "command method has no address",
				       m->name, tb_power_op_name(op));
		n++;
	}
	if (n == 0 || (argv = calloc(n + 1, sizeof(*argv))) == NULL)
		return tb_fail(err, n == 0 ? TB_ERR_CONFIG : TB_ERR_NOMEM, "power",
			       "%s: cannot build the %s "
			       "command",
			       m->name, tb_power_op_name(op));
	for (size_t i = 0; i < n; i++)
		if ((argv[i] = substitute(tmpl[i], m->name, m->mac, pm->address)) == NULL) {
			free_argv(argv);
			return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
		}
	if (timeout_ms <= 0 || (call->timeout_ms > 0 && call->timeout_ms < timeout_ms))
		timeout_ms = call->timeout_ms > 0 ? call->timeout_ms : 30000;

	rc = tb_proc_run((const char *const *)argv, NULL, timeout_ms, COMMAND_MAX_OUTPUT, call->cancel, &r, &perr);
	cmd = tb_proc_display((const char *const *)argv);
	tail(r.out != NULL && r.out[0] != '\0' ? r.out : (r.err != NULL ? r.err : ""), STEP_OUTPUT_MAX, output,
	     sizeof(output));
	/* the end of stderr; of stdout when stderr is empty (powerman's pm
	 * 2.3.27 prints "No such nodes: X" on stdout and exits 209) */
	tail(r.err != NULL && r.err[0] != '\0' ? r.err : (r.out != NULL ? r.out : ""), ERR_TAIL_MAX, errtail,
	     sizeof(errtail));
	snprintf(what, sizeof(what), "command power %s for %s", tb_power_op_name(op), m->name);
	if (call->step != NULL && r.pid > 0)
		call->step(call->step_cls, what, cmd, r.exit_status, output[0] != '\0' ? output : NULL);
	tb_debug("power", "%s: %s: exit %d: %s", m->name, cmd != NULL ? cmd : argv[0], r.exit_status, output);

	if (rc == TB_ERR_NOT_FOUND)
		rc = tb_fail(err, TB_ERR_CONFIG, "power",
			     "%s: the %s command's program %s is not installed in "
			     "%s on the testbedd machine",
			     m->name, tb_power_op_name(op), argv[0], TB_PROC_PATH);
	else if (rc == TB_ERR_TIMEOUT)
		rc = tb_fail(err, TB_ERR_TIMEOUT, "power", "%s: the %s command did not end within %ld ms: %s", m->name,
			     tb_power_op_name(op), timeout_ms, cmd != NULL ? cmd : argv[0]);
	else if (rc == TB_ERR_CANCELED)
		rc = tb_fail(err, TB_ERR_CANCELED, NULL, "%s: the %s command was stopped on request", m->name,
			     tb_power_op_name(op));
	else if (rc != 0) {
		if (err != NULL)
			*err = perr;
	} else if (r.exit_status != 0) {
		if (r.term_signal != 0)
			rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the %s command was killed by signal %d: %s",
				     m->name, tb_power_op_name(op), r.term_signal, errtail);
		else
			rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the %s command failed (exit %d): %s", m->name,
				     tb_power_op_name(op), r.exit_status, errtail[0] != '\0' ? errtail : "(no output)");
	} else if (op == TB_POWER_STATUS) {
		rc = read_status(call, r.out, output, is_on, err);
	}
	free(cmd);
	free_argv(argv);
	tb_proc_result_free(&r);
	return rc;
}

/* Every action at most; a method can do the ones it has (tb_power_method_ops). */
const struct tb_power_driver tb_power_command = {
	.name = "command",
	.ops = TB_POWER_BIT(TB_POWER_ON) | TB_POWER_BIT(TB_POWER_OFF) | TB_POWER_BIT(TB_POWER_CYCLE) |
	       TB_POWER_BIT(TB_POWER_RESET) | TB_POWER_BIT(TB_POWER_SOFT) | TB_POWER_BIT(TB_POWER_STATUS),
	.run = command_run,
};
