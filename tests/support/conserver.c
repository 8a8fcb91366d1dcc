/* conserver.c - a console server on 127.0.0.1 for tests: see conserver.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conserver.h"

int tb_test_console_listen(unsigned int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

int tb_test_console_accept(int lfd)
{
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	int fd;

	assert_int_equal(poll(&p, 1, 15000), 1);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	return fd;
}

void tb_test_console_write(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}
