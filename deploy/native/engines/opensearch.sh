#!/usr/bin/env bash
# OpenSearch with the k-NN plugin on 127.0.0.1:19200 (transport 19300), as a local process.
#
# Everything comes from Maven Central through mvn (so it is cached in ~/.m2):
#   org.opensearch.distribution.integ-test-zip:opensearch:<version>:zip
#   org.opensearch.plugin:opensearch-knn:<version>.0:zip   (installed with opensearch-plugin)
# The Maven zip of k-NN has no native faiss/nmslib libraries: map every knn_vector field
# with `method.engine: lucene`. A faiss field (the 3.x default when no method is given)
# makes the node exit on the first indexed vector (UnsatisfiedLinkError).
# When the distribution zip lacks lang-painless or reindex (older 3.x integ-test zips
# ship only the transport modules), those modules are assembled from their Maven
# Central jars with a generated plugin descriptor.
#
# OpenSearch 3.x needs JDK 21+ and refuses to run as root: as root, the node runs as a
# system user (kbsearch) that owns the install and the data.
#
# usage: opensearch.sh install|start|stop|status|env
#   stop wipes the engine's data and config under $KB_NATIVE_RUN unless KB_NATIVE_KEEP_DATA=1.
# env: KB_NATIVE_CACHE (default deploy/native/.cache), KB_NATIVE_RUN (default deploy/native/.run),
#      OPENSEARCH_JAVA_HOME (a JDK 21+; else the newest found in /usr/lib/jvm), KB_OPENSEARCH_HEAP (1g),
#      KB_OPENSEARCH_USER (kbsearch), KB_OPENSEARCH_VERSION (3.5.0), KB_OPENSEARCH_JAVA_OPTS
set -euo pipefail

NAME=opensearch
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NATIVE_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE_ROOT="${KB_NATIVE_CACHE:-$NATIVE_DIR/.cache}"
RUN_ROOT="${KB_NATIVE_RUN:-$NATIVE_DIR/.run}"

OS_VERSION="${KB_OPENSEARCH_VERSION:-3.5.0}"
KNN_VERSION="$OS_VERSION.0"
HOST=127.0.0.1
HTTP_PORT=19200
TRANSPORT_PORT=19300
HEAP="${KB_OPENSEARCH_HEAP:-1g}"
RUN_USER="${KB_OPENSEARCH_USER:-kbsearch}"
URL="http://$HOST:$HTTP_PORT"

TEMPLATE_DIR="$NATIVE_DIR/opensearch"
PID_FILE="$RUN_ROOT/pids/$NAME.pid"
LOG_DIR="$RUN_ROOT/logs"
LOG_FILE="$LOG_DIR/$NAME.log"

# Install and state folders; set_paths moves them when the run user cannot reach them.
set_paths() { # <cache base> <data base> <conf base> <node log base>
  CACHE_DIR="$1/$NAME"
  DOWNLOAD_DIR="$CACHE_DIR/download"
  OS_HOME="$CACHE_DIR/opensearch-$OS_VERSION"
  STAMP="$OS_HOME/.kb-installed"
  DATA_ROOT="$2/$NAME"
  DATA_DIR="$DATA_ROOT/node"
  TMP_DIR="$DATA_ROOT/tmp"
  CONF_DIR="$3/$NAME"
  NODE_LOG_DIR="$4/$NAME" # OpenSearch's own rolling logs and GC log
}
# Runtime layout shared with the other engines of deploy/native.
set_paths "$CACHE_ROOT" "$RUN_ROOT/data" "$RUN_ROOT/conf" "$LOG_DIR"

STOP_TIMEOUT="${KB_NATIVE_STOP_TIMEOUT:-30}"
# Shared helpers (kb_engine_main, kb_await_start, kb_stop_pid_file); sourced after this script's own settings.
source "$NATIVE_DIR/lib.sh"
START_TIMEOUT="${KB_NATIVE_START_TIMEOUT:-180}"

say() { echo "[$NAME] $*"; }
die() { echo "[$NAME] error: $*" >&2; exit 1; }

is_root() { [[ "$(id -u)" == 0 ]]; }

# ---------------------------------------------------------------------------- java

java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    awk -F'= ' '/java.specification.version/ {print $2; exit}'
}

