# shellcheck shell=bash
# Shared helpers for deploy/native scripts. Source it; do not run it.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"      (from deploy/native/*)
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   (from deploy/native/engines/*)
#
# Layout (both folders are git-ignored, both can be moved with env vars):
#   $KB_NATIVE_CACHE  (default deploy/native/.cache)  downloaded / built engines
#   $KB_NATIVE_RUN    (default deploy/native/.run)    runtime state:
#       logs/<engine>.log    engine stdout+stderr
#       pids/<engine>.pid    pid of the engine (session leader of its process group)
#       data/<engine>/       data dirs; `down` removes data/<engine> after stopping
#       conf/<engine>/       rendered config files
#
# Every engine script must answer: install | start | stop | status | env.

if [[ -n "${KB_NATIVE_LIB_LOADED:-}" ]]; then return 0; fi
KB_NATIVE_LIB_LOADED=1

KB_NATIVE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
KB_NATIVE_ENGINES_DIR="$KB_NATIVE_DIR/engines"
KB_NATIVE_CACHE="${KB_NATIVE_CACHE:-$KB_NATIVE_DIR/.cache}"
KB_NATIVE_RUN="${KB_NATIVE_RUN:-$KB_NATIVE_DIR/.run}"
export KB_NATIVE_DIR KB_NATIVE_CACHE KB_NATIVE_RUN

# Default engine order for up/down/status/env.
KB_NATIVE_ALL_ENGINES=(kafka schema-registry minio opensearch clickhouse)

# Seconds `stop` waits after SIGTERM before SIGKILL.
KB_NATIVE_STOP_TIMEOUT="${KB_NATIVE_STOP_TIMEOUT:-30}"

# ---------------------------------------------------------------- logging

kb_log() { printf '[%s] %s\n' "${KB_ENGINE:-native}" "$*" >&2; }
kb_warn() { printf '[%s] WARNING: %s\n' "${KB_ENGINE:-native}" "$*" >&2; }
kb_die() {
  printf '[%s] ERROR: %s\n' "${KB_ENGINE:-native}" "$*" >&2
  exit 1
}

# ---------------------------------------------------------------- paths

kb_log_file() { echo "$KB_NATIVE_RUN/logs/$1.log"; }
kb_pid_file() { echo "$KB_NATIVE_RUN/pids/$1.pid"; }
kb_data_dir() { echo "$KB_NATIVE_RUN/data/$1"; }
kb_conf_dir() { echo "$KB_NATIVE_RUN/conf/$1"; }
kb_cache_dir() { echo "$KB_NATIVE_CACHE/$1"; }

kb_ensure_dirs() {
  local name="$1"
  mkdir -p "$KB_NATIVE_RUN/logs" "$KB_NATIVE_RUN/pids" "$(kb_data_dir "$name")" \
    "$(kb_conf_dir "$name")" "$(kb_cache_dir "$name")"
}

# Replace @KEY@ placeholders: kb_render TEMPLATE OUT KEY=VALUE ...
kb_render() {
  local template="$1" out="$2"
  shift 2
  local content kv
  content="$(<"$template")"
  for kv in "$@"; do
    content="${content//@${kv%%=*}@/${kv#*=}}"
  done
  printf '%s\n' "$content" >"$out"
}

# ---------------------------------------------------------------- processes

# Prints the pid if the engine's pid file points at a live process.
kb_pid() {
  local f pid
  f="$(kb_pid_file "$1")"
  [[ -f "$f" ]] || return 1
  pid="$(<"$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: our engines run from files under $KB_NATIVE_CACHE.
  if [[ -r "/proc/$pid/cmdline" ]] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$KB_NATIVE_CACHE"; then
    return 1
  fi
  echo "$pid"
}

kb_is_running() { kb_pid "$1" >/dev/null; }

# kb_spawn NAME [--cwd DIR] -- CMD ARGS...
# Starts CMD detached (own session, stdin from /dev/null, output appended to
# the engine log) and writes the pid file. Returns once the process is launched.
kb_spawn() {
  local name="$1" cwd="$PWD"
  shift
  if [[ "${1:-}" == "--cwd" ]]; then
    cwd="$2"
    shift 2
  fi
  [[ "${1:-}" == "--" ]] && shift
  local log pidf pid
  log="$(kb_log_file "$name")"
  pidf="$(kb_pid_file "$name")"
  mkdir -p "$(dirname "$log")" "$(dirname "$pidf")"
  printf '\n===== %s starting %s =====\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$name" >>"$log"
  # A background job of a non-interactive shell is not a process-group leader,
  # so setsid(1) calls setsid() in place: $! is the engine's own pid and also
  # the id of its new process group.
  (cd "$cwd" && exec nohup setsid "$@" >>"$log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$pidf"
  sleep 0.5
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$pidf"
    kb_warn "$name exited right after launch; last lines of $log:"
    tail -n 20 "$log" >&2 || true
    return 1
  fi
  kb_log "launched $name (pid $pid, log $log)"
}

# kb_signal_stop PID LABEL TIMEOUT: SIGTERM the process group led by PID (engines run under
# setsid), SIGKILL it after TIMEOUT seconds. Returns once the process is gone.
kb_signal_stop() {
  local pid="$1" label="$2" timeout="$3" waited=0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited >= timeout * 2)); then
      kb_warn "$label did not exit after ${timeout}s, sending SIGKILL"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
}

# kb_already_running NAME: true, saying so, when NAME runs already (engine_start returns then).
kb_already_running() {
  kb_is_running "$1" || return 1
  kb_log "already running (pid $(kb_pid "$1"))"
}

# kb_stop_pid NAME: SIGTERM the process group, SIGKILL after the timeout,
# remove the pid file. Never fails when nothing is running.
kb_stop_pid() {
  local name="$1" pid
  if ! pid="$(kb_pid "$name")"; then
    rm -f "$(kb_pid_file "$name")"
    kb_log "$name is not running"
    return 0
  fi
  kb_log "stopping $name (pid $pid)"
  kb_signal_stop "$pid" "$name" "$KB_NATIVE_STOP_TIMEOUT"
  rm -f "$(kb_pid_file "$name")"
  kb_log "$name stopped"
}

# ---------------------------------------------------------------- engines with their own pid file

# opensearch.sh and clickhouse.sh launch their engine themselves and report as "[name] ..."
# on stdout; these are the steps they share.

# kb_pid_file_alive PID_FILE: true when PID_FILE holds the pid of a live process.
kb_pid_file_alive() {
  local pid
  [[ -f "$1" ]] || return 1
  pid="$(cat "$1" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null
}

# kb_await_start NAME PID_FILE LOG_FILE URL TIMEOUT STEP_MS TAIL READY...: run READY every
# STEP_MS milliseconds until it succeeds. Exits with an error, after printing the last TAIL lines
# of LOG_FILE, once the process has exited (the pid file is removed) or after TIMEOUT seconds'
# worth of steps.
kb_await_start() {
  local name="$1" pid_file="$2" log_file="$3" url="$4" timeout="$5" step_ms="$6" tail_lines="$7"
  shift 7
  local step waited=0
  step="$((step_ms / 1000)).$(printf '%03d' $((step_ms % 1000)))"
  until "$@"; do
    if ! kb_pid_file_alive "$pid_file"; then
      tail -n "$tail_lines" "$log_file" >&2 || true
      rm -f "$pid_file"
      echo "[$name] error: process exited during start; see $log_file" >&2
      exit 1
    fi
    if ((waited * step_ms >= timeout * 1000)); then
      tail -n "$tail_lines" "$log_file" >&2 || true
      echo "[$name] error: no answer on $url after ${timeout}s; see $log_file" >&2
      exit 1
    fi
    sleep "$step"
    waited=$((waited + 1))
  done
}

# kb_stop_pid_file NAME PID_FILE TIMEOUT: stop the process PID_FILE names (kb_signal_stop) and
# remove PID_FILE. Never fails when nothing is running.
kb_stop_pid_file() {
  local name="$1" pid_file="$2" timeout="$3"
  if [[ -f "$pid_file" ]]; then
    local pid
    pid="$(cat "$pid_file" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      echo "[$name] stopping pid $pid"
      KB_ENGINE="$name" kb_signal_stop "$pid" "$name" "$timeout"
    else
      echo "[$name] not running (stale pid file)"
    fi
    rm -f "$pid_file"
  else
    echo "[$name] not running"
  fi
}

# kb_wipe_state NAME DATA_DIR DIR...: remove the DIRs, unless KB_NATIVE_KEEP_DATA=1 keeps them
# (the message names DATA_DIR).
kb_wipe_state() {
  local name="$1" data_dir="$2"
  shift 2
  if [[ "${KB_NATIVE_KEEP_DATA:-0}" == 1 ]]; then
    echo "[$name] data kept in $data_dir (KB_NATIVE_KEEP_DATA=1)"
  else
    rm -rf "$@"
  fi
}

# ---------------------------------------------------------------- network

# True if something listens on 127.0.0.1:PORT.
kb_port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Describe who listens on a port (best effort).
kb_port_owner() {
  local out=""
  if command -v ss >/dev/null 2>&1; then
    out="$(ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\(.*\)))/\1/p' | head -n1)"
  fi
  echo "${out:-unknown process}"
}

# Fail unless all ports are free (call before launching an engine).
kb_require_free_ports() {
  local name="$1" port
  shift
  for port in "$@"; do
    if kb_port_open "$port"; then
      kb_die "port 127.0.0.1:$port needed by $name is already in use by $(kb_port_owner "$port");" \
        "is another checkout's engine running? stop it with its deploy/native/down"
    fi
  done
}

# True if URL answers 2xx within a few seconds.
kb_http_ok() {
  curl -fsS -o /dev/null --max-time "${2:-5}" "$1" 2>/dev/null
}

# kb_wait_for SECONDS CMD...: poll CMD every second until it succeeds.
kb_wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# ---------------------------------------------------------------- java / maven

# Major version of a java binary (8 for 1.8).
kb_java_major() {
  local v
  v="$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -n1)"
  v="${v#1.}"
  [[ "$v" =~ ^[0-9]+$ ]] && echo "$v"
}

# kb_find_java MIN [MAX]: print a java binary with MIN <= major <= MAX.
# Looks at KB_NATIVE_JAVA_HOME, JAVA_HOME, java on PATH, then /usr/lib/jvm/*.
kb_find_java() {
  local min="$1" max="${2:-999}" c major seen=" "
  local candidates=()
  [[ -n "${KB_NATIVE_JAVA_HOME:-}" ]] && candidates+=("$KB_NATIVE_JAVA_HOME/bin/java")
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && candidates+=("$(readlink -f "$(command -v java)")")
  for c in /usr/lib/jvm/*/bin/java; do [[ -e "$c" ]] && candidates+=("$(readlink -f "$c")"); done
  for c in "${candidates[@]}"; do
    [[ -x "$c" ]] || continue
    [[ "$seen" == *" $c "* ]] && continue
    seen+="$c "
    major="$(kb_java_major "$c")" || continue
    if ((major >= min && major <= max)); then
      echo "$c"
      return 0
    fi
  done
  return 1
}

