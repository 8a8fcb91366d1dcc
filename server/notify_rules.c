/* notify_rules.c - notification rules: parse and show them, which triggers
 * an event fires, and the message a rule sends.  See notify.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"
#include "notify_internal.h"
#include "store_notify.h"
#include "timeutil.h"
#include "validate.h"

/* The order is the bits' (and the API's enum). */
const char *const nf_trigger_names[] = {
	"matrix.ended",  /* matrix.state succeeded */
	"matrix.failed", /* matrix.state failed */
	"matrix.canceled",
	"matrix.interrupted", /* testbedd stopped under it */
	"run.failed",         /* run.state failed */
	"gate.failed",        /* matrix.gate with verdict "fail" (a schedule's CI gate, schedule.c) */
	"host.down",          /* host.state up -> down, no action or matrix holding it */
	"host.up",            /* down -> up, the same */
	"bmc.mismatch",       /* host.bmc: the BMC says on, the OS does not answer */
	"action.failed",      /* a power or boot action failed */
	"idle.poweroff",      /* an idle power-off went through */
	"wake.failed",        /* a scheduled wake failed */
	"schedule.failed",    /* a schedule could not start its matrix (schedule.c) */
	NULL,
};

unsigned nf_trigger_bit(const char *name)
{
	for (unsigned i = 0; nf_trigger_names[i] != NULL; i++)
		if (strcmp(nf_trigger_names[i], name) == 0)
			return 1u << i;
	return 0;
}

