/* hostd: the "hardware" of one simulated host (deploy/sim).
 *
 * Runs inside the host's network + mount namespace for the host's whole life and
 * is the only process left when the host is off.  It
 *  - listens for Wake-on-LAN magic packets with an AF_PACKET socket (an off host has
 *    no address): 6 x 0xff then the MAC 16 times anywhere in a frame, so UDP to port
 *    9/7 (any destination) and raw EtherType 0x0842 frames (etherwake) all count;
 *    optional SecureOn password (the 4 or 6 bytes right after the 16th MAC);
 *  - reads power commands (one word per line) from a FIFO (the BMC hook and the
 *    persona's reboot/poweroff wrappers write there);
 *  - runs them one at a time as `HOSTCTL... WORD` children, and is a child subreaper
 *    so every process of the host is its descendant and gets reaped at once;
 *  - with -t DIR, is the host's serial port: it holds a pty (DIR/tty links to its
 *    slave, which ser2net opens in the root namespace), copies what the host prints
 *    (written to the FIFO DIR/out by hostctl.sh) to it, and reads what is typed:
 *    Ctrl-C creates DIR/intr (a hung boot waits for it), anything else is echoed;
 *    while GRUB's menu waits (DIR/menu exists) the bytes go to DIR/in instead.
 *
 * usage: hostd -i IFACE -m MAC -f FIFO [-n IGNORE] [-s SECUREON] [-c FIRST] [-t DIR] -- HOSTCTL [ARGS...]
 * (-c FIRST: run that command at start, e.g. boot)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <termios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QMAX 16

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

static void logmsg(const char *fmt, ...)
{
	char ts[32];
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	struct tm tm;
	gmtime_r(&t.tv_sec, &tm);
	strftime(ts, sizeof ts, "%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld hostd[%d]: ", ts, t.tv_nsec / 1000000, (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static int parse_hex(const char *s, unsigned char *out, int max)
{
	int n = 0;
	while (*s) {
		if (*s == ':' || *s == '-') { s++; continue; }
		unsigned v;
		if (n >= max || sscanf(s, "%2x", &v) != 1 || !s[1]) return -1;
		out[n++] = (unsigned char)v;
		s += 2;
	}
	return n;
}

static char queue[QMAX][16];
static int qlen;

static void enqueue(const char *w)
{
	for (int i = 0; i < qlen; i++)
		if (!strcmp(queue[i], w) && !strcmp(w, "wake")) return; /* one wake is enough */
	if (qlen == QMAX) { logmsg("queue full, dropping %s", w); return; }
	snprintf(queue[qlen++], sizeof queue[0], "%s", w);
}

/* The serial port: a pty whose slave ser2net opens.  We keep a slave fd open
 * ourselves so that the master never reads EIO while nobody is attached. */
static int con_master = -1, con_slave = -1, con_out = -1;
static char con_dir[512];

static int console_open(const char *dir)
{
	char path[600];
	struct termios t;
	snprintf(con_dir, sizeof con_dir, "%s", dir);
	con_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (con_master < 0 || grantpt(con_master) != 0 || unlockpt(con_master) != 0) return -1;
	const char *pts = ptsname(con_master);
	if (!pts) return -1;
	con_slave = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (con_slave < 0 || tcgetattr(con_slave, &t) != 0) return -1;
	cfmakeraw(&t);
	cfsetispeed(&t, B115200);
	cfsetospeed(&t, B115200);
	tcsetattr(con_slave, TCSANOW, &t);
	fcntl(con_master, F_SETFL, O_NONBLOCK);
	snprintf(path, sizeof path, "%s/out", dir);
	con_out = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (con_out < 0) return -1;
	snprintf(path, sizeof path, "%s/tty", dir);
	unlink(path);
	if (symlink(pts, path) != 0) return -1;
	logmsg("console on %s", pts);
	return 0;
}

/* best effort: a full pty (nobody reading) drops output, as a serial line would */
static void con_write(const void *b, size_t n)
{
	if (con_master >= 0 && write(con_master, b, n) < 0 && errno != EAGAIN) logmsg("console write: %s", strerror(errno));
}

/* GRUB's menu is up (hostctl.sh made DIR/menu): what is typed goes to DIR/in
 * for it to read, not echoed (GRUB does not echo).  1 when it went there. */
static int con_menu_keys(const unsigned char *b, size_t n)
{
	char path[600];
	snprintf(path, sizeof path, "%s/menu", con_dir);
	if (access(path, F_OK) != 0) return 0;
	snprintf(path, sizeof path, "%s/in", con_dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n) logmsg("console: menu keys to %s: %s", path, strerror(errno));
	if (fd >= 0) close(fd);
	logmsg("console: %zu bytes for GRUB's menu", n);
	return 1;
}

static void con_typed(const unsigned char *b, size_t n)
{
	if (con_menu_keys(b, n)) return;
	for (size_t i = 0; i < n; i++) {
		if (b[i] == 3) {
			char path[600];
			snprintf(path, sizeof path, "%s/intr", con_dir);
			int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0) close(fd);
			con_write("^C\r\n", 4);
			logmsg("console: Ctrl-C");
		} else if (b[i] == '\r' || b[i] == '\n') {
			con_write("\r\n", 2);
		} else {
			con_write(b + i, 1);
		}
	}
}

