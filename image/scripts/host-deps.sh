#!/bin/bash
# Installs what building and testing the image needs on a Debian 12 x86_64 host (all from the
# Debian mirror), and enables running arm64 programs through qemu-user (binfmt_misc).
set -euo pipefail

HOST_PACKAGES=(
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross    # cross linker for the aarch64 binary
	qemu-user qemu-user-static binfmt-support      # run arm64 programs on the host
	mmdebstrap genimage dosfstools mtools e2fsprogs # build the image without loop devices
	parted xz-utils qemu-system-arm qemu-utils      # partition table, compression, boot test
	exfatprogs
)

install_host_packages() {
	local missing=() pkg
	for pkg in "${HOST_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) && return 0
	echo "host-deps: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

enable_binfmt_aarch64() {
	if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	update-binfmts --enable qemu-aarch64 2>/dev/null || true
	grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
		{ echo "host-deps: binfmt qemu-aarch64 not enabled" >&2; exit 1; }
}

install_host_packages
enable_binfmt_aarch64
