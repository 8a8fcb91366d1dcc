/*
 * tbctl_cmd_hosts.c - tbctl hosts, tbctl host NAME, tbctl host trust NAME.
 */
#include "tbctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl_table.h"

/* A growable string for composed cells; on out of memory it stays short. */
struct buf {
	char s[1024];
	size_t len;
};

static void bput(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof b->s - 1 - b->len)
		n = sizeof b->s - 1 - b->len;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* "up ubuntu", "down", "unknown": what answers right now. */
static void answers(const json_t *state, struct buf *b)
{
	const char *reach = tbctl_jstr(state, "reachability");
	const char *os = tbctl_jstr(state, "os");

	if (reach == NULL)
		reach = "unknown";
	if (strcmp(reach, "up") == 0 && os != NULL) {
		bput(b, os);
	} else {
		bput(b, reach);
	}
}

/* "ubuntu=192.168.100.11 freebsd=192.168.100.10", the OS that answers first. */
static void addresses(const json_t *host, const char *up_os, struct buf *b)
{
	json_t *oses = json_object_get(host, "os");
	const char *name;
	json_t *persona;
	int first = 1;

	if (!json_is_object(oses))
		return;
	if (up_os != NULL && json_is_object(json_object_get(oses, up_os))) {
		const char *addr = tbctl_jstr(json_object_get(oses, up_os), "address");

		bput(b, up_os);
		bput(b, "=");
		bput(b, addr ? addr : "?");
		first = 0;
	}
	json_object_foreach(oses, name, persona)
	{
		const char *addr = tbctl_jstr(persona, "address");

		if (up_os != NULL && strcmp(name, up_os) == 0)
			continue;
		if (!first)
			bput(b, " ");
		bput(b, name);
		bput(b, "=");
		bput(b, addr ? addr : "?");
		first = 0;
	}
}

static void last_error(const json_t *state, struct buf *b)
{
	json_t *err = json_object_get(state, "last_error");
	const char *code = tbctl_jstr(err, "code");
	const char *msg = tbctl_jstr(err, "message");

	if (code == NULL && msg == NULL)
		return;
	if (code != NULL)
		bput(b, code);
	if (code != NULL && msg != NULL)
		bput(b, ": ");
	if (msg != NULL)
		bput(b, msg);
}

void tbctl_held_by_text(const json_t *held, char *buf, size_t len)
{
	const char *kind = tbctl_jstr(held, "kind"), *by = tbctl_jstr(held, "by");
	const char *since = tbctl_jstr(held, "since");

	if (len == 0)
		return;
	buf[0] = '\0';
	if (!json_is_object(held))
		return;
	if (kind != NULL)
		snprintf(buf, len, "%s %lld%s%s since %s", kind, tbctl_jint(held, "id", 0), by != NULL ? " by " : "",
			 by != NULL ? by : "", since != NULL ? since : "?");
	else
		snprintf(buf, len, "%s since %s", tbctl_jstr(held, "holder") ? tbctl_jstr(held, "holder") : "?",
			 since != NULL ? since : "?");
}

static int add_host_row(struct tbctl_table *t, const json_t *host)
{
	json_t *state = json_object_get(host, "state");
	struct buf ans = {"", 0}, addr = {"", 0}, err = {"", 0};
	const char *up_os = NULL;
	const char *cells[7];
	char held[256];

	if (json_is_object(state) && tbctl_jstr(state, "reachability") != NULL &&
	    strcmp(tbctl_jstr(state, "reachability"), "up") == 0)
		up_os = tbctl_jstr(state, "os");
	answers(state, &ans);
	addresses(host, up_os, &addr);
	last_error(state, &err);
	cells[0] = tbctl_jstr(host, "name");
	cells[1] = tbctl_jstr(host, "role");
	cells[2] = ans.s;
	cells[3] = tbctl_jstr(state, "since");
	tbctl_held_by_text(json_object_get(state, "held_by"), held, sizeof(held));
	if (json_is_object(json_object_get(host, "reservation"))) { /* POST /reservations */
		const json_t *rv = json_object_get(host, "reservation");
		size_t n = strlen(held);

		snprintf(held + n, sizeof(held) - n, "%sreserved %lld by %s until %s", n > 0 ? "; " : "",
			 tbctl_jint(rv, "id", 0), tbctl_jstr(rv, "owner") ? tbctl_jstr(rv, "owner") : "?",
			 tbctl_jstr(rv, "until") ? tbctl_jstr(rv, "until") : "?");
	}
	cells[4] = held[0] ? held : "-";
	cells[5] = addr.s;
	cells[6] = err.s;
	return tbctl_table_add(t, cells);
}

