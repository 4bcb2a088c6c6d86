#!/bin/bash
# Builds the SD-card image: rootfs (cached) → post-build steps → genimage → .img/.img.xz/.sha256.
# Usage: build-image.sh   (the aarch64 binary must be built first: make -C image binary)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BINARY=${SPINDLE_BINARY:-$REPO_DIR/target/aarch64-unknown-linux-musl/release-small/spindle}

main() {
	local start=$SECONDS rootfs
	[[ -f $BINARY ]] || die "no aarch64 binary at $BINARY (run: make -C image binary)"
	rootfs=$("$IMAGE_DIR/scripts/build-rootfs.sh")
	# the staging tree and genimage's files go to build/ even when the rootfs cache is elsewhere
	mkdir -p "$BUILD_DIR"
	"$IMAGE_DIR/scripts/post-build.sh" "$rootfs" "$BUILD_DIR/staging" "$BINARY"
	"$IMAGE_DIR/scripts/post-image.sh" "$BUILD_DIR/staging"
	log "build-image: done in $((SECONDS - start)) s"
}

main "$@"
