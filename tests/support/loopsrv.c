/* loopsrv.c - the loopback listener of the test receivers: see loopsrv.h. */
#include "loopsrv.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Accept until stopped, polling every 100 ms for the stop flag. */
static void *accept_loop(void *arg)
{
	struct tb_loopsrv *s = arg;

	for (;;) {
		struct pollfd p = {s->fd, POLLIN, 0};
		int c;

		pthread_mutex_lock(&s->lock);
		if (s->stop) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		pthread_mutex_unlock(&s->lock);
		if (poll(&p, 1, 100) <= 0 || (c = accept(s->fd, NULL, NULL)) < 0)
			continue;
		pthread_mutex_lock(&s->lock);
		s->accepted++;
		pthread_mutex_unlock(&s->lock);
		s->serve(c, s->arg);
		close(c);
	}
}

int tb_loopsrv_start(struct tb_loopsrv *s, const char *name, tb_loopsrv_fn *serve, void *arg, unsigned int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	socklen_t al = sizeof(a);

	s->serve = serve;
	s->arg = arg;
	s->stop = 0;
	s->accepted = 0;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->fd, 16) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &al) != 0) {
		perror(name);
		if (s->fd >= 0)
			close(s->fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->thread, NULL, accept_loop, s) != 0) {
		perror(name);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		close(s->fd);
		return -1;
	}
	return 0;
}

size_t tb_loopsrv_get(struct tb_loopsrv *s, const size_t *count)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = *count;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int tb_loopsrv_wait(struct tb_loopsrv *s, const size_t *count, size_t n, long ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (*count < n && rc == 0)
		rc = pthread_cond_timedwait(&s->cond, &s->lock, &until);
	rc = *count >= n ? 0 : -1;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void tb_loopsrv_stop(struct tb_loopsrv *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	close(s->fd);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}
