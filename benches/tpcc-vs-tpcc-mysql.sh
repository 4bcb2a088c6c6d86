#!/usr/bin/env bash
# spindle tpcc vs tpcc-mysql (Percona-Lab) against the same server, side by side.
#
# tpcc-mysql is NOT part of this repository: build it from its public source somewhere else
# (git clone https://github.com/Percona-Lab/tpcc-mysql; cd src; make, with libmariadb-dev or
# libmysqlclient-dev installed; Debian 12's libmariadb-dev has no mysql_config, so there:
# make LIBS="$(mariadb_config --libs_r) -lrt -lm" INC="-I. $(mariadb_config --include)")
# and point TPCC_MYSQL at the directory that holds tpcc_load, tpcc_start, create_table.sql and
# add_fkey_idx.sql.
#
# Starts one private server with `spindle mysqld`, then
#  1. load: LOAD_ROUNDS interleaved pairs (the order alternates) loading WAREHOUSES warehouses:
#     tpcc-mysql = create_table.sql + tpcc_load + add_fkey_idx.sql (its documented procedure),
#     spindle = `spindle tpcc prepare`; wall time of each, client CPU and peak RSS;
#  2. run: ROUNDS interleaved rounds of tpcc_start, `spindle tpcc run` (tpcc-mysql's statements,
#     the default) and `spindle tpcc run --statements batched` with the same warehouses,
#     connections, ramp-up and time, over the unix socket, on the same data (the last load is
#     spindle's); TpmC, client CPU (user+sys from /usr/bin/time) per measured transaction
#     (success+late of all five types, as both print them), peak RSS; with perf (as root) the
#     client's system calls and context switches per statement, counted by the kernel;
#  3. statements: around every run the server's global counters (nothing else uses this
#     server): statements by kind (Com_select + Com_insert(_select) + Com_update(_multi) +
#     Com_delete(_multi) + Com_commit + Com_rollback: a prepared statement counts under its kind, so prepared and
#     text statements count alike; Com_stmt_execute shown too) per transaction (Com_commit +
#     Com_rollback; tpcc-mysql's Delivery commits per district, so its "transactions" here are
#     commits). With SYSBENCH_TPCC set, sysbench-tpcc (tpcc.lua with this machine's sysbench)
#     is prepared on the same number of warehouses and counted the same way.
# Counts are deterministic up to the mix; timings on a shared machine are not: read the pair
# ratios, and the load average the script prints.
# Prints medians and the median (min-max) of the round-by-round ratios to tpcc-mysql.
#
# Environment (defaults keep the whole script to roughly ten minutes):
#   TPCC_MYSQL=/work/ref/tpcc-mysql   (required: where tpcc_load and tpcc_start are)
#   WAREHOUSES=2 CONNECTIONS=8 RAMPUP=5 TIME=30 ROUNDS=3 LOAD_ROUNDS=2
#   BUFFER_POOL=1G        innodb_buffer_pool_size of the benchmark server
#   SYSBENCH_TPCC=        a directory with Percona-Lab/sysbench-tpcc's tpcc.lua (cloned outside
#                         this repository); empty = sysbench-tpcc not measured
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
#   SPINDLE_ARGS=         more arguments for both `spindle tpcc run`s (e.g. the hidden
#                         --client-io=reactor, to A/B the client's ways of waiting)
#   KEEP=1                keep the work directory (server stopped anyway)
set -euo pipefail

WAREHOUSES=${WAREHOUSES:-2}
CONNECTIONS=${CONNECTIONS:-8}
RAMPUP=${RAMPUP:-5}
TIME=${TIME:-30}
ROUNDS=${ROUNDS:-3}
LOAD_ROUNDS=${LOAD_ROUNDS:-2}
BUFFER_POOL=${BUFFER_POOL:-1G}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}
TPCC_MYSQL=${TPCC_MYSQL:-}
SYSBENCH_TPCC=${SYSBENCH_TPCC:-}
read -r -a SPINDLE_EXTRA <<<"${SPINDLE_ARGS:-}"

die() { echo "$*" >&2; exit 1; }
[ -n "$TPCC_MYSQL" ] || die "set TPCC_MYSQL to a directory with tpcc-mysql's tpcc_load, tpcc_start, create_table.sql and add_fkey_idx.sql (built from https://github.com/Percona-Lab/tpcc-mysql outside this repository)"
for f in tpcc_load tpcc_start create_table.sql add_fkey_idx.sql; do
  [ -e "$TPCC_MYSQL/$f" ] || die "missing $TPCC_MYSQL/$f: build tpcc-mysql (cd src && make) or fix TPCC_MYSQL"
