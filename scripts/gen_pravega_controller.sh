#!/bin/sh
# Regenerate the Pravega controller's Python modules from controller.proto (needs the dev extra: grpcio-tools).
# Run from the repository root; the generated files are committed.
set -e
cd "$(dirname "$0")/.."
exec python -m grpc_tools.protoc -I. --python_out=. --grpc_python_out=. \
    targets/reference/pravega/controller/controller.proto
