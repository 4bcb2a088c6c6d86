#!/usr/bin/env bash
# spindle oltp vs sysbench 1.0 OLTP against the same server, side by side.
#
# Starts one private server with `spindle mysqld`, times prepare of TABLES x TABLE_SIZE rows for
# both tools at the same thread count, then runs both tools interleaved (A B A B ...) for each
# workload and thread count over the unix socket, measuring client user+sys CPU and peak RSS with
# /usr/bin/time -v. Prints medians: tps ratio, client CPU µs per query, peak RSS, prepare time.
#
# Environment (defaults keep the whole script to a few minutes):
#   DURATION=5            seconds per run
#   EVENTS=N              fixed work instead: N transactions per run (--events=N --time=0); the
#                         client CPU per query is then measured over the same work for both
#   ROUNDS=2              A/B pairs per workload and thread count (medians are reported)
#   THREADS="4 16"        client thread counts
#   WORKLOADS="read_write read_only point_select write_only"
#   TABLES=4 TABLE_SIZE=100000 PREPARE_THREADS=4 PREPARE_ROUNDS=1
#   BUFFER_POOL=1G        innodb_buffer_pool_size of the benchmark server
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
#   KEEP=1                keep the work directory (server stopped anyway)
#   AGAINST=path/to/spindle  A/B of two spindle builds: this binary takes sysbench's place (in the
#                         prepare and every pair; the tables show it in the "sysbench" columns)
#   SPINDLE_ARGS= AGAINST_ARGS=  extra run options for spindle and for AGAINST (e.g. AGAINST=the
#                         same binary, AGAINST_ARGS=--client-io=reactor: an A/B of two modes)
#
# Other work on the machine: around every run the script reads /proc/stat and the server's CPU
# time; "other CPU" is the CPU time neither the client nor the server used, as a share of the
# machine (all CPUs) over the run. The summary shows its median and maximum per row and the
# load average at the start and the end: timings mean little when other work took CPU.
#
# With 4 or more pairs a second table compares the clients' CPU per query at the same
# throughput: on a shared VM a run's CPU per query follows the throughput the host let it reach
# (log-log correlation -0.95 to -0.98 within each tool on BENCHMARKS.md's VM), so the pair-by-pair
# CPU ratio mostly repeats the tps ratio; the fit reads each tool's line at the same tps.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-"4 16"}
WORKLOADS=${WORKLOADS:-"read_write read_only point_select write_only"}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
PREPARE_THREADS=${PREPARE_THREADS:-4}
PREPARE_ROUNDS=${PREPARE_ROUNDS:-1}
BUFFER_POOL=${BUFFER_POOL:-1G}
EVENTS=${EVENTS:-}
if [ -n "$EVENTS" ]; then LIMIT="--events=$EVENTS --time=0"; else LIMIT="--time=$DURATION"; fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}

. "$ROOT/benches/lib/oltp-server.sh"
AGAINST=${AGAINST:-}
[ -n "$AGAINST" ] || need sysbench "apt install sysbench"
[ -z "$AGAINST" ] || [ -x "$AGAINST" ] || { echo "AGAINST=$AGAINST is not an executable" >&2; exit 1; }
need python3 "apt install python3"
[ -x /usr/bin/time ] || { echo "missing /usr/bin/time: apt install time" >&2; exit 1; }
build_spindle

bench_work spindle-bench
RAW=$WORK/raw.tsv
: >"$RAW"

# measure TOOL KIND WORKLOAD THREADS -- command...: runs it under /usr/bin/time -v and appends
# tool kind workload threads wall_s user_s sys_s rss_kb tps queries to $RAW.
measure() {
  local tool=$1 kind=$2 workload=$3 threads=$4
  shift 5
  local out=$WORK/out.txt tv=$WORK/time.txt start end cpu0 cpu1
  cpu0=$(cpu_snapshot)
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$tv" "$@" >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
  end=$(date +%s.%N)
  cpu1=$(cpu_snapshot)
  python3 - "$tool" "$kind" "$workload" "$threads" "$start" "$end" "$out" "$tv" "$cpu0" "$cpu1" >>"$RAW" <<'EOF'
import os, re, sys
tool, kind, wl, th, start, end, out, tv, cpu0, cpu1 = sys.argv[1:]
o = open(out).read(); t = open(tv).read()
def f(pat, text, default="0"):
    m = re.search(pat, text)
    return m.group(1) if m else default
user = f(r"User time \(seconds\): ([\d.]+)", t)
sys_ = f(r"System time \(seconds\): ([\d.]+)", t)
rss = f(r"Maximum resident set size \(kbytes\): (\d+)", t)
tps = f(r"transactions:\s+\d+\s+\(([\d.]+) per sec", o)
q = f(r"queries:\s+(\d+)\s+\(", o)
# Busy CPU of the machine and of the server (clock ticks) around the run, less the client's.
(b0, s0), (b1, s1) = [map(int, c.split(",")) for c in (cpu0, cpu1)]
hz = os.sysconf("SC_CLK_TCK")
wall = float(end) - float(start)
other = ((b1 - b0) - (s1 - s0)) / hz - float(user) - float(sys_)
share = max(0.0, other) / (wall * os.cpu_count())
print("\t".join([tool, kind, wl, th, "%.3f" % wall, user, sys_, rss, tps, q, "%.3f" % share]))
EOF
}

