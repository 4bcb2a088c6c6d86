#!/usr/bin/env bash
# The database server's peak memory under the quick profile, per flavor, with and without
# performance_schema: `spindle suite --profile quick` on a scratch directory, once per
# (server, performance_schema) pair, in turn; each run's bundle records the server's VmHWM
# (read right before the stop) in results.json (`server.peak_rss_bytes`). Prints one line per
# run and the bundles' paths.
#
# Environment:
#   MYSQL=<path>     Oracle MySQL's server program (default: what scripts/mysql-root.sh gives)
#   MARIADB=<path>   MariaDB's (default: mariadbd from PATH or /usr/sbin)
#   OUT=/tmp/spindle-mysqld-memory   where the bundles and scratch directories go
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}
OUT=${OUT:-/tmp/spindle-mysqld-memory}-$(date +%Y%m%d-%H%M%S)
MYSQL=${MYSQL:-$(bash "$ROOT/scripts/mysql-root.sh")}
MARIADB=${MARIADB:-$(command -v mariadbd || echo /usr/sbin/mariadbd)}
command -v jq >/dev/null || { echo "missing jq: apt install jq" >&2; exit 1; }
[ -x "$MARIADB" ] || { echo "missing mariadbd: apt install mariadb-server" >&2; exit 1; }
if [ ! -x "$SPINDLE" ]; then
	(cd "$ROOT" && cargo build --release)
fi
mkdir -p "$OUT"

# run NAME SERVER PS: the quick profile with performance_schema = PS on SERVER.
run() {
	local name=$1 server=$2 ps=$3 dir=$OUT/$1
	mkdir -p "$dir/scratch"
	{
		cat "$ROOT/config/profiles/quick.toml"
		printf '\n[mysqld.extra]\nperformance_schema = "%s"\n' "$ps"
	} >"$dir/profile.toml"
	printf '[mysqld]\nbinary = "%s"\nflavor = ""\n' "$server" >"$dir/spindle.toml"
	"$SPINDLE" suite --target "$dir/scratch" --profile "$dir/profile.toml" \
		--config "$dir/spindle.toml" --out "$dir/bundle" >"$dir/suite.log" 2>&1
	jq -r --arg name "$name" '.targets[0].servers[] |
		"\($name): \(.flavor) \(.version), performance_schema \(.effective.performance_schema),
		buffer pool \(.effective.innodb_buffer_pool_size | tonumber / 1048576) MiB,
		peak RSS \((.peak_rss_bytes // 0) / 1048576 | floor) MiB"' "$dir/bundle/results.json" |
		tr -s '\t\n' ' '
	echo
}

run mariadb-ps-off "$MARIADB" OFF
run mariadb-ps-on "$MARIADB" ON
run mysql-ps-off "$MYSQL" OFF
run mysql-ps-on "$MYSQL" ON
echo "bundles: $OUT/*/bundle"
