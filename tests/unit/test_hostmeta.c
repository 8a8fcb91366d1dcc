/*
 * test_hostmeta.c - hostmeta.h against the host captures in
 * tests/data/hosts, a copy of ../shared/data/hosts (FreeBSD 13/14, Ubuntu 22/24, Debian 12; see its
 * README.md).
 *
 * Every capture file is a line of the table below, or is named in
 * not_ours[] as the output of a command the script does not run: the parser
 * it goes through and facts read from the file, written "path=value" over
 * the result, '/' between keys (sysctl names hold dots), "[i]" for an
 * element, "path#=n" for a size, "=absent", "=null", and "NULL" alone for a
 * parser that finds nothing.  Then whole script outputs assembled from the
 * captures, the script itself (names refused, the FreeBSD device mapping, a
 * real run on this machine under sh, bash and tcsh), and every truncation,
 * garbage and out-of-memory run of the parser (run under ASan in CI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jsonpath.h"
#include "datafile.h"

#include "error.h"
#include "hostmeta.h"
#include "shquote.h"

/* ---- the data ---- */

enum parser {
	P_SYSCTL,
	P_OS,
	P_ETHI,
	P_ETHK,
	P_IPLINK,
	P_IFCONFIG,
	P_PCICONF,
	P_CC,
	P_FULL,   /* tb_hostmeta_parse on one section named arg (rc, iface) */
	P_NVALUE, /* `sysctl -n arg`: the file is arg's value in other's sysctl map */
	P_UNAME,  /* uname -s/-r/-m: the file is field arg of other (uname -a) parsed */
};

struct sample {
	const char *file;
	enum parser parser;
	const char *arg, *other, *iface;
	int rc;
	const char *facts[24];
};

#define FB13_MODEL "AMD Opteron(tm) Processor 6380"
#define TR1950X "AMD Ryzen Threadripper 1950X 16-Core Processor"
#define CC14 "CCmod           D PCB count\ncubic           * 4\nnewreno           0"
#define X520 "\"Intel(R) X520 82599ES (SFI/SFP+)\""
#define E82599 "\"82599ES 10-Gigabit SFI/SFP+ Network Connection\""

