/*
 * traffic_drivers.c - the table of traffic tools (traffic.h): one line per
 * driver, and the iperf3, iperf2 and netperf drivers, each a thin layer over
 * its pure module (iperf.h, iperf2.h, netperf.h).
 */
#include "traffic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iperf2.h"
#include "netperf.h"

const struct tb_traffic_driver *tb_traffic_driver_for(int tool)
{
	switch (tool) {
	case TB_TOOL_IPERF3: return &tb_traffic_iperf3;
	case TB_TOOL_IPERF2: return &tb_traffic_iperf2;
	case TB_TOOL_NETPERF: return &tb_traffic_netperf;
	case TB_TOOL_NETPERF_RR: return &tb_traffic_netperf_rr;
	default: return NULL;
	}
}

const char *tb_tool_name(int tool)
{
	const struct tb_traffic_driver *d = tb_traffic_driver_for(tool);

	return d != NULL ? d->name : NULL;
}

int tb_tool_parse(const char *name)
{
	for (int i = 0; name != NULL && i < TB_TOOL_COUNT; i++)
		if (strcmp(name, tb_traffic_driver_for(i)->name) == 0)
			return i;
	return -1;
}

/* One side's parser, whichever tool: exactly one of the pointers is set,
 * or none (iperf3 -J: the whole output is parsed at finish; netperf: its
 * client's omni line at finish, its server's output not at all). */
struct tb_traffic_parser {
	struct tb_iperf_stream *stream;
	struct tb_iperf_text *text;
	struct tb_iperf2_text *text2;
	enum { NP_NONE, NP_CLIENT, NP_CLIENT_RR, NP_SERVER } netperf;
};

static struct tb_traffic_parser *parser_alloc(void)
{
	return calloc(1, sizeof(struct tb_traffic_parser));
}

/* ---- iperf3 ---- */

static bool i3_available(const struct tb_tool_caps *caps, char *why, size_t len)
{
	if (!caps->has_iperf3)
		snprintf(why, len, "no iperf3 3.x there: install iperf3");
	return caps->has_iperf3;
}

static const char *i3_version(const struct tb_tool_caps *caps)
{
	return caps->iperf3.version;
}

static int i3_server_argv(const struct tb_tool_caps *caps, const struct tb_iperf_params *p, unsigned int port,
			  int idle_timeout_s, struct tb_argv *out, struct tb_error *err)
{
	(void)p;
	return tb_iperf_server_argv(&caps->iperf3, port, idle_timeout_s, out, err);
}

static int i3_client_argv(const struct tb_tool_caps *caps, const char *addr, unsigned int port,
			  const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	return tb_iperf_client_argv(&caps->iperf3, addr, port, p, out, err);
}

static struct tb_traffic_parser *i3_parser_new(const struct tb_tool_caps *caps, const struct tb_iperf_params *p,
					       bool client, tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_traffic_parser *ps = parser_alloc();

	if (ps == NULL)
		return NULL;
	if (!client)
		ps->text = tb_iperf_text_new(p->parallel, p->dir == TB_IPERF_BIDIR, on_interval, cls);
	else if (caps->iperf3.json_stream)
		ps->stream = tb_iperf_stream_new(on_interval, cls);
	else
		return ps; /* -J: read whole at finish */
	if (ps->text == NULL && ps->stream == NULL) {
		free(ps);
		return NULL;
	}
	return ps;
}

static void parser_feed(struct tb_traffic_parser *ps, const char *data, size_t len)
{
	if (ps == NULL)
		return;
	if (ps->stream != NULL)
		tb_iperf_stream_feed(ps->stream, data, len);
	else if (ps->text != NULL)
		tb_iperf_text_feed(ps->text, data, len);
	else if (ps->text2 != NULL)
		tb_iperf2_text_feed(ps->text2, data, len);
}

/* netserver has nothing to tell: the client reports both ends. */
static bool parser_done(struct tb_traffic_parser *ps)
{
	return ps != NULL && ((ps->text2 != NULL && tb_iperf2_text_done(ps->text2)) || ps->netperf == NP_SERVER);
}

/* *result NULL (and 0) when a -J client printed nothing. */
static int parser_finish(struct tb_traffic_parser *ps, const char *all, size_t len, json_t **result,
			 struct tb_error *err)
{
	int rc = 0;

	*result = NULL;
	if (ps == NULL)
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	if (ps->stream != NULL)
		rc = tb_iperf_stream_finish(ps->stream, result, err);
	else if (ps->text != NULL)
		rc = tb_iperf_text_finish(ps->text, result, err);
	else if (ps->text2 != NULL)
		rc = tb_iperf2_text_finish(ps->text2, result, err);
	else if (ps->netperf == NP_CLIENT)
		rc = tb_netperf_parse(all, len, result, err);
	else if (ps->netperf == NP_CLIENT_RR)
		rc = tb_netperf_rr_parse(all, len, result, err);
	else if (ps->netperf == NP_SERVER)
		rc = (*result = json_pack("{s:[], s:n, s:n, s:i, s:n, s:n}", "intervals", "end", "error", "connected",
					  0, "cookie", "version")) != NULL
			     ? 0
			     : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	else if (len > 0)
		rc = tb_iperf_parse_json(all, len, result, err);
	free(ps);
	return rc;
}

