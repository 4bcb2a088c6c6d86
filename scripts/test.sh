#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every test (unit + integration
# against real files, a real MariaDB started by spindle's provisioning code, and, as root,
# loop devices).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cargo test --all-targets -- --test-threads="${TEST_THREADS:-2}"
