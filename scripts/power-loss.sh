#!/usr/bin/env bash
# Runs the power-loss scenario alone (PowerLossTests, docs/durability.md): userInfo, contexts,
# files and PowerAuth tokens cross both ways while either daemon loses power at seeded random
# moments. Its last line: cuts C, acknowledged A, delivered D, lost L, duplicated U.
# Usage: scripts/power-loss.sh [--cuts N] [--seed S]
set -euo pipefail
cd "$(dirname "$0")/.."

while [ $# -gt 0 ]; do
    case "$1" in
        --cuts) export WATCHLINK_POWER_CUTS=${2:?--cuts needs a number}; shift 2 ;;
        --seed) export WATCHLINK_POWER_SEED=${2:?--seed needs a number}; shift 2 ;;
        *) echo "power-loss.sh: unknown argument '$1' (usage: scripts/power-loss.sh [--cuts N] [--seed S])" >&2; exit 2 ;;
    esac
done
case "${WATCHLINK_POWER_CUTS:-20}" in ''|*[!0-9]*) echo "power-loss.sh: --cuts takes a number, not '$WATCHLINK_POWER_CUTS'" >&2; exit 2 ;; esac
case "${WATCHLINK_POWER_SEED:-1}" in ''|*[!0-9]*) echo "power-loss.sh: --seed takes a number, not '$WATCHLINK_POWER_SEED'" >&2; exit 2 ;; esac

scripts/ensure-deps.sh
WATCHLINK_PYTHON=$(scripts/ensure-venv.sh)
export WATCHLINK_PYTHON
swift build --build-tests >&2
WATCHLINK_BIN_DIR=$(swift build --show-bin-path)
export WATCHLINK_BIN_DIR
log=$(mktemp "${TMPDIR:-/tmp}/watchlink-power-loss.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
swift test --skip-build --filter 'PowerLossTests.testNothingAcknowledgedIsLostAcrossPowerCuts' >"$log" 2>&1 || status=$?
grep -E ': error: |^Test Case .* failed|^power loss seed=' "$log" | cut -c1-400 || true
summary=$(grep -E '^cuts [0-9]+, acknowledged' "$log" | tail -1 || true)
if [ -z "$summary" ]; then
    tail -40 "$log" >&2
    echo "power-loss.sh: the scenario did not finish (exit $status)" >&2
    exit $(( status == 0 ? 1 : status ))
fi
echo "$summary"
exit "$status"