static const char *i3_class_name(enum tb_iperf_errclass c)
{
	switch (c) {
	case TB_IPERF_ERR_BUSY: return "busy";
	case TB_IPERF_ERR_REFUSED: return "refused";
	case TB_IPERF_ERR_INTERRUPT: return "interrupted";
	case TB_IPERF_ERR_TIMEOUT: return "timeout";
	case TB_IPERF_ERR_OTHER: return "iperf_error";
	default: return NULL;
	}
}

static const char *i3_error_class(const json_t *result, char *msg, size_t len, bool *retry)
{
	const char *etext = json_string_value(json_object_get(result, "error"));
	enum tb_iperf_errclass ec = tb_iperf_classify(etext);

	*retry = ec == TB_IPERF_ERR_BUSY;
	if (ec != TB_IPERF_ERR_NONE)
		snprintf(msg, len, "iperf3: %s", etext);
	return i3_class_name(ec);
}

const struct tb_traffic_driver tb_traffic_iperf3 = {
	.name = "iperf3",
	.binary = "iperf3",
	.server_stays = false,
	.merge_ends = false,
	.available = i3_available,
	.version = i3_version,
	.server_argv = i3_server_argv,
	.client_argv = i3_client_argv,
	.params_args = tb_iperf_params_args,
	/* written right after listen(2), on 3.12 and 3.21 alike (strace); nothing polled */
	.listen_line = "Server listening on ",
	.parser_new = i3_parser_new,
	.parser_feed = parser_feed,
	.parser_done = parser_done,
	.parser_finish = parser_finish,
	.error_class = i3_error_class,
};

/* ---- iperf2 ---- */

static bool i2_available(const struct tb_tool_caps *caps, char *why, size_t len)
{
	if (caps->iperf2[0] == '\0')
		snprintf(why, len, "no iperf 2 there (`iperf -v`): install the package iperf");
	return caps->iperf2[0] != '\0';
}

static const char *i2_version(const struct tb_tool_caps *caps)
{
	return caps->iperf2;
}

static int i2_server_argv(const struct tb_tool_caps *caps, const struct tb_iperf_params *p, unsigned int port,
			  int idle_timeout_s, struct tb_argv *out, struct tb_error *err)
{
	(void)caps;
	(void)idle_timeout_s;
	return tb_iperf2_server_argv(p, port, out, err);
}

static int i2_client_argv(const struct tb_tool_caps *caps, const char *addr, unsigned int port,
			  const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	(void)caps;
	return tb_iperf2_client_argv(addr, port, p, out, err);
}

/* iperf2's UDP server has no control connection: its UDP socket is bound. */
static void i2_listen_check(bool bsd, const struct tb_iperf_params *p, unsigned int port, char *buf, size_t len)
{
	bool udp = p->proto == TB_IPERF_UDP;

	if (bsd)
		snprintf(buf, len, "sockstat -46 -l -P %s -p %u | grep -q iperf", udp ? "udp" : "tcp", port);
	else
		snprintf(buf, len, "ss -Hl%sn 'sport = :%u' | grep -q .", udp ? "u" : "t", port);
}

static struct tb_traffic_parser *i2_parser_new(const struct tb_tool_caps *caps, const struct tb_iperf_params *p,
					       bool client, tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_traffic_parser *ps = parser_alloc();

	(void)caps;
	(void)client;
	if (ps != NULL && (ps->text2 = tb_iperf2_text_new(p->parallel, p->interval_s, on_interval, cls)) == NULL) {
		free(ps);
		ps = NULL;
	}
	return ps;
}

/* iperf2 exits 0 on a refused connection: its output is the outcome. */
static const char *i2_error_class(const json_t *result, char *msg, size_t len, bool *retry)
{
	const char *etext = json_string_value(json_object_get(result, "error"));
	const json_t *end = json_object_get(result, "end");

	*retry = false;
	if (etext != NULL) {
		snprintf(msg, len, "iperf2: %s", etext);
		if (strstr(etext, "refused") != NULL)
			return "refused";
		if (strstr(etext, "timed out") != NULL)
			return "timeout";
		return "iperf_error";
	}
	if (!json_is_object(end) || json_object_size(end) == 0) {
		snprintf(msg, len, "iperf2 printed no summary line (%d connected)",
			 (int)json_integer_value(json_object_get(result, "connected")));
		return "iperf_error";
	}
	return NULL;
}

