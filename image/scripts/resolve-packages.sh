#!/bin/bash
# Resolves the image's package set against the archive as it is now, without touching the host's
# apt: a private apt state (lists, cache, an empty dpkg status) for $ARCH under
# <cache>/apt-<suite>-<arch>/, the image's own sources, and `apt-get --simulate install` of the
# package list plus the required-priority set mmdebstrap's minbase installs. Prints one
# "package version" line per package, sorted.
#
# build-rootfs.sh keys its cache on this output: trixie-backports moves (its kernel ABI changed
# five times in one cycle), so an unchanged recipe can still mean a different tree.
#
# Usage: resolve-packages.sh [--download DIR PACKAGE...]
#   --download fetches the named packages' .debs for $ARCH into DIR instead (checks, no install).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

APT_DIR=${SPINDLE_ROOTFS_CACHE:-$BUILD_DIR}/apt-$SUITE-$ARCH

apt_private() {
	apt-get -q -o APT::Architecture="$ARCH" -o APT::Architectures="$ARCH" \
		-o Dir::State="$APT_DIR/state" -o Dir::State::status="$APT_DIR/status" \
		-o Dir::Cache="$APT_DIR/cache" -o Dir::Etc::SourceList="$APT_DIR/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts=/dev/null -o Debug::NoLocking=1 \
		-o APT::Install-Recommends=false -o Acquire::Languages=none "$@"
}

update_lists() {
	mkdir -p "$APT_DIR/state/lists/partial" "$APT_DIR/cache/archives/partial"
	: >"$APT_DIR/status"
	image_sources >"$APT_DIR/sources.list"
	apt_private update >&2 || die "apt-get update against $(tr '\n' ';' <"$APT_DIR/sources.list") failed"
}

main() {
	update_lists
	if [[ ${1:-} == --download ]]; then
		local dir=$2
		shift 2
		mkdir -p "$dir"
		(cd "$dir" && apt_private download "$@" >&2) || die "could not download $* for $ARCH"
		return
	fi
	local packages
	read -r -a packages <<<"$(image_packages)"
	# Sorted "Inst" lines are the resolved set: package and version (the suite decides nothing
	# beyond the version).
	apt_private --simulate install "${packages[@]}" '?priority(required)' 2>&1 |
		awk '$1 == "Inst" { v = $3; gsub(/[()]/, "", v); print $2, v }' | sort |
		grep . || die "apt resolved no packages for: ${packages[*]}"
}

main "$@"
