#!/bin/sh
# Builds the C++ bot with Debian's packages: the stubs with protoc and
# grpc_cpp_plugin (the guide's C++ command), then g++ against libgrpc++.
#
#   examples/cpp/build-debian.sh [OUT]    # OUT defaults to examples/cpp/skyjo-cpp-bot
#
# Needs: apt-get install g++ pkg-config protobuf-compiler protobuf-compiler-grpc libgrpc++-dev libprotobuf-dev
# Work files (stubs and object files) go to $SKYJO_CPP_WORK (default:
# examples/cpp/.build, ignored by git); the stubs' objects are rebuilt only
# when the proto changes, and OUT only when it is older than bot.cc or them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/skyjo-cpp-bot}
work=${SKYJO_CPP_WORK:-$here/.build}
mkdir -p "$work/gen"
if [ ! -f "$work/skyjo.proto" ] || ! cmp -s "$root/proto/skyjo/v1/skyjo.proto" "$work/skyjo.proto"; then
  protoc -I "$root/proto" --cpp_out="$work/gen" --grpc_out="$work/gen" \
    --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" skyjo/v1/skyjo.proto
  pids=""
  for stub in skyjo.pb skyjo.grpc.pb; do  # the two compile at once
    g++ -std=c++17 -c -I "$work/gen" $(pkg-config --cflags grpc++ protobuf) \
      "$work/gen/skyjo/v1/$stub.cc" -o "$work/$stub.o" &
    pids="$pids $!"
  done
  for pid in $pids; do wait "$pid"; done
  cp "$root/proto/skyjo/v1/skyjo.proto" "$work/skyjo.proto"
fi
if [ -f "$out" ] && [ "$out" -nt "$here/bot.cc" ] && [ "$out" -nt "$work/skyjo.grpc.pb.o" ]; then
  exit 0
fi
g++ -std=c++17 -I "$work/gen" $(pkg-config --cflags grpc++ protobuf) "$here/bot.cc" \
  "$work/skyjo.pb.o" "$work/skyjo.grpc.pb.o" -o "$out" $(pkg-config --libs grpc++ protobuf) -pthread
