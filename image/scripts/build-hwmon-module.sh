#!/bin/bash
# Builds the mainline `raspberrypi-hwmon` driver for the image's own kernel, inside the arm64
# tree (under qemu-user), installs it and runs depmod. Called by build-rootfs.sh as an mmdebstrap
# customize hook, so it is cached with the rootfs.
#
# Why: Debian's arm64 kernel has `# CONFIG_SENSORS_RASPBERRYPI_HWMON is not set`, so on the
# image nothing reads the Pi's under-voltage flag (`in0_lcrit_alarm`, the kernel's
# "Undervoltage detected!"). The driver's source is Debian's own linux-source-X.Y (X.Y taken
# from the kernel found in the tree) at exactly the version of the image's kernel package; it is built against that kernel's headers (kbuild, as
# DKMS would), and everything installed for the build is purged again: the package set
# afterwards is checked to be the one before.
#
# Usage: build-hwmon-module.sh ROOTFS
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROOT=$1
SRC_FILE=drivers/hwmon/raspberrypi-hwmon.c
MODULE=raspberrypi-hwmon

in_root() { chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

# The one kernel in the tree: its ABI name (7.3.4+deb13-arm64, 6.1.0-NN-arm64).
kernel_abi() {
	local abis
	abis=$(find "$ROOT/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n')
	[[ $(wc -l <<<"$abis") -eq 1 && -n $abis ]] || die "expected one kernel in $ROOT/lib/modules, found: $abis"
	echo "$abis"
}

installed_packages() {
	in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort
}

main() {
	local abi version series before after work src
	abi=$(kernel_abi)
	version=$(in_root dpkg-query -W -f='${Version}' "linux-image-$abi")
	[[ $abi =~ ^([0-9]+\.[0-9]+)[.-] ]] || die "cannot read the kernel series (X.Y) from '$abi'"
	series=${BASH_REMATCH[1]}
	log "hwmon: building $MODULE for kernel $abi (linux $version)"
	before=$(installed_packages)

	in_root apt-get install -y -q --no-install-recommends \
		"linux-headers-$abi=$version" gcc make >/dev/null ||
		die "could not install linux-headers-$abi=$version, gcc and make in the tree"

	# The driver's source: linux-source-X.Y at the kernel's version, one file taken on the host
	# (xz is slow under emulation).
	work=$ROOT/tmp/spindle-hwmon
	rm -rf "$work"
	mkdir -p "$work/src"
	chmod 777 "$work" # apt-get download fetches as _apt
	chroot "$ROOT" sh -c "cd /tmp/spindle-hwmon && apt-get download -q linux-source-$series=$version" >/dev/null ||
		die "linux-source-$series=$version (the kernel's version) is not offered by the image's sources"
	src=$(dpkg-deb --fsys-tarfile "$work"/linux-source-${series}_*.deb |
		tar -xO ./usr/src/linux-source-$series.tar.xz | tar -xJO "linux-source-$series/$SRC_FILE")
	[[ -n $src ]] || die "no $SRC_FILE in linux-source-$series=$version"
	printf '%s\n' "$src" >"$work/src/$MODULE.c"
	echo "obj-m := $MODULE.o" >"$work/src/Makefile"
	rm -f "$work"/linux-source-${series}_*.deb

	in_root make -s -C "/usr/src/linux-headers-$abi" M=/tmp/spindle-hwmon/src modules >&2 ||
		die "building $MODULE against linux-headers-$abi failed"
	install -D -m 644 "$work/src/$MODULE.ko" "$ROOT/lib/modules/$abi/updates/$MODULE.ko"
	rm -rf "$work"

	# Exactly what the build brought in goes again (autoremove would keep what an installed
	# package merely suggests, e.g. binutils).
	local added
	added=$(comm -13 <(echo "$before") <(installed_packages))
	# shellcheck disable=SC2086 # one package per word
	in_root apt-get purge -y -q $added >/dev/null ||
		die "could not purge the build packages: $added"
	in_root apt-get clean
	after=$(installed_packages)
	[[ $before == "$after" ]] ||
		die "the package set changed while building $MODULE: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"

	in_root depmod -a "$abi"
	local ko=/lib/modules/$abi/updates/$MODULE.ko
	in_root modinfo -F vermagic "$ko" | grep -q "^$abi " ||
		die "$MODULE's vermagic does not name $abi: $(in_root modinfo -F vermagic "$ko")"
	grep -q "platform:$MODULE" "$ROOT/lib/modules/$abi/modules.alias" ||
		die "depmod did not record $MODULE's alias (platform:$MODULE)"
	log "hwmon: $MODULE installed as /lib/modules/$abi/updates/$MODULE.ko"
}

main "$@"
