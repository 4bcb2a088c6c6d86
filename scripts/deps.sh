#!/usr/bin/env bash
# Installs what spindle's build, tests and quick run need on a fresh Debian 12 machine.
# Idempotent: only missing packages are installed. Needs root (or sudo) for apt-get.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have sysbench      || need+=(sysbench)
have fio           || need+=(fio)
have mariadbd      || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
have mariadb       || need+=(mariadb-client)
[ -x /usr/bin/time ] || need+=(time)
have mkfs.ext4     || [ -x /usr/sbin/mkfs.ext4 ] || need+=(e2fsprogs)
have mkfs.vfat     || [ -x /usr/sbin/mkfs.vfat ] || need+=(dosfstools)
have parted        || [ -x /usr/sbin/parted ] || need+=(parted)
have sfdisk        || [ -x /usr/sbin/sfdisk ] || need+=(fdisk)
have losetup       || [ -x /usr/sbin/losetup ] || need+=(mount)
have mkfs.xfs      || [ -x /usr/sbin/mkfs.xfs ] || need+=(xfsprogs)
have mkfs.btrfs    || [ -x /usr/sbin/mkfs.btrfs ] || need+=(btrfs-progs)
have runuser       || [ -x /usr/sbin/runuser ] || need+=(util-linux)
have smartctl      || [ -x /usr/sbin/smartctl ] || need+=(smartmontools)
# tests/report.rs renders report.html in a real headless browser.
have chromium      || need+=(chromium)

if [ ${#need[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "deps: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Debian starts the packaged MariaDB service on install; spindle runs its own private servers.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet mariadb 2>/dev/null; then
  systemctl stop mariadb || true
fi
have cargo || { echo "deps: cargo is missing: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt >/dev/null 2>&1 || true
