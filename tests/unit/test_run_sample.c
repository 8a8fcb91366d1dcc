/*
 * test_run_sample.c - the parts of run sampling that need no host: the
 * parsing of captured Linux (/proc/stat, /proc/meminfo as the reader's grep
 * prints them) and FreeBSD (`sysctl -n kern.cp_times`, `sysctl
 * vm.stats.vm.v_page_count ... hw.pagesize`: the "name: value" form of
 * sysctl(8); the sim's FreeBSD personas are Linux namespaces without
 * kern.cp_times, so the FreeBSD text here is constructed from the
 * documented formats, five counters per CPU: user nice system interrupt
 * idle) frames, a sample from two frames, the stream reader fed in odd
 * pieces, and a run's summary.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "run_sample.h"
#include "store.h"
#include "tmpstore.h"

static const char linux1[] = "@@tb-sample\n"
			     "cpu0 1000 0 500 10000 100 0 0 0 0 0\n"
			     "cpu1 2000 10 600 9000 0 50 50 0 0 0\n"
			     "MemTotal:        4012345 kB\n"
			     "MemAvailable:    3012345 kB\n";
/* a second later: cpu0 +50 user +20 system +10 irq +20 softirq +900 idle;
 * cpu1 +800 user +100 nice(user) +50 system +0 irq +50 softirq -> busy */
static const char linux2[] = "@@tb-sample\n"
			     "cpu0 1050 0 520 10900 100 10 20 0 0 0\n"
			     "cpu1 2800 110 650 9000 0 50 100 0 0 0\n"
			     "MemTotal:        4012345 kB\n"
			     "MemAvailable:    2006172 kB\n";

static json_t *got;

static void on_sample(void *cls, json_t *s)
{
	(void)cls;
	json_decref(got);
	got = s;
}

static double cpu(const json_t *s, size_t i, const char *k)
{
	return json_number_value(json_object_get(json_array_get(json_object_get(s, "cpu"), i), k));
}

static void test_linux_stream(void **state)
{
	struct tb_sample_reader *r = tb_sample_reader_new(TB_SAMPLE_LINUX, on_sample, NULL);
	char all[1024];
	size_t n;

	(void)state;
	assert_non_null(r);
	got = NULL;
	snprintf(all, sizeof(all), "%s%s@@tb-sample\n", linux1, linux2);
	n = strlen(all);
	/* in pieces of 7 bytes: markers and lines cut anywhere */
	for (size_t i = 0; i < n; i += 7)
		tb_sample_feed(r, all + i, n - i < 7 ? n - i : 7);
	assert_non_null(got); /* the first frame gives none, the second one sample */
	assert_int_equal(json_array_size(json_object_get(got, "cpu")), 2);
	assert_true(cpu(got, 0, "user") == 5.0);
	assert_true(cpu(got, 0, "system") == 2.0);
	assert_true(cpu(got, 0, "interrupt") == 1.0);
	assert_true(cpu(got, 0, "softirq") == 2.0);
	assert_true(cpu(got, 0, "idle") == 90.0);
	assert_true(cpu(got, 1, "idle") == 0.0);
	assert_int_equal(json_integer_value(json_object_get(got, "busiest")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(got, "mem"), "total_kib")), 4012345);
	assert_true(json_number_value(json_object_get(json_object_get(got, "mem"), "used_pct")) == 50.0);
	json_decref(got);
	got = NULL;
	tb_sample_reader_free(r);
}

static const char bsd1[] = "2497 0 1364 71 389052 2236 0 1183 40 389529\n"
			   "vm.stats.vm.v_page_count: 2031010\n"
			   "vm.stats.vm.v_free_count: 1015505\n"
			   "vm.stats.vm.v_inactive_count: 0\n"
			   "hw.pagesize: 4096\n";
static const char bsd2[] = "2597 100 1464 171 389752 2236 0 1183 40 390529\n"
			   "vm.stats.vm.v_page_count: 2031010\n"
			   "vm.stats.vm.v_free_count: 507752\n"
			   "vm.stats.vm.v_inactive_count: 507753\n"
			   "hw.pagesize: 4096\n";

