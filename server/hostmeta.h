/*
 * hostmeta.h - what a host was when a matrix ran on it: kernel, OS release,
 * CPU, memory, the data-plane NIC (driver, firmware, MTU, offloads), TCP
 * congestion control and socket-buffer limits, IP forwarding.
 *
 * One POSIX sh script (tb_hostmeta_script) runs every command on the host
 * in one ssh exec and prints each command's output, stdout and stderr, in a
 * section of its own; tb_hostmeta_parse turns that text into one JSON object.
 * The section parsers are exposed for the tests, which run them on every
 * capture in ../shared/data/hosts (FreeBSD 13/14, Ubuntu 22/24, Debian 12).
 *
 * Output of the script, one section per command, in this order:
 *
 *	@@testbedd-section NAME
 *	<the command's stdout and stderr>
 *	@@testbedd-rc N
 *
 * Section names: linux: uname_a, os_release, cpu_model, nproc, meminfo,
 * sysctl, shaping, ethtool_i, ethtool_k, ip_link; freebsd: uname_a,
 * freebsd_version, os_release, sysctl, shaping, ifconfig, pciconf, dev_desc,
 * dev_fw (shaping: `tc qdisc show`; `ipfw pipe show` when kldstat says
 * dummynet is loaded; TB_HOSTMETA_NO_SHAPER without tc or dummynet).  The NIC sections
 * are left out when no interface is given.  A command that fails or is
 * missing only gives its section a non-zero rc (and its message as text).
 *
 * The JSON object (a member is absent when its command said nothing usable):
 *
 *	{"kind": "linux"|"freebsd",
 *	 "uname": "<uname -a>", "kernel": "Linux", "release": "6.8.0-134-generic",
 *	 "machine": "x86_64",
 *	 "os": {"name": "Ubuntu 24.04.4 LTS", "id": "ubuntu", "version": "24.04"},
 *	 "freebsd_version": {"kernel": "14.1-RELEASE-p5", "userland": "14.1-RELEASE-p6"},
 *	 "cpu": {"model": "AMD Ryzen ... Processor", "count": 32},   (model trimmed)
 *	 "memory_bytes": 68545294336,
 *	 "nic": {"interface": "ix0", "driver": "ix", "driver_version": "...",
 *	         "firmware": "..." | null, "bus": "0000:04:00.0" | "pci0:4:0:0",
 *	         "description": "...", "vendor": "...", "device": "...",
 *	         "mtu": 9000, "mac": "90:e2:...", "offloads": {"NAME": true|false, ...}},
 *	 "tcp": {"congestion_control": "cubic", "congestion_available": ["cubic", "newreno"],
 *	         "rmem": [4096, 131072, 6291456], "wmem": [...], "rmem_max": N, "wmem_max": N,
 *	         "maxsockbuf": N, "sendbuf_max": N, "recvbuf_max": N, "sendspace": N, "recvspace": N},
 *	 "forwarding": {"ipv4": true|false, "ipv6": true|false},   (each when its sysctl answered)
 *	 "shaping": {"pipes": {"1": {"bw_bps": 50000000 (0: unlimited), "delay_ms": 0,
 *	                             "plr": 0.02, "queue": "50 sl."}}}            (freebsd)
 *	          | {"qdiscs": {"ix0 root": {"kind": "tbf",
 *	                                     "options": "rate 100Mbit burst 125000b lat 50ms"}}},
 *	            (linux: only qdiscs with a handle other than 0:, the kernel's defaults left out;
 *	             an empty map when none; "shaping" absent without tc or dummynet)
 *	 "sysctl": {"name": "value as printed (trimmed)", ...},
 *	 "errors": [{"section": "dev_fw", "rc": 1, "message": "sysctl: unknown oid ..."}]}
 *
 * Linux offloads are ethtool -k's features ("tcp-segmentation-offload":
 * true); FreeBSD's are ifconfig's options, each present one true ("TSO4":
 * true).
 *
 * Ownership: returned strings are malloc'd (free()); returned JSON values
 * are new references (json_decref).  Pure functions: no I/O, no locks.
 */
#ifndef TB_HOSTMETA_H
#define TB_HOSTMETA_H

#include <stddef.h>

#include <jansson.h>

#define TB_HOSTMETA_SECTION "@@testbedd-section "
#define TB_HOSTMETA_RC "@@testbedd-rc "
/* The shaping section's whole text where the host has no tc or no dummynet. */
#define TB_HOSTMETA_NO_SHAPER "@@testbedd-no-shaper"

