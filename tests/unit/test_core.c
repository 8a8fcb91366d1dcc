/*
 * test_core.c - the small pieces everything stands on: SHA-256 against the
 * FIPS 180-4 vectors, base64url, RFC 3339 times, the error table, and the
 * store (migrations, reopen, tokens, sessions, audit filters, host keys).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "crypto.h"
#include "http.h"
#include "wipe.h"
#include "error.h"
#include "outbuf.h"
#include "store.h"
#include "timeutil.h"

char *mkdtemp(char *template);

static void test_sha256(void **state)
{
	static const struct {
		const char *in;
		size_t repeat;
		const char *hex;
	} v[] = {
		{"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
		/* 55, 56 and 64 bytes: the padding edges */
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1,
		 "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1,
		 "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = strlen(v[i].in) * v[i].repeat;
		char *buf = malloc(n + 1), hex[65];
		uint8_t out[TB_SHA256_LEN];

		for (size_t r = 0; r < v[i].repeat; r++)
			memcpy(buf + r * strlen(v[i].in), v[i].in, strlen(v[i].in));
		tb_sha256(buf, n, out);
		tb_hex(out, sizeof(out), hex);
		assert_string_equal(hex, v[i].hex);
		free(buf);
	}
}

static void test_base64url_and_secrets(void **state)
{
	char out[64], s1[96], s2[96];

	(void)state;
	assert_int_equal(tb_base64url((const uint8_t *)"\xfb\xff", 2, out), 3);
	assert_string_equal(out, "-_8");
	tb_base64url((const uint8_t *)"foobar", 6, out);
	assert_string_equal(out, "Zm9vYmFy");
	assert_int_equal(tb_random_secret("tbk_", s1, sizeof(s1)), 0);
	assert_int_equal(tb_random_secret("tbk_", s2, sizeof(s2)), 0);
	assert_int_equal(strlen(s1), 4 + 43);
	assert_string_not_equal(s1, s2);
	assert_true(tb_ct_equal("abc", "abc", 3));
	assert_false(tb_ct_equal("abc", "abd", 3));
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than the block). */
static void test_hmac_sha256(void **state)
{
	uint8_t k1[20], k6[131], out[TB_SHA256_LEN];
	char hex[65];
	const char *d6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	char wiped[8] = "secret!";

	(void)state;
	memset(k1, 0x0b, sizeof(k1));
	memset(k6, 0xaa, sizeof(k6));
	assert_int_equal(tb_hmac_sha256(k1, sizeof(k1), "Hi There", 8, out), 0);
	tb_hex(out, sizeof(out), hex);
	assert_string_equal(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	assert_int_equal(tb_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out), 0);
	tb_hex(out, sizeof(out), hex);
	assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	assert_int_equal(tb_hmac_sha256(k6, sizeof(k6), d6, strlen(d6), out), 0);
	tb_hex(out, sizeof(out), hex);
	assert_string_equal(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	tb_wipe(wiped, sizeof(wiped));
	for (size_t i = 0; i < sizeof(wiped); i++)
		assert_int_equal(wiped[i], 0);
	tb_wipe(NULL, 4);
}

/* The one sleep: it sleeps at least what was asked, and a stop flag ends
 * it early (both bounds are correctness, not speed: no upper time limit). */
static void test_sleep(void **state)
{
	volatile int stop = 1, go = 0;
	int64_t t0 = tb_monotonic_ms();

	(void)state;
	assert_int_equal(tb_sleep_ms(30, NULL), 0);
	assert_true(tb_monotonic_ms() - t0 >= 30);
	assert_int_equal(tb_sleep_ms(60000, &stop), 1); /* returns: the test would hang otherwise */
	t0 = tb_monotonic_ms();
	assert_int_equal(tb_sleep_ms(120, &go), 0);
	assert_true(tb_monotonic_ms() - t0 >= 120);
	assert_int_equal(tb_sleep_ms(0, NULL), 0);
}

static void test_time(void **state)
{
	int64_t t;
	char buf[TB_TIME_MAX];

	(void)state;
	assert_int_equal(tb_time_parse("2026-12-02T16:20:00Z", &t), 0);
	assert_int_equal(t, 1796228400);
	tb_time_format(t, buf);
	assert_string_equal(buf, "2026-12-02T16:20:00Z");
	assert_int_equal(tb_time_parse("2026-12-02T18:20:00+02:00", &t), 0);
	assert_int_equal(t, 1796228400);
	assert_int_equal(tb_time_parse("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(tb_time_parse("2024-02-29T12:00:00.5Z", &t), 0);
	assert_int_equal(t, 1709208000);
	assert_int_equal(tb_time_parse("yesterday", &t), -1);
	assert_int_equal(tb_time_parse("2026-13-01T00:00:00Z", &t), -1);
	assert_int_equal(tb_time_parse("2026-12-02T16:20:00", &t), -1);
	assert_int_equal(tb_time_parse("2026-12-02T16:20:00Zjunk", &t), -1);
}

static void test_errors(void **state)
{
	struct tb_error e = {0};

	(void)state;
	assert_int_equal(tb_fail(&e, TB_ERR_INVALID, "duration_s", "must be 1..3600, got %d", -5), TB_ERR_INVALID);
	assert_string_equal(e.field, "duration_s");
	assert_string_equal(e.message, "must be 1..3600, got -5");
	assert_string_equal(tb_err_name(TB_ERR_INVALID), "invalid_field");
	{
		/* every code's status, as the API documents them (api/openapi.yaml) */
		static const struct {
			int code;
			unsigned int status;
		} st[] = {
			{TB_OK, 200},
			{TB_ERR_INVALID, 400},
			{TB_ERR_NOT_FOUND, 404},
			{TB_ERR_CONFLICT, 409},
			{TB_ERR_IO, 500},
			{TB_ERR_TIMEOUT, 504},
			{TB_ERR_NOMEM, 503},
			{TB_ERR_UNAUTHORIZED, 401},
			{TB_ERR_FORBIDDEN, 403},
			{TB_ERR_HOSTKEY, 502},
			{TB_ERR_REMOTE, 502},
			{TB_ERR_UNREACHABLE, 502},
			{TB_ERR_INTERNAL, 500},
			{TB_ERR_TOO_LARGE, 413},
			{TB_ERR_RATE_LIMITED, 429},
			{TB_ERR_METHOD, 405},
			{TB_ERR_CONFIG, 500},
			{TB_ERR_CANCELED, 409},
			{TB_ERR_BAD_JSON, 400},
			{TB_ERR_UNKNOWN_FIELD, 400},
			{TB_ERR_CSRF, 403},
			{TB_ERR_MEDIA_TYPE, 415},
			{TB_ERR_URI_TOO_LONG, 414},
			{-999, 500},
		};

		for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
			assert_int_equal(tb_http_status_of(st[i].code), st[i].status);
	}
	assert_int_equal(tb_fail(NULL, TB_ERR_IO, NULL, "x"), TB_ERR_IO);
}

struct collect {
	int n;
	char last[64];
};

static void count_audit(void *cls, const struct tb_audit_row *r)
{
	struct collect *c = cls;

	c->n++;
	snprintf(c->last, sizeof(c->last), "%s", r->action);
}

static void count_token(void *cls, const struct tb_token_row *r)
{
	struct collect *c = cls;

	c->n++;
	snprintf(c->last, sizeof(c->last), "%s:%s:%d", r->name, r->role, r->revoked);
}

static void test_store(void **state)
{
	char dir[] = "/tmp/tbstore-XXXXXX", path[128], fp[128];
	struct tb_store *st;
	struct tb_error err = {0};
	uint8_t h1[TB_SHA256_LEN] = {1}, h2[TB_SHA256_LEN] = {2};
	struct tb_session_row sess = {0}, got;
	struct tb_audit_filter f = {.limit = 10};
	struct collect c = {0};
	int64_t id, n;
	int version;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	assert_int_equal(tb_store_open(path, &st, &err), 0);
	version = tb_store_schema_version(st);
	assert_true(version >= 1);
	assert_int_equal(tb_store_token_insert(st, "ci", "operator", h1, 100, &id, &err), 0);
	/* the role is checked by the schema too */
	assert_int_not_equal(tb_store_token_insert(st, "x", "root", h2, 100, &n, &err), 0);
	sess.token_id = id;
	sess.expires_at = 200;
	assert_int_equal(tb_store_session_insert(st, h2, &sess, &err), 0);
	assert_int_equal(tb_store_session_get(st, h2, &got, &err), 0);
	assert_int_equal(got.token_id, id);
	struct tb_audit_row a = {.at = 50,
				 .actor = "admin",
				 .remote = "127.0.0.1",
				 .method = "POST",
				 .path = "/api/v1/tokens",
				 .action = "token.create",
				 .target = "ci",
				 .status = 201,
				 .result = "ok"};
	assert_int_equal(tb_store_audit_append(st, &a, &err), 0);
	a.target = "left";
	a.action = "host.trust";
	a.at = 60;
	assert_int_equal(tb_store_audit_append(st, &a, &err), 0);
	f.target = "left";
	assert_int_equal(tb_store_audit_list(st, &f, count_audit, &c, &err), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.last, "host.trust");
	f.target = NULL;
	f.since = 55;
	c.n = 0;
	assert_int_equal(tb_store_audit_list(st, &f, count_audit, &c, &err), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(tb_store_hostkey_get(st, "left", "ubuntu", fp, sizeof(fp)), TB_ERR_NOT_FOUND);
	assert_int_equal(tb_store_hostkey_set(st, "left", "ubuntu", "SHA256:abc", "admin", 1, &err), 0);
	assert_int_equal(tb_store_hostkey_get(st, "left", "ubuntu", fp, sizeof(fp)), 0);
	assert_string_equal(fp, "SHA256:abc");
	tb_store_close(st);

	/* reopening runs no migration twice and keeps the data */
	assert_int_equal(tb_store_open(path, &st, &err), 0);
	assert_int_equal(tb_store_schema_version(st), version);
	assert_int_equal(tb_store_token_count(st, &n, &err), 0);
	assert_int_equal(n, 1);
	/* revoking a token ends its sessions */
	assert_int_equal(tb_store_token_revoke(st, id, &err), 0);
	assert_int_not_equal(tb_store_session_get(st, h2, &got, &err), 0);
	assert_int_equal(tb_store_token_revoke(st, 999, &err), TB_ERR_NOT_FOUND);
	c.n = 0;
	assert_int_equal(tb_store_token_list(st, count_token, &c, &err), 0);
	assert_string_equal(c.last, "ci:operator:1");
	tb_store_close(st);

	/* a file that is not a database is refused with a message */
	{
		FILE *fh = fopen(path, "w");

		fputs("this is not a database, just text that is long enough to fill a header page.", fh);
		fclose(fh);
		unlink(strcat(strcpy(fp, path), "-wal"));
		unlink(strcat(strcpy(fp, path), "-shm"));
		assert_int_not_equal(tb_store_open(path, &st, &err), 0);
		assert_non_null(strstr(err.message, "database"));
	}
	unlink(path);
	rmdir(dir);
}

static void test_outbuf(void **state)
{
	struct tb_outbuf b = {0}, capped = {.max = 10};
	char big[3000], *text;

	(void)state;
	assert_string_equal(tb_outbuf_str(&b), "");
	text = tb_outbuf_take(&b);
	assert_string_equal(text, ""); /* nothing added: "", not NULL */
	free(text);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tb_outbuf_puts(&b, "a ");
	tb_outbuf_printf(&b, "%d %s|", 42, big); /* longer than printf's first try */
	assert_int_equal(b.len, 2 + 3 + sizeof(big) - 1 + 1);
	assert_memory_equal(b.p, "a 42 xxx", 8);
	assert_int_equal(b.p[b.len - 1], '|');
	assert_false(b.truncated);
	tb_outbuf_free(&b);
	/* past max: dropped, said, never an error */
	tb_outbuf_puts(&capped, "0123456");
	tb_outbuf_printf(&capped, "%s", "789abc");
	assert_string_equal(tb_outbuf_str(&capped), "0123456789");
	assert_true(capped.truncated);
	assert_false(capped.nomem);
	tb_outbuf_puts(&capped, "more");
	assert_int_equal(capped.len, 10);
	text = tb_outbuf_take(&capped);
	assert_string_equal(text, "0123456789");
	assert_null(capped.p);
	free(text);
	/* clear: empty text, the same limit, room for the next line */
	tb_outbuf_puts(&capped, "abcdefghijkl");
	tb_outbuf_clear(&capped);
	assert_string_equal(tb_outbuf_str(&capped), "");
	assert_int_equal(capped.len, 0);
	assert_false(capped.truncated);
	tb_outbuf_puts(&capped, "x");
	assert_string_equal(tb_outbuf_str(&capped), "x");
	tb_outbuf_free(&capped);
	tb_outbuf_free(&capped);
}

static void keep_matrix(void *cls, const struct tb_matrix_row *m)
{
	struct tb_matrix_row *out = cls;

	out->pending_ms = m->pending_ms;
	out->pending_rounds = m->pending_rounds;
	out->npending = m->npending;
}

/* What is left of a matrix: per round its longest run, rounds one after another. */
static void test_store_time_left(void **state)
{
	char dir[] = "/tmp/tbstore-XXXXXX", path[128];
	struct tb_store *st;
	struct tb_error err = {0};
	struct tb_matrix_row m = {.name = "left", .spec = "{}", .state = "queued", .actor = "admin", .created_at = 1};
	struct tb_matrix_row got = {0};
	/* round 0: two runs at once (10 s and 4 s + 2 s omit); round 1: one of 3 s */
#define RUN(sq, rd, c, sv, proto, par)                                                                            \
	{                                                                                                         \
		.seq = sq, .round = rd, .client = c, .server = sv, .link = "lan", .server_address = "198.18.0.1", \
		.protocol = proto, .direction = "forward", .params = par                                          \
	}
	struct tb_run_row runs[3] = {
		RUN(0, 0, "a", "b", "tcp", "{\"duration_s\":10}"),
		RUN(1, 0, "c", "d", "tcp", "{\"duration_s\":4,\"omit_s\":2}"),
		RUN(2, 1, "a", "b", "udp", "{\"duration_s\":3}"),
	};
#undef RUN
	int64_t id;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	assert_int_equal(tb_store_open(path, &st, &err), 0);
	if (tb_store_matrix_insert(st, &m, runs, 3, &id, &err) != 0)
		fail_msg("insert: %s", err.message);
	assert_int_equal(tb_store_matrix_get(st, id, keep_matrix, &got, &err), 0);
	assert_int_equal(got.npending, 3);
	assert_int_equal(got.pending_ms, 13000); /* 10 s + 3 s, not 10 + 6 + 3 */
	assert_int_equal(got.pending_rounds, 2);
	tb_store_close(st);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),          cmocka_unit_test(test_base64url_and_secrets),
		cmocka_unit_test(test_hmac_sha256),     cmocka_unit_test(test_time),
		cmocka_unit_test(test_sleep),           cmocka_unit_test(test_errors),
		cmocka_unit_test(test_store_time_left), cmocka_unit_test(test_outbuf),
		cmocka_unit_test(test_store),
	};

	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
