/* run_host.c - a run's hosts before and after its runs: what OS and
 * traffic tools a host has (tb_run_host_prepare), and the traffic tools an
 * interrupted run left behind, stopped by their recorded pids
 * (tb_run_kill_leftovers).  See run_exec.h. */
#include "run_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmeta.h"
#include "hosts.h"
#include "hostsnap.h"
#include "inventory.h"
#include "iperf.h"
#include "iperf2.h"
#include "log.h"
#include "netperf.h"
#include "services.h"
#include "ssh.h"
#include "store.h"

static void target_of(struct tb_services *sv, const struct tb_run_host *h, struct tb_ssh_target *t, char *pin,
		      size_t pinlen)
{
	tb_hosts_target(sv->hosts, h->m, h->p, t, pin, pinlen);
}

/* What prepare() asks every host: its kernel's name, which the metadata
 * script after it reads (hostmeta.h), and each traffic tool's version.
 * Whole outputs (the parsers find their line): no `| head` fork each. */
static const char versions[] = TB_HOSTMETA_KERNEL_VAR
	"=$(uname -s); echo \"$" TB_HOSTMETA_KERNEL_VAR "\"; "
	"iperf3 --version 2>&1; echo tbiperf2; iperf -v 2>&1; echo tbnetperf; netperf -V 2>&1";
/* the line between the versions and the metadata script's output */
#define META_MARK "@@testbedd-metadata"

/* The versions (and with snap, the metadata when snap wants h's OS and
 * the matrix has none of it yet) in one exec on h's persona; the metadata
 * stored and h->snapped_os set. */
static int ask(struct tb_services *sv, struct tb_run_host *h, const struct tb_run_snap *snap,
	       struct tb_ssh_capture *cap, struct tb_error *err)
{
	const char *argv[] = {"sh", "-c", versions, NULL}, *iface = NULL;
	struct tb_ssh_target t;
	char pin[96], *meta = NULL, *script = NULL, *at;
	struct tb_error e2 = {0};
	int has = 1, rc;

	if (snap != NULL && (snap->want == NULL || strcmp(snap->want, h->os) == 0) &&
	    strcmp(h->snapped_os, h->os) != 0 &&
	    tb_store_snapshot_has(sv->store, snap->matrix_id, h->m->name, h->os, &has, &e2) == 0 && !has) {
		size_t n;

		iface = tb_hostsnap_iface(h->m, h->os, snap->link);
		if ((meta = tb_hostsnap_script(h->m, h->os, &iface)) == NULL)
			return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		n = sizeof(versions) + strlen(meta) + sizeof(META_MARK) + 16;
		if ((script = malloc(n)) == NULL) {
			free(meta);
			return tb_fail(err, TB_ERR_NOMEM, "", "out of memory");
		}
		snprintf(script, n, "%s; echo " META_MARK "; %s", versions, meta);
		argv[2] = script;
	}
	target_of(sv, h, &t, pin, sizeof(pin));
	rc = tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, argv, script != NULL ? 20000 : 15000,
				script != NULL ? 256 * 1024 : 4096, cap, err);
	if (rc == 0 && script != NULL) {
		snprintf(h->snapped_os, sizeof(h->snapped_os), "%s", h->os);
		if ((at = strstr(cap->out, "\n" META_MARK "\n")) == NULL) {
			tb_warn("runner",
				"%s (%s): the metadata was not taken: no \"" META_MARK "\" line in the output",
				h->m->name, h->os);
		} else {
			size_t off = (size_t)(at - cap->out) + 1 + sizeof(META_MARK);

			if (tb_hostsnap_store(sv, snap->matrix_id, h->m, h->p, h->os, iface, argv, cap->out + off,
					      cap->out_len - off, &e2) != 0)
				tb_warn("runner", "matrix %lld: the metadata of %s (%s) was not taken: %s",
					(long long)snap->matrix_id, h->m->name, h->os, e2.message);
			at[1] = '\0'; /* the versions' part, for the caller */
			cap->out_len = (size_t)(at - cap->out) + 1;
		}
	}
	free(script);
	free(meta);
	return rc;
}

int tb_run_host_prepare(struct tb_services *sv, struct tb_run_host *h, const struct tb_run_snap *snap,
			struct tb_error *err)
{
	struct tb_ssh_capture cap = {0};
	char *nl;
	int rc;

