#!/bin/bash
# Installs what building and testing the image needs on a Debian 12 x86_64 host (all from the
# Debian mirror), QEMU from bookworm-backports (10.x: the emulated Raspberry Pi 4, `-M raspi4b`,
# needs QEMU 9 or later; bookworm has 7.2) with every QEMU package at that one version, adds the
# Rust aarch64 targets, checks every tool again afterwards (failing with the package to
# install), and enables running arm64 programs through qemu-user (binfmt_misc).
# Idempotent and quiet: apt-get runs only when a package or tool is missing or the QEMU
# packages disagree.
#
# Usage: host-deps.sh [--no-binfmt]
#   --no-binfmt  install and check only; leave binfmt_misc (the host kernel's) alone. For a
#                chroot (scripts/check-fresh-install.sh), where the kernel is the host's.
set -euo pipefail
# shellcheck source=../../scripts/deps-common.sh
. "$(dirname "$0")/../../scripts/deps-common.sh"

# Every tool the image scripts and tests call (cross/build.sh, test/cross-smoke.sh,
# scripts/build-rootfs.sh, scripts/post-image.sh, test/e2e.sh), with its Debian package.
REQUIREMENTS=(
	"aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu"       # linker for the aarch64 binary
	"/usr/aarch64-linux-gnu/lib/libc.so libc6-dev-arm64-cross"
	"qemu-aarch64 qemu-user"                            # cross-smoke, e2e (the image's binary)
	"qemu-aarch64-static qemu-user-static"              # arm64 package scripts in mmdebstrap
	"/usr/libexec/qemu-binfmt/aarch64-binfmt-P qemu-user" # the binfmt_misc interpreter (static)
	"/usr/lib/binfmt.d/qemu-aarch64.conf qemu-user-binfmt" # its registration line
	"mmdebstrap mmdebstrap"                             # the arm64 root filesystem
	"arch-test arch-test"                               # mmdebstrap's foreign-architecture check
	"genimage genimage"                                 # the SD-card layout
	"mkdosfs dosfstools" "mkfs.vfat dosfstools"
	"mcopy mtools" "mdir mtools"
	"mke2fs e2fsprogs" "debugfs e2fsprogs"
	"mkfs.exfat exfatprogs"
	"parted parted"
	"xz xz-utils"
	"bmaptool bmap-tools"                               # the .bmap beside the image (flashing)
	"qemu-system-aarch64 qemu-system-arm"               # the e2e boot test
	"qemu-img qemu-utils"                               # e2e: copy-on-write SD card
	"fdtput device-tree-compiler"                       # e2e: the DTB edits for -M raspi4b
	"fdtget device-tree-compiler"
	"python3 python3"                                   # e2e and cross-smoke checks
	"file file"                                         # cross-smoke: static aarch64?
)
# Built from Debian's one qemu source package: installed together at one version, since a
# qemu-utils from bookworm-backports (10.x) breaks bookworm's qemu-system-common (7.2) and apt
# resolves that by removing qemu-utils. That version is bookworm-backports' (the newest offered):
# the e2e test boots the image on QEMU's Raspberry Pi 4 model, which QEMU has since 9.0.
QEMU_PACKAGES=(qemu-system-arm qemu-system-common qemu-utils qemu-user qemu-user-binfmt qemu-user-static)
QEMU_MACHINES=(virt raspi4b)
BACKPORTS_SOURCE=/etc/apt/sources.list.d/spindle-bookworm-backports.sources
RUST_TARGETS=(aarch64-unknown-linux-musl aarch64-unknown-linux-gnu)

die() { echo "host-deps: $*" >&2; exit 1; }

is_qemu_package() {
	local p
	for p in "${QEMU_PACKAGES[@]}"; do [[ $p == "$1" ]] && return 0; done
	return 1
}

# The QEMU machines the tests boot are there (raspi4b: QEMU 9 or later).
qemu_has_machines() {
	local m machines
	machines=$(qemu-system-aarch64 -M help 2>/dev/null) || return 1
	for m in "${QEMU_MACHINES[@]}"; do
		grep -q "^$m " <<<"$machines" || return 1
	done
}

# All QEMU packages installed, at one version, with the machines the tests need.
qemu_consistent() {
	local p v first=
	for p in "${QEMU_PACKAGES[@]}"; do
		v=$(pkg_version "$p")
		[[ -n $v ]] || return 1
		[[ -z $first || $v == "$first" ]] || return 1
		first=$v
	done
	qemu_has_machines
}

# The versions of a package the configured apt sources offer, newest first.
offered_versions() {
	apt-cache madison "$1" | awk -F'|' '{gsub(/ /, "", $2); print $2}'
}

# The Debian mirror of the configured apt sources (deb.debian.org unless the machine uses another).
debian_mirror() {
	local m
	m=$(apt-get indextargets --format '$(REPO_URI)' 'Release: bookworm' 'Origin: Debian' 2>/dev/null |
		grep -v security | head -n1)
	echo "${m:-http://deb.debian.org/debian/}"
}

