/*
 * matrix_tool.c - a spec's "tool" (traffic.h) against the rest of it: what
 * iperf2 or netperf cannot do beside it (bidir; iperf3's omit_s, zerocopy;
 * iperf2: affinity; netperf: parallel, a bitrate, udp reverse) is refused
 * before anything runs, naming the tool's field.
 */
#include "matrix_internal.h"
#include "traffic.h"

#include <stdio.h>

/* What a tool other than iperf3 lacks, as spec keys. */
struct lacks {
	int tool;
	const char *name;
	enum tb_mx_axis axes[4]; /* keys it has not: any value but null refused */
	int naxes;
	bool parallel; /* parallel over 1 refused */
	bool bitrate;  /* a bitrate (but 0: as fast as it can) refused */
	bool udp_rev;  /* udp with reverse refused */
	bool rev;      /* any reverse refused (request/response: the client asks) */
};

static const struct lacks lacks[] = {
	{TB_TOOL_IPERF2, "iperf2", {TB_MX_OMIT, TB_MX_ZEROCOPY, TB_MX_AFFINITY}, 3, false, false, false, false},
	{TB_TOOL_NETPERF, "netperf", {TB_MX_OMIT, TB_MX_ZEROCOPY}, 2, true, true, true, false},
	{TB_TOOL_NETPERF_RR, "netperf-rr", {TB_MX_OMIT, TB_MX_ZEROCOPY}, 2, true, true, false, true},
};

static const char *key_of(enum tb_mx_axis a)
{
	switch (a) {
	case TB_MX_OMIT: return "iperf.omit_s";
	case TB_MX_ZEROCOPY: return "iperf.zerocopy";
	case TB_MX_AFFINITY: return "iperf.affinity";
	default: return "iperf";
	}
}

static bool set(const struct tb_mx_value *v)
{
	return v->num != 0 || v->str[0] != '\0';
}

/* Sweep sw has a bitrate other than unset or 0. */
static bool rated(const struct tb_mx_sweep *sw)
{
	for (int i = 0; i < sw->n; i++)
		if (sw->v[i].bps > 0)
			return true;
	return false;
}

static int check_one(const struct tb_mx_spec *sp, const struct lacks *l, const char *field, struct tb_error *err)
{
	bool udp = false, rev = false;

	for (int i = 0; i < sp->nprotos; i++)
		udp |= sp->protos[i] == TB_IPERF_UDP;
	for (int i = 0; i < sp->ndirs; i++) {
		rev |= sp->dirs[i] == TB_IPERF_REVERSE;
		if (sp->dirs[i] == TB_IPERF_BIDIR)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is %s, which has no bidir (iperf3's --bidir): take bidir out of "
				       "directions or %s out of tool",
				       field, l->name, l->name);
	}
	for (int k = 0; k < l->naxes; k++) {
		const struct tb_mx_sweep *sw = &sp->axes[l->axes[k]];

		for (int i = 0; i < sw->n; i++)
			if (set(&sw->v[i]))
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is %s, which has no %s (an iperf3 option): unset it or take %s out "
					       "of tool",
					       field, l->name, key_of(l->axes[k]), l->name);
	}
	for (int i = 0; l->parallel && i < sp->axes[TB_MX_PARALLEL].n; i++)
		if (sp->axes[TB_MX_PARALLEL].v[i].num > 1)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is %s, whose test is one connection: iperf.parallel over 1 cannot run "
				       "(unset it or take %s out of tool)",
				       field, l->name, l->name);
	if (l->bitrate && (rated(&sp->axes[TB_MX_BITRATE]) || rated(&sp->axes[TB_MX_UDP_BITRATE])))
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s is %s, which sends as fast as it can (a rate needs a netperf built with "
			       "--enable-intervals): unset iperf.bitrate or give 0, or take %s out of tool",
			       field, l->name, l->name);
	if (l->rev && rev)
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s is %s, a request/response test (TCP_RR, UDP_RR): the client asks and the server "
			       "answers, so it has no reverse: take reverse out of directions or %s out of tool",
			       field, l->name, l->name);
	if (l->udp_rev && udp && rev)
		return tb_fail(err, TB_ERR_INVALID, field,
			       "%s is %s, which has no reverse UDP test (no UDP_MAERTS): take reverse out of "
			       "directions, udp out of protocols, or %s out of tool",
			       field, l->name, l->name);
	return 0;
}

/* What iperf2 or netperf (values of "tool") cannot do beside it in the spec. */
int tb_mx_check_tool(const struct tb_mx_spec *sp, struct tb_error *err)
{
	const struct tb_mx_sweep *tool = &sp->axes[TB_MX_TOOL];
	char field[TB_ERROR_FIELD_MAX];
	int rc;

	for (size_t k = 0; k < sizeof(lacks) / sizeof(lacks[0]); k++) {
		for (int i = 0; i < tool->n; i++) {
			if (tool->v[i].num != lacks[k].tool)
				continue;
			if (tool->listed)
				snprintf(field, sizeof(field), "tool[%d]", i);
			else
				snprintf(field, sizeof(field), "tool");
			if ((rc = check_one(sp, &lacks[k], field, err)) != 0)
				return rc;
		}
	}
	return 0;
}
