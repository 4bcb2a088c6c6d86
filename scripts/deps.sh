#!/usr/bin/env bash
# Installs what spindle's build, tests and quick run need on a fresh Debian 12 machine, then
# checks every tool again and fails naming the package of any tool still missing.
# Idempotent and quiet: apt-get runs only when a package or tool is missing. Needs root (or
# sudo) for apt-get. The Rust toolchain itself comes from rustup (https://rustup.rs); this
# script adds the clippy and rustfmt components to it.
set -euo pipefail
# shellcheck source=deps-common.sh
. "$(dirname "$0")/deps-common.sh"

# Every tool the tests, scripts/quick.sh and benches/ call, with its Debian package.
REQUIREMENTS=(
	"sysbench sysbench"                     # the reference tool benches/ compares with
	"fio fio"
	"mariadbd mariadb-server"               # the server spindle provisions per disk
	"mariadb-install-db mariadb-server"
	"mariadb mariadb-client"
	"/usr/bin/time time"                    # benches: peak memory
	"sha256sum coreutils"
	"mkfs.ext4 e2fsprogs" "e2label e2fsprogs"
	"mkfs.vfat dosfstools" "fatlabel dosfstools"
	"mkfs.xfs xfsprogs"
	"mkfs.btrfs btrfs-progs"
	"parted parted" "partprobe parted"
	"sfdisk fdisk"
	"losetup mount" "mount mount" "umount mount"
	"wipefs util-linux" "partx util-linux" "blockdev util-linux" "runuser util-linux"
	"smartctl smartmontools"                # disk facts: SMART health and counters
	"chromium chromium"                     # tests/report.rs renders report.html headless
)
RUST_COMPONENTS=(clippy rustfmt)

install_packages() {
	local need
	need=$(packages_to_install "${REQUIREMENTS[@]}")
	if [[ -n $need ]]; then
		# shellcheck disable=SC2086 # one package per word
		apt_install deps $need
	fi
	check_requirements deps "${REQUIREMENTS[@]}"
}

# Debian starts the packaged MariaDB service on install; spindle runs its own private servers.
stop_packaged_mariadb() {
	if found systemctl && systemctl is-active --quiet mariadb 2>/dev/null; then
		as_root systemctl stop mariadb || true
	fi
}

install_rust_components() {
	if ! found cargo || ! found rustup; then
		echo "deps: cargo/rustup missing: install Rust with rustup (https://rustup.rs), then rerun" >&2
		return 1
	fi
	local installed comp missing=()
	installed=$(rustup component list --installed)
	for comp in "${RUST_COMPONENTS[@]}"; do
		grep -q "^$comp-" <<<"$installed" || missing+=("$comp")
	done
	if ((${#missing[@]})); then
		echo "deps: rustup component add ${missing[*]}" >&2
		rustup component add "${missing[@]}" >&2
	fi
	cargo fmt --version >/dev/null 2>&1 ||
		{ echo "deps: cargo fmt does not run after installing (rustup component add rustfmt)" >&2; return 1; }
	cargo clippy --version >/dev/null 2>&1 ||
		{ echo "deps: cargo clippy does not run after installing (rustup component add clippy)" >&2; return 1; }
}

install_packages
stop_packaged_mariadb
install_rust_components
