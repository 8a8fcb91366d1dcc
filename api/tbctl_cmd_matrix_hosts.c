/* tbctl_cmd_matrix_hosts.c - tbctl matrix hosts ID [--diff OTHER]: what each
 * host was during a matrix, and what differs from another matrix's hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_matrix.h"
#include "tbctl_table.h"

/* A JSON value as short text: strings bare, the rest compact JSON. */
static char *value_text(const json_t *v)
{
	if (v == NULL)
		return strdup("(none)");
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static const char *path_str(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int hosts_table(const json_t *hosts)
{
	static const char *const header[] = {"HOST",   "OS",       "RELEASE", "CPU", "NIC",
					     "DRIVER", "FIRMWARE", "MTU",     "CC",  "BUFFERS"};
	struct tbctl_table *t = tbctl_table_new(10, header);
	const json_t *h;
	size_t i;

	if (t == NULL)
		return mx_nomem();
	json_array_foreach(hosts, i, h)
	{
		const json_t *m = json_object_get(h, "metadata"), *nic = json_object_get(m, "nic");
		const json_t *tcp = json_object_get(m, "tcp");
		char cpu[160], mtu[24], buf[96];
		const char *cells[10];

		snprintf(cpu, sizeof(cpu), "%lld x %s", tbctl_jint(json_object_get(m, "cpu"), "count", 0),
			 mx_str_or(json_object_get(m, "cpu"), "model", "?"));
		if (json_is_integer(json_object_get(nic, "mtu")))
			snprintf(mtu, sizeof(mtu), "%lld", tbctl_jint(nic, "mtu", 0));
		else
			snprintf(mtu, sizeof(mtu), "-");
		if (json_is_array(json_object_get(tcp, "rmem"))) /* Linux: tcp_rmem max / rmem_max */
			snprintf(buf, sizeof(buf), "tcp_rmem %lld, rmem_max %lld",
				 json_integer_value(json_array_get(json_object_get(tcp, "rmem"), 2)),
				 tbctl_jint(tcp, "rmem_max", 0));
		else if (json_is_integer(json_object_get(tcp, "maxsockbuf")))
			snprintf(buf, sizeof(buf), "maxsockbuf %lld, recvbuf_max %lld",
				 tbctl_jint(tcp, "maxsockbuf", 0), tbctl_jint(tcp, "recvbuf_max", 0));
		else
			snprintf(buf, sizeof(buf), "-");
		cells[0] = tbctl_jstr(h, "host");
		cells[1] = tbctl_jstr(h, "os");
		cells[2] = mx_str_or(m, "release", NULL);
		cells[3] = cpu;
		cells[4] = mx_str_or(h, "interface", NULL);
		cells[5] = path_str(m, "nic", "driver");
		cells[6] = path_str(m, "nic", "firmware");
		cells[7] = mtu;
		cells[8] = path_str(m, "tcp", "congestion_control");
		cells[9] = buf;
		if (tbctl_table_add(t, cells) != 0) {
			tbctl_table_free(t);
			return mx_nomem();
		}
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

static int diff_table(const json_t *d)
{
	static const char *const header[] = {"HOST", "OS", "WHAT", "THIS MATRIX", "OTHER"};
	struct tbctl_table *t = tbctl_table_new(5, header);
	const json_t *h, *x;
	size_t i, k, n = 0;
	int rc = TBCTL_EXIT_OK;

	if (t == NULL)
		return mx_nomem();
	json_array_foreach(json_object_get(d, "hosts"), i, h)
	{
		const char *in = tbctl_jstr(h, "in");

		if (strcmp(in, "both") != 0) {
			const char *cells[5] = {tbctl_jstr(h, "host"), tbctl_jstr(h, "os"), "(the host in this OS)",
						strcmp(in, "matrix") == 0 ? "yes" : "no",
						strcmp(in, "other") == 0 ? "yes" : "no"};

			rc |= tbctl_table_add(t, cells);
			n++;
			continue;
		}
		json_array_foreach(json_object_get(h, "differences"), k, x)
		{
			char *a = value_text(json_object_get(x, "matrix")),
			     *b = value_text(json_object_get(x, "other"));
			const char *cells[5] = {tbctl_jstr(h, "host"), tbctl_jstr(h, "os"), tbctl_jstr(x, "path"), a,
						b};

			rc |= a == NULL || b == NULL || tbctl_table_add(t, cells) != 0;
			free(a);
			free(b);
			n++;
		}
	}
	if (rc != 0) {
		tbctl_table_free(t);
		return mx_nomem();
	}
	if (n > 0)
		tbctl_table_print(t, stdout);
	printf("matrix %lld against matrix %lld: %zu difference%s\n", tbctl_jint(d, "matrix", 0),
	       tbctl_jint(d, "other", 0), n, n == 1 ? "" : "s");
	tbctl_table_free(t);
	return TBCTL_EXIT_OK;
}

int tbctl_cmd_matrix_hosts(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL;
	long long id, other = 0;
	char tail[64];
	char *path;
	int rc;

	if (mx_parse_id(ctx->args->pos[2], &id) != 0 ||
	    (ctx->args->diff != NULL && mx_parse_id(ctx->args->diff, &other) != 0))
		return TBCTL_EXIT_USAGE;
	if (ctx->args->diff != NULL)
		snprintf(tail, sizeof(tail), "/hosts/diff?other=%lld", other);
	else
		snprintf(tail, sizeof(tail), "/hosts");
	if ((path = mx_matrix_path(id, tail)) == NULL)
		return mx_nomem();
	rc = tbctl_api_call(ctx, "GET", path, NULL, &reply);
	free(path);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	if (ctx->args->json)
		rc = TBCTL_EXIT_OK; /* printed by tbctl_api_call */
	else if (ctx->args->diff != NULL)
		rc = diff_table(json_object_get(reply, "diff"));
	else
		rc = hosts_table(json_object_get(reply, "hosts"));
	json_decref(reply);
	return rc;
}