static const struct sample samples[] = {
	/* ---- sysctl: FreeBSD "name: value", procps "name = value" ---- */
	{"freebsd13_sysctl_net_inet_tcp.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "kern.ipc.maxsockbuf=\"2097152\"", "net.inet.tcp.sendspace=\"32768\"",
	  "net.inet.tcp.recvbuf_max=\"2097152\"", "net.inet.tcp.cc.algorithm=\"newreno\"",
	  "net.inet.tcp.cc.available=\"newreno\"", "hw.model=\"" FB13_MODEL "\"", "hw.ncpu=\"32\"",
	  "hw.physmem=\"137346981888\""}},
	{"freebsd14_sysctl_net_inet_tcp.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "net.inet.tcp.cc.algorithm=\"cubic\"", "net.inet.tcp.cc.available=\"" CC14 "\"",
	  "hw.model=\"" TR1950X "\"", "hw.ncpu=\"32\"", "hw.physmem=\"68545294336\"",
	  "net.inet.tcp.recvspace=\"65536\""}},
	{"debian12_sysctl_net.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=6", "net.core.rmem_max=\"4194304\"", "net.ipv4.tcp_rmem=\"4096\t131072\t33554432\"",
	  "net.ipv4.tcp_wmem=\"4096\t16384\t4194304\"", "net.ipv4.tcp_congestion_control=\"bbr\"",
	  "net.ipv4.tcp_available_congestion_control=\"reno bbr cubic\""}},
	{"ubuntu22_sysctl_net.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=6", "net.core.wmem_max=\"212992\"", "net.ipv4.tcp_rmem=\"4096\t131072\t6291456\"",
	  "net.ipv4.tcp_congestion_control=\"cubic\"", "net.ipv4.tcp_available_congestion_control=\"reno cubic\""}},
	{"ubuntu24_sysctl_net.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=6", "net.core.rmem_max=\"212992\"", "net.ipv4.tcp_wmem=\"4096\t16384\t4194304\"",
	  "net.ipv4.ip_forward=absent"}},
	{"freebsd13_sysctl_dev_ix_0_desc.txt", P_SYSCTL, NULL, NULL, NULL, 0, {"#=1", "dev.ix.0.%desc=" X520}},
	{"freebsd14_sysctl_dev_ix_0_desc.txt", P_SYSCTL, NULL, NULL, NULL, 0, {"#=1", "dev.ix.0.%desc=" X520}},
	{"freebsd14_sysctl_dev_mlx4_core_0_desc.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=1", "dev.mlx4_core.0.%desc=\"mlx4_core\""}},
	{"freebsd14_sysctl_dev_ix_0_fw_version.txt",
	 P_SYSCTL,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=1", "dev.ix.0.fw_version=\"Option ROM V1-b2229-p0 eTrack 0x800004e0\""}},
	{"freebsd13_sysctl_dev_mlx4_core_0_fw_version.stderr.txt", P_SYSCTL, NULL, NULL, NULL, 0, {"NULL"}},
	{"freebsd14_sysctl_dev_mlx4_core_0_fw_version.stderr.txt", P_SYSCTL, NULL, NULL, NULL, 0, {"NULL"}},
	/* the stderr of the mlxen device's fw_version: an error (alone, no nic: firmware null is in hosts[]) */
	{"freebsd13_sysctl_dev_mlx4_core_0_fw_version.stderr.txt",
	 P_FULL,
	 "dev_fw",
	 NULL,
	 "mlxen0",
	 1,
	 {"nic=absent", "errors#=1", "errors[0]/section=\"dev_fw\"", "errors[0]/rc=1",
	  "errors[0]/message=\"sysctl: unknown oid 'dev.mlx4_core.0.fw_version'\""}},
	{"freebsd14_sysctl_dev_mlx4_core_0_fw_version.stderr.txt",
	 P_FULL,
	 "dev_fw",
	 NULL,
	 "mlxen0",
	 1,
	 {"nic=absent", "errors[0]/rc=1", "sysctl=absent"}},
	{"freebsd14_sysctl_dev_ix_0_fw_version.txt",
	 P_FULL,
	 "dev_fw",
	 NULL,
	 "ix0",
	 0,
	 {"nic/driver=\"ix\"", "nic/firmware=\"Option ROM V1-b2229-p0 eTrack 0x800004e0\"", "errors=absent"}},
	{"freebsd14_sysctl_dev_mlx4_core_0_desc.txt",
	 P_FULL,
	 "dev_desc",
	 NULL,
	 "mlxen0",
	 0,
	 {"nic/description=\"mlx4_core\"", "nic/firmware=absent"}},
	{"freebsd13_sysctl_dev_ix_0_desc.txt", P_FULL, "dev_desc", NULL, "ix0", 0, {"nic/description=" X520}},

	/* ---- sysctl -n: the value alone, as the map keeps it ---- */
	{"freebsd13_sysctl_n_hw_model.txt", P_NVALUE, "hw.model", "freebsd13_sysctl_net_inet_tcp.txt", NULL, 0, {NULL}},
	{"freebsd14_sysctl_n_hw_model.txt", P_NVALUE, "hw.model", "freebsd14_sysctl_net_inet_tcp.txt", NULL, 0, {NULL}},
	{"freebsd14_sysctl_n_net_inet_tcp_cc_available.txt",
	 P_NVALUE,
	 "net.inet.tcp.cc.available",
	 "freebsd14_sysctl_net_inet_tcp.txt",
	 NULL,
	 0,
	 {NULL}},
	{"debian12_sysctl_n_net_ipv4_tcp_rmem.txt",
	 P_NVALUE,
	 "net.ipv4.tcp_rmem",
	 "debian12_sysctl_net.txt",
	 NULL,
	 0,
	 {NULL}},
	{"freebsd14_sysctl_n_net_inet_tcp_cc_available.txt",
	 P_CC,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=2", "[0]=\"cubic\"", "[1]=\"newreno\""}},
	{"freebsd13_sysctl_n_hw_model.txt", P_FULL, "sysctl", NULL, NULL, 0, {"NULL"}}, /* not name: value */

	/* ---- /etc/os-release ---- */
	{"debian12_os_release.txt",
	 P_OS,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=9", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"", "ID=\"debian\"", "VERSION_ID=\"12\"",
	  "VERSION_CODENAME=\"bookworm\"", "HOME_URL=\"https://www.debian.org/\""}},
	{"ubuntu22_os_release.txt",
	 P_OS,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=12", "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"", "ID=\"ubuntu\"", "ID_LIKE=\"debian\"", "VERSION_ID=\"22.04\"",
	  "VERSION=\"22.04.5 LTS (Jammy Jellyfish)\"", "UBUNTU_CODENAME=\"jammy\""}},
	{"ubuntu24_os_release.txt",
	 P_OS,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=13", "PRETTY_NAME=\"Ubuntu 24.04.4 LTS\"", "VERSION_ID=\"24.04\"", "LOGO=\"ubuntu-logo\""}},
	{"ubuntu24_os_release.txt",
	 P_FULL,
	 "os_release",
	 NULL,
	 NULL,
	 0,
	 {"os/name=\"Ubuntu 24.04.4 LTS\"", "os/id=\"ubuntu\"", "os/version=\"24.04\"", "os#=3"}},

	/* ---- ethtool -i ---- */
	{"debian12_ethtool_i_virtio_net.txt",
	 P_ETHI,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "driver=\"virtio_net\"", "version=\"1.0.0\"", "firmware_version=null", "expansion_rom_version=\"\"",
	  "bus_info=\"0000:00:03.0\"", "supports_statistics=\"yes\"", "supports_priv_flags=\"no\""}},
	{"ubuntu22_ethtool_i_ixgbe.txt",
	 P_ETHI,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "driver=\"ixgbe\"", "version=\"5.15.0-161-generic\"", "firmware_version=\"0x61bd0001\"",
	  "bus_info=\"0000:04:00.0\"", "supports_test=\"yes\""}},
	{"ubuntu22_ethtool_i_mlx4_en.txt",
	 P_ETHI,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "driver=\"mlx4_en\"", "version=\"4.0-0\"", "firmware_version=\"2.42.5000\"",
	  "expansion_rom_version=\"\"", "bus_info=\"0000:09:00.0\"", "supports_eeprom_access=\"no\""}},
	{"ubuntu24_ethtool_i_ixgbe.txt",
	 P_ETHI,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "driver=\"ixgbe\"", "version=\"6.8.0-134-generic\"", "firmware_version=\"0x61bd0001\""}},
	{"ubuntu24_ethtool_i_mlx4_en.txt",
	 P_ETHI,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=10", "driver=\"mlx4_en\"", "firmware_version=\"2.42.5000\"", "bus_info=\"0000:09:00.0\""}},
	{"debian12_ethtool_i_virtio_net.txt",
	 P_FULL,
	 "ethtool_i",
	 NULL,
	 "eth0",
	 0,
	 {"nic/driver=\"virtio_net\"", "nic/driver_version=\"1.0.0\"", "nic/firmware=null",
	  "nic/bus=\"0000:00:03.0\""}},

	/* ---- ethtool -k: sub-features indented with a TAB ---- */
	{"debian12_ethtool_k_virtio_net.txt",
	 P_ETHK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=63", "rx-checksumming/on=true", "rx-checksumming/fixed=true", "tx-checksumming/on=true",
	  "tx-checksumming/fixed=false", "tx-checksum-ipv4/on=false", "tx-checksum-ipv4/fixed=true",
	  "tx-checksum-ip-generic/on=true", "tx-tcp-accecn-segmentation/fixed=true",
	  "tx-tcp-mangleid-segmentation/on=false", "tx-tcp-mangleid-segmentation/fixed=false", "rx-gro-hw/on=true",
	  "hsr-dup-offload/fixed=true", "Features for eth0=absent"}},
	{"ubuntu22_ethtool_k_ixgbe.txt",
	 P_ETHK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=65", "tx-checksum-fcoe-crc/on=true", "tx-checksum-fcoe-crc/fixed=true", "tx-checksum-sctp/on=true",
	  "large-receive-offload/on=false", "large-receive-offload/fixed=false", "fcoe-mtu/fixed=true",
	  "tx-tcp-accecn-segmentation=absent", "esp-hw-offload/on=true"}},
	{"ubuntu22_ethtool_k_mlx4_en.txt",
	 P_ETHK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=65", "tx-checksum-ipv4/on=true", "tx-checksum-ipv4/fixed=false", "large-receive-offload/fixed=true",
	  "rx-vlan-stag-hw-parse/on=true", "rx-vlan-stag-filter/fixed=true", "rx-udp_tunnel-port-offload/on=true"}},
	{"ubuntu24_ethtool_k_ixgbe.txt",
	 P_ETHK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=65", "tcp-segmentation-offload/on=true", "tx-tcp6-segmentation/on=true", "rx-gro-hw/on=false",
	  "rx-gro-hw/fixed=true", "tx-udp_tnl-segmentation/on=true"}},
	{"ubuntu24_ethtool_k_mlx4_en.txt",
	 P_ETHK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=65", "tx-gre-segmentation/on=false", "tx-gre-segmentation/fixed=true", "loopback/fixed=false",
	  "tx-gso-partial/on=true"}},

	/* ---- ip -d link show ---- */
	{"debian12_ip_d_link_show.txt",
	 P_IPLINK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"index=4", "name=\"eth0\"", "flags#=4", "flags[0]=\"BROADCAST\"", "flags[3]=\"LOWER_UP\"", "mtu=1400",
	  "qdisc=\"pfifo_fast\"", "state=\"UP\"", "qlen=1000", "mac=\"02:fc:00:00:00:01\"", "link_type=\"ether\"",
	  "minmtu=68", "maxmtu=65535", "allmulti=0", "numtxqueues=1", "gso_max_size=65536", "tso_max_segs=65535",
	  "parentbus=\"virtio\"", "parentdev=\"virtio2\""}},
	{"ubuntu22_ip_d_link_show_ixgbe.txt",
	 P_IPLINK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"index=2", "name=\"enp4s0f0\"", "mtu=9000", "qdisc=\"mq\"", "state=\"UP\"", "mac=\"90:e2:ba:8c:21:41\"",
	  "maxmtu=9710", "numtxqueues=64", "allmulti=absent", "tso_max_size=absent", "parentdev=\"0000:04:00.0\""}},
	{"ubuntu22_ip_d_link_show_mlx4_en.txt",
	 P_IPLINK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"index=4", "name=\"enp9s0\"", "mtu=9000", "mac=\"f4:52:14:3a:5e:f1\"", "maxmtu=9600", "numtxqueues=256",
	  "numrxqueues=128", "state=\"UP\""}},
	{"ubuntu24_ip_d_link_show_ixgbe.txt",
	 P_IPLINK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"enp4s0f0\"", "mtu=9000", "mac=\"90:e2:ba:8c:2a:19\"", "maxmtu=9710", "allmulti=0",
	  "tso_max_size=65536", "gro_max_size=65536", "parentbus=\"pci\"", "state=\"UP\""}},
	{"ubuntu24_ip_d_link_show_mlx4_en.txt",
	 P_IPLINK,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"enp9s0\"", "mtu=9000", "mac=\"f4:52:14:3a:61:b1\"", "maxmtu=9600", "state=\"UP\"",
	  "parentdev=\"0000:09:00.0\""}},

	/* ---- FreeBSD ifconfig ---- */
	{"freebsd13_ifconfig_ix0.txt",
	 P_IFCONFIG,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"ix0\"", "flags#=5", "flags[4]=\"MULTICAST\"", "metric=0", "mtu=9000", "options#=15",
	  "options[0]=\"RXCSUM\"", "options[14]=\"NOMAP\"", "mac=\"90:e2:ba:8c:21:40\"", "inet#=1",
	  "inet[0]=\"10.10.2.13\"", "media=\"Ethernet autoselect (10Gbase-SR <full-duplex,rxpause,txpause>)\"",
	  "status=\"active\""}},
	{"freebsd13_ifconfig_mlxen0.txt",
	 P_IFCONFIG,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"mlxen0\"", "mtu=9000", "options#=15", "options[11]=\"LINKSTATE\"", "mac=\"f4:52:14:3a:5e:f0\"",
	  "inet[0]=\"10.10.1.13\"", "status=\"active\""}},
	{"freebsd14_ifconfig_ix0.txt",
	 P_IFCONFIG,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"ix0\"", "flags#=6", "flags[5]=\"LOWER_UP\"", "mtu=9000", "options#=15", "options[14]=\"MEXTPG\"",
	  "mac=\"90:e2:ba:8c:2a:18\"", "inet[0]=\"10.10.2.14\"",
	  "media=\"Ethernet autoselect (10Gbase-SR <full-duplex,rxpause,txpause>)\"", "status=\"active\""}},
	{"freebsd14_ifconfig_mlxen0.txt",
	 P_IFCONFIG,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"name=\"mlxen0\"", "flags#=6", "mtu=9000", "options#=15", "options[14]=\"HWSTATS\"",
	  "mac=\"f4:52:14:3a:61:b0\"", "status=\"active\""}},

	/* ---- FreeBSD pciconf -lv ---- */
	{"freebsd13_pciconf_lv_nics.txt",
	 P_PCICONF,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=3", "[0]/name=\"mlx4_core0\"", "[0]/selector=\"pci0:9:0:0\"", "[0]/class=\"0x020000\"",
	  "[0]/vendor_id=\"0x15b3\"", "[0]/device_id=\"0x1007\"", "[0]/vendor=\"Mellanox Technologies\"",
	  "[0]/device=\"MT27520 Family [ConnectX-3 Pro]\"", "[0]/class_name=\"network\"", "[0]/subclass=\"ethernet\"",
	  "[1]/name=\"ix0\"", "[1]/selector=\"pci0:4:0:0\"", "[1]/vendor=\"Intel Corporation\"", "[1]/device=" E82599,
	  "[2]/name=\"ix1\"", "[2]/selector=\"pci0:4:0:1\"", "[2]/device_id=\"0x10fb\""}},
	{"freebsd14_pciconf_lv_nics.txt",
	 P_PCICONF,
	 NULL,
	 NULL,
	 NULL,
	 0,
	 {"#=3", "[0]/name=\"mlx4_core0\"", "[0]/vendor=\"Mellanox Technologies\"", "[1]/name=\"ix0\"",
	  "[1]/vendor_id=\"0x8086\"", "[1]/device=" E82599, "[2]/selector=\"pci0:4:0:1\"",
	  "[2]/subclass=\"ethernet\""}},

	/* ---- uname -a through the whole parser, and its -s/-r/-m ---- */
	{"freebsd13_uname_a.txt",
	 P_FULL,
	 "uname_a",
	 NULL,
	 NULL,
	 0,
	 {"kind=\"freebsd\"", "kernel=\"FreeBSD\"", "release=\"13.0-RELEASE\"", "machine=\"amd64\"",
	  "uname=\"FreeBSD bsd13-bench 13.0-RELEASE FreeBSD 13.0-RELEASE #0 releng/13.0-n244733-ea31abc261f: Fri Apr  9 "
	  "04:24:09 UTC 2021     root@releng1.nyi.freebsd.org:/usr/obj/usr/src/amd64.amd64/sys/GENERIC  amd64\""}},
	{"freebsd14_uname_a.txt",
	 P_FULL,
	 "uname_a",
	 NULL,
	 NULL,
	 0,
	 {"kernel=\"FreeBSD\"", "release=\"14.1-RELEASE-p5\"", "machine=\"amd64\"",
	  "uname=\"FreeBSD bsd14-bench 14.1-RELEASE-p5 FreeBSD 14.1-RELEASE-p5 GENERIC amd64\""}},
	{"ubuntu22_uname_a.txt",
	 P_FULL,
	 "uname_a",
	 NULL,
	 NULL,
	 0,
	 {"kind=\"linux\"", "kernel=\"Linux\"", "release=\"5.15.0-161-generic\"", "machine=\"x86_64\""}},
	{"ubuntu24_uname_a.txt",
	 P_FULL,
	 "uname_a",
	 NULL,
	 NULL,
	 0,
	 {"kernel=\"Linux\"", "release=\"6.8.0-134-generic\"", "machine=\"x86_64\"", "errors=absent"}},
	{"debian12_uname_a.txt",
	 P_FULL,
	 "uname_a",
	 NULL,
	 NULL,
	 0,
	 {"kernel=\"Linux\"", "release=\"6.18.44-fc-v1045\"", "machine=\"x86_64\"",
	  "uname=\"Linux vm 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux\""}},
	{"freebsd13_uname_s.txt", P_UNAME, "kernel", "freebsd13_uname_a.txt", NULL, 0, {NULL}},
	{"freebsd13_uname_r.txt", P_UNAME, "release", "freebsd13_uname_a.txt", NULL, 0, {NULL}},
	{"freebsd13_uname_m.txt", P_UNAME, "machine", "freebsd13_uname_a.txt", NULL, 0, {NULL}},
	{"freebsd14_uname_s.txt", P_UNAME, "kernel", "freebsd14_uname_a.txt", NULL, 0, {NULL}},
	{"freebsd14_uname_r.txt", P_UNAME, "release", "freebsd14_uname_a.txt", NULL, 0, {NULL}},
	{"freebsd14_uname_m.txt", P_UNAME, "machine", "freebsd14_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu22_uname_s.txt", P_UNAME, "kernel", "ubuntu22_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu22_uname_r.txt", P_UNAME, "release", "ubuntu22_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu22_uname_m.txt", P_UNAME, "machine", "ubuntu22_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu24_uname_s.txt", P_UNAME, "kernel", "ubuntu24_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu24_uname_r.txt", P_UNAME, "release", "ubuntu24_uname_a.txt", NULL, 0, {NULL}},
	{"ubuntu24_uname_m.txt", P_UNAME, "machine", "ubuntu24_uname_a.txt", NULL, 0, {NULL}},
	{"debian12_uname_s.txt", P_UNAME, "kernel", "debian12_uname_a.txt", NULL, 0, {NULL}},
	{"debian12_uname_r.txt", P_UNAME, "release", "debian12_uname_a.txt", NULL, 0, {NULL}},
	{"debian12_uname_m.txt", P_UNAME, "machine", "debian12_uname_a.txt", NULL, 0, {NULL}},

	/* ---- freebsd-version -ku, cpu model, nproc ---- */
	{"freebsd13_freebsd_version_ku.txt",
	 P_FULL,
	 "freebsd_version",
	 NULL,
	 NULL,
	 0,
	 {"freebsd_version/kernel=\"13.0-RELEASE\"", "freebsd_version/userland=\"13.0-RELEASE\""}},
	{"freebsd14_freebsd_version_ku.txt",
	 P_FULL,
	 "freebsd_version",
	 NULL,
	 NULL,
	 0,
	 {"freebsd_version/kernel=\"14.1-RELEASE-p5\"", "freebsd_version/userland=\"14.1-RELEASE-p6\""}},
	{"debian12_proc_cpuinfo_model_name.txt",
	 P_FULL,
	 "cpu_model",
	 NULL,
	 NULL,
	 0,
	 {"cpu/model=\"AMD EPYC\"", "cpu#=1"}},
	{"ubuntu22_proc_cpuinfo_model_name.txt", P_FULL, "cpu_model", NULL, NULL, 0, {"cpu/model=\"" FB13_MODEL "\""}},
	{"ubuntu24_proc_cpuinfo_model_name.txt", P_FULL, "cpu_model", NULL, NULL, 0, {"cpu/model=\"" TR1950X "\""}},
	{"debian12_nproc.txt", P_FULL, "nproc", NULL, NULL, 0, {"cpu/count=2", "cpu/model=absent"}},
};

