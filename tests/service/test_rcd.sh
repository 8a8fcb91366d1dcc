#!/bin/sh
# tests/service/test_rcd.sh: deploy/rc.d/testbedd, the FreeBSD rc.d script.
#
# FreeBSD's rc.subr(8) and daemon(8) do not exist here, so this cannot start the
# service.  What it checks instead:
#  1. the script parses (sh -n with dash, and shellcheck -s sh when installed);
#  2. the pieces rc.subr and daemon(8) need are there (table below);
#  3. sourced with a stub rc.subr that records what run_rc_command would run, the
#     start command line is daemon(8) with both pid files, restart, syslog and -u,
#     then testbedd and its flags (not the flags after daemon, where rc.subr would
#     put ${name}_flags); rc.conf settings override the defaults; the start
#     precmd's configuration check runs the real testbedd --check-config and
#     refuses a broken inventory;
#  4. the default flags are options `testbedd --help` lists.
set -u
src=${TB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TB_BINARY_DIR:-$src/build}
script=$src/deploy/rc.d/testbedd
fails=0
passes=0
ok() { passes=$((passes + 1)); echo "ok   $*"; }
bad() { fails=$((fails + 1)); echo "FAIL $*"; }
echo "note: FreeBSD is not available here: rc.subr and su are stubbed, daemon(8) is not run"

[ -f "$script" ] || { echo "FAIL $script missing"; exit 1; }
[ -x "$bin/testbedd" ] || { echo "FAIL $bin/testbedd not built"; exit 1; }
tmp=$(mktemp -d /tmp/tbrcd-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# --- 1. syntax ---------------------------------------------------------------------
if sh -n "$script" 2>"$tmp/sh.err"; then ok "sh -n"; else bad "sh -n: $(cat "$tmp/sh.err")"; fi
if command -v shellcheck >/dev/null 2>&1; then
	# SC1091: /etc/rc.subr is not here; SC2034/SC2154: rc.subr reads and sets these variables.
	if shellcheck -s sh -e SC1091,SC2034,SC2154 "$script" >"$tmp/sc.out" 2>&1; then ok "shellcheck -s sh"
	else bad "shellcheck:"; sed 's/^/     /' "$tmp/sc.out"; fi
else
	echo "note shellcheck not installed: skipped"
fi
[ -x "$script" ] && ok "executable" || bad "not executable (rc.d runs only executable scripts)"

# --- 2. required pieces ---------------------------------------------------------------
while IFS= read -r pat; do
	case $pat in '' | '#'*) continue ;; esac
	if grep -qE -e "$pat" "$script"; then ok "has /$pat/"; else bad "missing /$pat/"; fi
done <<'TABLE'
^#!/bin/sh$
^# PROVIDE: testbedd$
^# REQUIRE: .*NETWORKING
^# KEYWORD: .*shutdown
^\. /etc/rc\.subr$
^name=testbedd$
^rcvar=testbedd_enable$
^load_rc_config \$name$
^: "\$\{testbedd_enable:=NO\}"$
^: "\$\{testbedd_flags:=--inventory
^: "\$\{testbedd_program:=/usr/local/bin/testbedd\}"$
^command=/usr/sbin/daemon$
^command_args=.*-P \$\{pidfile\}
^command_args=.* -p \$\{testbedd_child_pidfile\}
^command_args=.* -r 
^command_args=.* -u \$\{testbedd_user\} \$\{testbedd_program\} \$\{testbedd_flags\}"$
^pidfile=/var/run/
^required_dirs=
^extra_commands=.*reload
^sig_reload=HUP$
^run_rc_command "\$1"$
TABLE