	h->ready = false;
	/* the persona that answered last, asked at once; a probe only when none
	 * did or it does not answer now (a probe is one more exec a host) */
	if (!tb_hosts_answering(sv->hosts, h->m->name, h->os, sizeof(h->os)) ||
	    (h->p = tb_machine_persona(h->m, h->os)) == NULL || ask(sv, h, snap, &cap, err) != 0) {
		tb_ssh_capture_free(&cap);
		if (!tb_hosts_probe_one(sv->hosts, h->m, h->os, sizeof(h->os)))
			return tb_fail(err, TB_ERR_UNREACHABLE, "",
				       "%s does not answer ssh in any of its OS personas: is it on?", h->m->name);
		if ((h->p = tb_machine_persona(h->m, h->os)) == NULL)
			return tb_fail(err, TB_ERR_INTERNAL, "", "%s answers as %s, which it has no persona for",
				       h->m->name, h->os);
		if ((rc = ask(sv, h, snap, &cap, err)) != 0) {
			tb_ssh_capture_free(&cap);
			return rc;
		}
	}
	{
		const char *ver = cap.out;
		char *mark = strstr(cap.out, "tbiperf2\n"), *np = strstr(cap.out, "tbnetperf\n");
		struct tb_error e2 = {0};

		rc = 0;
		/* the uname line too: caps knows Linux from it (--snd-timeout) */
		h->bsd = strncmp(cap.out, "FreeBSD\n", 8) == 0;
		if ((nl = strchr(cap.out, '\n')) != NULL)
			ver = nl + 1;
		memset(&h->tools, 0, sizeof(h->tools));
		if (np != NULL) {
			*np = '\0'; /* netperf -V's after */
			if (tb_netperf_version_parse(np + 10, h->tools.netperf, sizeof(h->tools.netperf), &e2) != 0)
				h->tools.netperf[0] = '\0';
		}
		if (mark != NULL) {
			*mark = '\0'; /* iperf3's part before, iperf -v's after */
			if (tb_iperf2_version_parse(mark + 9, h->tools.iperf2, sizeof(h->tools.iperf2), &e2) != 0)
				h->tools.iperf2[0] = '\0';
		}
		h->tools.has_iperf3 = tb_iperf_caps_parse(cap.out, &h->tools.iperf3, &e2) == 0;
		if (!h->tools.has_iperf3 && h->tools.iperf2[0] == '\0' && h->tools.netperf[0] == '\0')
			rc = tb_fail(err, TB_ERR_REMOTE, "",
				     "%s (%s): iperf3 --version said \"%.*s\": install iperf3 3.x there", h->m->name,
				     h->os, (int)strcspn(ver, "\r\n") > 80 ? 80 : (int)strcspn(ver, "\r\n"), ver);
	}
	tb_ssh_capture_free(&cap);
	if (rc == 0)
		h->ready = true;
	return rc;
}

int tb_run_kill_leftovers(struct tb_services *sv, const struct tb_machine *m, const char *os, const long *pids,
			  int npids, struct tb_error *err)
{
	const struct tb_persona *p = tb_machine_persona(m, os);
	struct tb_ssh_target t;
	struct tb_ssh_capture cap;
	char pin[96], script[1024];
	size_t n;
	int rc;

	if (p == NULL || npids == 0)
		return 0;
	/* pids are numbers from our own store: formatted in, never a request string */
	n = (size_t)snprintf(script, sizeof(script), "for p in");
	for (int i = 0; i < npids && n < sizeof(script) - 256; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n, " %ld", pids[i]);
	snprintf(script + n, sizeof(script) - n,
		 "; do c=$(ps -o comm= -p $p 2>/dev/null); case \"$c\" in *iperf*|*timeout*) kill -TERM $p &&"
		 " echo \"stopped $p ($c)\";; esac; done; true");
	{
		const char *argv[] = {"sh", "-c", script, NULL};
		struct tb_run_host h = {.m = m, .p = p};

		target_of(sv, &h, &t, pin, sizeof(pin));
		rc = tb_ssh_run_capture(tb_hosts_pool(sv->hosts), &t, argv, 15000, 4096, &cap, err);
	}
	if (rc == 0 && cap.out != NULL && cap.out[0] != '\0')
		tb_info("runner", "%s (%s): leftover traffic tool of an interrupted run: %s", m->name, os, cap.out);
	tb_ssh_capture_free(&cap);
	return rc;
}
