#!/usr/bin/env bash
# Regenerates the gRPC stubs in skyjov1/ (never edit them by hand) from the repository's proto, with pinned
# plugins: protoc-gen-go and protoc-gen-go-grpc at the versions tools/go.mod names (built into .bin/, not
# committed), and the system's protoc (Debian's protobuf-compiler).
#
#   sdk/go/gen.sh            # copies ../../proto/skyjo/v1/skyjo.proto to proto/ and writes skyjov1/
#   sdk/go/gen.sh OUT        # writes OUT/proto/ and OUT/skyjov1/ instead (tests/test_sdk_go.py: the committed
#                            # files are current)
#
# The proto is copied into proto/ so that a copy of this folder (skyjo-ref new-bot) holds its own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
module=skyjo-ref/skyjo
source_proto=${SKYJO_PROTO:-$here/../../proto/skyjo/v1/skyjo.proto}
[ -f "$source_proto" ] || source_proto=$here/proto/skyjo/v1/skyjo.proto   # a copied SDK: its own copy

mkdir -p "$out/proto/skyjo/v1" "$out/skyjov1" "$here/.bin"
[ "$source_proto" -ef "$out/proto/skyjo/v1/skyjo.proto" ] || cp "$source_proto" "$out/proto/skyjo/v1/skyjo.proto"
(cd "$here/tools" && go build -o "$here/.bin/" \
  google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc)
mapping="module=$module,Mskyjo/v1/skyjo.proto=$module/skyjov1"
protoc -I "$out/proto" \
  --plugin=protoc-gen-go="$here/.bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$here/.bin/protoc-gen-go-grpc" \
  --go_out="$out" --go_opt="$mapping" --go-grpc_out="$out" --go-grpc_opt="$mapping" \
  skyjo/v1/skyjo.proto