# "busy,server" clock ticks: every CPU's busy time (/proc/stat) and the server's own CPU time.
cpu_snapshot() {
  python3 - "$(cat "$DATADIR".spindle/mysqld.pid 2>/dev/null || echo 0)" <<'EOF'
import sys
f = open("/proc/stat").readline().split()[1:]
busy = sum(int(x) for i, x in enumerate(f[:8]) if i not in (3, 4))
try:
    st = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
    server = int(st[11]) + int(st[12])
except (OSError, IndexError, ValueError):
    server = 0
print(f"{busy},{server}")
EOF
}

start_server
echo "server: $("$SPINDLE" mysqld status --datadir "$DATADIR" | head -3 | tr '\n' ' ')" >&2

# --- prepare: both tools, same thread count; the last prepare leaves the tables for the runs.
for r in $(seq "$PREPARE_ROUNDS"); do
  for tool in sysbench spindle; do
    if [ "$tool" = spindle ]; then
      "$SPINDLE" oltp read_write $(opts) cleanup >/dev/null
      measure spindle prepare read_write "$PREPARE_THREADS" -- \
        "$SPINDLE" oltp read_write $(opts) --threads="$PREPARE_THREADS" prepare
    elif [ -n "$AGAINST" ]; then
      "$AGAINST" oltp read_write $(opts) cleanup >/dev/null
      measure sysbench prepare read_write "$PREPARE_THREADS" -- \
        "$AGAINST" oltp read_write $(opts) --threads="$PREPARE_THREADS" prepare
    else
      sysbench oltp_read_write $(opts) cleanup >/dev/null
      measure sysbench prepare read_write "$PREPARE_THREADS" -- \
        sysbench oltp_read_write $(opts) --threads="$PREPARE_THREADS" prepare
    fi
    echo "prepare $tool: $(tail -1 "$RAW" | cut -f5) s" >&2
  done
done

# --- runs: pairs per workload and thread count, the order alternating (A B, B A, ...) so
# neither tool always runs on a server the other has just warmed up.
run_one() {
  local tool=$1 wl=$2 th=$3
  if [ "$tool" = spindle ]; then
    measure spindle run "$wl" "$th" -- \
      "$SPINDLE" oltp "$wl" $(opts) --threads="$th" $LIMIT ${SPINDLE_ARGS:-} run
  elif [ -n "$AGAINST" ]; then
    measure sysbench run "$wl" "$th" -- \
      "$AGAINST" oltp "$wl" $(opts) --threads="$th" $LIMIT ${AGAINST_ARGS:-} run
  else
    measure sysbench run "$wl" "$th" -- \
      sysbench "oltp_$wl" $(opts) --threads="$th" $LIMIT run
  fi
}
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for th in $THREADS; do
  for wl in $WORKLOADS; do
    for r in $(seq "$ROUNDS"); do
      if [ $((r % 2)) = 1 ]; then order="spindle sysbench"; else order="sysbench spindle"; fi
      for tool in $order; do run_one "$tool" "$wl" "$th"; done
      echo "$wl t=$th round $r: spindle $(grep -P "^spindle\trun\t$wl\t$th\t" "$RAW" | tail -1 | cut -f9) tps," \
        "sysbench $(grep -P "^sysbench\trun\t$wl\t$th\t" "$RAW" | tail -1 | cut -f9) tps;" \
        "other CPU $(grep -P "\trun\t$wl\t$th\t" "$RAW" | tail -2 | cut -f11 | tr '\n' ' ')" >&2
    done
  done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
[ -n "${KEEP:-}" ] && cp "$RAW" "$WORK/raw-final.tsv"

# --- summary.
python3 - "$RAW" "$TABLES" "$TABLE_SIZE" "$PREPARE_THREADS" "${EVENTS:+$EVENTS events}" "$DURATION" "$ROUNDS" "$AGAINST ${AGAINST_ARGS:-}" "${SPINDLE_ARGS:-}" "$LOAD_START" "$LOAD_END" <<'EOF'
import math, sys, statistics as st
raw, tables, size, pth, events, dur, rounds, against, sargs, load0, load1 = sys.argv[1:]
against = against.strip()
run = events or f"{dur} s"
rows = [l.rstrip("\n").split("\t") for l in open(raw) if l.strip()]
def med(xs): return st.median(xs) if xs else float("nan")
if against:
    print(f"\nA/B of two spindle builds: the sysbench columns are {against}")