static void test_freebsd_frames(void **state)
{
	static struct tb_sample_frame a, b;
	struct tb_error err = {0};
	json_t *s;

	(void)state;
	assert_int_equal(tb_sample_parse(TB_SAMPLE_FREEBSD, bsd1, &a, &err), 0);
	assert_int_equal(tb_sample_parse(TB_SAMPLE_FREEBSD, bsd2, &b, &err), 0);
	assert_int_equal(b.ncpu, 2);
	assert_int_equal(b.cpu[0].interrupt, 171);
	assert_int_equal(b.mem_total_kib, 2031010ULL * 4);
	s = tb_sample_delta(&a, &b);
	assert_non_null(s);
	/* cpu0: +100 user +100 nice +100 system +100 interrupt +700 idle (1100) */
	assert_true(cpu(s, 0, "user") == 18.18);
	assert_true(cpu(s, 0, "interrupt") == 9.09);
	assert_true(cpu(s, 0, "softirq") == 0.0);
	assert_true(cpu(s, 1, "idle") == 100.0);
	assert_int_equal(json_integer_value(json_object_get(s, "busiest")), 0);
	assert_true(json_number_value(json_object_get(json_object_get(s, "mem"), "used_pct")) == 50.0);
	json_decref(s);
	/* no counters: refused, not a sample of nothing */
	assert_int_equal(tb_sample_parse(TB_SAMPLE_FREEBSD, "sysctl: unknown oid 'kern.cp_times'\n", &a, &err),
			 TB_ERR_INVALID);
	/* the commands: one long-lived loop, no request text in them */
	assert_non_null(strstr(tb_sample_command(TB_SAMPLE_FREEBSD), "sysctl -n kern.cp_times"));
	assert_non_null(strstr(tb_sample_command(TB_SAMPLE_LINUX), "/proc/stat"));
	assert_non_null(strstr(tb_sample_command(TB_SAMPLE_LINUX), "while :; do echo @@tb-sample"));
}

/* Two samplers (a run's client and server, or two matrices' runs) parse
 * FreeBSD frames at once: each gets its own numbers (the parser's scratch
 * was once a static array both wrote). */
struct bsd_parser {
	uint64_t base;
	int wrong;
};

static void *parse_many(void *arg)
{
	struct bsd_parser *p = arg;
	char text[2048]; /* 16 CPUs of 5 numbers of up to 8 digits */
	size_t n = 0;

	for (int c = 0; c < 16; c++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%llu %llu %llu %llu %llu ",
				      (unsigned long long)p->base, (unsigned long long)p->base + 1,
				      (unsigned long long)p->base + 2, (unsigned long long)p->base + 3,
				      (unsigned long long)p->base + 4);
	snprintf(text + n, sizeof(text) - n, "\n");
	for (int i = 0; i < 20000; i++) {
		struct tb_sample_frame f;
		struct tb_error err = {0};

		if (tb_sample_parse(TB_SAMPLE_FREEBSD, text, &f, &err) != 0 || f.ncpu != 16)
			p->wrong++;
		else
			for (size_t c = 0; c < f.ncpu; c++)
				p->wrong += f.cpu[c].user != p->base || f.cpu[c].idle != p->base + 4;
	}
	return NULL;
}