static const char *const host_header[] = {"NAME", "ROLE", "ANSWERS", "SINCE", "HELD-BY", "ADDRESSES", "LAST-ERROR"};

int tbctl_cmd_hosts(const struct tbctl_ctx *ctx)
{
	json_t *reply = NULL, *hosts, *host;
	struct tbctl_table *t;
	size_t i;
	int rc = tbctl_api_call(ctx, "GET", "/api/v1/hosts", NULL, &reply);

	if (rc != TBCTL_EXIT_OK || ctx->args->json) {
		json_decref(reply);
		return rc;
	}
	hosts = json_object_get(reply, "hosts");
	if (!json_is_array(hosts)) {
		fprintf(stderr, "tbctl: testbedd's reply has no \"hosts\" array; is "
				"tbctl older than testbedd? Try --json\n");
		json_decref(reply);
		return TBCTL_EXIT_SERVER;
	}
	t = tbctl_table_new(7, host_header);
	if (t == NULL)
		goto nomem;
	json_array_foreach(hosts, i, host)
	{
		if (add_host_row(t, host) != 0)
			goto nomem;
	}
	tbctl_table_print(t, stdout);
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_OK;
nomem:
	fprintf(stderr, "tbctl: out of memory\n");
	tbctl_table_free(t);
	json_decref(reply);
	return TBCTL_EXIT_SERVER;
}

/* Fetch /api/v1/hosts/NAME; *host borrows from *reply. */
static int get_host(const struct tbctl_ctx *ctx, const char *name, int print, json_t **reply, json_t **host)
{
	char *esc = tbctl_http_escape(name);
	char *path;
	size_t len;
	int rc;

	*reply = NULL;
	*host = NULL;
	if (esc == NULL)
		goto nomem;
	len = strlen("/api/v1/hosts/") + strlen(esc) + 1;
	path = malloc(len);
	if (path == NULL) {
		free(esc);
		goto nomem;
	}
	snprintf(path, len, "/api/v1/hosts/%s", esc);
	rc = print ? tbctl_api_call(ctx, "GET", path, NULL, reply)
		   : tbctl_api_call_quiet(ctx, "GET", path, NULL, reply);
	free(path);
	free(esc);
	if (rc != TBCTL_EXIT_OK)
		return rc;
	*host = json_object_get(*reply, "host");
	if (!json_is_object(*host)) {
		fprintf(stderr, "tbctl: testbedd's reply has no \"host\" object; "
				"try --json\n");
		json_decref(*reply);
		*reply = NULL;
		return TBCTL_EXIT_SERVER;
	}
	return TBCTL_EXIT_OK;
nomem:
	fprintf(stderr, "tbctl: out of memory\n");
	return TBCTL_EXIT_SERVER;
}

static void kv(const char *key, const char *value)
{
	printf("%-12s ", key);
	tbctl_print_safe(stdout, value != NULL && *value ? value : "-");
	fputc('\n', stdout);
}

/* One line for a power or console object: its members as key=value. */
static void object_line(const json_t *obj, struct buf *b)
{
	const char *key;
	json_t *v;
	int first = 1;

	json_object_foreach((json_t *)obj, key, v)
	{
		char num[32];

		/* Members that do not apply (null, false) say nothing to a person. */
		if (json_is_null(v) || json_is_false(v))
			continue;
		if (!first)
			bput(b, " ");
		first = 0;
		bput(b, key);
		bput(b, "=");
		if (json_is_string(v)) {
			bput(b, json_string_value(v));
		} else if (json_is_integer(v)) {
			snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
			bput(b, num);
		} else {
			char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			bput(b, s ? s : "?");
			free(s);
		}
	}
}

