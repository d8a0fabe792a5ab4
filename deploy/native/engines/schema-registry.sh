#!/usr/bin/env bash
# Confluent-compatible schema registry: Apicurio Registry 3.x (Quarkus app, in-memory storage)
# from Maven Central (io.apicurio:apicurio-registry-app:<version>:tar.gz:all).
#   HTTP        127.0.0.1:18081  (Confluent API under /apis/ccompat/v7)
#   management  127.0.0.1:18082  (/health/ready)
# Apicurio 3.3 is compiled for Java 21: a JDK 21+ is looked up (KB_NATIVE_JAVA_HOME,
# JAVA_HOME, java on PATH, /usr/lib/jvm/*).
# usage: schema-registry.sh install|start|stop|status|env
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

NAME=schema-registry
APICURIO_VERSION="${KB_APICURIO_VERSION:-3.3.3}"
HTTP_PORT=18081
MGMT_PORT=18082
HOME_DIR="$(kb_cache_dir "$NAME")/apicurio-registry-$APICURIO_VERSION"
CONF_DIR="$(kb_conf_dir "$NAME")"
DATA_DIR="$(kb_data_dir "$NAME")"
CCOMPAT_URL="http://127.0.0.1:$HTTP_PORT/apis/ccompat/v7"

registry_java() {
  kb_find_java 21 ||
    kb_die "Apicurio Registry $APICURIO_VERSION needs a JDK 21 or newer (none found); set KB_NATIVE_JAVA_HOME"
}

engine_install() {
  if [[ -f "$HOME_DIR/quarkus-run.jar" && -f "$HOME_DIR/.installed" ]]; then
    kb_log "Apicurio Registry $APICURIO_VERSION already installed in $HOME_DIR"
    return 0
  fi
  local gav="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" tmp
  kb_log "fetching $gav (Maven Central, cached in ~/.m2)"
  tmp="$(kb_cache_dir "$NAME")/download.tmp"
  rm -rf "$tmp" "$HOME_DIR"
  kb_mvn_copy "$gav" "$tmp"
  mkdir -p "$HOME_DIR"
  tar -xzf "$tmp"/apicurio-registry-app-"$APICURIO_VERSION"-all.tar.gz -C "$HOME_DIR"
  rm -rf "$tmp"
  [[ -f "$HOME_DIR/quarkus-run.jar" ]] || kb_die "unexpected archive layout: no quarkus-run.jar in $HOME_DIR"
  echo "$APICURIO_VERSION" >"$HOME_DIR/.installed"
  registry_java >/dev/null
  kb_log "installed Apicurio Registry $APICURIO_VERSION in $HOME_DIR"
}

engine_start() {
  kb_already_running "$NAME" && return 0
  [[ -f "$HOME_DIR/quarkus-run.jar" ]] || kb_die "not installed; run: $0 install"
  kb_require_free_ports "$NAME" "$HTTP_PORT" "$MGMT_PORT"
  kb_ensure_dirs "$NAME"
  local java
  java="$(registry_java)"
  mkdir -p "$CONF_DIR/config" "$DATA_DIR/tmp"
  kb_render "$KB_NATIVE_DIR/schema-registry/application.properties" \
    "$CONF_DIR/config/application.properties" "TMP_DIR=$DATA_DIR/tmp" "DATA_DIR=$DATA_DIR"
  kb_spawn "$NAME" --cwd "$CONF_DIR" -- "$java" \
    -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Djava.io.tmpdir="$DATA_DIR/tmp" \
    -jar "$HOME_DIR/quarkus-run.jar"
}

engine_stop() {
  kb_stop_pid "$NAME"
}

engine_status() {
  if kb_http_ok "$CCOMPAT_URL/subjects"; then
    echo "schema-registry: ok ($CCOMPAT_URL)"
    return 0
  fi
  if kb_is_running "$NAME"; then
    echo "schema-registry: starting (pid $(kb_pid "$NAME"))"
  else
    echo "schema-registry: down"
  fi
  return 1
}

# The message log's first registry operations: set a fresh subject's compatibility, register an
# Avro schema under it and read it back, then delete the subject (soft, then for good).
engine_probe() {
  local subject schema rc=0
  kb_http_ok "$CCOMPAT_URL/subjects" || { engine_status; return 1; }
  subject="$(kb_probe_name kb-ready-)-value"
  schema='{"schema":"{\"type\":\"record\",\"name\":\"Probe\",\"fields\":[{\"name\":\"id\",\"type\":\"string\"}]}"}'
  {
    kb_probe_http "set compatibility of $subject" PUT "$CCOMPAT_URL/config/$subject" \
      -H 'content-type: application/vnd.schemaregistry.v1+json' --data-binary '{"compatibility":"BACKWARD"}' >/dev/null &&
      kb_probe_http "register a schema under $subject" POST "$CCOMPAT_URL/subjects/$subject/versions" \
        -H 'content-type: application/vnd.schemaregistry.v1+json' --data-binary "$schema" | grep -q '"id"' &&
      kb_probe_http "look up the schema of $subject" POST "$CCOMPAT_URL/subjects/$subject" \
        -H 'content-type: application/vnd.schemaregistry.v1+json' --data-binary "$schema" | grep -q '"id"'
  } || rc=1
  kb_probe_http "delete $subject" DELETE "$CCOMPAT_URL/subjects/$subject" >/dev/null &&
    kb_probe_http "delete $subject for good" DELETE "$CCOMPAT_URL/subjects/$subject?permanent=true" >/dev/null || rc=1
  ((rc == 0)) && echo "$NAME: ready (schema registered, read and deleted at $CCOMPAT_URL)"
  return "$rc"
}

engine_env() {
  echo "export KB_SCHEMA_REGISTRY_URL=$CCOMPAT_URL"
}

kb_engine_main "$NAME" "$@"
