#!/bin/sh
# Regenerate the Pravega controller's Python modules from controller.proto (needs the dev extra: grpcio-tools).
# The generated modules import each other as wirecheck.broker...; protoc derives that name from the include
# path, so it runs over a temporary wirecheck/ link to the repository root. The generated files are committed.
set -e
cd "$(dirname "$0")/.."
root="$(pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
ln -s "$root" "$tmp/wirecheck"
python -m grpc_tools.protoc -I"$tmp" --python_out="$tmp" --grpc_python_out="$tmp" \
    "$tmp/wirecheck/broker/pravega/controller/controller.proto"