/* The BMC's view: "on (ipmi, checked 2026-...), MISMATCH: the BMC says on, but no OS answers ssh". */
static void bmc_line(const json_t *bmc, struct buf *b)
{
	const json_t *err = json_object_get(bmc, "error"), *mm = json_object_get(bmc, "mismatch");

	if (!json_is_object(bmc))
		return;
	bput(b, tbctl_jstr(bmc, "power") ? tbctl_jstr(bmc, "power") : "unknown");
	bput(b, " (");
	bput(b, tbctl_jstr(bmc, "method") ? tbctl_jstr(bmc, "method") : "?");
	if (tbctl_jstr(bmc, "checked_at") != NULL) {
		bput(b, ", checked ");
		bput(b, tbctl_jstr(bmc, "checked_at"));
	}
	bput(b, ")");
	if (json_is_object(err)) {
		bput(b, ", error ");
		bput(b, tbctl_jstr(err, "code") ? tbctl_jstr(err, "code") : "?");
		bput(b, ": ");
		bput(b, tbctl_jstr(err, "message") ? tbctl_jstr(err, "message") : "");
	}
	if (json_is_object(mm)) {
		bput(b, ", MISMATCH since ");
		bput(b, tbctl_jstr(mm, "since") ? tbctl_jstr(mm, "since") : "?");
		bput(b, ": ");
		bput(b, tbctl_jstr(mm, "message") ? tbctl_jstr(mm, "message") : "");
	}
}

/* Idle power-off: "after 60 min unused; in 59 min 3 s (at ...)" or "... ; held" / "; off". */
static void idle_line(const json_t *host, struct buf *b)
{
	const json_t *idle = json_object_get(host, "idle_poweroff");
	char num[96];
	long long left;

	if (tbctl_jint(host, "idle_poweroff_min", -1) < 0)
		return;
	snprintf(num, sizeof num, "after %lld min unused", tbctl_jint(host, "idle_poweroff_min", 0));
	bput(b, num);
	if (!json_is_object(idle))
		return;
	if (strcmp(tbctl_jstr(idle, "state") ? tbctl_jstr(idle, "state") : "", "counting") == 0 &&
	    (left = tbctl_jint(idle, "seconds_left", -1)) >= 0) {
		snprintf(num, sizeof num, "; in %lld min %lld s", left / 60, left % 60);
		bput(b, num);
		if (tbctl_jstr(idle, "off_at") != NULL) {
			bput(b, " (at ");
			bput(b, tbctl_jstr(idle, "off_at"));
			bput(b, ")");
		}
	} else if (tbctl_jstr(idle, "state") != NULL) {
		bput(b, "; ");
		bput(b, strcmp(tbctl_jstr(idle, "state"), "held") == 0 ? "held: nothing fires" : "off");
	}
}

/* The wake schedule: "30 7 * * mon-fri; next 2026-12-04T07:30:00Z; last ...: power-on action 4". */
static void wake_line(const json_t *host, struct buf *b)
{
	const json_t *wake = json_object_get(host, "wake");

	if (!json_is_object(wake))
		return;
	bput(b, tbctl_jstr(wake, "schedule") ? tbctl_jstr(wake, "schedule") : "?");
	bput(b, "; next ");
	bput(b, tbctl_jstr(wake, "next_at") ? tbctl_jstr(wake, "next_at") : "none in 5 years");
	if (tbctl_jstr(wake, "last_at") != NULL) {
		bput(b, "; last ");
		bput(b, tbctl_jstr(wake, "last_at"));
		bput(b, ": ");
		bput(b, tbctl_jstr(wake, "last") ? tbctl_jstr(wake, "last") : "");
	}
}

/* "; GRUB's saved default (grubenv) freebsd, not the inventory's: boots
 * planned from it" when grubenv names another OS than the inventory. */
static void saved_default(const json_t *sd, struct buf *b)
{
	if (!json_is_true(json_object_get(sd, "mismatch")))
		return;
	bput(b, "; GRUB's saved default (grubenv saved_entry=");
	bput(b, tbctl_jstr(sd, "entry") ? tbctl_jstr(sd, "entry") : "?");
	bput(b, ") is ");
	bput(b, tbctl_jstr(sd, "os") ? tbctl_jstr(sd, "os") : "?");
	bput(b, ", not the inventory's: boots are planned from it");
}