done
if [ -n "$SYSBENCH_TPCC" ]; then
  [ -e "$SYSBENCH_TPCC/tpcc.lua" ] || die "missing $SYSBENCH_TPCC/tpcc.lua: clone https://github.com/Percona-Lab/sysbench-tpcc there, or unset SYSBENCH_TPCC"
  command -v sysbench >/dev/null || die "missing sysbench (scripts/deps.sh installs it)"
fi
command -v python3 >/dev/null || die "missing python3"
[ -x /usr/bin/time ] || die "missing /usr/bin/time: apt install time"
CLIENT=$(command -v mariadb || command -v mysql || true)
[ -n "$CLIENT" ] || die "missing the mariadb/mysql command-line client"
if [ ! -x "$SPINDLE" ]; then
  (cd "$ROOT" && cargo build --release)
fi

WORK=$(mktemp -d /tmp/spindle-tpcc-bench.XXXXXX)
chmod 755 "$WORK"
DATADIR=$WORK/mysql
RAW=$WORK/raw.tsv
: >"$RAW"

stop_server() {
  "$SPINDLE" mysqld stop --datadir "$DATADIR" >/dev/null 2>&1 || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
}
trap stop_server EXIT

"$SPINDLE" mysqld init --datadir "$DATADIR" --buffer-pool-size "$BUFFER_POOL" >/dev/null
"$SPINDLE" mysqld start --datadir "$DATADIR" >/dev/null
CREDS=$DATADIR.spindle/credentials.json
SOCKET=$("$SPINDLE" mysqld status --datadir "$DATADIR" --format json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["socket"])')
USER_=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user"])' "$CREDS")
PASS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["password"])' "$CREDS")
DB=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["database"])' "$CREDS")
sql() { "$CLIENT" -S "$SOCKET" -u "$USER_" -p"$PASS" "$DB" "$@"; }

echo "server: $("$SPINDLE" mysqld status --datadir "$DATADIR" | grep -i running); $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# With perf available, the task clock (the scheduler's exact on-CPU time) is recorded too:
# on a VM the tick-sampled user/sys figures of /usr/bin/time can differ from it.
# With the raw_syscalls tracepoint too (root), system calls and context switches of the client
# per statement: counted in the kernel, without stopping the client as strace would.
PERF=""
PERF_EVENTS=task-clock
if command -v perf >/dev/null && perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then
  PERF=perf
  if perf stat -x, -e raw_syscalls:sys_enter,context-switches -o /dev/null true 2>/dev/null; then
    PERF_EVENTS=task-clock,raw_syscalls:sys_enter,context-switches
  fi
fi

# The server's statement counters (global: this server serves nothing else).
KINDS="Com_select Com_insert Com_insert_select Com_update Com_update_multi Com_delete Com_delete_multi Com_commit Com_rollback"
COUNTERS="'Com_stmt_execute','$(echo $KINDS | sed "s/ /','/g")'"
counters() { sql -N -e "SHOW GLOBAL STATUS WHERE Variable_name IN ($COUNTERS)" >"$1"; }

