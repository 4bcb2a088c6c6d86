#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every test (unit + integration
# against real files, a real MariaDB and a real MySQL started by spindle's provisioning code,
# and, as root, loop devices).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# Oracle MySQL for tests/flavors.rs: Debian sid's, in a root of its own (cached after the first run).
SPINDLE_TEST_MYSQL=$(bash scripts/mysql-root.sh)
export SPINDLE_TEST_MYSQL
cargo test --all-targets -- --test-threads="${TEST_THREADS:-2}"
