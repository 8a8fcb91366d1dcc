/* notify_email.c - the email sink: a message as a plain-text mail sent
 * through an SMTP server with libcurl, behind the same connect guard as the
 * webhooks (notify_guard.c).  smtp:// must speak STARTTLS (libcurl's
 * CURLUSESSL_ALL: a server that does not offer it is a failure, never a
 * fall-back to plain text) unless the sink says tls "none", which a
 * password refuses; smtps:// is TLS from the start.  See notify_internal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "notify_internal.h"
#include "validate.h"
#include "wipe.h"

#define MAX_RCPT 10

/* A mail address as testbedd writes it into a header and the envelope:
 * local@domain of the characters RFC 5322 allows unquoted; nothing that
 * could end a header line or an SMTP command. */
static int valid_mail(const char *s)
{
	const char *at = strchr(s, '@');
	size_t n = strlen(s);

	if (n < 3 || n > 254 || at == NULL || at == s || at[1] == '\0' || strchr(at + 1, '@') != NULL)
		return 0;
	for (const char *p = s; *p; p++) {
		if (p == at)
			continue;
		if (p < at ? strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-",
				    *p) == NULL
			   : strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *p) == NULL)
			return 0;
	}
	return 1;
}

static int check_fields(const json_t *sink, const char **url, const char **from, const char **user, const char **tls,
			const char **allow, struct tb_error *err)
{
	static const char *const fields[] = {
		"type", "url", "from", "to", "user", "password_file", "tls", "allow_private_host", NULL};
	int rc;

	*user = *tls = *allow = NULL;
	if ((rc = tb_json_only(sink, fields, err)) != 0 || (rc = tb_json_string(sink, "url", 1, url, err)) != 0 ||
	    (rc = tb_json_string(sink, "from", 1, from, err)) != 0 ||
	    (rc = tb_json_string(sink, "user", 0, user, err)) != 0 ||
	    (rc = tb_json_string(sink, "tls", 0, tls, err)) != 0 ||
	    (rc = tb_json_string(sink, "allow_private_host", 0, allow, err)) != 0) {
		char f[sizeof(err->field)];

		snprintf(f, sizeof(f), "sink.%s", err->field);
		snprintf(err->field, sizeof(err->field), "%s", f);
		return rc;
	}
	return 0;
}

int nf_email_parse(const json_t *sink, const char *dir, json_t **out, struct tb_error *err)
{
	const char *url, *from, *user, *tls, *allow, *pw;
	const json_t *to = json_object_get(sink, "to"), *v;
	char host[256];
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_fields(sink, &url, &from, &user, &tls, &allow, err)) != 0 ||
	    (rc = nf_url_check(url, 1, "sink.url", host, sizeof(host), err)) != 0)
		return rc;
	if (!valid_mail(from))
		return tb_fail(err, TB_ERR_INVALID, "sink.from", "from must be a mail address, local@domain");
	if (!json_is_array(to) || json_array_size(to) == 0 || json_array_size(to) > MAX_RCPT)
		return tb_fail(err, TB_ERR_INVALID, "sink.to", "to must be a list of 1..%d mail addresses", MAX_RCPT);
	json_array_foreach(to, i, v) if (!json_is_string(v) || !valid_mail(json_string_value(v))) return tb_fail(
		err, TB_ERR_INVALID, "sink.to", "to[%zu] is not a mail address, local@domain", i);
	if (tls != NULL && strcmp(tls, "starttls") != 0 && strcmp(tls, "none") != 0)
		return tb_fail(err, TB_ERR_INVALID, "sink.tls", "tls must be starttls (the default) or none");
	if (user != NULL && (strlen(user) == 0 || strlen(user) > 128 || tb_text_refused(user, strlen(user)) >= 0))
		return tb_fail(err, TB_ERR_INVALID, "sink.user", "user must be 1..128 printable characters");
	pw = json_string_value(json_object_get(sink, "password_file"));
	if (json_object_get(sink, "password_file") != NULL && !json_is_null(json_object_get(sink, "password_file"))) {
		if (pw == NULL || strlen(pw) == 0 || strlen(pw) > 1000 || tb_text_refused(pw, strlen(pw)) >= 0 ||
		    user == NULL)
			return tb_fail(err, TB_ERR_INVALID, "sink.password_file",
				       "password_file must name a file in the secrets directory, with user");
		if ((rc = nf_secret_check(pw, dir, "sink.password_file", err)) != 0) {
			err->code = TB_ERR_INVALID;
			return TB_ERR_INVALID;
		}
		if (tls != NULL && strcmp(tls, "none") == 0 && strncmp(url, "smtps:", 6) != 0)
			return tb_fail(err, TB_ERR_INVALID, "sink.tls",
				       "a password is never sent without TLS: tls none only without password_file");
	}
	if (allow != NULL && strcasecmp(allow, host) != 0)
		return tb_fail(err, TB_ERR_INVALID, "sink.allow_private_host",
			       "allow_private_host (%.64s) must name the URL's host (%.64s)", allow, host);
	*out = json_pack("{s:s, s:s, s:s, s:O, s:s?, s:s?, s:s, s:s?}", "type", "email", "url", url, "from", from, "to",
			 to, "user", user, "password_file", pw, "tls", tls != NULL ? tls : "starttls",
			 "allow_private_host", allow);
	return *out != NULL ? 0 : tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
}

/* ---- the mail ---- */

struct upload {
	char *text;
	size_t len, off;
};

static size_t read_mail(char *buf, size_t size, size_t n, void *cls)
{
	struct upload *u = cls;
	size_t k = u->len - u->off < size * n ? u->len - u->off : size * n;

	memcpy(buf, u->text + u->off, k);
	u->off += k;
	return k;
}

