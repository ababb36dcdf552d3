#!/bin/sh
# Builds the Go bot offline with Debian's packages (no module downloads): the
# stubs with protoc, protoc-gen-go and protoc-gen-go-grpc, then the bot in
# GOPATH mode against the Go sources in /usr/share/gocode.
#
#   examples/go/build-debian.sh [OUT]     # OUT defaults to examples/go/skyjo-go-bot
#
# Needs: apt-get install golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc
#        golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev
# Work files (a GOPATH and the build cache) go to $SKYJO_GO_WORK (default:
# examples/go/.build, ignored by git); a second build reuses the cache.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/skyjo-go-bot}
work=${SKYJO_GO_WORK:-$here/.build}
src=$work/gopath/src/skyjobot
mkdir -p "$src"
cp "$here/main.go" "$src/main.go"
protoc -I "$root/proto" \
  --go_out="$src" --go_opt=paths=source_relative \
  --go-grpc_out="$src" --go-grpc_opt=paths=source_relative \
  skyjo/v1/skyjo.proto
cd "$src"
GO111MODULE=off GOPATH="$work/gopath:/usr/share/gocode" GOCACHE="$work/go-build" GOFLAGS= \
  go build -o "$out" .