/*
 * The script for a host whose persona is of kind "linux" or "freebsd" (as
 * `uname -s` says: Linux / FreeBSD), about the data-plane interface iface
 * (NULL: no NIC sections; a name may not start with "-": an option to the
 * commands).  It is POSIX sh (run it with sh -c, whatever the
 * login shell); every command runs even when one before it failed; the
 * interface name reaches each command as one quoted word.  NULL when kind
 * is unknown, iface is not 1..15 characters of [A-Za-z0-9_.:-], or out of
 * memory.
 */
char *tb_hostmeta_script(const char *kind, const char *iface);

/* The first line of tb_hostmeta_script_any's output: this, then the kind. */
#define TB_HOSTMETA_KIND "@@testbedd-kind "
/* The shell variable that tb_hostmeta_script_any reads the kernel's name
 * from when a script before it set it (as `uname -s` prints it). */
#define TB_HOSTMETA_KERNEL_VAR "tb_kernel"

/*
 * The script for a host whose kind is not known beforehand: the host's own
 * `uname -s` (or $tb_kernel, when set) picks the FreeBSD part or else the
 * Linux one, and its output starts with a line TB_HOSTMETA_KIND "freebsd"
 * or "linux" (tb_hostmeta_kind).  The same iface rules and NULLs as
 * tb_hostmeta_script; it ends with `exit 0`: put it last.
 */
char *tb_hostmeta_script_any(const char *iface);

/* The kind that the output of tb_hostmeta_script_any (text, len bytes)
 * starts with: "linux", "freebsd", or NULL when it starts otherwise. */
const char *tb_hostmeta_kind(const char *text, size_t len);

/*
 * The script's output (text, len bytes, need not end in NUL) -> *out, a
 * new object as above.  Never fails on odd or truncated input: what cannot
 * be parsed is left out.  kind is the one the script was made for; iface
 * as given to tb_hostmeta_script (may be NULL).  0, or -1 when out of
 * memory (*out NULL).
 */
int tb_hostmeta_parse(const char *kind, const char *iface, const char *text, size_t len, json_t **out);

/* The section parsers (text NUL-terminated).  Each returns a new value, or
 * NULL when the text holds nothing it recognizes. */

/* sysctl output, FreeBSD `name: value` and procps `name = value`: an object
 * name -> value (trailing blanks trimmed; a FreeBSD 14 multi-line value,
 * such as net.inet.tcp.cc.available's table, kept whole up to the next
 * `name: ` line, inner newlines kept, surrounding blank lines dropped). */
json_t *tb_hostmeta_sysctl(const char *text);
/* /etc/os-release: an object KEY -> value, quotes and escapes removed. */
json_t *tb_hostmeta_os_release(const char *text);
/* ethtool -i: {"driver", "version", "firmware_version" (null when empty),
 * "expansion_rom_version", "bus_info", ...}: keys with '-' as '_'. */
json_t *tb_hostmeta_ethtool_i(const char *text);
/* ethtool -k: {"feature": {"on": bool, "fixed": bool}, ...} (sub-features
 * too); "Features for IF:" skipped. */
json_t *tb_hostmeta_ethtool_k(const char *text);
/* ip -d link show IF: {"index", "name", "flags": [...], "mtu", "qdisc",
 * "state", "mac", "minmtu", "maxmtu", "numtxqueues", "numrxqueues",
 * "gso_max_size", ... "parentbus", "parentdev"} (numbers as integers). */
json_t *tb_hostmeta_ip_link(const char *text);
/* FreeBSD ifconfig IF: {"name", "flags": [...], "metric", "mtu",
 * "options": [...], "mac", "inet": [...], "media", "status"}. */
json_t *tb_hostmeta_ifconfig(const char *text);
/* FreeBSD pciconf -lv: an array of {"name": "ix0", "selector":
 * "pci0:4:0:0", "class": "0x020000", "vendor_id", "device_id", "vendor",
 * "device", "class_name", "subclass"}. */
json_t *tb_hostmeta_pciconf(const char *text);
/* A congestion-control list: FreeBSD 13 "newreno, cubic", FreeBSD 14's
 * table (CCmod D PCB count), Linux "reno cubic": an array of names. */
json_t *tb_hostmeta_cc_list(const char *value);

/* FreeBSD ipfw pipe show (hostmeta_shape.c): {"N": {"bw_bps", "delay_ms",
 * "plr", "queue"}} per pipe (plr 0 when dummynet prints none). */
json_t *tb_hostmeta_ipfw_pipes(const char *text);
/* Linux tc qdisc show: {"DEV root" | "DEV parent P": {"kind", "options"}}
 * for the qdiscs whose handle is not 0: (options: after refcnt). */
json_t *tb_hostmeta_tc_qdisc(const char *text);

#endif