const struct tb_traffic_driver tb_traffic_iperf2 = {
	.name = "iperf2",
	.binary = "iperf",
	.server_stays = true,
	.merge_ends = true,
	.available = i2_available,
	.version = i2_version,
	.server_argv = i2_server_argv,
	.client_argv = i2_client_argv,
	.params_args = tb_iperf2_params_args,
	.listen_check = i2_listen_check,
	.parser_new = i2_parser_new,
	.parser_feed = parser_feed,
	.parser_done = parser_done,
	.parser_finish = parser_finish,
	.error_class = i2_error_class,
};

/* ---- netperf ---- */

static bool np_available(const struct tb_tool_caps *caps, char *why, size_t len)
{
	if (caps->netperf[0] == '\0')
		snprintf(why, len,
			 "no netperf there (`netperf -V`): install netperf and netserver (not packaged in "
			 "Debian 12: from source, or your OS's package)");
	return caps->netperf[0] != '\0';
}

static const char *np_version(const struct tb_tool_caps *caps)
{
	return caps->netperf;
}

static int np_server_argv(const struct tb_tool_caps *caps, const struct tb_iperf_params *p, unsigned int port,
			  int idle_timeout_s, struct tb_argv *out, struct tb_error *err)
{
	(void)caps;
	(void)idle_timeout_s;
	return tb_netperf_server_argv(p, port, out, err);
}

static int np_client_argv(const struct tb_tool_caps *caps, const char *addr, unsigned int port,
			  const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	(void)caps;
	return tb_netperf_client_argv(addr, port, p, out, err);
}

/* netserver's control connection is TCP whatever the test's protocol. */
static void np_listen_check(bool bsd, const struct tb_iperf_params *p, unsigned int port, char *buf, size_t len)
{
	(void)p;
	if (bsd)
		snprintf(buf, len, "sockstat -46 -l -P tcp -p %u | grep -q netserver", port);
	else
		snprintf(buf, len, "ss -Hltn 'sport = :%u' | grep -q .", port);
}

static struct tb_traffic_parser *np_parser_new(const struct tb_tool_caps *caps, const struct tb_iperf_params *p,
					       bool client, tb_iperf_interval_fn on_interval, void *cls)
{
	struct tb_traffic_parser *ps = parser_alloc();

	(void)caps;
	(void)on_interval; /* no live intervals: netperf's need --enable-demo */
	(void)cls;
	if (ps != NULL)
		ps->netperf = !client ? NP_SERVER : p->tool == TB_TOOL_NETPERF_RR ? NP_CLIENT_RR : NP_CLIENT;
	return ps;
}

/* netperf says what went wrong on stderr and prints no values line. */
static const char *np_error_class(const json_t *result, char *msg, size_t len, bool *retry)
{
	const char *etext = json_string_value(json_object_get(result, "error"));
	const json_t *end = json_object_get(result, "end");

	*retry = false;
	if (json_is_object(end))
		return NULL;
	if (etext != NULL)
		snprintf(msg, len, "netperf: %s", etext);
	else
		snprintf(msg, len, "netperf printed no result line (its stderr says why)");
	if (etext != NULL && strstr(etext, "netserver listening") != NULL)
		return "refused";
	return "iperf_error";
}

const struct tb_traffic_driver tb_traffic_netperf = {
	.name = "netperf",
	.binary = "netperf",
	.server_stays = true,
	.merge_ends = false,
	.available = np_available,
	.version = np_version,
	.server_argv = np_server_argv,
	.client_argv = np_client_argv,
	.params_args = tb_netperf_params_args,
	.listen_check = np_listen_check,
	.parser_new = np_parser_new,
	.parser_feed = parser_feed,
	.parser_done = parser_done,
	.parser_finish = parser_finish,
	.error_class = np_error_class,
};

static int nprr_client_argv(const struct tb_tool_caps *caps, const char *addr, unsigned int port,
			    const struct tb_iperf_params *p, struct tb_argv *out, struct tb_error *err)
{
	(void)caps;
	return tb_netperf_rr_client_argv(addr, port, p, out, err);
}

/* netperf's request/response test: its server, checks and errors are netperf's. */
const struct tb_traffic_driver tb_traffic_netperf_rr = {
	.name = "netperf-rr",
	.binary = "netperf",
	.server_stays = true,
	.merge_ends = false,
	.available = np_available,
	.version = np_version,
	.server_argv = np_server_argv,
	.client_argv = nprr_client_argv,
	.params_args = tb_netperf_rr_params_args,
	.listen_check = np_listen_check,
	.parser_new = np_parser_new,
	.parser_feed = parser_feed,
	.parser_done = parser_done,
	.parser_finish = parser_finish,
	.error_class = np_error_class,
};