print(f"\nspindle oltp vs sysbench 1.0.20, same server, unix socket; {run} runs, "
      f"{rounds} interleaved pairs; medians, and the median (min-max) of the pair-by-pair "
      f"ratios spindle/sysbench; tables={tables} table-size={size}"
      f"{'; spindle ' + sargs if sargs else ''}; load average (1/5/15 min) {load0} at the "
      f"start, {load1} at the end; other CPU: the machine's CPU used by neither tool nor the "
      f"server during a run, median and maximum over the row's runs\n")
print("| workload | threads | tps spindle | tps sysbench | tps ratio | CPU µs/query spindle | "
      "CPU µs/query sysbench | CPU ratio | user µs/query spindle | user µs/query sysbench | "
      "peak RSS spindle | peak RSS sysbench | other CPU |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
keys = []
for r in rows:
    if r[1] == "run" and (r[2], r[3]) not in keys:
        keys.append((r[2], r[3]))
def cpu(r): return (float(r[5]) + float(r[6])) * 1e6 / max(1, int(r[9]))
def user(r): return float(r[5]) * 1e6 / max(1, int(r[9]))
def ratio(xs):
    return f"{med(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "n/a"
def fit(rs):
    """log CPU per query against log tps over runs rs (header: "at the same throughput"):
    (mean log tps, mean log CPU, slope, correlation, residual sd), or None when flat."""
    x = [math.log(float(r[8])) for r in rs]
    y = [math.log(cpu(r)) for r in rs]
    mx, my = st.mean(x), st.mean(y)
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((c - my) ** 2 for c in y)
    if sxx == 0 or syy == 0:
        return None
    b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sxx
    sd = math.sqrt(sum((c - my - b * (a - mx)) ** 2 for a, c in zip(x, y)) / (len(x) - 2))
    return mx, my, b, b * math.sqrt(sxx / syy), sd
def same_tps(wl, th, a, b):
    """The row of the second table, or None with fewer than 4 runs of either tool."""
    a, b = [r for r in a if float(r[8]) > 0], [r for r in b if float(r[8]) > 0]
    if min(len(a), len(b)) < 4:
        return None
    fa, fb = fit(a), fit(b)
    if fa is None or fb is None:
        return None
    at = lambda f, q: math.exp(f[1] + f[2] * (math.log(q) - f[0]))
    tps = sorted(float(r[8]) for r in a + b)
    pts = [tps[0], st.median(tps), tps[-1]]
    cells = [f"{at(fa, q):.1f} / {at(fb, q):.1f} = {at(fa, q) / at(fb, q):.2f}" for q in pts]
    fits = [f"{f[2]:.2f}, {f[3]:.2f}, {f[4]:.1%}" for f in (fa, fb)]
    return f"| {wl} | {th} | {' | '.join(cells)} | {pts[0]:.0f}-{pts[-1]:.0f} | {' | '.join(fits)} |"
same = []
for wl, th in keys:
    def pick(tool):
        return [r for r in rows if r[0] == tool and r[1] == "run" and r[2] == wl and r[3] == th]
    a, b = pick("spindle"), pick("sysbench")
    pairs = list(zip(a, b))
    tps_r = [float(x[8]) / float(y[8]) for x, y in pairs if float(y[8]) > 0]
    cpu_r = [cpu(x) / cpu(y) for x, y in pairs if cpu(y) > 0]
    print(f"| {wl} | {th} | {med([float(r[8]) for r in a]):.0f} | {med([float(r[8]) for r in b]):.0f} | "
          f"{ratio(tps_r)} | {med([cpu(r) for r in a]):.1f} | {med([cpu(r) for r in b]):.1f} | "
          f"{ratio(cpu_r)} | {med([user(r) for r in a]):.1f} | {med([user(r) for r in b]):.1f} | "
          f"{med([int(r[7]) / 1024 for r in a]):.1f} MiB | {med([int(r[7]) / 1024 for r in b]):.1f} MiB | "
          f"{med([float(r[10]) for r in a + b]):.0%} / {max(float(r[10]) for r in a + b):.0%} |")
    row = same_tps(wl, th, a, b)
    if row:
        same.append(row)

if same:
    print("\nCPU µs per query at the same throughput (log CPU per query fitted against log tps for "
          "each tool over the row's runs, read at the lowest, median and highest tps of either "
          "tool's runs; fit: slope, correlation, residual sd)\n")
    print("| workload | threads | spindle / sysbench at lowest tps | at median tps | at highest tps | "
          "tps range | fit spindle | fit sysbench |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(same))
prep = {t: med([float(r[4]) for r in rows if r[0] == t and r[1] == "prepare"]) for t in ("spindle", "sysbench")}
print(f"\nprepare {tables}x{size} rows, {pth} threads: spindle {prep['spindle']:.1f} s, "
      f"sysbench {prep['sysbench']:.1f} s (ratio {prep['spindle']/prep['sysbench']:.2f})")
EOF
