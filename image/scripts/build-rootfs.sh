#!/bin/bash
# Builds the Debian arm64 root filesystem with mmdebstrap into a directory cached as
# <cache>/rootfs-<key>/, where <key> hashes every input (the distribution settings and packages,
# the initramfs files, the mmdebstrap call and its hwmon hook, and the package versions the
# archive resolves today). An unchanged recipe reuses it (post-build works on a
# copy); prints its path on stdout. <cache> is $SPINDLE_ROOTFS_CACHE, else build/ (image/ci.sh
# keeps it in /var/cache/spindle-image so a clean checkout on the same machine reuses it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The recipe and what the archive resolves it to today (scripts/resolve-packages.sh): a new
# backports kernel or a point release makes a new tree even when no file here changed. Only what
# goes into the tree counts: the distribution settings and package list from spindle-image.conf
# (not the board or image names), the initramfs files, the hooks' scripts and run_mmdebstrap.
rootfs_cache_key() {
	local resolved
	resolved=$("$IMAGE_DIR/scripts/resolve-packages.sh") || die "could not resolve the package set"
	{
		printf '%s\n' "$SUITE" "$BACKPORTS" "$ARCH" "$MIRROR" "$SECURITY_MIRROR" "$COMPONENTS" \
			"$(image_packages)" "$(image_sources)"
		declare -f run_mmdebstrap
		cat "$IMAGE_DIR"/initramfs/spindle-* "$IMAGE_DIR/scripts/build-hwmon-module.sh"
		echo "$resolved"
	} | sha256sum | cut -c1-16
}

run_mmdebstrap() {
	local out=$1
	local packages sources=()
	packages=$(image_packages)
	mapfile -t sources < <(image_sources)
	# Essential hooks run before the --include packages are installed:
	#  1. MODULES=list + our hook: a small initramfs that builds in minutes under emulation
	#     (gzip said outright: trixie's default zstd is not in the tree and mkinitramfs would
	#     fall back to gzip with a warning); our
	#     init-bottom script records deferred devices for the emulated boot tests.
	#  2. mariadb-server's postinst bootstraps a datadir with mariadb-install-db, which grows to
	#     ~24 GiB under qemu-user and is OOM-killed; divert it to a no-op during the build.
	#     (No datadir at image time is what we want anyway.)
	# Customize hooks run at the end: restore mariadb-install-db, keep mariadb.service disabled,
	# build the raspberrypi-hwmon module for the tree's kernel (scripts/build-hwmon-module.sh).
	# The hooks are run by mmdebstrap's shell with the tree as "$1", hence single quotes.
	# shellcheck disable=SC2016
	mmdebstrap --format=directory --arch="$ARCH" --variant=minbase --components="$COMPONENTS" \
		--include="${packages// /,}" \
		--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/etc/initramfs-tools/hooks" && printf "MODULES=list\nCOMPRESS=gzip\n" > "$1/etc/initramfs-tools/conf.d/spindle-modules-list.conf"' \
		--essential-hook="install -m 755 '$IMAGE_DIR/initramfs/spindle-modules' \"\$1/etc/initramfs-tools/hooks/spindle-modules\"" \
		--essential-hook="install -D -m 755 '$IMAGE_DIR/initramfs/spindle-deferred' \"\$1/etc/initramfs-tools/scripts/init-bottom/spindle-deferred\"" \
		--essential-hook='chroot "$1" dpkg-divert --local --rename --divert /usr/bin/mariadb-install-db.distrib --add /usr/bin/mariadb-install-db && printf "#!/bin/sh\necho image-build: skipping mariadb-install-db >&2\nexit 0\n" > "$1/usr/bin/mariadb-install-db" && chmod 755 "$1/usr/bin/mariadb-install-db"' \
		--customize-hook='rm -f "$1/usr/bin/mariadb-install-db" && chroot "$1" dpkg-divert --local --rename --remove /usr/bin/mariadb-install-db' \
		--customize-hook='chroot "$1" systemctl disable mariadb.service' \
		--customize-hook="'$IMAGE_DIR/scripts/build-hwmon-module.sh' \"\$1\"" \
		"$SUITE" "$out" "${sources[@]}"
}

# A killed mmdebstrap can leave /proc, /sys, /dev/pts mounted inside its tree: never rm -rf
# through a mount point.
remove_partial_tree() {
	local tree=$1
	[[ -e $tree ]] || return 0
	if findmnt -rn -o TARGET | grep -q "^$tree/"; then
		die "mounts remain under $tree; unmount them (findmnt | grep $tree) and retry"
	fi
	rm -rf "$tree"
}

main() {
	require_tools mmdebstrap
	require_binfmt_aarch64
	local cache=${SPINDLE_ROOTFS_CACHE:-$BUILD_DIR}
	mkdir -p "$cache"
	local key rootfs
	key=$(rootfs_cache_key)
	rootfs=$cache/rootfs-$key
	if [[ -e $rootfs/etc/os-release ]]; then
		log "rootfs: reusing $rootfs (inputs unchanged)"
	else
		log "rootfs: building $rootfs with mmdebstrap (7-15 min)"
		local start=$SECONDS
		remove_partial_tree "$rootfs.partial"
		run_mmdebstrap "$rootfs.partial" >&2
		mv "$rootfs.partial" "$rootfs"
		log "rootfs: built in $((SECONDS - start)) s"
		# Older trees are stale; keep only the current one.
		find "$cache" -mindepth 1 -maxdepth 1 -name 'rootfs-*' ! -name "rootfs-$key" -exec rm -rf {} +
	fi
	echo "$rootfs"
}

main "$@"
