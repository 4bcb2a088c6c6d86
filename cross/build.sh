#!/bin/bash
# Builds the static aarch64 binary for the Pi image without containers:
#   cross/build.sh            → target/aarch64-unknown-linux-musl/release-small/spindle
#   cross/build.sh --gnu      → target/aarch64-unknown-linux-gnu/release-small/spindle (dynamic)
# Needs: rustup target add aarch64-unknown-linux-musl aarch64-unknown-linux-gnu
#        apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross
# The linker and static flags are in .cargo/config.toml.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "$0")/.." && pwd)
TARGET=aarch64-unknown-linux-musl
PROFILE=${PROFILE:-release-small}
[[ ${1:-} == --gnu ]] && TARGET=aarch64-unknown-linux-gnu

check_toolchain() {
	command -v aarch64-linux-gnu-gcc >/dev/null ||
		{ echo "cross/build.sh: aarch64-linux-gnu-gcc missing: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross" >&2; exit 1; }
	rustup target list --installed | grep -qx "$TARGET" ||
		{ echo "cross/build.sh: rust target missing: rustup target add $TARGET" >&2; exit 1; }
}

main() {
	check_toolchain
	cd "$REPO_DIR"
	nice -n 10 cargo build --locked --profile "$PROFILE" --target "$TARGET"
	local bin=target/$TARGET/$PROFILE/spindle
	echo "cross/build.sh: $bin ($(stat -c %s "$bin") bytes)" >&2
}

main "$@"
