/* rawframe_linux.c - raw Ethernet frames through an AF_PACKET socket: see rawframe.h. */
#include "rawframe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CAP_HINT                                                             \
	"sending raw frames needs CAP_NET_RAW (root, or the systemd unit's " \
	"AmbientCapabilities=CAP_NET_RAW)"

int tb_rawframe_send(const char *ifname, const unsigned char dst[6], unsigned int ethertype, const void *payload,
		     size_t len, struct tb_error *err)
{
	struct sockaddr_ll sll;
	unsigned int idx;
	ssize_t n;
	int fd, e;

	if (ifname == NULL || len == 0 || len > TB_RAWFRAME_PAYLOAD_MAX || ethertype > 0xffff)
		return tb_fail(err, TB_ERR_INVALID, NULL, "bad raw frame");
	idx = if_nametoindex(ifname);
	if (idx == 0)
		return tb_fail(err, TB_ERR_CONFIG, "interface",
			       "there is no network interface %s on the testbedd machine", ifname);
	/* SOCK_DGRAM: the kernel writes the Ethernet header (our MAC as source). */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, (int)htons((uint16_t)ethertype));
	if (fd < 0) {
		e = errno;
		if (e == EPERM || e == EACCES)
			return tb_fail(err, TB_ERR_CONFIG, "interface", "%s", CAP_HINT);
		return tb_fail(err, TB_ERR_IO, "interface", "cannot open a packet socket: %s", strerror(e));
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons((uint16_t)ethertype);
	sll.sll_ifindex = (int)idx;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dst, 6);
	n = sendto(fd, payload, len, 0, (const struct sockaddr *)&sll, sizeof(sll));
	e = errno;
	close(fd);
	if (n < 0) {
		if (e == EPERM || e == EACCES)
			return tb_fail(err, TB_ERR_CONFIG, "interface", "%s", CAP_HINT);
		if (e == ENETDOWN || e == ENXIO || e == ENODEV)
			return tb_fail(err, TB_ERR_CONFIG, "interface", "the network interface %s is down: %s", ifname,
				       strerror(e));
		return tb_fail(err, TB_ERR_IO, "interface", "sending a raw frame on %s: %s", ifname, strerror(e));
	}
	if ((size_t)n != len)
		return tb_fail(err, TB_ERR_IO, "interface", "sending a raw frame on %s: short write", ifname);
	return 0;
}
