#!/usr/bin/env bash
# System calls per query: spindle oltp vs sysbench 1.0 OLTP, the same fixed work for both.
#
# Starts one private server with `spindle mysqld`, prepares TABLES x TABLE_SIZE rows, then runs
# every workload at every thread count with a fixed number of events (--events=N --time=0) for
# both tools under `strace -f -c` (every thread of the client, setup included) and divides the
# system calls by the queries the tool reports. Prints the calls per query, the ratio, and the
# calls that make up most of each tool's count.
#
# strace stops the client at every system call, which changes the timing a client sees: a
# client that first tries a non-blocking receive and polls when nothing is there yet
# (libmysqlclient, sysbench's) finds the reply already waiting more often under strace than
# without it: its strace count moves from run to run (point_select at 1 thread measured 2.6,
# 3.0 and 3.4 on one machine) while perf's stays at 4.0. With PERF=1 (the default when `perf`
# can count the raw_syscalls:sys_enter tracepoint) each run is repeated under `perf stat`,
# which counts in the kernel without stopping the client, and the table shows both counts,
# the client's context switches per query from the same perf run (each a sleep and a wake-up
# of a client thread) and the kernel timers its threads armed per query
# (`timer:hrtimer_start`: a wait with a timeout arms one and cancels it when the reply comes;
# libmariadb waits without one).
#
# Environment:
#   THREADS="1 4 16"
#   WORKLOADS="point_select read_only read_write write_only"
#   QUERIES=40000         about this many queries per run (events = QUERIES / queries per event)
#   TABLES=4 TABLE_SIZE=100000 BUFFER_POOL=1G
#   PERF=1|0              also count with perf stat (default: when it works)
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
#   SPINDLE_ARGS=         extra options for spindle's runs (e.g. --client-io=reactor)
#   KEEP=1                keep the work directory (server stopped anyway)
set -euo pipefail

THREADS=${THREADS:-"1 4 16"}
WORKLOADS=${WORKLOADS:-"point_select read_only read_write write_only"}
QUERIES=${QUERIES:-40000}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
BUFFER_POOL=${BUFFER_POOL:-1G}
SPINDLE_ARGS=${SPINDLE_ARGS:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}

. "$ROOT/benches/lib/oltp-server.sh"
need sysbench "apt install sysbench"
need strace "apt install strace"
need python3 "apt install python3"
if [ -z "${PERF:-}" ]; then
  if perf stat -x, -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then PERF=1; else PERF=0; fi
fi
build_spindle

bench_work spindle-syscalls
RAW=$WORK/raw.tsv
: >"$RAW"

# count TOOL WORKLOAD THREADS -- command...: the run under strace -f -c (and perf stat), one
# line to $RAW: tool workload threads queries strace_total perf_total top-calls.
count() {
  local tool=$1 wl=$2 th=$3
  shift 4
  local out=$WORK/out.txt st=$WORK/strace.txt pf=$WORK/perf.txt perf_total="- - -"
  strace -f -c -o "$st" "$@" >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
  local q
  q=$(grep -oP 'queries:\s+\K\d+' "$out")
  if [ "$PERF" = 1 ]; then
    perf stat -x, -o "$pf" -e raw_syscalls:sys_enter,context-switches,timer:hrtimer_start \
      -- "$@" >"$out" 2>&1 ||
      { cat "$out" >&2; exit 1; }
    perf_total=$(python3 - "$pf" "$(grep -oP 'queries:\s+\K\d+' "$out")" <<'EOF'
import sys
got = {}
for l in open(sys.argv[1]):
    f = l.split(",")
    if len(f) > 2 and f[0].isdigit():
        got[f[2].split(":")[-1]] = int(f[0]) / max(1, int(sys.argv[2]))
print(f"{got.get('sys_enter', 0):.3f} {got.get('context-switches', 0):.2f} "
      f"{got.get('hrtimer_start', 0):.3f}")
EOF
)
  fi
  python3 - "$tool" "$wl" "$th" "$q" "$st" $perf_total >>"$RAW" <<'EOF'
import sys
tool, wl, th, q, st, perf, switches, timers = sys.argv[1:]
q = max(1, int(q))
calls, total = {}, 0
for l in open(st):
    f = l.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[3].isdigit():
        if f[-1] == "total":
            total = int(f[3])
        else:
            calls[f[-1]] = int(f[3])
top = sorted(calls.items(), key=lambda kv: -kv[1])[:4]
print("\t".join([tool, wl, th, str(q), f"{total / q:.3f}", perf,
                 ", ".join(f"{n} {c / q:.2f}" for n, c in top), switches, timers]))
EOF
  echo "$tool $wl t=$th: $(tail -1 "$RAW" | cut -f5) syscalls/query (strace), $(tail -1 "$RAW" | cut -f6) (perf)" >&2
}

start_server
echo "server: $("$SPINDLE" mysqld status --datadir "$DATADIR" | head -1)" >&2
"$SPINDLE" oltp read_write $(opts) --threads=4 prepare >/dev/null

for th in $THREADS; do
  for wl in $WORKLOADS; do
    ev=$((QUERIES / $(per_event "$wl")))
    count spindle "$wl" "$th" -- \
      "$SPINDLE" oltp "$wl" $(opts) --threads="$th" --events="$ev" --time=0 $SPINDLE_ARGS run
    count sysbench "$wl" "$th" -- \
      sysbench "oltp_$wl" $(opts) --threads="$th" --events="$ev" --time=0 run
  done
done

python3 - "$RAW" "$PERF" "$SPINDLE_ARGS" <<'EOF'
import sys
raw, perf, sargs = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(raw) if l.strip()]
by = {(r[0], r[1], r[2]): r for r in rows}
keys = []
for r in rows:
    if (r[1], r[2]) not in keys:
        keys.append((r[1], r[2]))
print(f"\nSystem calls per query, strace -f -c over the whole run (every thread, setup "
      f"included){' and perf stat -e raw_syscalls:sys_enter' if perf == '1' else ''}; "
      f"spindle {sargs or '(defaults)'}\n")
head = "| workload | threads | queries | spindle | sysbench | spindle/sysbench |"
if perf == "1":
    head += (" spindle (perf) | sysbench (perf) | context switches spindle | sysbench |"
             " timers armed spindle | sysbench |")
head += " spindle, per query | sysbench, per query |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
met, met_perf = True, True
for wl, th in keys:
    a, b = by.get(("spindle", wl, th)), by.get(("sysbench", wl, th))
    if not a or not b:
        continue
    ratio = float(a[4]) / float(b[4])
    met &= float(a[4]) <= float(b[4])
    if perf == "1":
        met_perf &= float(a[5]) <= float(b[5])
    line = f"| {wl} | {th} | {a[3]} | {a[4]} | {b[4]} | {ratio:.2f} |"
    if perf == "1":
        line += f" {a[5]} | {b[5]} | {a[7]} | {b[7]} | {a[8]} | {b[8]} |"
    line += f" {a[6]} | {b[6]} |"
    print(line)
print("\nspindle at or below sysbench's count in every row: strace " + ("yes" if met else "NO")
      + ("" if perf != "1" else ", perf " + ("yes" if met_perf else "NO")))
EOF