kb_require_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || kb_die "'$c' is required but not on PATH"
  done
}

# Maven in batch mode with the local repository as configured (~/.m2).
# Output is kept in $KB_NATIVE_RUN/logs/mvn.log and shown only on failure.
kb_mvn() {
  kb_require_cmd mvn
  local log="$KB_NATIVE_RUN/logs/mvn.log"
  mkdir -p "$(dirname "$log")"
  printf '\n===== %s mvn %s =====\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$log"
  if ! mvn -B -ntp -Dstyle.color=never "$@" >>"$log" 2>&1; then
    kb_warn "mvn $* failed; last lines of $log:"
    tail -n 40 "$log" >&2
    return 1
  fi
}

# kb_mvn_copy GROUP:ARTIFACT:VERSION[:TYPE[:CLASSIFIER]] OUTDIR
kb_mvn_copy() {
  mkdir -p "$2"
  kb_mvn dependency:copy -Dartifact="$1" -DoutputDirectory="$2" -Dmdep.overWriteReleases=false
}

# ---------------------------------------------------------------- go

kb_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then
    echo /usr/local/go/bin/go
  else
    return 1
  fi
}

# ---------------------------------------------------------------- engine dispatch

# kb_probe_name PREFIX: a fresh name for the objects a readiness probe creates and removes
# (lower case letters and digits after PREFIX, valid as a topic, subject, index and database name).
kb_probe_name() { printf '%s%s%04x' "$1" "$(date +%s)" "$((RANDOM % 65536))"; }

