/*
 * matrix_values.c - the grammar of a matrix spec's single values: sizes
 * ("256K"), bitrates ("1.5G", "0"), CPU affinity ("n,m"), congestion
 * control names, whole numbers in a range; and how a value is described in
 * a message.  matrix_spec.c (the spec) and matrix.c (one run's params) use
 * them, so that both say the same about the same value.
 */
#include "matrix_internal.h"
#include "validate.h"
#include "traffic.h"

#include <stdio.h>
#include <string.h>

void tb_mx_sanitize(char *dst, size_t len, const char *src, size_t max)
{
	size_t i = 0, o = 0;

	while (src[i] != '\0' && i < max && o + 1 < len) {
		unsigned char c = (unsigned char)src[i];
		size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4, have = 1;

		while (have < k && src[i + have] != '\0')
			have++;
		/* one '?' for a control or format character (tb_text_refused), however many bytes */
		if (tb_text_refused(src + i, have) >= 0) {
			dst[o++] = '?';
			i += have;
		} else {
			dst[o++] = src[i++];
		}
	}
	dst[o] = '\0';
}

void tb_mx_describe(const json_t *v, char *buf, size_t len)
{
	char s[48];

	switch (json_typeof(v)) {
	case JSON_STRING:
		tb_mx_sanitize(s, sizeof(s), json_string_value(v), 40);
		snprintf(buf, len, "\"%s%s\"", s, json_string_length(v) > 40 ? "..." : "");
		break;
	case JSON_INTEGER: snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
	case JSON_REAL: snprintf(buf, len, "%g", json_real_value(v)); break;
	case JSON_TRUE: snprintf(buf, len, "true"); break;
	case JSON_FALSE: snprintf(buf, len, "false"); break;
	case JSON_NULL: snprintf(buf, len, "null"); break;
	case JSON_ARRAY: snprintf(buf, len, json_array_size(v) == 0 ? "[] (an empty list)" : "a list"); break;
	default: snprintf(buf, len, "an object"); break;
	}
}

/* "a, b, c" of a NULL-terminated list. */
int tb_mx_get_int(const json_t *v, const char *field, long long lo, long long hi, const char *unit, long long *out,
		  struct tb_error *err)
{
	char got[64];

	tb_mx_describe(v, got, sizeof(got));
	if (!json_is_integer(v))
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be a whole number %lld..%lld%s, got %s", field, lo,
			       hi, unit, got);
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be %lld..%lld%s, got %s", field, lo, hi, unit, got);
	*out = json_integer_value(v);
	return 0;
}

/* ---- single values ---- */

/* "4M", "256K", 1048576: bytes, K/M/G = 1024. */
static int parse_size(const json_t *v, long max, long *out)
{
	const char *s;
	long long n = 0;
	size_t i;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 1 || json_integer_value(v) > max)
			return -1;
		*out = (long)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		n = n * 10 + (s[i] - '0');
		if (n > max)
			return -1;
	}
	if (i == 0)
		return -1;
	if (s[i] != '\0') {
		const char *units = "KMG";
		const char *u = strchr(units, s[i]);

		if (u == NULL || s[i + 1] != '\0')
			return -1;
		for (long k = 0; k <= u - units; k++)
			if ((n *= 1024) > max)
				return -1;
	}
	if (n < 1)
		return -1;
	*out = (long)n;
	return 0;
}

/* iperf3's -b: ^[0-9]+(\.[0-9]+)?[KMGT]?$ (1000-based, as iperf3 reads -b), or a
 * non-negative whole number of bits/s. */
static int parse_rate(const json_t *v, char *text, size_t len, double *bps)
{
	const char *s;
	double n = 0, scale = 1;
	size_t i = 0;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return -1;
		snprintf(text, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		*bps = (double)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > 20)
		return -1;
	s = json_string_value(v);
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		n = n * 10 + (s[i] - '0');
	if (i == 0)
		return -1;
	if (s[i] == '.') {
		size_t start = ++i;

		for (; s[i] >= '0' && s[i] <= '9'; i++)
			n += (s[i] - '0') * (scale /= 10);
		if (i == start)
			return -1;
	}
	if (s[i] != '\0') {
		static const double mult[] = {1e3, 1e6, 1e9, 1e12};
		const char *units = "KMGT";
		const char *u = strchr(units, s[i]);

		if (u == NULL || s[i + 1] != '\0')
			return -1;
		n *= mult[u - units];
	}
	snprintf(text, len, "%s", s);
	*bps = n;
	return 0;
}

/* "n" or "n,m", n and m 0..1023 without leading zeros (or a whole number). */
static int parse_affinity(const json_t *v, char *text, size_t len)
{
	const char *s;
	int parts = 0;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > 1023)
			return -1;
		snprintf(text, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	for (const char *p = s;; p++) {
		int n = 0, digits = 0;

		/* Stop accumulating past 4 digits: n never overflows, whatever the length. */
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 4)
				n = n * 10 + (*p - '0');
		if (digits == 0 || digits > 4 || n > 1023 || (digits > 1 && p[-digits] == '0'))
			return -1;
		parts++;
		if (*p == '\0')
			break;
		if (*p != ',' || parts == 2)
			return -1;
	}
	snprintf(text, len, "%s", s);
	return 0;
}

