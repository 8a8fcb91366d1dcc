/*
 * test_probe_order.c - a probe that started before the one whose result is
 * recorded must not overwrite it (seen on the demo: after a power cycle the
 * action's probe saw the host up, then the prober's older probe, stalled in
 * its connect timeout while the host booted, ended and published "down").
 *
 * Real daemon, real sshd.  Between them a relay of the test's own on
 * 127.0.0.1: it holds the first connection it accepts silent (no SSH
 * banner: that probe waits out the inventory's connect_timeout_s, like a
 * host still booting) and copies every later connection to and from sshd.
 * The daemon's first prober round begins at start and takes connection 1;
 * then a power "on" action probes through connection 2 and records "up".
 * When the daemon has given up on connection 1, the host.state events must
 * not show "down" after "up", and once the daemon stopped (its prober round
 * joined) the stored state must still be "up".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "error.h"
#include "sshd.h"
#include "ssestream.h"
#include "store.h"

#define MAX_PIPES 32

struct relay {
	int lfd;
	unsigned int port, to_port;
	pthread_t thread;
	pthread_mutex_t lock;
	int stop;
	int accepted;    /* connections accepted */
	int held_closed; /* the held first connection was closed by the daemon */
	pthread_t pipes[MAX_PIPES];
	int npipes;
};

struct pipe_arg {
	struct relay *r;
	int a, b;
};

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int stopping(struct relay *r)
{
	int s;

	pthread_mutex_lock(&r->lock);
	s = r->stop;
	pthread_mutex_unlock(&r->lock);
	return s;
}

/* Copy bytes both ways until either side closes (or the relay stops). */
static void *pipe_main(void *arg)
{
	struct pipe_arg *p = arg;
	char buf[16384];

	while (!stopping(p->r)) {
		struct pollfd pf[2] = {{p->a, POLLIN, 0}, {p->b, POLLIN, 0}};
		int n = poll(pf, 2, 100), done = 0;

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && n > 0 && !done; i++) {
			ssize_t got;

			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(pf[i].fd, buf, sizeof(buf));
			if (got <= 0 || write(pf[1 - i].fd, buf, (size_t)got) != got)
				done = 1;
		}
		if (done)
			break;
	}
	close(p->a);
	close(p->b);
	free(p);
	return NULL;
}

static int connect_to(unsigned int port)
{
	struct sockaddr_in sin = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Accept: the first connection is held (read and dropped, never answered)
 * until its client closes it; every later one is piped to sshd. */
static void *relay_main(void *arg)
{
	struct relay *r = arg;
	int held = -1;

	while (!stopping(r)) {
		struct pollfd pf[2] = {{r->lfd, POLLIN, 0}, {held, POLLIN, 0}};
		int n = poll(pf, 2, 100);

		if (n <= 0)
			continue;
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[4096];

			if (read(held, buf, sizeof(buf)) <= 0) {
				close(held);
				held = -1;
				pthread_mutex_lock(&r->lock);
				r->held_closed = 1;
				pthread_mutex_unlock(&r->lock);
			}
		}
		if (pf[0].revents & POLLIN) {
			int c = accept(r->lfd, NULL, NULL), first;

			if (c < 0)
				continue;
			pthread_mutex_lock(&r->lock);
			first = r->accepted++ == 0;
			pthread_mutex_unlock(&r->lock);
			if (first) {
				held = c;
			} else {
				struct pipe_arg *p = malloc(sizeof(*p));
				int s = connect_to(r->to_port);

				if (p == NULL || s < 0 || r->npipes == MAX_PIPES) {
					free(p);
					close(c);
					if (s >= 0)
						close(s);
					continue;
				}
				p->r = r;
				p->a = c;
				p->b = s;
				if (pthread_create(&r->pipes[r->npipes], NULL, pipe_main, p) == 0) {
					r->npipes++;
				} else {
					close(c);
					close(s);
					free(p);
				}
			}
		}
	}
	if (held >= 0)
		close(held);
	return NULL;
}

