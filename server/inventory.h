/*
 * inventory.h - the testbed as the operator describes it: machines, their OS
 * personas, power methods, console, GRUB entries and data-plane links.
 *
 * Loaded from one YAML file (format in README.md, "Describing a testbed").
 * Every mistake is reported as "FILE:LINE:COL: path.to.key: what was expected",
 * and nothing is half-loaded: on error *out stays NULL.
 *
 * Ownership: a struct tb_inventory owns every string and array inside it and is
 * immutable once loaded, so threads may read it without a lock while they
 * hold a reference (see tb_inventory_ref in hosts.h).  Secrets are never
 * stored here, only the paths or environment variable names that hold them.
 */
#ifndef TB_INVENTORY_H
#define TB_INVENTORY_H

#include <stddef.h>

#include <jansson.h>

#include "cron.h"
#include "error.h"

enum tb_role { TB_ROLE_HOST, TB_ROLE_ROUTER, TB_ROLE_RELAY };

struct tb_persona {
	char *os;      /* "ubuntu", "freebsd", ... */
	char *address; /* management address (IPv4, IPv6 or DNS name) */
	unsigned int port;
	char *user;
	char *key_file; /* the daemon's private key for this persona */
	char *host_key; /* pinned "SHA256:..." or NULL */
	long connect_timeout_s;
	long command_timeout_s;
};

enum tb_power_kind { TB_POWER_IPMI, TB_POWER_WOL, TB_POWER_REDFISH, TB_POWER_COMMAND };
enum tb_wol_via { TB_WOL_BROADCAST, TB_WOL_DIRECTED, TB_WOL_RAW, TB_WOL_RELAY };
enum tb_redfish_auth { TB_REDFISH_BASIC, TB_REDFISH_SESSION };

/* command: one argv template per action, indexed by enum tb_power_op
 * (power.h): on, off, cycle, reset, soft, status. */
#define TB_POWER_COMMAND_SLOTS 6

struct tb_power_method {
	enum tb_power_kind driver;
	/* ipmi (address, user and the password also redfish; address also command's {bmc}) */
	char *address;
	unsigned int port; /* ipmi: 623; wol: 9 or 7 */
	char *user;
	char *password_file; /* secret: never shown */
	char *password_env;  /* secret: never shown */
	int cipher_suite;
	/* redfish */
	char *url;    /* service root base "https://bmc:8443", no path */
	char *system; /* ComputerSystem id; NULL: the first of /redfish/v1/Systems */
	enum tb_redfish_auth auth;
	char *ca_file; /* CA bundle to verify the BMC with; NULL: the system's */
	int insecure;  /* 1: TLS certificate not verified (said so in the API) */
	/* command */
	char **argv[TB_POWER_COMMAND_SLOTS]; /* NULL-terminated templates; NULL: action not given */
	char *on_pattern;                    /* POSIX extended regex on the status command's stdout */
	char *off_pattern;
	int timeout_s;
	/* wol */
	enum tb_wol_via via;
	char *relay; /* name of a machine with role relay */
	char *interface;
	char *command;       /* "etherwake" or "wakeonlan" */
	char *target;        /* broadcast or unicast address */
	char *source;        /* source address to send from */
	char *secureon_file; /* secret: never shown */
};

enum tb_console_type { TB_CONSOLE_NONE, TB_CONSOLE_TCP, TB_CONSOLE_DEVICE, TB_CONSOLE_IPMI_SOL };
/* A tcp console's protocol: raw bytes, or telnet (RFC 854) with RFC 2217's
 * COM-PORT-OPTION for Break. */
enum tb_console_protocol { TB_CONSOLE_RAW, TB_CONSOLE_TELNET };

struct tb_console {
	enum tb_console_type type;
	enum tb_console_protocol protocol; /* tcp only */
	char *address;
	unsigned int port;
	char *device;
	unsigned int speed;
};

struct tb_boot_entry {
	char *os;
	char *entry; /* GRUB index, id or title */
};

