#!/usr/bin/env bash
# `npm run fuzz`: schemathesis, with every check, against the OpenAPI document of a fresh embedded
# service. Not part of `npm test`.
#
# - Installs schemathesis (tests/fuzz/requirements.txt, from PyPI) into .venv-fuzz/ on first use.
# - Starts `kb serve` on a free loopback port with a new data directory and a new key.
# - Runs schemathesis for about FUZZ_SECONDS (default 300) and exits with its status; the report
#   (JUnit XML) is left in .tmp/fuzz/.
# Extra arguments go to `schemathesis run` (e.g. `npm run fuzz -- --max-examples 20`).
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=.venv-fuzz
if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "==> installing schemathesis into $venv (first use)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/fuzz/requirements.txt
fi
"$venv/bin/schemathesis" --version

work=$(mktemp -d "${TMPDIR:-/tmp}/kb-fuzz-XXXXXX")
report_dir=.tmp/fuzz
mkdir -p "$report_dir"
port=$(node -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export KB_DATA_DIR="$work/data" HOST=127.0.0.1 PORT="$port" KB_BOOTSTRAP_KEY=false KB_LOG_LEVEL=warn
export KB_RUNTIME=embedded

server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

key=$(node bin/kb.js keys create --workspace fuzz --name fuzz --permissions read,search,write --plan enterprise --json |
  node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).key))")

node bin/kb.js serve > "$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$port/health/ready" > /dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/serve.log"; echo 'kb serve exited early' >&2; exit 1; fi
  sleep 0.2
done

# A document that exists, so the document routes are exercised beyond 404 as well.
printf '# Fuzz target\n\nA document the fuzzer can read, version, compare and search.\n' > "$work/seed.md"
curl -fsS -H "X-API-Key: $key" -F "file=@$work/seed.md" "http://127.0.0.1:$port/api/v1/documents" > "$work/seed.json"
echo "seeded document $(node -e "console.log(require('$work/seed.json').document_id)")"

status=0
budget=${FUZZ_SECONDS:-300}
# --max-time bounds generation; the outer timeout is a hard stop should a phase overrun it.
timeout --signal=INT $((budget + 120)) "$venv/bin/schemathesis" --config-file tests/fuzz/schemathesis.toml \
  run "http://127.0.0.1:$port/openapi.json" \
  --checks all \
  --max-time "$budget" \
  --workers "${FUZZ_WORKERS:-2}" \
  --header "X-API-Key: $key" \
  --max-examples "${FUZZ_MAX_EXAMPLES:-30}" \
  --request-timeout 30 \
  --seed "${FUZZ_SEED:-1}" \
  --report junit --report-dir "$report_dir" \
  --no-color \
  "$@" || status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 130 ]; then echo "schemathesis overran its time budget and was stopped" >&2; fi
if grep -q ' 5[0-9][0-9] ' "$work/serve.log" 2>/dev/null; then echo '--- server log (5xx) ---'; grep -i 'error' "$work/serve.log" | head -20; fi
exit "$status"
