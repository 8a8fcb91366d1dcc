/* validate.c - the shapes of the values testbedd accepts: see validate.h. */
#include "validate.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int tb_valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32 || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

int tb_valid_user(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32 || !(islower((unsigned char)s[0]) || s[0] == '_' || isupper((unsigned char)s[0])))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

int tb_valid_ipv4(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1;
}

int tb_valid_address(const char *s)
{
	struct in6_addr a6;
	size_t n = strlen(s);

	if (tb_valid_ipv4(s) || inet_pton(AF_INET6, s, &a6) == 1)
		return 1;
	if (n == 0 || n > 253 || s[0] == '-' || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
			return 0;
	return 1;
}

int tb_valid_cidr(const char *s)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	char *end;
	long bits;
	struct in6_addr a6;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(buf))
		return 0;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (slash[1] == '\0' || strspn(slash + 1, "0123456789") != strlen(slash + 1) || strlen(slash + 1) > 3)
		return 0; /* digits only: no sign, no blank */
	errno = 0;
	bits = strtol(slash + 1, &end, 10);
	if (*end != '\0' || errno != 0 || bits < 0)
		return 0;
	if (tb_valid_ipv4(buf))
		return bits <= 32;
	return inet_pton(AF_INET6, buf, &a6) == 1 && bits <= 128;
}

const char *tb_ipv6_unusable(const char *s)
{
	char a[64];
	struct in6_addr x;

	snprintf(a, sizeof(a), "%.*s", (int)strcspn(s, "/"), s);
	if (inet_pton(AF_INET6, a, &x) != 1)
		return "not an IPv6 address";
	if (IN6_IS_ADDR_V4MAPPED(&x) || IN6_IS_ADDR_V4COMPAT(&x))
		return "an IPv4-mapped address: a run would go over IPv4";
	if (IN6_IS_ADDR_LINKLOCAL(&x))
		return "link-local (fe80::/10): it needs an interface zone, which the inventory cannot give";
	if (IN6_IS_ADDR_UNSPECIFIED(&x))
		return "the unspecified address";
	if (IN6_IS_ADDR_MULTICAST(&x))
		return "a multicast address";
	return NULL;
}

int tb_valid_path(const char *s)
{
	if (s[0] != '/' || strlen(s) > 1024)
		return 0;
	for (; *s; s++)
		if (iscntrl((unsigned char)*s))
			return 0;
	return 1;
}

int tb_valid_env(const char *s)
{
	if (!(isupper((unsigned char)s[0]) || s[0] == '_') || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isupper((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int tb_valid_fingerprint(const char *s)
{
	if (strncmp(s, "SHA256:", 7) != 0 || strlen(s) != 7 + 43)
		return 0;
	for (s += 7; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '+' && *s != '/')
			return 0;
	return 1;
}

int tb_valid_mac(const char *s)
{
	if (strlen(s) != 17)
		return 0;
	for (int i = 0; i < 17; i++) {
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return 0;
	}
	return 1;
}

int tb_valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

long tb_text_refused(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len; i++) {
		unsigned b1 = i + 1 < len ? u[i + 1] : 0, b2 = i + 2 < len ? u[i + 2] : 0;

		if (u[i] < 0x20 || u[i] == 0x7f)
			return (long)u[i];
		if (u[i] == 0xc2 && b1 >= 0x80 && b1 <= 0x9f) /* C1: U+0080..U+009F */
			return (long)b1;
		/* U+200B..U+200F (E2 80 8B..8F), U+202A..U+202E (E2 80 AA..AE),
		 * U+2066..U+2069 (E2 81 A6..A9), U+FEFF (EF BB BF) */
		if (u[i] == 0xe2 && b1 == 0x80 && ((b2 >= 0x8b && b2 <= 0x8f) || (b2 >= 0xaa && b2 <= 0xae)))
			return 0x2000L + (long)(b2 - 0x80);
		if (u[i] == 0xe2 && b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9)
			return 0x2040L + (long)(b2 - 0x80);
		if (u[i] == 0xef && b1 == 0xbb && b2 == 0xbf)
			return 0xfeffL;
	}
	return -1;
}

/* A GRUB entry: an index, an id or a title; printable, no control or format characters. */
int tb_valid_entry(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 128 && tb_text_refused(s, n) < 0;
}

int tb_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tb_parse_id(const char *s, int64_t min, int64_t *out)
{
	char *end;
	long long v;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || errno != 0 || v < min)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int tb_json_only(const json_t *body, const char *const allowed[], struct tb_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)body, key, v)
	{
		size_t i;
		char list[256] = "";

		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] != NULL)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
			if (allowed[i + 1] != NULL)
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		}
		return tb_fail(err, TB_ERR_UNKNOWN_FIELD, key, "unknown field \"%.60s\"; allowed: %s", key, list);
	}
	return 0;
}

int tb_json_string(const json_t *body, const char *key, int required, const char **out, struct tb_error *err)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL) {
		if (required)
			return tb_fail(err, TB_ERR_INVALID, key, "%s is required", key);
		return 0;
	}
	if (!json_is_string(v))
		return tb_fail(err, TB_ERR_INVALID, key, "%s must be a string", key);
	*out = json_string_value(v);
	return 0;
}