static void test_freebsd_parsers_at_once(void **state)
{
	struct bsd_parser a = {1000, 0}, b = {9000000, 0};
	pthread_t ta, tb;

	(void)state;
	assert_int_equal(pthread_create(&ta, NULL, parse_many, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, parse_many, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.wrong, 0);
	assert_int_equal(b.wrong, 0);
}

static void test_summary(void **state)
{
	json_t *samples = json_array(), *sum;

	(void)state;
	json_array_append_new(samples, json_loads("{\"cpu\":[{\"user\":10,\"system\":0,\"interrupt\":5,\"softirq\":5,"
						  "\"idle\":80},{\"user\":0,\"system\":0,\"interrupt\":0,\"softirq\":"
						  "0,\"idle\":100}],\"busiest\":0,\"mem\":{\"used_pct\":20.5}}",
						  0, NULL));
	json_array_append_new(samples,
			      json_loads("{\"cpu\":[{\"user\":50,\"system\":10,\"interrupt\":0,\"softirq\":"
					 "0,\"idle\":40},{\"user\":10,\"system\":0,\"interrupt\":0,"
					 "\"softirq\":10,\"idle\":80}],\"busiest\":0,\"mem\":{\"used_pct\":30.25}}",
					 0, NULL));
	sum = tb_sample_summary(samples);
	assert_non_null(sum);
	assert_int_equal(json_integer_value(json_object_get(sum, "samples")), 2);
	assert_int_equal(json_integer_value(json_object_get(sum, "busiest")), 0);
	assert_true(json_number_value(json_object_get(json_array_get(json_object_get(sum, "cpu"), 0), "busy_mean")) ==
		    40.0);
	assert_true(json_number_value(json_object_get(json_array_get(json_object_get(sum, "cpu"), 0), "busy_max")) ==
		    60.0);
	/* (5 + 5 + 10) of (20 + 60 + 0 + 20) busy */
	assert_true(json_number_value(json_object_get(sum, "interrupt_share")) == 20.0);
	assert_true(json_number_value(json_object_get(sum, "mem_used_max_pct")) == 30.25);
	json_decref(sum);
	json_decref(samples);
	samples = json_array();
	assert_null(tb_sample_summary(samples));
	json_decref(samples);
}

static void count_event(void *cls, const struct tb_event_row *ev)
{
	json_t *ids = cls;

	json_array_append_new(ids, json_integer(ev->id));
}

static void take_run_id(void *cls, const struct tb_run_row *r)
{
	((int64_t *)cls)[r->seq] = r->id;
}

/* A run's samples are its matrix's run.sample events of that run, oldest
 * first: not another run's of the same matrix, not another matrix's, not
 * another type's (tb_store_run_events, through events_by_matrix). */
static void test_sample_events_of_a_run(void **state)
{
	struct tb_test_store ts;
	struct tb_matrix_row m = {.name = "m", .spec = "{}", .state = "queued", .actor = "admin", .created_at = 1};
	struct tb_run_row runs[2];
	struct tb_error err = {0};
	int64_t mx[2], rid[2][2];
	json_t *ids = json_array();
	char text[160];

	(void)state;
	tb_test_store_open(&ts, "runsample");
	for (int i = 0; i < 2; i++)
		runs[i] = (struct tb_run_row){.seq = i,
					      .repeat = i,
					      .client = "left",
					      .server = "right",
					      .link = "lan",
					      .server_address = "198.18.1.2",
					      .protocol = "tcp",
					      .direction = "forward",
					      .params = "{}"};
	for (int k = 0; k < 2; k++) {
		assert_int_equal(tb_store_matrix_insert(ts.st, &m, runs, 2, &mx[k], &err), 0);
		assert_int_equal(tb_store_run_each(ts.st, mx[k], NULL, take_run_id, rid[k], &err), 0);
	}
	/* ids 1..12: each run of each matrix gets three, interleaved, and a
	 * run.done of run rid[0][0] between */
	for (int64_t id = 1, i = 0; i < 3; i++)
		for (int k = 0; k < 2; k++)
			for (int r = 0; r < 2; r++, id++) {
				struct tb_event_row row = {.id = id,
							   .at = 1,
							   .type = "run.sample",
							   .host = "left",
							   .matrix = mx[k],
							   .json = text};

				snprintf(text, sizeof(text), "{\"data\":{\"run\":%lld,\"host\":\"left\"}}",
					 (long long)rid[k][r]);
				assert_int_equal(tb_store_event_insert(ts.st, &row, &err), 0);
			}
	{
		struct tb_event_row row = {.id = 100, .at = 1, .type = "run.done", .matrix = mx[0], .json = text};

		snprintf(text, sizeof(text), "{\"data\":{\"run\":%lld}}", (long long)rid[0][0]);
		assert_int_equal(tb_store_event_insert(ts.st, &row, &err), 0);
	}
	assert_int_equal(tb_store_run_events(ts.st, rid[1][0], "run.sample", count_event, ids, &err), 0);
	assert_int_equal(json_array_size(ids), 3);
	assert_int_equal(json_integer_value(json_array_get(ids, 0)), 3);
	assert_int_equal(json_integer_value(json_array_get(ids, 1)), 7);
	assert_int_equal(json_integer_value(json_array_get(ids, 2)), 11);
	json_array_clear(ids);
	assert_int_equal(tb_store_run_events(ts.st, rid[0][0], "run.sample", count_event, ids, &err), 0);
	assert_int_equal(json_array_size(ids), 3); /* not the run.done */
	json_array_clear(ids);
	assert_int_equal(tb_store_run_events(ts.st, 99, "run.sample", count_event, ids, &err), 0);
	assert_int_equal(json_array_size(ids), 0);
	json_decref(ids);
	tb_test_store_remove(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_stream),
		cmocka_unit_test(test_freebsd_frames),
		cmocka_unit_test(test_freebsd_parsers_at_once),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_sample_events_of_a_run),
	};

	return cmocka_run_group_tests_name("run_sample", tests, NULL, NULL);
}