# An explicitly configured JDK 21+ first, else the newest JDK 21+ under /usr/lib/jvm.
find_java() {
  local cand major best="" best_major=0
  for cand in "${OPENSEARCH_JAVA_HOME:-}" "${KB_JAVA21_HOME:-}"; do
    [[ -n "$cand" && -x "$cand/bin/java" ]] || continue
    major="$(java_major "$cand" || true)"
    if [[ "$major" =~ ^[0-9]+$ ]] && ((major >= 21)); then
      echo "$cand"
      return 0
    fi
  done
  for cand in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
    [[ -n "$cand" && -x "$cand/bin/java" && ! -L "$cand" ]] || continue
    major="$(java_major "$cand" || true)"
    [[ "$major" =~ ^[0-9]+$ ]] || continue
    if ((major >= 21 && major > best_major)); then
      best="$cand"
      best_major="$major"
    fi
  done
  [[ -n "$best" ]] || return 1
  echo "$best"
}

need_java() {
  JDK="$(find_java)" || die "OpenSearch $OS_VERSION needs JDK 21 or newer; none found in OPENSEARCH_JAVA_HOME, KB_JAVA21_HOME, JAVA_HOME or /usr/lib/jvm/*. Set OPENSEARCH_JAVA_HOME to one."
}

# ---------------------------------------------------------------------------- user

ensure_user() {
  is_root || return 0
  if ! id -u "$RUN_USER" >/dev/null 2>&1; then
    say "creating system user $RUN_USER (OpenSearch refuses to run as root)"
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$RUN_USER"
  fi
}

# Run a command as the OpenSearch user (or as is when not root).
as_user() {
  if is_root; then
    setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups "$@"
  else
    "$@"
  fi
}

# Can the run user search its way down to <dir> (or its nearest existing ancestor)?
user_can_reach() {
  local d="$1"
  while [[ ! -e "$d" ]]; do d="$(dirname "$d")"; done
  as_user test -x "$d"
}

# When the repository sits below a folder the run user cannot enter (e.g. /root), keep the
# OpenSearch install and state in a per-clone folder under /var/tmp instead.
choose_paths() {
  is_root || return 0
  id -u "$RUN_USER" >/dev/null 2>&1 || return 0
  if user_can_reach "$CACHE_ROOT" && user_can_reach "$RUN_ROOT"; then
    return 0
  fi
  local alt
  alt="${KB_OPENSEARCH_ALT_ROOT:-/var/tmp/kb-native-opensearch-$(printf '%s' "$NATIVE_DIR" | sha1sum | cut -c1-12)}"
  set_paths "$alt/cache" "$alt/data" "$alt/conf" "$alt/logs"
  ALT_ROOT="$alt"
}
ALT_ROOT=""

# ---------------------------------------------------------------------------- install

# Run a quiet command; print its output only when it fails.
quiet() { # <description> <command...>
  local what="$1" out
  shift
  out="$(mktemp)"
  if ! "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    die "$what failed"
  fi
  rm -f "$out"
}

