/*
 * power_wol.c - the "wol" power driver: Wake-on-LAN magic packets.
 *
 * A magic packet is 6 x 0xff, the MAC 16 times (102 bytes), then an
 * optional SecureOn password of 4 or 6 bytes.  It can only switch a
 * machine on, and sending it proves nothing: the state machine (power.c)
 * resends it while it waits for the host to answer ssh.  Four ways:
 *
 *  - broadcast / directed: UDP to target:port from a socket bound to source
 *    (or to the IPv4 address of interface).  Never from an unbound socket:
 *    255.255.255.255 from an unbound socket leaves by the default route,
 *    not on the testbed's network (facts.md).  SO_BROADCAST is set for both
 *    ways, so "directed" may be a subnet broadcast or a unicast address
 *    (unicast to an off host needs a static neighbour entry upstream);
 *  - raw: an EtherType 0x0842 frame to the machine's MAC on interface
 *    (rawframe.h; needs CAP_NET_RAW);
 *  - relay: over ssh on the relay machine, `etherwake -i IFACE MAC` (the
 *    OpenWrt way) or `wakeonlan [-i TARGET] [-p PORT] MAC`.
 *
 * The SecureOn password is read from secureon_file at call time: 6 bytes as
 * aa:bb:cc:dd:ee:ff (or aa-bb-..., or 12 hex digits), 4 bytes as 8 hex
 * digits, aa:bb:cc:dd or a.b.c.d.  Through a relay it is given to etherwake
 * as `-p` and so is visible on the relay's command line while etherwake
 * runs (etherwake has no other way; the step says so); wakeonlan cannot send
 * one.  power.c therefore uses such a relay way only when no broadcast or
 * raw way of the machine went out.  Every copy of the password (the file's
 * text, the bytes, the packet, etherwake's argument) is wiped with
 * tb_wipe once sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hosts.h"
#include "power.h"
#include "wipe.h"
#include "proc.h"
#include "rawframe.h"
#include "ssh.h"
#include "validate.h"

#define WOL_ETHERTYPE 0x0842
#define MAGIC_MAX (6 + 16 * 6 + 6)
#define RELAY_TIMEOUT_MS 15000L

/* "aa:bb:cc:dd:ee:ff" into 6 bytes; 0 or -1. */
static int parse_mac(const char *s, unsigned char mac[6])
{
	if (s == NULL || !tb_valid_mac(s) || strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++) {
		int h = tb_hexval(s[3 * i]), l = tb_hexval(s[3 * i + 1]);

		if (h < 0 || l < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -1;
		mac[i] = (unsigned char)(h * 16 + l);
	}
	return 0;
}

/*
 * A SecureOn password as text (see the top of the file) into 4 or 6 bytes.
 * Returns the length, or -1.
 */
static int parse_secureon(const char *s, unsigned char out[6])
{
	int n = 0, dots = 0, digits = 0;
	const char *p;

	/* a.b.c.d, 4 decimal bytes (etherwake's form) */
	for (p = s; *p != '\0'; p++)
		dots += *p == '.';
	if (dots == 3) {
		unsigned int v = 0;

		for (p = s;; p++) {
			if (*p >= '0' && *p <= '9') {
				v = v * 10 + (unsigned int)(*p - '0');
				if (v > 255 || ++digits > 3)
					return -1;
			} else if ((*p == '.' || *p == '\0') && digits > 0) {
				out[n++] = (unsigned char)v;
				v = 0;
				digits = 0;
				if (*p == '\0')
					break;
			} else {
				return -1;
			}
		}
		return n == 4 ? 4 : -1;
	}
	/* hex pairs, optionally separated by ':' or '-' */
	for (p = s; *p != '\0';) {
		int h = tb_hexval(p[0]), l = h >= 0 ? tb_hexval(p[1]) : -1;

		if (h < 0 || l < 0 || n == 6)
			return -1;
		out[n++] = (unsigned char)(h * 16 + l);
		p += 2;
		if ((*p == ':' || *p == '-') && p[1] != '\0')
			p++;
	}
	return n == 4 || n == 6 ? n : -1;
}

/* Read secureon_file; *len 0 when the method has none. */
static int read_secureon(const struct tb_power_call *call, unsigned char pw[6], int *len, struct tb_error *err)
{
	const char *path = call->pm->secureon_file;
	char buf[64];
	ssize_t n;
	int fd;

	*len = 0;
	if (path == NULL)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tb_fail(err, TB_ERR_CONFIG, "secureon_file",
			       "%s: cannot read the SecureOn password file %s: %s; testbedd needs to "
			       "read it (mode 0600, owned by testbedd's user)",
			       call->m->name, path, strerror(errno));
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return tb_fail(err, TB_ERR_CONFIG, "secureon_file", "%s: cannot read %s: %s", call->m->name, path,
			       strerror(errno));
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	*len = parse_secureon(buf, pw);
	tb_wipe(buf, sizeof(buf));
	if (*len < 0) {
		*len = 0;
		return tb_fail(err, TB_ERR_CONFIG, "secureon_file",
			       "%s: the SecureOn password file %s must hold 6 bytes as aa:bb:cc:dd:ee:ff "
			       "(or 12 hex digits) or 4 bytes as 8 hex digits or a.b.c.d",
			       call->m->name, path);
	}
	return 0;
}

/* The magic packet for mac (+ SecureOn) into buf; returns its length. */
static size_t magic_packet(const unsigned char mac[6], const unsigned char *pw, int pwlen, unsigned char buf[MAGIC_MAX])
{
	size_t n = 0;

	memset(buf, 0xff, 6);
	n = 6;
	for (int i = 0; i < 16; i++, n += 6)
		memcpy(buf + n, mac, 6);
	if (pwlen > 0) {
		memcpy(buf + n, pw, (size_t)pwlen);
		n += (size_t)pwlen;
	}
	return n;
}

static void step(const struct tb_power_call *call, const char *what, const char *command, int status,
		 const char *output)
{
	if (call->step != NULL)
		call->step(call->step_cls, what, command, status, output);
}

/* The IPv4 address of interface ifname into sin; 0 or -1. */
static int interface_address(const char *ifname, struct sockaddr_in *sin)
{
	struct ifaddrs *ifa, *i;
	int rc = -1;

	if (getifaddrs(&ifa) != 0)
		return -1;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, ifname) != 0)
			continue;
		memcpy(sin, i->ifa_addr, sizeof(*sin));
		sin->sin_port = 0;
		rc = 0;
		break;
	}
	freeifaddrs(ifa);
	return rc;
}

