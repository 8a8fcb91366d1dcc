/*
 * matrix_tool.c - a spec's "tool" (traffic.h) against the rest of it: what
 * iperf2 cannot do beside it (bidir, omit_s, zerocopy, affinity) is refused
 * before anything runs, naming the tool's field.
 */
#include "matrix_internal.h"
#include "traffic.h"

#include <stdio.h>

/* What iperf2 (a value of "tool") cannot do beside it in the spec. */
int tb_mx_check_tool(const struct tb_mx_spec *sp, struct tb_error *err)
{
	const struct tb_mx_sweep *tool = &sp->axes[TB_MX_TOOL];
	static const struct {
		enum tb_mx_axis axis;
		const char *key;
	} iperf3_only[] = {
		{TB_MX_OMIT, "iperf.omit_s"}, {TB_MX_ZEROCOPY, "iperf.zerocopy"}, {TB_MX_AFFINITY, "iperf.affinity"}};
	char field[TB_ERROR_FIELD_MAX];
	int i2 = -1;

	for (int i = 0; i < tool->n && i2 < 0; i++)
		if (tool->v[i].num == TB_TOOL_IPERF2)
			i2 = i;
	if (i2 < 0)
		return 0;
	if (tool->listed)
		snprintf(field, sizeof(field), "tool[%d]", i2);
	else
		snprintf(field, sizeof(field), "tool");
	for (int i = 0; i < sp->ndirs; i++)
		if (sp->dirs[i] == TB_IPERF_BIDIR)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s is iperf2, which has no bidir (iperf3's --bidir): take bidir out of "
				       "directions or iperf2 out of tool",
				       field);
	for (size_t k = 0; k < sizeof(iperf3_only) / sizeof(iperf3_only[0]); k++) {
		const struct tb_mx_sweep *sw = &sp->axes[iperf3_only[k].axis];

		for (int i = 0; i < sw->n; i++)
			if (sw->v[i].num != 0 || sw->v[i].str[0] != '\0')
				return tb_fail(err, TB_ERR_INVALID, field,
					       "%s is iperf2, which has no %s (an iperf3 option): unset it or take "
					       "iperf2 out of tool",
					       field, iperf3_only[k].key);
	}
	return 0;
}