mvn_fetch() { # <groupId:artifactId:version[:packaging]> <output dir>
  (cd "$CACHE_DIR" && quiet "mvn dependency:copy $1 (Maven Central)" \
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$1" -DoutputDirectory="$2" -Dmdep.overWriteReleases=false)
}

# Assemble modules/<name> from a Maven Central jar and its runtime dependencies,
# leaving out jars the server already has in lib/.
assemble_module() { # <home> <module name> <artifactId> <classname> <description>
  local home="$1" module="$2" artifact="$3" classname="$4" description="$5"
  local work="$CACHE_DIR/assemble/$module-$OS_VERSION" dest="$home/modules/$module"
  say "assembling module $module from org.opensearch.plugin:$artifact:$OS_VERSION"
  rm -rf "$work" && mkdir -p "$work/jars"
  cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kb.native</groupId>
  <artifactId>opensearch-module-$module</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.opensearch.plugin</groupId>
      <artifactId>$artifact</artifactId>
      <version>$OS_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$work" && quiet "mvn dependency:copy-dependencies org.opensearch.plugin:$artifact:$OS_VERSION" \
    mvn -q -B -Dstyle.color=never dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/jars")
  mkdir -p "$dest"
  local jar base
  for jar in "$work"/jars/*.jar; do
    base="$(basename "$jar" | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9.]+)?\.jar$//')"
    if compgen -G "$home/lib/$base-[0-9]*.jar" >/dev/null; then
      continue
    fi
    cp "$jar" "$dest/"
  done
  sed -e "s/@NAME@/$module/g" -e "s/@VERSION@/$OS_VERSION/g" -e "s/@CLASSNAME@/$classname/g" \
    -e "s/@DESCRIPTION@/$description/g" -e "s/@EXTENDED@//g" \
    "$TEMPLATE_DIR/plugin-descriptor.properties.in" >"$dest/plugin-descriptor.properties"
}

engine_install() {
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  command -v unzip >/dev/null || die "unzip not found (apt-get install unzip)"
  command -v curl >/dev/null || die "curl not found (apt-get install curl)"
  need_java
  ensure_user
  choose_paths
  if [[ -n "$ALT_ROOT" ]]; then
    say "user $RUN_USER cannot enter $CACHE_ROOT or $RUN_ROOT; using $ALT_ROOT for the install and state"
    mkdir -p "$ALT_ROOT" && chmod 755 "$ALT_ROOT"
  fi
  if [[ -f "$STAMP" ]]; then
    say "OpenSearch $OS_VERSION with k-NN $KNN_VERSION already installed"
    return 0
  fi
  mkdir -p "$DOWNLOAD_DIR"
  local os_zip="$DOWNLOAD_DIR/opensearch-$OS_VERSION.zip"
  local knn_zip="$DOWNLOAD_DIR/opensearch-knn-$KNN_VERSION.zip"
  say "fetching OpenSearch $OS_VERSION and k-NN $KNN_VERSION from Maven Central (cached in ~/.m2)"
  mvn_fetch "org.opensearch.distribution.integ-test-zip:opensearch:$OS_VERSION:zip" "$DOWNLOAD_DIR"
  mvn_fetch "org.opensearch.plugin:opensearch-knn:$KNN_VERSION:zip" "$DOWNLOAD_DIR"
  [[ -f "$os_zip" && -f "$knn_zip" ]] || die "downloads missing in $DOWNLOAD_DIR"

  local tmp="$CACHE_DIR/unpack.$$"
  rm -rf "$tmp" "$OS_HOME" && mkdir -p "$tmp"
  say "unpacking"
  unzip -q "$os_zip" -d "$tmp"
  mv "$tmp/opensearch-$OS_VERSION" "$OS_HOME"
  rm -rf "$tmp"

  if [[ ! -d "$OS_HOME/modules/lang-painless" ]]; then
    assemble_module "$OS_HOME" lang-painless lang-painless org.opensearch.painless.PainlessModulePlugin \
      "An easy, safe and fast scripting language for OpenSearch"
  fi
  if [[ ! -d "$OS_HOME/modules/reindex" ]]; then
    assemble_module "$OS_HOME" reindex reindex-client org.opensearch.index.reindex.ReindexModulePlugin \
      "The Reindex module adds APIs to reindex from one index to another or update documents in place."
  fi

  say "installing the k-NN plugin"
  quiet "opensearch-plugin install $knn_zip" env OPENSEARCH_JAVA_HOME="$JDK" \
    "$OS_HOME/bin/opensearch-plugin" install --batch "file://$knn_zip"
  if is_root; then
    chown -R "$RUN_USER:$RUN_USER" "$OS_HOME"
  fi
  date -u +%Y-%m-%dT%H:%M:%SZ >"$STAMP"
  say "installed OpenSearch $OS_VERSION with k-NN $KNN_VERSION in $OS_HOME"
}

# ---------------------------------------------------------------------------- run

pid_alive() { kb_pid_file_alive "$PID_FILE"; }

http_ok() {
  curl -fsS --max-time 3 "$URL/" >/dev/null 2>&1
}

cluster_ready() {
  curl -fsS --max-time 5 "$URL/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null |
    grep -q '"status":"\(green\|yellow\)"'
}

server_version() {
  curl -fsS --max-time 3 "$URL/" 2>/dev/null |
    sed -n 's/.*"number" *: *"\([^"]*\)".*/\1/p' | head -n 1
}

write_config() {
  rm -rf "$CONF_DIR"
  mkdir -p "$DATA_DIR" "$TMP_DIR" "$CONF_DIR" "$NODE_LOG_DIR" "$(dirname "$PID_FILE")"
  cp -r "$OS_HOME/config/." "$CONF_DIR/"
  # Keep GC logs, heap dumps and crash files in the run folder, not in the install.
  sed -i -e "s#file=logs/gc.log#file=$NODE_LOG_DIR/gc.log#" \
    -e "s#filecount=32,filesize=64m#filecount=2,filesize=16m#" \
    -e "s#-XX:ErrorFile=logs/#-XX:ErrorFile=$NODE_LOG_DIR/#" \
    -e "s#-XX:HeapDumpPath=data#-XX:HeapDumpPath=$NODE_LOG_DIR#" \
    "$CONF_DIR/jvm.options"
  sed -e "s#@HOST@#$HOST#g" -e "s#@HTTP_PORT@#$HTTP_PORT#g" -e "s#@TRANSPORT_PORT@#$TRANSPORT_PORT#g" \
    -e "s#@DATA_DIR@#$DATA_DIR#g" -e "s#@LOGS_DIR@#$NODE_LOG_DIR#g" \
    "$TEMPLATE_DIR/opensearch.yml" >"$CONF_DIR/opensearch.yml"
  if is_root; then
    chown -R "$RUN_USER:$RUN_USER" "$DATA_ROOT" "$CONF_DIR" "$NODE_LOG_DIR"
  fi
}

