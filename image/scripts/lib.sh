# shellcheck shell=bash
# Shared helpers for the image scripts (sourced, not run).
# shellcheck disable=SC2034  # the variables are used by the scripts that source this file

IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$IMAGE_DIR/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$IMAGE_DIR/build}
OUT_DIR=${OUT_DIR:-$IMAGE_DIR/out}

# shellcheck source=../spindle-image.conf
. "$IMAGE_DIR/spindle-image.conf"

BOARD_DIR=$IMAGE_DIR/board/$BOARD

# The archive lines the image is built from (and keeps in /etc/apt/sources.list).
image_sources() {
	local components=${COMPONENTS//,/ } suite
	for suite in "$SUITE" "$SUITE-updates" "$BACKPORTS"; do
		echo "deb $MIRROR $suite $components"
	done
	echo "deb $SECURITY_MIRROR $SUITE-security $components"
}

# Every package the image asks for, one word each (apt's pkg/suite spelling included).
image_packages() {
	echo "$PACKAGES_BOOT $PACKAGES_DB $PACKAGES_DISK $PACKAGES_EXTRA"
}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Fails with the package to install when a host tool is missing.
require_tools() {
	local tool missing=()
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
	done
	((${#missing[@]} == 0)) || die "missing host tools: ${missing[*]} (run image/scripts/host-deps.sh)"
}

# arm64 maintainer scripts run under qemu-user through binfmt_misc.
require_binfmt_aarch64() {
	if ! grep -qsx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
		die "binfmt for aarch64 is not enabled (run image/scripts/host-deps.sh)"
	fi
}