static void print_host(const json_t *host)
{
	json_t *state = json_object_get(host, "state");
	json_t *power = json_object_get(host, "power");
	json_t *console = json_object_get(host, "console");
	json_t *boot = json_object_get(host, "boot");
	json_t *oses = json_object_get(host, "os");
	json_t *links = json_object_get(host, "links");
	json_t *presented = json_object_get(state, "presented_host_key");
	json_t *v;
	const char *key;
	size_t i;
	struct buf b = {"", 0};
	char num[32];

	kv("name", tbctl_jstr(host, "name"));
	kv("role", tbctl_jstr(host, "role"));
	kv("mac", tbctl_jstr(host, "mac"));
	answers(state, &b);
	kv("answers", b.s);
	kv("since", tbctl_jstr(state, "since"));
	kv("checked at", tbctl_jstr(state, "checked_at"));
	{
		char held[256];

		tbctl_held_by_text(json_object_get(state, "held_by"), held, sizeof(held));
		kv("held by", held);
	}
	b.len = 0;
	b.s[0] = '\0';
	last_error(state, &b);
	kv("last error", b.s);
	bmc_line(json_object_get(host, "bmc"), &b);
	if (b.len > 0)
		kv("bmc", b.s);
	b.len = 0;
	b.s[0] = '\0';
	idle_line(host, &b);
	kv("idle off", b.len > 0 ? b.s : NULL);
	b.len = 0;
	b.s[0] = '\0';
	wake_line(host, &b);
	kv("wakes", b.len > 0 ? b.s : NULL);
	json_array_foreach(power, i, v)
	{
		b.len = 0;
		b.s[0] = '\0';
		object_line(v, &b);
		kv(i == 0 ? "power" : "", b.s);
	}
	b.len = 0;
	b.s[0] = '\0';
	if (json_is_object(console))
		object_line(console, &b);
	kv("console", b.s);
	if (json_is_object(boot)) {
		json_t *entries = json_object_get(boot, "entries");

		b.len = 0;
		b.s[0] = '\0';
		bput(&b, tbctl_jstr(boot, "loader") ? tbctl_jstr(boot, "loader") : "?");
		bput(&b, ", default ");
		bput(&b, tbctl_jstr(boot, "default") ? tbctl_jstr(boot, "default") : "-");
		bput(&b, ", entries");
		json_object_foreach(entries, key, v)
		{
			bput(&b, " ");
			bput(&b, key);
			bput(&b, "=");
			bput(&b, json_is_string(v) ? json_string_value(v) : "?");
		}
		saved_default(json_object_get(boot, "saved_default"), &b);
		kv("boot", b.s);
	} else {
		kv("boot", NULL);
	}
	if (json_is_object(oses) && json_object_size(oses) > 0) {
		static const char *const hdr[] = {"OS", "ADDRESS", "PORT", "USER", "HOST-KEY"};
		struct tbctl_table *t = tbctl_table_new(5, hdr);

		printf("\n");
		json_object_foreach(oses, key, v)
		{
			const char *cells[5];

			snprintf(num, sizeof num, "%lld", tbctl_jint(v, "port", 22));
			cells[0] = key;
			cells[1] = tbctl_jstr(v, "address");
			cells[2] = num;
			cells[3] = tbctl_jstr(v, "user");
			cells[4] = tbctl_jstr(v, "host_key");
			if (t != NULL && tbctl_table_add(t, cells) != 0) {
				tbctl_table_free(t);
				t = NULL;
			}
		}
		if (t != NULL)
			tbctl_table_print(t, stdout);
		tbctl_table_free(t);
	}
	if (json_is_object(links) && json_object_size(links) > 0) {
		static const char *const hdr[] = {"LINK", "ADDRESS", "IFNAME"};
		struct tbctl_table *t = tbctl_table_new(3, hdr);

		printf("\n");
		json_object_foreach(links, key, v)
		{
			json_t *ifn = json_object_get(v, "ifname"), *n;
			const char *os;
			const char *cells[3];

			b.len = 0;
			b.s[0] = '\0';
			json_object_foreach(ifn, os, n)
			{
				if (b.len > 0)
					bput(&b, " ");
				bput(&b, os);
				bput(&b, "=");
				bput(&b, json_is_string(n) ? json_string_value(n) : "?");
			}
			cells[0] = key;
			cells[1] = tbctl_jstr(v, "address");
			cells[2] = b.s;
			if (t != NULL && tbctl_table_add(t, cells) != 0) {
				tbctl_table_free(t);
				t = NULL;
			}
		}
		if (t != NULL)
			tbctl_table_print(t, stdout);
		tbctl_table_free(t);
	}
	if (json_is_object(presented)) {
		printf("\nOS persona ");
		tbctl_print_safe(stdout, tbctl_jstr(presented, "os") ? tbctl_jstr(presented, "os") : "?");
		printf(" presents an unaccepted host key ");
		tbctl_print_safe(stdout,
				 tbctl_jstr(presented, "fingerprint") ? tbctl_jstr(presented, "fingerprint") : "?");
		printf(".\nTo review and accept it: tbctl host trust ");
		tbctl_print_safe(stdout, tbctl_jstr(host, "name") ? tbctl_jstr(host, "name") : "NAME");
		printf(" --os ");
		tbctl_print_safe(stdout, tbctl_jstr(presented, "os") ? tbctl_jstr(presented, "os") : "OS");
		printf("\n");
	}
}