#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

/* Captures of commands the script does not run (vmstat, mpstat, top...). */
static const char *const not_ours[] = {"README.md",     "_vmstat_1.txt", "_mpstat_P_ALL_1",
				       "_top_b_d2.txt", "_lscpu.txt",    "_proc_stat.txt"};

/* ---- whole script outputs ---- */

struct sec {
	const char *name;
	int rc;
	const char *src[3]; /* capture files, or "=text" */
};

struct host {
	const char *label, *kind, *iface;
	struct sec secs[10];
	const char *facts[52];
};

#define FBSD_OS_RELEASE                                                                                      \
	"=NAME=FreeBSD\nVERSION=\"14.1-RELEASE-p6\"\nVERSION_ID=\"14.1\"\nID=freebsd\nANSI_COLOR=\"0;31\"\n" \
	"PRETTY_NAME=\"FreeBSD 14.1-RELEASE-p6\"\nCPE_NAME=\"cpe:/o:freebsd:freebsd:14.1\"\n"
#define FB14_COMMON                                                                                              \
	{"uname_a", 0, {"freebsd14_uname_a.txt"}}, {"freebsd_version", 0, {"freebsd14_freebsd_version_ku.txt"}}, \
		{"os_release", 0, {FBSD_OS_RELEASE}},                                                            \
	{                                                                                                        \
		"sysctl", 0,                                                                                     \
		{                                                                                                \
			"freebsd14_sysctl_net_inet_tcp.txt", "=net.inet.ip.forwarding: 0\n"                      \
		}                                                                                                \
	}
#define FB14_FACTS                                                                                                     \
	"kind=\"freebsd\"", "kernel=\"FreeBSD\"", "release=\"14.1-RELEASE-p5\"", "machine=\"amd64\"",                  \
		"os/name=\"FreeBSD 14.1-RELEASE-p6\"", "os/id=\"freebsd\"", "os/version=\"14.1\"",                     \
		"freebsd_version/kernel=\"14.1-RELEASE-p5\"", "freebsd_version/userland=\"14.1-RELEASE-p6\"",          \
		"cpu/model=\"" TR1950X "\"", "cpu/count=32", "memory_bytes=68545294336",                               \
		"tcp/congestion_control=\"cubic\"", "tcp/congestion_available#=2",                                     \
		"tcp/congestion_available[0]=\"cubic\"", "tcp/congestion_available[1]=\"newreno\"",                    \
		"tcp/maxsockbuf=2097152", "tcp/sendbuf_max=2097152", "tcp/recvbuf_max=2097152", "tcp/sendspace=32768", \
		"tcp/recvspace=65536", "tcp/rmem=absent", "forwarding/ipv4=false", "sysctl#=11",                       \
		"sysctl/hw.model=\"" TR1950X "\"", "nic/mtu=9000"

