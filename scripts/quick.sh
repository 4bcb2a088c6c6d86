#!/usr/bin/env bash
# The main job on a built-in default: the quick suite on a scratch directory.
#   bash scripts/quick.sh [SCRATCH_DIR]     (default: ./spindle-scratch)
# Installs what it needs, builds spindle, and runs the quick profile there; results land in
# ./spindle-results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cargo build --release --quiet
SCRATCH=${1:-$PWD/spindle-scratch}
mkdir -p "$SCRATCH"
exec ./target/release/spindle suite --target "$SCRATCH" --profile quick