# bookworm-backports among the apt sources (QEMU 9+ is there): adds it when missing. Backports
# are pinned at 100 by their Release file, so nothing else is upgraded from them.
ensure_backports_source() {
	apt-cache policy 2>/dev/null | grep -q ' bookworm-backports/main ' && return 0
	local mirror
	mirror=$(debian_mirror)
	echo "host-deps: adding bookworm-backports ($mirror) as $BACKPORTS_SOURCE (QEMU 9+ for -M raspi4b)" >&2
	as_root tee "$BACKPORTS_SOURCE" >/dev/null <<-EOF
		Types: deb
		URIs: $mirror
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	as_root apt-get update -qq
}

# The version every QEMU package is installed at: the newest version the sources offer for all
# of them (bookworm-backports' 10.x).
qemu_target_version() {
	local versions v p ok offered
	versions=$(offered_versions qemu-system-arm | sort -rV)
	for v in $versions; do
		ok=1
		for p in "${QEMU_PACKAGES[@]}"; do
			[[ $(pkg_version "$p") == "$v" ]] && continue
			offered=$(offered_versions "$p")
			grep -qxF "$v" <<<"$offered" || { ok=0; break; }
		done
		((ok)) && { echo "$v"; return 0; }
	done
	die "no version of ${QEMU_PACKAGES[*]} is offered for all of them by the configured apt sources"
}

describe_qemu() {
	local p out=()
	for p in "${QEMU_PACKAGES[@]}"; do out+=("$p=$(pkg_version "$p")"); done
	echo "${out[*]}"
}

install_host_packages() {
	local need=() pkg args=() qemu_args=() qemu_needed=" " target
	mapfile -t need < <(packages_to_install "${REQUIREMENTS[@]}")
	if ((${#need[@]} == 0)) && qemu_consistent; then
		return 0
	fi
	for pkg in "${need[@]}"; do
		if is_qemu_package "$pkg"; then qemu_needed+="$pkg "; else args+=("$pkg"); fi
	done
	((${#args[@]} == 0)) || apt_install host-deps "${args[@]}"
	if ! qemu_consistent || [[ $qemu_needed != " " ]]; then
		ensure_backports_source
		as_root apt-get update -qq
		target=$(qemu_target_version)
		qemu_consistent ||
			echo "host-deps: QEMU packages at one version $target (installed: $(describe_qemu))" >&2
		for pkg in "${QEMU_PACKAGES[@]}"; do
			if [[ $(pkg_version "$pkg") != "$target" || $qemu_needed == *" $pkg "* ]]; then
				qemu_args+=("$pkg=$target")
			fi
		done
		# Their dependencies from backports too where the backports version needs them.
		apt_install host-deps -t bookworm-backports "${qemu_args[@]}"
	fi
}

check_host_packages() {
	check_requirements host-deps "${REQUIREMENTS[@]}" || exit 1
	qemu_consistent || die "QEMU packages at different versions or without the machines ${QEMU_MACHINES[*]} after installing: $(describe_qemu) (qemu-system-aarch64 -M help)"
	# The programs start (their shared libraries are all there).
	qemu-img --version >/dev/null || die "qemu-img does not run (apt-get install --reinstall qemu-utils)"
	qemu-system-aarch64 --version >/dev/null ||
		die "qemu-system-aarch64 does not run (apt-get install --reinstall qemu-system-arm)"
}

install_rust_targets() {
	found rustup || die "rustup missing: install Rust with rustup (https://rustup.rs), then rerun"
	local installed target missing=()
	installed=$(rustup target list --installed)
	for target in "${RUST_TARGETS[@]}"; do
		grep -qxF "$target" <<<"$installed" || missing+=("$target")
	done
	((${#missing[@]} == 0)) && return 0
	echo "host-deps: rustup target add ${missing[*]}" >&2
	rustup target add "${missing[@]}" >&2
	installed=$(rustup target list --installed)
	for target in "${missing[@]}"; do
		grep -qxF "$target" <<<"$installed" || die "rust target $target missing after installing (rustup target add $target)"
	done
}

# Registers qemu-aarch64 with binfmt_misc from qemu-user-binfmt's systemd-binfmt line (what
# systemd-binfmt.service does at boot; done here because a build host may not run systemd).
enable_binfmt_aarch64() {
	local entry=/proc/sys/fs/binfmt_misc/qemu-aarch64 conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
		as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	if [[ -e $entry ]] && ! grep -qsx enabled "$entry"; then
		echo 1 | as_root tee "$entry" >/dev/null || die "could not enable $entry"
	elif [[ ! -e $entry ]]; then
		grep -v '^#' "$conf" | as_root tee /proc/sys/fs/binfmt_misc/register >/dev/null ||
			die "could not register $conf with /proc/sys/fs/binfmt_misc/register"
	fi
	grep -qsx enabled "$entry" || die "binfmt qemu-aarch64 not enabled after registering $conf"
	# What mmdebstrap checks before building a foreign-architecture tree.
	arch-test arm64 >/dev/null ||
		die "arch-test arm64 fails although binfmt qemu-aarch64 is enabled (cat $entry)"
}

main() {
	local binfmt=1
	case ${1:-} in
	"") ;;
	--no-binfmt) binfmt=0 ;;
	*) die "unknown argument $1 (usage: host-deps.sh [--no-binfmt])" ;;
	esac
	install_host_packages
	check_host_packages
	install_rust_targets
	((binfmt == 0)) || enable_binfmt_aarch64
}

main "$@"
