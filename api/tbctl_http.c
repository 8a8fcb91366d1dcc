/*
 * tbctl_http.c - one blocking libcurl request per call; see tbctl_http.h.
 */
#include "tbctl_http.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

struct sink {
	struct tbctl_reply *reply;
	size_t cap;
	int too_large;
	int nomem;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	struct tbctl_reply *r = s->reply;
	size_t n = size * nmemb;

	if (n > TBCTL_BODY_MAX - r->body_len) {
		s->too_large = 1;
		return 0; /* makes curl fail with CURLE_WRITE_ERROR */
	}
	if (r->body_len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *nb;

		while (cap < r->body_len + n + 1)
			cap *= 2;
		nb = realloc(r->body, cap);
		if (nb == NULL) {
			s->nomem = 1;
			return 0;
		}
		r->body = nb;
		s->cap = cap;
	}
	memcpy(r->body + r->body_len, data, n);
	r->body_len += n;
	r->body[r->body_len] = '\0';
	return n;
}

/* Copy the value of header line "Name: value\r\n" into dst if it is `name`. */
static void grab_header(const char *line, size_t len, const char *name, char *dst, size_t dstsz)
{
	size_t nlen = strlen(name), i, j = 0;

	if (len <= nlen || line[nlen] != ':')
		return;
	for (i = 0; i < nlen; i++)
		if (tolower((unsigned char)line[i]) != tolower((unsigned char)name[i]))
			return;
	for (i = nlen + 1; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	for (; i < len && line[i] != '\r' && line[i] != '\n' && j + 1 < dstsz; i++)
		dst[j++] = isprint((unsigned char)line[i]) ? line[i] : '?';
	dst[j] = '\0';
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct tbctl_reply *r = userdata;
	size_t n = size * nmemb;

	grab_header(data, n, "Retry-After", r->retry_after, sizeof r->retry_after);
	grab_header(data, n, "Allow", r->allow, sizeof r->allow);
	return n;
}

void tbctl_http_tls(void *curl)
{
	const char *ca = getenv("TESTBEDD_CA_FILE");

	/* a testbedd with its own (self-signed) certificate: trust that file */
	if (ca != NULL && *ca != '\0')
		curl_easy_setopt(curl, CURLOPT_CAINFO, ca);
}

char *tbctl_http_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(s), i, j = 0;
	char *out = malloc(len * 3 + 1);

	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
			out[j++] = (char)c;
		} else {
			out[j++] = '%';
			out[j++] = hex[c >> 4];
			out[j++] = hex[c & 15];
		}
	}
	out[j] = '\0';
	return out;
}

void tbctl_reply_free(struct tbctl_reply *reply)
{
	if (reply == NULL)
		return;
	free(reply->body);
	reply->body = NULL;
	reply->body_len = 0;
	json_decref(reply->json);
	reply->json = NULL;
}

/* Wipe a buffer that held the token; volatile so the stores are not elided. */
static void wipe(char *p, size_t n)
{
	volatile char *v = p;

	while (n--)
		*v++ = 0;
}

int tbctl_http_request(const struct tbctl_http *h, const char *method, const char *path, const json_t *body,
		       struct tbctl_reply *reply)
{
	CURL *curl = NULL;
	CURLcode rc;
	struct curl_slist *headers = NULL, *tmp;
	struct sink sink = {reply, 0, 0, 0};
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL, *payload = NULL, *auth = NULL;
	size_t url_len, auth_len = 0;
	int ret = -1;

	memset(reply, 0, sizeof *reply);
	url_len = strlen(h->base_url) + strlen(path) + 1;
	url = malloc(url_len);
	if (url == NULL)
		goto nomem;
	snprintf(url, url_len, "%s%s", h->base_url, path);

	curl = curl_easy_init();
	if (curl == NULL)
		goto nomem;

	tmp = curl_slist_append(headers, "Accept: application/json");
	if (tmp == NULL)
		goto nomem;
	headers = tmp;
	if (h->token != NULL) {
		auth_len = strlen("Authorization: Bearer ") + strlen(h->token) + 1;
		auth = malloc(auth_len);
		if (auth == NULL)
			goto nomem;
		snprintf(auth, auth_len, "Authorization: Bearer %s", h->token);
		tmp = curl_slist_append(headers, auth);
		if (tmp == NULL)
			goto nomem;
		headers = tmp;
	}
	if (body != NULL) {
		payload = json_dumps(body, JSON_COMPACT);
		if (payload == NULL)
			goto nomem;
		tmp = curl_slist_append(headers, "Content-Type: application/json");
		if (tmp == NULL)
			goto nomem;
		headers = tmp;
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	}
	/* "Expect: 100-continue" only adds a round trip for our small bodies. */
	tmp = curl_slist_append(headers, "Expect:");
	if (tmp == NULL)
		goto nomem;
	headers = tmp;

	curl_easy_setopt(curl, CURLOPT_URL, url);
	tbctl_http_tls(curl);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "tbctl/" TB_VERSION);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, h->connect_timeout_ms);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	/* A proxy from the environment would see the bearer token. */
	curl_easy_setopt(curl, CURLOPT_PROXY, "");
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85.0 */
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, reply);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);

	rc = curl_easy_perform(curl);
	if (sink.nomem)
		goto nomem;
	if (sink.too_large) {
		snprintf(reply->transport_error, sizeof reply->transport_error, "the reply is larger than %u bytes",
			 TBCTL_BODY_MAX);
		goto out;
	}
	if (rc != CURLE_OK) {
		reply->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		snprintf(reply->transport_error, sizeof reply->transport_error, "%s",
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply->status);
	if (reply->body_len > 0)
		reply->json = json_loadb(reply->body, reply->body_len, 0, NULL);
	ret = 0;
	goto out;

nomem:
	snprintf(reply->transport_error, sizeof reply->transport_error, "out of memory");
out:
	if (auth != NULL) {
		wipe(auth, auth_len);
		free(auth);
	}
	curl_slist_free_all(headers);
	if (curl != NULL)
		curl_easy_cleanup(curl);
	free(payload);
	free(url);
	if (ret != 0) {
		reply->status = 0;
		tbctl_reply_free(reply);
	}
	return ret;
}
