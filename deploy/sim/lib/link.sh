# deploy/sim/lib/link.sh: the router's link profile, the one mechanism behind both
# `deploy/sim/sim link` (from the root namespace) and the FreeBSD router persona's
# `ipfw pipe` stand-in (inside the router).  Sourced by bash; needs S (the sim's state
# dir).  The profile is dummynet pipe 1 of the router, put on both data-plane ports
# (ix0, ix1) as a tc tbf (bw) and an nftables drop rule (plr); a real router would also
# need `ipfw add pipe 1 ip from any to any`: here the pipe is on the ports directly.
#
# State, $S/link (read by `sim status` and `ipfw pipe show`):
#	rate=R|none	tc rate (100mbit, 8000000bit) or none (dummynet: bw 0, unlimited)
#	loss=PCT	0..100, at most one decimal (dummynet: plr PCT/100)
#	delay=MS	0 unless the kernel has netem (this one has not)
#	pipe=1|		1 when pipe 1 is configured (ipfw pipe show lists it), else empty
#	queue=SLOTS	dummynet's queue in slots (packets), 50 unless configured: the tbf's
#			limit, SLOTS full-size frames (1514 bytes each)
LINK_TC=/usr/sbin/tc
LINK_NFT=/usr/sbin/nft
LINK_PIPE=1

rate_bits() {	# tc rate -> bits/s (integer)
	[ "$1" = none ] && { echo 0; return; }
	awk -v r="$1" 'BEGIN {
		n = r; sub(/[a-z]+$/, "", n); u = r; sub(/^[0-9.]+/, "", u)
		m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9; m["tbit"] = 1e12
		m["bps"] = 8; m["kbps"] = 8e3; m["mbps"] = 8e6; m["gbps"] = 8e9
		printf "%d\n", n * m[u] }'
}
loss_permille() { awk -v l="${1%\%}" 'BEGIN { printf "%d\n", l * 10 + 0.5 }'; }

have_netem() {	# in a throwaway network namespace: does this kernel have the netem qdisc?
	/usr/bin/unshare --net sh -c "/usr/sbin/ip link set lo up && $LINK_TC qdisc add dev lo root netem delay 1ms" >/dev/null 2>&1
}
netem_reason() { echo "this kernel ($(cat /proc/sys/kernel/osrelease)) has no netem qdisc (tc answers \"Specified qdisc kind is unknown\"), so the sim cannot add delay; only a rate (tbf) and loss (nftables) are available here"; }

link_get() {	# key -> its value in $S/link (empty when absent); bash's own read, no fork of sed
	local k v
	[ -r "$S/link" ] || return 0
	while IFS= read -r k; do
		v=${k#*=}
		[ "${k%%=*}" = "$1" ] && [ "$k" != "$v" ] && printf '%s\n' "$v"
	done <"$S/link"
	return 0
}

# link_apply NSEXEC RATE LOSS DELAY PIPE [QUEUE]: the profile onto ix0/ix1 of the router
# and into $S/link, under $S/link.lock.  NSEXEC runs a command in the router's network
# namespace ("ip netns exec P-router" from the root namespace, "" inside it).  QUEUE:
# slots (default 50, dummynet's), the tbf's limit in full-size frames.
link_apply() {
	local nsx=$1 rate=$2 loss=$3 delay=$4 pipe=$5 queue=${6:-50} dev bits burst pm fd rc=0 limit
	exec {fd}>>"$S/link.lock"
	flock "$fd"
	for dev in ix0 ix1; do
		$nsx "$LINK_TC" qdisc del dev "$dev" root >/dev/null 2>&1
		if [ "$delay" != 0 ]; then
			$nsx "$LINK_TC" qdisc add dev "$dev" root handle 1: netem delay "${delay}ms" || { rc=1; break; }
		fi
		if [ "$rate" != none ]; then
			bits=$(rate_bits "$rate")
			burst=$((bits / 8 / 100))
			[ $burst -ge 32768 ] || burst=32768
			limit=(latency 50ms)	# the sim's queue before dummynet's queue was simulated
			[ "$queue" = 50 ] || limit=(limit $((queue * 1514 + burst)))
			if [ "$delay" != 0 ]; then
				$nsx "$LINK_TC" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$burst" "${limit[@]}" || { rc=1; break; }
			else
				$nsx "$LINK_TC" qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" "${limit[@]}" || { rc=1; break; }
			fi
		fi
	done
	pm=$(loss_permille "$loss")
	[ $rc = 0 ] && {
		echo "table ip tbsim_link { }"
		echo "delete table ip tbsim_link"
		echo "table ip6 tbsim_link { }"	# the same loss for IPv6 (2001:2::/48)
		echo "delete table ip6 tbsim_link"
		if [ "$pm" != 0 ]; then
			echo "table ip tbsim_link { chain loss { type filter hook forward priority 0; policy accept; numgen random mod 1000 < $pm drop; }; }"
			echo "table ip6 tbsim_link { chain loss { type filter hook forward priority 0; policy accept; numgen random mod 1000 < $pm drop; }; }"
		fi
	} | $nsx "$LINK_NFT" -f - || rc=1
	[ $rc = 0 ] && printf 'rate=%s\nloss=%s\ndelay=%s\npipe=%s\nqueue=%s\n' "$rate" "$loss" "$delay" "$pipe" "$queue" >"$S/link"
	exec {fd}>&-
	return $rc
}

# link_pipe_show: pipe 1 as FreeBSD's `ipfw pipe show` prints it (nothing when pipe 1
# is not configured).  The layout is sbin/ipfw/dummynet.c's list_pipes() (FreeBSD
# 8.x to 15, the new dummynet): the link line "%05d: %s %4d ms burst %s" with the rate
# as "%7.3f Mbit/s" / "Kbit/s" / "bit/s " or "unlimited     "; then the pipe's
# internal flowset, print_flowset_parms(): "q%05d %s%s %d flows (%d buckets) sched %d
# weight %d lmax %d pri %d droptail" where the first %s is the queue ("%3d sl.") and
# the second "plr %f" glued to it (so "50 sl.plr 0.020000"), the flowset number being
# the pipe's + 131072 and the scheduler's + 65536; then the scheduler line.
link_pipe_show() {
	[ "$(link_get pipe)" = "$LINK_PIPE" ] || return 0
	local q
	q=$(link_get queue)
	awk -v n="$LINK_PIPE" -v b="$(rate_bits "$(link_get rate)")" -v l="$(link_get loss)" -v d="$(link_get delay)" -v q="${q:-50}" 'BEGIN {
		if (b == 0) bw = "unlimited     "
		else if (b >= 1000000) bw = sprintf("%7.3f Mbit/s", b / 1000000)
		else if (b >= 1000) bw = sprintf("%7.3f Kbit/s", b / 1000)
		else bw = sprintf("%7.3f bit/s ", b)
		printf "%05d: %s %4d ms burst 0\n", n, bw, d
		plr = (l + 0 > 0) ? sprintf("plr %f", l / 100) : ""
		printf "q%05d %3d sl.%s 0 flows (1 buckets) sched %d weight 0 lmax 0 pri 0 droptail\n", n + 131072, q, plr, n + 65536
		printf " sched %d type FIFO flags 0x0 0 buckets 0 active\n", n + 65536
	}'
}