static int send_udp(const struct tb_power_call *call, const char *macs, const unsigned char *pkt, size_t len,
		    int secureon, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const char *mname = call->m->name, *way = pm->via == TB_WOL_BROADCAST ? "broadcast" : "directed";
	struct addrinfo hints, *dst = NULL, *src = NULL;
	struct sockaddr_in ifsin;
	char port[8], from[INET6_ADDRSTRLEN + 40], what[400];
	int fd = -1, one = 1, rc = 0, grc;
	ssize_t n;

	if (pm->target == NULL || !tb_valid_address(pm->target))
		return tb_fail(err, TB_ERR_CONFIG, "target",
			       "%s: Wake-on-LAN via %s needs a target "
			       "address",
			       mname, way);
	if (pm->source == NULL && pm->interface == NULL && pm->via == TB_WOL_BROADCAST)
		return tb_fail(err, TB_ERR_CONFIG, "source",
			       "%s: Wake-on-LAN via broadcast needs source (an address of the testbedd "
			       "machine on the testbed's network) or interface: unbound, a broadcast "
			       "leaves by the default route",
			       mname);
	snprintf(port, sizeof(port), "%u", pm->port != 0 ? pm->port : 9u);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if ((grc = getaddrinfo(pm->target, port, &hints, &dst)) != 0)
		return tb_fail(err, TB_ERR_CONFIG, "target",
			       "%s: cannot resolve the Wake-on-LAN target "
			       "%s: %s",
			       mname, pm->target, gai_strerror(grc));
	fd = socket(dst->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = tb_fail(err, TB_ERR_IO, NULL, "%s: cannot open a UDP socket: %s", mname, strerror(errno));
		goto out;
	}
	if (dst->ai_family == AF_INET && setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) != 0) {
		rc = tb_fail(err, TB_ERR_IO, NULL, "%s: SO_BROADCAST: %s", mname, strerror(errno));
		goto out;
	}
	if (pm->source != NULL) {
		hints.ai_family = dst->ai_family;
		hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
		if ((grc = getaddrinfo(pm->source, NULL, &hints, &src)) != 0) {
			rc = tb_fail(err, TB_ERR_CONFIG, "source",
				     "%s: the Wake-on-LAN source %s is not "
				     "an address of the target's family: %s",
				     mname, pm->source, gai_strerror(grc));
			goto out;
		}
		if (bind(fd, src->ai_addr, src->ai_addrlen) != 0) {
			rc = tb_fail(err, TB_ERR_CONFIG, "source",
				     "%s: cannot send Wake-on-LAN from %s: %s; source must be an address "
				     "of the testbedd machine",
				     mname, pm->source, strerror(errno));
			goto out;
		}
		snprintf(from, sizeof(from), " from %s", pm->source);
	} else if (pm->interface != NULL) {
		char a[INET_ADDRSTRLEN];

		if (dst->ai_family != AF_INET || interface_address(pm->interface, &ifsin) != 0) {
			rc = tb_fail(err, TB_ERR_CONFIG, "interface",
				     "%s: the interface %s has no IPv4 address on the testbedd machine "
				     "to send Wake-on-LAN from; give source",
				     mname, pm->interface);
			goto out;
		}
		if (bind(fd, (struct sockaddr *)&ifsin, sizeof(ifsin)) != 0) {
			rc = tb_fail(err, TB_ERR_IO, "interface", "%s: bind to %s's address: %s", mname, pm->interface,
				     strerror(errno));
			goto out;
		}
		inet_ntop(AF_INET, &ifsin.sin_addr, a, sizeof(a));
		snprintf(from, sizeof(from), " from %s (%s)", a, pm->interface);
	} else {
		from[0] = '\0'; /* directed unicast: the route decides, as for any packet */
	}
	n = sendto(fd, pkt, len, 0, dst->ai_addr, dst->ai_addrlen);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? errno : EIO;

		rc = tb_fail(err, e == ENETUNREACH || e == EHOSTUNREACH ? TB_ERR_UNREACHABLE : TB_ERR_IO, "target",
			     "%s: sending the Wake-on-LAN packet to %s:%s%s failed: %s", mname, pm->target, port, from,
			     strerror(e));
		goto out;
	}
	snprintf(what, sizeof(what), "UDP magic packet%s for %s to %s:%s%s",
		 secureon ? " (with SecureOn password)" : "", macs, pm->target, port, from);
	step(call, what, NULL, -1, NULL);