const char *nf_first_trigger(unsigned bits)
{
	for (unsigned i = 0; nf_trigger_names[i] != NULL; i++)
		if (bits & (1u << i))
			return nf_trigger_names[i];
	return "test";
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int is(const char *s, const char *want)
{
	return s != NULL && strcmp(s, want) == 0;
}

static unsigned classify_host(const char *host, const json_t *data, const struct nf_context *ctx)
{
	const char *now = jstr(data, "reachability"), *before;
	const json_t *by = json_object_get(data, "held_by");
	int held;

	if (host == NULL || now == NULL || (!is(now, "up") && !is(now, "down")))
		return 0;
	before = ctx->swap_reach(ctx->cls, host, now);
	if (!((is(before, "up") && is(now, "down")) || (is(before, "down") && is(now, "up"))))
		return 0;
	/* who held it when the event was published; an event without held_by
	 * (older) is asked about now */
	held = by != NULL ? !json_is_null(by) : ctx->held(ctx->cls, host);
	if (held)
		return 0;
	return nf_trigger_bit(is(now, "down") ? "host.down" : "host.up");
}

unsigned nf_classify(const json_t *event, const struct nf_context *ctx)
{
	const char *type = jstr(event, "type"), *host = jstr(event, "host");
	const json_t *data = json_object_get(event, "data");
	const char *state = jstr(data, "state"), *actor = jstr(data, "actor");
	char name[32];

	if (type == NULL)
		return 0;
	if (is(type, "matrix.state")) {
		if (is(state, "succeeded"))
			return nf_trigger_bit("matrix.ended");
		snprintf(name, sizeof(name), "matrix.%s", state != NULL ? state : "");
		return is(state, "failed") || is(state, "canceled") || is(state, "interrupted") ? nf_trigger_bit(name)
												: 0;
	}
	if (is(type, "run.state"))
		return is(state, "failed") ? nf_trigger_bit("run.failed") : 0;
	if (is(type, "matrix.gate"))
		/* schedule.c publishes {"verdict": "pass"|"fail"|"no_baseline"|"error", ...} */
		return is(jstr(data, "verdict"), "fail") || is(state, "failed") ||
				       json_is_false(json_object_get(data, "passed"))
			       ? nf_trigger_bit("gate.failed")
			       : 0;
	if (is(type, "schedule.failed"))
		return nf_trigger_bit("schedule.failed");
	if (is(type, "host.state"))
		return classify_host(host, data, ctx);
	if (is(type, "host.bmc"))
		return is(jstr(data, "change"), "mismatch") && json_is_object(json_object_get(data, "mismatch"))
			       ? nf_trigger_bit("bmc.mismatch")
			       : 0;
	if (is(type, "action.state")) {
		if (is(state, "failed"))
			return nf_trigger_bit("action.failed") |
			       (is(actor, "schedule") ? nf_trigger_bit("wake.failed") : 0);
		if (is(state, "succeeded") && is(actor, "idle"))
			return nf_trigger_bit("idle.poweroff");
	}
	return 0;
}

/* 1 when list (an array, or absent: anything) holds the event's value. */
static int in_filter(const json_t *list, const json_t *value)
{
	size_t i;
	json_t *v;

	if (json_array_size(list) == 0 || value == NULL || json_is_null(value))
		return 1;
	json_array_foreach(list, i, v) if (json_equal(v, value)) return 1;
	return 0;
}

int nf_rule_wants(const struct nf_rule *r, const json_t *event, unsigned bits)
{
	return r->enabled && (r->triggers & bits) != 0 &&
	       in_filter(json_object_get(r->spec, "hosts"), json_object_get(event, "host")) &&
	       in_filter(json_object_get(r->spec, "matrices"), json_object_get(event, "matrix"));
}

/* The first words of an error an event carries, or NULL. */
static const char *event_error(const json_t *data)
{
	const json_t *e = json_object_get(data, "error");

	if (jstr(data, "error_message") != NULL)
		return jstr(data, "error_message");
	if (json_is_object(e) && jstr(e, "message") != NULL)
		return jstr(e, "message");
	if (json_is_object(json_object_get(data, "mismatch")))
		return jstr(json_object_get(data, "mismatch"), "message");
	return NULL;
}

/* Title and text of a message, in words a phone shows. */
static void words(const char *trigger, const json_t *event, char *title, size_t tlen, char *text, size_t xlen)
{
	const char *host = jstr(event, "host");
	const json_t *data = json_object_get(event, "data");
	json_int_t matrix = json_integer_value(json_object_get(event, "matrix"));
	const char *err = event_error(data), *kind = jstr(data, "kind");

	if (is(trigger, "gate.failed"))
		snprintf(title, tlen, "testbedd: matrix %lld failed its CI gate (%zu cells dropped)", (long long)matrix,
			 json_array_size(json_object_get(data, "dropped")));
	else if (strncmp(trigger, "matrix.", 7) == 0)
		snprintf(title, tlen, "testbedd: matrix %lld %s", (long long)matrix,
			 is(trigger, "matrix.ended") ? "ended" : trigger + 7);
	else if (is(trigger, "run.failed"))
		snprintf(title, tlen, "testbedd: a run of matrix %lld failed", (long long)matrix);
	else if (is(trigger, "host.down") || is(trigger, "host.up"))
		snprintf(title, tlen, "testbedd: %s is %s", host != NULL ? host : "?", trigger + 5);
	else if (is(trigger, "bmc.mismatch"))
		snprintf(title, tlen, "testbedd: %s hangs (its BMC says on, it does not answer)", host ? host : "?");
	else if (is(trigger, "action.failed") || is(trigger, "wake.failed"))
		snprintf(title, tlen, "testbedd: %s %s failed on %s", is(trigger, "wake.failed") ? "scheduled" : "",
			 kind != NULL ? kind : "action", host != NULL ? host : "?");
	else if (is(trigger, "schedule.failed"))
		snprintf(title, tlen, "testbedd: the schedule of spec %s did not start its matrix",
			 jstr(data, "spec") != NULL ? jstr(data, "spec") : "?");
	else if (is(trigger, "idle.poweroff"))
		snprintf(title, tlen, "testbedd: %s powered off (idle)", host != NULL ? host : "?");
	else
		snprintf(title, tlen, "testbedd: %s", trigger);
	snprintf(text, xlen, "%s%s%s", title + 10, err != NULL ? ": " : "", err != NULL ? err : "");
}

/* The page of a message under base (testbedd's public URL): the run page
 * for a failed run, the matrix page for a matrix, gate or schedule trigger,
 * the hosts page for a host's; the front page for a test message. */
static void page(const char *base, const char *trigger, const json_t *event, char *url, size_t len)
{
	const json_t *data = json_object_get(event, "data");
	json_int_t matrix = json_integer_value(json_object_get(event, "matrix"));
	json_int_t run = json_integer_value(json_object_get(data, "run"));

	if (event == NULL)
		snprintf(url, len, "%s/", base);
	else if (is(trigger, "run.failed") && run > 0)
		snprintf(url, len, "%s/#/runs/%lld", base, (long long)run);
	else if (strncmp(trigger, "matrix.", 7) == 0 || is(trigger, "gate.failed") || is(trigger, "run.failed") ||
		 is(trigger, "schedule.failed")) {
		if (matrix > 0)
			snprintf(url, len, "%s/#/matrices/%lld", base, (long long)matrix);
		else
			snprintf(url, len, "%s/#/matrices", base);
	} else
		snprintf(url, len, "%s/#/hosts", base);
}

char *nf_message(const struct nf_rule *r, unsigned bits, const json_t *event, const char *actor, const char *base)
{
	const char *trigger = nf_first_trigger(bits & r->triggers);
	char title[256], text[1024], at[TB_TIME_MAX], url[1100];
	json_t *m;
	char *s;

	tb_time_format(tb_now(), at);
	if (event != NULL) {
		words(trigger, event, title, sizeof(title), text, sizeof(text));
	} else {
		snprintf(title, sizeof(title), "testbedd: test notification");
		snprintf(text, sizeof(text), "A test message of rule %lld (%s), sent by %s.", (long long)r->id, r->name,
			 actor != NULL ? actor : "an admin");
	}
	if (base != NULL) {
		size_t n = strlen(text);

		page(base, trigger, event, url, sizeof(url));
		snprintf(text + n, sizeof(text) - n, "\n%s", url);
	}
	m = json_pack("{s:i, s:s, s:s, s:s, s:O?, s:O?, s:{s:I, s:s}, s:s, s:b, s:O?}", "version", 1, "trigger",
		      trigger, "title", title, "text", text, "host", json_object_get(event, "host"), "matrix",
		      json_object_get(event, "matrix"), "rule", "id", (json_int_t)r->id, "name", r->name, "at", at,
		      "test", event == NULL, "event", event);
	if (m == NULL)
		return NULL;
	if (base != NULL)
		json_object_set_new(m, "url", json_string(url));
	s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	return s;
}

/* ---- parsing a rule ---- */

static int parse_triggers(const json_t *v, json_t **out, struct tb_error *err)
{
	size_t i;
	json_t *t;
	unsigned seen = 0;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return tb_fail(err, TB_ERR_INVALID, "triggers", "triggers must be a non-empty list of trigger names");
	json_array_foreach(v, i, t)
	{
		unsigned b = json_is_string(t) ? nf_trigger_bit(json_string_value(t)) : 0;
		char names[400] = "";

		if (b == 0) {
			for (unsigned k = 0; nf_trigger_names[k] != NULL; k++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 k > 0 ? ", " : "", nf_trigger_names[k]);
			return tb_fail(err, TB_ERR_INVALID, "triggers", "unknown trigger \"%.40s\": one of %s",
				       json_is_string(t) ? json_string_value(t) : "(not a string)", names);
		}
		seen |= b;
	}
	*out = json_array();
	for (unsigned k = 0; nf_trigger_names[k] != NULL; k++)
		if (seen & (1u << k))
			json_array_append_new(*out, json_string(nf_trigger_names[k]));
	return 0;
}

static int parse_filter(const json_t *v, const char *field, json_t **out, struct tb_error *err)
{
	size_t i;
	json_t *x;

	*out = json_array();
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > 64)
		return tb_fail(err, TB_ERR_INVALID, field, "%s must be a list (at most 64)", field);
	json_array_foreach(v, i, x)
	{
		int ok = strcmp(field, "hosts") == 0 ? json_is_string(x) && tb_valid_name(json_string_value(x))
						     : json_is_integer(x) && json_integer_value(x) > 0;
		if (!ok)
			return tb_fail(err, TB_ERR_INVALID, field, "%s must hold %s", field,
				       strcmp(field, "hosts") == 0 ? "machine names" : "matrix ids");
		json_array_append(*out, x);
	}
	return 0;
}

