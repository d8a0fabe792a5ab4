#!/usr/bin/env bash
# ClickHouse over HTTP on 127.0.0.1:18123, as a local process.
#
# The engine is the clickhouse-local build inside libchdb.so, shipped by the
# npm package that the `chdb` package depends on for this platform
# (@chdb/lib-linux-<arch>-gnu). A tiny C launcher (../clickhouse/launcher.c)
# loads the library, calls its exported chdb_query_cmdline with a
# clickhouse-local command line that runs `SYSTEM START LISTEN HTTP` and then
# blocks, so the process serves HTTP until SIGTERM.
#
# usage: clickhouse.sh install|start|stop|status|env
#   stop wipes the engine's data and config under $KB_NATIVE_RUN unless KB_NATIVE_KEEP_DATA=1.
# env: KB_NATIVE_CACHE (default deploy/native/.cache), KB_NATIVE_RUN (default deploy/native/.run)
set -euo pipefail

NAME=clickhouse
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NATIVE_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE_ROOT="${KB_NATIVE_CACHE:-$NATIVE_DIR/.cache}"
RUN_ROOT="${KB_NATIVE_RUN:-$NATIVE_DIR/.run}"

# Pinned: the platform package that chdb@3.4.0 depends on (ClickHouse 26.7).
CHDB_LIB_VERSION="26.7.3-stable.1"
HOST=127.0.0.1
HTTP_PORT=18123
DATABASE=kb
URL="http://$HOST:$HTTP_PORT"

CACHE_DIR="$CACHE_ROOT/clickhouse"
NPM_DIR="$CACHE_DIR/npm"
BIN_DIR="$CACHE_DIR/bin"
LAUNCHER="$BIN_DIR/kb-chdb-launcher"
LAUNCHER_SRC="$NATIVE_DIR/clickhouse/launcher.c"
CONFIG_TEMPLATE="$NATIVE_DIR/clickhouse/config.xml"

# Runtime layout shared with the other engines of deploy/native.
DATA_DIR="$RUN_ROOT/data/$NAME"
DATA_ROOT="$DATA_DIR"
CONF_DIR="$RUN_ROOT/conf/$NAME"
CONFIG_FILE="$CONF_DIR/config.xml"
PID_FILE="$RUN_ROOT/pids/$NAME.pid"
LOG_DIR="$RUN_ROOT/logs"
LOG_FILE="$LOG_DIR/$NAME.log"

STOP_TIMEOUT="${KB_NATIVE_STOP_TIMEOUT:-20}"
# Shared helpers (kb_engine_main, kb_await_start, kb_stop_pid_file); sourced after this script's own settings.
source "$NATIVE_DIR/lib.sh"
START_TIMEOUT="${KB_NATIVE_START_TIMEOUT:-60}"

say() { echo "[$NAME] $*"; }
die() { echo "[$NAME] error: $*" >&2; exit 1; }

lib_package() {
  local arch
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "unsupported machine $(uname -m): libchdb is published for x86_64 and aarch64 (glibc) only" ;;
  esac
  echo "@chdb/lib-linux-$arch-gnu"
}

lib_path() { echo "$NPM_DIR/node_modules/$(lib_package)/libchdb.so"; }

pid_alive() { kb_pid_file_alive "$PID_FILE"; }

http_ok() {
  local out
  out="$(curl -fsS --max-time 3 "$URL/ping" 2>/dev/null)" || return 1
  [[ "$out" == Ok.* ]]
}

server_version() {
  curl -fsS --max-time 3 "$URL/" --data-binary 'SELECT version()' 2>/dev/null || echo unknown
}