static const struct host hosts[] = {
	{"freebsd14 ix0",
	 "freebsd",
	 "ix0",
	 {FB14_COMMON,
	  {"ifconfig", 0, {"freebsd14_ifconfig_ix0.txt"}},
	  {"pciconf", 0, {"freebsd14_pciconf_lv_nics.txt"}},
	  {"dev_desc", 0, {"freebsd14_sysctl_dev_ix_0_desc.txt"}},
	  {"dev_fw", 0, {"freebsd14_sysctl_dev_ix_0_fw_version.txt"}}},
	 {FB14_FACTS, "nic#=10", "nic/interface=\"ix0\"", "nic/driver=\"ix\"", "nic/driver_version=absent",
	  "nic/firmware=\"Option ROM V1-b2229-p0 eTrack 0x800004e0\"", "nic/bus=\"pci0:4:0:0\"",
	  "nic/description=" X520, "nic/vendor=\"Intel Corporation\"", "nic/device=" E82599,
	  "nic/mac=\"90:e2:ba:8c:2a:18\"", "nic/offloads#=15", "nic/offloads/TSO4=true", "nic/offloads/MEXTPG=true",
	  "nic/offloads/NOMAP=absent", "errors=absent"}},
	{"freebsd14 mlxen0",
	 "freebsd",
	 "mlxen0",
	 {FB14_COMMON,
	  {"ifconfig", 0, {"freebsd14_ifconfig_mlxen0.txt"}},
	  {"pciconf", 0, {"freebsd14_pciconf_lv_nics.txt"}},
	  {"dev_desc", 0, {"freebsd14_sysctl_dev_mlx4_core_0_desc.txt"}},
	  {"dev_fw", 1, {"freebsd14_sysctl_dev_mlx4_core_0_fw_version.stderr.txt"}}},
	 {FB14_FACTS, "nic/interface=\"mlxen0\"", "nic/driver=\"mlx4_core\"", "nic/firmware=null",
	  "nic/bus=\"pci0:9:0:0\"", "nic/description=\"mlx4_core\"", "nic/vendor=\"Mellanox Technologies\"",
	  "nic/device=\"MT27520 Family [ConnectX-3 Pro]\"", "nic/mac=\"f4:52:14:3a:61:b0\"", "nic/offloads#=15",
	  "nic/offloads/LINKSTATE=true", "errors#=1", "errors[0]/section=\"dev_fw\"", "errors[0]/rc=1",
	  "errors[0]/message=\"sysctl: unknown oid 'dev.mlx4_core.0.fw_version'\""}},
	{"freebsd13 ix0, no os-release, no dev_fw",
	 "freebsd",
	 "ix0",
	 {{"uname_a", 0, {"freebsd13_uname_a.txt"}},
	  {"freebsd_version", 0, {"freebsd13_freebsd_version_ku.txt"}},
	  {"os_release", 1, {"=cat: /etc/os-release: No such file or directory\n"}},
	  {"sysctl", 0, {"freebsd13_sysctl_net_inet_tcp.txt"}},
	  {"ifconfig", 0, {"freebsd13_ifconfig_ix0.txt"}},
	  {"pciconf", 0, {"freebsd13_pciconf_lv_nics.txt"}},
	  {"dev_desc", 0, {"freebsd13_sysctl_dev_ix_0_desc.txt"}}},
	 {"kind=\"freebsd\"",
	  "release=\"13.0-RELEASE\"",
	  "machine=\"amd64\"",
	  "os=absent",
	  "freebsd_version/userland=\"13.0-RELEASE\"",
	  "cpu/model=\"" FB13_MODEL "\"",
	  "cpu/count=32",
	  "memory_bytes=137346981888",
	  "tcp/congestion_control=\"newreno\"",
	  "tcp/congestion_available#=1",
	  "tcp/congestion_available[0]=\"newreno\"",
	  "tcp/sendspace=32768",
	  "forwarding=absent",
	  "sysctl#=10",
	  "nic/driver=\"ix\"",
	  "nic/firmware=absent",
	  "nic/bus=\"pci0:4:0:0\"",
	  "nic/description=" X520,
	  "nic/mac=\"90:e2:ba:8c:21:40\"",
	  "nic/offloads/NOMAP=true",
	  "nic/offloads/MEXTPG=absent",
	  "errors#=1",
	  "errors[0]/section=\"os_release\"",
	  "errors[0]/rc=1",
	  "errors[0]/message=\"cat: /etc/os-release: No such file or directory\""}},
	/* no nproc or meminfo capture for Ubuntu: the README's u24-bench (1950X, 64 GB) */
	{"ubuntu24 enp4s0f0 (ixgbe)",
	 "linux",
	 "enp4s0f0",
	 {{"uname_a", 0, {"ubuntu24_uname_a.txt"}},
	  {"os_release", 0, {"ubuntu24_os_release.txt"}},
	  {"cpu_model", 0, {"ubuntu24_proc_cpuinfo_model_name.txt"}},
	  {"nproc", 0, {"=32\n"}},
	  {"meminfo", 0, {"=MemTotal:       65794428 kB\n"}},
	  {"sysctl", 0, {"ubuntu24_sysctl_net.txt", "=net.ipv4.ip_forward = 1\n"}},
	  {"ethtool_i", 0, {"ubuntu24_ethtool_i_ixgbe.txt"}},
	  {"ethtool_k", 0, {"ubuntu24_ethtool_k_ixgbe.txt"}},
	  {"ip_link", 0, {"ubuntu24_ip_d_link_show_ixgbe.txt"}}},
	 {"kind=\"linux\"",
	  "kernel=\"Linux\"",
	  "release=\"6.8.0-134-generic\"",
	  "machine=\"x86_64\"",
	  "os/name=\"Ubuntu 24.04.4 LTS\"",
	  "os/id=\"ubuntu\"",
	  "os/version=\"24.04\"",
	  "freebsd_version=absent",
	  "cpu/model=\"" TR1950X "\"",
	  "cpu/count=32",
	  "memory_bytes=67373494272",
	  "nic#=8",
	  "nic/interface=\"enp4s0f0\"",
	  "nic/driver=\"ixgbe\"",
	  "nic/driver_version=\"6.8.0-134-generic\"",
	  "nic/firmware=\"0x61bd0001\"",
	  "nic/bus=\"0000:04:00.0\"",
	  "nic/description=absent",
	  "nic/mtu=9000",
	  "nic/mac=\"90:e2:ba:8c:2a:19\"",
	  "nic/offloads#=65",
	  "nic/offloads/tcp-segmentation-offload=true",
	  "nic/offloads/large-receive-offload=false",
	  "nic/offloads/tx-checksum-fcoe-crc=true",
	  "tcp/congestion_control=\"cubic\"",
	  "tcp/congestion_available#=2",
	  "tcp/congestion_available[0]=\"reno\"",
	  "tcp/congestion_available[1]=\"cubic\"",
	  "tcp/rmem#=3",
	  "tcp/rmem[0]=4096",
	  "tcp/rmem[1]=131072",
	  "tcp/rmem[2]=6291456",
	  "tcp/wmem[1]=16384",
	  "tcp/wmem[2]=4194304",
	  "tcp/rmem_max=212992",
	  "tcp/wmem_max=212992",
	  "tcp/maxsockbuf=absent",
	  "forwarding/ipv4=true",
	  "sysctl#=7",
	  "sysctl/net.ipv4.tcp_rmem=\"4096\t131072\t6291456\"",
	  "errors=absent"}},
	{"ubuntu22 enp9s0 (mlx4_en)",
	 "linux",
	 "enp9s0",
	 {{"uname_a", 0, {"ubuntu22_uname_a.txt"}},
	  {"os_release", 0, {"ubuntu22_os_release.txt"}},
	  {"cpu_model", 0, {"ubuntu22_proc_cpuinfo_model_name.txt"}},
	  {"sysctl", 0, {"ubuntu22_sysctl_net.txt"}},
	  {"ethtool_i", 0, {"ubuntu22_ethtool_i_mlx4_en.txt"}},
	  {"ethtool_k", 0, {"ubuntu22_ethtool_k_mlx4_en.txt"}},
	  {"ip_link", 0, {"ubuntu22_ip_d_link_show_mlx4_en.txt"}}},
	 {"release=\"5.15.0-161-generic\"", "os/version=\"22.04\"", "cpu/model=\"" FB13_MODEL "\"", "cpu/count=absent",
	  "memory_bytes=absent", "nic/driver=\"mlx4_en\"", "nic/driver_version=\"4.0-0\"", "nic/firmware=\"2.42.5000\"",
	  "nic/bus=\"0000:09:00.0\"", "nic/mac=\"f4:52:14:3a:5e:f1\"", "nic/offloads/rx-vlan-stag-hw-parse=true",
	  "tcp/rmem[2]=6291456", "forwarding=absent"}},
	/* ethtool missing: rc 127, no offloads */
	{"debian12 eth0 (virtio_net), no ethtool -k",
	 "linux",
	 "eth0",
	 {{"uname_a", 0, {"debian12_uname_a.txt"}},
	  {"os_release", 0, {"debian12_os_release.txt"}},
	  {"cpu_model", 0, {"debian12_proc_cpuinfo_model_name.txt"}},
	  {"nproc", 0, {"debian12_nproc.txt"}},
	  {"sysctl", 0, {"debian12_sysctl_net.txt"}},
	  {"ethtool_i", 0, {"debian12_ethtool_i_virtio_net.txt"}},
	  {"ethtool_k", 127, {"=sh: 1: ethtool: not found\n"}},
	  {"ip_link", 0, {"debian12_ip_d_link_show.txt"}}},
	 {"release=\"6.18.44-fc-v1045\"",
	  "os/name=\"Debian GNU/Linux 12 (bookworm)\"",
	  "os/version=\"12\"",
	  "cpu/model=\"AMD EPYC\"",
	  "cpu/count=2",
	  "nic/driver=\"virtio_net\"",
	  "nic/firmware=null",
	  "nic/bus=\"0000:00:03.0\"",
	  "nic/mtu=1400",
	  "nic/mac=\"02:fc:00:00:00:01\"",
	  "nic/offloads=absent",
	  "tcp/congestion_control=\"bbr\"",
	  "tcp/congestion_available#=3",
	  "tcp/congestion_available[1]=\"bbr\"",
	  "tcp/rmem[2]=33554432",
	  "tcp/rmem_max=4194304",
	  "errors#=1",
	  "errors[0]/section=\"ethtool_k\"",
	  "errors[0]/rc=127",
	  "errors[0]/message=\"sh: 1: ethtool: not found\""}},
};

#define NHOSTS (sizeof(hosts) / sizeof(hosts[0]))

/* ---- files ---- */

static char data_dir[1024];

/* The file's bytes, NUL-terminated (malloc'd). */
static char *read_data(const char *name, size_t *len)
{
	char *buf = tb_test_read_file(data_dir, name, len);

	if (buf == NULL)
		fail_msg("cannot read %s/%s", data_dir, name);
	return buf;
}