/* Append s with every line ending made CRLF (ascii: 1 also turns what is
 * not printable ASCII into '?', for a header). */
static void put(char **p, const char *s, int ascii)
{
	for (; *s; s++) {
		if (*s == '\r')
			continue;
		if (*s == '\n') {
			*(*p)++ = ascii ? ' ' : '\r';
			if (!ascii)
				*(*p)++ = '\n';
			continue;
		}
		*(*p)++ = ascii && ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) ? '?' : *s;
	}
}

/* The mail's text (headers and body), malloc'd. */
static char *compose(const json_t *sink, int64_t delivery, const json_t *msg)
{
	const char *from = json_string_value(json_object_get(sink, "from"));
	const char *title = json_string_value(json_object_get(msg, "title"));
	const char *text = json_string_value(json_object_get(msg, "text"));
	const json_t *to = json_object_get(sink, "to"), *v;
	char date[64], line[512], *out, *p;
	time_t now = time(NULL);
	size_t i, cap;
	struct tm tm;

	title = title != NULL ? title : "testbedd";
	text = text != NULL ? text : "";
	cap = 2048 + 2 * (strlen(title) + strlen(text)) + json_array_size(to) * 260;
	if ((out = p = malloc(cap)) == NULL)
		return NULL;
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	snprintf(line, sizeof(line), "Date: %s\nFrom: <%s>\nTo: ", date, from);
	put(&p, line, 0);
	json_array_foreach(to, i, v)
	{
		snprintf(line, sizeof(line), "%s<%s>", i > 0 ? ", " : "", json_string_value(v));
		put(&p, line, 0);
	}
	put(&p, "\nSubject: ", 0);
	put(&p, title, 1);
	snprintf(line, sizeof(line),
		 "\nMessage-ID: <testbedd-%lld-%lld@%s>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
		 "Content-Transfer-Encoding: 8bit\nX-Testbedd-Delivery: %lld\n\n",
		 (long long)delivery, (long long)now, strchr(from, '@') + 1, (long long)delivery);
	put(&p, line, 0);
	put(&p, text, 0);
	snprintf(line, sizeof(line), "\n\ntrigger: %s\n",
		 json_string_value(json_object_get(msg, "trigger")) ? json_string_value(json_object_get(msg, "trigger"))
								    : "?");
	put(&p, line, 0);
	*p = '\0';
	return out;
}

int nf_email_send(const json_t *sink, const char *dir, int64_t delivery, const char *message,
		  int (*abort_fn)(void *cls), void *cls, int *status, struct tb_error *err)
{
	const char *url = json_string_value(json_object_get(sink, "url"));
	const char *user = json_string_value(json_object_get(sink, "user"));
	const char *pwf = json_string_value(json_object_get(sink, "password_file"));
	const char *tls = json_string_value(json_object_get(sink, "tls"));
	const char *allow = json_string_value(json_object_get(sink, "allow_private_host"));
	struct nf_guard g = {.abort_fn = abort_fn, .cls = cls};
	struct curl_slist *rcpt = NULL;
	char ebuf[CURL_ERROR_SIZE], host[256], mailfrom[300], pw[NF_SECRET_MAX] = "";
	struct upload u = {0};
	const json_t *v;
	json_t *msg;
	long code = 0;
	CURLcode cc;
	size_t i;
	CURL *h;
	int rc;

	*status = 0;
	if (url == NULL || (rc = nf_url_check(url, 1, "sink.url", host, sizeof(host), err)) != 0)
		return url == NULL ? tb_fail(err, TB_ERR_CONFIG, "sink.url", "the sink has no url") : rc;
	g.allow = allow != NULL && strcasecmp(allow, host) == 0;
	if (pwf != NULL && (rc = nf_secret_read(pwf, dir, "sink.password_file", pw, sizeof(pw), err)) != 0)
		return rc;
	if ((msg = json_loads(message, 0, NULL)) == NULL || (u.text = compose(sink, delivery, msg)) == NULL) {
		json_decref(msg);
		tb_wipe(pw, sizeof(pw));
		return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
	}
	json_decref(msg);
	u.len = strlen(u.text);
	json_array_foreach(json_object_get(sink, "to"), i, v)
	{
		char r[300];

		snprintf(r, sizeof(r), "<%s>", json_string_value(v));
		rcpt = curl_slist_append(rcpt, r);
	}
	snprintf(mailfrom, sizeof(mailfrom), "<%s>", json_string_value(json_object_get(sink, "from")));
	if (rcpt == NULL || (h = nf_guarded_handle(&g, "smtp,smtps", ebuf)) == NULL) {
		curl_slist_free_all(rcpt);
		free(u.text);
		tb_wipe(pw, sizeof(pw));
		return tb_fail(err, TB_ERR_INTERNAL, "", "cannot start libcurl");
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_USE_SSL,
			 tls != NULL && strcmp(tls, "none") == 0 ? (long)CURLUSESSL_NONE : (long)CURLUSESSL_ALL);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, mailfrom);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, read_mail);
	curl_easy_setopt(h, CURLOPT_READDATA, &u);
	curl_easy_setopt(h, CURLOPT_INFILESIZE, (long)u.len);
	if (user != NULL) {
		curl_easy_setopt(h, CURLOPT_USERNAME, user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, pw);
	}
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	curl_slist_free_all(rcpt);
	free(u.text);
	tb_wipe(pw, sizeof(pw));
	*status = (int)code;
	return nf_guarded_result(&g, cc, ebuf, err);
}