out:
	if (fd >= 0)
		close(fd);
	if (dst != NULL)
		freeaddrinfo(dst);
	if (src != NULL)
		freeaddrinfo(src);
	return rc;
}

static int send_raw(const struct tb_power_call *call, const char *macs, const unsigned char mac[6],
		    const unsigned char *pkt, size_t len, int secureon, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	struct tb_error e = {0};
	char what[300];
	int rc;

	if (pm->interface == NULL || !tb_valid_ifname(pm->interface))
		return tb_fail(err, TB_ERR_CONFIG, "interface",
			       "%s: Wake-on-LAN via raw needs the "
			       "interface to send on",
			       call->m->name);
	rc = tb_rawframe_send(pm->interface, mac, WOL_ETHERTYPE, pkt, len, &e);
	if (rc != 0)
		return tb_fail(err, rc, e.field, "%s: Wake-on-LAN raw frame on %s: %s", call->m->name, pm->interface,
			       e.message);
	snprintf(what, sizeof(what), "raw Ethernet magic packet (EtherType 0x0842)%s for %s to %s on %s",
		 secureon ? " (with SecureOn password)" : "", macs, macs, pm->interface);
	step(call, what, NULL, -1, NULL);
	return 0;
}

/* The relay machine and the ssh target of its persona that the prober
 * last saw answer (a multi-boot relay; else its first), with the pin in
 * force (a key an admin accepted over the inventory's). */
static int relay_target(const struct tb_power_call *call, const struct tb_machine **relay, struct tb_ssh_target *t,
			char *pin, size_t pinlen, struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	const struct tb_persona *p;

	if (call->inv == NULL || pm->relay == NULL || (*relay = tb_inventory_find(call->inv, pm->relay)) == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "relay",
			       "%s: the Wake-on-LAN relay %s is not a "
			       "machine of the inventory",
			       call->m->name, pm->relay != NULL ? pm->relay : "(none)");
	p = call->relay_os != NULL ? tb_machine_persona(*relay, call->relay_os) : NULL;
	if (p == NULL)
		p = (*relay)->nos > 0 ? &(*relay)->os[0] : NULL;
	if (p == NULL)
		return tb_fail(err, TB_ERR_CONFIG, "relay",
			       "%s: the Wake-on-LAN relay %s has no OS "
			       "to log in to",
			       call->m->name, (*relay)->name);
	if (call->hosts != NULL) {
		tb_hosts_target(call->hosts, *relay, p, t, pin, pinlen);
		return 0;
	}
	memset(t, 0, sizeof(*t));
	t->machine = (*relay)->name;
	t->os = p->os;
	t->address = p->address;
	t->port = p->port;
	t->user = p->user;
	t->key_file = p->key_file;
	t->pinned_fp = p->host_key;
	t->connect_timeout_s = p->connect_timeout_s;
	return 0;
}

