#!/usr/bin/env bash
# Seed 004's lesson measured with `spindle suite`: the same OLTP workloads on the same data set,
# CPU-bound (the data set fits in the buffer pool) and I/O-bound (it does not), on three
# targets of very different speed — a directory in RAM (/dev/shm), a directory on this
# machine's disk, and a "slow disk": a loop device over a file, ext4, throttled to SLOW_IOPS
# reads and writes per second through the blkio cgroup (cgroup v1 blkio or v2 io.max), about
# what a USB hard disk does. Prints the regimes section of summary.txt and where the bundle is.
#
# Needs root (loop device, mount, cgroup). Environment:
#   TABLES=4 TABLE_SIZE=250000   the data set (≈ 240 MiB of table files)
#   THREADS=4 TIME=30            client threads and seconds per run
#   WORKLOADS='"point_select", "read_only", "read_write"'
#   RAND=special                 --rand-type (special: sysbench's default hot spot; uniform)
#   IO_POOL=32M CPU_POOL=auto    the buffer pools of the two passes
#   SLOW_IOPS=300                the slow disk's reads and writes per second
#   OUT=/tmp/spindle-regimes     the bundle (a time stamp is added)
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
set -euo pipefail

TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-250000}
THREADS=${THREADS:-4}
TIME=${TIME:-30}
WORKLOADS=${WORKLOADS:-'"point_select", "read_only", "read_write"'}
RAND=${RAND:-special}
IO_POOL=${IO_POOL:-32M}
CPU_POOL=${CPU_POOL:-auto}
SLOW_IOPS=${SLOW_IOPS:-300}
OUT=${OUT:-/tmp/spindle-regimes}-$(date +%Y%m%d-%H%M%S)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}

[ "$(id -u)" = 0 ] || { echo "needs root: loop device, mount and a blkio cgroup" >&2; exit 1; }
for t in losetup mkfs.ext4 mount; do
  command -v $t >/dev/null || { echo "missing $t: apt install util-linux e2fsprogs mount" >&2; exit 1; }
done
if [ ! -x "$SPINDLE" ]; then
  (cd "$ROOT" && cargo build --release)
fi

WORK=$(mktemp -d /var/tmp/spindle-regimes.XXXXXX)
RAM=$(mktemp -d /dev/shm/spindle-regimes.XXXXXX)
DEV=""
CG=""
cleanup() {
  set +e
  mountpoint -q "$WORK/slow" && umount "$WORK/slow"
  [ -n "$DEV" ] && losetup -d "$DEV"
  [ -n "$CG" ] && rmdir "$CG"
  rm -rf "$WORK" "$RAM"
}
trap cleanup EXIT

# The server runs as user mysql: it must reach the directories.
chmod 755 "$WORK" "$RAM"
mkdir -p "$WORK/disk" "$WORK/slow" "$RAM/ram"
truncate -s 4G "$WORK/slow.img"
DEV=$(losetup -f --show "$WORK/slow.img")
mkfs.ext4 -q "$DEV"
mount "$DEV" "$WORK/slow"
MM=$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ')
if [ -d /sys/fs/cgroup/blkio ]; then
  CG=/sys/fs/cgroup/blkio/spindle-regimes-$$
  mkdir "$CG"
  echo "$MM $SLOW_IOPS" >"$CG/blkio.throttle.read_iops_device"
  echo "$MM $SLOW_IOPS" >"$CG/blkio.throttle.write_iops_device"
elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  echo +io >/sys/fs/cgroup/cgroup.subtree_control
  CG=/sys/fs/cgroup/spindle-regimes-$$
  mkdir "$CG"
  echo "$MM riops=$SLOW_IOPS wiops=$SLOW_IOPS" >"$CG/io.max"
else
  echo "no blkio cgroup (v1) nor io controller (v2): cannot throttle the slow disk" >&2
  exit 1
fi

PROFILE=$WORK/regimes.toml
cat >"$PROFILE" <<EOF
description = "benches/regimes.sh: OLTP in both regimes, $TABLES x $TABLE_SIZE rows, $THREADS threads, $TIME s"

[mysqld]
buffer_pool_size = "$IO_POOL"

[oltp]
workloads = [$WORKLOADS]
tables = $TABLES
table_size = $TABLE_SIZE
threads = [$THREADS]
time = $TIME
rand_type = "$RAND"

[oltp.regimes]
cpu_bound = "$CPU_POOL"
io_bound = "$IO_POOL"
EOF

# spindle and the servers it starts run in the cgroup: their reads and writes of the slow disk
# are throttled (the other targets are other devices).
sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$CG" \
  nice -n 15 "$SPINDLE" suite --target "$RAM/ram" --target "$WORK/disk" --target "$WORK/slow" \
  --profile "$PROFILE" --out "$OUT" >"$OUT.log" 2>&1 || { tail -30 "$OUT.log"; exit 1; }
sed -n '/^run: /p;/^Two regimes/,/^$/p' "$OUT/summary.txt"
echo "bundle: $OUT (slow = $DEV throttled to $SLOW_IOPS IOPS; disk = $(df --output=source "$WORK" | tail -1))"