# --- 3. what it would run -------------------------------------------------------------
cat >"$tmp/rc.subr" <<'STUB'
# stub of FreeBSD's rc.subr: records instead of running.
load_rc_config() { :; }
warn() { echo "warn: $*" >&2; }
_run_rc_notrunning() { echo "not running" >&2; }
su() { [ "$1" = -m ] && [ "$3" = -c ] && sh -c "$4"; }   # su -m USER -c CMD, as this user
chown() { :; }
run_rc_command() {
	case $1 in
	start)  eval "rc_flags=\$${name}_flags"         # what rc.subr does
		eval "$start_precmd" || { echo "PRECMD FAILED"; return 1; }
		echo "RUN $command $rc_flags $command_args" ;;
	vars)   echo "pidfile=$pidfile required_dirs=$required_dirs required_files=${required_files:-}"
		echo "extra_commands=$extra_commands sig_reload=$sig_reload reload_cmd=${reload_cmd:-}" ;;
	esac
}
STUB
sed "s#^\. /etc/rc\.subr\$#. $tmp/rc.subr#" "$script" >"$tmp/testbedd"
grep -q "^\. $tmp/rc.subr\$" "$tmp/testbedd" || bad "could not stub rc.subr"

# The defaults, as a FreeBSD host with an empty rc.conf would get them.
out=$(sh "$tmp/testbedd" vars 2>&1)
echo "$out" | sed 's/^/     /'
case $out in *"pidfile=/var/run/testbedd.pid required_dirs=/var/db/testbedd required_files=/usr/local/etc/testbedd/inventory.yaml"*) ok "defaults: pid file, state dir, inventory" ;;
*) bad "defaults: $out" ;; esac
case $out in *"sig_reload=HUP reload_cmd=testbedd_reload"*) ok "reload: SIGHUP via testbedd_reload (to the child, not daemon(8))" ;;
*) bad "reload: $out" ;; esac

# A start with settings from rc.conf, against a real inventory in a temp dir.
mkdir -p "$tmp/state"
printf 'not a key\n' >"$tmp/key" && chmod 0600 "$tmp/key"
cat >"$tmp/inventory.yaml" <<INV
version: 1
ssh: {user: root, key_file: $tmp/key}
machines:
  left:
    role: host
    os: {ubuntu: {address: 127.0.0.1, port: 9}}
INV
me=$(id -un)
run_start() {
	env testbedd_user="$me" testbedd_program="$bin/testbedd" testbedd_inventory="$1" \
		testbedd_state_dir="$tmp/state" sh "$tmp/testbedd" start 2>&1
}
out=$(run_start "$tmp/inventory.yaml")
echo "$out" | sed 's/^/     /'
want="RUN /usr/sbin/daemon  -P /var/run/testbedd.pid -p /var/run/testbedd.child.pid -r -R 2 -S -T testbedd -u $me $bin/testbedd --inventory $tmp/inventory.yaml --state-dir $tmp/state --listen 127.0.0.1 --port 8080 --static /usr/local/share/testbedd/static"
if printf '%s\n' "$out" | grep -qxF "$want"; then ok "start runs daemon(8) -> testbedd with its flags last"
else bad "start command line; want:"; echo "     $want"; fi
case $out in *"PRECMD FAILED"*) bad "start precmd refused a good inventory" ;; *) ok "start precmd accepts a good inventory" ;; esac

# The precmd checks the inventory with the real daemon: a broken one stops the start.
printf 'version: 1\nmachines:\n  left: {role: nonsense}\n' >"$tmp/broken.yaml"
out=$(run_start "$tmp/broken.yaml")
case $out in *"PRECMD FAILED"*) ok "start precmd refuses a broken inventory" ;;
*) bad "a broken inventory was not refused:"; echo "$out" | sed 's/^/     /' ;; esac

# --- 4. the default flags are the daemon's ---------------------------------------------------
help=$("$bin/testbedd" --help 2>&1)
flags=$(sed -n 's/^: "\${testbedd_flags:=\(.*\)}"$/\1/p' "$script")
[ -n "$flags" ] || bad "no default testbedd_flags"
for opt in $(printf '%s\n' "$flags" | tr ' ' '\n' | grep '^--'); do
	if printf '%s\n' "$help" | grep -qe "^ *${opt}[ =]"; then ok "testbedd knows $opt"; else bad "testbedd --help does not list $opt"; fi
done

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