# measure TOOL KIND ROUND -- command...: runs it under /usr/bin/time -v (and perf stat) and
# appends tool kind round wall_s user_s sys_s rss_kb tpmc transactions task_clock_s
# statements_by_kind stmt_executes commits rollbacks (server counters over the command)
# syscalls context_switches (perf; nan without the tracepoint) to $RAW.
measure() {
  local tool=$1 kind=$2 round=$3
  shift 4
  local out=$WORK/out-$tool-$kind-$round.txt tv=$WORK/time.txt ps=$WORK/perf.txt start end
  : >"$ps"
  counters "$WORK/st0.txt"
  start=$(date +%s.%N)
  if [ -n "$PERF" ]; then
    perf stat -x, -e "$PERF_EVENTS" -o "$ps" -- /usr/bin/time -v -o "$tv" "$@" >"$out" 2>&1 ||
      { cat "$out" >&2; exit 1; }
  else
    /usr/bin/time -v -o "$tv" "$@" >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
  fi
  end=$(date +%s.%N)
  counters "$WORK/st1.txt"
  python3 - "$tool" "$kind" "$round" "$start" "$end" "$out" "$tv" "$ps" "$WORK/st0.txt" "$WORK/st1.txt" >>"$RAW" <<'EOF'
import re, sys
tool, kind, rnd, start, end, out, tv, ps, st0, st1 = sys.argv[1:]
def status(path):
    return {k: int(v) for k, v in (l.split() for l in open(path) if l.strip())}
a, b = status(st0), status(st1)
d = {k: b[k] - a.get(k, 0) for k in b}
kinds = sum(v for k, v in d.items() if k != "Com_stmt_execute")
o = open(out, errors="replace").read(); t = open(tv).read(); p = open(ps).read()
m = re.search(r"^([\d.]+),msec,task-clock", p, re.M)
task = "%.3f" % (float(m.group(1)) / 1e3) if m else "nan"
def count(event):
    m = re.search(r"^(\d+),[^,]*," + re.escape(event), p, re.M)
    return m.group(1) if m else "nan"
def f(pat, text, default="0"):
    m = re.search(pat, text)
    return m.group(1) if m else default
user = f(r"User time \(seconds\): ([\d.]+)", t)
sys_ = f(r"System time \(seconds\): ([\d.]+)", t)
rss = f(r"Maximum resident set size \(kbytes\): (\d+)", t)
tpmc = f(r"([\d.]+) TpmC", o)
raw = o.split("<Raw Results>")[1].split("<Raw Results2")[0] if "<Raw Results>" in o else ""
trx = sum(int(a) + int(b) for a, b in re.findall(r"sc:(\d+)\s+lt:(\d+)", raw))
if tool == "sysbench-tpcc":
    trx = int(f(r"transactions:\s+(\d+)", o))
print("\t".join([tool, kind, rnd, "%.3f" % (float(end) - float(start)), user, sys_, rss, tpmc, str(trx), task,
                 str(kinds), str(d["Com_stmt_execute"]), str(d["Com_commit"]), str(d["Com_rollback"]),
                 count("raw_syscalls:sys_enter"), count("context-switches")]))
EOF
}

drop_all() { "$SPINDLE" tpcc --datadir "$DATADIR" cleanup >/dev/null; }

load_tpcc_mysql() {
  drop_all
  sql <"$TPCC_MYSQL/create_table.sql"
  MYSQL_UNIX_PORT=$SOCKET "$TPCC_MYSQL/tpcc_load" -h localhost -d "$DB" -u "$USER_" -p "$PASS" -w "$WAREHOUSES"
  sql <"$TPCC_MYSQL/add_fkey_idx.sql"
}
export -f load_tpcc_mysql drop_all sql
export SPINDLE DATADIR CLIENT SOCKET USER_ PASS DB TPCC_MYSQL WAREHOUSES

# --- load: pairs, alternating order; the last load of all is spindle's (the runs use it).
for r in $(seq "$LOAD_ROUNDS"); do
  if [ $(((LOAD_ROUNDS - r) % 2)) = 0 ]; then order="tpcc-mysql spindle"; else order="spindle tpcc-mysql"; fi
  for tool in $order; do
    if [ "$tool" = spindle ]; then
      drop_all
      measure spindle load "$r" -- "$SPINDLE" tpcc --datadir "$DATADIR" -w "$WAREHOUSES" prepare
    else
      measure tpcc-mysql load "$r" -- bash -c load_tpcc_mysql
    fi
    echo "load $tool round $r: $(tail -1 "$RAW" | cut -f4) s" >&2
  done
done