static int valid_congestion(const json_t *v)
{
	const char *s;
	size_t n = 0;

	if (!json_is_string(v))
		return 0;
	for (s = json_string_value(v); *s != '\0'; s++, n++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return n >= 1 && n <= 16 && n == json_string_length(v);
}

int tb_mx_value_parse(enum tb_mx_axis axis, const json_t *v, const char *field, struct tb_mx_value *out,
		      struct tb_error *err)
{
	struct tb_mx_value x;
	long long n;
	char got[64];
	int rc;

	memset(&x, 0, sizeof(x));
	x.bps = -1;
	tb_mx_describe(v, got, sizeof(got));
	switch (axis) {
	case TB_MX_PARALLEL:
		if ((rc = tb_mx_get_int(v, field, 1, 128, "", &n, err)) != 0)
			return rc;
		x.num = (long)n;
		break;
	case TB_MX_OMIT:
		if ((rc = tb_mx_get_int(v, field, 0, TB_MX_OMIT_MAX, " seconds", &n, err)) != 0)
			return rc;
		x.num = (long)n;
		break;
	case TB_MX_TOS:
		if ((rc = tb_mx_get_int(v, field, 0, 255, "", &n, err)) != 0)
			return rc;
		x.num = (long)n;
		break;
	case TB_MX_LENGTH:
	case TB_MX_WINDOW: {
		long max = axis == TB_MX_LENGTH ? 1048576L : TB_MX_WINDOW_MAX;

		if (parse_size(v, max, &x.num) != 0)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be 1..%ld bytes: a whole number or a size like \"256K\", \"4M\" "
				       "(K, M, G = 1024 bytes), got %s",
				       field, max, got);
		break;
	}
	case TB_MX_BITRATE:
	case TB_MX_UDP_BITRATE:
		if (parse_rate(v, x.str, sizeof(x.str), &x.bps) != 0)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be a bitrate like \"100M\", \"1.5G\" or \"0\" (unlimited): digits, "
				       "optionally .digits, optionally K, M, G or T (1000-based), at most 20 "
				       "characters; or a whole number of bits/s, got %s",
				       field, got);
		break;
	case TB_MX_CONGESTION:
		if (!valid_congestion(v))
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be a congestion control name: 1..16 of a-z 0-9 _ (such as \"cubic\" "
				       "or \"bbr\"), got %s",
				       field, got);
		snprintf(x.str, sizeof(x.str), "%s", json_string_value(v));
		break;
	case TB_MX_ZEROCOPY:
		if (!json_is_boolean(v))
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be true or false, got %s", field, got);
		x.num = json_is_true(v);
		break;
	case TB_MX_AFFINITY:
		if (parse_affinity(v, x.str, sizeof(x.str)) != 0)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be \"n\" or \"n,m\" with n and m CPU numbers 0..1023, got %s", field,
				       got);
		break;
	case TB_MX_FAMILY:
		if (!json_is_string(v) ||
		    (strcmp(json_string_value(v), "ipv4") != 0 && strcmp(json_string_value(v), "ipv6") != 0))
			return tb_fail(err, TB_ERR_INVALID, field, "%s must be \"ipv4\" or \"ipv6\", got %s", field,
				       got);
		x.num = strcmp(json_string_value(v), "ipv6") == 0 ? 6 : 4;
		snprintf(x.str, sizeof(x.str), "%s", json_string_value(v));
		break;
	case TB_MX_TOOL:
		if (!json_is_string(v) || tb_tool_parse(json_string_value(v)) < 0)
			return tb_fail(err, TB_ERR_INVALID, field,
				       "%s must be \"iperf3\", \"iperf2\", \"netperf\" or \"netperf-rr\", got %s",
				       field, got);
		x.num = tb_tool_parse(json_string_value(v));
		snprintf(x.str, sizeof(x.str), "%s", json_string_value(v));
		break;
	default: return tb_fail(err, TB_ERR_INTERNAL, field, "no such matrix key");
	}
	*out = x;
	return 0;
}

/* The "unset" value of an axis: what struct tb_iperf_params means by unset. */
void tb_mx_value_unset(enum tb_mx_axis axis, struct tb_mx_value *x)
{
	memset(x, 0, sizeof(*x));
	x->bps = -1;
	if (axis == TB_MX_PARALLEL)
		x->num = 1;
	else if (axis == TB_MX_TOS)
		x->num = -1;
	else if (axis == TB_MX_TOOL)
		snprintf(x->str, sizeof(x->str), "iperf3");
	else if (axis == TB_MX_FAMILY) {
		x->num = 4;
		snprintf(x->str, sizeof(x->str), "ipv4");
	}
}

int tb_mx_value_same(enum tb_mx_axis axis, const struct tb_mx_value *a, const struct tb_mx_value *b)
{
	if (axis == TB_MX_BITRATE || axis == TB_MX_UDP_BITRATE)
		return a->bps == b->bps;
	return a->num == b->num && strcmp(a->str, b->str) == 0;
}