int tbctl_cmd_host(const struct tbctl_ctx *ctx)
{
	json_t *reply, *host;
	int rc = get_host(ctx, ctx->args->pos[1], 1, &reply, &host);

	if (rc == TBCTL_EXIT_OK && !ctx->args->json)
		print_host(host);
	json_decref(reply);
	return rc;
}

/* Without --fingerprint: show what the persona presents and ask to rerun. */
static int show_presented(const struct tbctl_ctx *ctx, const char *name)
{
	const struct tbctl_args *a = ctx->args;
	json_t *reply, *host, *presented;
	const char *os, *fp, *expected = NULL;
	int rc = get_host(ctx, name, 0, &reply, &host);

	if (rc != TBCTL_EXIT_OK)
		return rc;
	presented = json_object_get(json_object_get(host, "state"), "presented_host_key");
	os = tbctl_jstr(presented, "os");
	fp = tbctl_jstr(presented, "fingerprint");
	if (a->os != NULL && !json_is_object(json_object_get(json_object_get(host, "os"), a->os))) {
		fprintf(stderr,
			"tbctl: host %s has no OS persona \"%s\"; 'tbctl host %s' "
			"lists its personas\n",
			name, a->os, name);
		rc = TBCTL_EXIT_USAGE;
	} else if (os == NULL || fp == NULL || (a->os != NULL && strcmp(os, a->os) != 0)) {
		fprintf(stderr,
			"tbctl: %s%s%s presents no host key waiting to be "
			"accepted; nothing to trust\n",
			name, a->os ? " " : "", a->os ? a->os : "");
		rc = TBCTL_EXIT_USAGE;
	} else {
		expected = tbctl_jstr(json_object_get(json_object_get(host, "os"), os), "host_key");
		printf("host:         %s\nos:           %s\npresents:     ", name, os);
		tbctl_print_safe(stdout, fp);
		printf("\nexpected:     ");
		tbctl_print_safe(stdout, expected ? expected : "(none pinned yet)");
		printf("\n");
		fprintf(stderr,
			"tbctl: compare the fingerprint with the machine's own "
			"(on its console: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), "
			"then accept it with:\n  tbctl host trust %s --os %s --fingerprint ",
			name, os);
		tbctl_print_safe(stderr, fp);
		fputc('\n', stderr);
		rc = TBCTL_EXIT_USAGE;
	}
	if (a->json)
		tbctl_print_json(reply);
	json_decref(reply);
	return rc;
}

int tbctl_cmd_host_trust(const struct tbctl_ctx *ctx)
{
	const struct tbctl_args *a = ctx->args;
	const char *name = a->pos[2];
	json_t *body, *reply = NULL;
	char *esc, *path;
	size_t len;
	int rc;

	if (a->fingerprint == NULL)
		return show_presented(ctx, name);
	if (a->os == NULL) {
		fprintf(stderr, "tbctl: host trust needs --os OS with --fingerprint: the "
				"OS persona whose key you accept\n");
		return TBCTL_EXIT_USAGE;
	}
	if (strncmp(a->fingerprint, "SHA256:", 7) != 0) {
		fprintf(stderr,
			"tbctl: --fingerprint must look like SHA256:... (as "
			"'tbctl host trust %s --os %s' shows it), got \"%s\"\n",
			name, a->os, a->fingerprint);
		return TBCTL_EXIT_USAGE;
	}
	esc = tbctl_http_escape(name);
	len = esc ? strlen("/api/v1/hosts//trust") + strlen(esc) + 1 : 0;
	path = esc ? malloc(len) : NULL;
	body = json_pack("{s:s, s:s}", "os", a->os, "fingerprint", a->fingerprint);
	if (path == NULL || body == NULL) {
		fprintf(stderr, "tbctl: out of memory\n");
		free(esc);
		free(path);
		json_decref(body);
		return TBCTL_EXIT_SERVER;
	}
	snprintf(path, len, "/api/v1/hosts/%s/trust", esc);
	rc = tbctl_api_call(ctx, "POST", path, body, &reply);
	if (rc == TBCTL_EXIT_OK && !a->json) {
		printf("%s %s: host key ", name, a->os);
		tbctl_print_safe(stdout, a->fingerprint);
		printf(" accepted\n");
	}
	json_decref(reply);
	json_decref(body);
	free(path);
	free(esc);
	return rc;
}