/* The relay's command line, from validated parts only (the inventory
 * checked them; again here, since they reach a remote shell's command
 * line): etherwake (with -p PASSWORD into pwtext, 20 bytes) or wakeonlan.
 * The number of words, or -1 with err. */
static int relay_argv(const struct tb_power_call *call, const struct tb_machine *relay, const char *macs,
		      const unsigned char *pw, int pwlen, const char *argv[12], char *pwtext, char *port,
		      struct tb_error *err)
{
	const struct tb_power_method *pm = call->pm;
	int n = 0;

	if (pm->command == NULL || strcmp(pm->command, "etherwake") == 0) {
		if (pm->interface == NULL || !tb_valid_ifname(pm->interface) || pm->interface[0] == '-')
			return tb_fail(err, TB_ERR_CONFIG, "interface",
				       "%s: etherwake on the relay %s "
				       "needs the relay's interface (e.g. br-lan)",
				       call->m->name, relay->name),
			       -1;
		argv[n++] = "etherwake";
		argv[n++] = "-i";
		argv[n++] = pm->interface;
		if (pwlen > 0) {
			size_t o = 0;

			for (int i = 0; i < pwlen; i++)
				o += (size_t)snprintf(pwtext + o, 20 - o, i ? ":%02x" : "%02x", pw[i]);
			if (pwlen == 4)
				snprintf(pwtext, 20, "%u.%u.%u.%u", pw[0], pw[1], pw[2], pw[3]);
			argv[n++] = "-p";
			argv[n++] = pwtext;
		}
	} else if (strcmp(pm->command, "wakeonlan") == 0) {
		if (pwlen > 0)
			return tb_fail(err, TB_ERR_CONFIG, "secureon_file",
				       "%s: wakeonlan cannot send a "
				       "SecureOn password; use command: etherwake on the relay",
				       call->m->name),
			       -1;
		argv[n++] = "wakeonlan";
		if (pm->target != NULL) {
			if (!tb_valid_address(pm->target) || pm->target[0] == '-')
				return tb_fail(err, TB_ERR_CONFIG, "target", "%s: bad Wake-on-LAN target",
					       call->m->name),
				       -1;
			argv[n++] = "-i";
			argv[n++] = pm->target;
		}
		if (pm->port != 0 && pm->port != 9) {
			snprintf(port, 8, "%u", pm->port);
			argv[n++] = "-p";
			argv[n++] = port;
		}
	} else {
		return tb_fail(err, TB_ERR_CONFIG, "command",
			       "%s: the Wake-on-LAN relay command must be "
			       "etherwake or wakeonlan",
			       call->m->name),
		       -1;
	}
	argv[n++] = macs;
	argv[n] = NULL;
	return n;
}

/* What the step shows: "ssh root@ADDR etherwake -i mgmt0 MAC", the
 * SecureOn password as ***.  malloc'd, NULL when out of memory. */
static char *relay_shown(const struct tb_ssh_target *t, const char *const argv[], const char *pwtext)
{
	const char *shown[16];
	char sshdest[300], port[8];
	size_t k = 0;

	snprintf(sshdest, sizeof(sshdest), "%s@%s", t->user != NULL ? t->user : "root", t->address);
	shown[k++] = "ssh";
	if (t->port != 0 && t->port != 22) {
		snprintf(port, sizeof(port), "%u", t->port);
		shown[k++] = "-p";
		shown[k++] = port;
	}
	shown[k++] = sshdest;
	for (int i = 0; argv[i] != NULL; i++)
		shown[k++] = argv[i] == pwtext ? "***" : argv[i];
	shown[k] = NULL;
	return tb_proc_display(shown);
}

