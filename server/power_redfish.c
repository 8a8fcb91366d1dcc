/*
 * power_redfish.c - the "redfish" power driver: DMTF Redfish over HTTPS
 * (libcurl, in-process: the password is on no command line).
 *
 *   GET  /redfish/v1/                     -> Systems.@odata.id
 *   GET  /redfish/v1/Systems              -> Members[0] (unless system: is given)
 *   GET  /redfish/v1/Systems/ID           -> PowerState, ETag, Actions."#ComputerSystem.Reset"
 *   POST <target> {"ResetType":"ForceOff"}
 *
 * The ResetType for each action is the first of a short preference list
 * that the system allows (ResetType@Redfish.AllowableValues; when the BMC
 * does not list them, the first preference is sent): on On|ForceOn, off
 * ForceOff, soft GracefulShutdown, reset ForceRestart, cycle PowerCycle,
 * else ForceOff then On, else ForceRestart.  BMCs answer 409 or 400 for
 * "already in that state": the power state is read again and the call
 * succeeds when it is the one wanted; a cycle or reset refused because the
 * system is off turns it on.
 *
 * auth: basic sends the user and password with each request; auth: session
 * POSTs them once to /redfish/v1/SessionService/Sessions, uses the
 * X-Auth-Token it gets and DELETEs the session at the end of the call.
 * TLS certificates are verified (against ca_file when given) unless the
 * inventory says insecure: true.  Only https, no redirects.
 *
 * Every request is a step: what = "METHOD URL BODY" with the password
 * replaced by ***, output = "HTTP STATUS" and the BMC's message; the token
 * is never shown.  One call is bounded by call->timeout_ms in total and
 * stops within about 100 ms of *call->cancel.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "log.h"
#include "power.h"
#include "wipe.h"
#include "timeutil.h"

#define RF_TIMEOUT_MS 15000L
#define RF_MAX_BODY (1024u * 1024u)
#define RF_URL_MAX 1024
#define RF_STEP_MAX 400
#define RF_OFF_WAIT_MS 10000L /* cycle as ForceOff + On: until PowerState says Off */

struct rf {
	const struct tb_power_call *call;
	CURL *h;
	int64_t deadline;
	char base[RF_URL_MAX]; /* "https://bmc:8443", no trailing slash */
	char password[256];
	char token[512];          /* X-Auth-Token of our session, "" when none */
	char session[RF_URL_MAX]; /* its URL, to DELETE at the end */
	char system[RF_URL_MAX];  /* path of the ComputerSystem */
	char creds[400];          /* which credentials, for messages */
};