# --- runs: rounds of the three, the order rotating, on the same data.
run_one() {
  local tool=$1 r=$2
  case $tool in
  spindle | spindle-batched)
    local shape=tpcc-mysql
    [ "$tool" = spindle-batched ] && shape=batched
    measure "$tool" run "$r" -- "$SPINDLE" tpcc run --datadir "$DATADIR" -w "$WAREHOUSES" \
      -c "$CONNECTIONS" -r "$RAMPUP" -l "$TIME" -i 10 --statements "$shape" ${SPINDLE_EXTRA[@]+"${SPINDLE_EXTRA[@]}"}
    ;;
  tpcc-mysql)
    measure tpcc-mysql run "$r" -- "$TPCC_MYSQL/tpcc_start" -h localhost -S "$SOCKET" -d "$DB" \
      -u "$USER_" -p "$PASS" -w "$WAREHOUSES" -c "$CONNECTIONS" -r "$RAMPUP" -l "$TIME" -i 10
    ;;
  esac
}
tools=(spindle tpcc-mysql spindle-batched)
for r in $(seq "$ROUNDS"); do
  k=$(((r - 1) % 3))
  order="${tools[*]:$k} ${tools[*]:0:$k}"
  for tool in $order; do run_one "$tool" "$r"; done
  echo "run round $r ($order):" \
    "spindle $(grep -P "^spindle\trun\t$r\t" "$RAW" | cut -f8) TpmC," \
    "tpcc-mysql $(grep -P "^tpcc-mysql\trun\t$r\t" "$RAW" | cut -f8) TpmC," \
    "spindle batched $(grep -P "^spindle-batched\trun\t$r\t" "$RAW" | cut -f8) TpmC" >&2
done
"$SPINDLE" tpcc --datadir "$DATADIR" -w "$WAREHOUSES" check >"$WORK/check.txt" ||
  echo "consistency check after the runs: $(tail -1 "$WORK/check.txt") (tpcc_start's Payment leaves C_YTD_PAYMENT alone, which breaks 3.3.2.12)" >&2
if [ -n "$SYSBENCH_TPCC" ]; then
  # sysbench-tpcc's own tables (warehouse1, …) beside the others, the same warehouses; its
  # prepare waits 30 s after creating the tables.
  sbt() {
    (cd "$SYSBENCH_TPCC" && sysbench ./tpcc.lua --db-driver=mysql --mysql-socket="$SOCKET" \
      --mysql-user="$USER_" --mysql-password="$PASS" --mysql-db="$DB" --tables=1 \
      --scale="$WAREHOUSES" --threads="$CONNECTIONS" "$@")
  }
  echo "sysbench-tpcc: prepare (about a minute)" >&2
  sbt prepare >"$WORK/sbt-prepare.txt" 2>&1 || { cat "$WORK/sbt-prepare.txt" >&2; exit 1; }
  export -f sbt
  export SYSBENCH_TPCC
  measure sysbench-tpcc run 1 -- bash -c "sbt --time=$((RAMPUP + TIME)) --report-interval=0 run"
  sbt cleanup >/dev/null 2>&1 || true
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
[ -n "${KEEP:-}" ] && cp "$RAW" "$WORK/raw-final.tsv"

# --- summary.
python3 - "$RAW" "$WAREHOUSES" "$CONNECTIONS" "$RAMPUP" "$TIME" "$ROUNDS" "$LOAD_ROUNDS" <<'EOF'
import sys, statistics as st
raw, w, c, rampup, time, rounds_n, lrounds = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(raw) if l.strip()]
def pick(tool, kind): return [r for r in rows if r[0] == tool and r[1] == kind]
def med(xs): return st.median(xs) if xs else float("nan")
def ratio(xs): return f"{med(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "n/a"
def cpu(r): return float(r[4]) + float(r[5])
def cpu_per_trx_ms(r): return cpu(r) * 1e3 / max(1, int(r[8]))
def task_per_trx_ms(r): return float(r[9]) * 1e3 / max(1, int(r[8]))
def pairs(kind):
    a, b = pick("spindle", kind), pick("tpcc-mysql", kind)
    return [(x, next(y for y in b if y[2] == x[2])) for x in a if any(y[2] == x[2] for y in b)]
print(f"\nspindle tpcc vs tpcc-mysql, same server, unix socket; {w} warehouses; medians, and the "
      f"median (min-max) of the pair-by-pair ratios spindle/tpcc-mysql\n")
lp = pairs("load")
print(f"load ({lrounds} pairs): spindle {med([float(a[3]) for a, _ in lp]):.1f} s, tpcc-mysql "
      f"{med([float(b[3]) for _, b in lp]):.1f} s (create_table + tpcc_load + add_fkey_idx); "
      f"wall ratio {ratio([float(a[3]) / float(b[3]) for a, b in lp])}; client CPU "
      f"{med([cpu(a) for a, _ in lp]):.1f} s vs {med([cpu(b) for _, b in lp]):.1f} s; peak RSS "
      f"{med([int(a[6]) / 1024 for a, _ in lp]):.1f} vs {med([int(b[6]) / 1024 for _, b in lp]):.1f} MiB\n")
