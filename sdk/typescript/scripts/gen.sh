#!/usr/bin/env bash
# Regenerates src/gen/ (the protobuf-es messages and the BotService descriptor) from the repository's
# proto/skyjo/v1/skyjo.proto with Debian's protoc and @bufbuild/protoc-gen-es (pinned in codegen/).
# Never edit src/gen/ by hand: tests/test_sdk_typescript.py fails when it differs from this script's output.
#   scripts/gen.sh            rewrite src/gen/
#   scripts/gen.sh OUT_DIR    write into OUT_DIR instead (the staleness test compares the two)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
proto_root="$(cd "$here/../../proto" && pwd)"
out="${1:-$here/src/gen}"
plugin="$here/codegen/node_modules/.bin/protoc-gen-es"
if [[ ! -x "$plugin" ]]; then
  (cd "$here/codegen" && npm ci --no-audit --no-fund --silent)
fi
command -v protoc >/dev/null || { echo "error: protoc not found: apt-get install protobuf-compiler" >&2; exit 2; }
rm -rf "$out/skyjo"
mkdir -p "$out"
protoc -I "$proto_root" --plugin=protoc-gen-es="$plugin" --es_out="$out" \
  --es_opt=target=ts,import_extension=js skyjo/v1/skyjo.proto