int tb_notify_rule_parse(const json_t *body, const char *secrets_dir, json_t **spec, const char **name,
			 struct tb_error *err)
{
	static const char *const fields[] = {"name", "enabled", "triggers", "hosts", "matrices", "sink", NULL};
	json_t *triggers = NULL, *hosts = NULL, *matrices = NULL, *sink = NULL, *en = json_object_get(body, "enabled");
	int rc;

	*spec = NULL;
	if ((rc = tb_json_only(body, fields, err)) != 0 || (rc = tb_json_string(body, "name", 1, name, err)) != 0)
		return rc;
	if (strlen(*name) == 0 || strlen(*name) > 63 || tb_text_refused(*name, strlen(*name)) >= 0)
		return tb_fail(err, TB_ERR_INVALID, "name", "name must be 1..63 printable characters");
	if (en != NULL && !json_is_boolean(en))
		return tb_fail(err, TB_ERR_INVALID, "enabled", "enabled must be true or false");
	if ((rc = parse_triggers(json_object_get(body, "triggers"), &triggers, err)) != 0 ||
	    (rc = parse_filter(json_object_get(body, "hosts"), "hosts", &hosts, err)) != 0 ||
	    (rc = parse_filter(json_object_get(body, "matrices"), "matrices", &matrices, err)) != 0 ||
	    (rc = nf_sink_parse(json_object_get(body, "sink"), secrets_dir, &sink, err)) != 0) {
		json_decref(triggers);
		json_decref(hosts);
		json_decref(matrices);
		return rc;
	}
	*spec = json_pack("{s:b, s:o, s:o, s:o, s:o}", "enabled", en == NULL || json_is_true(en), "triggers", triggers,
			  "hosts", hosts, "matrices", matrices, "sink", sink);
	return *spec != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

json_t *tb_notify_rule_json(const struct tb_notify_rule_row *r)
{
	json_t *spec = json_loads(r->spec, 0, NULL), *j;

	if (spec == NULL)
		return NULL;
	j = json_pack("{s:I, s:s, s:O, s:O, s:O, s:O, s:O, s:b, s:s?, s:I, s:o, s:o}", "id", (json_int_t)r->id, "name",
		      r->name, "enabled", json_object_get(spec, "enabled"), "triggers",
		      json_object_get(spec, "triggers"), "hosts", json_object_get(spec, "hosts"), "matrices",
		      json_object_get(spec, "matrices"), "sink", json_object_get(spec, "sink"), "failing", r->failing,
		      "last_error", r->last_error, "pending", (json_int_t)r->pending, "created_at",
		      tb_time_json(r->created_at), "updated_at", tb_time_json(r->updated_at));
	json_decref(spec);
	return j;
}