static int relay_start(struct relay *r, unsigned int to_port)
{
	struct sockaddr_in sin = {0};
	socklen_t sl = sizeof(sin);

	memset(r, 0, sizeof(*r));
	r->to_port = to_port;
	pthread_mutex_init(&r->lock, NULL);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((r->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(r->lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(r->lfd, 16) != 0 || getsockname(r->lfd, (struct sockaddr *)&sin, &sl) != 0)
		return -1;
	r->port = ntohs(sin.sin_port);
	return pthread_create(&r->thread, NULL, relay_main, r) == 0 ? 0 : -1;
}

static void relay_stop(struct relay *r)
{
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	for (int i = 0; i < r->npipes; i++)
		pthread_join(r->pipes[i], NULL);
	close(r->lfd);
	pthread_mutex_destroy(&r->lock);
}

/* Wait (bounded by ms, not a measure) until *flag of r is at least want. */
static int relay_wait(struct relay *r, const int *flag, int want, long ms)
{
	long long end = tb_test_now_ms() + ms;

	for (;;) {
		int v;

		pthread_mutex_lock(&r->lock);
		v = *flag;
		pthread_mutex_unlock(&r->lock);
		if (v >= want)
			return 0;
		if (tb_test_now_ms() >= end)
			return -1;
		sleep_ms(50);
	}
}

static void stored_reach(void *cls, const struct tb_host_state_row *row)
{
	if (strcmp(row->machine, "left") == 0)
		snprintf(cls, 16, "%s", row->reachability);
}

static void test_older_probe_does_not_overwrite(void **state)
{
	struct tb_test_daemon d;
	struct tb_test_resp r;
	struct tb_test_stream s;
	struct tb_sshd sshd;
	struct relay rl;
	struct tb_store *store;
	struct tb_error e;
	char inv[2048], url[256], auth[200], hdr[256], st[32], reaches[64] = "", stored[16] = "", db[400];
	const char *h[] = {auth, "Content-Type: application/json", NULL};
	const char *extra[] = {"--probe-interval", "3600", NULL};
	const char *p, *first_up;
	long long id;

	(void)state;
	assert_int_equal(tb_sshd_start(&sshd, NULL), 0);
	assert_int_equal(relay_start(&rl, sshd.port), 0);
	snprintf(inv, sizeof(inv),
		 "version: 1\n"
		 "ssh: {user: %s, key_file: %s, connect_timeout_s: 3}\n"
		 "machines:\n"
		 "  left:\n"
		 "    role: host\n"
		 "    power:\n"
		 "      - driver: command\n"
		 "        on: [\"true\"]\n"
		 "        off: [\"true\"]\n"
		 "    os:\n"
		 "      ubuntu: {address: 127.0.0.1, port: %u, host_key: \"%s\"}\n",
		 sshd.user, sshd.client_key, rl.port, sshd.host_fp);
	if (tb_test_daemon_start(&d, inv, extra) != 0) {
		relay_stop(&rl);
		tb_sshd_stop(&sshd);
		fail_msg("testbedd did not start");
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", d.admin_token);

	/* the prober's first round is on connection 1, held */
	assert_int_equal(relay_wait(&rl, &rl.accepted, 1, 20000), 0);

	/* a newer probe, the action's, answers through connection 2 */
	snprintf(url, sizeof(url), "%s/api/v1/hosts/left/power", d.url);
	assert_int_equal(tb_test_http("POST", url, h, "{\"action\":\"on\"}", 15, &r), 0);
	if (r.status != 202)
		fail_msg("POST power on: %ld %s", r.status, r.body);
	id = (long long)json_integer_value(json_object_get(json_object_get(r.json, "action"), "id"));
	tb_test_resp_free(&r);
	if (tb_test_wait_action(&d, id, 30000, st, sizeof(st), &r) != 0 || strcmp(st, "succeeded") != 0)
		fail_msg("power on: %s %s", st, r.body);
	assert_non_null(strstr(r.body, "answers as ubuntu"));
	tb_test_resp_free(&r);

	/* the older probe gives up on connection 1 (its connect timeout) */
	assert_int_equal(relay_wait(&rl, &rl.held_closed, 1, 30000), 0);

	/* host.state events in order: no "down" after the first "up" (read
	 * for a bound: what the stale probe would publish comes at once) */
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", d.admin_token);
	tb_test_stream_open(&s, d.port, "/api/v1/events?type=host.state&since=0", hdr);
	tb_test_stream_read_until(&s, "\"reachability\":\"never\"", 2000);
	for (p = s.buf; p != NULL && (p = strstr(p, "\"reachability\":\"")) != NULL; p++) {
		p += strlen("\"reachability\":\"");
		if (strlen(reaches) + 2 < sizeof(reaches))
			strcat(reaches, strncmp(p, "up\"", 3) == 0 ? "u" : strncmp(p, "down\"", 5) == 0 ? "d" : "?");
	}
	tb_test_stream_close(&s);
	first_up = strstr(reaches, "u");
	print_message("host.state reachability (u: up, d: down, ?: other): %s\n", reaches);
	assert_non_null(first_up);
	if (strchr(first_up, 'd') != NULL)
		fail_msg("an older probe's \"down\" overwrote a newer \"up\": %s", reaches);

	/* stopped, the prober's round has surely ended: what it left stored */
	assert_int_equal(tb_test_daemon_kill(&d), 0);
	snprintf(db, sizeof(db), "%s/testbedd.db", d.state_dir);
	assert_int_equal(tb_store_open(db, &store, &e), 0);
	tb_store_host_state_each(store, stored_reach, stored);
	tb_store_close(store);
	assert_string_equal(stored, "up");

	relay_stop(&rl);
	tb_sshd_stop(&sshd);
	assert_int_equal(tb_test_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_older_probe_does_not_overwrite),
	};

	return cmocka_run_group_tests_name("probe_order", tests, NULL, NULL);
}
