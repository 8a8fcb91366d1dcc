/*
 * rawframe_freebsd.c - raw Ethernet frames through a BPF device: see
 * rawframe.h.  Written against FreeBSD 14's bpf(4); built only on FreeBSD.
 */
/* net/bpf.h and net/if.h need the BSD types (u_int, ...) that
 * _POSIX_C_SOURCE hides; this file is FreeBSD-only anyway. */
#undef _POSIX_C_SOURCE

#include "rawframe.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <net/bpf.h>
#include <net/if.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define CAP_HINT "sending raw frames needs write access to /dev/bpf (run testbedd as root)"

int tb_rawframe_send(const char *ifname, const unsigned char dst[6], unsigned int ethertype, const void *payload,
		     size_t len, struct tb_error *err)
{
	unsigned char frame[14 + TB_RAWFRAME_PAYLOAD_MAX];
	struct ifreq ifr;
	u_int zero = 0;
	ssize_t n;
	int fd, e;

	if (ifname == NULL || strlen(ifname) >= sizeof(ifr.ifr_name) || len == 0 || len > TB_RAWFRAME_PAYLOAD_MAX ||
	    ethertype > 0xffff)
		return tb_fail(err, TB_ERR_INVALID, NULL, "bad raw frame");
	if (if_nametoindex(ifname) == 0)
		return tb_fail(err, TB_ERR_CONFIG, "interface",
			       "there is no network interface %s on the testbedd machine", ifname);
	fd = open("/dev/bpf", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == EPERM || e == EACCES)
			return tb_fail(err, TB_ERR_CONFIG, "interface", "%s", CAP_HINT);
		return tb_fail(err, TB_ERR_IO, "interface", "cannot open /dev/bpf: %s", strerror(e));
	}
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name) - 1);
	/* BIOCSHDRCMPLT 0 (the default, set for clarity): the kernel fills in
	 * the interface's MAC as the source address. */
	if (ioctl(fd, BIOCSETIF, &ifr) < 0 || ioctl(fd, BIOCSHDRCMPLT, &zero) < 0) {
		e = errno;
		close(fd);
		return tb_fail(err, TB_ERR_CONFIG, "interface", "cannot attach /dev/bpf to %s: %s", ifname,
			       strerror(e));
	}
	memcpy(frame, dst, 6);
	memset(frame + 6, 0, 6);
	frame[12] = (unsigned char)(ethertype >> 8);
	frame[13] = (unsigned char)(ethertype & 0xff);
	memcpy(frame + 14, payload, len);
	n = write(fd, frame, 14 + len);
	e = errno;
	close(fd);
	if (n < 0)
		return tb_fail(err, TB_ERR_IO, "interface", "sending a raw frame on %s: %s", ifname, strerror(e));
	if ((size_t)n != 14 + len)
		return tb_fail(err, TB_ERR_IO, "interface", "sending a raw frame on %s: short write", ifname);
	return 0;
}