# kb_probe_http WHAT METHOD URL [CURL ARGS...]: one HTTP call of a readiness probe; prints the
# answer, or says on stderr what failed (status and body) and returns 1.
kb_probe_http() {
  local what="$1" method="$2" url="$3" out code
  shift 3
  out="$(curl -sS --max-time 20 -X "$method" -w '\n%{http_code}' "$url" "$@" 2>&1)" || {
    echo "$what: no answer (${out//$'\n'/ })" >&2
    return 1
  }
  code="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [[ ! "$code" =~ ^2 ]]; then
    echo "$what: HTTP $code ${out:0:300}" >&2
    return 1
  fi
  printf '%s' "$out"
}

# kb_engine_main NAME "$@": common argument handling for engine scripts.
# The engine script defines engine_install, engine_start, engine_stop,
# engine_status and engine_env before calling this, and may define engine_probe: the service's
# first real operations on the engine (a DDL and an insert, a produce, a schema registration, an
# index creation) on fresh names, removed again; `up` returns only once the probe passes, since
# an engine that answers its health check may still refuse them for a while after a cold start.
kb_engine_main() {
  local name="$1"
  shift
  KB_ENGINE="$name"
  local cmd="${1:-}"
  case "$cmd" in
    install) engine_install ;;
    start) engine_start ;;
    stop) engine_stop ;;
    status) engine_status ;;
    probe)
      # Engines without a probe of their own are ready when they answer.
      if declare -F engine_probe >/dev/null; then engine_probe; else engine_status; fi
      ;;
    env) engine_env ;;
    *)
      echo "usage: $0 install|start|stop|status|probe|env" >&2
      exit 2
      ;;
  esac
}

# ---------------------------------------------------------------- orchestration (up/down/status/env)

# kb_select_engines ARGS...: set KB_SELECTED to the engines to act on (default: all).
kb_select_engines() {
  local e
  KB_SELECTED=()
  if (($# == 0)); then
    KB_SELECTED=("${KB_NATIVE_ALL_ENGINES[@]}")
    return 0
  fi
  for e in "$@"; do
    if [[ " ${KB_NATIVE_ALL_ENGINES[*]} " != *" $e "* && ! -f "$KB_NATIVE_ENGINES_DIR/$e.sh" ]]; then
      kb_die "unknown engine '$e' (known: ${KB_NATIVE_ALL_ENGINES[*]})"
    fi
    KB_SELECTED+=("$e")
  done
}

kb_engine_script() { echo "$KB_NATIVE_ENGINES_DIR/$1.sh"; }
kb_engine_exists() { [[ -f "$(kb_engine_script "$1")" ]]; }
