# Shared by the OLTP benchmark scripts (sourced, not run): one private MariaDB/MySQL server
# started with `spindle mysqld` in a fresh work directory, stopped (and the directory removed
# unless KEEP=1) when the script exits, and the sysbench-style options that reach it.
#
# Needs ROOT, SPINDLE (the binary) and BUFFER_POOL set by the caller; sets WORK, DATADIR, SOCKET,
# USER_, PASS and DB. `opts` prints the common options (TABLES and TABLE_SIZE from the caller).

bench_work() {
  WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$WORK"
  DATADIR=$WORK/mysql
  trap stop_server EXIT
}

stop_server() {
  "$SPINDLE" mysqld stop --datadir "$DATADIR" >/dev/null 2>&1 || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
}

start_server() {
  "$SPINDLE" mysqld init --datadir "$DATADIR" --buffer-pool-size "$BUFFER_POOL" >/dev/null
  "$SPINDLE" mysqld start --datadir "$DATADIR" >/dev/null
  local creds
  creds=$(ls "$DATADIR".spindle/credentials.json)
  SOCKET=$("$SPINDLE" mysqld status --datadir "$DATADIR" --format json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["socket"])')
  USER_=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("user","sbtest"))' "$creds")
  PASS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["password"])' "$creds")
  DB=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("database","sbtest"))' "$creds")
}

# Common sysbench-style options; both tools take the same ones.
opts() {
  echo "--mysql-socket=$SOCKET --mysql-user=$USER_ --mysql-password=$PASS --mysql-db=$DB" \
    "--tables=$TABLES --table-size=$TABLE_SIZE"
}

# Queries per event of each workload with sysbench's defaults (events are what both tools fix).
per_event() {
  case $1 in
    point_select) echo 1 ;;
    read_only) echo 16 ;;
    read_write) echo 20 ;;
    write_only) echo 6 ;;
    *) echo 1 ;;
  esac
}

# need PROGRAM HINT: stop with HINT (how to install it) when PROGRAM is missing.
need() { command -v "$1" >/dev/null || { echo "missing $1: $2" >&2; exit 1; }; }

# The spindle binary the caller named, built with `cargo build --release` when missing.
build_spindle() {
  if [ ! -x "$SPINDLE" ]; then
    (cd "$ROOT" && cargo build --release)
  fi
}
