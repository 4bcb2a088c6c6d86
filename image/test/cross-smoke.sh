#!/bin/bash
# Runs the aarch64 binary under qemu-user on the build host: it starts, parses its command
# line, and lists disks (text and JSON). Checks the static binary's size budget.
# Usage: cross-smoke.sh [BINARY]
set -euo pipefail

REPO_DIR=$(cd "$(dirname "$0")/../.." && pwd)
BINARY=${1:-$REPO_DIR/target/aarch64-unknown-linux-musl/release-small/spindle}
MAX_BYTES=3879731 # 3.7 MiB (issue 37); 3,823,776 bytes on 2026-12-05 (BENCHMARKS.md)

run() { echo "+ qemu-aarch64 spindle $*" >&2; qemu-aarch64 "$BINARY" "$@"; }

check_static_aarch64() {
	local info
	info=$(file -b "$BINARY")
	[[ $info == *"ARM aarch64"* && $info == *"statically linked"* ]] ||
		{ echo "cross-smoke: not a static aarch64 binary: $info" >&2; return 1; }
}

check_size() {
	local size
	size=$(stat -c %s "$BINARY")
	echo "cross-smoke: binary size $size bytes (budget $MAX_BYTES)" >&2
	((size <= MAX_BYTES)) || { echo "cross-smoke: binary exceeds the size budget" >&2; return 1; }
}

check_runs() {
	local version
	version=$(run --version)
	[[ $version == "spindle "* ]] || { echo "cross-smoke: unexpected --version output: $version" >&2; return 1; }
	run fileio --help >/dev/null
	run mysqld --help >/dev/null
	run disks
	local json
	json=$(run disks --json)
	python3 -c 'import json, sys; json.loads(sys.stdin.read())' <<<"$json" ||
		{ echo "cross-smoke: spindle disks --json is not valid JSON" >&2; return 1; }
}

main() {
	[[ -f $BINARY ]] || { echo "cross-smoke: no binary at $BINARY (run cross/build.sh)" >&2; exit 1; }
	command -v qemu-aarch64 >/dev/null || { echo "cross-smoke: qemu-aarch64 missing (apt-get install qemu-user)" >&2; exit 1; }
	check_static_aarch64
	check_size
	check_runs
	echo "cross-smoke: OK" >&2
}

main "$@"
