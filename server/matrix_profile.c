/* matrix_profile.c - the spec's "profile".  See matrix_profile.h. */
#include "matrix_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const side_names[] = {"sender", "receiver", "both", NULL};

int tb_mx_profile_check(const json_t *spec, struct tb_error *err)
{
	const json_t *v = json_object_get(spec, "profile"), *x;
	const char *k;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return tb_fail(err, TB_ERR_INVALID, "profile",
			       "profile must be an object: {\"side\": \"sender\"|\"receiver\"|\"both\", \"frequency\": "
			       "1..%d}",
			       TB_PROFILE_FREQ_MAX);
	json_object_foreach((json_t *)v, k, x)
	{
		if (strcmp(k, "side") != 0 && strcmp(k, "frequency") != 0) {
			char field[48];

			snprintf(field, sizeof(field), "profile.%.30s", k);
			return tb_fail(err, TB_ERR_INVALID, field, "%s is not known (profile has side and frequency)",
				       field);
		}
	}
	x = json_object_get(v, "side");
	if (x != NULL) {
		int known = 0;

		for (int i = 0; side_names[i] != NULL && json_is_string(x); i++)
			known |= strcmp(json_string_value(x), side_names[i]) == 0;
		if (!known)
			return tb_fail(err, TB_ERR_INVALID, "profile.side",
				       "profile.side must be \"sender\", \"receiver\" or \"both\"");
	}
	x = json_object_get(v, "frequency");
	if (x != NULL &&
	    (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > TB_PROFILE_FREQ_MAX))
		return tb_fail(err, TB_ERR_INVALID, "profile.frequency",
			       "profile.frequency must be a whole number 1..%d (samples a second per CPU)",
			       TB_PROFILE_FREQ_MAX);
	return 0;
}

bool tb_mx_profile_of(const json_t *spec, const char **side, long *freq)
{
	const json_t *v = json_object_get(spec, "profile");
	const char *s = json_string_value(json_object_get(v, "side"));

	if (!json_is_object(v))
		return false;
	*side = "sender";
	for (int i = 0; s != NULL && side_names[i] != NULL; i++)
		if (strcmp(s, side_names[i]) == 0)
			*side = side_names[i];
	*freq = json_is_integer(json_object_get(v, "frequency"))
			? (long)json_integer_value(json_object_get(v, "frequency"))
			: TB_PROFILE_FREQ_DEFAULT;
	return true;
}

char *tb_mx_profile_script(bool bsd, long freq, long wall_s)
{
	char *s = malloc(1400);

	if (s == NULL)
		return NULL;
	if (bsd)
		snprintf(s, 1400,
			 "if ! command -v dtrace >/dev/null 2>&1; then echo 'TBPROF unavailable dtrace was not found "
			 "(not on PATH; FreeBSD has it in the base system: kldload dtraceall)'; exit 3; fi; "
			 "if [ \"$(id -u)\" != 0 ]; then echo \"TBPROF unavailable dtrace needs root and the ssh user "
			 "$(id -un) is not root\"; exit 3; fi; "
			 "exec dtrace -q -n 'profile-%ld { @[stack()] = count(); } tick-%lds { exit(0); }'",
			 freq, wall_s);
	else
		snprintf(
			s, 1400,
			"if ! command -v perf >/dev/null 2>&1; then echo 'TBPROF unavailable perf was not found "
			"(not on PATH; Debian: apt-get install linux-perf)'; exit 3; fi; "
			"if [ \"$(id -u)\" != 0 ]; then p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null); "
			"if [ \"$p\" != 0 ] && [ \"$p\" != -1 ]; then echo \"TBPROF unavailable "
			"kernel.perf_event_paranoid is $p and the ssh user $(id -un) is not root: perf record -a needs "
			"0 or lower (sysctl kernel.perf_event_paranoid=0) or root\"; exit 3; fi; fi; "
			"d=$(mktemp -d /tmp/testbedd-perf.XXXXXX) || exit 4; echo \"TBPROF dir $d\"; "
			"exec perf record -a -g -F %ld -o \"$d/perf.data\" -- sleep %ld",
			freq, wall_s);
	return s;
}

char *tb_mx_profile_command(bool bsd, long freq, long wall_s)
{
	char *s = malloc(200), wall[24] = "WALL";

	if (s == NULL)
		return NULL;
	if (wall_s >= 0)
		snprintf(wall, sizeof(wall), "%ld", wall_s);
	if (bsd)
		snprintf(s, 200, "dtrace -q -n 'profile-%ld { @[stack()] = count(); } tick-%ss { exit(0); }'", freq,
			 wall);
	else
		snprintf(s, 200, "perf record -a -g -F %ld -o DIR/perf.data -- sleep %s", freq, wall);
	return s;
}

json_t *tb_mx_profile_plan_json(const json_t *spec)
{
	const char *side;
	long freq;
	char *l, *b;
	json_t *j;

	if (!tb_mx_profile_of(spec, &side, &freq))
		return json_null();
	l = tb_mx_profile_command(false, freq, -1);
	b = tb_mx_profile_command(true, freq, -1);
	j = json_pack(
		"{s:s, s:i, s:{s:[s, s, s, s], s:[s, s]}, s:s, s:s}", "side", side, "frequency", (int)freq, "commands",
		"linux", "DIR=$(mktemp -d /tmp/testbedd-perf.XXXXXX)", l != NULL ? l : "",
		"kill -INT PID (with the run's end)", "perf script -i DIR/perf.data; rm -rf DIR", "freebsd",
		b != NULL ? b : "", "kill -INT PID (with the run's end: dtrace prints its aggregation)", "when",
		"on the chosen end of every run (sender: the client, or the server of a reverse run; both: the two), "
		"started just before the client and stopped with it; WALL is the run's length plus slack",
		"unavailable",
		"a host without perf (Linux) or dtrace (FreeBSD), or without the permission (not root and "
		"kernel.perf_event_paranoid above 0; dtrace needs root), is not profiled: the run page says why and "
		"the run counts as usual");
	free(l);
	free(b);
	return j;
}
