#!/bin/bash
# grub.sh STATE HOST ARGV0 ARGS...: grub-editenv, grub-reboot and grub-set-default of a
# simulated host: the real programs, on the host's private boot directory.
S=$1 H=$2 name=${3##*/}
shift 3
HD=$S/hosts/$H
persona=
read -r persona 2>/dev/null <"$HD/persona"
env=$HD/boot/grub/grubenv
case $name in
grub-editenv)
	# substitute the private grubenv for any grubenv path
	args=()
	for a in "$@"; do
		case $a in
		*grub/grubenv|*grub2/grubenv) args+=("$env") ;;
		*) args+=("$a") ;;
		esac
	done
	exec "$S/real/grub-editenv" "${args[@]}" ;;
grub-reboot|grub-set-default)
	if [ "$persona" != ubuntu ]; then
		echo "${persona:-sh}: $name: not found" >&2
		exit 127
	fi
	args=()
	for a in "$@"; do
		case $a in
		--boot-directory=*) ;;	# always the host's own
		*) args+=("$a") ;;
		esac
	done
	# the real script probes the disk: drop its harmless grub-probe complaints
	"$S/real/$name" --boot-directory="$HD/boot" "${args[@]}" 2> >(grep -v -e 'grub-probe' -e 'canonical path' -e 'hostdisk' >&2)
	rc=$?
	wait
	exit $rc ;;
esac
echo "$name: unknown" >&2
exit 127