engine_start() {
  if pid_alive && http_ok; then
    say "already running (pid $(cat "$PID_FILE"), OpenSearch $(server_version)) at $URL"
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
  need_java
  choose_paths

  mkdir -p "$LOG_DIR"
  write_config
  if is_root && ! as_user test -r "$OS_HOME/bin/opensearch" -a -w "$DATA_DIR" -a -w "$CONF_DIR"; then
    die "user $RUN_USER cannot reach $OS_HOME or $RUN_ROOT (a parent folder is not world-searchable?); set KB_NATIVE_CACHE and KB_NATIVE_RUN to folders it can reach"
  fi

  say "starting on $URL (heap $HEAP, Java $(java_major "$JDK"), data in $DATA_DIR, log $LOG_FILE)"
  echo "--- $(date -u +%Y-%m-%dT%H:%M:%SZ) start" >>"$LOG_FILE"
  (
    cd "$DATA_ROOT"
    export OPENSEARCH_JAVA_HOME="$JDK"
    export OPENSEARCH_PATH_CONF="$CONF_DIR"
    export OPENSEARCH_TMPDIR="$TMP_DIR"
    export OPENSEARCH_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP ${KB_OPENSEARCH_JAVA_OPTS:-}"
    unset JAVA_HOME
    # setsid, setpriv and bin/opensearch all exec: the recorded pid is the JVM's.
    if is_root; then
      exec setsid setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups \
        "$OS_HOME/bin/opensearch" </dev/null >>"$LOG_FILE" 2>&1
    else
      exec setsid "$OS_HOME/bin/opensearch" </dev/null >>"$LOG_FILE" 2>&1
    fi
  ) &
  echo $! >"$PID_FILE"

  kb_await_start "$NAME" "$PID_FILE" "$LOG_FILE" "$URL" "$START_TIMEOUT" 1000 30 cluster_ready
  say "running (pid $(cat "$PID_FILE"), OpenSearch $(server_version)) at $URL"
}

engine_stop() {
  choose_paths
  kb_stop_pid_file "$NAME" "$PID_FILE" "$STOP_TIMEOUT"
  kb_wipe_state "$NAME" "$DATA_DIR" "$DATA_ROOT" "$CONF_DIR"
}

engine_status() {
  if http_ok; then
    local pid="?" health
    pid_alive && pid="$(cat "$PID_FILE")"
    health="$(curl -fsS --max-time 3 "$URL/_cluster/health" 2>/dev/null |
      sed -n 's/.*"status" *: *"\([a-z]*\)".*/\1/p')"
    echo "$NAME: running (pid $pid, OpenSearch $(server_version), cluster ${health:-unknown}) at $URL"
    return 0
  fi
  if pid_alive; then
    echo "$NAME: process $(cat "$PID_FILE") is alive but $URL does not answer (starting?)"
  else
    echo "$NAME: not running"
  fi
  return 1
}

# The document store's first operations: create a k-NN index on a fresh name, write a document
# with a vector and refresh, then delete the index.
engine_probe() {
  local index rc=0
  cluster_ready || { engine_status; return 1; }
  index="$(kb_probe_name kb-ready-)"
  {
    kb_probe_http "create index $index" PUT "$URL/$index" -H 'content-type: application/json' --data-binary \
      '{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},"mappings":{"properties":{"text":{"type":"text"},"vector":{"type":"knn_vector","dimension":2,"method":{"name":"hnsw","space_type":"cosinesimil","engine":"lucene"}}}}}' \
      >/dev/null &&
      kb_probe_http "write to $index" PUT "$URL/$index/_doc/probe?refresh=true" -H 'content-type: application/json' \
        --data-binary '{"text":"ready","vector":[1,0]}' >/dev/null
  } || rc=1
  kb_probe_http "delete index $index" DELETE "$URL/$index" >/dev/null || rc=1
  ((rc == 0)) && echo "$NAME: ready (k-NN index created, written and deleted at $URL)"
  return "$rc"
}

engine_env() {
  echo "export KB_OPENSEARCH_URL=$URL"
}

kb_engine_main "$NAME" "$@"
