#!/usr/bin/env bash
# Runs the whole WatchLink test suite: unit tests and the integration tests that spawn
# phoned and watchd. Usage: scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh

build_path=${WATCHLINK_BUILD_PATH:-.build}
swift build --build-path "$build_path" --build-tests "$@"
bin_dir=$(swift build --build-path "$build_path" --show-bin-path "$@")
export WATCHLINK_BIN_DIR="$bin_dir"
swift test --build-path "$build_path" --skip-build "$@"
scripts/test-push.sh
