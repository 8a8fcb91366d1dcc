/*
 * conserver.h - a console server on 127.0.0.1 for integration tests (what
 * ser2net is to the sim): the test listens, testbedd's console reader
 * connects, and the test writes what the "line" prints and reads what was
 * typed.  Every descriptor is close-on-exec, so that a close in the test
 * reaches the daemon (no child holds a copy).  Failures are cmocka failures.
 */
#ifndef TB_TEST_CONSERVER_H
#define TB_TEST_CONSERVER_H

/* Listen on 127.0.0.1, a free port (into *port); the listening socket. */
int tb_test_console_listen(unsigned int *port);
/* The daemon's connection to listening socket lfd (waits up to 15 s). */
int tb_test_console_accept(int lfd);
/* Write text (all of it) to connection fd. */
void tb_test_console_write(int fd, const char *text);

#endif
