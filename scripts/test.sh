#!/usr/bin/env bash
# Runs the whole WatchLink test suite: unit tests and the integration tests that spawn
# phoned and watchd. Usage: scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh

# --sanitize address|thread: the same suite under ASan or TSan, in its own build path, without
# the short fuzz runs (see docs/security.md).
sanitizer=""
passthrough=()
while [ $# -gt 0 ]; do
    case "$1" in
        --sanitize) sanitizer=${2:?--sanitize needs address or thread}; shift 2 ;;
        --sanitize=*) sanitizer=${1#--sanitize=}; shift ;;
        *) passthrough+=("$1"); shift ;;
    esac
done
set -- ${passthrough[@]+"${passthrough[@]}"}
# Tests that measure memory skip that part under a sanitizer (its shadow memory is not the daemons').
export WATCHLINK_SANITIZER="$sanitizer"
case "$sanitizer" in
    "") ;;
    address) export WATCHLINK_BUILD_PATH=${WATCHLINK_BUILD_PATH:-.build/asan}; set -- --sanitize=address "$@"
             export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" ;;
    thread) export WATCHLINK_BUILD_PATH=${WATCHLINK_BUILD_PATH:-.build/tsan}; set -- --sanitize=thread "$@" ;;
    *) echo "test.sh: --sanitize takes address or thread, not '$sanitizer'" >&2; exit 2 ;;
esac

build_path=${WATCHLINK_BUILD_PATH:-.build}
swift build --build-path "$build_path" --build-tests "$@"
bin_dir=$(swift build --build-path "$build_path" --show-bin-path "$@")
export WATCHLINK_BIN_DIR="$bin_dir"
swift test --build-path "$build_path" --skip-build "$@"
scripts/test-push.sh
# Keeps every fuzz target alive: a short libFuzzer run each (scripts/fuzz.sh for longer ones).
if [ -z "$sanitizer" ]; then
    scripts/fuzz.sh "${WATCHLINK_FUZZ_SECONDS:-15}"
fi
