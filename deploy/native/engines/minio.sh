#!/usr/bin/env bash
# MinIO (S3-compatible object store) built from source with `go install` through the Go module proxy.
#   S3 API   127.0.0.1:19000
#   console  127.0.0.1:19001
# The bucket kb-documents is created right after the server comes up; `status` reports ok
# only once it exists.
# usage: minio.sh install|start|stop|status|env
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

NAME=minio
# The Go module proxy serves MinIO only as pseudo-versions of its commits. This one is the
# last commit of the (now archived) community repository; it has the same go.mod as the
# final community release RELEASE.2025-10-15T17-29-55Z.
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="${KB_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
API_PORT=19000
CONSOLE_PORT=19001
ACCESS_KEY=kbminioadmin
SECRET_KEY=kbminioadmin-secret
REGION=us-east-1
BUCKET=kb-documents
BIN_DIR="$(kb_cache_dir "$NAME")/bin"
DATA_DIR="$(kb_data_dir "$NAME")"
ENDPOINT="http://127.0.0.1:$API_PORT"

engine_install() {
  local marker="$BIN_DIR/.installed" go
  if [[ -x "$BIN_DIR/minio" && -f "$marker" && "$(<"$marker")" == "$MINIO_VERSION" ]]; then
    kb_log "MinIO $MINIO_VERSION already built in $BIN_DIR"
    return 0
  fi
  go="$(kb_go)" || kb_die "Go is required to build MinIO (go on PATH or /usr/local/go/bin/go)"
  kb_log "building $MINIO_MODULE@$MINIO_VERSION with $("$go" version | cut -d' ' -f3) (Go module proxy; a cold build takes a few minutes, a warm Go build cache makes it quick)"
  mkdir -p "$BIN_DIR"
  rm -f "$marker"
  # Outside any module, so the repository's own files play no part in the build.
  (cd "$(kb_cache_dir "$NAME")" && GOBIN="$BIN_DIR" "$go" install "$MINIO_MODULE@$MINIO_VERSION") ||
    kb_die "go install $MINIO_MODULE@$MINIO_VERSION failed"
  echo "$MINIO_VERSION" >"$marker"
  kb_log "installed $BIN_DIR/minio"
}

engine_start() {
  kb_already_running "$NAME" && return 0
  [[ -x "$BIN_DIR/minio" ]] || kb_die "not installed; run: $0 install"
  kb_require_free_ports "$NAME" "$API_PORT" "$CONSOLE_PORT"
  kb_ensure_dirs "$NAME"
  if ! curl --help all 2>/dev/null | grep -q -- --aws-sigv4; then
    # Old curl without SigV4: a top-level folder of a fresh single-drive deployment is
    # served as a bucket too (without bucket metadata until first changed).
    mkdir -p "$DATA_DIR/$BUCKET"
  fi
  MINIO_ROOT_USER="$ACCESS_KEY" \
    MINIO_ROOT_PASSWORD="$SECRET_KEY" \
    MINIO_REGION="$REGION" \
    MINIO_UPDATE=off \
    MINIO_BROWSER=on \
    GOMEMLIMIT="${KB_MINIO_MEMLIMIT:-512MiB}" \
    kb_spawn "$NAME" --cwd "$DATA_DIR" -- "$BIN_DIR/minio" server \
    --address "127.0.0.1:$API_PORT" --console-address "127.0.0.1:$CONSOLE_PORT" \
    "$DATA_DIR"
  # Create the bucket in the background once the API answers (bounded wait).
  (
    if kb_wait_for 180 kb_http_ok "$ENDPOINT/minio/health/live" && ! minio_bucket_exists; then
      minio_s3 -X PUT "$ENDPOINT/$BUCKET" && echo "[minio] created bucket $BUCKET" ||
        echo "[minio] could not create bucket $BUCKET"
    fi
  ) >>"$(kb_log_file "$NAME")" 2>&1 </dev/null &
  disown || true
}

# curl with SigV4 as the root user.
minio_s3() {
  curl -fsS --max-time 5 --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" -o /dev/null "$@"
}

minio_bucket_exists() {
  if curl --help all 2>/dev/null | grep -q -- --aws-sigv4; then
    minio_s3 -I "$ENDPOINT/$BUCKET" 2>/dev/null
  else
    [[ -d "$DATA_DIR/$BUCKET" ]]
  fi
}

engine_stop() {
  kb_stop_pid "$NAME"
}

engine_status() {
  if kb_http_ok "$ENDPOINT/minio/health/live"; then
    if minio_bucket_exists; then
      echo "minio: ok ($ENDPOINT, bucket $BUCKET, console http://127.0.0.1:$CONSOLE_PORT)"
      return 0
    fi
    echo "minio: up at $ENDPOINT but bucket $BUCKET does not exist (yet)"
  elif kb_is_running "$NAME"; then
    echo "minio: starting (pid $(kb_pid "$NAME"))"
  else
    echo "minio: down"
  fi
  return 1
}

engine_env() {
  cat <<EOF
export KB_S3_ENDPOINT=$ENDPOINT
export KB_S3_ACCESS_KEY=$ACCESS_KEY
export KB_S3_SECRET_KEY=$SECRET_KEY
export KB_S3_REGION=$REGION
export KB_S3_BUCKET=$BUCKET
EOF
}

kb_engine_main "$NAME" "$@"
