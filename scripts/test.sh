#!/usr/bin/env bash
# Runs the whole WatchLink test suite: unit tests and the integration tests that spawn
# phoned and watchd. Usage: scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh
scripts/ensure-mermaid.sh
# The Python the power-loss file system (and the push tests) run under.
WATCHLINK_PYTHON=$(scripts/ensure-venv.sh)
export WATCHLINK_PYTHON
# The data handed to the project, which the PowerAuth tests read (scripts/shared-dir.sh).
WATCHLINK_SHARED_DIR=$(scripts/shared-dir.sh)
export WATCHLINK_SHARED_DIR

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
    # The daemons (phoned, watchd) are checked for leaks, with only the named suppressions of
    # scripts/lsan-suppressions.txt, and a test whose daemon reports one fails. The test runner
    # is not: XCTest on Linux keeps every test case and its run in a reference cycle, so all a
    # test holds would be reported.
    address) export WATCHLINK_BUILD_PATH=${WATCHLINK_BUILD_PATH:-.build/asan}; set -- --sanitize=address "$@"
             export WATCHLINK_DAEMON_LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
             export LSAN_OPTIONS="detect_leaks=0" ;;
    thread) export WATCHLINK_BUILD_PATH=${WATCHLINK_BUILD_PATH:-.build/tsan}; set -- --sanitize=thread "$@" ;;
    *) echo "test.sh: --sanitize takes address or thread, not '$sanitizer'" >&2; exit 2 ;;
esac

build_path=${WATCHLINK_BUILD_PATH:-.build}
# Prints how long a check took, so the run's time stays in view (CI has 20 minutes).
timed() {
    local start=$SECONDS
    "$@"
    echo "test.sh: $1 took $((SECONDS - start)) s"
}
# Every mutation of scripts/mutate.sh can still be made: its line is where the mutation says.
scripts/mutate.sh --check
# One format: swift format finds nothing (scripts/format.sh formats the code).
[ -n "$sanitizer" ] || timed scripts/format.sh --check
swift build --build-path "$build_path" --build-tests "$@"
# The PowerAuth guides' code warns only where it does against the real SDK.
[ -n "$sanitizer" ] || scripts/check-doc-code.sh "$build_path"
bin_dir=$(swift build --build-path "$build_path" --show-bin-path "$@")
export WATCHLINK_BIN_DIR="$bin_dir"
# The version: one place, and the changelog, the docs and --version of the built programs agree.
scripts/check-version.sh "$bin_dir"
# Each LeakSanitizer suppression still names a function of the daemons or the Swift runtime.
scripts/check-lsan-suppressions.sh "$bin_dir"
if [ -z "$sanitizer" ]; then
    # The DocC site builds without a warning, every public symbol of WatchLinkTesting and
    # WatchLinkClient documented; from the symbol graphs of the build above.
    timed scripts/docs.sh --build-path "$build_path"
    # No break of the library products' API since the last release but those CHANGELOG.md lists.
    timed scripts/api-check.sh --build-path "$build_path"
fi
# Every skipped test is counted and printed; with CI=true a skip fails the run, because a
# skipped test checks nothing (install what it needs instead, scripts/ensure-deps.sh).
logs=$(mktemp -d "${TMPDIR:-/tmp}/watchlink-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT
status=0
if [ $# -eq 0 ]; then
    # DiskFaultTests' sweep (some 320 scenario runs through the FUSE disk, three and a half
    # minutes) waits far more than it computes (a fifth of a core): in the plain run it goes
    # beside the rest of the suite, in a process of its own. The test bundle is run directly:
    # a second `swift test` would wait for SwiftPM's lock on the build directory.
    apart=DiskFaultTests
    "$bin_dir/WatchLinkPackageTests.xctest" "IntegrationTests.$apart" >"$logs/apart.log" 2>&1 &
    apart_pid=$!
    swift test --build-path "$build_path" --skip-build --skip "$apart" 2>&1 | tee "$logs/swift.log" || status=$?
    apart_status=0
    wait "$apart_pid" || apart_status=$?
    tee -a "$logs/swift.log" <"$logs/apart.log"
    # A suite renamed away from this name would otherwise run nothing, unseen.
    grep -q "^Test Case '$apart\." "$logs/apart.log" || { echo "test.sh: no test of $apart ran" >&2; apart_status=1; }
    [ "$status" -ne 0 ] || status=$apart_status
else
    swift test --build-path "$build_path" --skip-build "$@" 2>&1 | tee "$logs/swift.log" || status=$?
fi
# XCTest: "Test Case 'Suite.test' skipped (0.001 seconds)."; Swift Testing: "Test name() skipped".
swift_skipped=$(grep -cE "^Test Case '.*' skipped|^[^ ]* ?Test [^ ]+ skipped" "$logs/swift.log" || true)
if [ "$status" -ne 0 ]; then
    # The failures again, last, where a log cut to its tail still shows them: XCTest's
    # "file:line: error: Suite.test : ..." and "Test Case '...' failed", Swift Testing's "✘".
    echo "test.sh: what failed:" >&2
    grep -E ": error: |^Test Case '.*' failed|✘" "$logs/swift.log" | cut -c1-400 | tail -40 >&2 || true
    echo "test.sh: swift test failed (exit $status); $swift_skipped skipped" >&2
    exit "$status"
fi
scripts/test-push.sh -rs 2>&1 | tee "$logs/push.log" || status=$?
push_skipped=$(grep -oE "[0-9]+ skipped" "$logs/push.log" | tail -1 | grep -oE "^[0-9]+" || true)
push_skipped=${push_skipped:-0}
echo "test.sh: skipped tests: $swift_skipped of swift test, $push_skipped of the push tests"
[ "$status" -eq 0 ] || { echo "test.sh: the push tests failed (exit $status)" >&2; exit "$status"; }
if [ "${CI:-}" = "true" ] && [ $((swift_skipped + push_skipped)) -gt 0 ]; then
    echo "test.sh: CI=true and $((swift_skipped + push_skipped)) tests were skipped; every test must run in CI" >&2
    exit 1
fi
if [ -z "$sanitizer" ]; then
    # A package that takes WatchLink by version tag, as an app team does, builds and runs.
    scripts/test-consumer.sh
    # Keeps every fuzz target alive: a short libFuzzer run each (scripts/fuzz.sh for longer ones).
    scripts/fuzz.sh "${WATCHLINK_FUZZ_SECONDS:-15}"
    # The simulator on fresh seeds for a fixed time: the debug build of the build above (a
    # release build of its closure would cost CI minutes); prints the seeds it ran and the rare
    # states reached, and a failing seed with the command that replays it.
    SIMULATE_CONFIGURATION=debug timed scripts/simulate.sh --seconds "${WATCHLINK_SIM_SECONDS:-60}" --check-determinism 16
fi