def rounds(tool):
    a, b = pick(tool, "run"), pick("tpcc-mysql", "run")
    return [(x, next(y for y in b if y[2] == x[2])) for x in a if any(y[2] == x[2] for y in b)]
def per_trx(r): return int(r[10]) / max(1, int(r[12]) + int(r[13]))
def execs_per_trx(r): return int(r[11]) / max(1, int(r[12]) + int(r[13]))
print(f"run: {c} connections, {rampup} s ramp-up, {time} s measured, {rounds_n} rounds\n")
print("statements at the server per transaction (by kind / (Com_commit + Com_rollback); medians):\n")
print("| | statements per transaction | Com_stmt_execute per transaction | TpmC | TpmC / tpcc-mysql (rounds) |")
print("|---|---:|---:|---:|---:|")
for tool, label in [("spindle", "spindle, tpcc-mysql statements (default)"), ("spindle-batched", "spindle --statements batched"),
                    ("tpcc-mysql", "tpcc-mysql tpcc_start"), ("sysbench-tpcc", "sysbench-tpcc (tpcc.lua)")]:
    rs = pick(tool, "run")
    if not rs:
        continue
    tp = "" if tool == "sysbench-tpcc" else f"{med([float(r[7]) for r in rs]):.0f}"
    rt = "" if tool in ("tpcc-mysql", "sysbench-tpcc") else ratio([float(a[7]) / float(b[7]) for a, b in rounds(tool) if float(b[7]) > 0])
    print(f"| {label} | {med([per_trx(r) for r in rs]):.1f} | {med([execs_per_trx(r) for r in rs]):.1f} | {tp} | {rt} |")
print()
rp = pairs("run")
print("spindle (tpcc-mysql statements) against tpcc-mysql, round by round:\n")
print("| | spindle | tpcc-mysql | ratio (pairs) |")
print("|---|---:|---:|---:|")
print(f"| TpmC | {med([float(a[7]) for a, _ in rp]):.0f} | {med([float(b[7]) for _, b in rp]):.0f} | "
      f"{ratio([float(a[7]) / float(b[7]) for a, b in rp if float(b[7]) > 0])} |")
print(f"| transactions measured | {med([int(a[8]) for a, _ in rp]):.0f} | {med([int(b[8]) for _, b in rp]):.0f} | "
      f"{ratio([int(a[8]) / int(b[8]) for a, b in rp if int(b[8]) > 0])} |")
print(f"| client CPU ms per transaction (user+sys) | {med([cpu_per_trx_ms(a) for a, _ in rp]):.3f} | "
      f"{med([cpu_per_trx_ms(b) for _, b in rp]):.3f} | "
      f"{ratio([cpu_per_trx_ms(a) / cpu_per_trx_ms(b) for a, b in rp])} |")
if all(r[9] != "nan" for p in rp for r in p):
    print(f"| client task clock ms per transaction | {med([task_per_trx_ms(a) for a, _ in rp]):.3f} | "
          f"{med([task_per_trx_ms(b) for _, b in rp]):.3f} | "
          f"{ratio([task_per_trx_ms(a) / task_per_trx_ms(b) for a, b in rp])} |")
def per_stmt(r, i): return float(r[i]) / max(1, int(r[10]))
if all(r[14] != "nan" for p in rp for r in p):
    for i, what in [(14, "client system calls per statement"), (15, "client context switches per statement")]:
        print(f"| {what} | {med([per_stmt(a, i) for a, _ in rp]):.2f} | {med([per_stmt(b, i) for _, b in rp]):.2f} | "
              f"{ratio([per_stmt(a, i) / per_stmt(b, i) for a, b in rp])} |")
print(f"| client user / sys s | {med([float(a[4]) for a, _ in rp]):.2f} / {med([float(a[5]) for a, _ in rp]):.2f} | "
      f"{med([float(b[4]) for _, b in rp]):.2f} / {med([float(b[5]) for _, b in rp]):.2f} | |")
print(f"| peak RSS MiB | {med([int(a[6]) / 1024 for a, _ in rp]):.1f} | {med([int(b[6]) / 1024 for _, b in rp]):.1f} | "
      f"{ratio([int(a[6]) / int(b[6]) for a, b in rp])} |")
EOF