engine_install() {
  command -v npm >/dev/null || die "npm not found"
  command -v gcc >/dev/null || die "gcc not found (apt-get install gcc)"
  command -v curl >/dev/null || die "curl not found (apt-get install curl)"
  local pkg lib stamp want
  pkg="$(lib_package)"
  lib="$(lib_path)"
  stamp="$CACHE_DIR/installed.txt"
  want="$pkg@$CHDB_LIB_VERSION"
  mkdir -p "$NPM_DIR" "$BIN_DIR"

  if [[ -f "$lib" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    say "libchdb already installed ($want)"
  else
    say "installing $want from the npm registry (about 550 MB unpacked; cached by npm)"
    [[ -f "$NPM_DIR/package.json" ]] || echo '{"name":"kb-native-clickhouse","private":true}' >"$NPM_DIR/package.json"
    # The platform package has no install scripts; --ignore-scripts keeps it that way.
    (cd "$NPM_DIR" && npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts \
      --no-package-lock --loglevel=error "$want") || die "npm install $want failed"
    [[ -f "$lib" ]] || die "libchdb.so not found at $lib after npm install"
    echo "$want" >"$stamp"
  fi

  # Rebuild the launcher when its source changes.
  local src_sum built_sum=""
  src_sum="$(sha256sum "$LAUNCHER_SRC" | cut -d' ' -f1)"
  [[ -f "$LAUNCHER.sha256" ]] && built_sum="$(cat "$LAUNCHER.sha256")"
  if [[ -x "$LAUNCHER" && "$src_sum" == "$built_sum" ]]; then
    say "launcher already built"
  else
    say "building launcher"
    gcc -O2 -Wall -Wextra -o "$LAUNCHER.tmp" "$LAUNCHER_SRC" -ldl
    mv "$LAUNCHER.tmp" "$LAUNCHER"
    echo "$src_sum" >"$LAUNCHER.sha256"
  fi
  say "installed: $(lib_path)"
}

engine_start() {
  if pid_alive && http_ok; then
    say "already running (pid $(cat "$PID_FILE")) at $URL"
    return 0
  fi
  if http_ok; then
    die "something else already answers on $URL; stop it first"
  fi
  if pid_alive; then
    say "stale process $(cat "$PID_FILE") does not answer; stopping it"
    engine_stop
  fi
  engine_install >/dev/null

  mkdir -p "$DATA_DIR" "$CONF_DIR" "$LOG_DIR" "$(dirname "$PID_FILE")"
  sed -e "s/@HTTP_PORT@/$HTTP_PORT/g" -e "s/@LISTEN_HOST@/$HOST/g" "$CONFIG_TEMPLATE" >"$CONFIG_FILE"

  local query
  query="CREATE DATABASE IF NOT EXISTS $DATABASE ENGINE = Atomic; SYSTEM START LISTEN HTTP; "
  # Block forever at one row a second, without output, so the listener stays up.
  query+="SELECT sleepEachRow(1) FROM system.numbers SETTINGS max_block_size = 1, max_execution_time = 0 FORMAT Null"

  say "starting on $URL (data in $DATA_DIR, log $LOG_FILE)"
  echo "--- $(date -u +%Y-%m-%dT%H:%M:%SZ) start" >>"$LOG_FILE"
  # cwd = data dir: clickhouse-local resolves unknown names in `default` against files in cwd.
  (
    cd "$DATA_DIR"
    exec setsid "$LAUNCHER" "$(lib_path)" --path "$DATA_DIR" --config-file "$CONFIG_FILE" --log-level warning \
      --multiquery --query "$query" </dev/null >>"$LOG_FILE" 2>&1
  ) &
  echo $! >"$PID_FILE"

  kb_await_start "$NAME" "$PID_FILE" "$LOG_FILE" "$URL" "$START_TIMEOUT" 500 20 http_ok
  say "running (pid $(cat "$PID_FILE"), ClickHouse $(server_version)) at $URL"
}

engine_stop() {
  kb_stop_pid_file "$NAME" "$PID_FILE" "$STOP_TIMEOUT"
  kb_wipe_state "$NAME" "$DATA_DIR" "$DATA_ROOT" "$CONF_DIR"
}

engine_status() {
  if http_ok; then
    local pid="?"
    pid_alive && pid="$(cat "$PID_FILE")"
    echo "$NAME: running (pid $pid, ClickHouse $(server_version)) at $URL"
    return 0
  fi
  if pid_alive; then
    echo "$NAME: process $(cat "$PID_FILE") is alive but $URL does not answer"
  else
    echo "$NAME: not running"
  fi
  return 1
}

# The account store's first operations on a fresh database: create it, a ReplacingMergeTree table,
# an insert and a FINAL read of it; then drop the database.
engine_probe() {
  local db out rc=0
  http_ok || { engine_status; return 1; }
  db="$(kb_probe_name kb_ready_)"
  {
    kb_probe_http "CREATE DATABASE $db" POST "$URL/" --data-binary "CREATE DATABASE IF NOT EXISTS $db" >/dev/null &&
      kb_probe_http "CREATE TABLE $db.probe" POST "$URL/" --data-binary \
        "CREATE TABLE IF NOT EXISTS $db.probe (id String, at DateTime64(3, 'UTC')) ENGINE = ReplacingMergeTree ORDER BY id" \
        >/dev/null &&
      kb_probe_http "INSERT INTO $db.probe" POST "$URL/?query=INSERT%20INTO%20$db.probe%20FORMAT%20JSONEachRow" \
        --data-binary '{"id":"a","at":"2026-01-01 00:00:00.000"}' >/dev/null &&
      out="$(kb_probe_http "SELECT FROM $db.probe" POST "$URL/" --data-binary "SELECT count() FROM $db.probe FINAL")" &&
      [[ "$out" == 1* ]]
  } || rc=1
  kb_probe_http "DROP DATABASE $db" POST "$URL/" --data-binary "DROP DATABASE IF EXISTS $db SYNC" >/dev/null || rc=1
  ((rc == 0)) && echo "$NAME: ready (DDL, insert and read on a fresh database at $URL)"
  return "$rc"
}

engine_env() {
  echo "export KB_CLICKHOUSE_URL=$URL"
  echo "export KB_CLICKHOUSE_USER=default"
  echo "export KB_CLICKHOUSE_PASSWORD="
  echo "export KB_CLICKHOUSE_DATABASE=$DATABASE"
}

kb_engine_main "$NAME" "$@"