struct tb_boot {
	char *loader; /* "grub"; NULL when the machine has no boot section */
	char *default_os;
	struct tb_boot_entry *entries;
	size_t nentries;
	struct tb_boot_entry *efi; /* boot.efi: OS -> its UEFI Boot#### (4 hex digits, upper case); may be none */
	size_t nefi;
	struct tb_boot_entry *esp; /* boot.esp_grubenv: OS -> where it mounts the ESP's GRUB environment block */
	size_t nesp;
	struct tb_boot_entry *bmc; /* boot.bmc: OS -> the BMC boot device that brings it up (disk, pxe, ...) */
	size_t nbmc;
};

struct tb_ifname {
	char *os;
	char *ifname;
};

struct tb_link {
	char *name;
	char *address;   /* CIDR */
	char *address6;  /* IPv6 CIDR beside it ("address6"), or NULL */
	double rate_bps; /* the link's rate (results are shaded against it); 0: not given */
	struct tb_ifname *ifnames;
	size_t nifnames;
};

struct tb_machine {
	char *name;
	enum tb_role role;
	char *mac; /* "aa:bb:cc:dd:ee:ff" or NULL */
	struct tb_power_method *power;
	size_t npower;
	struct tb_console console;
	struct tb_boot boot;
	struct tb_persona *os;
	size_t nos;
	struct tb_link *links;
	size_t nlinks;
	int idle_poweroff_min;  /* -1 when not set */
	char *wake_schedule;    /* cron pattern (cron.h) or NULL */
	struct tb_cron wake;    /* wake_schedule parsed */
	int boot_timeout_s;     /* power on or boot: until an OS answers (300) */
	int shutdown_timeout_s; /* off: until nothing answers (120) */
	/* A router that cannot delay packets, and why (the sim's kernel has no
	 * netem): a matrix's link profile with a delay is refused in its plan.
	 * NULL: it can (dummynet's delay, tc netem). */
	char *cannot_delay;
};

struct tb_inventory {
	char *path;
	int refs; /* readers holding it; managed by tb_inv_current_* under its lock */
	struct tb_machine *machines;
	size_t nmachines;
};

/*
 * The inventory in force.  Readers take a reference (get) and give it back
 * (put); a reload swaps a new inventory in, and the old one is freed when its
 * last reader lets go, so that a reader never sees one change under it.
 * Thread-safe; get and put take a mutex for a counter and never block on I/O.
 * new and swap take ownership of inv; free gives back the holder's own
 * reference.  new returns NULL when out of memory.
 */
struct tb_inv_current;
struct tb_inv_current *tb_inv_current_new(struct tb_inventory *inv);
void tb_inv_current_free(struct tb_inv_current *c);
struct tb_inventory *tb_inv_current_get(struct tb_inv_current *c);
void tb_inv_current_put(struct tb_inv_current *c, struct tb_inventory *inv);
void tb_inv_current_swap(struct tb_inv_current *c, struct tb_inventory *inv);

/* Flags for tb_inventory_load. */
#define TB_INV_CHECK_FILES 1u /* key and password files must exist, mode 0600/0400 */

/* Load and validate an inventory file.  Blocking file I/O only. */
int tb_inventory_load(const char *path, unsigned int flags, struct tb_inventory **out, struct tb_error *err);

/* The same from a buffer; name stands for the file in messages. */
int tb_inventory_load_buffer(const char *name, const char *text, size_t len, unsigned int flags,
			     struct tb_inventory **out, struct tb_error *err);

void tb_inventory_free(struct tb_inventory *inv);

const struct tb_machine *tb_inventory_find(const struct tb_inventory *inv, const char *name);
const struct tb_persona *tb_machine_persona(const struct tb_machine *m, const char *os);
/* The interface name link l has in OS os (its ifname), or NULL. */
const char *tb_link_ifname(const struct tb_link *l, const char *os);
/* The interface names m's links have in os, in the links' order, into
 * out[0..max): how many (a link without one for os is left out). */
int tb_machine_ifnames(const struct tb_machine *m, const char *os, const char *out[], int max);
/* in as root on p: out is in with "sudo" "-n" in front when p does not log
 * in as root, cut to max entries with the NULL. */
void tb_persona_as_root(const struct tb_persona *p, const char *const in[], const char *out[], size_t max);

const char *tb_role_name(enum tb_role role);

/* The public view of a machine for the API: everything but secrets and the
 * paths of secret files.  Returns a new reference (NULL on out of memory). */
json_t *tb_machine_to_json(const struct tb_machine *m);

#endif /* TB_INVENTORY_H */