/* One reply, as far as it got. */
struct reply {
	long status; /* 0 when none */
	char *body;
	size_t len;
	char etag[256];
	char location[RF_URL_MAX];
	char token[512];
	int truncated;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init_once(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static void reply_free(struct reply *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
	struct reply *r = cls;
	size_t len = size * n, keep = len;
	char *nb;

	if (r->len + keep > RF_MAX_BODY) {
		keep = RF_MAX_BODY - r->len;
		r->truncated = 1;
	}
	if (keep == 0)
		return len;
	if ((nb = realloc(r->body, r->len + keep + 1)) == NULL)
		return 0; /* curl fails the transfer: CURLE_WRITE_ERROR */
	memcpy(nb + r->len, data, keep);
	r->body = nb;
	r->len += keep;
	r->body[r->len] = '\0';
	return len;
}

/* Copy the value of header "Name: value" into out when line is that header. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name);

	if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return;
	line += nl + 1;
	len -= nl + 1;
	while (len > 0 && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n' || line[len - 1] == ' '))
		len--;
	if (len < outsz) {
		memcpy(out, line, len);
		out[len] = '\0';
	}
}

static size_t on_header(char *data, size_t size, size_t n, void *cls)
{
	struct reply *r = cls;
	size_t len = size * n;

	header_value(data, len, "ETag", r->etag, sizeof(r->etag));
	header_value(data, len, "Location", r->location, sizeof(r->location));
	header_value(data, len, "X-Auth-Token", r->token, sizeof(r->token));
	return len;
}

static int on_progress(void *cls, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	const volatile int *cancel = cls;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return cancel != NULL && *cancel != 0;
}

/* The BMC's own words from a Redfish error body, or "". */
static void bmc_message(const struct reply *r, char *out, size_t outsz)
{
	json_t *j = r->body != NULL ? json_loads(r->body, 0, NULL) : NULL;
	json_t *e = json_object_get(j, "error");
	const char *msg = json_string_value(
		json_object_get(json_array_get(json_object_get(e, "@Message.ExtendedInfo"), 0), "Message"));

	if (msg == NULL)
		msg = json_string_value(json_object_get(e, "message"));
	snprintf(out, outsz, "%s", msg != NULL ? msg : "");
	json_decref(j);
}

/* A link from the BMC as a URL of the same service: a path ("/redfish/v1/...")
 * or an absolute URL that starts with base.  0 or TB_ERR_REMOTE. */
static int link_url(struct rf *rf, const char *link, char *out, size_t outsz, struct tb_error *err)
{
	size_t bl = strlen(rf->base);

	if (link != NULL && link[0] == '/' && link[1] != '/')
		snprintf(out, outsz, "%s%s", rf->base, link);
	else if (link != NULL && strncmp(link, rf->base, bl) == 0 && link[bl] == '/')
		snprintf(out, outsz, "%s", link);
	else
		return tb_fail(err, TB_ERR_REMOTE, "power",
			       "%s: the BMC at %s gave a link to \"%.100s\", not "
			       "a path on itself",
			       rf->call->m->name, rf->base, link != NULL ? link : "(none)");
	if (strpbrk(out + bl, " \t\r\n\"<>\\^`{|}") != NULL)
		return tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC gave a malformed link \"%.100s\"",
			       rf->call->m->name, link);
	return 0;
}

/*
 * One request.  url is absolute; body (JSON text or NULL) is sent as is and
 * shown as shown_body (the same with secrets replaced, NULL = body).
 * Records a step.  Returns 0 when the BMC answered (any status: read
 * r->status), else the transport error (TB_ERR_UNREACHABLE, TB_ERR_TIMEOUT,
 * TB_ERR_CANCELED, TB_ERR_CONFIG for TLS trust, TB_ERR_REMOTE), and
 * TB_ERR_UNAUTHORIZED for 401/403 and TB_ERR_UNREACHABLE for 503 (busy).
 */
/* The request's headers (the token or basic credentials, If-Match) and
 * options on rf->h: HTTPS only, no redirect, the time left, the CA, the
 * reply into r, the cancel flag.  *hdrs the caller frees (after wiping). */
static void set_request(struct rf *rf, const char *method, const char *url, const char *body, const char *if_match,
			int64_t left, struct reply *r, char *ebuf, struct curl_slist **hdrs)
{
	const struct tb_power_call *call = rf->call;
	const struct tb_power_method *pm = call->pm;
	char line[RF_URL_MAX + 600];

	curl_easy_reset(rf->h);
	*hdrs = curl_slist_append(*hdrs, "Accept: application/json");
	*hdrs = curl_slist_append(*hdrs, "OData-Version: 4.0");
	if (body != NULL)
		*hdrs = curl_slist_append(*hdrs, "Content-Type: application/json");
	if (if_match != NULL) {
		snprintf(line, sizeof(line), "If-Match: %s", if_match);
		*hdrs = curl_slist_append(*hdrs, line);
	}
	if (rf->token[0] != '\0') {
		snprintf(line, sizeof(line), "X-Auth-Token: %s", rf->token);
		*hdrs = curl_slist_append(*hdrs, line);
		tb_wipe(line, sizeof(line));
	} else if (pm->auth == TB_REDFISH_BASIC) {
		curl_easy_setopt(rf->h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(rf->h, CURLOPT_USERNAME, pm->user);
		curl_easy_setopt(rf->h, CURLOPT_PASSWORD, rf->password);
	}
	curl_easy_setopt(rf->h, CURLOPT_URL, url);
	curl_easy_setopt(rf->h, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(rf->h, CURLOPT_HTTPGET, 1L);
	else if (strcmp(method, "DELETE") == 0)
		curl_easy_setopt(rf->h, CURLOPT_NOBODY, 0L);
	if (body != NULL) {
		curl_easy_setopt(rf->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(rf->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(rf->h, CURLOPT_HTTPHEADER, *hdrs);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(rf->h, CURLOPT_PROTOCOLS_STR, "https");
#else
	curl_easy_setopt(rf->h, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
	curl_easy_setopt(rf->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(rf->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(rf->h, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(rf->h, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
	curl_easy_setopt(rf->h, CURLOPT_SSL_VERIFYPEER, pm->insecure ? 0L : 1L);
	curl_easy_setopt(rf->h, CURLOPT_SSL_VERIFYHOST, pm->insecure ? 0L : 2L);
	if (pm->ca_file != NULL)
		curl_easy_setopt(rf->h, CURLOPT_CAINFO, pm->ca_file);
	curl_easy_setopt(rf->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(rf->h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(rf->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(rf->h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(rf->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(rf->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(rf->h, CURLOPT_XFERINFODATA, (void *)call->cancel);
	curl_easy_setopt(rf->h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(rf->h, CURLOPT_USERAGENT, "testbedd/" TB_VERSION);
}

/* What curl and the BMC said, as an error (0: the request went through and
 * the BMC did not refuse it).  output: the step's output line. */
static int request_outcome(struct rf *rf, const char *purpose, const char *method, const char *url, CURLcode cc,
			   const struct reply *r, const char *output, struct tb_error *err)
{
	const struct tb_power_call *call = rf->call;
	const struct tb_power_method *pm = call->pm;

	switch (cc) {
	case CURLE_OK: break;
	case CURLE_OPERATION_TIMEDOUT:
		return tb_fail(err, TB_ERR_TIMEOUT, "power",
			       "%s: the BMC at %s did not answer %s %s within %ld ms; "
			       "check that it is powered and reachable from testbedd",
			       call->m->name, rf->base, method, url,
			       call->timeout_ms > 0 ? call->timeout_ms : RF_TIMEOUT_MS);
	case CURLE_ABORTED_BY_CALLBACK:
		return tb_fail(err, TB_ERR_CANCELED, NULL, "%s: Redfish %s stopped on request", call->m->name, purpose);
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		return tb_fail(err, TB_ERR_UNREACHABLE, "power",
			       "%s: the BMC at %s does not answer (%s); check "
			       "that it is powered and reachable from testbedd",
			       call->m->name, rf->base, output);
	case CURLE_PEER_FAILED_VERIFICATION:
#if LIBCURL_VERSION_NUM < 0x073e00
	case CURLE_SSL_CACERT:
#endif
		return tb_fail(err, TB_ERR_CONFIG, "ca_file",
			       "%s: the BMC at %s has a TLS certificate testbedd does not trust (%s); give its CA "
			       "as ca_file%s",
			       call->m->name, rf->base, output,
			       pm->ca_file != NULL ? " (the one given did not verify it)" : ", or insecure: true");
	case CURLE_SSL_CACERT_BADFILE:
		return tb_fail(err, TB_ERR_CONFIG, "ca_file", "%s: cannot use ca_file %s: %s", call->m->name,
			       pm->ca_file != NULL ? pm->ca_file : "(system)", output);
	default:
		return tb_fail(err, TB_ERR_REMOTE, "power", "%s: %s %s failed: %s", call->m->name, method, url, output);
	}
	if (r->status == 401 || r->status == 403)
		return tb_fail(err, TB_ERR_UNAUTHORIZED, "power",
			       "the BMC at %s refused %s (HTTP %ld): check "
			       "the BMC credentials of %s (%s)%s",
			       rf->base, r->status == 401 ? "the login" : "the request", r->status, call->m->name,
			       rf->creds, r->status == 403 ? " and that the user may control power" : "");
	/* 503: the BMC is busy (iDRAC and others while a job runs): transient,
	 * so that power.c retries */
	if (r->status == 503)
		return tb_fail(err, TB_ERR_UNREACHABLE, "power", "%s: the BMC at %s is busy (%s); try again later",
			       call->m->name, rf->base, output);
	return 0;
}

/* One request to the BMC: recorded as a step (the method, URL and body as
 * sent, shown_body in place of a body that holds a secret), its reply in r
 * (kept on success and on 401/403, freed otherwise). */
static int request(struct rf *rf, const char *purpose, const char *method, const char *url, const char *body,
		   const char *shown_body, const char *if_match, struct reply *r, struct tb_error *err)
{
	const struct tb_power_call *call = rf->call;
	struct curl_slist *hdrs = NULL;
	char line[RF_URL_MAX + 600], what[300], output[RF_STEP_MAX + 1], msg[300], ebuf[CURL_ERROR_SIZE] = "";
	int64_t left = rf->deadline - tb_monotonic_ms();
	CURLcode cc;
	int rc;

	memset(r, 0, sizeof(*r));
	if (left <= 0)
		return tb_fail(err, TB_ERR_TIMEOUT, "power", "%s: the BMC at %s did not finish within %ld ms",
			       call->m->name, rf->base, call->timeout_ms > 0 ? call->timeout_ms : RF_TIMEOUT_MS);
	set_request(rf, method, url, body, if_match, left, r, ebuf, &hdrs);
	cc = curl_easy_perform(rf->h);
	curl_easy_setopt(rf->h, CURLOPT_PASSWORD, "");
	curl_easy_setopt(rf->h, CURLOPT_ERRORBUFFER, NULL); /* ebuf is about to go */
	for (struct curl_slist *l = hdrs; l != NULL; l = l->next)
		if (strncmp(l->data, "X-Auth-Token:", 13) == 0)
			tb_wipe(l->data, strlen(l->data));
	curl_slist_free_all(hdrs);
	if (cc == CURLE_OK)
		curl_easy_getinfo(rf->h, CURLINFO_RESPONSE_CODE, &r->status);

	snprintf(line, sizeof(line), "%s %s%s%s", method, url, body != NULL ? " " : "",
		 body != NULL ? (shown_body != NULL ? shown_body : body) : "");
	snprintf(what, sizeof(what), "Redfish %s for %s", purpose, call->m->name);
	if (cc == CURLE_OK) {
		bmc_message(r, msg, sizeof(msg));
		snprintf(output, sizeof(output), "HTTP %ld%s%s", r->status, msg[0] != '\0' ? ": " : "", msg);
	} else {
		snprintf(output, sizeof(output), "%s", ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc));
	}
	if (call->step != NULL)
		call->step(call->step_cls, what, line, -1, output);
	tb_debug("power", "%s: %s: %s", call->m->name, line, output);
	rc = request_outcome(rf, purpose, method, url, cc, r, output, err);
	if (rc != 0 && rc != TB_ERR_UNAUTHORIZED)
		reply_free(r);
	return rc;
}

/* GET url and parse it; *out a new reference. */
static int get_json(struct rf *rf, const char *purpose, const char *url, json_t **out, char *etag, size_t etagsz,
		    struct tb_error *err)
{
	struct reply r;
	int rc;

	*out = NULL;
	if ((rc = request(rf, purpose, "GET", url, NULL, NULL, NULL, &r, err)) != 0) {
		reply_free(&r);
		return rc;
	}
	if (r.status != 200) {
		char msg[300];

		bmc_message(&r, msg, sizeof(msg));
		rc = tb_fail(err, r.status == 404 ? TB_ERR_CONFIG : TB_ERR_REMOTE, "power",
			     "%s: the BMC answered GET %s with HTTP %ld%s%s", rf->call->m->name, url, r.status,
			     msg[0] != '\0' ? ": " : "", msg);
	} else if (r.truncated || (*out = json_loads(r.body != NULL ? r.body : "", 0, NULL)) == NULL ||
		   !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC's reply to GET %s is not a JSON object",
			     rf->call->m->name, url);
	}
	if (rc == 0 && etag != NULL) {
		const char *oe = json_string_value(json_object_get(*out, "@odata.etag"));

		snprintf(etag, etagsz, "%s", r.etag[0] != '\0' ? r.etag : (oe != NULL ? oe : ""));
	}
	reply_free(&r);
	return rc;
}

/*
 * rf->session: where to DELETE the new session.  The Location header, as a
 * path or as an absolute URL (some BMCs name themselves differently from
 * url:, so only its path is kept), else the reply's @odata.id; "" when
 * neither (the session then times out on the BMC).
 */
static void session_url(struct rf *rf, const struct reply *r)
{
	const char *loc = r->location, *p;
	json_t *j = NULL;

	rf->session[0] = '\0';
	if (loc[0] == '\0' && r->body != NULL && (j = json_loads(r->body, 0, NULL)) != NULL)
		loc = json_string_value(json_object_get(j, "@odata.id")) != NULL
			      ? json_string_value(json_object_get(j, "@odata.id"))
			      : "";
	if (strncmp(loc, "https://", 8) == 0 && (p = strchr(loc + 8, '/')) != NULL)
		loc = p;
	if (loc[0] == '\0' || link_url(rf, loc, rf->session, sizeof(rf->session), NULL) != 0)
		rf->session[0] = '\0';
	json_decref(j);
}

static int open_session(struct rf *rf, struct tb_error *err)
{
	const struct tb_power_method *pm = rf->call->pm;
	char url[RF_URL_MAX];
	json_t *b = json_pack("{s:s, s:s}", "UserName", pm->user, "Password", rf->password);
	json_t *shown = json_pack("{s:s, s:s}", "UserName", pm->user, "Password", "***");
	char *body = b != NULL ? json_dumps(b, JSON_COMPACT) : NULL;
	char *sbody = shown != NULL ? json_dumps(shown, JSON_COMPACT) : NULL;
	struct reply r = {0};
	int rc;

	json_decref(b);
	json_decref(shown);
	snprintf(url, sizeof(url), "%s/redfish/v1/SessionService/Sessions", rf->base);
	if (body == NULL || sbody == NULL)
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	else
		rc = request(rf, "log in", "POST", url, body, sbody, NULL, &r, err);
	if (rc == 0 && r.status != 200 && r.status != 201) {
		char msg[300];

		bmc_message(&r, msg, sizeof(msg));
		rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC at %s refused a session (HTTP %ld)%s%s",
			     rf->call->m->name, rf->base, r.status, msg[0] != '\0' ? ": " : "", msg);
	} else if (rc == 0 && r.token[0] == '\0') {
		rc = tb_fail(err, TB_ERR_REMOTE, "power",
			     "%s: the BMC at %s created a session but sent no "
			     "X-Auth-Token",
			     rf->call->m->name, rf->base);
	} else if (rc == 0) {
		snprintf(rf->token, sizeof(rf->token), "%s", r.token);
		session_url(rf, &r);
	}
	if (body != NULL)
		tb_wipe(body, strlen(body));
	free(body);
	free(sbody);
	tb_wipe(r.token, sizeof(r.token));
	reply_free(&r);
	return rc;
}

static void close_session(struct rf *rf)
{
	struct reply r;
	struct tb_error e;

	if (rf->token[0] == '\0')
		return;
	if (rf->session[0] != '\0') {
		/* a little time of its own: a session left behind counts against the BMC's few */
		if (rf->deadline - tb_monotonic_ms() < 2000)
			rf->deadline = tb_monotonic_ms() + 2000;
		if (request(rf, "log out", "DELETE", rf->session, NULL, NULL, NULL, &r, &e) != 0)
			tb_warn("power", "%s: could not delete the Redfish session: %s", rf->call->m->name, e.message);
		reply_free(&r);
	}
	tb_wipe(rf->token, sizeof(rf->token));
}

/* rf->system: the configured system or the first member of Systems. */
static int find_system(struct rf *rf, struct tb_error *err)
{
	const struct tb_power_method *pm = rf->call->pm;
	char url[RF_URL_MAX];
	json_t *root = NULL, *coll = NULL;
	int rc;

	if (pm->system != NULL) {
		snprintf(rf->system, sizeof(rf->system), "%s/redfish/v1/Systems/%s", rf->base, pm->system);
		return 0;
	}
	snprintf(url, sizeof(url), "%s/redfish/v1/", rf->base);
	if ((rc = get_json(rf, "service root", url, &root, NULL, 0, err)) == 0 &&
	    (rc = link_url(rf, json_string_value(json_object_get(json_object_get(root, "Systems"), "@odata.id")), url,
			   sizeof(url), err)) == 0 &&
	    (rc = get_json(rf, "systems", url, &coll, NULL, 0, err)) == 0) {
		json_t *first = json_array_get(json_object_get(coll, "Members"), 0);

		if (first == NULL)
			rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC at %s lists no ComputerSystem in %s",
				     rf->call->m->name, rf->base, url);
		else
			rc = link_url(rf, json_string_value(json_object_get(first, "@odata.id")), rf->system,
				      sizeof(rf->system), err);
	}
	json_decref(root);
	json_decref(coll);
	return rc;
}

/* "On" -> 1, "Off" -> 0 (PoweringOn / PoweringOff as where they go); -1 else. */
static int power_state(json_t *sys)
{
	const char *s = json_string_value(json_object_get(sys, "PowerState"));

	if (s == NULL)
		return -1;
	if (strcmp(s, "On") == 0 || strcmp(s, "PoweringOn") == 0)
		return 1;
	if (strcmp(s, "Off") == 0 || strcmp(s, "PoweringOff") == 0)
		return 0;
	return -1;
}

static int read_state(struct rf *rf, int *on, struct tb_error *err)
{
	json_t *sys;
	int rc;

	if ((rc = get_json(rf, "power state", rf->system, &sys, NULL, 0, err)) != 0)
		return rc;
	*on = power_state(sys);
	if (*on < 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC's PowerState is \"%s\", not On or Off",
			     rf->call->m->name,
			     json_string_value(json_object_get(sys, "PowerState")) != NULL
				     ? json_string_value(json_object_get(sys, "PowerState"))
				     : "(missing)");
	json_decref(sys);
	return rc;
}

static int allowed(json_t *list, const char *v)
{
	size_t i;
	json_t *x;

	if (!json_is_array(list))
		return 1; /* not listed: let the BMC decide */
	json_array_foreach(list, i, x) if (json_is_string(x) && strcmp(json_string_value(x), v) == 0) return 1;
	return 0;
}

/* "On, ForceOff" of a BMC's list into out (sz >= 8); a list that does not
 * fit ends with "..." (len never points past out: it stops at sz - 1). */
static void list_text(json_t *list, char *out, size_t sz)
{
	size_t i, len = 0;
	json_t *x;

	out[0] = '\0';
	json_array_foreach(list, i, x)
	{
		int w;

		if (!json_is_string(x))
			continue;
		w = snprintf(out + len, sz - len, "%s%s", len > 0 ? ", " : "", json_string_value(x));
		if (w < 0 || (size_t)w >= sz - len) {
			snprintf(out + sz - 4, 4, "...");
			break;
		}
		len += (size_t)w;
	}
	if (out[0] == '\0')
		snprintf(out, sz, "none");
}

/*
 * POST one ResetType.  A 409/400 ("already in that state") counts as done
 * when the state is then want (0/1).  want -1 (a restart): such a refusal
 * of a system that is off sets *refused_off (the caller turns it on)
 * instead of failing.
 */
static int reset(struct rf *rf, const char *target, const char *type, int want, int *refused_off, struct tb_error *err)
{
	json_t *b = json_pack("{s:s}", "ResetType", type);
	char *body = b != NULL ? json_dumps(b, JSON_COMPACT) : NULL;
	char purpose[64], msg[300];
	struct reply r;
	int rc, on;

	json_decref(b);
	if (body == NULL)
		return tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
	snprintf(purpose, sizeof(purpose), "reset %s", type);
	rc = request(rf, purpose, "POST", target, body, NULL, NULL, &r, err);
	free(body);
	if (rc != 0) {
		reply_free(&r);
		return rc;
	}
	bmc_message(&r, msg, sizeof(msg));
	if (r.status >= 200 && r.status < 300) {
		rc = 0;
	} else if ((r.status == 409 || r.status == 400) && want < 0 && refused_off != NULL &&
		   (rc = read_state(rf, &on, err)) == 0 && !on) {
		*refused_off = 1;
	} else if (rc == 0 && (r.status == 409 || r.status == 400) && want >= 0) {
		if ((rc = read_state(rf, &on, err)) == 0 && on != want)
			rc = tb_fail(err, TB_ERR_REMOTE, "power",
				     "%s: the BMC refused ResetType %s (HTTP %ld%s%s) "
				     "and the system is still %s",
				     rf->call->m->name, type, r.status, msg[0] != '\0' ? ": " : "", msg,
				     on ? "on" : "off");
	} else if (rc == 0) {
		rc = tb_fail(err, TB_ERR_REMOTE, "power", "%s: the BMC refused ResetType %s (HTTP %ld)%s%s",
			     rf->call->m->name, type, r.status, msg[0] != '\0' ? ": " : "", msg);
	}
	reply_free(&r);
	return rc;
}

/* Until PowerState says Off (cycle as ForceOff + On), at most RF_OFF_WAIT_MS. */
static int wait_off(struct rf *rf, struct tb_error *err)
{
	int64_t until = tb_monotonic_ms() + RF_OFF_WAIT_MS;
	int on = 1, rc;

	while ((rc = read_state(rf, &on, err)) == 0 && on) {
		if (tb_monotonic_ms() >= until)
			return tb_fail(err, TB_ERR_REMOTE, "power", "%s: still on %ld ms after ForceOff",
				       rf->call->m->name, RF_OFF_WAIT_MS);
		tb_sleep_ms(500, rf->call->cancel);
		if (rf->call->cancel != NULL && *rf->call->cancel)
			return tb_fail(err, TB_ERR_CANCELED, NULL, "%s: stopped on request", rf->call->m->name);
	}
	return rc;
}

static int do_action(struct rf *rf, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	/* preferences per op; a row with two values is a sequence */
	static const char *const prefs[][3][2] = {
		[TB_POWER_ON] = {{"On", NULL}, {"ForceOn", NULL}, {NULL, NULL}},
		[TB_POWER_OFF] = {{"ForceOff", NULL}, {NULL, NULL}, {NULL, NULL}},
		[TB_POWER_CYCLE] = {{"PowerCycle", NULL}, {"ForceOff", "On"}, {"ForceRestart", NULL}},
		[TB_POWER_RESET] = {{"ForceRestart", NULL}, {NULL, NULL}, {NULL, NULL}},
		[TB_POWER_SOFT] = {{"GracefulShutdown", NULL}, {NULL, NULL}, {NULL, NULL}},
	};
	json_t *sys = NULL, *act, *list;
	const char *target;
	char turl[RF_URL_MAX], names[300];
	int rc, pick = -1;

	if ((rc = get_json(rf, "system", rf->system, &sys, NULL, 0, err)) != 0)
		return rc;
	if (op == TB_POWER_STATUS) {
		int on = power_state(sys);

		if (on < 0)
			rc = tb_fail(err, TB_ERR_REMOTE, "power",
				     "%s: the BMC's PowerState is \"%.40s\", not On or Off", rf->call->m->name,
				     json_string_value(json_object_get(sys, "PowerState")) != NULL
					     ? json_string_value(json_object_get(sys, "PowerState"))
					     : "(missing)");
		else if (is_on != NULL)
			*is_on = on;
		goto out;
	}
	act = json_object_get(json_object_get(sys, "Actions"), "#ComputerSystem.Reset");
	target = json_string_value(json_object_get(act, "target"));
	list = json_object_get(act, "ResetType@Redfish.AllowableValues");
	if (target == NULL) {
		rc = tb_fail(err, TB_ERR_REMOTE, "power",
			     "%s: the ComputerSystem %s has no #ComputerSystem.Reset "
			     "action",
			     rf->call->m->name, rf->system);
		goto out;
	}
	if ((rc = link_url(rf, target, turl, sizeof(turl), err)) != 0)
		goto out;
	for (int i = 0; i < 3 && pick < 0; i++)
		if (prefs[op][i][0] != NULL && allowed(list, prefs[op][i][0]) &&
		    (prefs[op][i][1] == NULL || allowed(list, prefs[op][i][1])))
			pick = i;
	if (pick < 0) {
		list_text(list, names, sizeof(names));
		rc = tb_fail(err, TB_ERR_CONFIG, "power",
			     "%s: the BMC does not allow ResetType %s for %s (it allows "
			     "%s); use another power method for this action",
			     rf->call->m->name, prefs[op][0][0], tb_power_op_name(op), names);
		goto out;
	}
	if (prefs[op][pick][1] != NULL) {
		/* ForceOff, wait for Off, On */
		if ((rc = reset(rf, turl, prefs[op][pick][0], 0, NULL, err)) == 0 && (rc = wait_off(rf, err)) == 0)
			rc = reset(rf, turl, prefs[op][pick][1], 1, NULL, err);
	} else {
		int want = op == TB_POWER_ON ? 1 : (op == TB_POWER_OFF || op == TB_POWER_SOFT) ? 0 : -1, off = 0;

		rc = reset(rf, turl, prefs[op][pick][0], want, &off, err);
		/* some BMCs refuse to restart a system that is off: a cycle or
		 * reset of an off machine ends with it on, so turn it on */
		if (rc == 0 && off)
			rc = reset(rf, turl, allowed(list, "On") ? "On" : "ForceOn", 1, NULL, err);
	}
out:
	json_decref(sys);
	return rc;
}

/* Set up rf for one call: password, curl handle, session, system. */
static int rf_open(struct rf *rf, const struct tb_power_call *call, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	size_t n;
	int rc;

	memset(rf, 0, sizeof(*rf));
	rf->call = call;
	rf->deadline = tb_monotonic_ms() + (call->timeout_ms > 0 ? call->timeout_ms : RF_TIMEOUT_MS);
	if (pm->url == NULL || strncmp(pm->url, "https://", 8) != 0 || pm->user == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "power", "%s: the redfish method needs an https url and a user",
			       call->m->name);
	snprintf(rf->base, sizeof(rf->base), "%s", pm->url);
	n = strlen(rf->base);
	while (n > 8 && rf->base[n - 1] == '/')
		rf->base[--n] = '\0';
	tb_power_cred_hint(pm, rf->creds, sizeof(rf->creds));
	pthread_once(&curl_once, curl_init_once);
	if (!curl_ok || (rf->h = curl_easy_init()) == NULL)
		return tb_fail(err, TB_ERR_INTERNAL, NULL, "libcurl could not start");
	if ((rc = tb_power_read_password(call, rf->password, sizeof(rf->password), err)) != 0)
		return rc;
	if (pm->auth == TB_REDFISH_SESSION && (rc = open_session(rf, err)) != 0)
		return rc;
	return find_system(rf, err);
}

static void rf_close(struct rf *rf)
{
	if (rf->h != NULL) {
		close_session(rf);
		curl_easy_cleanup(rf->h);
	}
	tb_wipe(rf->password, sizeof(rf->password));
	tb_wipe(rf->token, sizeof(rf->token));
}

static int redfish_run(const struct tb_power_call *call, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	struct rf rf;
	int rc;

	if (op >= TB_POWER_NOPS)
		return tb_fail(err, TB_ERR_INVALID, "action", "%s: Redfish cannot do this", call->m->name);
	if ((rc = rf_open(&rf, call, err)) == 0)
		rc = do_action(&rf, op, is_on, err);
	rf_close(&rf);
	return rc;
}

int tb_redfish_boot_once(const struct tb_power_call *call, const char *target, struct tb_error *err)
{
	struct rf rf;
	json_t *sys = NULL, *b = NULL, *list;
	char etag[256] = "", names[300], msg[300], *body = NULL;
	struct reply r = {0};
	int rc;

	if (call->pm->driver != TB_POWER_REDFISH || target == NULL || target[0] == '\0')
		return tb_fail(err, TB_ERR_INVALID, "boot",
			       "%s: a one-shot boot override needs a redfish method "
			       "and a target",
			       call->m->name);
	if ((rc = rf_open(&rf, call, err)) != 0 ||
	    (rc = get_json(&rf, "system", rf.system, &sys, etag, sizeof(etag), err)) != 0)
		goto out;
	list = json_object_get(json_object_get(sys, "Boot"), "BootSourceOverrideTarget@Redfish.AllowableValues");
	if (!allowed(list, target)) {
		list_text(list, names, sizeof(names));
		rc = tb_fail(err, TB_ERR_CONFIG, "boot", "%s: the BMC does not allow boot target %.40s (it allows %s)",
			     call->m->name, target, names);
		goto out;
	}
	b = json_pack("{s:{s:s, s:s}}", "Boot", "BootSourceOverrideEnabled", "Once", "BootSourceOverrideTarget",
		      target);
	if (b == NULL || (body = json_dumps(b, JSON_COMPACT)) == NULL) {
		rc = tb_fail(err, TB_ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	if (etag[0] == '\0')
		tb_warn("power", "%s: the BMC sent no ETag for %s; PATCHing without If-Match", call->m->name,
			rf.system);
	if ((rc = request(&rf, "boot override", "PATCH", rf.system, body, NULL, etag[0] != '\0' ? etag : NULL, &r,
			  err)) != 0)
		goto out;
	bmc_message(&r, msg, sizeof(msg));
	if (r.status == 412)
		rc = tb_fail(err, TB_ERR_CONFLICT, "boot",
			     "%s: the BMC refused the boot override: the system changed "
			     "since it was read (HTTP 412, ETag %s); try again",
			     call->m->name, etag);
	else if (r.status < 200 || r.status >= 300)
		rc = tb_fail(err, TB_ERR_REMOTE, "boot", "%s: the BMC refused the boot override (HTTP %ld)%s%s",
			     call->m->name, r.status, msg[0] != '\0' ? ": " : "", msg);
out:
	reply_free(&r);
	free(body);
	json_decref(b);
	json_decref(sys);
	rf_close(&rf);
	return rc;
}

const struct tb_power_driver tb_power_redfish = {
	.name = "redfish",
	.ops = TB_POWER_BIT(TB_POWER_ON) | TB_POWER_BIT(TB_POWER_OFF) | TB_POWER_BIT(TB_POWER_CYCLE) |
	       TB_POWER_BIT(TB_POWER_RESET) | TB_POWER_BIT(TB_POWER_SOFT) | TB_POWER_BIT(TB_POWER_STATUS),
	.run = redfish_run,
};