/* A growing byte buffer. */
struct text {
	char *p;
	size_t n;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	t->p = realloc(t->p, t->n + n + 1);
	assert_non_null(t->p);
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

static void text_puts(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

/* One section as the script prints it (the header's format). */
static void add_section(struct text *t, const char *name, int rc, const char *const src[], size_t nsrc)
{
	char line[64];

	text_puts(t, TB_HOSTMETA_SECTION);
	text_puts(t, name);
	text_puts(t, "\n");
	for (size_t i = 0; i < nsrc && src[i] != NULL; i++) {
		if (src[i][0] == '=') {
			text_puts(t, src[i] + 1);
		} else {
			size_t n;
			char *buf = read_data(src[i], &n);

			text_add(t, buf, n);
			free(buf);
		}
	}
	if (t->n > 0 && t->p[t->n - 1] != '\n')
		text_puts(t, "\n");
	snprintf(line, sizeof(line), "%s%d\n", TB_HOSTMETA_RC, rc);
	text_puts(t, line);
}

static struct text assemble(const struct host *h)
{
	struct text t = {NULL, 0};

	text_puts(&t, "");
	for (size_t i = 0; i < sizeof(h->secs) / sizeof(h->secs[0]) && h->secs[i].name != NULL; i++)
		add_section(&t, h->secs[i].name, h->secs[i].rc, h->secs[i].src, 3);
	return t;
}

static const struct host *find_host(const char *label)
{
	for (size_t i = 0; i < NHOSTS; i++)
		if (strcmp(hosts[i].label, label) == 0)
			return &hosts[i];
	fail_msg("no host %s", label);
	return NULL;
}

static json_t *parse_ok(const char *kind, const char *iface, const char *text, size_t len)
{
	json_t *out = (json_t *)1;

	assert_int_equal(tb_hostmeta_parse(kind, iface, text, len, &out), 0);
	assert_non_null(out);
	return out;
}

/* ---- facts ---- */

static void check_fact(const json_t *root, const char *what, const char *fact)
{
	char path[160];
	const char *eq = strchr(fact, '='), *want; /* no key holds a '=' */
	const json_t *v;
	bool ok;
	size_t n;

	assert_non_null(eq);
	n = (size_t)(eq - fact);
	assert_true(n < sizeof(path));
	memcpy(path, fact, n);
	path[n] = '\0';
	want = eq + 1;
	if (n > 0 && path[n - 1] == '#') {
		path[n - 1] = '\0';
		v = tb_test_walk(root, path, '/');
		ok = (json_is_array(v) && json_array_size(v) == (size_t)atoi(want)) ||
		     (json_is_object(v) && json_object_size(v) == (size_t)atoi(want));
	} else {
		v = tb_test_walk(root, path, '/');
		if (strcmp(want, "absent") == 0)
			ok = v == NULL;
		else if (strcmp(want, "null") == 0)
			ok = json_is_null(v);
		else if (strcmp(want, "true") == 0 || strcmp(want, "false") == 0)
			ok = json_is_boolean(v) && json_is_true(v) == (want[0] == 't');
		else if (want[0] == '"')
			ok = json_is_string(v) && strlen(want) >= 2 && json_string_length(v) == strlen(want) - 2 &&
			     strncmp(json_string_value(v), want + 1, strlen(want) - 2) == 0;
		else
			ok = json_is_integer(v) && json_integer_value(v) == strtoll(want, NULL, 10);
	}
	if (!ok) {
		char *got = v != NULL ? json_dumps(v, JSON_ENCODE_ANY) : NULL;

		print_error("%s: %s: got %s\n", what, fact, got != NULL ? got : "(absent)");
		free(got);
		fail();
	}
}

static void check_facts(const json_t *root, const char *what, const char *const facts[], size_t max)
{
	for (size_t i = 0; i < max && facts[i] != NULL; i++) {
		if (strcmp(facts[i], "NULL") == 0) {
			if (root != NULL) {
				char *got = json_dumps(root, JSON_ENCODE_ANY);

				print_error("%s: want NULL, got %s\n", what, got);
				free(got);
				fail();
			}
			continue;
		}
		if (root == NULL)
			fail_msg("%s: the parser found nothing", what);
		check_fact(root, what, facts[i]);
	}
}

/* ---- the table ---- */

static const char *kind_of_file(const char *file)
{
	return strncmp(file, "freebsd", 7) == 0 ? "freebsd" : "linux";
}

/* The file's value as `sysctl -n` prints it, trimmed as the map keeps it. */
static char *trimmed(char *s)
{
	size_t n = strlen(s);
	char *p = s;

	while (*p == '\n')
		p++;
	while (n > (size_t)(p - s) && strchr(" \t\n", s[n - 1]) != NULL)
		s[--n] = '\0';
	return p;
}

static json_t *run_sample(const struct sample *s, const char *buf, size_t len)
{
	struct text t = {NULL, 0};
	char line[64];
	json_t *r;

	switch (s->parser) {
	case P_SYSCTL: return tb_hostmeta_sysctl(buf);
	case P_OS: return tb_hostmeta_os_release(buf);
	case P_ETHI: return tb_hostmeta_ethtool_i(buf);
	case P_ETHK: return tb_hostmeta_ethtool_k(buf);
	case P_IPLINK: return tb_hostmeta_ip_link(buf);
	case P_IFCONFIG: return tb_hostmeta_ifconfig(buf);
	case P_PCICONF: return tb_hostmeta_pciconf(buf);
	case P_CC: return tb_hostmeta_cc_list(buf);
	default: break;
	}
	/* P_FULL: the one section through the whole parser */
	snprintf(line, sizeof(line), "%s%d\n", TB_HOSTMETA_RC, s->rc);
	text_puts(&t, TB_HOSTMETA_SECTION);
	text_puts(&t, s->arg);
	text_puts(&t, "\n");
	text_add(&t, buf, len);
	text_puts(&t, line);
	r = parse_ok(kind_of_file(s->file), s->iface, t.p, t.n);
	if (strcmp(s->arg, "sysctl") == 0) {
		/* the sysctl map alone: NULL when nothing in it */
		json_t *m = json_incref(json_object_get(r, "sysctl"));

		json_decref(r);
		r = m;
	}
	free(t.p);
	return r;
}

static void test_samples(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample *s = &samples[i];
		size_t len;
		char *buf = read_data(s->file, &len), what[256];

		snprintf(what, sizeof(what), "%s (row %zu)", s->file, i);
		if (s->parser == P_NVALUE || s->parser == P_UNAME) {
			char *other = read_data(s->other, NULL);
			struct sample full = {s->other, P_FULL, "uname_a", NULL, NULL, 0, {NULL}};
			json_t *r = s->parser == P_NVALUE ? tb_hostmeta_sysctl(other)
							  : run_sample(&full, other, strlen(other));
			const char *want = trimmed(buf);

			if (!json_is_string(json_object_get(r, s->arg)) ||
			    strcmp(json_string_value(json_object_get(r, s->arg)), want) != 0)
				fail_msg("%s: %s of %s is not \"%s\"", what, s->arg, s->other, want);
			json_decref(r);
			free(other);
		} else {
			json_t *r = run_sample(s, buf, len);

			check_facts(r, what, s->facts, sizeof(s->facts) / sizeof(s->facts[0]));
			json_decref(r);
		}
		free(buf);
	}
}

/* Every capture is in the table, or named as a command the script does not run. */
static void test_every_file(void **state)
{
	DIR *d = opendir(data_dir);
	struct dirent *e;
	int seen = 0;

	(void)state;
	if (d == NULL)
		fail_msg("cannot open %s", data_dir);
	while ((e = readdir(d)) != NULL) {
		bool found = false;

		if (e->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < NSAMPLES && !found; i++)
			found = strcmp(samples[i].file, e->d_name) == 0;
		for (size_t i = 0; i < sizeof(not_ours) / sizeof(not_ours[0]) && !found; i++)
			found = strstr(e->d_name, not_ours[i]) != NULL;
		if (!found)
			fail_msg("%s/%s is in no test", data_dir, e->d_name);
		seen++;
	}
	closedir(d);
	assert_true(seen > 70);
}

/* ---- whole outputs ---- */

static void test_hosts(void **state)
{
	(void)state;
	for (size_t i = 0; i < NHOSTS; i++) {
		struct text t = assemble(&hosts[i]);
		json_t *r = parse_ok(hosts[i].kind, hosts[i].iface, t.p, t.n);

		check_facts(r, hosts[i].label, hosts[i].facts, sizeof(hosts[i].facts) / sizeof(hosts[i].facts[0]));
		/* the text need not end in NUL */
		{
			char *copy = malloc(t.n);
			json_t *r2;

			assert_non_null(copy);
			memcpy(copy, t.p, t.n);
			r2 = parse_ok(hosts[i].kind, hosts[i].iface, copy, t.n);
			assert_true(json_equal(r, r2));
			json_decref(r2);
			free(copy);
		}
		json_decref(r);
		free(t.p);
	}
}

/* Odd but well-formed: sections in any order, twice, unknown, outside text. */
static void test_odd_outputs(void **state)
{
	static const struct {
		const char *kind, *iface, *text;
		const char *facts[8];
	} cases[] = {
		{"linux", NULL, "", {"kind=\"linux\"", "uname=absent", "errors=absent", "nic=absent"}},
		{"unknown",
		 NULL,
		 "@@testbedd-section uname_a\nLinux h 6.1 #1 x86_64 GNU/Linux\n@@testbedd-rc 0\n",
		 {"kind=absent", "release=\"6.1\"", "machine=\"x86_64\""}},
		{"linux",
		 NULL,
		 "motd\n@@testbedd-section nproc\n4\n@@testbedd-rc 0\nnoise\n@@testbedd-section nproc\n8\n"
		 "@@testbedd-rc 0\n",
		 {"cpu/count=8"}},
		{"linux",
		 NULL,
		 "@@testbedd-section mystery\nwhat\n@@testbedd-rc 3\n",
		 {"errors[0]/section=\"mystery\"", "errors[0]/rc=3", "errors[0]/message=\"what\""}},
		{"linux",
		 NULL,
		 "@@testbedd-section nproc\n\n\n@@testbedd-rc 2\n",
		 {"errors[0]/message=\"\"", "cpu=absent"}},
		/* a FreeBSD interface pciconf does not list (cloned, or the sim's veth):
		 * no dev.D.U node, and saying so is no failed part; a listed one's is */
		{"freebsd",
		 "data0",
		 "@@testbedd-section pciconf\nix0@pci0:3:0:0:\tclass=0x020000 rev=0x01 hdr=0x00 vendor=0x8086 "
		 "device=0x10fb subvendor=0x8086 subdevice=0x0003\n@@testbedd-rc 0\n"
		 "@@testbedd-section dev_desc\nsysctl: unknown oid 'dev.data.0.%desc'\n@@testbedd-rc 1\n"
		 "@@testbedd-section dev_fw\nsysctl: unknown oid 'dev.data.0.fw_version'\n@@testbedd-rc 1\n",
		 {"errors=absent", "nic=absent"}},
		{"freebsd",
		 "ix0",
		 "@@testbedd-section pciconf\nix0@pci0:3:0:0:\tclass=0x020000 rev=0x01 hdr=0x00 vendor=0x8086 "
		 "device=0x10fb subvendor=0x8086 subdevice=0x0003\n@@testbedd-rc 0\n"
		 "@@testbedd-section dev_fw\nsysctl: unknown oid 'dev.ix.0.fw_version'\n@@testbedd-rc 1\n",
		 {"errors#=1", "errors[0]/section=\"dev_fw\"", "nic/driver=\"ix\"", "nic/firmware=null"}},
		/* the script's own layout: an empty line before each rc line */
		{"linux",
		 NULL,
		 "@@testbedd-section nproc\n6\n\n@@testbedd-rc 0\n@@testbedd-section sysctl\n"
		 "net.ipv4.ip_forward = 0\n\n@@testbedd-rc 0\n",
		 {"cpu/count=6", "forwarding/ipv4=false", "sysctl#=1"}},
		/* IPv6 forwarding beside IPv4's (issue 20 item 8); either alone */
		{"linux",
		 NULL,
		 "@@testbedd-section sysctl\nnet.ipv4.ip_forward = 0\nnet.ipv6.conf.all.forwarding = 1\n@@testbedd-rc 0\n",
		 {"forwarding/ipv4=false", "forwarding/ipv6=true"}},
		{"freebsd",
		 NULL,
		 "@@testbedd-section sysctl\nnet.inet6.ip6.forwarding: 1\n@@testbedd-rc 0\n",
		 {"forwarding/ipv6=true", "forwarding/ipv4=absent"}},
		/* a last line without its newline (the script's echo adds one) */
		{"freebsd", NULL, "@@testbedd-section sysctl\nhw.ncpu: 4\n@@testbedd-rc 0\n", {"cpu/count=4"}},
		/* cut off inside a line: the partial line is not read */
		{"freebsd",
		 NULL,
		 "@@testbedd-section sysctl\nhw.ncpu: 4\nhw.physmem: 12",
		 {"cpu/count=4", "memory_bytes=absent"}},
		{"freebsd",
		 NULL,
		 "@@testbedd-section sysctl\nsysctl: unknown oid 'x'\nhw.ncpu: 4\n@@testbedd-rc 1\n",
		 {"cpu/count=4", "sysctl#=1", "errors[0]/message=\"sysctl: unknown oid 'x'\""}},
		{"linux",
		 "lo",
		 "@@testbedd-section ip_link\nDevice \"lo\" does not exist.\n@@testbedd-rc 1\n",
		 {"nic=absent", "errors[0]/rc=1"}},
		{"freebsd",
		 "bridge0",
		 "@@testbedd-section ifconfig\nbridge0: flags=8843<UP> metric 0 mtu 1500\n"
		 "@@testbedd-rc 0\n",
		 {"nic/driver=\"bridge\"", "nic/mtu=1500", "nic/offloads=absent"}},
		{"linux",
		 NULL,
		 "@@testbedd-section meminfo\nMemTotal:       1024 kB\n@@testbedd-rc 0\n",
		 {"memory_bytes=1048576"}},
		/* non-UTF-8 bytes become '?' */
		{"linux",
		 NULL,
		 "@@testbedd-section cpu_model\nmodel name\t: caf\xe9\n@@testbedd-rc 0\n",
		 {"cpu/model=\"caf?\""}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = parse_ok(cases[i].kind, cases[i].iface, cases[i].text, strlen(cases[i].text));
		char what[32];

		snprintf(what, sizeof(what), "odd case %zu", i);
		check_facts(r, what, cases[i].facts, sizeof(cases[i].facts) / sizeof(cases[i].facts[0]));
		json_decref(r);
	}
}

/* The section parsers on small texts of their own. */
static void test_parser_cases(void **state)
{
	static const struct {
		enum parser parser;
		const char *text;
		const char *facts[6];
	} cases[] = {
		{P_CC, "newreno, cubic", {"#=2", "[0]=\"newreno\"", "[1]=\"cubic\""}},
		{P_CC, "reno cubic", {"#=2", "[1]=\"cubic\""}},
		{P_CC, CC14, {"#=2", "[0]=\"cubic\"", "[1]=\"newreno\""}},
		{P_CC, "", {"NULL"}},
		{P_CC, "\nCCmod           D PCB count\n\n", {"NULL"}},
		{P_OS,
		 "# comment\nA=\"x \\\"y\\\" \\$z\"\nB='a b'\nC=bare\n=no\nD\n",
		 {"#=3", "A=\"x \"y\" $z\"", "B=\"a b\"", "C=\"bare\""}},
		{P_OS, "garbage\n", {"NULL"}},
		{P_SYSCTL, "kern.x: a\n  b  \n\nkern.y: \n\n", {"#=2", "kern.x=\"a\n  b\"", "kern.y=\"\""}},
		{P_SYSCTL, "sysctl: cannot stat /proc/sys/net/x: No such file or directory\n", {"NULL"}},
		{P_ETHI, "Cannot get driver information: Operation not supported\n", {"NULL"}},
		{P_ETHK, "Features for lo:\nrx-checksumming: on [fixed]\nweird: maybe\n", {"#=1"}},
		{P_IPLINK, "    link/ether 00:11:22:33:44:55\n", {"NULL"}},
		{P_IPLINK,
		 "7: br0.5@br0: <UP> mtu 1500\n    link/none promiscuity 0\n",
		 {"name=\"br0.5\"", "link_type=\"none\"", "mac=absent", "promiscuity=0"}},
		{P_IFCONFIG, "ifconfig: interface ix9 does not exist\n", {"NULL"}},
		{P_PCICONF, "    vendor = 'x'\n", {"NULL"}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sample s = {"case", cases[i].parser, NULL, NULL, NULL, 0, {NULL}};
		json_t *r = run_sample(&s, cases[i].text, strlen(cases[i].text));
		char what[32];

		snprintf(what, sizeof(what), "parser case %zu", i);
		check_facts(r, what, cases[i].facts, sizeof(cases[i].facts) / sizeof(cases[i].facts[0]));
		json_decref(r);
	}
	assert_null(tb_hostmeta_sysctl(NULL));
}

/* ---- link shaping ---- */

/* `ipfw pipe show`, constructed (no FreeBSD capture is at hand) from the
 * printf formats of FreeBSD's sbin/ipfw/dummynet.c, list_pipes() and
 * print_flowset_parms(): pipes 1-3 as FreeBSD 8..15 print them (a pipe with
 * a flow mask has its flow table after it), then one pipe as the pre-8
 * dummynet printed it, queue and plr on the link line. */
#define IPFW_NEW                                                                                       \
	"00001:  50.000 Mbit/s    0 ms burst 0\n"                                                      \
	"q131073  50 sl.plr 0.020000 0 flows (1 buckets) sched 65537 weight 0 lmax 0 pri 0 droptail\n" \
	" sched 65537 type FIFO flags 0x0 0 buckets 0 active\n"                                        \
	"00002: unlimited       300 ms burst 0\n"                                                      \
	"q131074  64 KB 0 flows (1 buckets) sched 65538 weight 0 lmax 0 pri 0 droptail\n"              \
	" sched 65538 type FIFO flags 0x0 0 buckets 0 active\n"                                        \
	"00003: 500.000 Kbit/s    0 ms burst 0\n"                                                      \
	"q131075  50 sl. 0 flows (64 buckets) sched 65539 weight 0 lmax 0 pri 0 droptail\n"            \
	"    mask:  0x00 0x00000000/0x0000 -> 0xffffffff/0x0000\n"                                     \
	"BKT Prot ___Source IP/port____ ____Dest. IP/port____ Tot_pkt/bytes Pkt/Byte Drp\n"            \
	" 12 ip           0.0.0.0/0         198.19.20.2/0     123    45678  0    0   0\n"
#define IPFW_OLD "00007:  10.000 Mbit/s   20 ms   50 sl.plr 0.100000 0 queues (1 buckets) droptail\n"
/* `tc qdisc show` captured on Debian 12 (kernel 6.18) in a network namespace
 * with a tbf on ix0 and an ingress qdisc on lo; then a constructed netem with
 * a tbf below it (this kernel has no netem), as iproute2's tc prints them. */
#define TC_SHOW                                                                                                 \
	"qdisc noqueue 0: dev lo root refcnt 2 \n"                                                              \
	"qdisc ingress ffff: dev lo parent ffff:fff1 ---------------- \n"                                       \
	"qdisc noqueue 0: dev ix1 root refcnt 2 \n"                                                             \
	"qdisc tbf 8025: dev ix0 root refcnt 3 rate 100Mbit burst 125000b lat 50ms \n"                          \
	"qdisc mq 0: dev eth0 root \n"                                                                          \
	"qdisc fq_codel 0: dev eth0 parent :1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms\n" \
	"qdisc netem 1: dev ix2 root refcnt 2 limit 1000 delay 300ms\n"                                         \
	"qdisc tbf 10: dev ix2 parent 1:1 rate 50Mbit burst 62500b lat 50ms\n"

static void check_pipe(const json_t *pipes, const char *n, json_int_t bw, json_int_t delay, double plr,
		       const char *queue)
{
	const json_t *p = json_object_get(pipes, n);

	if (p == NULL)
		fail_msg("pipe %s absent", n);
	assert_int_equal(json_integer_value(json_object_get(p, "bw_bps")), bw);
	assert_int_equal(json_integer_value(json_object_get(p, "delay_ms")), delay);
	assert_true(json_is_real(json_object_get(p, "plr")));
	assert_float_equal(json_real_value(json_object_get(p, "plr")), plr, 1e-9);
	assert_string_equal(json_string_value(json_object_get(p, "queue")), queue);
}

static void check_qdisc(const json_t *q, const char *key, const char *kind, const char *options)
{
	const json_t *e = json_object_get(q, key);

	if (e == NULL)
		fail_msg("qdisc \"%s\" absent", key);
	assert_string_equal(json_string_value(json_object_get(e, "kind")), kind);
	assert_string_equal(json_string_value(json_object_get(e, "options")), options);
}

static void test_shaping(void **state)
{
	static const char bsd_out[] = TB_HOSTMETA_SECTION "shaping\n" IPFW_NEW TB_HOSTMETA_RC "0\n";
	static const char lx_out[] = TB_HOSTMETA_SECTION "shaping\n" TC_SHOW TB_HOSTMETA_RC "0\n";
	/* dummynet not loaded: the script's `if kldstat` prints the no-shaper line, rc 0 */
	static const char bsd_none[] = TB_HOSTMETA_SECTION "shaping\n" TB_HOSTMETA_NO_SHAPER "\n" TB_HOSTMETA_RC "0\n";
	/* loaded without pipes; tc with the kernel's default qdiscs only */
	static const char bsd_empty[] = TB_HOSTMETA_SECTION "shaping\n" TB_HOSTMETA_RC "0\n";
	static const char lx_empty[] = TB_HOSTMETA_SECTION
		"shaping\nqdisc noqueue 0: dev lo root refcnt 2 \n" TB_HOSTMETA_RC "0\n";
	json_t *j;

	(void)state;
	j = tb_hostmeta_ipfw_pipes(IPFW_NEW IPFW_OLD);
	assert_non_null(j);
	assert_int_equal(json_object_size(j), 4);
	check_pipe(j, "1", 50000000, 0, 0.02, "50 sl.");
	check_pipe(j, "2", 0, 300, 0, "64 KB");
	check_pipe(j, "3", 500000, 0, 0, "50 sl.");
	check_pipe(j, "7", 10000000, 20, 0.1, "50 sl.");
	json_decref(j);
	assert_null(tb_hostmeta_ipfw_pipes(""));
	assert_null(tb_hostmeta_ipfw_pipes("ipfw: socket: Protocol not available\n"));
	assert_null(tb_hostmeta_ipfw_pipes(" sched 65537 type FIFO flags 0x0 0 buckets 0 active\n"));

	j = tb_hostmeta_tc_qdisc(TC_SHOW);
	assert_non_null(j);
	assert_int_equal(json_object_size(j), 4);
	check_qdisc(j, "ix0 root", "tbf", "rate 100Mbit burst 125000b lat 50ms");
	check_qdisc(j, "lo parent ffff:fff1", "ingress", "----------------");
	check_qdisc(j, "ix2 root", "netem", "limit 1000 delay 300ms");
	check_qdisc(j, "ix2 parent 1:1", "tbf", "rate 50Mbit burst 62500b lat 50ms");
	json_decref(j);
	assert_null(tb_hostmeta_tc_qdisc("qdisc noqueue 0: dev lo root refcnt 2 \n"));
	assert_null(tb_hostmeta_tc_qdisc("Cannot find device \"x\"\nqdisc tbf 1: dev\n"));

	/* through the whole parser: "shaping" of each kind, none when nothing is shaped */
	j = parse_ok("freebsd", NULL, bsd_out, sizeof(bsd_out) - 1);
	check_pipe(tb_test_walk(j, "shaping/pipes", '/'), "1", 50000000, 0, 0.02, "50 sl.");
	json_decref(j);
	j = parse_ok("linux", NULL, lx_out, sizeof(lx_out) - 1);
	check_qdisc(tb_test_walk(j, "shaping/qdiscs", '/'), "ix0 root", "tbf", "rate 100Mbit burst 125000b lat 50ms");
	assert_null(json_object_get(j, "errors"));
	json_decref(j);
	j = parse_ok("freebsd", NULL, bsd_none, sizeof(bsd_none) - 1);
	assert_null(json_object_get(j, "shaping"));
	assert_null(json_object_get(j, "errors"));
	json_decref(j);
	j = parse_ok("freebsd", NULL, bsd_empty, sizeof(bsd_empty) - 1);
	assert_int_equal(json_object_size(tb_test_walk(j, "shaping/pipes", '/')), 0);
	assert_true(json_is_object(tb_test_walk(j, "shaping/pipes", '/')));
	json_decref(j);
	j = parse_ok("linux", NULL, lx_empty, sizeof(lx_empty) - 1);
	assert_true(json_is_object(tb_test_walk(j, "shaping/qdiscs", '/')));
	assert_int_equal(json_object_size(tb_test_walk(j, "shaping/qdiscs", '/')), 0);
	json_decref(j);
}

/* ---- the script ---- */

static void test_script_refused(void **state)
{
	static const struct {
		const char *kind, *iface;
		bool ok;
	} cases[] = {
		{"linux", NULL, true},
		{"freebsd", NULL, true},
		{"Linux", "eth0", true},
		{"FreeBSD", "ix0", true},
		{"unknown", NULL, false},
		{NULL, NULL, false},
		{"", "eth0", false},
		{"linux", "a b", false},
		{"linux", "x;rm", false},
		{"linux", "", false},
		{"linux", "abcdefghijklmnop", false},
		{"linux", "abcdefghijklmno", true},
		{"freebsd", "a'b", false},
		{"linux", "$(reboot)", false},
		{"linux", "eth0\n", false},
		{"linux", "caf\xc3\xa9", false},
		{"linux", "eth0.100", true},
		{"linux", "eth0:1", true},
		{"linux", "veth-a_b", true},
		{"linux", "-h", false},
		{"freebsd", "--help", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = tb_hostmeta_script(cases[i].kind, cases[i].iface);

		if ((s != NULL) != cases[i].ok)
			fail_msg("script(%s, %s): %s", cases[i].kind ? cases[i].kind : "NULL",
				 cases[i].iface ? cases[i].iface : "NULL", s != NULL ? "made" : "refused");
		free(s);
	}
}

/* The section names of a script, in order, joined by ' '. */
static void script_sections(const char *script, char *out, size_t len)
{
	const char *p = script;

	out[0] = '\0';
	while ((p = strstr(p, TB_HOSTMETA_SECTION)) != NULL) {
		size_t n;

		p += strlen(TB_HOSTMETA_SECTION);
		n = strcspn(p, "'");
		if (out[0] != '\0')
			strncat(out, " ", len - strlen(out) - 1);
		strncat(out, p, n < len - strlen(out) - 1 ? n : len - strlen(out) - 1);
	}
}

static void test_script_shape(void **state)
{
	static const struct {
		const char *kind, *iface, *sections;
		const char *has[4], *lacks[3];
	} cases[] = {
		{"linux",
		 NULL,
		 "uname_a os_release cpu_model nproc meminfo sysctl shaping",
		 {"uname -a </dev/null 2>&1", "grep -m1 'model name' /proc/cpuinfo", "net.ipv4.ip_forward"},
		 {"ethtool", "ip -d", "\n"}},
		{"linux",
		 "lo",
		 "uname_a os_release cpu_model nproc meminfo sysctl shaping ethtool_i ethtool_k ip_link",
		 {"ethtool -i 'lo'", "ethtool -k 'lo'", "ip -d link show 'lo'"},
		 {"ifconfig", "\n"}},
		{"freebsd",
		 NULL,
		 "uname_a freebsd_version os_release sysctl shaping",
		 {"freebsd-version -ku", "net.inet.tcp.cc.available hw.model",
		  "kldstat -q -m dummynet; then ipfw pipe show"},
		 {"ifconfig", "pciconf", "dev."}},
		{"freebsd",
		 "ix0",
		 "uname_a freebsd_version os_release sysctl shaping ifconfig pciconf dev_desc dev_fw",
		 {"ifconfig 'ix0'", "pciconf -lv", "sysctl 'dev.ix.0.%desc'", "sysctl 'dev.ix.0.fw_version'"},
		 {"ethtool", "\n"}},
		{"freebsd",
		 "mlxen0",
		 NULL,
		 {"ifconfig 'mlxen0'", "sysctl 'dev.mlx4_core.0.%desc'", "sysctl 'dev.mlx4_core.0.fw_version'"},
		 {"dev.mlxen"}},
		{"freebsd", "mce12", NULL, {"ifconfig 'mce12'", "'dev.mlx5_core.12.%desc'"}, {"dev.mce"}},
		{"freebsd",
		 "bridge",
		 "uname_a freebsd_version os_release sysctl shaping ifconfig pciconf",
		 {"ifconfig 'bridge'"},
		 {"dev."}},
		{"freebsd",
		 "vlan0.100",
		 "uname_a freebsd_version os_release sysctl shaping ifconfig pciconf",
		 {NULL},
		 {"dev."}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = tb_hostmeta_script(cases[i].kind, cases[i].iface), names[512];

		assert_non_null(s);
		script_sections(s, names, sizeof(names));
		if (cases[i].sections != NULL && strcmp(names, cases[i].sections) != 0)
			fail_msg("script(%s, %s): sections \"%s\"", cases[i].kind, cases[i].iface, names);
		for (size_t k = 0; k < 4 && cases[i].has[k] != NULL; k++)
			if (strstr(s, cases[i].has[k]) == NULL)
				fail_msg("script(%s, %s) lacks \"%s\": %s", cases[i].kind, cases[i].iface,
					 cases[i].has[k], s);
		for (size_t k = 0; k < 3 && cases[i].lacks[k] != NULL; k++)
			if (strstr(s, cases[i].lacks[k]) != NULL)
				fail_msg("script(%s, %s) has \"%s\": %s", cases[i].kind, cases[i].iface,
					 cases[i].lacks[k], s);
		/* nothing csh would expand, so the caller's quoting is enough */
		assert_null(strchr(s, '!'));
		free(s);
	}
}

/* Run argv, stdin /dev/null; its stdout (and stderr) as a string. */
static char *run_capture(const char *const argv[], size_t *len)
{
	int fds[2], status;
	struct text t = {NULL, 0};
	char buf[4096];
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *in = freopen("/dev/null", "r", stdin);

		(void)in;
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	close(fds[1]);
	text_puts(&t, "");
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		text_add(&t, buf, (size_t)n);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	*len = t.n;
	return t.p;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* The real Linux script on a kernel without IPv6 (ipv6.disable=1: no
 * /proc/sys/net/ipv6; here a tmpfs hides it in a mount namespace of the
 * test's own, unshare -m): the sysctl section is no error, the IPv4 values
 * are there and IPv6 forwarding is left out.  Before, the key IPv6
 * forwarding added made sysctl exit 1 and every read on such a host
 * recorded an error of the section.  Skipped where unshare cannot run
 * (not root). */
static void test_script_without_ipv6(void **state)
{
	char *script = tb_hostmeta_script("linux", "lo");
	const char *argv[] = {"/usr/bin/unshare",
			      "-m",
			      "sh",
			      "-c",
			      "mount -t tmpfs none /proc/sys/net/ipv6 && test ! -e /proc/sys/net/ipv6/conf && "
			      "exec sh -c \"$0\"",
			      script,
			      NULL};
	const json_t *errs, *e;
	size_t len, i;
	char *out;
	json_t *r;

	(void)state;
	assert_non_null(script);
	if (geteuid() != 0 || access("/proc/sys/net/ipv6", F_OK) != 0 || access(argv[0], X_OK) != 0) {
		free(script);
		skip();
	}
	out = run_capture(argv, &len);
	assert_int_equal(count(out, TB_HOSTMETA_SECTION), 10);
	r = parse_ok("linux", "lo", out, len);
	errs = json_object_get(r, "errors");
	json_array_foreach(errs, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "section")), "sysctl") == 0)
			fail_msg("sysctl section failed without IPv6: %s",
				 json_string_value(json_object_get(e, "message")));
	}
	assert_true(json_is_boolean(tb_test_walk(r, "forwarding/ipv4", '/')));
	assert_null(tb_test_walk(r, "forwarding/ipv6", '/'));
	assert_true(json_is_string(tb_test_walk(r, "tcp/congestion_control", '/')));
	json_decref(r);
	free(out);
	free(script);
}

/* The real script on this (Debian) machine, through /bin/sh and through the
 * login shells the caller's quoting is made for. */
static void test_script_runs(void **state)
{
	static const char *const shells[] = {"/bin/sh", "/bin/bash", "/usr/bin/tcsh"};
	char *linux_script = tb_hostmeta_script("linux", "lo");
	char *bsd_script = tb_hostmeta_script("freebsd", "ix0");
	struct utsname u;
	int ran = 0;

	(void)state;
	assert_non_null(linux_script);
	assert_non_null(bsd_script);
	assert_int_equal(uname(&u), 0);
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		const char *sh_argv[] = {"sh", "-c", linux_script, NULL};
		struct tb_error err;
		char *line, *out;
		size_t len;
		json_t *r;

		if (access(shells[i], X_OK) != 0)
			continue;
		tb_error_clear(&err);
		line = i == 0 ? NULL : tb_ssh_command_line(sh_argv, &err);
		{
			const char *argv[] = {shells[i], "-c", i == 0 ? linux_script : line, NULL};

			out = run_capture(argv, &len);
		}
		ran++;
		assert_int_equal(count(out, TB_HOSTMETA_SECTION), 10);
		assert_int_equal(count(out, TB_HOSTMETA_RC), 10);
		r = parse_ok("linux", "lo", out, len);
		{
			const char *facts[] = {"kind=\"linux\"", "kernel=\"Linux\"", "nic/interface=\"lo\"",
					       "nic/mtu=65536",  "tcp/rmem#=3",      NULL};
			const json_t *v;

			check_facts(r, shells[i], facts, 5);
			assert_string_equal(json_string_value(json_object_get(r, "release")), u.release);
			assert_string_equal(json_string_value(json_object_get(r, "machine")), u.machine);
			v = tb_test_walk(r, "cpu/count", '/');
			assert_true(json_is_integer(v) && json_integer_value(v) >= 1);
			v = tb_test_walk(r, "memory_bytes", '/');
			assert_true(json_is_integer(v) && json_integer_value(v) > 0);
			assert_true(json_is_string(tb_test_walk(r, "os/id", '/')));
			assert_true(json_is_boolean(tb_test_walk(r, "forwarding/ipv4", '/')));
			assert_true(json_is_string(tb_test_walk(r, "tcp/congestion_control", '/')));
		}
		json_decref(r);
		free(out);
		free(line);
	}
	assert_true(ran >= 2);
	/* FreeBSD's commands on Linux: each fails on its own, the script goes on */
	{
		const char *argv[] = {"/bin/sh", "-c", bsd_script, NULL};
		size_t len;
		char *out = run_capture(argv, &len);
		json_t *r = parse_ok("freebsd", "ix0", out, len), *e;
		size_t i;
		bool saw = false;

		assert_int_equal(count(out, TB_HOSTMETA_RC), 9);
		assert_string_equal(json_string_value(json_object_get(r, "kernel")), "Linux");
		json_array_foreach(json_object_get(r, "errors"), i,
				   e) if (strcmp(json_string_value(json_object_get(e, "section")), "freebsd_version") ==
					  0) saw = json_integer_value(json_object_get(e, "rc")) == 127;
		assert_true(saw);
		json_decref(r);
		free(out);
	}
	free(linux_script);
	free(bsd_script);
}

/* The either-OS script (tb_hostmeta_script_any), as the runner runs it
 * (sh -c through the login shells): this Linux machine's own uname picks
 * the Linux part and the output says so first; with $tb_kernel set by a
 * script before it (the runner's versions), FreeBSD's part runs instead,
 * without asking uname again. */
static void test_script_any(void **state)
{
	static const char *const shells[] = {"/bin/sh", "/bin/bash", "/usr/bin/tcsh"};
	static const char *const prefixes[] = {"", TB_HOSTMETA_KERNEL_VAR "=FreeBSD; "};
	char *any = tb_hostmeta_script_any("lo");
	int ran = 0;

	(void)state;
	assert_non_null(any);
	assert_null(tb_hostmeta_script_any("-lo")); /* the same names refused as tb_hostmeta_script */
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		for (size_t k = 0; k < 2; k++) {
			char *script = malloc(strlen(prefixes[k]) + strlen(any) + 1), *line, *out;
			const char *sh_argv[] = {"sh", "-c", script, NULL};
			struct tb_error err;
			const char *kind;
			size_t len;
			json_t *r;

			if (access(shells[i], X_OK) != 0) {
				free(script);
				continue;
			}
			assert_non_null(script);
			strcpy(stpcpy(script, prefixes[k]), any);
			tb_error_clear(&err);
			assert_non_null(line = tb_ssh_command_line(sh_argv, &err));
			{
				const char *argv[] = {shells[i], "-c", line, NULL};

				out = run_capture(argv, &len);
			}
			ran++;
			kind = tb_hostmeta_kind(out, len);
			assert_non_null(kind);
			assert_string_equal(kind, k == 0 ? "linux" : "freebsd");
			assert_int_equal(count(out, TB_HOSTMETA_RC),
					 k == 0 ? 10 : 7); /* "lo": no FreeBSD device sections */
			r = parse_ok(kind, "lo", out, len);
			assert_string_equal(json_string_value(json_object_get(r, "kind")), kind);
			assert_string_equal(json_string_value(json_object_get(r, "kernel")), "Linux");
			if (k == 0)
				assert_int_equal(json_integer_value(tb_test_walk(r, "nic/mtu", '/')), 65536);
			json_decref(r);
			free(out);
			free(line);
			free(script);
		}
	assert_true(ran >= 4);
	assert_null(tb_hostmeta_kind("Linux\n", 6));
	assert_null(tb_hostmeta_kind(TB_HOSTMETA_KIND "solaris\n", strlen(TB_HOSTMETA_KIND) + 8));
	assert_null(tb_hostmeta_kind(NULL, 0));
	free(any);
}

/* ---- robustness ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A parse of anything: rc 0 and an object that dumps. */
static void parse_any(const char *kind, const char *iface, const char *text, size_t len)
{
	json_t *r = parse_ok(kind, iface, text, len);
	char *s = json_dumps(r, 0);

	assert_non_null(s);
	free(s);
	json_decref(r);
}

/* Every prefix of whole outputs parses; the whole one as before. */
static void test_truncated(void **state)
{
	static const char *const labels[] = {"freebsd14 mlxen0", "ubuntu24 enp4s0f0 (ixgbe)"};

	(void)state;
	for (size_t h = 0; h < sizeof(labels) / sizeof(labels[0]); h++) {
		const struct host *host = find_host(labels[h]);
		struct text t = assemble(host);
		json_t *full = parse_ok(host->kind, host->iface, t.p, t.n);

		for (size_t n = 0; n <= t.n; n++) {
			/* a copy of exactly n bytes, so ASan sees a read past the end */
			char *cut = malloc(n > 0 ? n : 1);
			json_t *r;

			assert_non_null(cut);
			memcpy(cut, t.p, n);
			r = parse_ok(host->kind, host->iface, cut, n);
			assert_non_null(json_object_get(r, "kind"));
			if (n == t.n)
				assert_true(json_equal(r, full));
			json_decref(r);
			free(cut);
		}
		json_decref(full);
		free(t.p);
	}
}

static void test_garbage(void **state)
{
	static const char *const kinds[] = {"linux", "freebsd", "other"};
	static const char *const bits[] = {TB_HOSTMETA_SECTION,
					   TB_HOSTMETA_RC,
					   "sysctl\n",
					   "uname_a\n",
					   "0\n",
					   "1\n",
					   "\n",
					   ": ",
					   " = ",
					   "<",
					   ">",
					   ",",
					   "@",
					   "=",
					   "'",
					   "\"",
					   "\t",
					   "dev_fw\n",
					   "ifconfig\n",
					   "pciconf\n",
					   "ip_link\n",
					   "ethtool_k\n",
					   "a.b",
					   "\xff"};
	struct text t = {NULL, 0};

	(void)state;
	/* random bytes, random tokens */
	for (int round = 0; round < 400; round++) {
		size_t n = (size_t)(rnd() % 2048);

		free(t.p);
		t.p = NULL;
		t.n = 0;
		text_puts(&t, "");
		for (size_t i = 0; i < n; i++) {
			if (round % 2 == 0) {
				char c = (char)(rnd() & 0xff);

				text_add(&t, &c, 1);
			} else {
				text_puts(&t, bits[rnd() % (sizeof(bits) / sizeof(bits[0]))]);
			}
		}
		parse_any(kinds[round % 3], round % 4 == 0 ? NULL : round % 4 == 1 ? "mlxen0" : "ix0", t.p, t.n);
		/* the section parsers on the same bytes, as a string */
		{
			json_t *(*const parsers[])(const char *) = {tb_hostmeta_sysctl,    tb_hostmeta_os_release,
								    tb_hostmeta_ethtool_i, tb_hostmeta_ethtool_k,
								    tb_hostmeta_ip_link,   tb_hostmeta_ifconfig,
								    tb_hostmeta_pciconf,   tb_hostmeta_cc_list};

			for (size_t k = 0; k < sizeof(parsers) / sizeof(parsers[0]); k++)
				json_decref(parsers[k](t.p));
		}
	}
	free(t.p);
	/* only markers, a marker without its newline, odd rc lines */
	{
		static const char *const texts[] = {
			"@@testbedd-section ",
			"@@testbedd-section",
			"@@testbedd-section sysctl",
			"@@testbedd-rc 0",
			"@@testbedd-rc 0\n@@testbedd-rc 1\n",
			"@@testbedd-section \n@@testbedd-rc \n",
			"@@testbedd-section sysctl\n@@testbedd-rc x\nhw.ncpu: 1\n",
			"@@testbedd-section sysctl\n@@testbedd-rc 99999999999999999999\n",
			"@@testbedd-section sysctl\nhw.ncpu: 1\n@@testbedd-rc -1\n",
			"@@testbedd-section dev_fw\n@@testbedd-rc 1",
			"\n\n\n",
			"@@testbedd-section uname_a\n\n",
		};

		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
			for (size_t k = 0; k < 3; k++)
				parse_any(kinds[k], k == 1 ? "mlxen0" : "eth0", texts[i], strlen(texts[i]));
		t.p = NULL;
		t.n = 0;
		for (int i = 0; i < 20000; i++)
			text_puts(&t, i % 2 ? TB_HOSTMETA_RC "0\n" : TB_HOSTMETA_SECTION "sysctl\n");
		parse_any("freebsd", "ix0", t.p, t.n);
		free(t.p);
	}
	/* a huge line, a huge section name, NUL bytes */
	{
		static const char *const heads[] = {
			"@@testbedd-section sysctl\nhw.model: ", "@@testbedd-section uname_a\n", "@@testbedd-section ",
			"@@testbedd-section ifconfig\nix0: flags=<", "@@testbedd-section pciconf\nix0@"};
		size_t big = 1u << 20;

		for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
			char *buf = malloc(big + 64);

			assert_non_null(buf);
			strcpy(buf, heads[i]);
			memset(buf + strlen(heads[i]), i % 2 ? 'x' : ',', big);
			strcpy(buf + strlen(heads[i]) + big, "\n@@testbedd-rc 0\n");
			parse_any("freebsd", "ix0", buf, strlen(buf));
			buf[strlen(heads[i]) + 10] = '\0';
			parse_any("freebsd", "ix0", buf, strlen(heads[i]) + big + 17);
			free(buf);
		}
	}
}

/* ---- out of memory ---- */

static long alloc_left;

static void *failing_malloc(size_t n)
{
	return alloc_left-- > 0 ? malloc(n) : NULL;
}

/* Each jansson allocation failing in turn: -1 and no object, or the whole
 * result; never a crash, a leak (ASan) or a silently smaller object. */
static void test_out_of_memory(void **state)
{
	static const char *const labels[] = {"freebsd14 mlxen0", "ubuntu24 enp4s0f0 (ixgbe)"};

	(void)state;
	for (size_t h = 0; h < sizeof(labels) / sizeof(labels[0]); h++) {
		const struct host *host = find_host(labels[h]);
		struct text t = assemble(host);
		json_t *full = parse_ok(host->kind, host->iface, t.p, t.n);
		bool done = false;
		long n;

		for (n = 0; !done; n++) {
			json_t *r = (json_t *)1;
			int rc;

			alloc_left = n;
			json_set_alloc_funcs(failing_malloc, free);
			rc = tb_hostmeta_parse(host->kind, host->iface, t.p, t.n, &r);
			json_set_alloc_funcs(malloc, free);
			if (rc == 0) {
				assert_non_null(r);
				assert_true(json_equal(r, full));
				done = true;
			} else {
				assert_int_equal(rc, -1);
				assert_null(r);
			}
			json_decref(r);
			assert_true(n < 100000);
		}
		assert_true(n > 200); /* that many allocations failed in turn */
		/* the section parsers: NULL or the whole result */
		for (size_t i = 0; i < NSAMPLES; i++) {
			const struct sample *s = &samples[i];
			char *buf;
			json_t *want;

			if (s->parser > P_CC)
				continue;
			buf = read_data(s->file, NULL);
			want = run_sample(s, buf, strlen(buf));
			for (long n = 0; n < 100000; n++) {
				json_t *r;

				alloc_left = n;
				json_set_alloc_funcs(failing_malloc, free);
				r = run_sample(s, buf, strlen(buf));
				json_set_alloc_funcs(malloc, free);
				if (r != NULL) {
					assert_true(json_equal(r, want));
					json_decref(r);
					break;
				}
				if (want == NULL)
					break;
			}
			json_decref(want);
			free(buf);
		}
		json_decref(full);
		free(t.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),       cmocka_unit_test(test_every_file),
		cmocka_unit_test(test_hosts),         cmocka_unit_test(test_odd_outputs),
		cmocka_unit_test(test_parser_cases),  cmocka_unit_test(test_script_refused),
		cmocka_unit_test(test_script_shape),  cmocka_unit_test(test_script_runs),
		cmocka_unit_test(test_script_any),    cmocka_unit_test(test_script_without_ipv6),
		cmocka_unit_test(test_truncated),     cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_shaping),
	};

	tb_test_data_dir("hosts", data_dir, sizeof(data_dir));
	return cmocka_run_group_tests_name("hostmeta", tests, NULL, NULL);
}
