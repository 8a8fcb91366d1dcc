/*
 * rawframe.h - send one raw Ethernet frame on a named interface, for
 * Wake-on-LAN's EtherType 0x0842 frames (power_wol.c).  One implementation
 * per platform: rawframe_linux.c (an AF_PACKET socket), rawframe_freebsd.c
 * (a BPF device); CMake builds the one for the platform.
 *
 * Needs the privilege to send raw frames: root, or CAP_NET_RAW on Linux
 * (the systemd unit's AmbientCapabilities=CAP_NET_RAW); without it the call
 * fails with TB_ERR_CONFIG saying so.  Blocks for one send; opens and closes
 * its socket or device on each call (close-on-exec).  Thread-safe.
 */
#ifndef TB_RAWFRAME_H
#define TB_RAWFRAME_H

#include <stddef.h>

#include "error.h"

#define TB_RAWFRAME_PAYLOAD_MAX 1500

/*
 * Send payload (at most TB_RAWFRAME_PAYLOAD_MAX bytes; the kernel or the
 * driver pads short frames) in one frame of type ethertype to dst from
 * interface ifname, with the interface's own MAC as source.  0, or
 * TB_ERR_CONFIG (no such interface; no permission: the message says which
 * capability), TB_ERR_INVALID (bad arguments), TB_ERR_IO (send failed).
 * Messages name the interface; the caller adds the machine.
 */
int tb_rawframe_send(const char *ifname, const unsigned char dst[6], unsigned int ethertype, const void *payload,
		     size_t len, struct tb_error *err);

#endif /* TB_RAWFRAME_H */