/* Wake macs through the relay over ssh, recorded as a step. */
static int send_relay(const struct tb_power_call *call, const char *macs, const unsigned char *pw, int pwlen,
		      struct tb_error *err)
{
	const struct tb_machine *relay;
	struct tb_ssh_target t;
	struct tb_ssh_capture cap;
	const char *argv[12];
	char port[8], pwtext[20] = "", what[400], out[300], pin[80];
	char *line;
	int rc;

	if ((rc = relay_target(call, &relay, &t, pin, sizeof(pin), err)) != 0)
		return rc;
	if (relay_argv(call, relay, macs, pw, pwlen, argv, pwtext, port, err) < 0)
		return err != NULL ? err->code : TB_ERR_CONFIG;
	line = relay_shown(&t, argv, pwtext);
	memset(&cap, 0, sizeof(cap));
	rc = tb_ssh_run_capture(call->pool, &t, argv, call->timeout_ms > 0 ? call->timeout_ms : RELAY_TIMEOUT_MS, 4096,
				&cap, err);
	tb_wipe(pwtext, sizeof(pwtext));
	snprintf(out, sizeof(out), "%s%s%s", cap.out != NULL ? cap.out : "",
		 cap.out != NULL && cap.out[0] != '\0' && cap.err != NULL && cap.err[0] != '\0' ? "; " : "",
		 cap.err != NULL ? cap.err : "");
	for (size_t i = strlen(out); i > 0 && (out[i - 1] == '\n' || out[i - 1] == ' '); i--)
		out[i - 1] = '\0';
	snprintf(what, sizeof(what), "Wake-on-LAN for %s through the relay %s (%s)%s", macs, relay->name, argv[0],
		 pwlen > 0 ? "; the SecureOn password is on etherwake's command line on the relay while it runs "
			     "(visible in its process list: etherwake has no other way)"
			   : "");
	if (rc != 0 && out[0] == '\0' && err != NULL)
		snprintf(out, sizeof(out), "%s", err->message); /* ssh's reason: no secret in it */
	step(call, what, line, cap.res.exit_status, out[0] != '\0' ? out : NULL);
	if (rc == 0 && cap.res.exit_status != 0)
		rc = tb_fail(err, TB_ERR_REMOTE, "relay", "%s: %s on the relay %s failed (exit %d): %s", call->m->name,
			     argv[0], relay->name, cap.res.exit_status, out[0] != '\0' ? out : "no output");
	free(line);
	tb_ssh_capture_free(&cap);
	return rc;
}

static int wol_run(const struct tb_power_call *call, enum tb_power_op op, int *is_on, struct tb_error *err)
{
	unsigned char mac[6], pw[6], pkt[MAGIC_MAX];
	int pwlen = 0, rc;
	size_t len;

	(void)is_on;
	if (op != TB_POWER_ON)
		return tb_fail(err, TB_ERR_INVALID, "action",
			       "%s: Wake-on-LAN can only switch a machine "
			       "on",
			       call->m->name);
	if (parse_mac(call->m->mac, mac) != 0)
		return tb_fail(err, TB_ERR_CONFIG, "mac",
			       "%s: Wake-on-LAN needs the machine's mac "
			       "(aa:bb:cc:dd:ee:ff)",
			       call->m->name);
	if (call->cancel != NULL && *call->cancel)
		return tb_fail(err, TB_ERR_CANCELED, NULL, "%s: Wake-on-LAN stopped on request", call->m->name);
	if ((rc = read_secureon(call, pw, &pwlen, err)) != 0)
		return rc;
	len = magic_packet(mac, pw, pwlen, pkt);
	switch (call->pm->via) {
	case TB_WOL_BROADCAST:
	case TB_WOL_DIRECTED: rc = send_udp(call, call->m->mac, pkt, len, pwlen > 0, err); break;
	case TB_WOL_RAW: rc = send_raw(call, call->m->mac, mac, pkt, len, pwlen > 0, err); break;
	case TB_WOL_RELAY: rc = send_relay(call, call->m->mac, pw, pwlen, err); break;
	default: rc = tb_fail(err, TB_ERR_CONFIG, "via", "%s: unknown Wake-on-LAN way", call->m->name);
	}
	/* volatile wipes: a memset of a buffer about to die is removed by the compiler */
	tb_wipe(pw, sizeof(pw));
	tb_wipe(pkt, sizeof(pkt));
	return rc;
}

const struct tb_power_driver tb_power_wol = {
	.name = "wol",
	.ops = TB_POWER_BIT(TB_POWER_ON),
	.run = wol_run,
};