int main(int argc, char **argv)
{
	const char *ifname = NULL, *fifo = NULL, *first = NULL, *condir = NULL;
	unsigned char mac[6], pw[6];
	int have_mac = 0, pwlen = 0;
	long ignore = 0;
	int c;
	while ((c = getopt(argc, argv, "i:m:f:n:s:c:t:")) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'm': if (parse_hex(optarg, mac, 6) != 6) { fprintf(stderr, "hostd: bad MAC %s\n", optarg); return 2; } have_mac = 1; break;
		case 'f': fifo = optarg; break;
		case 'c': first = optarg; break;
		case 't': condir = optarg; break;
		case 'n': ignore = strtol(optarg, NULL, 10); break;
		case 's': pwlen = parse_hex(optarg, pw, 6); if (pwlen != 4 && pwlen != 6) { fprintf(stderr, "hostd: SecureOn password must be 4 or 6 bytes\n"); return 2; } break;
		default: return 2;
		}
	}
	if (!ifname || !fifo || !have_mac || optind >= argc) {
		fprintf(stderr, "usage: hostd -i IFACE -m MAC -f FIFO [-n IGNORE] [-s SECUREON] [-c FIRST] [-t DIR] -- HOSTCTL [ARGS...]\n");
		return 2;
	}
	char **cmd = argv + optind;
	int ncmd = argc - optind;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct sigaction sa = {0};
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int ps = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (ps < 0) { perror("hostd: socket(AF_PACKET)"); return 1; }
	struct sockaddr_ll sll = {0};
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) { fprintf(stderr, "hostd: no interface %s\n", ifname); return 1; }
	if (bind(ps, (struct sockaddr *)&sll, sizeof sll) < 0) { perror("hostd: bind"); return 1; }

	int ff = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (ff < 0) { fprintf(stderr, "hostd: open %s: %s\n", fifo, strerror(errno)); return 1; }

	if (condir && console_open(condir) != 0) { fprintf(stderr, "hostd: console in %s: %s\n", condir, strerror(errno)); return 1; }

	unsigned char pat[102];
	memset(pat, 0xff, 6);
	for (int i = 0; i < 16; i++) memcpy(pat + 6 + 6 * i, mac, 6);

	logmsg("listening on %s for %02x:%02x:%02x:%02x:%02x:%02x%s, ignoring the first %ld",
	       ifname, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], pwlen ? " (SecureOn)" : "", ignore);

	if (first) enqueue(first);
	pid_t child = 0;
	char linebuf[256];
	size_t linelen = 0;
	unsigned char frame[65536];
	while (!stop) {
		/* reap: our command child, and any orphan of the host (we are its subreaper) */
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == child) child = 0;
		if (!child && qlen) {
			char word[16];
			memcpy(word, queue[0], sizeof word);
			memmove(queue[0], queue[1], sizeof queue[0] * (size_t)--qlen);
			char **av = calloc((size_t)ncmd + 2, sizeof *av);
			for (int i = 0; i < ncmd; i++) av[i] = cmd[i];
			av[ncmd] = word;
			child = fork();
			if (child == 0) {
				signal(SIGTERM, SIG_DFL);
				signal(SIGINT, SIG_DFL);
				signal(SIGPIPE, SIG_DFL);
				execv(av[0], av);
				_exit(127);
			}
			if (child < 0) { logmsg("fork: %s", strerror(errno)); child = 0; }
			else logmsg("running %s (pid %d)", word, (int)child);
			free(av);
		}
		struct pollfd pfd[4] = {{ps, POLLIN, 0}, {ff, POLLIN, 0}, {con_out, POLLIN, 0}, {con_master, POLLIN, 0}};
		if (poll(pfd, con_master >= 0 ? 4 : 2, 100) < 0) continue;
		if (con_master >= 0 && (pfd[2].revents & POLLIN)) {
			unsigned char cb[4096];
			ssize_t n = read(con_out, cb, sizeof cb);
			if (n > 0) con_write(cb, (size_t)n);
		}
		if (con_master >= 0 && (pfd[3].revents & POLLIN)) {
			unsigned char cb[512];
			ssize_t n = read(con_master, cb, sizeof cb);
			if (n > 0) con_typed(cb, (size_t)n);
		}
		if (pfd[0].revents & POLLIN) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(ps, frame, sizeof frame, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			if (n > 0 && from.sll_pkttype != PACKET_OUTGOING) {
				unsigned char *hit = memmem(frame, (size_t)n, pat, sizeof pat);
				if (hit) {
					size_t after = (size_t)n - (size_t)(hit - frame) - sizeof pat;
					if (pwlen && (after < (size_t)pwlen || memcmp(hit + sizeof pat, pw, (size_t)pwlen))) {
						logmsg("magic packet with a wrong or missing SecureOn password: ignored");
					} else if (ignore > 0) {
						ignore--;
						logmsg("magic packet ignored (fault option), %ld more to ignore", ignore);
					} else {
						logmsg("magic packet (proto 0x%04x)", ntohs(from.sll_protocol));
						enqueue("wake");
					}
				}
			}
		}
		if (pfd[1].revents & POLLIN) {
			ssize_t n = read(ff, linebuf + linelen, sizeof linebuf - linelen);
			if (n > 0) {
				linelen += (size_t)n;
				char *nl;
				while ((nl = memchr(linebuf, '\n', linelen))) {
					*nl = 0;
					int ok = nl > linebuf && nl - linebuf < 16;
					for (char *q = linebuf; q < nl; q++)
						if (*q < 'a' || *q > 'z') ok = 0;
					if (ok) enqueue(linebuf);
					else logmsg("bad command on the control FIFO");
					size_t used = (size_t)(nl - linebuf) + 1;
					memmove(linebuf, nl + 1, linelen - used);
					linelen -= used;
				}
				if (linelen == sizeof linebuf) linelen = 0;
			}
		}
	}
	logmsg("stopping");
	return 0;
}
