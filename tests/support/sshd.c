/* sshd.c - a real sshd on 127.0.0.1 for tests: see sshd.h. */
#include "sshd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "children.h"

#define SSHD_BIN "/usr/sbin/sshd"

static void msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int tb_run_capture(const char *const argv[], char *buf, size_t len)
{
	int fd[2] = {-1, -1};
	int status;
	size_t n = 0;
	pid_t pid;

	if (buf != NULL && pipe(fd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(buf != NULL ? fd[1] : null, 1);
		dup2(null, 2);
		if (buf != NULL) {
			close(fd[0]);
			close(fd[1]);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (buf != NULL) {
		close(fd[1]);
		for (;;) {
			char sink[256];
			ssize_t r;

			if (n + 1 < len)
				r = read(fd[0], buf + n, len - 1 - n);
			else
				r = read(fd[0], sink, sizeof(sink));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (n + 1 < len)
				n += (size_t)r;
		}
		buf[n] = '\0';
		close(fd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tb_process_alive(pid_t pid)
{
	char spid[32], out[64];
	const char *argv[] = {"ps", "-o", "stat=", "-p", spid, NULL};

	snprintf(spid, sizeof(spid), "%ld", (long)pid);
	if (tb_run_capture(argv, out, sizeof(out)) != 0)
		return 0;
	for (char *p = out; *p != '\0'; p++)
		if (*p != ' ')
			return *p != 'Z';
	return 0;
}

static int path(char *dst, const char *dir, const char *name)
{
	int n = snprintf(dst, TB_SSHD_PATH_MAX, "%s/%s", dir, name);

	return n > 0 && n < TB_SSHD_PATH_MAX ? 0 : -1;
}

static int keygen(const char *file, const char *comment)
{
	char pub[TB_SSHD_PATH_MAX + 8];
	const char *argv[] = {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file, NULL};

	snprintf(pub, sizeof(pub), "%s.pub", file);
	unlink(file);
	unlink(pub);
	if (tb_run_capture(argv, NULL, 0) != 0) {
		fprintf(stderr, "sshd helper: ssh-keygen -f %s failed\n", file);
		return -1;
	}
	return 0;
}

/* "256 SHA256:xxx comment (ED25519)" -> "SHA256:xxx" */
static int fingerprint(const char *pubfile, char *fp, size_t len)
{
	char out[512], *sp, *end;
	const char *argv[] = {"ssh-keygen", "-lf", pubfile, NULL};

	if (tb_run_capture(argv, out, sizeof(out)) != 0 || (sp = strchr(out, ' ')) == NULL)
		goto bad;
	sp++;
	end = strchr(sp, ' ');
	if (end == NULL || strncmp(sp, "SHA256:", 7) != 0 || (size_t)(end - sp) >= len)
		goto bad;
	memcpy(fp, sp, (size_t)(end - sp));
	fp[end - sp] = '\0';
	return 0;
bad:
	fprintf(stderr, "sshd helper: ssh-keygen -lf %s gave no fingerprint\n", pubfile);
	return -1;
}

static int copy_file(const char *from, const char *to)
{
	char buf[4096];
	size_t n;
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	int rc = 0;

	if (in == NULL || out == NULL)
		rc = -1;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		rc = -1;
	return rc;
}

static unsigned int free_port(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int port = 0;

	if (s < 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && getsockname(s, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(s);
	return port;
}

static int write_config(struct tb_sshd *d)
{
	FILE *f = fopen(d->config, "w");

	if (f == NULL)
		return -1;
	fprintf(f,
		"ListenAddress 127.0.0.1:%u\n"
		"HostKey %s\n"
		"PidFile none\n"
		"AuthorizedKeysFile %s/authorized_keys\n"
		"StrictModes no\n"
		"UsePAM no\n"
		"PubkeyAuthentication yes\n"
		"PasswordAuthentication no\n"
		"KbdInteractiveAuthentication no\n"
		"PermitRootLogin prohibit-password\n"
		"UseDNS no\n"
		"PrintMotd no\n"
		"LogLevel INFO\n"
		"SetEnv HOME=%s/home\n"
		"%s\n",
		d->port, d->host_key, d->dir, d->dir, d->extra);
	return fclose(f) == 0 ? 0 : -1;
}

/* Does the log contain s? */
static int log_has(const struct tb_sshd *d, const char *s)
{
	char buf[16384];
	size_t n;
	FILE *f = fopen(d->log, "r");

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, s) != NULL;
}

static void print_log(const struct tb_sshd *d)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(d->log, "r");

	if (f == NULL)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	fprintf(stderr, "sshd helper: sshd log:\n%s\n", buf);
}

/* Start sshd on d->port; 0 when it listens, 1 when the port was taken. */
static int spawn_sshd(struct tb_sshd *d)
{
	char listening[96];
	int fd;
	pid_t pid;

	if (write_config(d) != 0) {
		fprintf(stderr, "sshd helper: cannot write %s\n", d->config);
		return -1;
	}
	fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		tb_test_child_init();
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		/* sshd re-execs itself and wants an absolute argv[0] */
		execl(SSHD_BIN, SSHD_BIN, "-D", "-e", "-f", d->config, (char *)NULL);
		_exit(127);
	}
	close(fd);
	d->pid = pid;
	tb_test_child_track(pid, "sshd");
	snprintf(listening, sizeof(listening), "Server listening on 127.0.0.1 port %u.", d->port);
	for (int i = 0; i < 1000; i++) { /* 10 s */
		int status;

		if (log_has(d, listening))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			tb_test_child_untrack(pid);
			d->pid = 0;
			if (log_has(d, "Address already in use"))
				return 1;
			print_log(d);
			return -1;
		}
		msleep(10);
	}
	fprintf(stderr, "sshd helper: sshd did not listen within 10 s\n");
	print_log(d);
	return -1;
}

/* pids of every descendant of root (not root), from `ps -A -o pid= -o ppid=`. */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	pid_t pids[4096], ppids[4096];
	size_t n = 0, nout = 0;
	long a, b;
	FILE *f = popen("ps -A -o pid= -o ppid=", "r");

	if (f == NULL)
		return 0;
	while (n < 4096 && fscanf(f, "%ld %ld", &a, &b) == 2) {
		pids[n] = (pid_t)a;
		ppids[n] = (pid_t)b;
		n++;
	}
	pclose(f);
	/* breadth-first over the parent links */
	for (size_t head = 0; head <= nout; head++) {
		pid_t parent = head == 0 ? root : out[head - 1];

		for (size_t i = 0; i < n && nout < max; i++)
			if (ppids[i] == parent && pids[i] != root)
				out[nout++] = pids[i];
	}
	return nout;
}

/* SIGSTOP pid and wait (up to 200 ms) until /proc says it is stopped: a fork
 * under way ends first, so its child is there to be found by the next listing. */
static void stop_and_wait(pid_t pid)
{
	char path[64], stat[512];

	kill(pid, SIGSTOP);
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	for (int i = 0; i < 100; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f != NULL ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
		const char *close;

		if (f != NULL)
			fclose(f);
		stat[n] = '\0';
		close = strrchr(stat, ')');
		if (close == NULL || close[1] == '\0' || strchr("TtZ", close[2]) != NULL)
			return;
		msleep(2);
	}
}

/* Freeze the tree round after round so that nothing escapes by forking or
 * reparenting (sshd's connection child forks the session after auth), then
 * kill it. */
static void kill_tree(pid_t root)
{
	pid_t found[512], all[512];
	size_t nall = 0;

	stop_and_wait(root);
	for (int round = 0; round < 10; round++) {
		size_t n = descendants(root, found, 512), added = 0;

		for (size_t i = 0; i < n; i++) {
			size_t j;

			for (j = 0; j < nall && all[j] != found[i]; j++)
				;
			if (j == nall && nall < 512) {
				all[nall++] = found[i];
				stop_and_wait(found[i]);
				added++;
			}
		}
		if (added == 0)
			break;
	}
	for (size_t i = 0; i < nall; i++)
		kill(all[i], SIGKILL);
	kill(root, SIGKILL);
}

static void stop_processes(struct tb_sshd *d)
{
	if (d->pid > 0) {
		kill_tree(d->pid);
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
		tb_test_child_untrack(d->pid);
		d->pid = 0;
	}
}

static int start_on_free_port(struct tb_sshd *d, unsigned int fixed_port)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		int rc;

		d->port = fixed_port != 0 ? fixed_port : free_port();
		if (d->port == 0)
			return -1;
		rc = spawn_sshd(d);
		if (rc <= 0)
			return rc;
		if (fixed_port != 0)
			msleep(200); /* same port: wait for it to be free */
	}
	fprintf(stderr, "sshd helper: no free port\n");
	return -1;
}

int tb_sshd_start(struct tb_sshd *d, const char *extra_config)
{
	char pub[TB_SSHD_PATH_MAX + 8], auth[TB_SSHD_PATH_MAX], home[TB_SSHD_PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	struct passwd *pw = getpwuid(getuid());
	struct stat st;

	memset(d, 0, sizeof(*d));
	if (pw == NULL) {
		fprintf(stderr, "sshd helper: who am I?\n");
		return -1;
	}
	snprintf(d->user, sizeof(d->user), "%s", pw->pw_name);
	snprintf(d->extra, sizeof(d->extra), "%s", extra_config != NULL ? extra_config : "");
	if (stat("/run/sshd", &st) != 0 && mkdir("/run/sshd", 0755) != 0) {
		fprintf(stderr, "sshd helper: mkdir /run/sshd: %s\n", strerror(errno));
		return -1;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/tb-sshd-XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(d->dir) == NULL) {
		fprintf(stderr, "sshd helper: mkdtemp %s: %s\n", d->dir, strerror(errno));
		d->dir[0] = '\0';
		return -1;
	}
	if (path(d->config, d->dir, "sshd_config") || path(d->log, d->dir, "sshd.log") ||
	    path(d->host_key, d->dir, "host_key") || path(d->client_key, d->dir, "client_key") ||
	    path(d->other_key, d->dir, "other_key") || path(auth, d->dir, "authorized_keys") ||
	    path(home, d->dir, "home"))
		goto fail;
	snprintf(pub, sizeof(pub), "%s.pub", d->client_key);
	if (mkdir(home, 0700) != 0 || keygen(d->host_key, "tb-test-host") != 0 ||
	    keygen(d->client_key, "tb-test-client") != 0 || keygen(d->other_key, "tb-test-other") != 0 ||
	    copy_file(pub, auth) != 0)
		goto fail;
	snprintf(pub, sizeof(pub), "%s.pub", d->host_key);
	if (fingerprint(pub, d->host_fp, sizeof(d->host_fp)) != 0)
		goto fail;
	if (start_on_free_port(d, 0) != 0)
		goto fail;
	return 0;
fail:
	tb_sshd_stop(d);
	return -1;
}

int tb_sshd_restart_new_host_key(struct tb_sshd *d)
{
	char pub[TB_SSHD_PATH_MAX + 8];
	unsigned int port = d->port;

	stop_processes(d);
	snprintf(pub, sizeof(pub), "%s.pub", d->host_key);
	if (keygen(d->host_key, "tb-test-host-2") != 0 || fingerprint(pub, d->host_fp, sizeof(d->host_fp)) != 0)
		return -1;
	return start_on_free_port(d, port);
}

void tb_sshd_stop(struct tb_sshd *d)
{
	stop_processes(d);
	if (d->dir[0] != '\0') {
		const char *argv[] = {"rm", "-rf", d->dir, NULL};

		/* the dir comes from mkdtemp: never empty, never "/" */
		if (strncmp(d->dir, "/", 2) != 0 && strstr(d->dir, "/tb-sshd-") != NULL)
			tb_run_capture(argv, NULL, 0);
		d->dir[0] = '\0';
	}
}
