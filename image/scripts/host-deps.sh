#!/bin/bash
# Installs what building and testing the image needs on a Debian 12 x86_64 host (all from the
# configured Debian mirror), keeps the QEMU packages at one version, adds the Rust aarch64
# targets, checks every tool again afterwards (failing with the package to install), and
# enables running arm64 programs through qemu-user (binfmt_misc).
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
	"/usr/libexec/qemu-binfmt/aarch64-binfmt-P qemu-user-static"
	"/usr/share/binfmts/qemu-aarch64 qemu-user-static"
	"update-binfmts binfmt-support"
	"mmdebstrap mmdebstrap"                             # the arm64 root filesystem
	"arch-test arch-test"                               # mmdebstrap's foreign-architecture check
	"genimage genimage"                                 # the SD-card layout
	"mkdosfs dosfstools" "mkfs.vfat dosfstools"
	"mcopy mtools" "mdir mtools"
	"mke2fs e2fsprogs" "debugfs e2fsprogs"
	"mkfs.exfat exfatprogs"
	"parted parted"
	"xz xz-utils"
	"qemu-system-aarch64 qemu-system-arm"               # the e2e boot test
	"qemu-img qemu-utils"                               # e2e: copy-on-write SD card
	"python3 python3"                                   # e2e and cross-smoke checks
	"file file"                                         # cross-smoke: static aarch64?
)
# Built from Debian's one qemu source package: installed together at one version, since a
# qemu-utils from bookworm-backports (10.x) breaks bookworm's qemu-system-common (7.2) and apt
# resolves that by removing qemu-utils.
QEMU_PACKAGES=(qemu-system-arm qemu-system-common qemu-utils qemu-user qemu-user-static)
RUST_TARGETS=(aarch64-unknown-linux-musl aarch64-unknown-linux-gnu)

die() { echo "host-deps: $*" >&2; exit 1; }

is_qemu_package() {
	local p
	for p in "${QEMU_PACKAGES[@]}"; do [[ $p == "$1" ]] && return 0; done
	return 1
}

# All QEMU packages installed, at one version.
qemu_consistent() {
	local p v first=
	for p in "${QEMU_PACKAGES[@]}"; do
		v=$(pkg_version "$p")
		[[ -n $v ]] || return 1
		[[ -z $first || $v == "$first" ]] || return 1
		first=$v
	done
}

# The versions of a package the configured apt sources offer, newest first.
offered_versions() {
	apt-cache madison "$1" | awk -F'|' '{gsub(/ /, "", $2); print $2}'
}

# The version apt offers every QEMU package at: qemu-system-arm's candidate (apt's choice under
# the machine's pinning) if all of them have it, else the newest such version in the sources.
qemu_target_version() {
	local versions v p ok offered
	versions=$(apt-cache policy qemu-system-arm | sed -n 's/^ *Candidate: //p'; offered_versions qemu-system-arm)
	for v in $versions; do
		[[ $v == "(none)" ]] && continue
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
	local need=() pkg args=() qemu_needed=" " target
	mapfile -t need < <(packages_to_install "${REQUIREMENTS[@]}")
	if ((${#need[@]} == 0)) && qemu_consistent; then
		return 0
	fi
	for pkg in "${need[@]}"; do
		if is_qemu_package "$pkg"; then qemu_needed+="$pkg "; else args+=("$pkg"); fi
	done
	if ! qemu_consistent || [[ $qemu_needed != " " ]]; then
		as_root apt-get update -qq
		target=$(qemu_target_version)
		qemu_consistent ||
			echo "host-deps: QEMU packages at one version $target (installed: $(describe_qemu))" >&2
		for pkg in "${QEMU_PACKAGES[@]}"; do
			if [[ $(pkg_version "$pkg") != "$target" || $qemu_needed == *" $pkg "* ]]; then
				args+=("$pkg=$target")
			fi
		done
	fi
	apt_install host-deps "${args[@]}"
}

check_host_packages() {
	check_requirements host-deps "${REQUIREMENTS[@]}" || exit 1
	qemu_consistent || die "QEMU packages at different versions after installing: $(describe_qemu)"
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

enable_binfmt_aarch64() {
	if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
		as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	if ! grep -qsx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
		as_root update-binfmts --enable qemu-aarch64 ||
			die "update-binfmts --enable qemu-aarch64 failed"
		grep -qsx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
			die "binfmt qemu-aarch64 not enabled after update-binfmts --enable qemu-aarch64"
	fi
	# What mmdebstrap checks before building a foreign-architecture tree.
	arch-test arm64 >/dev/null ||
		die "arch-test arm64 fails although binfmt qemu-aarch64 is enabled (cat /proc/sys/fs/binfmt_misc/qemu-aarch64)"
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
