#!/bin/bash
# CI entry for the aarch64 build, the SD-card image and its emulated end-to-end test.
# Installs its own host packages (Debian mirror only) and Rust targets, checks every tool,
# enables binfmt for arm64 (scripts/host-deps.sh), then:
# cross build → qemu-user smoke test → make image → e2e boots on QEMU's virt board (four boots:
# button, LEDs, power cut, unplug) and on its emulated Raspberry Pi 4 (-M raspi4b). Exits
# non-zero on any failure.
# Timings and logs go to ci-artifacts/ in the work tree. Runs as root (mmdebstrap, binfmt).
set -euo pipefail

IMAGE_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_DIR=$(cd "$IMAGE_DIR/.." && pwd)
ARTIFACTS=$REPO_DIR/ci-artifacts
TIMINGS=$ARTIFACTS/image-ci-timings.txt

timed() {
	local name=$1 start=$SECONDS rc=0
	shift
	echo "=== image-ci: $name" >&2
	"$@" 2>&1 | tee "$ARTIFACTS/image-ci-$name.log" || rc=$?
	echo "$name rc=$rc seconds=$((SECONDS - start))" | tee -a "$TIMINGS" >&2
	return "$rc"
}

# The rootfs is keyed on its inputs (scripts/build-rootfs.sh); keeping it outside the work tree
# lets a clean checkout on the same machine reuse it instead of 13 minutes of mmdebstrap.
export SPINDLE_ROOTFS_CACHE=${SPINDLE_ROOTFS_CACHE:-/var/cache/spindle-image}

main() {
	mkdir -p "$ARTIFACTS"
	: >"$TIMINGS"
	timed host-deps "$IMAGE_DIR/scripts/host-deps.sh"
	timed build-binary "$REPO_DIR/cross/build.sh"
	timed cross-smoke "$IMAGE_DIR/test/cross-smoke.sh"
	# No .img.xz in CI (SPINDLE_IMAGE_XZ=0): the test boots the .img; `make -C image` makes both.
	timed build-image env SPINDLE_IMAGE_XZ=0 nice -n 10 make -C "$IMAGE_DIR" image
	timed boot-drivers-selftest "$IMAGE_DIR/test/check-boot-drivers-selftest.sh" "$IMAGE_DIR/build/staging"
	timed leds-selftest python3 "$IMAGE_DIR/test/leds.py" selftest
	timed e2e "$IMAGE_DIR/test/e2e.sh" --full
	timed e2e-pi4 "$IMAGE_DIR/test/e2e.sh" --pi4
	echo "image-ci: all passed" >&2
	cat "$TIMINGS" >&2
}

main "$@"
