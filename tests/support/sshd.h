/*
 * sshd.h - a real OpenSSH sshd on 127.0.0.1 for integration tests.
 *
 * tb_sshd_start() makes a fresh 0700 directory under $TMPDIR (or /tmp) with
 * an ed25519 host key, an authorized client key, a second client key that is
 * NOT authorized, a config and a log, then runs
 *	/usr/sbin/sshd -D -e -f DIR/sshd_config
 * listening on 127.0.0.1 on a free port, and returns once sshd logged that
 * it listens.  The login user is the current one (root on the project's
 * machines: PermitRootLogin prohibit-password), with HOME set to an empty
 * DIR/home so that no dotfile slows down or changes a command.
 *
 * Everything stays on 127.0.0.1.  Functions block (ssh-keygen, waiting for
 * sshd, ps) and print the reason for a failure on stderr; they return 0 or -1.
 * Needs /run/sshd (created 0755 if missing).  Not thread-safe.
 */
#ifndef TB_TEST_SSHD_H
#define TB_TEST_SSHD_H

#include <sys/types.h>

#define TB_SSHD_PATH_MAX 256

struct tb_sshd {
	char dir[TB_SSHD_PATH_MAX]; /* the 0700 temp dir; removed by stop */
	char config[TB_SSHD_PATH_MAX];
	char log[TB_SSHD_PATH_MAX]; /* sshd's stderr (-e) */
	char host_key[TB_SSHD_PATH_MAX];
	char client_key[TB_SSHD_PATH_MAX]; /* private key in authorized_keys */
	char other_key[TB_SSHD_PATH_MAX];  /* valid key, not authorized */
	char host_fp[128];                 /* "SHA256:..." as ssh-keygen -lf prints */
	char user[64];                     /* login name of the current user */
	unsigned int port;
	pid_t pid;        /* the listener, 0 when stopped */
	char extra[1024]; /* extra sshd_config lines */
};

/*
 * Start sshd.  extra_config (may be NULL) is appended to sshd_config, e.g.
 * "ForceCommand /usr/bin/tcsh -c \"$SSH_ORIGINAL_COMMAND\"\n" to test a csh
 * login shell.  On failure everything started is cleaned up.
 */
int tb_sshd_start(struct tb_sshd *d, const char *extra_config);

/*
 * Stop sshd and every process it started (sessions and their commands:
 * the whole process tree under the listener is frozen with SIGSTOP, then
 * killed with SIGKILL, by pid), then start it again on the same port with a
 * NEW host key; host_fp changes.  Client keys stay.
 */
int tb_sshd_restart_new_host_key(struct tb_sshd *d);

/* Kill sshd and its process tree (as above), wait for it, remove the dir.
 * Safe to call twice or after a failed start. */
void tb_sshd_stop(struct tb_sshd *d);

/*
 * Is pid a live process?  A zombie counts as gone (pid 1 reaps orphans late
 * on the project's machines).  Uses `ps -o stat= -p PID`.
 */
int tb_process_alive(pid_t pid);

/* Run argv (absolute path or PATH lookup), stdin /dev/null; stdout into buf
 * (NUL-terminated, truncated to len - 1) when buf != NULL; returns the exit
 * status, or -1 when it could not run or died by a signal. */
int tb_run_capture(const char *const argv[], char *buf, size_t len);

#endif /* TB_TEST_SSHD_H */
